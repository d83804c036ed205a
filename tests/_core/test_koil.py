"""KOIL's typed pass (``_koil.pyx``, dense and CSR rows) == its NumPy reference, the
nearest violators, the Philox uniforms, each with a mutant that must be caught."""

import copy
import inspect
import types

import numpy as np
import pytest
import scipy.sparse as sp
from helpers import assert_close_to_reference, koil_sparse_stream, koil_stream

from sosl import KOIL
from sosl._core import _koil, _koil_ref


def _run_both(model, X, y, ref_module=_koil_ref, order=None):
    model._check_hyper(fitted=False)
    lay = model._layout()
    s = np.where(y == 1, 1.0, -1.0)
    order = np.arange(X.shape[0], dtype=np.intp) if order is None else order
    st_c = model._init_state(X.shape[1])
    st_c["t_"] = 0
    st_r = copy.deepcopy(st_c)
    t_c = _koil.koil_pass(*model._pass_args(st_c, X, s, order, lay))
    t_r = ref_module.koil_pass(*model._pass_args(st_r, X, s, order, lay))
    assert t_c == t_r == order.shape[0]
    return st_c, st_r


#: the arrays of the pass compared with the reference (floats to 1e-12, counters exactly)
COMPARED = ("buffer_", "alpha_", "gram_", "buffer_scores_", "n_buffer_", "n_class_seen_",
            "fifo_head_")


def _assert_close_to_reference(st_c, st_r):
    assert_close_to_reference(st_c, st_r, rtol=1e-12, atol=1e-13, names=COMPARED)


CASES = [
    # (policy, kernel, extra params, n, p, budget, k, stream options)
    ("rs++", "gaussian", {"gamma": 2.0}, 400, 3, (6, 9), 3, {}),
    ("fifo++", "gaussian", {"gamma": 2.0}, 400, 3, (6, 9), 3, {}),
    ("rs++", "gaussian", {"gamma": 0.5}, 300, 1, 5, 10, {"first_neg": 40}),
    ("fifo++", "poly", {"gamma": 0.5, "degree": 2, "coef0": 1.0}, 300, 4, 7, 2, {"dup": True}),
    ("rs++", "linear", {}, 300, 2, (4, 3), 1, {"pos_rate": 0.1}),
    ("fifo++", "gaussian", {"gamma": 1.0}, 200, 5, 1, 10, {}),
    ("rs++", "gaussian", {"gamma": 2.0}, 1100, 2, 10, 5, {}),        # passes a refresh of f
]


@pytest.mark.parametrize("policy, kernel, kp, n, p, budget, k, opts", CASES)
def test_cython_matches_reference(policy, kernel, kp, n, p, budget, k, opts):
    rng = np.random.default_rng(n + p)
    X, y = koil_stream(rng, n, p, **opts)
    model = KOIL(policy=policy, kernel=kernel, budget=budget, n_neighbors=k, eta=0.1, C=1.0,
                 random_state=3, **kp)
    st_c, st_r = _run_both(model, X, y)
    _assert_close_to_reference(st_c, st_r)
    budgets = np.array(model._layout()["budgets"])
    np.testing.assert_array_equal(st_c["n_buffer_"], budgets)      # both buffers got full
    np.testing.assert_allclose(st_c["buffer_scores_"],                 # cached f == gram @ alpha
                               st_c["gram_"] @ st_c["alpha_"], rtol=1e-10, atol=1e-12)
    assert np.all(st_c["n_class_seen_"] > budgets)                 # so replacements happened
    assert np.count_nonzero(st_c["alpha_"]) > 0


def test_cython_matches_reference_on_a_shuffled_order():
    rng = np.random.default_rng(11)
    X, y = koil_stream(rng, 300, 3)
    model = KOIL(budget=8, n_neighbors=4, gamma=3.0, random_state=1)
    st_c, st_r = _run_both(model, X, y, order=rng.permutation(300).astype(np.intp))
    _assert_close_to_reference(st_c, st_r)


def _mutant(old, new):
    """The reference module with one line changed (a mutant that the tests must catch)."""
    src = inspect.getsource(_koil_ref)
    assert old in src
    src = src.replace(old, new).replace("from ..kernels import", "from sosl.kernels import")
    module = types.ModuleType("koil_ref_mutant")
    module.__package__ = "sosl._core"          # the relative imports of the reference
    exec(compile(src, "koil_ref_mutant", "exec"), module.__dict__)
    return module


@pytest.mark.parametrize("old, new", [
    ("alpha[l] -= g ", "alpha[l] += g "),                                      # flipped sign
    ("f[filled] -= g * gram[filled, l]", "pass"),                              # f not updated
    ("alpha[cstar] += a_old", "pass"),                                        # no compensation
    ("alpha[filled] *= 1.0 - eta", "alpha[filled] *= 1.0"),                   # no decay
])
def test_mutant_reference_is_caught(old, new):
    rng = np.random.default_rng(5)
    X, y = koil_stream(rng, 300, 3)
    model = KOIL(policy="fifo++", budget=(6, 9), n_neighbors=3, eta=0.1, gamma=2.0, random_state=0)
    st_c, st_r = _run_both(model, X, y, ref_module=_mutant(old, new))
    with pytest.raises(AssertionError):
        _assert_close_to_reference(st_c, st_r)


def test_nearest_violators_are_selected():
    """One round by hand: the k nearest violating opposite SVs lose eta C each."""
    X = np.array([[0.0], [0.1], [0.5], [0.9], [0.2]])
    y = np.array([0, 0, 0, 0, 1])
    model = KOIL(budget=10, n_neighbors=2, eta=0.1, C=1.0, gamma=1.0, random_state=0)
    model.partial_fit(X[:4], y[:4], classes=[0, 1])
    before = model.alpha_.copy()
    model.partial_fit(X[4:], y[4:])
    # all four negatives violate (f = 0 for the positive's pairs); the 2 nearest to 0.2 are 0.1, 0.0
    delta = model.alpha_[:4] - 0.9 * before[:4]
    np.testing.assert_allclose(delta, [-0.1, -0.1, 0.0, 0.0], atol=1e-15)
    assert model.dual_coef_[-1] == pytest.approx(0.2)


def _csr_state(st, X):
    """The dense state ``st`` with its slots as sparse slots of width max row nnz of X."""
    Xs = sp.csr_matrix(X)
    B = st["alpha_"].shape[0]
    L = max(int(np.diff(Xs.indptr).max()), 1)
    out = copy.deepcopy({k: v for k, v in st.items() if k != "buffer_"})
    out.update(buffer_ind_=np.zeros((B, L), dtype=np.int32), buffer_val_=np.zeros((B, L)),
               buffer_nnz_=np.zeros(B, dtype=np.int32))
    return Xs, out


def _densified(st, p):
    B = st["alpha_"].shape[0]
    buf = np.zeros((B, p))
    for j in range(B):
        k = st["buffer_nnz_"][j]
        buf[j, st["buffer_ind_"][j, :k]] = st["buffer_val_"][j, :k]
    return buf


@pytest.mark.parametrize("policy, kernel, kp", [
    ("rs++", "gaussian", {"gamma": 1.5}), ("fifo++", "gaussian", {"gamma": 1.5}),
    ("fifo++", "poly", {"gamma": 0.5, "degree": 2, "coef0": 1.0}), ("rs++", "linear", {})])
def test_csr_pass_matches_reference_on_densified_rows(policy, kernel, kp):
    rng = np.random.default_rng(40)
    X, y = koil_sparse_stream(rng, 400, 12)
    model = KOIL(policy=policy, kernel=kernel, budget=(6, 9), n_neighbors=3, eta=0.1,
                 random_state=3, **kp)
    model._check_hyper(fitted=False)
    lay = model._layout()
    s = np.where(y == 1, 1.0, -1.0)
    order = np.arange(400, dtype=np.intp)
    st_r = model._init_state(12)
    st_r["t_"] = 0
    Xs, st_c = _csr_state(st_r, X)
    t_c = _koil.koil_pass_csr(*model._pass_args(st_c, Xs, s, order, lay))
    t_r = _koil_ref.koil_pass(*model._pass_args(st_r, X, s, order, lay))
    assert t_c == t_r == 400
    st_c["buffer_"] = _densified(st_c, 12)
    _assert_close_to_reference(st_c, st_r)
    assert np.all(st_c["n_class_seen_"] > np.array(lay["budgets"]))   # replacements happened
    assert np.count_nonzero(st_c["alpha_"]) > 0


def test_csr_pass_mutant_distance_is_caught(monkeypatch):
    """The reference with a Gaussian distance that drops the coordinates only x_t has."""
    rng = np.random.default_rng(41)
    X, y = koil_sparse_stream(rng, 300, 10)
    model = KOIL(policy="fifo++", budget=(6, 9), n_neighbors=3, eta=0.1, gamma=1.5,
                 random_state=0)
    model._check_hyper(fitted=False)
    lay = model._layout()
    s = np.where(y == 1, 1.0, -1.0)
    order = np.arange(300, dtype=np.intp)
    st_r = model._init_state(10)
    st_r["t_"] = 0
    Xs, st_c = _csr_state(st_r, X)
    _koil.koil_pass_csr(*model._pass_args(st_c, Xs, s, order, lay))
    st_c["buffer_"] = _densified(st_c, 10)
    good = copy.deepcopy(st_r)
    _koil_ref.koil_pass(*model._pass_args(good, X, s, order, lay))
    _assert_close_to_reference(st_c, good)
    original = _koil_ref.kernel_matrix

    def mutant_matrix(A, B, kernel="gaussian", gamma=1.0, degree=3, coef0=1.0):
        D = (A[:, None, :] - B[None, :, :]) * (A[:, None, :] != 0)      # x_t-only dropped
        if kernel != "gaussian":
            return original(A, B, kernel, gamma, degree, coef0)
        return np.exp(-gamma * np.einsum("ijk,ijk->ij", D, D))

    monkeypatch.setattr(_koil_ref, "kernel_matrix", mutant_matrix)
    bad = copy.deepcopy(st_r)
    _koil_ref.koil_pass(*model._pass_args(bad, X, s, order, lay))
    with pytest.raises(AssertionError):
        _assert_close_to_reference(st_c, bad)


def test_philox_uniforms_equal_an_advanced_fresh_generator():
    """The reused per-thread generator gives the stream of ``Philox(key=seed)`` advanced by
    t0 blocks (the definition); a counter one block off (the mutant) does not."""
    from sosl.koil import _philox_uniforms
    rng = np.random.default_rng(3)
    for _ in range(50):
        seed, t0, m = int(rng.integers(0, 2**31 - 1)), int(rng.integers(0, 10**6)), 3
        bitgen = np.random.Philox(key=seed)
        bitgen.advance(t0)
        want = np.random.Generator(bitgen).random(4 * m).reshape(m, 4)[:, :2]
        got = _philox_uniforms(seed, t0, m)
        np.testing.assert_array_equal(got, want)
        assert not np.array_equal(_philox_uniforms(seed, t0 + 1, m), want)
