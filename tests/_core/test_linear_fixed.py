"""The fixed-moment pass (``_linear.fixed_pass``, ``Parallel(moments="fixed")``'s rounds)
== its NumPy reference (``_linear_ref.fixed_pass``) on the same sample order, both kernel
paths (own loops, BLAS), with a mutant of the reference that must be caught."""

import numpy as np
import pytest
from helpers import mutant_of

from sosl import state as S
from sosl._core import _linear
from sosl._core import _linear_ref as ref
from sosl._core._codes import Loss, Schedule

LOSS_M, LOSS_S = int(Loss.LOSS_M), int(Loss.LOSS_S)
INV = int(Schedule.STEP_INV_LAM_T)
CONST = int(Schedule.STEP_CONSTANT)
CONFIGS = [(0.1, None, LOSS_M), (0.01, 0.05, LOSS_M), (0.01, 0.02, LOSS_S),
           (1.0, None, LOSS_S)]
PATHS = {"loops": 10**9, "blas": 1}


def _moments(X, s):
    """The class means, covariances and counts of all rows (the "global" moments)."""
    m = S.moments_of_rows(X, s)
    W = np.where(m.weights > 0, m.weights, 1.0)
    return m.means, m.scatter / W[:, None, None], m.counts


def _cython(X, s, order, moments, lam, eta, loss, blas_min_p, w0=None, t0=0, sw=None):
    p = X.shape[1]
    xbar, Sigma, N = moments
    w = np.zeros(p) if w0 is None else w0.copy()
    schedule, eta = (INV, 0.0) if eta is None else (CONST, eta)
    t, finite = _linear.fixed_pass(X, s, order, w, xbar, Sigma, N, t0, lam, eta, schedule,
                                   loss, blas_min_p, np.empty(4 * p), sw)
    return t, finite, w


def _reference(X, s, order, moments, lam, eta, loss, w0=None, t0=0, sw=None,
               pass_fn=ref.fixed_pass):
    xbar, Sigma, N = moments
    w = np.zeros(X.shape[1]) if w0 is None else w0.copy()
    schedule, eta = (INV, 0.0) if eta is None else (CONST, eta)
    t = pass_fn(X, s, order, w, xbar, Sigma, N, t0, lam, eta, schedule, loss, sw)
    return t, w


@pytest.mark.parametrize("path", sorted(PATHS))
@pytest.mark.parametrize("lam,eta,loss", CONFIGS)
def test_fixed_pass_equals_reference(edge_stream, lam, eta, loss, path):
    """Every edge stream, against the moments of all its rows; a class without rows (the
    one-row stream) leaves only the regularizer's shrink."""
    name, X, s = edge_stream
    mom = _moments(X, s)
    order = np.random.default_rng(1).permutation(X.shape[0]).astype(np.intp)
    t_c, finite, w_c = _cython(X, s, order, mom, lam, eta, loss, PATHS[path])
    t_r, w_r = _reference(X, s, order, mom, lam, eta, loss)
    assert finite
    assert t_c == t_r == X.shape[0]
    np.testing.assert_allclose(w_c, w_r, rtol=1e-12, atol=1e-14)
    if X.shape[0] > 1 and name != "constant":
        assert np.abs(w_c).max() > 1e-3            # the comparison is not between zeros


@pytest.mark.parametrize("path", sorted(PATHS))
@pytest.mark.parametrize("p", [1, 5, 8, 13, 40])
def test_fixed_pass_continues_weights_and_steps(path, p):
    """From a given w and step count t0, with row weights, in the given order; ``order=None``
    is every row in order. Held-out moments (not those of these rows), as a block meets."""
    rng = np.random.default_rng(p)
    X = rng.normal(size=(120, p))
    s = np.where(X[:, 0] + rng.normal(size=120) > 0.5, 1.0, -1.0)
    other = rng.normal(size=(400, p)) + 0.3
    mom = _moments(other, np.where(other[:, 0] > 0.5, 1.0, -1.0))
    w0, sw = 0.1 * rng.normal(size=p), rng.uniform(0.2, 3.0, size=120)
    for lam, eta, loss in CONFIGS:
        t_c, finite, w_c = _cython(X, s, None, mom, lam, eta, loss, PATHS[path], w0, 37, sw)
        t_r, w_r = _reference(X, s, np.arange(120), mom, lam, eta, loss, w0, 37, sw)
        assert finite and t_c == t_r == 157
        np.testing.assert_allclose(w_c, w_r, rtol=1e-12, atol=1e-14)
        assert np.abs(w_c - w0).max() > 1e-3


@pytest.mark.parametrize("path", sorted(PATHS))
def test_mutants_of_the_reference_are_caught(path):
    """A reference that drops the covariance term, or forgets the row weight, is not what
    the kernel computes; and the learner's pass (whose moments move with the rows) is not
    the fixed pass either."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(200, 6))
    s = np.where(X[:, 0] + rng.normal(size=200) > 0.5, 1.0, -1.0)
    mom = _moments(X, s)
    order = rng.permutation(200).astype(np.intp)
    sw = rng.uniform(0.2, 3.0, size=200)
    _, _, w_c = _cython(X, s, order, mom, 0.01, None, LOSS_M, PATHS[path], sw=sw)
    _, w_r = _reference(X, s, order, mom, 0.01, None, LOSS_M, sw=sw)
    np.testing.assert_allclose(w_c, w_r, rtol=1e-12, atol=1e-14)
    for old, new in (("Sigma[opp], N[opp]", "0.0 * Sigma[opp], N[opp]"),
                     ("round_gradient(w, x, y, v,", "round_gradient(w, x, y, 1.0,")):
        mutant = mutant_of(ref.fixed_pass, old, new)
        _, w_m = _reference(X, s, order, mom, 0.01, None, LOSS_M, sw=sw, pass_fn=mutant)
        assert np.abs(w_m - w_c).max() > 1e-6 * np.abs(w_c).max(), old
    # the learner's pass from empty moments: its moments grow with the rows
    xbar, Sig, N = np.zeros((2, 6)), np.zeros((2, 6, 6)), np.zeros(2, dtype=np.int64)
    w_l = np.zeros(6)
    ref.linear_pass(X, s, order, w_l, xbar, Sig, N, 0, 0.01, 0.0, INV, LOSS_M)
    assert np.abs(w_l - w_c).max() > 1e-3 * np.abs(w_c).max()


@pytest.mark.parametrize("path", sorted(PATHS))
def test_non_finite_result_leaves_w_as_it_was(path):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(50, 4))
    s = np.where(X[:, 0] > 0, 1.0, -1.0)
    mom = _moments(X, s)
    X[30, 2] = np.nan
    w0 = rng.normal(size=4)
    t, finite, w = _cython(X, s, None, mom, 0.01, None, LOSS_S, PATHS[path], w0, 5)
    assert not finite and t == 55
    assert np.array_equal(w, w0)
    # a step too large for the data: the weights overflow, and are restored
    X = rng.normal(size=(400, 4)) * 1e3
    s = np.where(X[:, 0] > 0, 1.0, -1.0)
    t, finite, w = _cython(X, s, None, _moments(X, s), 0.0, 10.0, LOSS_S, PATHS[path], w0)
    assert not finite and np.array_equal(w, w0)


def test_bad_shapes_are_refused():
    X, s = np.zeros((5, 3)), np.ones(5)
    xbar, Sigma, N = np.zeros((2, 3)), np.zeros((2, 3, 3)), np.ones(2, dtype=np.int64)
    with pytest.raises(ValueError, match="inconsistent shapes"):
        _linear.fixed_pass(X, s, None, np.zeros(4), xbar, Sigma, N, 0, 0.1, 0.0, INV, LOSS_M,
                           32, np.empty(16))
    with pytest.raises(ValueError, match="work must hold"):
        _linear.fixed_pass(X, s, None, np.zeros(3), xbar, Sigma, N, 0, 0.1, 0.0, INV, LOSS_M,
                           32, np.empty(11))
    with pytest.raises(ValueError, match="one weight per row"):
        _linear.fixed_pass(X, s, None, np.zeros(3), xbar, Sigma, N, 0, 0.1, 0.0, INV, LOSS_M,
                           32, np.empty(12), np.ones(4))
