"""partial_fit's typed batch path of the linear learners == the general path, to the bit.

The batch path (``Stepper.batch``) plays a fitted model's dense batch on the live state,
with the prequential Platt step of each row inside the pass; the general path
(``_learn_validated``) validates, copies the O(p) arrays and runs ``linear_pass`` (which
now also plays the Platt steps in the pass). Both must give the same bits as the
separate ``platt_steps`` on the scores of the model before the call.
"""

import numpy as np
import pytest

from sosl import OAUCM, OAUCS
from sosl._core import _calibration_ref
from sosl.exceptions import UnscaledInputWarning
from sosl.linear import _LinearSOSL

STATE = ("w_", "means_", "scatter_", "scales_", "weights_", "counts_", "calibration_")


def _data(n=600, p=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, p))
    y = (X @ rng.normal(size=p) + 0.3 * rng.normal(size=n) > 0.2).astype(int)
    return X, y


def _general_only(monkeypatch):
    monkeypatch.setattr(_LinearSOSL, "_batch_in_place", lambda self, X, y: False)


def _stream(make, X, y, chunks):
    m = make().fit(X[:100], y[:100])
    for a, b in zip(chunks[:-1], chunks[1:]):
        m.partial_fit(X[a:b], y[a:b])
    return m


def _assert_same_state(a, b):
    for name in STATE:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert (a.t_, a.n_seen_, a.max_abs_) == (b.t_, b.n_seen_, b.max_abs_)


MAKERS = [
    ("oaucm", lambda: OAUCM(lam=0.01)),
    ("oaucm-eta", lambda: OAUCM(lam=0.01, eta=0.05)),
    ("oaucm-forget", lambda: OAUCM(lam=0.01, forgetting=0.9)),
    ("oaucs", lambda: OAUCS(lam=0.01, eta=0.002)),      # eta (lam + 10 R^2 p) <= 2
]


@pytest.mark.parametrize("p", [1, 5, 40])             # own loops, and BLAS from p = 32
@pytest.mark.parametrize("name,make", MAKERS, ids=[m[0] for m in MAKERS])
def test_batch_path_equals_general_path(monkeypatch, name, make, p):
    X, y = _data(p=p)
    chunks = [100, 102, 160, 161, 300, 600]       # 2 rows, 58, 1 (learn_one), 139, 300
    taken = []
    real = _LinearSOSL._batch_in_place
    with monkeypatch.context() as mp:
        mp.setattr(_LinearSOSL, "_batch_in_place",
                   lambda self, X, y: taken.append(real(self, X, y)) or taken[-1])
        fast = _stream(make, X, y, chunks)
    assert taken == [True] * 4                     # every batch of two rows or more
    with monkeypatch.context() as mp:
        _general_only(mp)
        slow = _stream(make, X, y, chunks)
    _assert_same_state(fast, slow)
    assert np.abs(fast.coef_).max() > 0 and fast.calibration_[0] != 1.0


def test_batch_path_is_taken_and_a_wrong_counter_is_caught(monkeypatch):
    """The spy proves the batch path ran; the mutant (the step counter off by one) must
    not match the general path."""
    X, y = _data()
    taken = []
    real = _LinearSOSL._batch_in_place

    def spy(self, X, y):
        taken.append(real(self, X, y))
        return taken[-1]
    monkeypatch.setattr(_LinearSOSL, "_batch_in_place", spy)
    fast = _stream(lambda: OAUCM(lam=0.01), X, y, [100, 400])
    assert taken == [True]
    with monkeypatch.context() as mp:
        _general_only(mp)
        slow = _stream(lambda: OAUCM(lam=0.01), X, y, [100, 400])
    _assert_same_state(fast, slow)
    mutant = OAUCM(lam=0.01).fit(X[:100], y[:100])
    st = mutant._stepper()
    s = np.where(y[100:400] == 1, 1.0, -1.0)
    assert st.batch(X[100:400], s, mutant.t_ + 1, mutant.max_abs_, 16, False) > 0
    assert not np.array_equal(mutant.coef_, slow.coef_)


@pytest.mark.parametrize("path", ["batch", "general"])
def test_platt_steps_in_the_pass_are_prequential(monkeypatch, path):
    """The calibration after a call equals ``platt_steps`` on the scores of the model
    before the call, in the pass's row order (shuffled too); the scores after the call
    (the mutant) give another calibration."""
    if path == "general":
        _general_only(monkeypatch)
    X, y = _data()
    for shuffle in (False, True):
        m = OAUCM(lam=0.01, shuffle=shuffle, random_state=3).fit(X[:200], y[:200])
        before = m.decision_function(X[200:])
        cal = m.calibration_.copy()
        s = np.where(y[200:] == 1, 1.0, -1.0)
        order = (np.random.RandomState(3).permutation(400) if shuffle else np.arange(400))
        m.partial_fit(X[200:], y[200:])             # an int seed: the same order each call
        ref = cal.copy()
        _calibration_ref.platt_steps(before[order], s[order], ref)
        np.testing.assert_allclose(m.calibration_, ref, rtol=1e-12)
        after = cal.copy()
        _calibration_ref.platt_steps(m.decision_function(X[200:])[order], s[order], after)
        assert not np.allclose(after, ref, rtol=1e-6)


def test_zero_weights_and_non_finite_scores_skip_their_platt_step():
    """Rows left out by a zero weight take no Platt step; a row whose old score is not
    finite (here: the general path's overflow) is skipped, as by the separate loop."""
    X, y = _data()
    m = OAUCM(lam=0.01).fit(X[:200], y[:200])
    cal = m.calibration_.copy()
    before = m.decision_function(X[200:300])
    w = np.ones(100)
    w[::3] = 0.0
    m.partial_fit(X[200:300], y[200:300], sample_weight=w)
    keep = w > 0
    ref = cal.copy()
    _calibration_ref.platt_steps(before[keep], np.where(y[200:300][keep] == 1, 1.0, -1.0), ref)
    np.testing.assert_allclose(m.calibration_, ref, rtol=1e-12)


@pytest.mark.parametrize("bad", ["nan", "unknown-label", "huge"])
def test_batch_path_refuses_and_keeps_state(bad):
    X, y = _data()
    m = OAUCM(lam=0.01).fit(X[:200], y[:200])
    before = {k: np.array(getattr(m, k), copy=True) for k in STATE}
    meta = (m.t_, m.n_seen_, m.max_abs_)
    Xb, yb = X[200:300].copy(), y[200:300].copy()
    if bad == "nan":
        Xb[50, 2] = np.nan
        with pytest.raises(ValueError, match="NaN or infinity"):
            m.partial_fit(Xb, yb)
    elif bad == "unknown-label":
        yb[70] = 7
        with pytest.raises(ValueError, match="not in classes"):
            m.partial_fit(Xb, yb)
    else:                        # beyond the no-copy bound (p = 5: the batch path, state kept)
        Xb[10, 0] = 1e60
        with pytest.warns(UnscaledInputWarning):
            m.partial_fit(Xb, yb)
        assert m.max_abs_ == 1e60 and m.t_ == meta[0] + 100
        return
    for k in STATE:
        np.testing.assert_array_equal(getattr(m, k), before[k], err_msg=k)
    assert (m.t_, m.n_seen_, m.max_abs_) == meta


def _spy(monkeypatch):
    """Record what each ``_batch_in_place`` call returned ("raised" if it raised)."""
    taken = []
    real = _LinearSOSL._batch_in_place

    def spy(self, X, y):
        try:
            taken.append(real(self, X, y))
        except Exception:
            taken.append("raised")
            raise
        return taken[-1]
    monkeypatch.setattr(_LinearSOSL, "_batch_in_place", spy)
    return taken


@pytest.mark.parametrize("p", [5, 40])
def test_batch_that_diverges_leaves_the_state_as_it_was(monkeypatch, p):
    """A step size that overflows w: below BLAS_MIN_P the batch path plays it on the live
    state (copied whole first), sees the non-finite state and restores it; from BLAS_MIN_P
    on its no-copy proof fails and the general path runs. Both raise the general path's
    error with every array unchanged."""
    X, y = _data(p=p)
    results = {}
    for path in ("batch", "general"):
        m = OAUCM(lam=0.01, eta=1e-3).fit(X[:200], y[:200])
        m.partial_fit(X[200:210], y[200:210])                  # a stepper exists
        m.set_params(eta=1e300)
        m.score_one(X[0])                                       # the new step is checked
        before = {k: np.array(getattr(m, k), copy=True) for k in STATE}
        meta = (m.t_, m.n_seen_, m.max_abs_)
        with monkeypatch.context() as mp:
            if path == "general":
                _general_only(mp)
                taken = []
            else:
                taken = _spy(mp)
            with pytest.raises(FloatingPointError, match="non-finite"):
                m.partial_fit(X[210:300], y[210:300])
        for k in STATE:
            np.testing.assert_array_equal(getattr(m, k), before[k], err_msg=f"{path} {k}")
        assert (m.t_, m.n_seen_, m.max_abs_) == meta
        results[path] = taken
    assert results["batch"] == (["raised"] if p == 5 else [False])


@pytest.mark.parametrize("p", [5, 40])
def test_huge_magnitudes_take_the_batch_path_below_blas_min_p(monkeypatch, p):
    """|x| = 1e60 is beyond the no-copy bound: from BLAS_MIN_P on the general path runs on
    copies; below it the batch path plays the rows in place (the state copied first) and
    must give the general path's bits."""
    X, y = _data(p=p)
    X[250, 0] = 1e60
    chunks = [100, 160, 300, 400]
    with monkeypatch.context() as mp:
        taken = _spy(mp)
        with pytest.warns(UnscaledInputWarning):
            fast = _stream(lambda: OAUCM(lam=0.01), X, y, chunks)
    assert taken == ([True] * 3 if p == 5 else [True, False, False])   # max_abs_ stays 1e60
    with monkeypatch.context() as mp:
        _general_only(mp)
        with pytest.warns(UnscaledInputWarning):
            slow = _stream(lambda: OAUCM(lam=0.01), X, y, chunks)
    _assert_same_state(fast, slow)
    assert fast.max_abs_ == 1e60 and np.isfinite(fast.coef_).all()


@pytest.mark.parametrize("labels", ["int01", "int01-uncontiguous", "int32", "bool", "int10",
                                    "str", "float"])
def test_labels_of_every_kind_give_the_general_paths_bits(monkeypatch, labels):
    """The kernel makes the signs of int64 0/1 labels when classes_ = [0, 1]; other labels
    (int32, bool, classes_ [1, 0], strings, a strided y) take ``_signs`` first, float
    labels the general path: the same bits."""
    X, y = _data()
    chunks = [100, 160, 300, 450, 600]
    if labels == "int10":
        classes, yy = [1, 0], y                           # positive class 0
    elif labels == "str":
        classes, yy = ["a", "b"], np.where(y == 1, "b", "a")
    elif labels == "float":
        classes, yy = [0.0, 1.0], y.astype(float)
    elif labels == "int32":
        classes, yy = [0, 1], y.astype(np.int32)
    elif labels == "bool":
        classes, yy = [False, True], y.astype(bool)
    else:
        classes, yy = [0, 1], y
    yy = np.ascontiguousarray(yy)

    def stream():
        m = OAUCM(lam=0.01).partial_fit(X[:100], yy[:100], classes=classes)
        for a, b in zip(chunks[:-1], chunks[1:]):
            yb = yy[a:b]
            if labels == "int01-uncontiguous":
                yb = np.repeat(yb, 2)[::2]
                assert not yb.flags.c_contiguous
            m.partial_fit(X[a:b], yb, classes=classes)
        return m
    with monkeypatch.context() as mp:
        taken = _spy(mp)
        fast = stream()
    assert taken == ([] if labels == "float" else [True] * 4)    # float y: not a label kind
    with monkeypatch.context() as mp:
        _general_only(mp)
        slow = stream()
    _assert_same_state(fast, slow)
    ref = OAUCM(lam=0.01).partial_fit(X[:100], y[:100], classes=[0, 1])
    for a, b in zip(chunks[:-1], chunks[1:]):
        ref.partial_fit(X[a:b], y[a:b])
    if labels == "int10":                                 # the other class is positive
        assert not np.allclose(fast.coef_, ref.coef_)
    else:
        np.testing.assert_array_equal(fast.coef_, ref.coef_)
