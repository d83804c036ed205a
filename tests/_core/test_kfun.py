"""The vectorised kernel arithmetic (``_vexp.h`` through ``sosl._core._kfun``).

exp(c v) and the kernel expansions of the typed module against their NumPy twins and libm,
on both code paths (AVX2 + FMA where the processor has them, scalar otherwise).
"""

import numpy as np
import pytest
import scipy.sparse as sp

from sosl._core import _kfun, _kfun_ref
from sosl.kernels import kernel_expansion, kernel_matrix

#: largest relative difference from libm's exp allowed: 2^-51 (measured on 10^7 arguments in
#: [-708, 0]: 2.2197e-16, just under 2^-52, on both paths)
EXP_RTOL = 2.0 ** -51


@pytest.fixture(params=[False, True], ids=["vector", "scalar"])
def path(request):
    _kfun.set_scalar_path(request.param)
    yield request.param
    _kfun.set_scalar_path(False)


def _args(rng, n=200_000):
    return np.concatenate([-rng.uniform(0, 1, n), -rng.uniform(0, 700, n),
                           -rng.exponential(1e-3, n), [0.0, -0.0, -707.9]])


def _rel(a, b):
    return np.max(np.abs(a - b) / b)


def test_exp_within_two_ulp_of_libm(path):
    v = _args(np.random.default_rng(0))
    out = v.copy()
    _kfun.exp_scaled(out, 1.0)
    assert _rel(out, np.exp(v)) <= EXP_RTOL
    assert _rel(_kfun_ref.exp_scaled(v, 1.0), np.exp(v)) <= EXP_RTOL


def test_exp_matches_its_numpy_twin(path):
    v = _args(np.random.default_rng(1)) / 3.0
    out = v.copy()
    _kfun.exp_scaled(out, 3.0)                         # the scale c enters as in the passes
    assert _rel(out, _kfun_ref.exp_scaled(v, 3.0)) <= EXP_RTOL


def test_exp_mutants_fail_the_bound():
    v = _args(np.random.default_rng(2))
    # a Taylor polynomial three degrees short, and float32 precision
    assert _rel(_kfun_ref.exp_scaled(v, 1.0, degree=10), np.exp(v)) > EXP_RTOL
    assert _rel(np.exp(v.astype(np.float32)).astype(np.float64), np.exp(v)) > EXP_RTOL


def test_exp_edges(path):
    v = np.array([0.0, -708.0, -708.5, -1e300, -np.inf, np.nan, -1e-300, -1.5, -2.0, -3.0,
                  -4.0, -5.0])
    out = v.copy()
    _kfun.exp_scaled(out, 1.0)
    assert out[0] == 1.0 and out[6] == 1.0
    assert out[1] == pytest.approx(np.exp(-708.0), rel=EXP_RTOL)
    assert np.all(out[2:5] == 0.0)
    assert np.isnan(out[5])
    assert _rel(out[7:], np.exp(v[7:])) <= EXP_RTOL    # the tail after the last 4-block
    _kfun.exp_scaled(np.empty(0), 1.0)                 # empty input is a no-op


@pytest.mark.parametrize("kernel", ["gaussian", "linear", "poly"])
@pytest.mark.parametrize("p", [1, 3, 4, 7, 20])
def test_expansion_matches_kernel_matrix(path, kernel, p):
    rng = np.random.default_rng(p)
    X, SV = rng.normal(size=(37, p)), rng.normal(size=(13, p))
    SV[0] = X[0]                                       # a zero distance
    a = rng.normal(size=13)
    got = kernel_expansion(X, SV, a, kernel, gamma=0.3, degree=2, coef0=0.5)
    want = kernel_matrix(X, SV, kernel, gamma=0.3, degree=2, coef0=0.5) @ a
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)


def test_expansion_mutant_fails():
    rng = np.random.default_rng(5)
    X, SV, a = rng.normal(size=(9, 4)), rng.normal(size=(6, 4)), rng.normal(size=6)
    want = kernel_matrix(X, SV, gamma=0.3) @ a
    wrong = kernel_expansion(X, SV[::-1], a, gamma=0.3)        # weights paired with other SVs
    assert not np.allclose(wrong, want, rtol=1e-12, atol=1e-13)


def test_expansion_rejects_bad_shapes():
    rng = np.random.default_rng(6)
    with pytest.raises(ValueError, match="do not fit together"):
        kernel_expansion(rng.normal(size=(3, 4)), rng.normal(size=(5, 3)), np.ones(5))
    with pytest.raises(ValueError, match="do not fit together"):
        kernel_expansion(rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), np.ones(4))
    out = kernel_expansion(np.zeros((2, 3)), np.zeros((0, 3)), np.zeros(0))
    assert np.array_equal(out, np.zeros(2))


def _sparse_pair(rng, n, m, p, density=0.3):
    X = rng.normal(size=(n, p)) * (rng.random((n, p)) < density)
    SV = rng.normal(size=(m, p)) * (rng.random((m, p)) < density)
    SV[0] = X[0]                                       # a zero distance
    SV[1] = 0.0                                        # an empty row
    SV[2, : p // 2] = X[1, : p // 2]                   # partly shared supports
    X[3] = 0.0
    return X, SV


@pytest.mark.parametrize("kernel", ["gaussian", "linear", "poly"])
@pytest.mark.parametrize("p", [1, 5, 40])
def test_sparse_expansion_matches_kernel_matrix(path, kernel, p):
    """CSR rows against CSR support vectors (and either one dense) give the dense values."""
    rng = np.random.default_rng(10 + p)
    X, SV = _sparse_pair(rng, 31, 11, p)
    a = rng.normal(size=11)
    want = kernel_matrix(X, SV, kernel, gamma=0.3, degree=2, coef0=0.5) @ a
    for Xa, Sa in ((sp.csr_matrix(X), sp.csr_matrix(SV)), (X, sp.csr_matrix(SV)),
                   (sp.csr_matrix(X), SV), (sp.coo_matrix(X), sp.csc_matrix(SV))):
        got = kernel_expansion(Xa, Sa, a, kernel, gamma=0.3, degree=2, coef0=0.5)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("kernel", ["gaussian", "linear", "poly"])
def test_sparse_rows_match_their_numpy_twin(kernel):
    """The merges of ``_kfun.pxd`` against ``_kfun_ref.sparse_kernel_row`` row by row."""
    rng = np.random.default_rng(21)
    X, SV = _sparse_pair(rng, 17, 9, 60)
    Xs, Ss = sp.csr_matrix(X), sp.csr_matrix(SV)
    code = _kfun_ref.KERNEL_CODES[kernel]
    rows = [(Ss.indices[Ss.indptr[q]:Ss.indptr[q + 1]], Ss.data[Ss.indptr[q]:Ss.indptr[q + 1]])
            for q in range(9)]
    for i in range(17):
        x = (Xs.indices[Xs.indptr[i]:Xs.indptr[i + 1]], Xs.data[Xs.indptr[i]:Xs.indptr[i + 1]])
        e = np.zeros(9)
        for q in range(9):
            e[:] = 0.0
            e[q] = 1.0
            got = kernel_expansion(Xs[i], Ss, e, kernel, gamma=0.3, degree=2, coef0=0.5)[0]
            want = _kfun_ref.sparse_kernel_row(rows[q:q + 1], x, code, 0.3, 2.0, 0.5)[0]
            assert got == pytest.approx(want, rel=1e-12, abs=1e-13)


def test_sparse_distance_mutant_fails():
    """A merge that drops the indices present only in x gives other distances: caught."""
    rng = np.random.default_rng(22)
    X, SV = _sparse_pair(rng, 12, 7, 30)
    Xs, Ss = sp.csr_matrix(X), sp.csr_matrix(SV)
    a = rng.normal(size=7)
    got = kernel_expansion(Xs, Ss, a, gamma=0.3)

    def mutant(ai, av, bi, bv):                      # sum over the support of b only
        keep = np.isin(ai, bi)
        return _kfun_ref.sparse_sq_dist(np.asarray(ai)[keep], np.asarray(av)[keep], bi, bv)

    def expansion(dist):
        out = np.zeros(12)
        for i in range(12):
            xi = Xs.indices[Xs.indptr[i]:Xs.indptr[i + 1]]
            xv = Xs.data[Xs.indptr[i]:Xs.indptr[i + 1]]
            for q in range(7):
                sl = slice(Ss.indptr[q], Ss.indptr[q + 1])
                out[i] += a[q] * np.exp(-0.3 * dist(xi, xv, Ss.indices[sl], Ss.data[sl]))
        return out

    np.testing.assert_allclose(got, expansion(_kfun_ref.sparse_sq_dist), rtol=1e-12)
    assert not np.allclose(got, expansion(mutant), rtol=1e-12, atol=1e-13)


def test_sparse_expansion_rejects_bad_shapes():
    rng = np.random.default_rng(23)
    X, SV = _sparse_pair(rng, 4, 5, 6)
    with pytest.raises(ValueError, match="do not fit together"):
        kernel_expansion(sp.csr_matrix(X), sp.csr_matrix(SV[:, :5]), np.ones(5))
    with pytest.raises(ValueError, match="do not fit together"):
        kernel_expansion(sp.csr_matrix(X), SV, np.ones(4))
    out = kernel_expansion(sp.csr_matrix(X), sp.csr_matrix((0, 6)), np.zeros(0))
    assert np.array_equal(out, np.zeros(4))
