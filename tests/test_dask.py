"""sosl.dask.Parallel on a local dask.distributed cluster (127.0.0.1, threads)."""

import pickle
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from helpers import assert_same_learned_state, skewed_stream

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from sosl import FTRLAUC, OAUCM, OAUCS, SketchedOAUCM  # noqa: E402
from sosl import state as S  # noqa: E402
from sosl.dask import Parallel  # noqa: E402


def _dask(X, y, chunks):
    return da.from_array(X, chunks=(chunks, X.shape[1])), da.from_array(y, chunks=chunks)


def test_importing_sosl_does_not_import_dask():
    code = "import sys, sosl, sosl.state; assert 'dask' not in sys.modules, 'dask imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("p", [5, 40])
@pytest.mark.parametrize("sparse", [False, True])
def test_one_block_is_the_sequential_pass_bit_for_bit(p, sparse):
    X, y = skewed_stream(0, n=2500, p=p)
    if sparse:
        X[np.abs(X) < 0.8] = 0.0
    Xin = sp.csr_matrix(X) if sparse else X
    seq = OAUCM(lam=0.01).fit(Xin, y)
    par = Parallel(OAUCM(lam=0.01)).fit([Xin], [y]).estimator_
    assert_same_learned_state(par, seq)
    # shuffled: the sequential pass over the block's permuted rows (and not the plain one)
    sh = Parallel(OAUCM(lam=0.01), shuffle=True, random_state=3).fit([Xin], [y]).estimator_
    perm = np.random.default_rng([3, 0, 0]).permutation(X.shape[0])
    assert_same_learned_state(sh, OAUCM(lam=0.01).fit(Xin[perm], y[perm]))
    assert not np.array_equal(sh.coef_, seq.coef_)


def _simulate(blocks, lam, n_epochs=1, moments="global", beta=1.0):
    """The documented algorithm, written out with sosl.state on the client: each block's
    pass starts from the exact moments of the other blocks' rows (moments of their
    concatenated rows), the merged w, and the block's own step count."""
    p = blocks[0][0].shape[1]
    Xall = np.vstack([b[0] for b in blocks])
    yall = np.concatenate([b[1] for b in blocks])
    template = S.get_state(OAUCM(lam=lam, forgetting=beta).fit(Xall[:2], np.array([0, 1])))
    w, ts = np.zeros(p), [0] * len(blocks)
    for _ in range(n_epochs):
        ws = []
        for j, (Xb, yb) in enumerate(blocks):
            rest = [i for i in range(len(blocks)) if i != j]
            if moments == "global" and rest:
                Xo = np.vstack([blocks[i][0] for i in rest])
                so = np.concatenate([np.where(blocks[i][1] == 1, 1.0, -1.0) for i in rest])
                mom = S.moments_of_rows(Xo, so, beta)
            else:
                mom = S.empty_moments(p)
            est = S.from_state(S.linear_state(template, mom, w, ts[j], ts[j], [1.0, 1.0]))
            est.partial_fit(Xb, yb)
            ws.append(est.coef_[0].copy())
            ts[j] = est.t_
        w = sum(t * wj for t, wj in zip(ts, ws)) / sum(ts)
    return w, ws, ts, S.moments_of_rows(Xall, np.where(yall == 1, 1.0, -1.0), beta)


@pytest.mark.parametrize("moments,n_epochs,beta", [
    ("global", 1, 1.0), ("global", 2, 1.0), ("local", 1, 1.0), ("local", 2, 1.0),
    ("global", 2, 0.995)])
def test_parallel_fit_is_the_documented_algorithm(clusters, moments, n_epochs, beta):
    X, y = skewed_stream(1, n=3100, p=5)
    cuts = [400, 1900, 2300]                              # unequal blocks
    blocks = [(X[i], y[i]) for i in np.split(np.arange(3100), cuts)]
    w, ws, ts, mom = _simulate(blocks, 0.01, n_epochs, moments, beta)
    with distributed.Client(clusters[1]):
        chunks = tuple(np.diff([0] + cuts + [3100]).tolist())
        Xd = da.from_array(X, chunks=(chunks, 5))
        yd = da.from_array(y, chunks=(chunks,))
        est = Parallel(OAUCM(lam=0.01, forgetting=beta), n_epochs=n_epochs,
                       moments=moments).fit(Xd, yd)
    e = est.estimator_
    scale = np.abs(w).max()
    assert scale > 1e-2
    assert np.abs(e.coef_ - w).max() < 1e-11 * scale
    assert e.t_ == sum(ts) == n_epochs * 3100
    assert np.array_equal(e.counts_, mom.counts)
    assert np.allclose(e.weights_, mom.weights, rtol=1e-12, atol=0)
    assert np.allclose(e.covariances_, mom.scatter / mom.weights[:, None, None], rtol=1e-12,
                       atol=1e-13)
    assert est.block_rows_ == [400, 1500, 400, 800]
    # an empty block plays no round and does not count in the mix
    with_empty = Parallel(OAUCM(lam=0.01, forgetting=beta), n_epochs=n_epochs,
                          moments=moments).fit(
        [b[0] for b in blocks] + [X[:0]], [b[1] for b in blocks] + [y[:0]])
    assert with_empty.estimator_.t_ == e.t_
    assert np.allclose(with_empty.estimator_.coef_, e.coef_, rtol=1e-12, atol=1e-14)
    # mutant: the plain average of the block weights is a different model
    plain = np.mean(ws, axis=0)
    assert np.abs(plain - e.coef_).max() > 1e-3 * scale


def test_result_does_not_depend_on_the_workers(clusters):
    X, y = skewed_stream(2, n=2400, p=36)
    Xd, yd = _dask(X, y, 500)
    fits = []
    for cluster in clusters:
        with distributed.Client(cluster):
            fits.append(Parallel(OAUCM(lam=0.01), n_epochs=2, shuffle=True,
                                 random_state=0).fit(Xd, yd).estimator_)
    fits.append(Parallel(OAUCM(lam=0.01), n_epochs=2, shuffle=True,   # no cluster: threads
                         random_state=0).fit(Xd, yd).estimator_)
    assert_same_learned_state(fits[0], fits[1])
    assert_same_learned_state(fits[0], fits[2])
    other = Parallel(OAUCM(lam=0.01), n_epochs=2, shuffle=True, random_state=1).fit(Xd, yd)
    assert not np.array_equal(other.estimator_.coef_, fits[0].coef_)   # the seed matters


def test_sparse_dask_blocks_equal_dense_blocks():
    X, y = skewed_stream(3, n=2000, p=8)
    X[np.abs(X) < 1.0] = 0.0
    Xd, yd = _dask(X, y, 500)
    Xs = Xd.map_blocks(sp.csr_matrix, dtype=float, meta=sp.csr_matrix((0, 0)))
    dense = Parallel(OAUCS(lam=0.01, eta=0.01)).fit(Xd, yd).estimator_
    sparse = Parallel(OAUCS(lam=0.01, eta=0.01)).fit(Xs, yd).estimator_
    assert np.allclose(sparse.coef_, dense.coef_, rtol=1e-12, atol=1e-14)
    assert np.abs(dense.coef_).max() > 1e-3


def test_bad_input_is_refused_and_nothing_is_half_merged(clusters):
    X, y = skewed_stream(4, n=1200, p=5)
    wrapper = Parallel(OAUCM(lam=0.01))
    with distributed.Client(clusters[1]):
        wrapper.fit(*_dask(X, y, 300))
        before = wrapper.estimator_
        coef = before.coef_.copy()
        Xnan = X.copy()
        Xnan[700, 2] = np.nan
        cases = [
            (([X[:600], np.hstack([X[600:], X[600:, :1]])], [y[:600], y[600:]]),
             "different numbers of features"),
            (([X[:600], sp.csr_matrix(X[600:])], [y[:600], y[600:]]), "mixed dense and sparse"),
            (_dask(X, np.ones(1200, dtype=int), 300), "exactly two classes"),
            (_dask(Xnan, y, 300), "NaN or infinity"),
            (([X[:600], X[600:]], [y[:600]]), "same length"),
            (([X[:600]], [y[:500]]), "rows"),
        ]
        for (Xb, yb), msg in cases:
            with pytest.raises(ValueError, match=msg):
                wrapper.fit(Xb, yb)
            assert wrapper.estimator_ is before and np.array_equal(before.coef_, coef)
    with pytest.raises(ValueError, match="shuffle"):
        Parallel(OAUCM(shuffle=True)).fit([X], [y])
    with pytest.raises(ValueError, match="n_epochs"):
        Parallel(OAUCM(), n_epochs=0).fit([X], [y])
    with pytest.raises(ValueError, match="moments"):
        Parallel(OAUCM(), moments="exact").fit([X], [y])
    with pytest.raises(TypeError, match="mergeable"):
        Parallel(__import__("sosl").OKAUCM()).fit([X], [y])
    with pytest.raises(ValueError, match="lam"):
        Parallel(OAUCM(lam=0.0)).fit([X], [y])


def test_merged_model_pickles_continues_and_delegates(clusters):
    X, y = skewed_stream(5, n=3000, p=6)
    with distributed.Client(clusters[1]):
        Xd, yd = _dask(X[:2000], y[:2000], 500)
        wrapper = Parallel(OAUCM(lam=0.01), n_epochs=1).fit(Xd, yd)
        lazy = wrapper.decision_function(da.from_array(X, chunks=(700, 6)))
        assert np.array_equal(lazy.compute(), wrapper.estimator_.decision_function(X))
        proba = wrapper.predict_proba(da.from_array(X, chunks=(700, 6))).compute()
        assert np.array_equal(proba, wrapper.estimator_.predict_proba(X))
        assert np.array_equal(wrapper.predict(X), wrapper.estimator_.predict(X))
    est = wrapper.to_estimator()
    again = pickle.loads(pickle.dumps(wrapper)).estimator_
    est.partial_fit(X[2000:], y[2000:])
    again.partial_fit(X[2000:], y[2000:])
    assert_same_learned_state(est, again)
    # like a model that saw the 2000 rows itself, given the merged weights
    seq = S.get_state(OAUCM(lam=0.01).fit(X[:2000], y[:2000]))
    seq.arrays["w_"][:] = wrapper.estimator_.coef_[0]
    seq = S.from_state(seq)
    seq.partial_fit(X[2000:], y[2000:])
    assert est.t_ == seq.t_ == 3000
    assert np.allclose(est.coef_, seq.coef_, rtol=1e-10, atol=1e-12)
    assert np.allclose(est.covariances_, seq.covariances_, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("make", [lambda: SketchedOAUCM(lam=0.01, rank=4, max_columns=None),
                                  lambda: FTRLAUC(gamma=0.3)])
def test_other_learners_merge_independent_block_fits(make):
    X, y = skewed_stream(6, n=1600, p=12)
    X[np.abs(X) < 0.7] = 0.0
    X = sp.csr_matrix(X)
    idx = np.split(np.arange(1600), [500, 1100])
    states = [S.get_state(make().fit(X[i], y[i])) for i in idx]
    want = S.from_state(S.merge(states))
    got = Parallel(make(), moments="local").fit([X[i] for i in idx], [y[i] for i in idx])
    assert np.array_equal(got.estimator_.coef_, want.coef_)
    assert np.abs(want.coef_).max() > 1e-3
    # their only mode is "local": the default moments="global" picks it
    default = Parallel(make()).fit([X[i] for i in idx], [y[i] for i in idx])
    assert np.array_equal(default.estimator_.coef_, want.coef_)
    with pytest.raises(ValueError, match="local"):
        Parallel(make(), moments="fixed").fit([X], [y])


def _misaligned(A):
    """A copy of A at an address that is not a multiple of 8 (as a block deserialized from
    another worker can be)."""
    buf = np.zeros(A.nbytes + 16, dtype=np.uint8)
    start = (-buf.ctypes.data) % 8 + 3
    B = buf[start:start + A.nbytes].view(A.dtype).reshape(A.shape)
    B[...] = A
    assert not B.flags.aligned
    return B


def test_blocks_at_odd_addresses_give_the_same_bits():
    X, y = skewed_stream(7, n=4000, p=40)
    Xm = _misaligned(X)
    a = Parallel(OAUCM(lam=0.01)).fit([X[:2500], X[2500:]], [y[:2500], y[2500:]]).estimator_
    b = Parallel(OAUCM(lam=0.01)).fit([Xm[:2500], Xm[2500:]], [y[:2500], y[2500:]]).estimator_
    assert_same_learned_state(a, b)
    c = S.moments_of_rows(_misaligned(X[:2500]), np.where(y[:2500] == 1, 1.0, -1.0))
    assert np.allclose(c.scatter, S.moments_of_rows(X[:2500], np.where(y[:2500] == 1, 1.0,
                                                                      -1.0)).scatter,
                       rtol=1e-12, atol=1e-10)


def test_blocks_of_one_class_get_their_moments_in_the_right_slot():
    # rows sorted by label: the first blocks hold negatives only, the last positives only
    X, y = skewed_stream(8, n=2000, p=5)
    order = np.argsort(y, kind="stable")
    X, y = X[order], y[order]
    blocks = [(X[i], y[i]) for i in np.split(np.arange(2000), [700, 1400, 1600])]
    w, _, ts, mom = _simulate(blocks, 0.01, 1)
    est = Parallel(OAUCM(lam=0.01), n_epochs=1).fit([b[0] for b in blocks],
                                                    [b[1] for b in blocks]).estimator_
    assert [len(np.unique(b[1])) for b in blocks] == [1, 1, 2, 1]
    assert np.array_equal(est.counts_, mom.counts)
    assert np.allclose(est.means_, mom.means, rtol=1e-12, atol=1e-14)
    assert np.abs(w).max() > 1e-3
    assert np.abs(est.coef_ - w).max() < 1e-11 * np.abs(w).max()
    # labels given the other way round: the slots follow classes=[1, 0]
    flipped = Parallel(OAUCM(lam=0.01), n_epochs=1).fit(
        [b[0] for b in blocks], [b[1] for b in blocks], classes=[1, 0]).estimator_
    assert np.array_equal(flipped.counts_, mom.counts[::-1])


def test_n_epochs_auto_plays_two_epochs_on_small_blocks_only():
    from sosl.dask._solvers import _AUTO_ROWS
    X, y = skewed_stream(9, n=4 * _AUTO_ROWS, p=4)
    small = np.array_split(np.arange(X.shape[0]), 8)            # _AUTO_ROWS / 2 rows each
    large = np.array_split(np.arange(X.shape[0]), 2)            # 2 x _AUTO_ROWS rows each
    fits = {}
    for name, idx in (("small", small), ("large", large), ("one", [np.arange(3000)])):
        fits[name] = Parallel(OAUCM(lam=0.01)).fit([X[i] for i in idx], [y[i] for i in idx])
    assert fits["small"].n_iter_ == 2 and fits["small"].estimator_.t_ == 2 * X.shape[0]
    assert fits["large"].n_iter_ == 1 and fits["large"].estimator_.t_ == X.shape[0]
    assert fits["one"].n_iter_ == 1                            # one block: the sequential pass
    two = Parallel(OAUCM(lam=0.01), n_epochs=2).fit([X[i] for i in small], [y[i] for i in small])
    assert np.array_equal(two.estimator_.coef_, fits["small"].estimator_.coef_)


# -- solver="lbfgs" ----------------------------------------------------------------------------
def _objective_at(blocks, mom, w, lam, loss, drop_covariance_term=False):
    from sosl.dask._solvers import _add_terms, _batch_objective, _block_terms, _prepared
    classes = np.array([0, 1])
    covs = mom.scatter / mom.weights[:, None, None]
    m, s2 = mom.means @ w, np.einsum("i,kij,j->k", w, covs, w)
    terms = [_block_terms(_prepared(Xb, yb, classes, j), w, m, s2, loss)
             for j, (Xb, yb) in enumerate(blocks)]
    tot = terms[0]
    for t in terms[1:]:
        tot = _add_terms(tot, t)
    n = int(mom.counts.sum())
    F, g = _batch_objective(tot, n, mom.means, covs, lam, w)
    if drop_covariance_term:                                    # the mutant: no d s2/dw
        B = tot[3]
        g = g - 2.0 * (B[0] * (covs[1] @ w) + B[1] * (covs[0] @ w)) / n
    return F, g


@pytest.mark.parametrize("Est", [OAUCM, OAUCS])
@pytest.mark.parametrize("sparse", [False, True])
def test_batch_objective_and_its_gradient(Est, sparse):
    from sosl._core._losses_ref import psi
    X, y = skewed_stream(10, n=900, p=6)
    if sparse:
        X[np.abs(X) < 0.6] = 0.0
    idx = np.split(np.arange(900), [200, 650])
    blocks = [((sp.csr_matrix(X[i]) if sparse else X[i]), y[i]) for i in idx]
    s = np.where(y == 1, 1.0, -1.0)
    mom = S.moments_of_rows(X, s)
    covs = mom.scatter / mom.weights[:, None, None]
    lam, loss = 0.05, Est._loss
    w = np.random.default_rng(11).normal(size=6) * 0.4
    F, g = _objective_at(blocks, mom, w, lam, loss)
    # F written out row by row: each row against the other class's global mean/covariance
    other = np.where(s > 0, 0, 1)
    mu = s * (X @ w - mom.means[other] @ w)
    s2 = np.array([w @ covs[k] @ w for k in other])
    assert np.isclose(F, 0.5 * lam * w @ w + psi(loss, mu, s2).mean(), rtol=1e-12, atol=0)
    h = 1e-6
    fd = np.array([(_objective_at(blocks, mom, w + h * e, lam, loss)[0]
                    - _objective_at(blocks, mom, w - h * e, lam, loss)[0]) / (2 * h)
                   for e in np.eye(6)])
    assert np.abs(g).max() > 1e-2
    assert np.abs(fd - g).max() < 1e-6 * np.abs(g).max()
    _, g_mut = _objective_at(blocks, mom, w, lam, loss, drop_covariance_term=True)
    assert np.abs(fd - g_mut).max() > 1e-3 * np.abs(g).max()   # the mutant is caught


def test_lbfgs_fit_minimizes_the_batch_objective(clusters):
    X, y = skewed_stream(12, n=3000, p=8)
    Xd, yd = _dask(X, y, 700)
    fits = []
    for cluster in clusters:
        with distributed.Client(cluster):
            fits.append(Parallel(OAUCM(lam=0.01), solver="lbfgs").fit(Xd, yd))
    a, b = fits
    assert_same_learned_state(a.estimator_, b.estimator_)      # 1 and 2 workers: same bits
    est = a.estimator_
    mom = S.moments_of_rows(X, np.where(y == 1, 1.0, -1.0))
    assert est.t_ == 3000 and np.array_equal(est.counts_, mom.counts)
    assert a.n_passes_ >= a.n_iter_ >= 1
    blocks = [(X[i:i + 700], y[i:i + 700]) for i in range(0, 3000, 700)]
    F, g = _objective_at(blocks, mom, est.coef_[0], 0.01, OAUCM._loss)
    _, g0 = _objective_at(blocks, mom, np.zeros(8), 0.01, OAUCM._loss)
    assert np.abs(g).max() < 1e-4 * np.abs(g0).max()          # a stationary point
    online = Parallel(OAUCM(lam=0.01), n_epochs=1).fit(Xd, yd).estimator_
    assert F < _objective_at(blocks, mom, online.coef_[0], 0.01, OAUCM._loss)[0]
    est.partial_fit(X[:100], y[:100])                         # a plain learner goes on
    assert est.t_ == 3100
    with pytest.raises(ValueError, match="forgetting"):
        Parallel(OAUCM(forgetting=0.99), solver="lbfgs").fit([X], [y])
    with pytest.raises(ValueError, match="global"):
        Parallel(OAUCM(), solver="lbfgs", moments="local").fit([X], [y])
    with pytest.raises(ValueError, match="solver"):
        Parallel(OAUCM(), solver="newton").fit([X], [y])
    with pytest.raises(ValueError, match="max_iter"):
        Parallel(OAUCM(), solver="lbfgs", max_iter=0).fit([X], [y])


# -- dask dataframe input ----------------------------------------------------------------------
def test_dask_dataframe_with_a_label_column_or_a_series():
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    X, y = skewed_stream(13, n=2400, p=5)
    df = pd.DataFrame(X, columns=[f"f{k}" for k in range(5)])
    df["label"] = y
    ddf = dd.from_pandas(df, npartitions=4)
    assert ddf.map_partitions(len).compute().tolist() == [600] * 4
    feats = [f"f{k}" for k in range(5)]
    by_column = Parallel(OAUCM(lam=0.01), n_epochs=1).fit(ddf, "label")
    by_series = Parallel(OAUCM(lam=0.01), n_epochs=1).fit(ddf[feats], ddf["label"])
    by_array = Parallel(OAUCM(lam=0.01), n_epochs=1).fit(*_dask(X, y, 600))
    assert_same_learned_state(by_column.estimator_, by_array.estimator_)
    assert_same_learned_state(by_series.estimator_, by_array.estimator_)
    assert np.abs(by_array.estimator_.coef_).max() > 1e-3
    scores = by_column.decision_function(ddf[feats]).compute()
    assert np.array_equal(scores, by_array.estimator_.decision_function(X))
    # mutant: partitions in another order are another fit
    shuffled = dd.from_pandas(df.iloc[::-1].reset_index(drop=True), npartitions=4)
    other = Parallel(OAUCM(lam=0.01), n_epochs=1).fit(shuffled, "label")
    assert not np.array_equal(other.estimator_.coef_, by_column.estimator_.coef_)
    wrapper = Parallel(OAUCM(lam=0.01))
    with pytest.raises(ValueError, match="label column 'target'"):
        wrapper.fit(ddf, "target")
    text = df.assign(f0=["a"] * 2400)
    with pytest.raises(ValueError, match="numeric"):
        wrapper.fit(dd.from_pandas(text, npartitions=2), "label")
    assert not hasattr(wrapper, "estimator_")


def _received(dask_worker=None):
    return [k for t in dask_worker.transfer_incoming_log for k in t.get("keys", {})]


def test_block_tasks_run_where_the_block_is(clusters):
    from sosl.dask._engine import _holders
    X, y = skewed_stream(14, n=16000, p=20)
    assert _holders([X[:10], X[10:]]) == [None, None]          # in memory: no placement
    with distributed.Client(clusters[1]) as client:
        Xd, yd = client.persist(list(_dask(X, y, 2000)))
        distributed.wait([Xd, yd])
        blocks = list(Xd.to_delayed()[:, 0])
        who = client.who_has(Xd)
        want = [sorted(who[b.key]) for b in blocks]
        assert _holders(blocks) == want
        assert len({w[0] for w in want}) == 2                  # both workers hold blocks
        before = {w: len(k) for w, k in client.run(_received).items()}
        Parallel(OAUCM(lam=0.01), n_epochs=2).fit(Xd, yd)
        got = [k for w, keys in client.run(_received).items() for k in keys[before[w]:]]
    assert got                                          # y blocks and moments do travel
    assert not {b.key for b in blocks} & set(got)      # no X block moved


def test_client_merge_and_in_cluster_trees_give_the_same_bits(clusters, monkeypatch):
    import sosl.dask._estimator as SD  # where the fit reads it
    X, y = skewed_stream(5, n=3000, p=7)
    Xd, yd = _dask(X, y, 400)                                     # 8 blocks

    def fit(beta):
        with distributed.get_task_stream() as ts:
            est = Parallel(OAUCM(lam=0.01, forgetting=beta), n_epochs=2, shuffle=True,
                           random_state=0).fit(Xd, yd).estimator_
        return est, {str(d["key"]).split("-")[0].strip("('\"") for d in ts.data}

    with distributed.Client(clusters[1]):
        for beta in (1.0, 0.99):
            small, names = fit(beta)                        # one task merges them all
            assert "_merge_op" not in names and {"_summaries", "_reduce_moments"} <= names
            monkeypatch.setattr(SD, "_CLIENT_MERGE_BYTES", 0)     # the workers merge
            tree, names = fit(beta)
            assert "_merge_op" in names
            monkeypatch.undo()
            assert_same_learned_state(small, tree)
            assert np.abs(small.coef_).max() > 1e-2
        # mutant: each block's pass started from the moments of all the blocks (its own
        # rows counted twice) instead of the others' is caught
        real = S.tree_exclusive
        monkeypatch.setattr(S, "tree_exclusive",
                            lambda items, op, empty: (lambda t, o: (t, [t] * len(o)))(
                                *real(items, op, empty)))
        wrong, _ = fit(0.99)
    assert not np.array_equal(wrong.coef_, tree.coef_)
