"""Mergeable state (sosl.state): round trips, exact moment merges, the t-weighted merge,
frequent-directions merges with their bound, FTRL-AUC's rule, and bad input."""

import copy
import pickle

import numpy as np
import pytest
import scipy.sparse as sp

from sosl import FTRLAUC, OAUCM, OAUCS, OKAUCM, SOLAM, SketchedOAUCM
from sosl import state as S
from sosl._core._codes import Schedule
from sosl._core._ftrl_ref import ftrl_weights
from sosl._core._losses_ref import LOSS_M, grad_w
from sosl._core._moments_ref import moment_update, round_prologue


def _data(seed, n=1200, p=6, shift=0.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) + shift
    y = (X[:, 0] - shift + 0.7 * rng.normal(size=n) > 0.8).astype(int)
    return X, y


def _shards(n, cuts):
    return np.split(np.arange(n), cuts)


def _arrays_equal(a, b):
    for name in a._state_names + ("t_", "n_seen_", "calibration_"):
        u, v = getattr(a, name), getattr(b, name)
        assert np.array_equal(np.asarray(u), np.asarray(v)), name


@pytest.mark.parametrize("make", [
    lambda: OAUCM(lam=0.01), lambda: OAUCM(lam=0.01, forgetting=0.97),
    lambda: OAUCS(lam=0.01, eta=0.01), lambda: SketchedOAUCM(lam=0.01, rank=3, max_columns=None),
    lambda: FTRLAUC(gamma=0.3, l1=0.01), lambda: SOLAM()])
@pytest.mark.parametrize("p", [5, 40])           # 40: the BLAS path of the linear kernel
def test_round_trip_pickles_and_continues_bit_for_bit(make, p):
    X, y = _data(0, p=p)
    a = make().fit(X[:700], y[:700])
    st = pickle.loads(pickle.dumps(S.get_state(a)))
    b = S.from_state(st)
    assert np.array_equal(a.decision_function(X), b.decision_function(X))
    a.partial_fit(X[700:], y[700:])
    b.partial_fit(X[700:], y[700:])
    _arrays_equal(a, b)
    assert np.array_equal(a.predict_proba(X), b.predict_proba(X))
    c = pickle.loads(pickle.dumps(b))               # the restored model pickles too
    assert np.array_equal(c.decision_function(X), b.decision_function(X))


def _moment_error(m, full):
    cov = np.max(np.abs(m.covariances_ - full.covariances_)) / np.max(np.abs(full.covariances_))
    mean = np.max(np.abs(m.means_ - full.means_)) / np.max(np.abs(full.means_))
    return max(cov, mean)


@pytest.mark.parametrize("cls", [OAUCM, OAUCS])
@pytest.mark.parametrize("beta", [1.0, 0.98])
@pytest.mark.parametrize("p", [4, 36])
def test_merge_of_shard_moments_equals_one_model(cls, beta, p):
    X, y = _data(1, n=2000, p=p)
    X[1000:] += 0.5                                   # shards with different means
    kw = dict(lam=0.01, eta=None if cls is OAUCM else 0.01, forgetting=beta)
    full = cls(**kw).fit(X, y)
    cuts = [150, 900, 1000, 1700]                     # unequal sizes, one tiny shard
    states = [S.get_state(cls(**kw).fit(X[i], y[i])) for i in _shards(2000, cuts)]
    merged = S.from_state(S.merge(states))
    assert np.array_equal(merged.counts_, full.counts_)
    assert np.allclose(merged.weights_, full.weights_, rtol=1e-12, atol=0)
    assert _moment_error(merged, full) < 1e-12
    assert np.abs(full.covariances_).max() > 0.1      # not trivially zero
    assert merged.t_ == full.t_ == 2000 and merged.max_abs_ == full.max_abs_
    # mutant: a merge without Chan's mean-difference term is caught
    mom = [S.linear_moments(st) for st in states]
    M = sum(m.scatter for m in mom) if beta == 1.0 else None
    if M is not None:
        W = merged.weights_[:, None, None]
        assert np.max(np.abs(M / W - full.covariances_)) > 1e-3
    else:                                             # mutant: the decay of earlier shards dropped
        wrong = mom[0]
        for m in mom[1:]:
            wrong = S.merge_moments(wrong, m, 1.0)
        assert np.max(np.abs(wrong.weights - full.weights_)) > 1.0


def test_moments_of_rows_equal_the_kernel():
    X, y = _data(2, n=900, p=7)
    for beta in (1.0, 0.95):
        m = OAUCM(forgetting=beta).fit(X, y)
        mine = S.moments_of_rows(X, np.where(y == 1, 1.0, -1.0), beta)
        kern = S.linear_moments(S.get_state(m))
        assert np.allclose(mine.scatter, kern.scatter, rtol=1e-12, atol=1e-12 * 900)
        assert np.allclose(mine.means, kern.means, rtol=1e-12, atol=1e-14)
        assert np.allclose(mine.weights, kern.weights, rtol=1e-12, atol=0)
        Xs = sp.csr_matrix(np.where(np.abs(X) > 1, X, 0.0))
        dense = S.moments_of_rows(Xs.toarray(), np.where(y == 1, 1.0, -1.0), beta)
        sparse = S.moments_of_rows(Xs, np.where(y == 1, 1.0, -1.0), beta)
        assert np.allclose(sparse.scatter, dense.scatter, rtol=1e-12, atol=1e-10)


def _reference_with_gradients(X, s, lam, p):
    """The reference pass (sosl._core._linear_ref) that also sums the loss gradients g_t
    (the regularizer's lam w excluded): returns (w, T, G)."""
    w, xbar, Sigma = np.zeros(p), np.zeros((2, p)), np.zeros((2, p, p))
    N = np.zeros(2, dtype=np.int64)
    G = np.zeros(p)
    t = 0
    for x, yy in zip(X, s):
        t += 1
        own, opp, eta_t = round_prologue(yy, t, int(Schedule.STEP_INV_LAM_T), 0.0, lam)
        g = np.zeros(p)
        if N[opp] > 0:
            g = grad_w(LOSS_M, w, yy * (x - xbar[opp]), Sigma[opp])
        moment_update(x, xbar[own], Sigma[own], float(N[own]))
        N[own] += 1
        G += g
        w -= eta_t * (lam * w + g)
    return w, t, G


def test_t_weighted_merge_equals_the_gradient_sum_combination():
    X, y = _data(3, n=900, p=5)
    lam = 0.05
    parts = _shards(900, [100, 700])                  # 100, 600, 200 rows
    states, T, G = [], [], []
    for idx in parts:
        model = OAUCM(lam=lam).fit(X[idx], y[idx])
        w_ref, t, g = _reference_with_gradients(X[idx], np.where(y[idx] == 1, 1.0, -1.0),
                                                lam, 5)
        assert np.allclose(model.coef_[0], w_ref, rtol=1e-12, atol=1e-13)
        assert np.allclose(lam * t * model.coef_[0], -g, rtol=1e-11, atol=1e-12)   # identity
        states.append(S.get_state(model))
        T.append(t)
        G.append(g)
    combined = -np.sum(G, axis=0) / (lam * np.sum(T))
    merged = S.merge(states)
    scale = np.abs(combined).max()
    assert scale > 1e-2
    assert np.abs(merged.arrays["w_"] - combined).max() < 1e-12 * scale * 10
    assert merged.t == 900
    # mutant: the plain average of the shard weights is not the combination
    plain = np.mean([st.arrays["w_"] for st in states], axis=0)
    assert np.abs(plain - combined).max() > 1e-3 * scale
    # explicit uniform weights give that plain average
    uni = S.merge(states, weights=[1, 1, 1])
    assert np.allclose(uni.arrays["w_"], plain, rtol=1e-12, atol=0)


def test_merge_of_one_state_is_the_state():
    X, y = _data(4, p=40)
    st = S.get_state(OAUCM(forgetting=0.99).fit(X, y))
    one = S.merge([st])
    for name, v in st.arrays.items():
        assert np.array_equal(np.asarray(v), np.asarray(one.arrays[name]))
    assert np.array_equal(st.calibration, one.calibration) and st.t == one.t


def test_merged_model_pickles_and_continues_like_a_model_that_saw_the_rows():
    X, y = _data(5, n=2400, p=6)
    old, new = np.arange(1600), np.arange(1600, 2400)
    states = [S.get_state(OAUCM(lam=0.01).fit(X[i], y[i])) for i in _shards(1600, [500])]
    merged = S.from_state(S.merge(states))
    # the model that saw the rows itself, given the merged weights
    seq = S.get_state(OAUCM(lam=0.01).fit(X[old], y[old]))
    seq.arrays["w_"][:] = merged.coef_[0]
    seq = S.from_state(seq)
    again = pickle.loads(pickle.dumps(merged))
    merged.partial_fit(X[new], y[new])
    again.partial_fit(X[new], y[new])
    _arrays_equal(merged, again)                      # pickling changes nothing
    seq.partial_fit(X[new], y[new])
    assert merged.t_ == seq.t_ == 2400
    assert np.allclose(merged.coef_, seq.coef_, rtol=1e-10, atol=1e-12)
    assert _moment_error(merged, seq) < 1e-12
    assert np.abs(merged.coef_).max() > 1e-2
    # mutant: a merged model whose step counter restarted (t = 0) continues differently
    bad = S.merge(states)
    bad = S.from_state(S.LearnerState(**{**bad.__dict__, "t": 0}))
    bad.partial_fit(X[new], y[new])
    assert np.abs(bad.coef_ - seq.coef_).max() > 1e-3


def test_merge_refuses_incompatible_states_and_leaves_them_untouched():
    X, y = _data(6, p=4)
    a = S.get_state(OAUCM(lam=0.01).fit(X, y))
    keep = copy.deepcopy(a)
    bad_p = S.get_state(OAUCM(lam=0.01).fit(np.hstack([X, X[:, :1]]), y))
    bad_lam = S.get_state(OAUCM(lam=0.02).fit(X, y))
    bad_cls = S.get_state(OAUCM(lam=0.01).fit(X, np.where(y == 1, 5, 0)))
    bad_kind = S.get_state(OAUCS(lam=0.01).fit(X, y))
    nan = copy.deepcopy(a)
    nan.arrays["means_"][0, 0] = np.nan
    cases = [([a, bad_p], "features"), ([a, bad_lam], r"\['lam'\]"), ([a, bad_cls], "classes"),
             ([a, bad_kind], "one learner"), ([a, nan], "NaN"), ([], "at least one"),
             ([a, "x"], "LearnerState")]
    for states, msg in cases:
        with pytest.raises((ValueError, TypeError), match=msg):
            S.merge(states)
    with pytest.raises(ValueError, match="weights"):
        S.merge([a, a], weights=[1.0])
    with pytest.raises(ValueError, match="weights"):
        S.merge([a, a], weights=[1.0, -1.0])
    for name, v in a.arrays.items():
        assert np.array_equal(np.asarray(v), np.asarray(keep.arrays[name]))
    # shard models with the free parameters (shuffle, random_state) different do merge
    other = S.get_state(OAUCM(lam=0.01, random_state=3).fit(X, y))
    assert S.merge([a, other]).t == 2 * a.t


def test_from_state_refuses_bad_states():
    X, y = _data(7, p=4)
    st = S.get_state(OAUCM().fit(X, y))
    with pytest.raises(ValueError, match="version"):
        S.from_state(S.LearnerState(**{**st.__dict__, "version": 99}))
    arrays = dict(st.arrays, scatter_=np.zeros((2, 3, 3)))
    with pytest.raises(ValueError, match="scatter_"):
        S.from_state(S.LearnerState(**{**st.__dict__, "arrays": arrays}))
    arrays = dict(st.arrays, w_=np.full(4, np.inf))
    with pytest.raises(ValueError, match="NaN or infinity"):
        S.from_state(S.LearnerState(**{**st.__dict__, "arrays": arrays}))
    with pytest.raises(TypeError, match="OAUCS"):
        S.from_state(st, cls=OAUCS)
    with pytest.raises(ValueError, match="not fitted"):
        S.get_state(OAUCM())


def test_learners_without_a_merge_are_refused():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(120, 3))
    y = (X[:, 0] > 0).astype(int)
    st = S.get_state(OKAUCM(budget=10).fit(X, y))
    assert np.array_equal(S.from_state(st).decision_function(X),
                          OKAUCM(budget=10).fit(X, y).decision_function(X))
    with pytest.raises(TypeError, match="not mergeable"):
        S.merge([st, st])


# -- frequent-directions merge -------------------------------------------------------------
def _sketch_gram(model, k):
    """B'B of class k in original coordinates."""
    st = S.get_state(model) if not isinstance(model, S.LearnerState) else model
    a = st.arrays
    B = a["sketches_"][k, :a["sketch_rows_"][k]]
    cmap = a["column_map_"]
    full = np.zeros((B.shape[0], st.n_features))
    seen = cmap >= 0
    full[:, seen] = B[:, cmap[seen]]
    return full.T @ full


@pytest.mark.parametrize("sketch", ["fd", "fd_diag"])
def test_sketch_merge_keeps_the_frequent_directions_bound(sketch):
    rng = np.random.default_rng(9)
    n, p, r = 1500, 30, 4
    L = rng.normal(size=(p, p)) * np.exp(-np.arange(p) / 4.0)   # a decaying spectrum
    X = rng.normal(size=(n, p)) @ L
    X[700:] += 2.0                                    # shards with different means
    y = (X[:, 0] + rng.normal(size=n) > 1.0).astype(int)
    kw = dict(lam=0.01, rank=r, sketch=sketch, max_columns=None)
    parts = _shards(n, [700, 1100])
    models = [SketchedOAUCM(**kw).fit(X[i], y[i]) for i in parts]
    merged = S.merge([S.get_state(m) for m in models])
    est = S.from_state(merged)
    full = SketchedOAUCM(**kw).fit(X, y)
    assert np.array_equal(est.counts_, full.counts_)
    assert np.allclose(est.means_, full.means_, rtol=1e-12, atol=1e-12)
    s = np.where(y == 1, 1.0, -1.0)
    exact = S.moments_of_rows(X, s).scatter             # A'A per class (N Sigma)
    checked = 0
    for k in range(2):
        AtA, BtB = exact[k], _sketch_gram(merged, k)
        err = np.linalg.eigvalsh(AtA - BtB)
        D = merged.arrays["shrinkage_"][k]
        tol = 1e-9 * np.abs(AtA).max()
        assert err.min() >= -tol                         # A'A - B'B is PSD
        assert err.max() <= D + tol                      # ||A'A - B'B||_2 <= D
        ev = np.sort(np.linalg.eigvalsh(AtA))[::-1]
        for kk in range(r + 1):                          # D <= ||A - A_k||_F^2 / (r+1-k)
            assert D <= ev[kk:].sum() / (r + 1 - kk) * (1 + 1e-9)
        if sketch == "fd_diag":                          # the exact diagonal is kept
            cmap = merged.arrays["column_map_"]
            dA = np.zeros(p)
            seen = cmap >= 0
            dA[seen] = merged.arrays["scatter_diag_"][k, cmap[seen]]
            assert np.allclose(dA, np.diag(AtA), rtol=1e-10, atol=1e-9)
        # mutant: a merge that leaves out the mean-correction row breaks the bound
        sts = [S.get_state(m) for m in models]
        grams = [_sketch_gram(st, k) for st in sts]
        Ds = sum(st.arrays["shrinkage_"][k] for st in sts)
        wrong = np.linalg.eigvalsh(AtA - sum(grams))
        assert wrong.max() > Ds + 1.0
        checked += D > 0
    assert checked >= 1                                   # shrinks did happen
    # the merged model scores, continues and pickles
    est.partial_fit(X[:50], y[:50])
    assert np.isfinite(pickle.loads(pickle.dumps(est)).decision_function(X)).all()


def test_merge_sketches_of_few_rows_is_exact():
    rng = np.random.default_rng(10)
    X = rng.normal(size=(12, 5))
    y = np.tile([0, 1], 6)
    kw = dict(lam=0.01, rank=8, max_columns=None)
    st = S.merge([S.get_state(SketchedOAUCM(**kw).fit(X[:6], y[:6])),
                  S.get_state(SketchedOAUCM(**kw).fit(X[6:], y[6:]))])
    exact = S.moments_of_rows(X, np.where(y == 1, 1.0, -1.0)).scatter
    for k in range(2):
        assert st.arrays["shrinkage_"][k] == 0.0
        assert np.allclose(_sketch_gram(st, k), exact[k], rtol=1e-12, atol=1e-12)


# -- FTRL-AUC ------------------------------------------------------------------------------
def test_ftrl_merge_rule():
    rng = np.random.default_rng(11)
    X = sp.random(800, 60, density=0.05, random_state=11, format="csr")
    X = X.tolil()
    X[:400, 59] = 0.0                                    # column 59 only in the second shard
    X = X.tocsr()
    X.eliminate_zeros()
    y = (np.asarray(X[:, :10].sum(axis=1)).ravel() + 0.1 * rng.normal(size=800) > 0.2)
    y = y.astype(int)
    kw = dict(gamma=0.3, beta=1.0, l1=0.001, l2=0.01)
    a = S.get_state(FTRLAUC(**kw).fit(X[:400], y[:400]))
    b = S.get_state(FTRLAUC(**kw).fit(X[400:], y[400:]))
    m = S.merge([a, b])
    assert np.array_equal(m.arrays["sq_grad_"], a.arrays["sq_grad_"] + b.arrays["sq_grad_"])
    assert np.allclose(m.arrays["w_"], ftrl_weights(m.arrays["z_"], m.arrays["sq_grad_"],
                                                       0.001, 0.01, 1.0, 0.3), rtol=0, atol=0)
    assert a.arrays["sq_grad_"][59] == 0 and b.arrays["w_"][59] != 0
    assert np.isclose(m.arrays["w_"][59], b.arrays["w_"][59], rtol=1e-12)
    ra, rb = np.sqrt(a.arrays["sq_grad_"]), np.sqrt(b.arrays["sq_grad_"])
    both = (ra > 0) & (rb > 0)
    want = (ra * a.arrays["w_"] + rb * b.arrays["w_"])[both] / (ra + rb)[both]
    assert np.allclose(m.arrays["w_"][both], want, rtol=1e-10, atol=1e-14)
    # identical states merge into that state's weights; the summed-z mutant does not
    same = S.merge([a, a, a, a])
    assert np.allclose(same.arrays["w_"], a.arrays["w_"], rtol=1e-10, atol=1e-14)
    zsum = ftrl_weights(4 * a.arrays["z_"], 4 * a.arrays["sq_grad_"], 0.001, 0.01, 1.0, 0.3)
    assert np.abs(zsum - a.arrays["w_"]).max() > 0.1 * np.abs(a.arrays["w_"]).max()
    est = S.from_state(m)
    est.partial_fit(X[:40], y[:40])
    assert est.t_ == 840
    assert np.array_equal(pickle.loads(pickle.dumps(est)).decision_function(X),
                          est.decision_function(X))
    with pytest.raises(ValueError, match="weights"):
        S.merge([a, b], weights=[1, 2])


def test_state_nbytes_formula():
    X, y = _data(12, p=50)
    st = S.get_state(OAUCM().fit(X, y))
    # 2 p^2 + 3 p + 3 numbers that matter, plus the scales, weights, max |x| and [A, H]
    p = 50
    assert S.state_nbytes(st) >= 8 * (2 * p * p + 3 * p + 3)
    assert S.state_nbytes(st) <= 8 * (2 * p * p + 3 * p + 3) + 128


def test_estimator_methods_are_the_state_functions():
    """``get_state``/``from_state``/``merge`` on the estimators call sosl.state."""
    import numpy as np

    from sosl import OAUCM, PAI
    from sosl.state import get_state, merge
    rng = np.random.default_rng(9)
    X = rng.normal(size=(300, 4))
    y = (X[:, 0] > 0.2).astype(int)
    a, b = OAUCM().fit(X[:150], y[:150]), OAUCM().fit(X[150:], y[150:])
    m = OAUCM.merge([a, b])
    ref = merge([get_state(a), get_state(b)])
    assert np.array_equal(m.coef_[0], ref.arrays["w_"])
    assert m.t_ == 300 and m.n_seen_ == 300
    c = OAUCM.from_state(a.get_state())
    assert np.array_equal(c.decision_function(X), a.decision_function(X))
    import pytest
    with pytest.raises(TypeError):
        PAI.merge([PAI().fit(X, y), PAI().fit(X, y)])


def test_capped_sketches_refuse_to_merge_and_uncapped_merges_keep_learning():
    rng = np.random.default_rng(12)
    X = rng.normal(size=(400, 20))
    y = (X[:, 0] > 0.3).astype(int)
    capped = [SketchedOAUCM(rank=2, max_columns=4).fit(X[i], y[i])
              for i in (slice(0, 200), slice(200, 400))]
    with pytest.raises(TypeError, match="max_columns=None"):
        S.merge([S.get_state(m) for m in capped])
    free = [SketchedOAUCM(rank=2, max_columns=None).fit(X[i], y[i])
            for i in (slice(0, 200), slice(200, 400))]
    est = S.from_state(S.merge([S.get_state(m) for m in free]))
    est.partial_fit(X[:50], y[:50])
    assert est.t_ == 450 and np.isfinite(est.decision_function(X)).all()
    assert est.n_slots_ == 20 and (est.column_counts_[:20] > 0).all()


def _two_read_moments(X, s, beta):
    """The textbook two reads: the weighted class means, then the centered scatters."""
    out = []
    for sign in (-1.0, 1.0):
        Xk = X[s == sign]
        wt = beta ** np.arange(Xk.shape[0] - 1, -1, -1, dtype=np.float64)
        mean = wt @ Xk / wt.sum()
        D = Xk - mean
        out.append((wt.sum(), mean, D.T @ (wt[:, None] * D)))
    return out


@pytest.mark.parametrize("beta", [1.0, 0.97])
@pytest.mark.parametrize("sparse", [False, True])
def test_shifted_moments_equal_the_two_read_sums(beta, sparse):
    # far from the origin (|mean| 1e4, unit spread): where an unshifted one-read sum of
    # x x' minus W xbar xbar' loses ~8 digits; the first 200 rows hold no positive, so
    # class 1's provisional centre comes from a later chunk; chunks of 64 rows
    rng = np.random.default_rng(11)
    n, p = 1500, 6
    X = rng.normal(size=(n, p)) + 1e4 * rng.normal(size=p)
    y = (X[:, 0] - X[:, 0].mean() + 0.5 * rng.normal(size=n) > 0.9).astype(int)
    y[:200] = 0
    if sparse:
        X[:, 2] = np.where(rng.random(n) < 0.6, 0.0, X[:, 2])   # some stored zeros too
        Xin = sp.csr_matrix(X)
    else:
        Xin = X
    s = np.where(y == 1, 1.0, -1.0)
    ref = _two_read_moments(X, s, beta)

    def err(mom):                                     # scatter error on the scale of
        out = 0.0                                     # each entry (sqrt(M_ii M_jj))
        for k in range(2):
            sd = np.sqrt(np.diag(ref[k][2]))
            out = max(out, np.abs((mom.scatter[k] - ref[k][2]) / np.outer(sd, sd)).max()
                      + np.abs(mom.means[k] - ref[k][1]).max() / np.abs(ref[k][1]).max()
                      + abs(mom.weights[k] - ref[k][0]) / ref[k][0])
        return out

    for step in (64, 5000):                           # many chunks, and one
        mom = S._shifted_moments(Xin, s, beta, step)
        assert err(mom) < 1e-12
        assert mom.counts.tolist() == [int((y == 0).sum()), int((y == 1).sum())]
    assert err(S.moments_of_rows(Xin, s, beta)) < 1e-12
    assert min(np.abs(r[2]).max() for r in ref) > 10.0      # not trivially zero
    # any centre is exact in exact arithmetic: one 3 units off the means still gives the
    # moments (so the correction W d d' is applied), and dropping that correction is caught
    off = np.array([r[1] for r in ref]) + 3.0
    far = S._shifted_moments(Xin, s, beta, 64, centres=off)
    assert err(far) < 1e-11
    d = far.means - off
    dropped = far._replace(scatter=far.scatter + far.weights[:, None, None]
                           * np.einsum("ki,kj->kij", d, d))
    assert err(dropped) > 1e-3
    # mutant: the unshifted one-read sums (centre 0) are far from exact at this offset
    assert err(S._shifted_moments(Xin, s, beta, 64, centres=np.zeros((2, p)))) > 1e-9
