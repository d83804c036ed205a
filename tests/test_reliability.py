"""Regression tests of the silent-corruption defects found by an independent battery:
overflow and NaN under large magnitudes.

D1/D2: forgetting with a large constant step once formed the unscaled scatter times w,
which overflows where Sigma w is finite, and the no-copy argument let NaN weights (and a
changed scatter) through. The stress streams of ``conftest.STRESS_STREAMS`` run every
learner at the edges the no-copy arguments assume away. The other defects of the battery:
``test_reliability_rows.py`` (D3, D4, D6, D7, the one-row round on copies),
``test_reliability_threads.py`` (D5) and ``test_reliability_guards.py`` (D11, pickles,
multiclass).
"""

import numpy as np
import pytest
from helpers import ESTIMATORS, fitted_state, make, same_state

from sosl import OAUCM, OAUCS

_make = make


def _call_keeps_or_commits_finite(model, fn, *args):
    """Run ``fn(*args)``: either it raises and the state is byte-identical, or it returns
    and every fitted float array is finite. Returns True if it raised."""
    before = fitted_state(model)
    try:
        fn(*args)
    except (FloatingPointError, ValueError):
        assert same_state(fitted_state(model), before)
        return True
    for name, value in fitted_state(model).items():
        if isinstance(value, np.ndarray) and value.dtype.kind == "f":
            assert np.isfinite(value).all(), name
        elif isinstance(value, float):
            assert np.isfinite(value), name
    return False


# -- D1 / D2 -------------------------------------------------------------------------------
def _d1_stream():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(3000, 5)) * 1e40
    y = (rng.random(3000) < 0.3).astype(int)
    return X, y


def test_d1_forgetting_with_large_step_never_commits_nan():
    X, y = _d1_stream()
    m = OAUCM(forgetting=0.5, eta=1.0).partial_fit(X[:2], [0, 1], classes=[0, 1])
    for i in range(2, 713):
        _call_keeps_or_commits_finite(m, m.learn_one, X[i], y[i])
    assert np.isfinite(m.coef_).all() and m.t_ >= 2


def test_d2_failed_batch_leaves_the_scatter_unchanged():
    X, y = _d1_stream()
    m = OAUCM(forgetting=0.5, eta=1.0).partial_fit(X[:2], [0, 1], classes=[0, 1])
    _call_keeps_or_commits_finite(m, m.partial_fit, X[2:], y[2:])
    # the same rows one at a time and as one batch give the same weights (no failure)
    a = OAUCM(forgetting=0.5, eta=1.0).partial_fit(X[:2], [0, 1], classes=[0, 1])
    a.partial_fit(X[2:], y[2:])
    assert np.isfinite(a.coef_).all() and np.isfinite(a.scatter_).all()


@pytest.mark.parametrize("Est", [OAUCM, OAUCS], ids=lambda E: E.__name__)
@pytest.mark.parametrize("p", [5, 40], ids=["own-loops", "blas"])
@pytest.mark.parametrize("forgetting", [1.0, 0.5, 0.05])
def test_large_magnitudes_with_forgetting(Est, p, forgetting):
    """Guarded and unguarded rounds, one-row and batch, at magnitudes 1e30-1e45 and large
    constant steps, on both sides of the BLAS threshold: a failing call leaves the state
    byte-identical, and nothing non-finite is ever committed."""
    assert (p < _linear_blas_min_p()) == (p == 5)
    rng = np.random.default_rng(p + int(100 * forgetting))
    guarded = proven = failed = 0
    for scale in (1e30, 1e40, 1e45):
        for eta in (None, 1.0, 1e3):
            X = rng.normal(size=(90, p)) * scale
            y = (rng.random(90) < 0.3).astype(int)
            m = Est(eta=eta, lam=1e-2, forgetting=forgetting).partial_fit(
                X[:4], np.r_[0, 1, 0, 1], classes=[0, 1])
            for i in range(4, 60):
                failed += _call_keeps_or_commits_finite(m, m.learn_one, X[i], y[i])
            st = m.__dict__.get("_stepper_")
            if st is not None:
                guarded += st.n_guarded
                proven += m.t_ - 4 - st.n_guarded
            failed += _call_keeps_or_commits_finite(m, m.partial_fit, X[60:], y[60:])
    assert guarded + proven > 0


def _linear_blas_min_p():
    from sosl.linear import BLAS_MIN_P
    return BLAS_MIN_P


def test_stress_battery_exercises_both_one_row_paths():
    """Across a few configurations the typed stepper takes both its proven (no copy) and
    its guarded (saved and restored) rounds, so the test above covers both."""
    guarded = proven = 0
    rng = np.random.default_rng(7)
    for Est, eta, scale in ((OAUCM, None, 1.0), (OAUCS, 1e3, 1e40)):
        X = rng.normal(size=(80, 6)) * scale
        y = (rng.random(80) < 0.4).astype(int)
        m = Est(eta=eta, forgetting=0.5).partial_fit(X[:4], [0, 1, 0, 1])
        for i in range(4, 80):
            _call_keeps_or_commits_finite(m, m.learn_one, X[i], y[i])
        st = m._stepper()
        guarded += st.n_guarded
        proven += m.t_ - 4 - st.n_guarded
    assert guarded > 0 and proven > 0, (guarded, proven)


def test_scaled_matvec_is_what_keeps_d1_finite():
    """The reference of one round, with Sigma w formed as (scale / W) (C w) as the old
    kernel did, overflows on the D1 state where the kernel's C (alpha w) does not (the
    mutant this regression test is about)."""
    X, y = _d1_stream()
    m = OAUCM(forgetting=0.5, eta=1.0).partial_fit(X[:2], [0, 1], classes=[0, 1])
    old_overflowed, new_finite = False, True
    with np.errstate(over="ignore", invalid="ignore"):
        for i in range(2, 713):
            opp = 0 if y[i] == 1 else 1
            if m.counts_[opp] > 0:
                C = np.triu(m.scatter_[opp]) + np.triu(m.scatter_[opp], 1).T
                alpha = m.scales_[opp] / m.weights_[opp]
                w = m.coef_[0]
                old_overflowed |= not np.isfinite(alpha * (w @ (C @ w)))
                new_finite &= bool(np.isfinite(w @ (C @ (alpha * w))))
            m.learn_one(X[i], y[i])
    assert old_overflowed and new_finite


# -- the shared stress streams, every learner ------------------------------------------------
@pytest.mark.parametrize("Est", ESTIMATORS, ids=lambda E: E.__name__)
def test_every_learner_survives_the_stress_streams(Est, stress_stream):
    name, X, y = stress_stream
    m = _make(Est)
    m.partial_fit(X[:4], y[:4], classes=[0, 1])
    half = X.shape[0] // 2
    for i in range(4, half):
        _call_keeps_or_commits_finite(m, m.learn_one, X[i], y[i])
    _call_keeps_or_commits_finite(m, m.partial_fit, X[half:], y[half:])
    assert m.n_seen_ >= 4
