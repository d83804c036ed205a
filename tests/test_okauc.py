"""OKAUC-M / OKAUC-S as estimators: budgets, the linear-kernel special case, sparse-fitted
models, the KOMP policy, one-row calls in place, refused parameters (the kernels against
their references are in tests/_core/test_okauc.py; the shared contract in test_contract.py)."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from helpers import sparse_stream

from sosl import OKAUCM, OKAUCS
from sosl._core import _okauc
from sosl._core._kparams import step_spec
from sosl.kernels import kernel_matrix
from sosl.metrics import auc


def _circle(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 2))
    return X, (np.hypot(X[:, 0], X[:, 1]) < 0.6).astype(int)


@pytest.mark.parametrize("Est,kw", [(OKAUCM, dict(lam=1e-2, gamma=4.0, budget=None))])
def test_fit_equals_partial_fit_in_chunks_and_pickle(Est, kw):
    """The unbounded buffer, compared on its filled part (its capacity grows by doubling, so
    it depends on the call pattern; the budgeted cases: tests/test_contract.py)."""
    X, y = _circle(300, 0)
    full = Est(**kw).fit(X, y)
    part = Est(**kw)
    bounds = [0, 1, 2, 50, 51, 170, 300]
    for a, b in zip(bounds[:-1], bounds[1:]):
        part.partial_fit(X[a:b], y[a:b], classes=[0, 1])
        if a == 51:
            part = pickle.loads(pickle.dumps(part))       # pickle mid-stream, then continue
    for name in ("support_vectors_", "dual_coef_", "n_support_"):
        np.testing.assert_allclose(getattr(part, name), getattr(full, name), rtol=1e-12, atol=1e-14)
    assert part.t_ == full.t_ == 300
    np.testing.assert_allclose(part.decision_function(X), full.decision_function(X), rtol=1e-10)
    assert auc(y, full.decision_function(X)) > 0.9


def test_budgets_and_infinite_buffer():
    X, y = _circle(200, 1)
    m = OKAUCM(gamma=4.0, budget=(10, 20)).fit(X, y)
    assert m.n_support_.tolist() == [20, 10]               # (N-, N+) internal order; N+ = 10
    inf = OKAUCM(gamma=4.0, budget=None).fit(X, y)
    assert inf.n_support_.tolist() == [int(np.sum(y == 0)), int(np.sum(y == 1))]
    np.testing.assert_array_equal(np.sort(inf.support_vectors_, axis=0), np.sort(X, axis=0))
    # decision_function is the expansion over the support vectors plus the intercept
    K = kernel_matrix(X[:5], inf.support_vectors_, "gaussian", 4.0)
    np.testing.assert_allclose(inf.decision_function(X[:5]), K @ inf.dual_coef_ + inf.intercept_)
    assert inf.hilbert_norm() <= (np.sqrt(2) + 0.5) / inf.lam


@pytest.mark.parametrize("eta", [None, 0.05])
def test_linear_kernel_without_budget_is_the_linear_learner(eta):
    # with k(x, x') = x.x' and every instance kept, f = (sum_i alpha_i x_i).x and the
    # buffer statistics are the class means and covariances of the linear learner
    from sosl import OAUCM, OAUCS
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, size=(250, 5))
    y = (X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.normal(size=250) > 0.3).astype(int)
    lin = OAUCM(lam=0.01, eta=eta).fit(X, y)
    ker = OKAUCM(lam=0.01, eta=eta, kernel="linear", budget=None).fit(X, y)
    np.testing.assert_allclose(ker.dual_coef_ @ ker.support_vectors_, lin.coef_[0],
                               rtol=1e-10, atol=1e-12)
    # OKAUC-S halves the loss: (lam/2, 2 eta) there is (lam, eta) in OAUC-S
    e = 0.01 if eta is None else eta
    lin_s = OAUCS(lam=0.02, eta=e).fit(X, y)
    ker_s = OKAUCS(lam=0.01, eta=2 * e, kernel="linear", budget=None).fit(X, y)
    np.testing.assert_allclose(ker_s.dual_coef_ @ ker_s.support_vectors_, lin_s.coef_[0],
                               rtol=1e-10, atol=1e-12)
    same = OKAUCS(lam=0.02, eta=e, kernel="linear", budget=None).fit(X, y)
    assert np.max(np.abs(same.dual_coef_ @ same.support_vectors_ - lin_s.coef_[0])) > 1e-4


def test_learns_a_nonlinear_concept():
    X, y = _circle(1200, 4)
    for model in (OKAUCM(lam=1e-3, gamma=4.0), OKAUCS(gamma=4.0, eta=0.05)):
        model.fit(X[:900], y[:900])
        assert auc(y[900:], model.decision_function(X[900:])) > 0.97
        assert np.mean(model.predict(X[900:]) == y[900:]) > 0.85


@pytest.mark.parametrize("params,exc,match", [
    (dict(lam=-1.0), ValueError, "lam"), (dict(gamma=0.0), ValueError, "gamma"),
    (dict(kernel="cosine"), ValueError, "kernel"), (dict(budget=0), ValueError, "budget"),
    (dict(budget=(3, 4, 5)), ValueError, "budget"), (dict(budget=2.5), TypeError, "budget"),
    (dict(transfer="nearest"), ValueError, "transfer"), (dict(degree=1.5), TypeError, "degree"),
    (dict(budget_policy="lru"), ValueError, "budget_policy"), (dict(eta=-0.1), ValueError, "eta"),
    (dict(budget_policy="komp", epsilon=-1.0), ValueError, "epsilon"),
    (dict(budget_policy="komp", budget=None), ValueError, "budget"),
])
def test_bad_parameters_raise_and_leave_state_unchanged(params, exc, match):
    X, y = _circle(50, 2)
    model = OKAUCM(gamma=4.0, budget=10).fit(X, y)
    before = model.dual_coef_.copy()
    model.set_params(**params)
    with pytest.raises(exc, match=match):
        model.fit(X, y)
    np.testing.assert_array_equal(model.dual_coef_, before)
    with pytest.raises(exc, match=match):
        OKAUCM(**params).fit(X, y)


def test_komp_policy_without_overflow_equals_fifo_and_compresses():
    X, y = _circle(250, 6)
    fifo = OKAUCM(lam=1e-2, gamma=4.0, budget=300).fit(X, y)
    exact = OKAUCM(lam=1e-2, gamma=4.0, budget=300, budget_policy="komp", epsilon=0.0).fit(X, y)
    np.testing.assert_allclose(exact.decision_function(X), fifo.decision_function(X),
                               rtol=1e-8, atol=1e-8)
    small = OKAUCM(lam=1e-2, gamma=4.0, budget=300, budget_policy="komp", epsilon=0.05).fit(X, y)
    assert small.model_order_ < exact.model_order_
    # loose sanity bound (the trajectories differ, so this is no theorem): the injected
    # errors sum to <= epsilon / lam in H-norm and |f(x)| <= ||f||_H for the Gaussian kernel
    gap = (small.decision_function(X) - small.intercept_
           - (exact.decision_function(X) - exact.intercept_))
    assert np.abs(gap).max() <= 0.05 / 1e-2
    assert np.abs(gap).max() > 0


def test_komp_policy_partial_fit_pickle_and_budget():
    X, y = _circle(230, 8)
    kw = dict(lam=1e-3, gamma=4.0, budget=(15, 20), budget_policy="komp", epsilon=0.02)
    full = OKAUCM(**kw).fit(X, y)
    part = OKAUCM(**kw)
    for a, b in ((0, 7), (7, 95), (95, 230)):
        part.partial_fit(X[a:b], y[a:b], classes=[0, 1])
        part = pickle.loads(pickle.dumps(part))
    np.testing.assert_allclose(part.decision_function(X), full.decision_function(X), rtol=1e-10)
    assert full.counts_.tolist() == [20, 15]
    assert full.model_order_ == full.support_vectors_.shape[0] > 0
    assert auc(y, full.decision_function(X)) > 0.95


def test_changed_layout_after_fit_is_refused():
    """Budgets, budget policy, kernel and schedule are frozen with the fitted state."""
    X, y = _circle(120, 9)
    m = OKAUCM(gamma=4.0, budget=30).fit(X, y)
    scores = m.decision_function(X)
    m.set_params(budget_policy="komp")
    with pytest.raises(ValueError, match="budget_policy changed"):
        m.partial_fit(X, y)
    m.set_params(budget_policy="fifo", budget=20)
    with pytest.raises(ValueError, match="budgets changed"):
        m.decision_function(X)
    with pytest.raises(ValueError, match="budgets changed"):
        m.partial_fit(X, y)
    m.set_params(budget=30, gamma=1.0)
    with pytest.raises(ValueError, match="gamma changed"):
        m.predict(X)
    m.set_params(gamma=4.0, eta=0.1)
    with pytest.raises(ValueError, match="schedule changed"):
        m.partial_fit(X, y)
    m.set_params(eta=None)
    np.testing.assert_array_equal(m.decision_function(X), scores)
    assert m.t_ == 120
    m.set_params(budget_policy="komp")                   # fit starts over with the new layout
    assert m.fit(X, y).model_order_ > 0


def test_parameters_checked_on_every_call():
    X, y = _circle(60, 10)
    m = OKAUCS(gamma=4.0, budget=10).fit(X, y)
    m.set_params(lam=-1.0)
    with pytest.raises(ValueError, match="lam"):
        m.partial_fit(X, y)
    with pytest.raises(ValueError, match="lam"):
        m.decision_function(X)


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
@pytest.mark.parametrize("Est", [OKAUCM, OKAUCS])
@pytest.mark.parametrize("kernel", ["linear", "poly"])
def test_overflowing_kernel_raises_and_never_maps_nan(Est, kernel):
    """Finite inputs near 1e155 overflow x.x': a clear error naming the kernel, state kept;
    scores that would be non-finite raise instead of becoming a class."""
    X, y = _circle(60, 11)
    with pytest.raises(FloatingPointError, match=f"{kernel} kernel overflowed"):
        Est(kernel=kernel, budget=10).fit(X * 1e155, y)
    m = Est(kernel=kernel, budget=10).fit(X, y)
    alpha = m.dual_coef_.copy()
    with pytest.raises(FloatingPointError, match="kernel overflowed"):
        m.partial_fit(X * 1e155, y)
    np.testing.assert_array_equal(m.dual_coef_, alpha)
    with pytest.raises(FloatingPointError, match="not finite"):
        m.predict(np.full((2, 2), 1.7e308) * np.sign(m.dual_coef_ @ m.support_vectors_))


def _assert_models_equal(a, b, X, rtol=1e-12):
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), rtol=rtol,
                               atol=rtol)
    np.testing.assert_allclose(a.dual_coef_, b.dual_coef_, rtol=rtol, atol=rtol)
    sa, sb = a.support_vectors_, b.support_vectors_
    sa = sa.toarray() if sp.issparse(sa) else sa
    sb = sb.toarray() if sp.issparse(sb) else sb
    np.testing.assert_array_equal(sa, sb)
    np.testing.assert_array_equal(a.n_support_, b.n_support_)
    assert a.intercept_ == pytest.approx(b.intercept_, rel=rtol, abs=rtol)
    assert a.t_ == b.t_


SPARSE_KW = [(OKAUCM, dict(lam=1e-2, gamma=0.8, budget=12)),
             (OKAUCM, dict(lam=1e-2, kernel="linear", budget=(10, 14), eta=0.05)),
             (OKAUCM, dict(lam=1e-2, kernel="poly", gamma=0.5, degree=2, budget=10,
                           transfer="min_abs")),
             (OKAUCM, dict(lam=1e-2, gamma=0.8, budget=None)),
             (OKAUCS, dict(gamma=0.8, budget=12)),
             (OKAUCS, dict(kernel="linear", budget=(9, 11))),
             (OKAUCS, dict(kernel="poly", gamma=0.5, degree=3, budget=10))]


@pytest.mark.parametrize("Est,kw", SPARSE_KW)
def test_sparse_fitted_model_equals_dense_fitted(Est, kw):
    """partial_fit on CSR in several calls (row nnz growing, so the slot width grows),
    pickled mid-stream, against the same stream fitted dense: equal at rtol 1e-12."""
    X, s = sparse_stream(n=240, p=40, seed=7, grow=True)
    y = (s > 0).astype(int)
    dense = Est(**kw).fit(X, y)
    assert dense.sv_buf_.shape[1] == 40
    part = Est(**kw)
    widths = []
    bounds = [0, 1, 40, 90, 91, 160, 240]
    for a, b in zip(bounds[:-1], bounds[1:]):
        part.partial_fit(sp.csr_matrix(X[a:b]), y[a:b], classes=[0, 1])
        widths.append(part.sv_ind_.shape[1])
        if a == 90:
            part = pickle.loads(pickle.dumps(part))
    assert widths == sorted(widths) and widths[-1] > widths[1]     # L grew with the rows
    assert widths[-1] == int(np.diff(sp.csr_matrix(X).indptr).max())
    assert not hasattr(part, "sv_buf_") and sp.issparse(part.support_vectors_)
    _assert_models_equal(part, dense, X)
    _assert_models_equal(Est(**kw).fit(sp.csr_matrix(X), y), dense, X)
    if kw.get("budget") is not None:
        assert part.heads_.any()                            # FIFO removals took place
    # the other format later: dense rows into the sparse model, sparse into the dense one
    more, s2 = sparse_stream(n=30, p=40, seed=8)
    y2 = (s2 > 0).astype(int)
    part.partial_fit(more, y2)
    dense.partial_fit(sp.csr_matrix(more), y2)
    _assert_models_equal(part, dense, X)
    np.testing.assert_allclose(part.decision_function(sp.csr_matrix(X)),
                               dense.decision_function(X), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(part.score_one(X[5]), dense.score_one(sp.csr_matrix(X[5:6])),
                               rtol=1e-12, atol=1e-12)
    assert np.ptp(dense.decision_function(X)) > 0


def test_sparse_fitted_learn_one_equals_partial_fit():
    X, s = sparse_stream(n=80, seed=9)
    y = (s > 0).astype(int)
    Xs = sp.csr_matrix(X)
    a = OKAUCM(gamma=0.8, budget=6).partial_fit(Xs[:10], y[:10], classes=[0, 1])
    b = pickle.loads(pickle.dumps(a))
    for i in range(10, 80):
        a.learn_one(Xs[i], y[i])
    b.partial_fit(Xs[10:], y[10:])
    _assert_models_equal(a, b, X, rtol=0.0)


def test_sparse_fitted_bad_input_leaves_state_unchanged():
    X, s = sparse_stream(n=100, seed=10)
    y = (s > 0).astype(int)
    m = OKAUCM(kernel="poly", gamma=0.5, degree=2, budget=8).fit(sp.csr_matrix(X[:60]), y[:60])
    # the public values (support_vectors_ of sparse slots is built on its first read)
    before = {k: (v.copy() if isinstance(v, np.ndarray) else v)
              for k, v in ((k, getattr(m, k)) for k in list(vars(m)))
              if k.endswith("_") and not sp.issparse(v)}
    sv = m.support_vectors_.toarray()
    wide = np.ones((5, 40))                                 # rows wider than the slots
    bad = [(sp.csr_matrix(np.ones((3, 31))), y[:3], ValueError, "features"),
           (sp.csr_matrix(np.where(X[:4] != 0, np.nan, 0.0)), y[:4], ValueError, "NaN"),
           (sp.csr_matrix(X[60:65]), np.array([0, 1, 2, 1, 0]), ValueError, "label"),
           (sp.csr_matrix(wide[:, :30] * 1e160), y[:5], FloatingPointError, "overflowed")]
    for Xb, yb, exc, match in bad:
        with pytest.raises(exc, match=match):
            m.partial_fit(Xb, yb)
        for k, v in before.items():
            if isinstance(v, np.ndarray):
                np.testing.assert_array_equal(getattr(m, k), v, err_msg=k)
                assert getattr(m, k).shape == v.shape
            else:
                assert getattr(m, k) == v, k
        np.testing.assert_array_equal(m.support_vectors_.toarray(), sv)
    m.partial_fit(sp.csr_matrix(X[60:]), y[60:])           # and it goes on as if nothing happened
    ref_m = OKAUCM(kernel="poly", gamma=0.5, degree=2, budget=8).fit(X[:60], y[:60])
    ref_m.partial_fit(X[60:], y[60:])
    _assert_models_equal(m, ref_m, X)


def test_sparse_model_memory_does_not_depend_on_p():
    """p = 2^20 with 8 non-zeros per row: the fitted arrays stay a few kilobytes."""
    rng = np.random.default_rng(11)
    n, p, k = 300, 1 << 20, 8
    cols = np.sort(rng.choice(64, size=(n, k), replace=True) * 16384 + rng.integers(
        0, 16384, size=(n, k)), axis=1)
    rows = np.repeat(np.arange(n), k)
    X = sp.csr_matrix((rng.uniform(-1, 1, n * k), (rows, cols.ravel())), shape=(n, p))
    y = (np.asarray(X[:, :p // 2].sum(axis=1)).ravel() > 0).astype(int)
    m = OKAUCM(gamma=0.5, budget=20).fit(X, y)
    nbytes = sum(v.nbytes for v in vars(m).values() if isinstance(v, np.ndarray))
    sv = m.support_vectors_
    nbytes += sv.data.nbytes + sv.indices.nbytes + sv.indptr.nbytes
    assert sp.issparse(sv) and sv.shape == (40, p)
    assert nbytes < 64_000, nbytes                          # dense slots would be 335 MB
    f = m.decision_function(X[:50])
    want = kernel_matrix(X[:50].toarray()[:, np.unique(X.indices)],
                         sv.toarray()[:, np.unique(X.indices)], "gaussian", 0.5) @ m.dual_coef_
    np.testing.assert_allclose(f, want + m.intercept_, rtol=1e-12, atol=1e-12)
    assert np.ptp(f) > 0


def test_komp_policy_sparse_fit_equals_dense_fit():
    """budget_policy="komp" fitted on CSR keeps a sparse pool and equals the dense fit
    (rtol 1e-12), also in partial_fit calls of growing row nnz pickled in between."""
    X, s = sparse_stream(n=240, seed=12, grow=True)
    y = (s > 0).astype(int)
    kw = dict(gamma=0.8, budget=(10, 12), budget_policy="komp", epsilon=0.05)
    a = OKAUCM(**kw).fit(sp.csr_matrix(X), y)
    b = OKAUCM(**kw).fit(X, y)
    part = OKAUCM(**kw)
    for lo, hi in [(0, 1), (1, 33), (33, 120), (120, 240)]:
        part.partial_fit(sp.csr_matrix(X[lo:hi]), y[lo:hi], classes=[0, 1])
        part = pickle.loads(pickle.dumps(part))
    assert b.model_order_ < 200 and np.sum(b.pool_buf_ == -1) > 0     # compressed
    f = b.decision_function(X)
    assert np.ptp(f) > 0
    for m in (a, part):
        assert m._layout_["storage"] == "csr" and sp.issparse(m.support_vectors_)
        assert not hasattr(m, "pool_x_") and m.pool_ind_.shape[1] < X.shape[1]
        np.testing.assert_array_equal(m.support_vectors_.toarray(), b.support_vectors_)
        scale = np.abs(b.dual_coef_).max()
        np.testing.assert_allclose(m.dual_coef_, b.dual_coef_, rtol=1e-12, atol=1e-12 * scale)
        np.testing.assert_allclose(m.decision_function(X), f, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(m.decision_function(sp.csr_matrix(X)), f, rtol=1e-12,
                                   atol=1e-12)
        np.testing.assert_array_equal(m.pool_buf_, b.pool_buf_)
    np.testing.assert_array_equal(part.dual_coef_, a.dual_coef_)


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning")
def test_komp_policy_sparse_bad_input_leaves_state_unchanged():
    X, s = sparse_stream(n=120, seed=16)
    y = (s > 0).astype(int)
    Xs = sp.csr_matrix(X)
    kw = dict(gamma=0.8, budget=8, budget_policy="komp", kernel="poly", degree=2)
    m = OKAUCM(**kw).fit(Xs[:80], y[:80])
    before = {k: (v.toarray() if sp.issparse(v) else np.array(v, copy=True))
              for k, v in vars(m).items() if isinstance(v, np.ndarray) or sp.issparse(v)}
    bad = Xs[80:].copy()
    bad.data[0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        m.partial_fit(bad, y[80:])
    with pytest.raises(ValueError, match="features"):
        m.partial_fit(sp.csr_matrix(np.ones((2, 31))), [0, 1])
    with pytest.raises(FloatingPointError, match="overflowed"):
        m.partial_fit(Xs[80:] * 1e160, y[80:])
    for k, v in before.items():
        w = getattr(m, k)
        np.testing.assert_array_equal(w.toarray() if sp.issparse(w) else w, v, err_msg=k)
    m.partial_fit(Xs[80:], y[80:])
    np.testing.assert_array_equal(m.dual_coef_, OKAUCM(**kw).fit(Xs, y).dual_coef_)


def test_komp_policy_sparse_memory_does_not_depend_on_p():
    """At p = 2^20 with 8 non-zeros per row, no fitted array has a dimension p and all
    of them hold less than one p-long float vector (8 MiB)."""
    p = 1 << 20
    rng = np.random.default_rng(17)
    n = 200
    cols = np.concatenate([np.sort(rng.choice(p, size=8, replace=False)) for _ in range(n)])
    X = sp.csr_matrix((rng.uniform(-1, 1, 8 * n), cols, np.arange(0, 8 * n + 1, 8)),
                      shape=(n, p))
    y = (rng.random(n) < 0.4).astype(int)
    m = OKAUCM(gamma=0.5, budget=20, budget_policy="komp", epsilon=0.05).fit(X, y)
    arrays = [v for v in vars(m).values() if isinstance(v, np.ndarray)]
    arrays += [m.support_vectors_.data, m.support_vectors_.indices, m.support_vectors_.indptr]
    assert m.model_order_ > 10
    assert all(p not in a.shape for a in arrays)
    assert sum(a.nbytes for a in arrays) < 8 * p / 4


def test_sparse_fit_then_dense_fit_starts_over_dense():
    X, s = sparse_stream(n=60, seed=13)
    y = (s > 0).astype(int)
    m = OKAUCM(gamma=0.8, budget=8).fit(sp.csr_matrix(X), y)
    assert m._layout_["storage"] == "csr"
    m.fit(X, y)
    assert m._layout_["storage"] == "dense" and m.sv_buf_.shape == (16, 30)
    assert not hasattr(m, "sv_ind_")
    with pytest.raises(ValueError, match="budget_policy"):
        OKAUCM(gamma=0.8, budget=8).fit(sp.csr_matrix(X), y).set_params(
            budget_policy="komp").partial_fit(X, y)


# -- learn_one in place on budgeted FIFO buffers ---------------------------------------------
def _state_bytes(m):
    # the typed one-row helper (_stepper_) is not state: pickling drops it, calls rebuild it
    return {k: (v.tobytes() if isinstance(v, np.ndarray) else v) for k, v in vars(m).items()
            if k not in ("_params_ok", "_lock_", "_stepper_")}


@pytest.mark.parametrize("Est,kw", [(OKAUCM, {}), (OKAUCS, {"eta": 0.05}),
                                    (OKAUCM, {"transfer": "min_abs", "budget": (3, 5)})])
def test_learn_one_in_place_equals_partial_fit_bit_for_bit(Est, kw):
    """Through the filling of the buffers and the FIFO ring (with the transfer of eq. 28):
    learn_one on the live buffers == the general one-row partial_fit, every attribute."""
    from sosl._base import BaseOnlineAUC
    X, y = _circle(120, 21)
    a = Est(budget=8, **kw) if "budget" not in kw else Est(**kw)
    b = pickle.loads(pickle.dumps(a))
    a.partial_fit(X[:1], y[:1], classes=[0, 1])
    b.partial_fit(X[:1], y[:1], classes=[0, 1])
    G = a.gram_buf_
    for i in range(1, len(y)):
        a.learn_one(X[i], y[i])
        BaseOnlineAUC.partial_fit(b, X[i:i + 1], y[i:i + 1])
        assert _state_bytes(a) == _state_bytes(b), i
    assert a.gram_buf_ is G                      # no copy: the buffers were updated in place
    assert a.counts_.tolist() == list(a.capacity_)   # the ring was reached
    assert "_stepper_" in a.__dict__              # the typed path played the late rounds


def test_typed_one_row_path_mutant_is_caught():
    """The comparison above with a Stepper bound to lam 1% off (the mutant) fails."""
    from sosl._base import BaseOnlineAUC
    from sosl._core._kparams import layout_kernel_spec
    X, y = _circle(80, 23)
    a = OKAUCM(budget=6).partial_fit(X[:30], y[:30], classes=[0, 1])
    b = pickle.loads(pickle.dumps(a))
    d, lay = a.__dict__, a._layout_
    d["_stepper_"] = _okauc.Stepper(
        d["sv_buf_"], d["alpha_buf_"], d["gram_buf_"], d["f_buf_"], d["capacity_"],
        d["counts_"], d["heads_"], step_spec(0.0, 1.01 * a.lam, lay["schedule"], a._loss),
        layout_kernel_spec(lay), 0, d["calibration_"])
    for i in range(30, 80):
        a.learn_one(X[i], y[i])
        BaseOnlineAUC.partial_fit(b, X[i:i + 1], y[i:i + 1])
    assert a.t_ == b.t_ and not np.array_equal(a.alpha_buf_, b.alpha_buf_)


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning")
@pytest.mark.parametrize("n_before", [3, 60])    # buffers filling; ring full (head moves)
@pytest.mark.parametrize("kernel", ["linear", "poly"])
def test_learn_one_in_place_restores_the_buffers_when_the_kernel_overflows(n_before, kernel):
    """The row is written into its slot (Gram row and column, support vector, weights,
    scores, count or head) before the check finds the overflow: all of it is restored."""
    X, y = _circle(80, 22)
    m = OKAUCM(kernel=kernel, budget=10).partial_fit(X[:n_before], y[:n_before],
                                                     classes=[0, 1])
    before = _state_bytes(m)
    with pytest.raises(FloatingPointError, match=f"{kernel} kernel overflowed"):
        m.learn_one(X[n_before] * 1e155, y[n_before])
    assert _state_bytes(m) == before
    m.learn_one(X[n_before], y[n_before])        # and it goes on as the general path does
    ref_m = OKAUCM(kernel=kernel, budget=10).partial_fit(X[:n_before + 1], y[:n_before + 1],
                                                         classes=[0, 1])
    np.testing.assert_array_equal(m.dual_coef_, ref_m.dual_coef_)
