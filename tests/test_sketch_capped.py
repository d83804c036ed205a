"""SketchedOAUCM with a bounded tracked set (max_columns): core == reference with promotions,
the cap that covers the data == the uncapped learner == the exact one, API behaviour."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from helpers import sketch_bundle, sketch_spec

from sosl import OAUCM
from sosl._core import _sketch
from sosl._core import _sketch_ref as ref
from sosl._core._codes import Loss, Schedule
from sosl.metrics import auc
from sosl.sketch import SketchedOAUCM

LOSS_M, LOSS_S = int(Loss.LOSS_M), int(Loss.LOSS_S)
INV, CONST = int(Schedule.STEP_INV_LAM_T), int(Schedule.STEP_CONSTANT)
CONFIGS = [(0.1, 0.0, INV, LOSS_M), (0.01, 0.05, CONST, LOSS_M), (0.01, 0.02, CONST, LOSS_S)]
# lazy-weight edge cases: rho = 1 - eta lam = 0 (a new epoch every round) and rho = 0.05
# (the scale leaves [1e-100, 1e100] within ~80 rounds and is folded into the weights)
EDGE_CONFIGS = [(1.0, 1.0, CONST, LOSS_M), (0.5, 1.9, CONST, LOSS_M)]
FAMILIES = [ref.FAMILY_FD, ref.FAMILY_FD_DIAG]
SLOT_KEYS = ("w", "xbar", "dA", "dB")
COLUMN_KEYS = ("cnt", "slot", "W", "ep", "S")


def _fitted(model):
    return {k: np.copy(v) for k, v in vars(model).items() if k.endswith("_") and
            not k.startswith("_")}


def _stream(seed=0, n=260, p=24):
    """Sparse rows whose column frequencies differ by orders (a Zipf-like head and a long
    tail), with a first stretch of rows holding only tail columns, so that the first-come
    slots go to rare columns and promotions must follow."""
    rng = np.random.default_rng(seed)
    freq = 0.9 / np.arange(1, p + 1) ** 1.1
    X = rng.normal(size=(n, p)) * (rng.random((n, p)) < freq[rng.permutation(p)])
    X[:12] = 0.0
    X[:12, p - 6:] = rng.normal(size=(12, 6)) * (rng.random((12, 6)) < 0.5)
    X[5, 0] = 1.5
    s = np.where(X[:, :4].sum(axis=1) + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    s[:8] = -1.0                                                     # one class for a while
    return X, s


def _kernel_run(X, s, order, lam, eta, schedule, loss, family, r, K):
    """Typed pass; state mapped to the reference's layout (original column numbers)."""
    Xc = sp.csr_matrix(X)
    p = X.shape[1]
    cmap = np.full(p, -1, dtype=np.int64)
    m = _sketch.assign_columns(Xc.indptr, Xc.indices, order, cmap, 0)
    st = ref.capped_state(m + 2, r, min(m, K) + 2)            # spare capacity on both axes
    t = _sketch.sketch_pass(Xc.data, Xc.indices, Xc.indptr, s, order, cmap, m, sketch_bundle(st), 0,
                            sketch_spec(lam, eta, schedule, loss, family, r, K))
    for key in SLOT_KEYS:
        assert not st[key][..., min(m, K):].any()                  # spare slots untouched
    orig = np.empty(m, dtype=np.int64)
    seen = cmap >= 0
    orig[cmap[seen]] = np.flatnonzero(seen)
    out = ref.capped_state(p, r, min(m, K) + 2)
    for key in SLOT_KEYS + ("B", "nrows", "N", "delta", "kt", "Pv", "Qm", "RH", "epoch"):
        out[key] = st[key]
    out["col"] = np.where(st["col"] >= 0, orig[np.maximum(st["col"], 0)], -1)
    for key in COLUMN_KEYS:
        out[key][..., seen] = st[key][..., cmap[seen]]
    return t, out


def _ref_run(X, s, order, lam, eta, schedule, loss, family, r, K, kcap):
    st = ref.capped_state(X.shape[1], r, kcap)
    t = ref.capped_pass(X, s, order, st, 0, lam, eta, schedule, loss, family, r, K)
    return t, st


def _weights(st):
    """Current weight of every column (tracked: slot weight; untracked: lazy weight)."""
    w = np.array([ref.weight_of(j, st) for j in range(st["cnt"].shape[0])])
    w[st["col"][:st["kt"][0]]] = st["w"][:st["kt"][0]]
    return w


def _compare(c, r_, rtol=1e-12):
    for key in SLOT_KEYS + ("delta", "S", "RH"):
        np.testing.assert_allclose(c[key], r_[key], rtol=rtol, atol=1e-13, err_msg=key)
    # the lazy bases W and the sums Pv, Qm are compared through what they define: the
    # current weights, and P, Q at the current (R, H)
    np.testing.assert_allclose(_weights(c), _weights(r_), rtol=rtol, atol=1e-13, err_msg="w")
    h = np.r_[1.0, r_["RH"][1:]]
    for st in (c, r_):
        st["P"] = st["RH"][0] * (st["Pv"] @ h)
        st["Q"] = st["RH"][0] ** 2 * np.einsum("a,cab,b->c", h, st["Qm"], h)
    for key in ("P", "Q"):
        scale = max(np.abs(r_[key]).max(), 1e-300)
        np.testing.assert_allclose(c[key], r_[key], rtol=rtol, atol=1e-12 * scale, err_msg=key)
    for key in ("nrows", "N", "col", "kt", "cnt", "slot", "epoch"):
        np.testing.assert_array_equal(c[key], r_[key], err_msg=key)
    for k in (0, 1):
        np.testing.assert_allclose(c["B"][k].T @ c["B"][k], r_["B"][k].T @ r_["B"][k],
                                   rtol=rtol, atol=1e-11, err_msg=f"B'B[{k}]")


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("lam,eta,schedule,loss", CONFIGS + EDGE_CONFIGS)
@pytest.mark.parametrize("K", [1, 5])
def test_core_equals_reference_with_promotions(K, lam, eta, schedule, loss, family):
    X, s = _stream()
    order = np.random.default_rng(1).permutation(X.shape[0]).astype(np.intp)
    order = np.r_[np.arange(12), order[order >= 12]].astype(np.intp)   # tail rows first
    r = 2
    t_c, c = _kernel_run(X, s, order, lam, eta, schedule, loss, family, r, K)
    t_r, rr = _ref_run(X, s, order, lam, eta, schedule, loss, family, r, K, c["w"].shape[0])
    assert t_c == t_r == X.shape[0]
    _compare(c, rr)
    # the cap was at work: slots full, untracked columns with weights and sums, a tracked
    # set that is not the first-come one (promotions happened), shrinks
    assert rr["kt"][0] == K and (rr["slot"] < 0).sum() > 5
    assert np.abs(_weights(rr)[rr["slot"] < 0]).max() > 1e-3 and np.abs(rr["P"]).max() > 1e-6
    if (lam, eta) == EDGE_CONFIGS[0][:2]:
        assert rr["epoch"][0] > 100                                    # a new epoch per round
    if (lam, eta) == EDGE_CONFIGS[1][:2]:      # 0.05^260 underflows: rescaled, no epoch
        assert rr["epoch"][0] == 0 and 1e-100 <= abs(rr["RH"][0]) <= 1e100
    first_come = [j for j in dict.fromkeys(np.flatnonzero(X[order].any(axis=0)))][:K]
    assert set(rr["col"][:K]) != set(first_come)
    assert (rr["delta"] > 0).any() or K == 1


def _mutant_untrack(k, st):
    """_untrack that forgets the scatter of the leaving column (S2 = N xbar^2 only)."""
    st["dA"][:, k] = 0.0
    _ORIGINAL_UNTRACK(k, st)


_ORIGINAL_UNTRACK = ref._untrack


def test_mutant_is_caught(monkeypatch):
    X, s = _stream()
    order = np.arange(X.shape[0], dtype=np.intp)
    args = (0.01, 0.05, CONST, LOSS_M, ref.FAMILY_FD_DIAG, 2, 4)
    _, c = _kernel_run(X, s, order, *args)
    _, good = _ref_run(X, s, order, *args, c["w"].shape[0])
    _compare(c, good)
    monkeypatch.setattr(ref, "_untrack", _mutant_untrack)
    _, bad = _ref_run(X, s, order, *args, c["w"].shape[0])
    with pytest.raises(AssertionError):
        _compare(c, bad)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("lam,eta,schedule,loss", CONFIGS)
def test_reference_cap_covering_the_data_is_the_uncapped_reference(lam, eta, schedule, loss,
                                                                    family):
    """K >= the columns seen: every column tracked in first-come order, the pass is
    sketch_pass (slot k = the k-th column to appear)."""
    X, s = _stream(seed=3)
    order = np.random.default_rng(2).permutation(X.shape[0]).astype(np.intp)
    p, r = X.shape[1], 3
    m = int(X.any(axis=0).sum())
    st = ref.capped_state(p, r, m)
    ref.capped_pass(X, s, order, st, 0, lam, eta, schedule, loss, family, r, m)
    full = dict(w=np.zeros(p), xbar=np.zeros((2, p)), B=np.zeros((2, 2 * r, p)),
                nrows=np.zeros(2, dtype=np.int64), N=np.zeros(2, dtype=np.int64),
                dA=np.zeros((2, p)), dB=np.zeros((2, p)), delta=np.zeros(2))
    ref.sketch_pass(X, s, order, full["w"], full["xbar"], full["B"], full["nrows"],
                    full["N"], full["dA"], full["dB"], full["delta"], 0, lam, eta, schedule,
                    loss, family, r)
    col = st["col"]
    assert st["kt"][0] == m and (col >= 0).all() and not st["Pv"].any()
    for key in ("w", "xbar", "dA", "dB"):
        np.testing.assert_allclose(st[key], full[key][..., col], rtol=1e-12, atol=1e-14,
                                   err_msg=key)
    for k in (0, 1):
        Bc = st["B"][k]
        Bf = full["B"][k][:, col]
        np.testing.assert_allclose(Bc.T @ Bc, Bf.T @ Bf, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(st["delta"], full["delta"], rtol=1e-12)
    assert (full["delta"] > 0).all() and np.abs(full["w"]).max() > 1e-3
    # negative control: a cap one column short of the data is no longer the uncapped pass
    short = ref.capped_state(p, r, m - 1)
    ref.capped_pass(X, s, order, short, 0, lam, eta, schedule, loss, family, r, m - 1)
    w_short = np.array([ref.weight_of(j, short) for j in range(p)])
    w_short[short["col"]] = short["w"]
    w_full = np.zeros(p)
    w_full[col] = st["w"]
    assert not np.allclose(w_short, full["w"], rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(w_full, full["w"], rtol=1e-12, atol=1e-14)


def _sparse_data(seed=5, n=150, p=40):
    X, s = _stream(seed, n, p)
    return sp.csr_matrix(X), (s > 0).astype(int)


@pytest.mark.parametrize("loss", ["m", "s"])
def test_cap_covering_the_data_equals_uncapped_and_exact(loss):
    """max_columns >= distinct columns: the model is the uncapped one bit for bit; with the
    rank also >= the instances it is the exact OAUC-M/OAUC-S (as without a cap)."""
    X, y = _sparse_data()
    m = int((X.getnnz(axis=0) > 0).sum())
    eta = None if loss == "m" else 0.02
    for rank in (3, X.shape[0]):
        capped = SketchedOAUCM(lam=0.1, eta=eta, rank=rank, loss=loss, max_columns=m).fit(X, y)
        free = SketchedOAUCM(lam=0.1, eta=eta, rank=rank, loss=loss,
                             max_columns=None).fit(X, y)
        assert capped.n_slots_ == m and not capped.untracked_quad_.any()
        np.testing.assert_array_equal(capped.coef_, free.coef_)
        np.testing.assert_array_equal(capped.decision_function(X), free.decision_function(X))
    from sosl import OAUCS
    exact = (OAUCM(lam=0.1) if loss == "m" else OAUCS(lam=0.1, eta=eta)).fit(X.toarray(), y)
    np.testing.assert_allclose(capped.coef_, exact.coef_, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(capped.decision_function(X), exact.decision_function(X.toarray()),
                               rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(capped.means_, exact.means_, rtol=1e-12, atol=1e-14)
    assert np.abs(exact.coef_).max() > 1e-2


def test_estimator_equals_reference_under_the_cap():
    """coef_, means_, intercept_ of a capped model == the reference state (original
    coordinates): tracked slots and untracked lazy weights brought up to date."""
    X, y = _sparse_data()
    K, r = 6, 2
    model = SketchedOAUCM(lam=0.01, eta=0.05, rank=r, max_columns=K).fit(X, y)
    s = np.where(y == 1, 1.0, -1.0)
    st = ref.capped_state(X.shape[1], r, K)
    t = ref.capped_pass(X.toarray(), s, np.arange(X.shape[0], dtype=np.intp), st, 0, 0.01,
                        0.05, CONST, LOSS_M, ref.FAMILY_FD_DIAG, r, K)
    assert t == X.shape[0]
    w = _weights(st)
    mean = st["S"][0] / st["N"][:, None]
    mean[:, st["col"]] = st["xbar"]
    assert model.n_slots_ == K and (st["slot"] < 0).sum() > 10
    np.testing.assert_allclose(model.coef_[0], w, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(model.means_, mean, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(model.intercept_, -0.5 * w @ mean.sum(axis=0), rtol=1e-10)
    np.testing.assert_allclose(model.decision_function(X), X @ w + model.intercept_,
                               rtol=1e-10, atol=1e-12)


def test_capped_fit_equals_partial_fit_learn_one_and_pickle():
    X, y = _sparse_data()
    kw = dict(rank=2, lam=0.01, eta=0.1, max_columns=5)
    full = SketchedOAUCM(**kw).fit(X, y)
    model = SketchedOAUCM(**kw)
    for lo, hi in ((0, 1), (1, 17), (17, 60)):
        model.partial_fit(X[lo:hi], y[lo:hi], classes=[0, 1])
    model = pickle.loads(pickle.dumps(model))
    for i in range(60, 90):
        model.learn_one(X[i], y[i])
    model.partial_fit(X[90:], y[90:])
    np.testing.assert_allclose(model.coef_, full.coef_, rtol=1e-12, atol=1e-15)
    assert model.t_ == full.t_ == X.shape[0] and (full.column_slots_[:full.n_active_] < 0).any()


def test_failed_one_row_call_in_a_full_capped_model_leaves_it_unchanged():
    """A full tracked set lets a row promote a column (zeroing a slot column of the
    sketches): such a call copies the sketches, and a failure leaves every array as it was."""
    X, y = _sparse_data()
    model = SketchedOAUCM(rank=2, lam=0.01, eta=0.05, max_columns=4).fit(X[:100], y[:100])
    twin = pickle.loads(pickle.dumps(model))
    assert model.n_slots_ == 4
    before = _fitted(model)
    untracked = np.flatnonzero(model.column_map_ >= 0)
    untracked = untracked[model.column_slots_[model.column_map_[untracked]] < 0]
    big = sp.csr_matrix((np.full(untracked.size, 1e200), (np.zeros(untracked.size, int),
                                                          untracked)), shape=(1, X.shape[1]))
    with pytest.raises(FloatingPointError, match="non-finite"):
        model.learn_one(big, 1)
    for key, value in before.items():
        np.testing.assert_array_equal(getattr(model, key), value, err_msg=key)
    for i in range(100, 150):
        model.learn_one(X[i], y[i])
        twin.partial_fit(X[i], y[i:i + 1])
    np.testing.assert_array_equal(model.coef_, twin.coef_)


@pytest.mark.parametrize("eta,new", [(0.1, dict(eta=0.3)), (None, dict(lam=0.02))])
def test_step_change_mid_stream_equals_the_reference(eta, new):
    """The lazy weights keep the shrink they were given (the scale R is state, not a formula
    in t): a new step between two calls applies from the next round on, as in two
    reference passes with the two steps."""
    X, y = _sparse_data()
    s = np.where(y == 1, 1.0, -1.0)
    lam0 = 0.05
    model = SketchedOAUCM(rank=2, lam=lam0, eta=eta, max_columns=4).fit(X[:80], y[:80])
    model.set_params(**new).partial_fit(X[80:], y[80:])
    sched = INV if eta is None else CONST
    st = ref.capped_state(X.shape[1], 2, 4)
    Xd = np.asarray(X.toarray())
    t = ref.capped_pass(Xd, s, np.arange(80, dtype=np.intp), st, 0, lam0, eta or 0.0, sched,
                        LOSS_M, ref.FAMILY_FD_DIAG, 2, 4)
    ref.capped_pass(Xd, s, np.arange(80, X.shape[0], dtype=np.intp), st, t,
                    new.get("lam", lam0), new.get("eta", eta or 0.0), sched, LOSS_M,
                    ref.FAMILY_FD_DIAG, 2, 4)
    w = _weights(st)
    assert (st["slot"] < 0).sum() > 10 and np.abs(w).max() > 1e-3
    np.testing.assert_allclose(model.coef_[0], w, rtol=1e-12, atol=1e-14)


def test_max_columns_frozen_and_validated():
    X, y = _sparse_data()
    model = SketchedOAUCM(rank=2, max_columns=5).fit(X, y)
    before = _fitted(model)
    with pytest.raises(ValueError, match="max_columns changed from 5 to 6"):
        model.set_params(max_columns=6).partial_fit(X, y)
    with pytest.raises(ValueError, match="max_columns"):
        model.set_params(max_columns=0).partial_fit(X, y)
    with pytest.raises(ValueError, match="max_columns"):
        SketchedOAUCM(max_columns=2.5).fit(X, y)
    for key, value in before.items():
        np.testing.assert_array_equal(getattr(model, key), value, err_msg=key)


def test_state_is_bounded_by_the_cap_not_the_columns_seen():
    """At p = 2^20 with over 1,500 columns seen and K = 16, the sketch holds 16 slot columns,
    and the learner still ranks well (the frequent columns carry the signal)."""
    rng = np.random.default_rng(6)
    p, n = 2 ** 20, 800
    cols = rng.choice(p, size=3000, replace=False)
    head = cols[:12]
    rows = np.repeat(np.arange(n), 6)
    picks = np.where(rng.random(n * 6) < 0.5, rng.choice(head, size=n * 6),
                     rng.choice(cols, size=n * 6))
    X = sp.csr_matrix((rng.random(n * 6), (rows, picks)), shape=(n, p))
    y = (X[:, head[:4]].sum(axis=1).A1 > X[:, head[4:8]].sum(axis=1).A1).astype(int)
    model = SketchedOAUCM(rank=4, lam=1e-3, max_columns=16).fit(X, y)
    assert model.n_active_ > 1500 and model.sketches_.shape[-1] <= 16
    assert set(model.column_map_[head]) <= set(model.slot_columns_)   # the heavy hitters
    assert auc(y, model.decision_function(X)) > 0.85


def test_auto_cap_is_eight_times_the_rank():
    X, y = _sparse_data(n=400, p=200)
    model = SketchedOAUCM(rank=2).fit(X, y)
    assert model._layout_["max_columns"] == 16 and model.n_slots_ == 16
    assert model.n_active_ > 16 and model.sketches_.shape[-1] == 16
    same = SketchedOAUCM(rank=2, max_columns=16).fit(X, y)
    np.testing.assert_array_equal(model.coef_, same.coef_)
    model.set_params(max_columns=16).partial_fit(X[:5], y[:5])      # the same layout
