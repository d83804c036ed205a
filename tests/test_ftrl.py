"""FTRL-AUC: typed core == NumPy reference, mutant, O(k) locality, API behaviour."""


import numpy as np
import pytest
import scipy.sparse as sp

from sosl._core import _ftrl
from sosl._core import _ftrl_ref as ref
from sosl.ftrl import FTRLAUC
from sosl.metrics import auc


def _fitted(model):
    """Copies of the fitted attributes (names ending in '_')."""
    return {k: np.copy(v) for k, v in vars(model).items() if k.endswith("_") and
            not k.startswith("_")}


def _state(p):
    return dict(w=np.zeros(p), z=np.zeros(p), nsq=np.zeros(p), N=np.zeros(2, dtype=np.int64),
                score=np.zeros(2))


def _args(st):
    return (st["w"], st["z"], st["nsq"], st["N"], st["score"])


def _reference(X, s, order, params, pass_fn=ref.ftrl_pass):
    st = _state(X.shape[1])
    return pass_fn(X, s, order, *_args(st), 0, *params), st


def _kernel(X, st, order, s, params, t0=0, undo=None):
    """The typed pass on CSR ``X`` and the state dict ``st`` (w, z, nsq as the columns of
    one (p, 3) array, as the kernel takes them; written back into ``st``)."""
    wzn = np.column_stack((st["w"], st["z"], st["nsq"]))
    t, bad = _ftrl.ftrl_pass(X.data, X.indices, X.indptr, s, order, wzn, st["N"],
                             st["score"], t0, *params, undo)
    st["w"][:], st["z"][:], st["nsq"][:] = wzn.T
    return t, bad


def _core(X, s, order, params):
    st = _state(X.shape[1])
    t, bad = _kernel(sp.csr_matrix(X), st, order, s, params)
    assert bad == -1
    return t, st


def _streams():
    rng = np.random.default_rng(0)
    out = []
    X = rng.normal(size=(300, 20)) * (rng.random((300, 20)) < 0.2)
    out.append(("sparse", X, np.where(X[:, :3].sum(axis=1) + 0.3 * rng.normal(size=300) > 0,
                                      1.0, -1.0)))
    s = np.r_[np.ones(30), -np.ones(30), rng.choice([-1.0, 1.0], size=60)]
    out.append(("one-class-first", rng.normal(size=(120, 4)), s))
    X1 = rng.normal(size=(80, 1))
    out.append(("p=1", X1, np.where(X1[:, 0] > 0.1, 1.0, -1.0)))
    out.append(("single", rng.normal(size=(1, 3)), -np.ones(1)))
    out.append(("empty rows", np.zeros((20, 3)), rng.choice([-1.0, 1.0], size=20)))
    return out


PARAMS = [(0.0, 0.0, 1.0, 0.1), (0.05, 0.01, 0.5, 0.5), (0.0, 1.0, 0.0, 1.0)]


@pytest.mark.parametrize("params", PARAMS)
@pytest.mark.parametrize("name,X,s", _streams(), ids=[c[0] for c in _streams()])
def test_core_equals_reference(name, X, s, params):
    order = np.random.default_rng(1).permutation(X.shape[0]).astype(np.intp)
    t_c, c = _core(X, s, order, params)
    t_r, r = _reference(X, s, order, params)
    assert t_c == t_r == X.shape[0]
    for key in c:
        np.testing.assert_allclose(c[key], r[key], rtol=1e-12, atol=1e-14, err_msg=key)
    if name in ("sparse", "one-class-first"):
        assert np.abs(c["w"]).max() > 1e-3


def _mutant_pass(X, s, order, w, z, nsq, N, score, t0, l1, l2, beta, gamma):
    """The reference with the margin sign of (F2) flipped for the negatives."""
    t = t0
    for i in order:
        t += 1
        x, y = X[i], s[i]
        c_own = 1 if y > 0 else 0
        f = float(w @ x)
        N[c_own] += 1
        score[c_own] += (f - score[c_own]) / N[c_own]
        p = N[1] / (N[0] + N[1])
        c = 2.0 * (1.0 - p) * (f - score[0] - 1.0) if y > 0 else 2.0 * p * (f - score[1] - 1.0)
        g = c * x
        sigma = (np.sqrt(nsq + g * g) - np.sqrt(nsq)) / gamma
        z += g - sigma * w
        nsq += g * g
        w[:] = ref.ftrl_weights(z, nsq, l1, l2, beta, gamma)
    return t


def test_mutant_is_caught():
    X, s = _streams()[0][1:]
    order = np.arange(X.shape[0], dtype=np.intp)
    _, c = _core(X, s, order, PARAMS[1])
    _, m = _reference(X, s, order, PARAMS[1], pass_fn=_mutant_pass)
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(c["w"], m["w"], rtol=1e-12, atol=1e-14)


def test_round_touches_only_the_rows_support():
    """O(k): coordinates outside the visited rows' support keep their state exactly."""
    rng = np.random.default_rng(2)
    X = sp.random(50, 400, density=0.02, random_state=2, format="csr")
    s = rng.choice([-1.0, 1.0], size=50)
    st = _state(400)
    st["z"][:] = rng.normal(size=400)
    st["w"][:] = ref.ftrl_weights(st["z"], st["nsq"], 0.0, 0.0, 1.0, 0.1)
    before = {k: v.copy() for k, v in st.items()}
    order = np.arange(50, dtype=np.intp)
    _kernel(X, st, order, s, (0.0, 0.0, 1.0, 0.1))
    untouched = np.setdiff1d(np.arange(400), X.indices)
    for key in ("w", "z", "nsq"):
        np.testing.assert_array_equal(st[key][untouched], before[key][untouched])
        assert not np.array_equal(st[key][X.indices], before[key][X.indices])


def test_l1_gives_sparse_weights_and_learns():
    X = sp.random(600, 2000, density=0.01, random_state=3, format="csr")
    y = (X[:, :40].sum(axis=1).A1 > 0).astype(int)
    dense_w = FTRLAUC(gamma=0.5).fit(X, y)
    sparse_w = FTRLAUC(gamma=0.5, l1=1.0).fit(X, y)
    assert auc(y, dense_w.decision_function(X)) > 0.9
    assert auc(y, sparse_w.decision_function(X)) > 0.9
    assert np.count_nonzero(sparse_w.coef_) < 0.5 * np.count_nonzero(dense_w.coef_)


def test_sparse_and_dense_give_equal_models():
    X = sp.random(150, 40, density=0.15, random_state=4, format="csr")
    y = (X[:, :5].sum(axis=1).A1 > 0.1).astype(int)
    dense = FTRLAUC(gamma=0.3, l1=0.01).fit(X.toarray(), y)
    for Xs in (X, X.tocsc(), X.tocoo()):
        model = FTRLAUC(gamma=0.3, l1=0.01).fit(Xs, y)
        np.testing.assert_allclose(model.coef_, dense.coef_, rtol=1e-12, atol=0)
        np.testing.assert_allclose(model.decision_function(Xs),
                                   dense.decision_function(X.toarray()), rtol=1e-12, atol=1e-14)
    assert np.abs(dense.coef_).max() > 1e-3


def _bytes(m):
    return {k: (v.tobytes() if isinstance(v, np.ndarray) else v) for k, v in vars(m).items()
            if k not in ("_params_ok", "_lock_")}


@pytest.mark.parametrize("params", [{}, {"l1": 0.05, "l2": 0.1, "gamma": 0.5}])
def test_learn_one_on_csr_rows_in_place_equals_partial_fit(params):
    """One CSR row at a time on the live arrays (no copy of the p-vectors) == the general
    one-row partial_fit, every attribute bit for bit, also with empty rows."""
    from sosl._base import BaseOnlineAUC
    rng = np.random.default_rng(5)
    X = sp.random(150, 400, density=0.02, random_state=5, format="csr")
    X = (sp.diags((np.arange(150) != 7).astype(float)) @ X).tocsr()   # row 7 empty
    X.eliminate_zeros()
    assert X[7].nnz == 0
    y = (rng.random(150) < 0.3).astype(int)
    a, b = FTRLAUC(**params), FTRLAUC(**params)
    a.partial_fit(X[:5], y[:5], classes=[0, 1])
    b.partial_fit(X[:5], y[:5], classes=[0, 1])
    z = a.z_
    for i in range(5, 150):
        a.learn_one(X[i], y[i])
        BaseOnlineAUC.partial_fit(b, X[i], y[i:i + 1])
        assert _bytes(a) == _bytes(b), i
    assert a.z_ is z                             # updated in place


def test_learn_one_in_place_restores_the_row_columns_when_it_overflows():
    """A row near 1e300 overflows the round after it wrote the weights, z, the squared
    gradients and the class statistics: all of it is restored and the error reported."""
    X = sp.random(60, 50, density=0.2, random_state=6, format="csr")
    y = (np.arange(60) % 3 == 0).astype(int)
    m = FTRLAUC().fit(X, y)
    before = _bytes(m)
    big = sp.csr_matrix(X[1] * 1e300)
    with pytest.raises(FloatingPointError, match="non-finite"):
        m.learn_one(big, y[1])
    assert _bytes(m) == before


@pytest.mark.parametrize("params", [{}, {"l1": 0.05, "l2": 0.1, "gamma": 0.5}])
def test_learn_one_on_dense_rows_in_place_equals_partial_fit(params, monkeypatch):
    """A dense float64 row takes the in-place path (its non-zero entries, as the general
    path's CSR conversion keeps them) == the general one-row partial_fit, every attribute
    bit for bit, with zeros, -0.0 and an all-zero row; the mutant (the entries in reversed
    order, which changes how the round sums the score) is caught."""
    import sosl.ftrl as ftrl_mod
    from sosl._base import BaseOnlineAUC
    from sosl._input import _DenseRow
    rng = np.random.default_rng(8)
    X = rng.normal(size=(160, 20)) * (rng.random((160, 20)) < 0.5)
    X[3, 4] = -0.0
    X[9] = 0.0
    y = (X[:, 0] + X[:, 1] + 0.3 * rng.normal(size=160) > 0).astype(int)
    a, b = FTRLAUC(**params), FTRLAUC(**params)
    a.partial_fit(X[:5], y[:5], classes=[0, 1])
    b.partial_fit(X[:5], y[:5], classes=[0, 1])
    played = []
    real = FTRLAUC._play
    monkeypatch.setattr(FTRLAUC, "_play", lambda self, st, R, s, o: played.append(
        type(R).__name__) or real(self, st, R, s, o))
    z = a.z_
    for i in range(5, 160):
        a.learn_one(X[i], y[i])
        BaseOnlineAUC.partial_fit(b, X[i:i + 1], y[i:i + 1])
        assert _bytes(a) == _bytes(b), i
    assert a.z_ is z and played.count("_DenseRow") == 155     # in place, the dense branch

    class Reversed(_DenseRow):
        def __init__(self, x):
            super().__init__(x)
            self.data, self.indices = self.data[::-1].copy(), self.indices[::-1].copy()
    monkeypatch.setattr(ftrl_mod, "_DenseRow", Reversed)
    c = FTRLAUC(**params)
    c.partial_fit(X[:5], y[:5], classes=[0, 1])
    for i in range(5, 160):
        c.learn_one(X[i], y[i])
    assert _bytes(c) != _bytes(b)


def test_learn_one_dense_bad_row_leaves_the_model_unchanged():
    rng = np.random.default_rng(9)
    X = rng.normal(size=(50, 6))
    y = (X[:, 0] > 0).astype(int)
    m = FTRLAUC().fit(X, y)
    before = _bytes(m)
    for bad in (np.nan, np.inf):
        x = X[0].copy()
        x[2] = bad
        with pytest.raises(ValueError, match="NaN or infinity"):
            m.learn_one(x, y[0])
        assert _bytes(m) == before
    with pytest.raises(ValueError, match="shape"):
        m.learn_one(X[0, :4], y[0])
    assert _bytes(m) == before
