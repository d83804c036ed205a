"""``score_one`` of KOIL and OKAUC-M/S on a dense row: the typed stepper's pre-score.

On a fitted model with checked hyper-parameters, a dense float64 row is scored by the
one-row stepper (``_koil.Stepper.score``, ``_okauc.Stepper.score``: the pre-score its
``step`` feeds the Platt scaling) instead of the general validation and decision path.
Checked here: it equals ``decision_function`` on the row bit for bit, with the buffers
filled adjacently (the stepper's case) and not (the general path's case, then taken); a row
it declines (wrong length, NaN, a 2-D row, another dtype) gets the general path's error; a
hyper-parameter changed after the fit goes through the general path's check; and a mutant
stepper whose score drops the intercept is caught.
"""

import numpy as np
import pytest

import sosl
from sosl.koil import KOIL

LEARNERS = [sosl.KOIL, sosl.OKAUCM, sosl.OKAUCS]


def _data(n=300, p=5, seed=0, pos=0.5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = (rng.random(n) < pos).astype(int)
    X[y == 1] += 0.7
    return X, y


def _kw(Est, budget):
    return dict(budget=budget, random_state=0) if Est is KOIL else dict(budget=budget)


def _scores_equal(m, X):
    got = np.array([m.score_one(x) for x in X])
    return np.array_equal(got, m.decision_function(X)), got


@pytest.mark.parametrize("Est", LEARNERS, ids=lambda E: E.__name__)
@pytest.mark.parametrize("kernel", ["rbf", "poly"])
def test_score_one_is_the_decision_function_to_the_bit(Est, kernel):
    X, y = _data()
    m = Est(kernel=kernel, **_kw(Est, 20)).fit(X[:200], y[:200])     # buffers full
    assert not np.isnan(m._stepper().score(X[200], m.intercept_))  # the typed path
    ok, _ = _scores_equal(m, X[200:])
    assert ok
    # few negatives: the negative buffer is not full while positives are stored, so the
    # filled slots are not adjacent and the stepper declines: the general path scores
    Xs, ys = _data(n=60, pos=0.8, seed=1)
    m = Est(kernel=kernel, **_kw(Est, 40)).fit(Xs, ys)
    assert np.isnan(m._stepper().score(X[200], m.intercept_))      # declined
    ok, _ = _scores_equal(m, X[200:])
    assert ok


@pytest.mark.parametrize("Est", LEARNERS, ids=lambda E: E.__name__)
def test_rows_the_stepper_declines_get_the_general_paths_errors(Est):
    X, y = _data()
    m = Est(**_kw(Est, 20)).fit(X, y)
    before = m.decision_function(X[:5])
    bad = X[0].copy()
    bad[2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        m.score_one(bad)
    with pytest.raises(ValueError, match="features"):
        m.score_one(X[0, :4].copy())
    assert m.score_one(X[0].astype(np.float32)) == pytest.approx(before[0], rel=1e-6)
    assert m.score_one(list(X[1])) == before[1]
    assert m.score_one(np.asfortranarray(X[2:3])[0]) == before[2]
    np.testing.assert_array_equal(m.decision_function(X[:5]), before)


@pytest.mark.parametrize("Est", LEARNERS, ids=lambda E: E.__name__)
def test_a_changed_hyper_parameter_takes_the_general_check(Est):
    X, y = _data()
    m = Est(**_kw(Est, 20)).fit(X, y)
    m.set_params(kernel="linear")                   # the fitted layout is rbf
    with pytest.raises(ValueError, match="kernel"):
        m.score_one(X[0])
    m.set_params(kernel="rbf")
    assert m.score_one(X[0]) == m.decision_function(X[:1])[0]


def test_a_stepper_score_without_the_intercept_is_caught(monkeypatch):
    """Mutant: the typed score forgets the intercept; the equality above catches it."""
    X, y = _data()
    m = KOIL(**_kw(KOIL, 20)).fit(X, y)
    assert m.intercept_ != 0.0
    real = m._stepper()

    class Mutant:
        arrays = real.arrays

        def score(self, x, intercept):
            return real.score(x, 0.0)
    monkeypatch.setattr(KOIL, "_stepper", lambda self: Mutant())
    ok, got = _scores_equal(m, X[:20])
    assert not ok
    monkeypatch.undo()
    assert _scores_equal(m, X[:20])[0]
