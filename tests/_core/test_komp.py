"""Tests of destructive KOMP with pre-fitting (:mod:`sosl.komp`, :mod:`sosl._core._komp_ref`)."""

import numpy as np
import pytest

import sosl.komp as komp
from sosl._core import _komp_np
from sosl.kernels import kernel_matrix
from sosl.komp import komp_error, komp_prune, komp_prune_bruteforce, single_thread_blas


@pytest.fixture(autouse=True)
def _one_blas_thread():
    """The brute-force reference makes many tiny lstsq calls: keep BLAS single-threaded."""
    with single_thread_blas():
        yield


def _lstsq_error(K, alpha, kept):
    """Independent: error of the least-squares projection of f onto span(kept)."""
    b = K @ alpha
    if len(kept) == 0:
        return float(np.sqrt(max(alpha @ b, 0.0))), np.zeros(0)
    w = np.linalg.lstsq(K[np.ix_(kept, kept)], b[kept], rcond=None)[0]
    return komp_error(K, alpha, kept, w), w


def _random_problem(rng, M, p=2):
    X = rng.uniform(-1, 1, size=(M, p))
    return kernel_matrix(X, X, gamma=float(rng.uniform(0.3, 3.0))), rng.normal(size=M)


BACKENDS = ["cython", "numpy"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_error_within_epsilon_and_weights_are_least_squares(backend):
    rng = np.random.default_rng(0)
    n_pruned = 0
    for _ in range(40):
        K, alpha = _random_problem(rng, int(rng.integers(2, 30)))
        eps = float(rng.uniform(0.0, 1.0))
        kept, w, err = komp_prune(K, alpha, eps, return_error=True, backend=backend)
        ref_err, ref_w = _lstsq_error(K, alpha, kept)
        assert ref_err <= eps + 1e-9
        assert err == pytest.approx(ref_err, abs=1e-7)
        np.testing.assert_allclose(w, ref_w, rtol=1e-6, atol=1e-8)
        assert np.all(np.diff(kept) > 0)
        n_pruned += len(alpha) - len(kept)
    assert n_pruned > 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_greedy_matches_bruteforce(backend):
    rng = np.random.default_rng(1)
    n_removed = 0
    for _ in range(60):
        K, alpha = _random_problem(rng, int(rng.integers(1, 8)))
        eps = float(rng.uniform(0.0, 1.5))
        kept, w = komp_prune(K, alpha, eps, backend=backend)
        kept_bf, w_bf = komp_prune_bruteforce(K, alpha, eps)
        np.testing.assert_array_equal(kept, kept_bf)
        np.testing.assert_allclose(w, w_bf, rtol=1e-8, atol=1e-10)
        n_removed += len(alpha) - len(kept)
    assert n_removed > 20


def test_mutant_cost_is_caught(monkeypatch):
    """Dropping the 1/G_jj factor of the removal cost must break the brute-force match."""
    monkeypatch.setattr(_komp_np, "removal_costs", lambda e2, w, G: e2 + w * w)
    rng = np.random.default_rng(1)
    mismatches = 0
    for _ in range(60):
        K, alpha = _random_problem(rng, int(rng.integers(1, 8)))
        eps = float(rng.uniform(0.0, 1.5))
        kept, _ = komp.komp_prune(K, alpha, eps, backend="numpy")
        kept_bf, _ = komp_prune_bruteforce(K, alpha, eps)
        mismatches += not np.array_equal(kept, kept_bf)
    assert mismatches > 0


def _compare_backends(rng, n_problems, sizes=(1, 60)):
    """Cython core vs NumPy reference: same kept set, same function, same error.

    On Gram matrices with exact duplicates the two may keep different copies of a
    duplicated point (a tie broken by rounding), so there only the function is compared.
    """
    n_set_checked = 0
    for trial in range(n_problems):
        M = int(rng.integers(*sizes))
        X = rng.uniform(-1, 1, size=(M, int(rng.integers(1, 4))))
        dup = trial % 3 == 0
        if dup:
            X = np.vstack([X, X[: M // 2]])
        K = kernel_matrix(X, X, gamma=float(rng.uniform(0.3, 5.0)))
        alpha = rng.normal(size=X.shape[0])
        eps = float(rng.uniform(0.0, 1.0))
        k_c, w_c, e_c = komp_prune(K, alpha, eps, return_error=True, backend="cython")
        k_n, w_n, e_n = komp.komp_prune(K, alpha, eps, return_error=True, backend="numpy")
        scale = np.max(np.abs(K @ alpha)) + 1e-300
        assert np.max(np.abs(K[:, k_c] @ w_c - K[:, k_n] @ w_n)) <= 1e-11 * scale
        assert abs(e_c - e_n) <= 1e-7 * (1.0 + e_n)
        if not dup:
            np.testing.assert_array_equal(k_c, k_n)
            n_set_checked += 1
            if len(k_c) and np.linalg.cond(K[np.ix_(k_c, k_c)]) < 1e6:
                np.testing.assert_allclose(w_c, w_n, rtol=1e-9, atol=1e-12)
    return n_set_checked


def test_cython_core_matches_numpy_reference():
    assert _compare_backends(np.random.default_rng(5), 150) > 50


def test_cython_core_catches_reference_mutant(monkeypatch):
    """The same comparison must fail against a mutated reference (cost term dropped)."""
    monkeypatch.setattr(_komp_np, "removal_costs", lambda e2, w, G: e2 + w * w)
    with pytest.raises(AssertionError):
        _compare_backends(np.random.default_rng(5), 150)


@pytest.mark.parametrize("backend", BACKENDS)
def test_duplicates_are_merged(backend):
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, size=(6, 3))
    X = np.vstack([X, X[:3]])                      # three exact duplicates
    K = kernel_matrix(X, X, gamma=1.0)
    alpha = rng.normal(size=9)
    kept, w, err = komp_prune(K, alpha, 1e-6, return_error=True, backend=backend)
    assert err <= 1e-6
    assert len(kept) <= 6
    assert len(np.unique(np.round(X[kept], 12), axis=0)) == len(kept)
    # f is unchanged at every point, up to the tolerance
    np.testing.assert_allclose(K[:, kept] @ w, K @ alpha, atol=1e-5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_epsilon_zero_keeps_independent_dictionary(backend):
    rng = np.random.default_rng(3)
    K, alpha = _random_problem(rng, 10)
    kept, w = komp_prune(K, alpha, 0.0, backend=backend)
    np.testing.assert_array_equal(kept, np.arange(10))
    np.testing.assert_array_equal(w, alpha)


@pytest.mark.parametrize("backend", BACKENDS)
def test_zero_function_and_large_epsilon_empty_dictionary(backend):
    rng = np.random.default_rng(4)
    K, alpha = _random_problem(rng, 5)
    kept, w = komp_prune(K, np.zeros(5), 0.0, backend=backend)
    assert kept.shape == (0,) and w.shape == (0,)
    norm = np.sqrt(alpha @ K @ alpha)
    kept, w, err = komp_prune(K, alpha, 1.01 * norm, return_error=True, backend=backend)
    assert kept.shape == (0,)
    assert err == pytest.approx(norm)
    kept, w = komp_prune(np.zeros((0, 0)), np.zeros(0), 0.1, backend=backend)
    assert kept.shape == (0,)


@pytest.mark.parametrize("args, match", [
    ((np.eye(2), np.ones(3), 0.1), "alpha must have shape"),
    ((np.ones((2, 3)), np.ones(2), 0.1), "square"),
    ((np.eye(2), np.ones(2), -1.0), "epsilon"),
    ((np.eye(2), np.array([1.0, np.nan]), 0.1), "finite"),
    ((np.eye(2), np.ones(2), 0.1, 1e-10, False, "lapack"), "backend"),
])
def test_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        if len(args) > 3:
            komp_prune(*args[:3], rtol=args[3], return_error=args[4], backend=args[5])
        else:
            komp_prune(*args)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("K, alpha, match", [
    ([[1e300, 0.0], [0.0, 0.0]], [1.8e8, 1.8e8], "overflows"),         # ||f||^2 = inf
    ([[1e-323, -2.0], [-2.0, -2.0]], [1.0, 1.0], "positive semi-definite"),
    ([[1.0, 2.0], [2.0, 1.0]], [1.0, 1.0], "positive semi-definite"),  # Cauchy-Schwarz fails
])
def test_overflow_and_non_gram_matrices_raise(backend, K, alpha, match):
    """No inf/nan weights or errors: both backends refuse with the same clear message."""
    with pytest.raises(ValueError, match=match):
        komp_prune(np.array(K), np.array(alpha), 0.0, return_error=True, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("scale", [1e16, 1e17, 1e20, 1e50])
def test_error_budget_holds_at_every_scale(backend, scale):
    """An element of norm 1 beside one of norm sqrt(scale): removing it costs 1 > epsilon."""
    kept, w, err = komp_prune(np.diag([scale, 1.0]), np.ones(2), 0.5, return_error=True,
                              backend=backend)
    assert err <= 0.5
    assert komp_error(np.diag([scale, 1.0]), np.ones(2), kept, w) <= 0.5
    kept, w, err = komp_prune(np.diag([scale, 1.0]), np.ones(2), 1.5, return_error=True,
                              backend=backend)
    assert kept.tolist() == [0] and err == pytest.approx(1.0)      # within 1.5 it may go


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(epsilon=None), TypeError, "epsilon"), (dict(epsilon="0.1"), TypeError, "epsilon"),
    (dict(epsilon=np.inf), ValueError, "epsilon"), (dict(rtol=np.nan), ValueError, "rtol"),
    (dict(rtol=-1.0), ValueError, "rtol"), (dict(rtol=2.0), ValueError, "rtol"),
    (dict(rtol=1.0), ValueError, "rtol"), (dict(rtol=None), TypeError, "rtol"),
])
def test_epsilon_and_rtol_are_validated(kwargs, exc, match):
    args = dict(epsilon=0.1, rtol=1e-10, **{})
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        komp_prune(np.eye(2), np.ones(2), args["epsilon"], rtol=args["rtol"])


def test_missing_extension_is_an_import_error(monkeypatch):
    """No silent fallback to the NumPy reference when the typed core did not build."""
    import importlib
    import sys

    import sosl._core
    monkeypatch.setitem(sys.modules, "sosl._core._komp", None)
    monkeypatch.delattr(sosl._core, "_komp")
    monkeypatch.delitem(sys.modules, "sosl._core._komp_prune")
    with pytest.raises(ImportError):
        importlib.import_module("sosl._core._komp_prune")

