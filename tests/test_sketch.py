"""SketchedOAUCM: reference == exact OAUC-M/S below the rank, core == reference, API behaviour."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from helpers import sketch_bundle, sketch_spec

from sosl import OAUCM, OAUCS
from sosl._core import _sketch
from sosl._core import _sketch_ref as ref
from sosl._core._codes import Loss, Schedule
from sosl.metrics import auc
from sosl.sketch import SketchedOAUCM

LOSS_M, LOSS_S = int(Loss.LOSS_M), int(Loss.LOSS_S)
INV, CONST = int(Schedule.STEP_INV_LAM_T), int(Schedule.STEP_CONSTANT)
FAMILIES = [ref.FAMILY_FD, ref.FAMILY_FD_DIAG]


def _fitted(model):
    """Copies of the fitted attributes (names ending in '_')."""
    return {k: np.copy(v) for k, v in vars(model).items() if k.endswith("_") and
            not k.startswith("_")}


def _state(p, r):
    return dict(w=np.zeros(p), xbar=np.zeros((2, p)), B=np.zeros((2, 2 * r, p)),
                nrows=np.zeros(2, dtype=np.int64), N=np.zeros(2, dtype=np.int64),
                dA=np.zeros((2, p)), dB=np.zeros((2, p)), delta=np.zeros(2))


def _args(st):
    return (st["w"], st["xbar"], st["B"], st["nrows"], st["N"], st["dA"], st["dB"], st["delta"])


def _reference(X, s, order, lam, eta, schedule, loss, family, r, pass_fn=ref.sketch_pass):
    st = _state(X.shape[1], r)
    t = pass_fn(X, s, order, *_args(st), 0, lam, eta, schedule, loss, family, r)
    return t, st


UNCAPPED = 2 ** 62


def _kernel_state(m, r, kcap):
    """Kernel state: slot arrays of capacity kcap, column arrays of capacity m."""
    st = _state(kcap, r)
    st.update(col=np.full(kcap, -1, dtype=np.int64), kt=np.zeros(1, dtype=np.int64),
              cnt=np.zeros(m, dtype=np.int64), slot=np.full(m, -1, dtype=np.int64),
              W=np.zeros(m), ep=np.zeros(m, dtype=np.int64), S=np.zeros((2, 2, m)),
              Pv=np.zeros((2, 3)), Qm=np.zeros((4, 3, 3)), RH=np.array([1.0, 0.0, 0.0]),
              epoch=np.zeros(1, dtype=np.int64))
    return st


def _kernel(X, s, order, lam, eta, schedule, loss, family, r, K=UNCAPPED, spare=3):
    """Typed pass on the CSR form; the raw kernel state (compact columns) and the map."""
    Xc = sp.csr_matrix(X)
    cmap = np.full(X.shape[1], -1, dtype=np.int64)
    m = _sketch.assign_columns(Xc.indptr, Xc.indices, order, cmap, 0)
    st = _kernel_state(max(m + spare, 1), r, max(min(m, K) + spare, 1))
    t = _sketch.sketch_pass(Xc.data, Xc.indices, Xc.indptr, s, order, cmap, m, sketch_bundle(st), 0,
                            sketch_spec(lam, eta, schedule, loss, family, r, K))
    return t, st, cmap, m


def _core(X, s, order, lam, eta, schedule, loss, family, r, spare=3):
    """Typed pass on the CSR form, state mapped back to original coordinates (uncapped:
    slot k holds compact column k)."""
    t, st, cmap, m = _kernel(X, s, order, lam, eta, schedule, loss, family, r, spare=spare)
    np.testing.assert_array_equal(st["slot"][:m], np.arange(m))
    assert st["kt"][0] == m and not st["Pv"].any() and not st["Qm"].any()
    p = X.shape[1]
    out = _state(p, r)
    seen = cmap >= 0
    for key in ("w", "xbar", "B", "dA", "dB"):
        out[key][..., seen] = st[key][..., cmap[seen]]
        assert not st[key][..., m:].any()        # spare capacity stays untouched
    for key in ("nrows", "N", "delta"):
        out[key] = st[key]
    return t, out


def _compare(c, r_, rtol=1e-12):
    for key in ("w", "xbar", "dA", "dB", "delta"):
        np.testing.assert_allclose(c[key], r_[key], rtol=rtol, atol=1e-13, err_msg=key)
    np.testing.assert_array_equal(c["nrows"], r_["nrows"])
    np.testing.assert_array_equal(c["N"], r_["N"])
    for k in (0, 1):   # a sketch is defined up to a rotation of its rows: compare B'B
        np.testing.assert_allclose(c["B"][k].T @ c["B"][k], r_["B"][k].T @ r_["B"][k],
                                   rtol=rtol, atol=1e-11, err_msg=f"B'B[{k}]")


def _streams():
    """Edge cases: sparse rows, one class for a while, duplicates, p = 1, constant, single."""
    rng = np.random.default_rng(0)
    out = []
    X = rng.normal(size=(240, 10)) * (rng.random((240, 10)) < 0.4)
    out.append(("sparse", X, np.where(X[:, 0] + 0.4 * rng.normal(size=240) > 0, 1.0, -1.0)))
    s = np.r_[np.ones(30), -np.ones(25), rng.choice([-1.0, 1.0], size=60)]
    out.append(("one-class-first", rng.normal(size=(115, 5)), s))
    Xd = np.repeat(rng.normal(size=(8, 4)), 10, axis=0)
    out.append(("duplicates", Xd, np.tile([1.0, -1.0, -1.0, 1.0], 20)))
    X1 = rng.normal(size=(90, 1))
    out.append(("p=1", X1, np.where(X1[:, 0] > 0.2, 1.0, -1.0)))
    out.append(("constant", np.ones((40, 3)), rng.choice([-1.0, 1.0], size=40)))
    out.append(("single", rng.normal(size=(1, 4)), np.ones(1)))
    return out


CONFIGS = [(0.1, 0.0, INV, LOSS_M), (0.01, 0.05, CONST, LOSS_M), (0.01, 0.02, CONST, LOSS_S)]


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("lam,eta,schedule,loss", CONFIGS)
def test_reference_equals_exact_learner_below_rank(lam, eta, schedule, loss, family):
    """No shrink (rank >= instances seen): the sketched reference is the exact OAUC-M / S."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(70, 6))
    s = np.where(X[:, 0] + 0.5 * rng.normal(size=70) > 0, 1.0, -1.0)
    y = (s > 0).astype(int)
    t, st = _reference(X, s, np.arange(70), lam, eta, schedule, loss, family, r=70)
    Est = OAUCM if loss == LOSS_M else OAUCS
    exact = Est(lam=lam, eta=None if schedule == INV else eta).fit(X, y)
    assert t == 70 and not st["delta"].any()
    np.testing.assert_allclose(st["w"], exact.coef_[0], rtol=1e-10, atol=1e-13)
    for k in (0, 1):
        np.testing.assert_allclose(st["B"][k].T @ st["B"][k] / st["N"][k],
                                   exact.covariances_[k], rtol=1e-10, atol=1e-13)
    assert np.abs(exact.coef_).max() > 1e-2


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("lam,eta,schedule,loss", CONFIGS)
@pytest.mark.parametrize("name,X,s", _streams(), ids=[c[0] for c in _streams()])
def test_core_equals_reference(name, X, s, lam, eta, schedule, loss, family):
    order = np.random.default_rng(1).permutation(X.shape[0]).astype(np.intp)
    r = 3
    t_c, c = _core(X, s, order, lam, eta, schedule, loss, family, r)
    t_r, rr = _reference(X, s, order, lam, eta, schedule, loss, family, r)
    assert t_c == t_r == X.shape[0]
    _compare(c, rr)
    if name in ("sparse", "one-class-first"):
        assert np.abs(c["w"]).max() > 1e-3 and (c["delta"] > 0).all()   # shrinks happened


def test_estimator_equals_exact_learner_below_rank():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 5)) * (rng.random((60, 5)) < 0.6)
    y = (X[:, 0] + 0.3 * rng.normal(size=60) > 0).astype(int)
    for loss, exact in (("m", OAUCM(lam=0.1)), ("s", OAUCS(lam=0.1, eta=0.02))):
        exact.fit(X, y)
        model = SketchedOAUCM(lam=0.1, eta=exact.eta, rank=60, loss=loss).fit(X, y)
        np.testing.assert_allclose(model.coef_, exact.coef_, rtol=1e-10, atol=1e-13)
        np.testing.assert_allclose(model.decision_function(X), exact.decision_function(X),
                                   rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(model.means_, exact.means_, rtol=1e-12, atol=1e-14)


def _mutant_add_row(x, c, xbar, B, nrows, N, dA, dB, delta, r):
    """add_row with the shrink threshold taken one eigenvalue too early (lam_{r-1})."""
    N[c] += 1
    n = float(N[c])
    z = np.sqrt((n - 1.0) / n) * (x - xbar[c])
    xbar[c] += (x - xbar[c]) / n
    if n == 1.0:
        return
    dA[c] += z * z
    B[c, nrows[c]] = z
    dB[c] += z * z
    nrows[c] += 1
    if nrows[c] == 2 * r:
        lam, U = np.linalg.eigh(B[c] @ B[c].T)
        lam, U = lam[::-1], U[:, ::-1]
        d = lam[r - 1]                                   # mutated: lam_{r-1} instead of lam_r
        f = np.sqrt(np.maximum(lam[:r] - d, 0.0) / np.maximum(lam[:r], 1e-300))
        B[c, :r] = (f[:, None] * U[:, :r].T) @ B[c]
        B[c, r:] = 0.0
        delta[c] += d
        nrows[c] = r
        dB[c] = np.einsum("ij,ij->j", B[c, :r], B[c, :r])


def test_mutant_is_caught(monkeypatch):
    X, s = _streams()[0][1:]
    order = np.arange(X.shape[0], dtype=np.intp)
    _, c = _core(X, s, order, 0.01, 0.05, CONST, LOSS_M, ref.FAMILY_FD, 3)
    monkeypatch.setattr(ref, "add_row", _mutant_add_row)
    _, m = _reference(X, s, order, 0.01, 0.05, CONST, LOSS_M, ref.FAMILY_FD, 3)
    with pytest.raises(AssertionError):
        _compare(c, m)


def test_frequent_directions_guarantee():
    """||A'A - B'B||_2 <= sum(delta) <= ||A - A_k||_F^2 / (r + 1 - k) for every k <= r."""
    rng = np.random.default_rng(4)
    p, r = 12, 4
    X = rng.normal(size=(150, p)) @ np.diag(np.linspace(3, 0.1, p))
    s = -np.ones(150)
    t, st = _reference(X, s, np.arange(150), 0.1, 0.01, CONST, LOSS_M, ref.FAMILY_FD, r)
    Xc = X - X.mean(axis=0)                         # A'A = centered scatter of the class
    err = np.linalg.norm(Xc.T @ Xc - st["B"][0].T @ st["B"][0], 2)
    sv = np.linalg.svd(Xc, compute_uv=False) ** 2
    assert 0 < err <= st["delta"][0] * (1 + 1e-12)
    for k in range(r + 1):
        assert st["delta"][0] <= sv[k:].sum() / (r + 1 - k) * (1 + 1e-12)


def _data(seed=5, n=120, p=30):
    rng = np.random.default_rng(seed)
    X = sp.random(n, p, density=0.2, random_state=seed, format="csr")
    y = (X[:, :5].sum(axis=1).A1 + 0.1 * rng.normal(size=n) > 0.1).astype(int)
    return X, y


@pytest.mark.parametrize("sketch", ["fd", "fd_diag"])
def test_sparse_and_dense_give_equal_models(sketch):
    X, y = _data()
    dense = SketchedOAUCM(rank=4, sketch=sketch).fit(X.toarray(), y)
    for Xs in (X, X.tocsc(), X.tocoo()):
        model = SketchedOAUCM(rank=4, sketch=sketch).fit(Xs, y)
        np.testing.assert_allclose(model.coef_, dense.coef_, rtol=1e-12, atol=0)
        np.testing.assert_allclose(model.decision_function(Xs),
                                   dense.decision_function(X.toarray()), rtol=1e-12, atol=1e-14)
    assert (dense.shrinkage_ > 0).all() and np.abs(dense.coef_).max() > 1e-3


def test_bad_input_leaves_state_unchanged():
    X, y = _data()
    model = SketchedOAUCM(rank=4).fit(X, y)
    before = _fitted(model)
    bad = X.toarray()
    bad[3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        model.partial_fit(bad, y)
    with pytest.raises(ValueError, match="features"):
        model.partial_fit(X[:, :5], y)
    with pytest.raises(ValueError, match="not in classes"):
        model.partial_fit(X[:3], np.array([0, 1, 7]))
    with pytest.raises(ValueError, match="schedule changed"):
        model.set_params(eta=0.1).partial_fit(X, y)
    model.set_params(eta=None)
    with pytest.raises(ValueError, match="rank changed from 4 to 5"):
        model.set_params(rank=5).partial_fit(X, y)
    model.set_params(rank=4)
    with pytest.raises(ValueError, match="lam"):
        model.set_params(lam=-1.0).partial_fit(X, y)
    model.set_params(lam=1e-2)
    with pytest.raises(ValueError, match="lam must be > 0 when eta=None"):
        SketchedOAUCM(lam=0.0).fit(X, y)
    after = _fitted(model)
    assert after.keys() == before.keys()
    for key, value in before.items():
        np.testing.assert_array_equal(after[key], value, err_msg=key)


def test_memory_follows_active_columns_not_p():
    """At p = 2^20 the state holds O(r m) floats for the m columns seen, not O(r p)."""
    rng = np.random.default_rng(6)
    p, n = 2 ** 20, 200
    cols = rng.choice(p, size=300, replace=False)
    rows = np.repeat(np.arange(n), 5)
    X = sp.csr_matrix((rng.random(n * 5), (rows, rng.choice(cols, size=n * 5))), shape=(n, p))
    y = (X[:, cols[:40]].sum(axis=1).A1 > 0).astype(int)
    model = SketchedOAUCM(rank=8).fit(X, y)
    assert model.n_active_ <= 300 and model.sketches_.shape[-1] <= 600
    assert auc(y, model.decision_function(X)) > 0.8


def test_learn_one_equals_partial_fit():
    X, y = _data()
    a = SketchedOAUCM(rank=4, lam=0.01, eta=0.1).partial_fit(X[:10], y[:10], classes=[0, 1])
    b = pickle.loads(pickle.dumps(a))
    for i in range(10, 40):
        a.partial_fit(X[i], y[i:i + 1])
        b.learn_one(X[i], y[i])            # one CSR row
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert b.score_one(X[0]) == pytest.approx(b.decision_function(X[:1])[0], rel=1e-12)


def test_diverging_pass_leaves_the_fitted_model_unchanged():
    X, y = _data()
    model = SketchedOAUCM(rank=4).fit(X, y)
    before = _fitted(model)
    with pytest.raises(FloatingPointError, match="non-finite"):
        model.set_params(eta=1e300, lam=1e10).fit(X * 1e200, y)
    with pytest.raises(FloatingPointError, match="non-finite"):
        SketchedOAUCM(rank=4, eta=1e300, lam=1e10).partial_fit(X * 1e200, y)
    for key, value in before.items():
        np.testing.assert_array_equal(getattr(model, key), value, err_msg=key)


def test_failed_one_row_call_restores_the_sketch_rows_it_wrote():
    """A one-row call saves only the sketch rows it may write (one per class, or a whole
    class's sketch when the row fills it and a shrink follows). Rows so large that the
    round's statistics overflow, at every position of the sketch's fill level (shrinks
    included), leave every fitted array bit for bit as it was; the model then goes on
    exactly as one that never saw them."""
    X, y = _data()
    r = 3
    model = SketchedOAUCM(rank=r, lam=0.01, eta=0.05, max_columns=None).partial_fit(
        X[:20], y[:20], classes=[0, 1])
    twin = pickle.loads(pickle.dumps(model))
    saved = model._backup_names(X[20])["sketches_"]
    assert isinstance(saved, tuple) and saved[0].shape[0] <= 2 * r + 1
    shrinks = 0
    for i in range(20, 20 + 4 * r + 2):
        before = _fitted(model)
        nr = model.sketch_rows_.copy()
        big = X[i] * 1e200 + sp.csr_matrix(np.full((1, X.shape[1]), 1e200))
        with pytest.raises(FloatingPointError, match="non-finite"):
            model.learn_one(big, y[i])
        after = _fitted(model)
        assert after.keys() == before.keys()
        for key, value in before.items():
            np.testing.assert_array_equal(after[key], value, err_msg=key)
        model.learn_one(X[i], y[i])
        twin.learn_one(X[i], y[i])
        shrinks += int(model.sketch_rows_[int(y[i])] < nr[int(y[i])])
    assert shrinks >= 2                                            # shrinks were at stake
    for key, value in _fitted(twin).items():
        np.testing.assert_array_equal(getattr(model, key), value, err_msg=key)
    # a mutant that saves no sketch row is caught: the failed call leaves a written row
    model._sketch_rows_at_stake = lambda: (np.zeros(0, np.intp), np.zeros(0, np.intp))
    before = model.sketches_.copy()
    with pytest.raises(FloatingPointError):
        model.learn_one(X[0] * 1e200 + sp.csr_matrix(np.full((1, X.shape[1]), 1e200)), y[0])
    assert not np.array_equal(model.sketches_, before)
