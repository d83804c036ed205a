"""Online Platt scaling behind predict_proba: typed == reference, and the estimator side."""

import numpy as np
import pytest
from sklearn.metrics import brier_score_loss

from sosl import OAUCM, Perceptron
from sosl._core import _calibration, _calibration_ref


def _scores(n=500, seed=0):
    rng = np.random.default_rng(seed)
    s = np.where(rng.random(n) < 0.2, 1.0, -1.0)
    f = 1.5 * s + rng.normal(size=n) * 2.0
    return np.ascontiguousarray(f), s


def test_typed_steps_equal_the_reference():
    f, s = _scores()
    a, b = np.array([1.0, 1.0]), np.array([1.0, 1.0])
    _calibration.platt_steps(f, s, a)
    _calibration_ref.platt_steps(f, s, b)
    np.testing.assert_allclose(a, b, rtol=1e-12)
    assert abs(a[0] - 1.0) > 1e-3                       # it learned something


def test_mutant_without_the_prior_is_caught():
    f, s = _scores()
    a, m = np.array([1.0, 1.0]), np.array([1.0, 1e-300])   # no prior curvature
    _calibration.platt_steps(f, s, a)
    _calibration_ref.platt_steps(f[:1], s[:1], m)
    b = np.array([1.0, 1.0])
    _calibration_ref.platt_steps(f[:1], s[:1], b)
    assert not np.isclose(m[0], b[0], rtol=1e-3)


def test_slope_converges_to_the_logistic_fit():
    """Scores drawn so that P(y=1|f) = sigmoid(0.7 f): the online slope gets close."""
    rng = np.random.default_rng(3)
    f = rng.normal(size=20000) * 3.0
    s = np.where(rng.random(20000) < _calibration_ref.sigmoid(0.7 * f), 1.0, -1.0)
    c = np.array([1.0, 1.0])
    _calibration.platt_steps(np.ascontiguousarray(f), s, c)
    assert abs(c[0] - 0.7) < 0.05


def _stream(n=3000, p=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, p))
    y = (X @ np.arange(1, p + 1) + rng.normal(size=n) * 1.5 > 2.0).astype(int)
    return X, y


@pytest.mark.parametrize("Est", [OAUCM, Perceptron])
def test_probabilities_agree_with_predict_and_are_calibrated(Est):
    X, y = _stream()
    m = Est()
    for a in range(0, 2000, 100):
        m.partial_fit(X[a:a + 100], y[a:a + 100], classes=[0, 1])
    P = m.predict_proba(X[2000:])
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    np.testing.assert_array_equal(m.classes_[P.argmax(axis=1)], m.predict(X[2000:]))
    # P[:, 0] = 1 - P[:, 1] carries the rounding of 1 - p relative to a small P[:, 0]
    # (about 1e-16 / P[:, 0]); the log probabilities are exact in both tails
    np.testing.assert_allclose(np.exp(m.predict_log_proba(X[2000:])), P, rtol=1e-10)
    base = brier_score_loss(y[2000:], np.full(1000, y[:2000].mean()))
    assert brier_score_loss(y[2000:], P[:, 1]) < base          # better than the base rate
    one = m.predict_proba_one(X[2001])
    assert set(one) == {0, 1} and one[1] == pytest.approx(P[1, 1], rel=1e-12)


def test_calibration_learns_prequentially_on_every_call():
    X, y = _stream()
    m = OAUCM().fit(X[:500], y[:500])
    A_fit = m.calibration_[0]
    before = m.decision_function(X[500:600])
    ref = m.calibration_.copy()
    _calibration_ref.platt_steps(before, np.where(y[500:600] == 1, 1.0, -1.0), ref)
    m.partial_fit(X[500:600], y[500:600])
    np.testing.assert_allclose(m.calibration_, ref, rtol=1e-12)   # scores of the old model
    assert m.calibration_[0] != A_fit
    a = OAUCM().fit(X[:500], y[:500])
    b = OAUCM().fit(X[:500], y[:500])
    for i in range(500, 600):
        a.learn_one(X[i], y[i])                                    # typed one-row path
        b.partial_fit(X[i:i + 1], y[i:i + 1])
    np.testing.assert_allclose(a.calibration_, b.calibration_, rtol=1e-10)
    assert not np.allclose(a.calibration_, ref, rtol=1e-4)         # row by row differs


def test_slope_stays_positive_on_anti_correlated_scores():
    """Scores that rank backwards drive A down towards 0 but never to 0 or below, in both
    implementations (A <= 0 would make every probability 1/2 or invert them and break
    argmax == predict); the floor A_MIN holds from the first step."""
    f = np.linspace(-3, 3, 200)
    s = np.where(f < 0, 1.0, -1.0)
    a, b = np.array([1.0, 1.0]), np.array([1.0, 1.0])
    _calibration.platt_steps(np.ascontiguousarray(f), s, a)
    _calibration_ref.platt_steps(f, s, b)
    np.testing.assert_allclose(a, b, rtol=1e-12)
    assert _calibration_ref.A_MIN <= a[0] < 0.05
    c = np.array([_calibration_ref.A_MIN, 1.0])
    _calibration.platt_steps(np.array([3.0]), np.array([-1.0]), c)
    assert c[0] == _calibration_ref.A_MIN


def _wide_scores(n=20000, seed=5):
    """Scores over many magnitudes: most of order 1, some where exp(-|A f|) is tiny, some
    where it underflows to 0 (|f| up to 1e4), and exact zeros."""
    rng = np.random.default_rng(seed)
    s = np.where(rng.random(n) < 0.3, 1.0, -1.0)
    f = 0.8 * s + rng.normal(size=n) * np.where(rng.random(n) < 0.05, 300.0, 1.5)
    f[rng.random(n) < 0.005] *= 30.0
    f[::997] = 0.0
    return np.ascontiguousarray(f), s


def _mutant_steps(f, s, calib):
    """The Newton step divided by the curvature before this row's h: a wrong step."""
    for fi, si in zip(f, s):
        z = 1.0 if si > 0 else 0.0
        u = calib[0] * fi
        q = float(_calibration_ref.sigmoid(u))
        H_old = calib[1]
        calib[1] += q * float(_calibration_ref.sigmoid(-u)) * u * u
        d = min(max((q - z) * u / H_old, -1.0), 1.0)
        calib[0] = max(calib[0] * np.exp(-d), _calibration_ref.A_MIN)


def _slope_steps(f, s, calib):
    """Mutant: the Newton step in A itself (curvature q (1 - q) f^2), the step before the
    log-slope form; its size depends on the scale of the scores."""
    for fi, si in zip(f, s):
        z = 1.0 if si > 0 else 0.0
        u = calib[0] * fi
        q = float(_calibration_ref.sigmoid(u))
        calib[1] += q * float(_calibration_ref.sigmoid(-u)) * fi * fi
        calib[0] = max(calib[0] - (q - z) * fi / calib[1], _calibration_ref.A_MIN)


def _probabilities(steps, f, s):
    c, out = np.array([1.0, 1.0]), np.empty(f.shape[0])
    for i in range(f.shape[0]):
        out[i] = _calibration_ref.sigmoid(c[0] * f[i])
        steps(f[i:i + 1], s[i:i + 1], c)
    return out


@pytest.mark.parametrize("c", [1e-3, 40.0])
def test_probabilities_do_not_depend_on_the_scale_of_the_scores(c):
    """Scores multiplied by c give the same prequential probabilities (A divided by c), so
    scores much smaller or larger than 1 do not collapse the probabilities to 1/2; the step
    in A itself (the mutant) depends on c."""
    f, s = _scores(n=2000, seed=7)
    base = _probabilities(_calibration_ref.platt_steps, f, s)
    a, b = np.array([1.0, 1.0]), np.array([1.0 / c, 1.0])
    _calibration.platt_steps(f, s, a)
    _calibration.platt_steps(np.ascontiguousarray(f * c), s, b)
    np.testing.assert_allclose(b[0] * c, a[0], rtol=1e-9)
    np.testing.assert_allclose(b[1], a[1], rtol=1e-9)
    assert np.percentile(base, 90) - np.percentile(base, 10) > 0.5
    mutant = _probabilities(_slope_steps, f * c, s)
    assert np.abs(mutant - base).max() > 0.1


def test_large_early_scores_do_not_freeze_the_slope():
    """Scores 100 times larger on the first 50 rows (a learner's first steps) and of order 1
    after: the probabilities of the later rows still spread over [0, 1] (the step in A
    accumulates the early curvature q (1 - q) f^2 and stays near 1/2: the mutant). Not
    unlimited: after many confident mistakes on scores 1000 times larger A is too small for
    the later scores' gradients to bring it back within this stream."""
    f, s = _scores(n=3000, seed=11)
    f = f.copy()
    f[:50] *= 100.0
    p = _probabilities(_calibration_ref.platt_steps, f, s)[1000:]
    assert np.percentile(p, 90) - np.percentile(p, 10) > 0.5
    m = _probabilities(_slope_steps, f, s)[1000:]
    assert np.percentile(m, 90) - np.percentile(m, 10) < 0.1


def test_one_division_step_equals_the_textbook_step_over_a_long_stream():
    """The typed step (one division on the A chain, ``_calibration.pxd``) and the textbook
    twin agree to 1e-12 after 20,000 steps on scores of every magnitude; the same
    comparison catches a step that divides by the old curvature."""
    f, s = _wide_scores()
    a, b, m = (np.array([1.0, 1.0]) for _ in range(3))
    _calibration.platt_steps(f, s, a)
    _calibration_ref.platt_steps(f, s, b)
    assert np.isfinite(a).all() and a[1] > 10.0 and abs(a[0] - 1.0) > 1e-2
    np.testing.assert_allclose(a, b, rtol=1e-12)
    _mutant_steps(f, s, m)
    assert not np.allclose(a, m, rtol=1e-6)


@pytest.mark.parametrize("A", [1e-12, 1e-3, 1.0, 40.0])
def test_one_step_agrees_on_both_branches_and_in_the_tails(A):
    """Single steps from several states, for scores of both signs up to where exp
    underflows (the curvature term is then exactly 0 in both forms), both labels."""
    for fi in (-1e4, -800.0, -40.0, -3.0, -1e-9, -0.0, 0.0, 1e-9, 0.5, 3.0, 40.0, 800.0, 1e4):
        for si in (-1.0, 1.0):
            a, b = np.array([A, 2.5]), np.array([A, 2.5])
            _calibration.platt_steps(np.array([fi]), np.array([si]), a)
            _calibration_ref.platt_steps([fi], [si], b)
            assert np.isfinite(a).all()
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=0, err_msg=f"f={fi} s={si}")


def test_one_division_form_is_the_newton_step_symbolically():
    """(n - z D) u D / (H D^2 + e u^2) == (q - z) u / (H + h) with q = n / D, D = 1 + e,
    h = q (1 - q) u^2 (u = A f: the step in log A, here written with f for u), on both
    branches of the sigmoid (n = 1 for u >= 0, n = e below);
    the same check rejects a numerator without its factor D."""
    sympy = pytest.importorskip("sympy")
    e, f, z, H = sympy.symbols("e f z H", positive=True)
    D = 1 + e
    for n in (sympy.Integer(1), e):
        q = n / D
        textbook = (q - z) * f / (H + q * (1 - q) * f ** 2)
        typed = (n - z * D) * f * D / (H * D ** 2 + e * f ** 2)
        assert sympy.simplify(textbook - typed) == 0
        wrong = (n - z * D) * f / (H * D ** 2 + e * f ** 2)
        assert sympy.simplify(textbook - wrong) != 0
