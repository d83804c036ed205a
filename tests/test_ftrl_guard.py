"""FTRL-AUC's self-guarded pass: the undo log, the (p, 3) layout, the paired update."""

import math
import pickle
import platform

import numpy as np
import pytest
import scipy.sparse as sp

from sosl._core import _ftrl
from sosl.ftrl import FTRLAUC


def _stream(n=120, p=30, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, p, density=0.12, random_state=seed, format="csr")
    X.data = rng.normal(size=X.nnz)
    s = np.where(rng.random(n) < 0.4, 1.0, -1.0)
    return X, s


def _scalar_pass(X, s, wzn, N, score, l1, l2, beta, gamma):
    """The kernel's own arithmetic, one entry at a time in Python floats (IEEE doubles,
    the same operations in the same order): the paired SSE2 update must match it bit for
    bit wherever an entry falls in its row."""
    inv_gamma, denom0 = 1.0 / gamma, beta + gamma * l2
    for i in range(X.shape[0]):
        lo, hi = X.indptr[i], X.indptr[i + 1]
        f = 0.0
        for k in range(lo, hi):
            f += wzn[X.indices[k], 0] * X.data[k]
        own = 1 if s[i] > 0 else 0
        N[own] += 1
        score[own] += (f - score[own]) / float(N[own])
        p = float(N[1]) / float(N[0] + N[1])
        c = 2.0 * (1.0 - p) * (f - score[0] - 1.0) if s[i] > 0 else \
            2.0 * p * (f - score[1] + 1.0)
        for k in range(lo, hi):
            j = X.indices[k]
            wo, zo, so = wzn[j]
            g = c * X.data[k]
            nn = so + g * g
            sn = math.sqrt(nn)
            zn = (zo + g) - ((sn - math.sqrt(so)) * inv_gamma) * wo
            wn = ((math.copysign(l1, zn) - zn) * gamma) / (sn + denom0)
            wzn[j] = (0.0 if abs(zn) <= l1 else wn, zn, nn)


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"),
                    reason="the paired SSE2 update exists on x86-64 only; elsewhere every "
                           "entry takes the scalar loop, whose products a compiler may fuse")
@pytest.mark.parametrize("params", [(0.0, 0.0, 1.0, 0.1), (0.05, 0.2, 0.5, 0.7)])
def test_paired_update_equals_the_scalar_arithmetic_bit_for_bit(params):
    X, s = _stream()
    k = np.diff(X.indptr)                          # rows of no, an odd and an even count
    assert (k == 0).any() and ((k > 1) & (k % 2 == 1)).any() and ((k > 0) & (k % 2 == 0)).any()
    order = np.arange(X.shape[0], dtype=np.intp)
    a, b = np.zeros((30, 3)), np.zeros((30, 3))
    Na, Nb = np.zeros(2, dtype=np.int64), np.zeros(2, dtype=np.int64)
    sa, sb = np.zeros(2), np.zeros(2)
    t, bad = _ftrl.ftrl_pass(X.data, X.indices, X.indptr, s, order, a, Na, sa, 0, *params)
    _scalar_pass(X, s, b, Nb, sb, *params)
    assert (t, bad) == (X.shape[0], -1)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(sa, sb)
    assert np.abs(a[:, 0]).max() > 1e-3
    b[np.flatnonzero(b[:, 0])[0], 0] *= 1 + 2 ** -52            # one ulp off: caught
    assert not np.array_equal(a, b)


def test_undo_log_restores_the_state_bit_for_bit_and_names_the_row():
    X, s = _stream()
    X = X.tolil()
    X[90, 3] = 1e300                                   # row 90 overflows the round
    X = X.tocsr()
    order = np.random.default_rng(3).permutation(X.shape[0]).astype(np.intp)
    rng = np.random.default_rng(4)
    wzn = np.column_stack([rng.normal(size=30), rng.normal(size=30), rng.random(30)])
    N, score = np.array([5, 7], dtype=np.int64), np.array([0.2, -0.1])
    before = (wzn.copy(), N.copy(), score.copy())
    undo = np.empty((X.nnz, 3))
    t, bad = _ftrl.ftrl_pass(X.data, X.indices, X.indptr, s, order, wzn, N, score, 12,
                             0.0, 0.0, 1.0, 0.1, undo)
    assert order[bad] == 90 and t == 12
    for got, want in zip((wzn, N, score), before):
        np.testing.assert_array_equal(got, want)
    # without the log the stop is reported just the same, the state left as written
    t, bad = _ftrl.ftrl_pass(X.data, X.indices, X.indptr, s, order, wzn, N, score, 12,
                             0.0, 0.0, 1.0, 0.1)
    assert order[bad] == 90
    assert not np.array_equal(wzn, before[0])
    np.testing.assert_array_equal(N, before[1])        # the counts are always put back
    with pytest.raises(ValueError, match="undo has"):
        _ftrl.ftrl_pass(X.data, X.indices, X.indptr, s, order, wzn, N, score, 12,
                        0.0, 0.0, 1.0, 0.1, np.empty((X.nnz - 1, 3)))


def _attrs(m):
    return {k: (v.tobytes() if isinstance(v, np.ndarray) else v) for k, v in vars(m).items()
            if k.endswith("_") and not k.startswith("_")}


def _separate(m):
    """The p-vectors as three separate arrays (as a user assignment would leave them)."""
    for name in ("w_", "z_", "sq_grad_"):
        setattr(m, name, getattr(m, name).copy())
    assert m._wzn(m.__dict__) is None
    return m


@pytest.mark.parametrize("case", ["log", "copy (nnz > p)", "separate arrays"])
def test_failed_partial_fit_leaves_the_model_unchanged(case):
    X, s = _stream(n=300, p=40, seed=5)
    y = (s > 0).astype(int)
    m = FTRLAUC(gamma=0.3).fit(X, y)
    if case == "separate arrays":                      # the pass runs on a new (p, 3) copy
        m = _separate(m)
    bad = (X[:5] if case != "copy (nnz > p)" else X).tolil()
    bad[-1, 0] = 1e300
    bad = bad.tocsr()
    assert (bad.nnz > 40) == (case == "copy (nnz > p)")
    before = _attrs(m)
    with pytest.raises(FloatingPointError, match="non-finite"):
        m.partial_fit(bad, y[:bad.shape[0]])
    assert _attrs(m) == before


def test_state_is_one_interleaved_array_and_every_path_agrees():
    """w_, z_ and sq_grad_ are the columns of one (p, 3) array after fit, after
    unpickling and again after a call on separate arrays; CSR and dense batches, the log
    and the copy paths, give the same model."""
    X, s = _stream(n=200, p=25, seed=6)
    y = (s > 0).astype(int)
    ref = FTRLAUC(gamma=0.4, l1=0.01).fit(X, y)
    assert _ftrl.columns_of(ref.w_.base, ref.w_, ref.z_, ref.sq_grad_)
    assert not _ftrl.columns_of(ref.w_.base, ref.z_, ref.w_, ref.sq_grad_)
    m = FTRLAUC(gamma=0.4, l1=0.01).partial_fit(X[:10], y[:10], classes=[0, 1])
    m = pickle.loads(pickle.dumps(m))
    assert m._wzn(m.__dict__) is not None              # put back together at load time
    m = _separate(m)
    m.partial_fit(X[10:15].toarray(), y[10:15])        # dense rows, rebuilt layout
    assert m._wzn(m.__dict__) is not None
    m.partial_fit(X[15:20], y[15:20])                  # log path (nnz <= p)
    m.partial_fit(X[20:], y[20:])                      # copy path (nnz > p)
    assert X[20:].nnz > 25 >= X[15:20].nnz
    np.testing.assert_array_equal(m.coef_, ref.coef_)
    np.testing.assert_array_equal(m.sq_grad_, ref.sq_grad_)
    np.testing.assert_allclose(m.decision_function(X),            # typed CSR scoring
                               np.asarray(X @ np.ascontiguousarray(ref.w_)).ravel()
                               + ref.intercept_, rtol=1e-13, atol=1e-15)
