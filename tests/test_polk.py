"""POLK as an estimator: budgets, the kernel expansion, refused parameters and input,
sparse-fitted models (the passes against their reference: tests/_core/test_polk.py)."""

import importlib
import pickle
import sys
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from helpers import noisy_ball

from sosl import POLK
from sosl.kernels import kernel_matrix


def test_diminishing_schedule_budgets():
    rng = np.random.default_rng(2)
    X, y = noisy_ball(rng, 200)
    model = POLK(eta=0.5, lam=0.1, schedule="diminishing", parsimony=2.0).fit(X, y)
    t = np.arange(1, 201)
    eta_t = 0.5 / (1 + 0.1 * 0.5 * t)
    np.testing.assert_allclose(model.projection_budgets_, 2.0 * eta_t ** 2, rtol=1e-14)
    assert np.all(model.projection_errors_ <= model.projection_budgets_ * (1 + 1e-9))


def test_kernel_expansion_reproduces_decision():
    rng = np.random.default_rng(3)
    X, y = noisy_ball(rng, 300)
    model = POLK(eta=0.2, gamma=3.0).fit(X, y)
    K = kernel_matrix(X, model.support_vectors_, gamma=3.0)
    np.testing.assert_allclose(model.decision_function(X), K @ model.dual_coef_, rtol=1e-12)
    np.testing.assert_allclose(model.gram_, kernel_matrix(model.support_vectors_,
                                                          model.support_vectors_, gamma=3.0),
                               rtol=1e-12)


@pytest.mark.parametrize("params, err, match", [
    ({"loss": "huber"}, ValueError, "loss"),
    ({"schedule": "adagrad"}, ValueError, "schedule"),
    ({"eta": 0.0}, ValueError, "eta"),
    ({"lam": 0.0}, ValueError, "lam"),
    ({"eta": 2.0, "lam": 0.5}, ValueError, "1/lam"),
    ({"epsilon": -1.0}, ValueError, "epsilon"),
    ({"parsimony": "a"}, TypeError, "parsimony"),
    ({"kernel": "laplace"}, ValueError, "kernel"),
])
def test_bad_params(params, err, match):
    with pytest.raises(err, match=match):
        POLK(**params).fit(np.array([[0.0], [1.0]]), [0, 1])


def test_missing_extension_is_an_import_error(monkeypatch):
    """No silent fallback to the NumPy reference: without the typed pass POLK cannot load."""
    import sosl._core
    monkeypatch.setitem(sys.modules, "sosl._core._polk", None)
    monkeypatch.delattr(sosl._core, "_polk")
    monkeypatch.delitem(sys.modules, "sosl._core._polk_driver")
    with pytest.raises(ImportError):
        importlib.import_module("sosl._core._polk_driver")


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
def test_overflowing_kernel_raises():
    rng = np.random.default_rng(16)
    X, y = noisy_ball(rng, 40)
    with pytest.raises(FloatingPointError, match="poly kernel overflowed"):
        POLK(kernel="poly").fit(X * 1e155, y)
    m = POLK(kernel="poly").fit(X, y)
    w = m.dual_coef_.copy()
    with pytest.raises(FloatingPointError, match="kernel overflowed"):
        m.partial_fit(X * 1e155, y)
    np.testing.assert_array_equal(m.dual_coef_, w)
    with pytest.raises(FloatingPointError, match="not finite"):
        m.predict(X * 1e155)


def _sparse_stream(seed, n=500, p=400):
    """Rows whose nnz grows along the stream (the slots must widen between calls)."""
    rng = np.random.default_rng(seed)
    X = np.zeros((n, p))
    for i in range(n):
        k = 1 + i // 60
        X[i, rng.choice(40 + 10 * k, size=k, replace=False)] = rng.uniform(-1, 1, k)
    X[3::7] = X[1::7][:X[3::7].shape[0]]                    # some repeated rows
    y = (X[:, :20].sum(axis=1) + 0.2 * rng.normal(size=n) > 0).astype(int)
    return X, y


def test_sparse_fit_equals_dense_fit_in_chunks_and_pickled():
    """CSR fit == dense fit (rtol 1e-12) and == partial_fit in chunks of growing row nnz,
    pickled between the calls."""
    X, y = _sparse_stream(21)
    params = dict(eta=0.3, gamma=0.8)
    Xs = sp.csr_matrix(X)
    dense = POLK(**params).fit(X, y)
    assert np.any(np.diff(dense.model_orders_) < 0) and dense.model_orders_.max() > 20
    whole = POLK(**params).fit(Xs, y)
    part = POLK(**params)
    for a, b in [(0, 1), (1, 90), (90, 200), (200, 201), (201, 500)]:
        part.partial_fit(Xs[a:b], y[a:b], classes=[0, 1])
        part = pickle.loads(pickle.dumps(part))
    widths = np.diff(whole.support_vectors_.indptr)
    assert widths.max() > 5                                   # rows of growing nnz were stored
    f = dense.decision_function(X)
    assert np.ptp(f) > 0
    for m in (whole, part):
        np.testing.assert_array_equal(m.model_orders_, dense.model_orders_)
        np.testing.assert_array_equal(m.support_vectors_.toarray(), dense.support_vectors_)
        scale = np.abs(dense.dual_coef_).max()
        np.testing.assert_allclose(m.dual_coef_, dense.dual_coef_, rtol=1e-12,
                                   atol=1e-12 * scale)
        np.testing.assert_allclose(m.decision_function(Xs), f, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(m.decision_function(X), f, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(part.dual_coef_, whole.dual_coef_)


def _snapshot(model):
    out = {}
    for k, v in vars(model).items():
        if k == "_lock_":                      # the model's lock is not state
            continue
        if isinstance(v, np.ndarray):
            out[k] = v.copy()
        elif sp.issparse(v):
            out[k] = v.toarray()
        else:
            out[k] = pickle.dumps(v)
    return out


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
def test_sparse_bad_input_leaves_state_unchanged():
    X, y = _sparse_stream(22, n=200, p=300)
    Xs = sp.csr_matrix(X)
    m = POLK(kernel="poly", degree=2).fit(Xs[:150], y[:150])
    before = _snapshot(m)
    bad_nan = Xs[150:].copy()
    bad_nan.data[3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        m.partial_fit(bad_nan, y[150:])
    with pytest.raises(ValueError, match="features"):
        m.partial_fit(sp.csr_matrix(np.ones((2, 301))), [0, 1])
    with pytest.raises(FloatingPointError, match="kernel overflowed"):
        m.partial_fit(Xs[150:] * 1e155, y[150:])
    with pytest.raises(ValueError, match="classes"):
        m.partial_fit(Xs[150:], y[150:] + 5)
    after = _snapshot(m)
    assert after.keys() == before.keys()
    for k, v in before.items():
        np.testing.assert_array_equal(after[k], v, err_msg=k)
    m.partial_fit(Xs[150:], y[150:])                         # and it goes on as before
    ref = POLK(kernel="poly", degree=2).fit(Xs, y)
    np.testing.assert_array_equal(m.dual_coef_, ref.dual_coef_)


def test_sparse_model_memory_does_not_depend_on_p():
    """At p = 2^20 with 8 non-zeros per row, the fitted arrays and the allocations of a
    partial_fit call stay below one p-long float vector (8 MiB, the bound); a model with a
    dense dictionary (negative control) fed two of the same CSR rows exceeds it."""
    p = 1 << 20
    rng = np.random.default_rng(23)
    n = 300
    cols = np.concatenate([np.sort(rng.choice(p, size=8, replace=False)) for _ in range(n)])
    X = sp.csr_matrix((rng.uniform(-1, 1, 8 * n), cols, np.arange(0, 8 * n + 1, 8)),
                      shape=(n, p))
    y = (rng.random(n) < 0.4).astype(int)
    m = POLK(eta=0.3, gamma=0.5).fit(X[:200], y[:200])
    assert m.model_orders_.max() > 20
    arrays = [v for v in vars(m).values() if isinstance(v, np.ndarray)]
    arrays += [m.support_vectors_.data, m.support_vectors_.indices, m.support_vectors_.indptr]
    assert all(p not in a.shape for a in arrays)
    bound = 8 * p                                            # one float64 vector of length p
    assert sum(a.nbytes for a in arrays) < bound / 4

    def peak(model, rows, labels):
        tracemalloc.start()
        try:
            model.partial_fit(rows, labels)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert peak(m, X[200:], y[200:]) < bound
    control = POLK(eta=0.3, gamma=0.5).fit(X[:2].toarray(), [0, 1])
    assert peak(control, X[200:202], y[200:202]) > bound
