"""POLK's typed passes (``_polk.pyx``, dense and CSR) against the NumPy reference: the
FSGD recursion, KOMP budgets, the inverse updates, loss derivatives, each with a mutant."""

import inspect
import pickle
import types

import numpy as np
import pytest
import scipy.sparse as sp
from helpers import noisy_ball

import sosl.polk
from sosl import POLK
from sosl._core import _polk_driver, _polk_ref
from sosl._core._kparams import KERNEL_CODES, kernel_spec, step_spec
from sosl.kernels import kernel_matrix


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
    X, y = noisy_ball(rng, 60, p=3)
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
    module.__package__ = "sosl._core"          # the relative imports of the reference
    exec(compile(src, "polk_ref_mutant", "exec"), module.__dict__)
    return module


@pytest.mark.parametrize("old, new", [
    ("(1.0 - eta_t * lam) * w", "(1.0 + eta_t * lam) * w"),     # regularizer sign flipped
    ("-eta_t * g)", "eta_t * g)"),                              # gradient sign flipped
])
def test_mutant_is_caught(old, new):
    rng = np.random.default_rng(0)
    X, y = noisy_ball(rng, 60, p=3)
    s = np.where(y == 1, 1.0, -1.0)
    params = dict(loss="logistic", eta=0.3, lam=0.05, epsilon=0.0, gamma=2.0)
    w = _fsgd_by_hand(X, s, 0.3, 0.05, "logistic", 2.0)
    np.testing.assert_allclose(_reference_run(X, y, params).dual_coef_, w, rtol=1e-12,
                               atol=1e-15)
    model = _reference_run(X, y, params, _mutant_ref(old, new))
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(model.dual_coef_, w, rtol=1e-12, atol=1e-15)


def test_projection_within_budget_and_order_bounded():
    rng = np.random.default_rng(1)
    X, y = noisy_ball(rng, 3000)
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


@pytest.mark.parametrize("loss", ["hinge", "logistic", "square"])
def test_loss_derivative_matches_finite_differences(loss):
    code = {"hinge": 0, "logistic": 1, "square": 2}[loss]
    for z in (-2.3, -0.4, 0.35, 1.7):
        for y in (-1.0, 1.0):
            h = 1e-6
            num = (_polk_ref.loss_value(z + h, y, code)
                   - _polk_ref.loss_value(z - h, y, code)) / (2 * h)
            assert _polk_ref.loss_derivative(z, y, code) == pytest.approx(num, abs=1e-6)


def _fast_streams():
    """(name, X, y, params): several losses/schedules, epsilon = 0, duplicates, p = 1, kernels."""
    rng = np.random.default_rng(11)
    out = []
    X, y = noisy_ball(rng, 400)
    out.append(("hinge", X, y, dict(eta=0.2, gamma=2.0)))
    X, y = noisy_ball(rng, 300, p=3)
    out.append(("logistic-diminishing", X, y, dict(loss="logistic", eta=0.5, lam=0.05,
                                                   schedule="diminishing", parsimony=2.0,
                                                   gamma=3.0)))
    X, y = noisy_ball(rng, 300, p=4)
    out.append(("square", X, y, dict(loss="square", eta=0.3, lam=0.01, epsilon=0.02,
                                     gamma=1.0)))
    X, y = noisy_ball(rng, 150, p=3)
    out.append(("epsilon0", X, y, dict(eta=1.0, lam=0.05, epsilon=0.0, gamma=8.0)))
    X, y = noisy_ball(rng, 300)
    X[1::2] = X[::2]                               # every point twice in a row, ...
    X[200:250] = X[20:70]                          # ... and some again much later
    out.append(("duplicates", X, y, dict(eta=0.2, gamma=2.0)))
    X, y = noisy_ball(rng, 300, p=1)
    out.append(("p1", X, y, dict(eta=0.5, lam=0.01, gamma=30.0)))
    X, y = noisy_ball(rng, 200)
    out.append(("poly", X, y, dict(kernel="poly", degree=2, gamma=1.0, eta=0.1, lam=0.01)))
    return out


def _reference_run(X, y, params, ref=_polk_ref):
    """The NumPy reference pass over X in row order, as the fitted attributes it gives."""
    m = POLK(**params)
    s = np.where(y == 1, 1.0, -1.0)
    eps_rule = ref.EPS_PAPER if m.epsilon is None else ref.EPS_FIXED
    D, w, Kdd, _, orders, errors, budgets = ref.polk_pass(
        X, s, np.arange(X.shape[0], dtype=np.intp), np.zeros((0, X.shape[1])), np.zeros(0),
        np.zeros((0, 0)), 0,
        step_spec(m.eta, m.lam, sosl.polk._SCHEDULES[m.schedule], sosl.polk._LOSSES[m.loss]),
        _polk_driver.polk_spec(eps_rule, 0.0 if m.epsilon is None else m.epsilon, m.parsimony),
        kernel_spec(KERNEL_CODES[m.kernel], m.gamma, m.degree, m.coef0))
    return types.SimpleNamespace(support_vectors_=D, dual_coef_=w, gram_=Kdd,
                                 model_orders_=orders, projection_errors_=errors,
                                 projection_budgets_=budgets)


def _fit(X, y, params, chunks=None):
    model = POLK(**params)
    if chunks is None:
        return model.fit(X, y)
    for a, b in chunks:
        model.partial_fit(X[a:b], y[a:b], classes=[0, 1])
    return model


def _count_dependent_rounds(monkeypatch):
    """Count the rounds the typed pass hands to the rank-revealing round."""
    calls = []
    step = _polk_driver.dependent_round

    def counting(*args, **kwargs):
        calls.append(1)
        return step(*args, **kwargs)
    monkeypatch.setattr(_polk_driver, "dependent_round", counting)
    return calls


def _assert_run_close(fast, ref, wtol=2e-11, gtol=1e-9, etol=1e-15):
    """Same dictionary and orders; weights to wtol * max|w| (and the function in H-norm)."""
    np.testing.assert_array_equal(fast.model_orders_, ref.model_orders_)
    np.testing.assert_array_equal(fast.support_vectors_, ref.support_vectors_)
    np.testing.assert_array_equal(fast.projection_budgets_, ref.projection_budgets_)
    w, v = fast.dual_coef_, ref.dual_coef_
    scale = max(np.abs(v).max(initial=0.0), 1e-300)
    np.testing.assert_allclose(w, v, rtol=0, atol=wtol * scale)
    d = w - v
    assert d @ ref.gram_ @ d <= (1e-12) ** 2 * max(v @ ref.gram_ @ v, 1e-300)
    np.testing.assert_allclose(fast.gram_, ref.gram_, rtol=0, atol=1e-14)
    # squared errors (an error at rounding level, ~1e-8, is the square root of ~1e-17):
    # each is a difference of squared H-norms, so its rounding level grows with the
    # kernel's scale k(x, x) (1 for the RBF kernel, up to ~9 for the degree-2 polynomial
    # here, where a build at another optimisation level gave 1.0e-15 against 0)
    kscale = max(1.0, float(np.abs(np.diag(ref.gram_)).max(initial=0.0)))
    np.testing.assert_allclose(fast.projection_errors_ ** 2, ref.projection_errors_ ** 2,
                               rtol=1e-9, atol=etol * kscale)
    G = fast._gram_inv
    np.testing.assert_allclose(G @ fast.gram_, np.eye(G.shape[0]), rtol=0, atol=gtol)


@pytest.mark.parametrize("name, X, y, params",
                         [pytest.param(*c, id=c[0]) for c in _fast_streams()])
def test_fast_pass_equals_reference(monkeypatch, name, X, y, params):
    ref = _reference_run(X, y, params)
    calls = _count_dependent_rounds(monkeypatch)
    fast = _fit(X, y, params)
    _assert_run_close(fast, ref)
    assert fast.model_orders_.max() > 4                     # not a trivial dictionary
    assert np.any(np.diff(ref.model_orders_) < 1)           # atoms were removed
    if name in ("duplicates", "poly"):
        assert len(calls) > 10                              # the dependent-atom fallback ran
    else:
        assert len(calls) == 0                              # every round by the typed pass
    if name == "epsilon0":
        assert ref.projection_errors_.max() < 1e-12


def test_fast_pass_resumed_over_partial_fit(monkeypatch):
    """Two partial_fit calls (pickled in between) play the same rounds as one fit."""
    name, X, y, params = _fast_streams()[4]                    # duplicates: fallbacks too
    ref = _reference_run(X, y, params)
    whole = _fit(X, y, params)
    part = _fit(X, y, params, chunks=[(0, 1)])
    part = pickle.loads(pickle.dumps(part))
    part.partial_fit(X[1:137], y[1:137])
    part = pickle.loads(pickle.dumps(part))
    part.partial_fit(X[137:], y[137:])
    _assert_run_close(part, ref)
    np.testing.assert_array_equal(part.dual_coef_, whole.dual_coef_)
    np.testing.assert_array_equal(part.projection_errors_, whole.projection_errors_)


def test_fast_pass_rebuilds_and_old_state(monkeypatch):
    """Drift tolerance 0 (G rebuilt after every round) and a state without G still agree."""
    name, X, y, params = _fast_streams()[2]
    ref = _reference_run(X, y, params)
    monkeypatch.setattr(_polk_driver, "DRIFT_TOL", 0.0)
    monkeypatch.setattr(_polk_driver, "DRIFT_REL", 0.0)
    _assert_run_close(_fit(X, y, params), ref)
    monkeypatch.undo()
    half = _fit(X[:150], y[:150], params)
    half._gram_inv = None                                   # e.g. a state from the reference
    half.partial_fit(X[150:], y[150:])
    _assert_run_close(half, ref)


def test_fast_pass_mutant_is_caught(monkeypatch):
    """The typed pass fed a wrong inverse (G / 2: removal costs 2 w_j^2 / G_jj, wrong Schur
    complements) must be caught by the comparison, through the trajectory itself."""
    name, X, y, params = _fast_streams()[2]
    ref = _reference_run(X, y, params)
    good = _polk_driver.inverse_if_well_posed

    def mutant(K):
        G = good(K)
        return None if G is None else 0.5 * G
    monkeypatch.setattr(_polk_driver, "DRIFT_TOL", 0.0)   # rebuild (with the mutant) every round
    monkeypatch.setattr(_polk_driver, "DRIFT_REL", 0.0)
    monkeypatch.setattr(_polk_driver, "inverse_if_well_posed", mutant)
    calls = _count_dependent_rounds(monkeypatch)
    fast = _fit(X, y, params)
    assert len(calls) < 10                                  # the typed pass did play the rounds
    assert not np.array_equal(fast.model_orders_, ref.model_orders_)
    with pytest.raises(AssertionError):
        _assert_run_close(fast, ref)


def test_fast_pass_rank_threshold_is_the_reference_one():
    """The easy-case test of the typed pass is relative to komp_prune's rank threshold."""
    from sosl.komp import komp_prune
    rtol = inspect.signature(komp_prune).parameters["rtol"].default
    assert rtol == _polk_driver.RTOL == _polk_ref.RTOL
    assert _polk_driver.SAFETY >= 1.0


def test_inverse_updates_match_direct_inverses():
    """The bordering and deletion formulas of the typed pass (NumPy twins in _polk_ref)."""
    rng = np.random.default_rng(7)
    D = rng.uniform(-1, 1, size=(9, 3))
    K = kernel_matrix(D, D, gamma=1.5)
    G8 = np.linalg.inv(K[:8, :8])
    G9, sc = _polk_ref.border_inverse(G8, K[:8, 8], K[8, 8])
    np.testing.assert_allclose(G9, np.linalg.inv(K), rtol=1e-9, atol=1e-9)
    assert sc == pytest.approx(1.0 / np.linalg.inv(K)[8, 8], rel=1e-9)
    for j in (0, 4, 8):
        keep = np.arange(9) != j
        np.testing.assert_allclose(_polk_ref.remove_from_inverse(G9, j),
                                   np.linalg.inv(K[np.ix_(keep, keep)]), rtol=1e-9, atol=1e-9)
    bad = G8.copy()
    bad[0, 0] *= 1.001                                      # a perturbed inverse is detected
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(_polk_ref.border_inverse(bad, K[:8, 8], K[8, 8])[0],
                                   np.linalg.inv(K), rtol=1e-9, atol=1e-9)


def _sparsify(X, seed, p=600):
    """X with one entry of every third row zeroed (when it has two or more), placed at
    scattered columns of p."""
    rng = np.random.default_rng(seed)
    X = X.copy()
    if X.shape[1] > 1:
        rows = np.arange(0, X.shape[0], 3)
        X[rows, rng.integers(0, X.shape[1], rows.shape[0])] = 0.0
    cols = np.sort(rng.choice(p, size=X.shape[1], replace=False))
    out = np.zeros((X.shape[0], p))
    out[:, cols] = X
    return out


def _densified(model):
    """The fitted attributes of a CSR-fitted model with its dictionary densified."""
    assert sp.issparse(model.support_vectors_)
    return types.SimpleNamespace(
        support_vectors_=model.support_vectors_.toarray(), dual_coef_=model.dual_coef_,
        gram_=model.gram_, model_orders_=model.model_orders_,
        projection_errors_=model.projection_errors_,
        projection_budgets_=model.projection_budgets_, _gram_inv=model._gram_inv)


@pytest.mark.parametrize("name, X, y, params",
                         [pytest.param(*c, id=c[0]) for c in _fast_streams()])
def test_sparse_pass_equals_reference(monkeypatch, name, X, y, params):
    """The typed CSR pass (sparse slots, merged kernel rows) against the NumPy reference
    run on the densified rows, on every stream of the dense comparison."""
    X = _sparsify(X, seed=len(name))
    ref = _reference_run(X, y, params)
    calls = _count_dependent_rounds(monkeypatch)
    fast = _fit(sp.csr_matrix(X), y, params)
    # the weights solve a Gram system: to rounding times its condition number (about 4e5
    # on epsilon0, where no atom is ever removed); G kept by the pass is as accurate as its
    # drift check demands (DRIFT_REL max K_ii max G_jj); the squared projection errors of
    # the (nearly) dependent atoms are rounding of the size of the kernel values (poly: 9)
    kappa = np.linalg.cond(ref.gram_)
    G = fast._gram_inv
    drift = _polk_driver.DRIFT_REL * np.diag(fast.gram_).max() * np.diag(G).max()
    _assert_run_close(_densified(fast), ref, wtol=max(2e-11, 1e-16 * kappa),
                     gtol=max(1e-9, drift), etol=1e-15 * max(1.0, np.abs(ref.gram_).max()))
    assert fast.model_orders_.max() > 4
    assert np.any(np.diff(ref.model_orders_) < 1)           # atoms were removed
    if name in ("duplicates", "poly"):
        assert len(calls) > 10                              # the sparse fallback rounds ran


def test_sparse_mutant_is_caught(monkeypatch):
    """Rows handed to the merges with their indices in decreasing order (a non-canonical
    CSR the two-pointer merges misread) must be caught by the comparison."""
    name, X, y, params = _fast_streams()[0]
    X = _sparsify(X, seed=3, p=50)
    ref = _reference_run(X, y, params)
    good = _polk_driver._canonical

    def reversed_rows(A):
        A = good(A)
        data, ind = A.data.copy(), A.indices.copy()
        for i in range(A.shape[0]):
            a, b = A.indptr[i], A.indptr[i + 1]
            data[a:b], ind[a:b] = data[a:b][::-1], ind[a:b][::-1]
        return sp.csr_matrix((data, ind, A.indptr), shape=A.shape)
    monkeypatch.setattr(_polk_driver, "_canonical", reversed_rows)
    with pytest.raises(AssertionError):
        _assert_run_close(_densified(_fit(sp.csr_matrix(X), y, params)), ref)
    monkeypatch.undo()
    _assert_run_close(_densified(_fit(sp.csr_matrix(X), y, params)), ref)
