"""FTRL-AUC's progressive validation in one typed pass: the kernel's ``pre`` output ==
the reference's (mutant: the score after the update), the estimator's block path ==
``decision_function`` then ``learn_one`` row by row."""

import numpy as np
import pytest
import scipy.sparse as sp

from sosl._core import _ftrl
from sosl._core import _ftrl_ref as ref
from sosl.ftrl import FTRLAUC

PARAMS = [(0.0, 0.0, 1.0, 0.1), (0.05, 0.01, 0.5, 0.5)]


def _stream(n=300, p=20, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) * (rng.random((n, p)) < 0.3)
    s = np.where(X[:, :3].sum(axis=1) + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    s[:25] = 1.0                      # one class first: the intercept is 0 for a while
    return X, s


def _ref_pre(X, s, order, params, pass_fn=ref.ftrl_pass):
    p = X.shape[1]
    st = [np.zeros(p), np.zeros(p), np.zeros(p), np.zeros(2, dtype=np.int64), np.zeros(2)]
    pre = np.full(order.shape[0], np.nan)
    pass_fn(X, s, order, *st, 0, *params, pre=pre)
    return pre, st


def _kernel_pre(X, s, order, params, pre=None):
    Xc = sp.csr_matrix(X)
    wzn = np.zeros((X.shape[1], 3))
    N, score = np.zeros(2, dtype=np.int64), np.zeros(2)
    t, bad = _ftrl.ftrl_pass(Xc.data, Xc.indices, Xc.indptr, s, order, wzn, N, score, 0,
                             *params, None, pre)
    assert bad == -1 and t == order.shape[0]
    return wzn, N, score


def _after_update_pass(X, s, order, w, z, nsq, N, score, t0, l1, l2, beta, gamma, pre):
    """Mutant: the reference reporting each row's score after its own update."""
    t = ref.ftrl_pass(X, s, order, w, z, nsq, N, score, t0, l1, l2, beta, gamma)
    w2, z2, n2 = np.zeros_like(w), np.zeros_like(z), np.zeros_like(nsq)
    N2, sc2 = np.zeros(2, dtype=np.int64), np.zeros(2)
    for q in range(order.shape[0]):
        ref.ftrl_pass(X, s, order[q:q + 1], w2, z2, n2, N2, sc2, q, l1, l2, beta, gamma)
        off = -0.5 * (sc2[0] + sc2[1]) if N2[0] > 0 and N2[1] > 0 else 0.0
        pre[q] = float(w2 @ X[order[q]]) + off
    return t


@pytest.mark.parametrize("params", PARAMS)
def test_kernel_pre_equals_reference(params):
    X, s = _stream()
    order = np.random.default_rng(1).permutation(X.shape[0]).astype(np.intp)
    pre_k = np.full(order.shape[0], np.nan)
    _kernel_pre(X, s, order, params, pre_k)
    pre_r, _ = _ref_pre(X, s, order, params)
    np.testing.assert_allclose(pre_k, pre_r, rtol=1e-12, atol=1e-14)
    assert np.ptp(pre_k) > 1e-2                   # the model moved: not all zeros


def test_mutant_after_update_is_caught():
    X, s = _stream()
    order = np.arange(X.shape[0], dtype=np.intp)
    pre_k = np.full(order.shape[0], np.nan)
    _kernel_pre(X, s, order, PARAMS[1], pre_k)
    pre_m, _ = _ref_pre(X, s, order, PARAMS[1], pass_fn=_after_update_pass)
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(pre_k, pre_m, rtol=1e-12, atol=1e-14)


def test_pre_leaves_the_pass_unchanged():
    """The output changes nothing else: the same state bits with and without it."""
    X, s = _stream()
    order = np.random.default_rng(2).permutation(X.shape[0]).astype(np.intp)
    a = _kernel_pre(X, s, order, PARAMS[0])
    b = _kernel_pre(X, s, order, PARAMS[0], np.empty(order.shape[0]))
    for u, v in zip(a, b):
        assert np.array_equal(u, v)


def test_pre_too_short_is_refused():
    X, s = _stream(n=10)
    with pytest.raises(ValueError, match="pre has 9 values"):
        _kernel_pre(X, s, np.arange(10, dtype=np.intp), PARAMS[0], np.empty(9))


def _row_by_row(model, X, y):
    pre = np.empty(X.shape[0])
    for i in range(X.shape[0]):
        row = X[i:i + 1]
        pre[i] = model.decision_function(row)[0]
        model.learn_one(X[i] if isinstance(X, np.ndarray) else row, y[i])
    return pre


def _state(model):
    return {k: np.array(getattr(model, k)) for k in
            ("w_", "z_", "sq_grad_", "counts_", "mean_scores_", "t_", "n_seen_",
             "calibration_")}


@pytest.mark.parametrize("gamma", ["auto", 0.3])
@pytest.mark.parametrize("blocks", [(1, 300), (1, 7, 40, 252)])
def test_block_prequential_equals_row_by_row(gamma, blocks):
    X, s = _stream()
    y = (s > 0).astype(int)
    Xc = sp.csr_matrix(X)
    a, b = FTRLAUC(gamma=gamma, shuffle=True), FTRLAUC(gamma=gamma, shuffle=True)
    for m in (a, b):
        m.partial_fit(Xc[:1], y[:1], classes=[0, 1])
    pre_a = _row_by_row(a, Xc[1:], y[1:])
    cuts = np.cumsum(blocks)
    pre_b = np.concatenate([b._learn_block_prequential(Xc[lo:hi], y[lo:hi])
                            for lo, hi in zip(cuts[:-1], cuts[1:])])
    assert np.array_equal(pre_a, pre_b)               # CSR rows: the same bits
    sa, sb = _state(a), _state(b)
    for k in sa:
        assert np.array_equal(sa[k], sb[k]), k
    # dense rows: the same round, the scores to rounding
    c = FTRLAUC(gamma=gamma)
    c.partial_fit(X[:1], y[:1], classes=[0, 1])
    pre_c = c._learn_block_prequential(X[1:], y[1:])
    np.testing.assert_allclose(pre_c, pre_a, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(c.w_, a.w_, rtol=1e-12, atol=1e-14)


def test_block_prequential_refusals_leave_the_model_unchanged():
    X, s = _stream(n=40)
    y = (s > 0).astype(int)
    m = FTRLAUC()
    with pytest.raises(Exception, match="not fitted"):
        m._learn_block_prequential(X, y)
    m.partial_fit(X[:10], y[:10], classes=[0, 1])
    before = _state(m)
    bad = y[10:].copy()
    bad[5] = 7
    with pytest.raises(ValueError):
        m._learn_block_prequential(X[10:], bad)
    big = sp.csr_matrix(X[10:])
    big.data[big.data.shape[0] // 2:] *= 1e200        # finite, but the rounds overflow
    with pytest.raises(FloatingPointError):
        m._learn_block_prequential(big, y[10:])          # more entries than p: on a copy
    with pytest.raises(FloatingPointError):
        m._learn_block_prequential(big[-1:], y[-1:])     # in place, with the undo log
    for k, v in _state(m).items():
        assert np.array_equal(v, before[k]), k
