"""The contract every public learner keeps, checked once over ``sosl.__all__``.

For each learner (with the small settings of ``helpers.KW``, plus the configurations in
``EXTRA`` whose state has another shape) and for :class:`MeanDifference` below:

* ``fit`` equals ``partial_fit`` over uneven chunks (one-row chunks included);
* a pickle round trip mid-stream gives the same state, and continuing after it gives the
  state of the model that was never pickled;
* bad input (a NaN row, a label outside ``classes_``, a bad one-row call) raises and leaves
  the state exactly as it was;
* a batch of another width (a changed layout) is refused, state unchanged;
* ``learn_one`` equals ``partial_fit`` on one row, bit for bit, and ``score_one`` the one-row
  ``decision_function``.

The two equivalences keep a mutant each (``test_the_comparison_catches_a_changed_stream``):
the same comparison applied to a stream with a few labels flipped must fail. Learner-specific
behaviour (budgets, policies, schedules, typed paths) stays in the learners' own files.
"""

import pickle

import numpy as np
import pytest
from helpers import ESTIMATORS, assert_same_state, fitted_state, make

from sosl import KOIL, OAM, OAUCM, OKAUCM, OLUBAUC, SketchedOAUCM
from sosl._base import BaseOnlineAUC


class MeanDifference(BaseOnlineAUC):
    """The smallest learner on :class:`sosl._base.BaseOnlineAUC`: f(x) = (mu+ - mu-).x.

    Living documentation of the hooks a new learner implements: ``_state_names`` (the
    fitted arrays), ``_init_state(n_features)`` (fresh arrays), ``_run_pass(state, X, s,
    order)`` (one pass, in place on ``state``, rows ``X[order]`` with signs ``s`` in {-1, +1},
    advancing ``state["t_"]``) and ``_decision(X)``; optionally ``_layout()`` (what a later
    call may not change) and ``_check_params()``. The base does the rest: validation, labels,
    the transaction, pickling, ``learn_one``, probabilities.
    """

    _state_names = ("means_", "counts_")

    def __init__(self, shift=0.0):
        self.shift = shift

    def _layout(self):
        return {"shift": float(self.shift)}

    def _init_state(self, n_features):
        return {"means_": np.zeros((2, n_features)), "counts_": np.zeros(2)}

    def _run_pass(self, state, X, s, order):
        for i in order:
            k = int(s[i] > 0)
            state["counts_"][k] += 1.0
            state["means_"][k] += (X[i] - state["means_"][k]) / state["counts_"][k]
            state["t_"] += 1

    def _decision(self, X):
        m = self.means_
        return X @ (m[1] - m[0]) + self._layout_["shift"]


#: configurations with another state layout than the defaults of ``helpers.make`` (OKAUCM's
#: unbounded buffer grows by capacity doubling, so its raw arrays depend on the call pattern:
#: tests/test_okauc.py compares its filled part)
EXTRA = [(OAUCM, dict(eta=0.05)), (OAM, dict(update="gra")), (OLUBAUC, dict(eta=0.05)),
         (OKAUCM, dict(budget=(20, 15), eta=0.5)),
         (KOIL, dict(policy="fifo++")), (SketchedOAUCM, dict(rank=2, max_columns=5))]
CASES = ([(E, {}) for E in ESTIMATORS] + EXTRA + [(MeanDifference, {})])
IDS = [E.__name__ + "".join(f"-{k}={v}" for k, v in kw.items()) for E, kw in CASES]
CLASSES = ["neg", "pos"]
BOUNDS = [0, 1, 2, 9, 60, 61, 170, 240]


def _new(Est, kw):
    return Est(**kw) if Est is MeanDifference else make(Est, **kw)


def _data(n=240, p=8, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, p)) * (rng.random((n, p)) < 0.6)
    y = np.where(X[:, 0] - X[:, 1] + 0.4 * rng.normal(size=n) > 0.1, "pos", "neg")
    return X, y


def _chunked(Est, kw, X, y, pickle_at=None):
    m = _new(Est, kw)
    for a, b in zip(BOUNDS[:-1], BOUNDS[1:]):
        m.partial_fit(X[a:b], y[a:b], classes=CLASSES)
        if a == pickle_at:
            m = pickle.loads(pickle.dumps(m))
    return m


def _without_calibration(state):
    return {k: v for k, v in state.items() if k != "calibration_"}


def _one_row(Est, kw, X, y, n=40):
    """Two models fed the first ``n`` rows: ``learn_one`` after a first partial_fit row, and
    one-row ``partial_fit`` calls."""
    a = _new(Est, kw).partial_fit(X[:1], y[:1], classes=CLASSES)
    b = pickle.loads(pickle.dumps(a))
    for i in range(1, n):
        a.learn_one(X[i], y[i])
        b.partial_fit(X[i:i + 1], y[i:i + 1])
    return a, b


def test_every_learner_is_covered():
    assert len(ESTIMATORS) >= 14 and {E for E, _ in EXTRA} <= set(ESTIMATORS)


@pytest.mark.parametrize("Est,kw", CASES, ids=IDS)
def test_fit_equals_partial_fit_over_chunks_and_pickling(Est, kw):
    X, y = _data()
    full = _new(Est, kw).fit(X, y)
    assert full.t_ == X.shape[0] and np.ptp(full.decision_function(X)) > 0
    chunked = fitted_state(_chunked(Est, kw, X, y))
    # the Platt scaling of predict_proba learns in-sample in fit, prequentially in partial_fit
    assert_same_state(_without_calibration(chunked), _without_calibration(fitted_state(full)))
    # pickled after the chunk starting at row 60, then continued: nothing differs
    assert_same_state(fitted_state(_chunked(Est, kw, X, y, pickle_at=60)), chunked)
    twin = pickle.loads(pickle.dumps(full))
    assert_same_state(fitted_state(twin), fitted_state(full))
    np.testing.assert_array_equal(twin.decision_function(X), full.decision_function(X))


@pytest.mark.parametrize("Est,kw", CASES, ids=IDS)
def test_learn_one_equals_partial_fit_on_one_row(Est, kw):
    X, y = _data(seed=1)
    a, b = _one_row(Est, kw, X, y)
    assert a.t_ == 40
    assert_same_state(fitted_state(a), fitted_state(b))
    assert a.score_one(X[5]) == pytest.approx(a.decision_function(X[5:6])[0], rel=1e-12,
                                              abs=1e-15)
    assert a.predict_one(X[5]) == a.predict(X[5:6])[0]


@pytest.mark.parametrize("Est,kw", [CASES[0], CASES[-1]], ids=[IDS[0], IDS[-1]])
def test_the_comparison_catches_a_changed_stream(Est, kw):
    """Mutants of both equivalences: three flipped labels in the chunked (or one-row) stream."""
    X, y = _data()
    full = _new(Est, kw).fit(X, y)
    flipped = y.copy()
    flipped[[3, 70, 200]] = np.where(y[[3, 70, 200]] == "pos", "neg", "pos")
    with pytest.raises(AssertionError):
        assert_same_state(_without_calibration(fitted_state(_chunked(Est, kw, X, flipped))),
                          _without_calibration(fitted_state(full)))
    a, _ = _one_row(Est, kw, X, y)
    _, b = _one_row(Est, kw, X, flipped)
    with pytest.raises(AssertionError):
        assert_same_state(fitted_state(a), fitted_state(b))


@pytest.mark.parametrize("Est,kw", CASES, ids=IDS)
def test_bad_input_leaves_the_state_unchanged(Est, kw):
    X, y = _data(seed=2)
    m = _new(Est, kw).fit(X, y)
    before = pickle.loads(pickle.dumps(fitted_state(m)))
    bad = X[:6].copy()
    bad[4, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        m.partial_fit(bad, y[:6])
    with pytest.raises(ValueError, match="not in classes|unknown|label"):
        m.partial_fit(X[:3], np.array(["neg", "pos", "other"]))
    with pytest.raises(ValueError, match="NaN"):
        m.learn_one(bad[4], y[4])
    with pytest.raises(ValueError, match="classes"):
        m.partial_fit(X[:3], y[:3], classes=["neg", "other"])
    assert_same_state(fitted_state(m), before)


@pytest.mark.parametrize("Est,kw", CASES, ids=IDS)
def test_another_width_is_refused(Est, kw):
    X, y = _data(seed=3)
    m = _new(Est, kw).fit(X, y)
    before = pickle.loads(pickle.dumps(fitted_state(m)))
    wide = np.hstack([X, X[:, :1]])
    for call in (lambda: m.partial_fit(wide[:5], y[:5]), lambda: m.decision_function(wide),
                 lambda: m.learn_one(wide[0], y[0]), lambda: m.score_one(wide[0])):
        with pytest.raises(ValueError, match="features"):
            call()
    assert_same_state(fitted_state(m), before)
    m.fit(wide, y)                                  # fit starts over on the new width
    assert m.n_features_in_ == X.shape[1] + 1
