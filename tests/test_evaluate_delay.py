"""Delayed labels in prequential evaluation: equal to a hand-written delayed loop, exactly."""

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

import sosl.evaluate as evaluate
from sosl import OAUCM
from sosl.datasets import make_imbalanced_stream
from sosl.evaluate import prequential
from sosl.metrics import RollingAUC, StreamingAUC


def _data(seed, n=300, p=4):
    return make_imbalanced_stream(n, p, imbalance_ratio=3, class_sep=1.5, random_state=seed)


def _delayed_loop(model, X, y, delays, classes=(0, 1)):
    """Score every row; learn row i right after row i + delays[i] has been scored (ties in
    row order), the rest at the end; scores[i] is NaN until the model has learned a row."""
    n = X.shape[0]
    scores = np.full(n, np.nan)
    learned = 0
    due = np.arange(n) + np.asarray(delays)
    for i in range(n):
        if learned:
            scores[i] = model.decision_function(X[i:i + 1])[0]
        for j in np.flatnonzero(due == i):        # row order among ties
            model.partial_fit(X[j:j + 1], y[j:j + 1], classes=None if learned else classes)
            learned += 1
    for j in sorted(np.flatnonzero(due >= n), key=lambda j: (due[j], j)):
        model.partial_fit(X[j:j + 1], y[j:j + 1], classes=None if learned else classes)
        learned += 1
    return scores


def _streaming_auc(scores, y, steps):
    out = []
    for k in steps:
        ok = np.isfinite(scores[:k])
        s, lab = scores[:k][ok], y[:k][ok] == 1
        out.append(roc_auc_score(lab, s) if 0 < lab.sum() < lab.size else np.nan)
    return np.array(out)


@pytest.mark.parametrize("d", [0, 1, 7, 40])
def test_fixed_delay_equals_hand_loop(d):
    X, y = _data(d)
    res = prequential(OAUCM(lam=0.05), X, y, every=25, classes=[0, 1], delay=d,
                      metrics={"auc": StreamingAUC(), "roll": RollingAUC(80)})
    model = OAUCM(lam=0.05)
    scores = _delayed_loop(model, X, y, np.full(X.shape[0], d))
    np.testing.assert_array_equal(res.scores, scores)       # bit for bit, NaNs in place
    assert res.n_scored == X.shape[0] - d - 1                # rows 0..d come before any label
    np.testing.assert_allclose(res["auc"], _streaming_auc(scores, y, res.steps), atol=1e-12)
    assert res.final()["auc"] > 0.7
    # the model returned has learned every row, as the loop's
    assert model.t_ == X.shape[0]
    np.testing.assert_array_equal(model.coef_, _model_after(X, y, d).coef_)


def _model_after(X, y, d):
    m = OAUCM(lam=0.05)
    prequential(m, X, y, classes=[0, 1], delay=d)
    return m


def test_callable_delay_equals_hand_loop():
    X, y = _data(5)
    rng = np.random.default_rng(5)
    delays = rng.integers(0, 30, size=X.shape[0])             # labels overtake each other
    res = prequential(OAUCM(lam=0.05), X, y, every=50, classes=[0, 1],
                      delay=lambda i: int(delays[i]))
    scores = _delayed_loop(OAUCM(lam=0.05), X, y, delays)
    np.testing.assert_array_equal(res.scores, scores)
    assert np.isfinite(scores).sum() > 250


def test_delay_changes_the_scores():
    """The test can fail: a label delay of 40 rows gives other scores than none."""
    X, y = _data(1)
    a = prequential(OAUCM(lam=0.05), X, y, classes=[0, 1], delay=0).scores
    b = prequential(OAUCM(lam=0.05), X, y, classes=[0, 1], delay=40).scores
    assert np.isnan(b[:41]).all() and not np.allclose(a[41:], b[41:])


@pytest.mark.parametrize("shift", [1, -1])
def test_off_by_one_delay_mutant_is_caught(monkeypatch, shift):
    """Rows learned one scored row late (or early): the comparison with the loop fails."""
    X, y = _data(2)
    monkeypatch.setattr(evaluate, "_due", lambda i, d: i + d + shift)
    res = prequential(OAUCM(lam=0.05), X, y, classes=[0, 1], delay=7)
    scores = _delayed_loop(OAUCM(lam=0.05), X, y, np.full(X.shape[0], 7))
    assert not np.array_equal(res.scores, scores, equal_nan=True)


@pytest.mark.parametrize("delay, err, match", [
    (-1, ValueError, "delay must be >= 0"),
    (1.5, TypeError, "delay must be an int"),
    (True, TypeError, "delay must be an int"),
    (lambda i: -1, ValueError, r"delay\(0\) must return"),
    (lambda i: 0.5, ValueError, r"delay\(0\) must return"),
])
def test_bad_delay(delay, err, match):
    X, y = _data(0, n=40)
    model = OAUCM()
    with pytest.raises(err, match=match):
        prequential(model, X, y, classes=[0, 1], delay=delay)
    if not callable(delay):
        assert not hasattr(model, "classes_")               # refused before any learning


def test_recovery_of_a_curve():
    from sosl.evaluate import recovery

    steps = np.arange(100, 2100, 100)                # records at rows 100 .. 2000
    curve = np.full(steps.shape, 0.9)
    curve[10:14] = [0.7, 0.75, 0.85, 0.88]           # the dip after row 1000, back at 1500
    level, depth, rows = recovery(steps, curve, at=1000)
    assert level == 0.9 and depth == pytest.approx(0.2) and rows == 500
    assert recovery(steps, curve, at=1000, tol=0.3)[2] == 0.0      # never fell that low
    blip = curve.copy()
    blip[10:14] = [0.7, 0.95, 0.65, 0.88]           # a blip back before the bottom
    assert recovery(steps, blip, at=1000)[2] == 500
    assert np.isnan(recovery(steps, curve, at=1000, until=1300)[2])  # not back by then
    curve[15] = np.nan                                             # NaN records skipped
    assert recovery(steps, curve, at=1000)[2] == 500
    with pytest.raises(ValueError, match="no finite record"):
        recovery(steps, curve, at=50)
