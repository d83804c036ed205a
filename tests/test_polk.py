"""Tests of POLK: FSGD recursion, KOMP budgets, bounded model order, API."""

import inspect
import pickle
import types

import numpy as np
import pytest

from sosl import POLK
from sosl._core import _polk_ref
from sosl.kernels import kernel_matrix


def _data(rng, n, p=2, noise=0.1):
    X = rng.uniform(-1, 1, size=(n, p))
    y = (np.sum(X ** 2, axis=1) < 0.5 * p / 2).astype(int)
    flip = rng.random(n) < noise
    y[flip] = 1 - y[flip]
    return X, y


def _fsgd_by_hand(X, s, eta, lam, loss, gamma):
    """Unprojected functional SGD (eq. 14): one weight per instance, dictionary = X."""
    T = X.shape[0]
    K = kernel_matrix(X, X, gamma=gamma)
    w = np.zeros(T)
    for t in range(T):
        z = K[t, :t] @ w[:t]
        if loss == "hinge":
            g = -s[t] if s[t] * z < 1 else 0.0
        elif loss == "logistic":
            g = -s[t] / (1.0 + np.exp(s[t] * z))
        else:
            g = z - s[t]
        w[:t] *= 1.0 - eta * lam
        w[t] = -eta * g
    return w


@pytest.mark.parametrize("loss", ["hinge", "logistic", "square"])
def test_no_projection_equals_functional_sgd(loss):
    """With epsilon = 0 nothing with a nonzero weight can be removed: POLK is FSGD."""
    rng = np.random.default_rng(0)
    X, y = _data(rng, 60, p=3)
    s = np.where(y == 1, 1.0, -1.0)
    model = POLK(loss=loss, eta=0.3, lam=0.05, epsilon=0.0, gamma=2.0).fit(X, y)
    w = _fsgd_by_hand(X, s, 0.3, 0.05, loss, 2.0)
    nz = w != 0.0
    assert nz.sum() > 10
    np.testing.assert_allclose(model.support_vectors_, X[nz], rtol=0, atol=0)
    np.testing.assert_allclose(model.dual_coef_, w[nz], rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(model.projection_errors_, 0.0)


def _mutant_ref(old, new):
    src = inspect.getsource(_polk_ref)
    assert old in src
    src = src.replace(old, new).replace("from ..kernels import", "from sosl.kernels import")
    src = src.replace("from ..komp import", "from sosl.komp import")
    module = types.ModuleType("polk_ref_mutant")
    exec(compile(src, "polk_ref_mutant", "exec"), module.__dict__)
    return module


@pytest.mark.parametrize("old, new", [
    ("(1.0 - eta_t * lam) * w", "(1.0 + eta_t * lam) * w"),     # regularizer sign flipped
    ("-eta_t * g)", "eta_t * g)"),                              # gradient sign flipped
])
def test_mutant_is_caught(monkeypatch, old, new):
    rng = np.random.default_rng(0)
    X, y = _data(rng, 60, p=3)
    s = np.where(y == 1, 1.0, -1.0)
    import sosl.polk
    monkeypatch.setattr(sosl.polk, "_polk_ref", _mutant_ref(old, new))
    model = POLK(loss="logistic", eta=0.3, lam=0.05, epsilon=0.0, gamma=2.0).fit(X, y)
    w = _fsgd_by_hand(X, s, 0.3, 0.05, "logistic", 2.0)
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(model.dual_coef_, w, rtol=1e-12, atol=1e-15)


def test_projection_within_budget_and_order_bounded():
    rng = np.random.default_rng(1)
    X, y = _data(rng, 3000)
    model = POLK(eta=0.1, lam=1e-3, gamma=2.0).fit(X, y)
    eps = 1.0 * 0.1 ** 1.5
    np.testing.assert_allclose(model.projection_budgets_, eps)
    assert np.all(model.projection_errors_ <= eps * (1 + 1e-9))
    assert model.projection_errors_.max() > 0.1 * eps            # the budget is actually used
    orders = model.model_orders_
    assert orders.shape == (3000,) and orders[-1] == model.dual_coef_.shape[0]
    assert orders.max() < 100
    assert orders[1500:].max() <= 1.2 * orders[:1500].max() + 2  # no growth in the second half
    assert model.score(X, y) > 0.8


def test_diminishing_schedule_budgets():
    rng = np.random.default_rng(2)
    X, y = _data(rng, 200)
    model = POLK(eta=0.5, lam=0.1, schedule="diminishing", parsimony=2.0).fit(X, y)
    t = np.arange(1, 201)
    eta_t = 0.5 / (1 + 0.1 * 0.5 * t)
    np.testing.assert_allclose(model.projection_budgets_, 2.0 * eta_t ** 2, rtol=1e-14)
    assert np.all(model.projection_errors_ <= model.projection_budgets_ * (1 + 1e-9))


def test_kernel_expansion_reproduces_decision():
    rng = np.random.default_rng(3)
    X, y = _data(rng, 300)
    model = POLK(eta=0.2, gamma=3.0).fit(X, y)
    K = kernel_matrix(X, model.support_vectors_, gamma=3.0)
    np.testing.assert_allclose(model.decision_function(X), K @ model.dual_coef_, rtol=1e-12)
    np.testing.assert_allclose(model.gram_, kernel_matrix(model.support_vectors_,
                                                          model.support_vectors_, gamma=3.0),
                               rtol=1e-12)


@pytest.mark.parametrize("loss", ["hinge", "logistic", "square"])
def test_loss_derivative_matches_finite_differences(loss):
    code = {"hinge": 0, "logistic": 1, "square": 2}[loss]
    for z in (-2.3, -0.4, 0.35, 1.7):
        for y in (-1.0, 1.0):
            h = 1e-6
            num = (_polk_ref.loss_value(z + h, y, code)
                   - _polk_ref.loss_value(z - h, y, code)) / (2 * h)
            assert _polk_ref.loss_derivative(z, y, code) == pytest.approx(num, abs=1e-6)


def test_fit_equals_partial_fit_and_pickle():
    rng = np.random.default_rng(4)
    X, y = _data(rng, 400)
    full = POLK(eta=0.2, gamma=2.0).fit(X, y)
    part = POLK(eta=0.2, gamma=2.0)
    for a, b in [(0, 1), (1, 150), (150, 151), (151, 400)]:
        part.partial_fit(X[a:b], y[a:b], classes=[0, 1])
        part = pickle.loads(pickle.dumps(part))
    np.testing.assert_array_equal(full.dual_coef_, part.dual_coef_)
    np.testing.assert_array_equal(full.model_orders_, part.model_orders_)
    assert part.t_ == 400


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


def test_verify_module_quick(tmp_path):
    """verify/polk_model_order.py at its quick size: bounds hold, negative controls fail."""
    from verify import polk_model_order
    records = polk_model_order.run("quick", 0, tmp_path)
    assert len(records) == 4
    assert sum(r.negative for r in records) == 2
    for r in records:
        assert r.ok, (r.name, r.outcome, r.measured, r.threshold)
