"""``Parallel(..., moments="fixed")``: every block's pass against the fixed global moments.

The fit is checked against the documented algorithm written out on the client with the
NumPy reference of the kernel (:func:`sosl._core._linear_ref.fixed_pass`): the moments of
all rows, one reference pass per block from the merged w and the block's own step count,
the t-weighted merge. Mutants: the plain average of the block weights, and the
``"global"`` mode (moments that move with the block's rows), are different models.
"""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from helpers import assert_same_learned_state, skewed_stream

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from sosl import OAUCM, OAUCS, SketchedOAUCM  # noqa: E402
from sosl import state as S  # noqa: E402
from sosl._core import _linear_ref as ref  # noqa: E402
from sosl._core._codes import Schedule  # noqa: E402
from sosl.dask import Parallel  # noqa: E402


def _simulate(blocks, est, n_epochs=1, seed=None):
    """The documented algorithm on the client: the reference pass of each block against
    the moments of all rows, from the merged w and the block's own step count."""
    Xall = np.vstack([b[0] for b in blocks])
    sall = np.concatenate([np.where(b[1] == 1, 1.0, -1.0) for b in blocks])
    mom = S.moments_of_rows(Xall, sall)
    Sigma = mom.scatter / mom.weights[:, None, None]
    schedule = int(Schedule.STEP_INV_LAM_T if est.eta is None else Schedule.STEP_CONSTANT)
    eta = 0.0 if est.eta is None else est.eta
    p = Xall.shape[1]
    w, ts = np.zeros(p), [0] * len(blocks)
    for epoch in range(n_epochs):
        ws = []
        for j, (Xb, yb) in enumerate(blocks):
            order = (np.arange(Xb.shape[0]) if seed is None
                     else np.random.default_rng([seed, epoch, j]).permutation(Xb.shape[0]))
            wj = w.copy()
            ts[j] = ref.fixed_pass(Xb, np.where(yb == 1, 1.0, -1.0), order, wj, mom.means,
                                   Sigma, mom.counts, ts[j], est.lam, eta, schedule,
                                   est._loss)
            ws.append(wj)
        w = sum(t * wj for t, wj in zip(ts, ws)) / sum(ts)
    return w, ws, ts, mom


@pytest.mark.parametrize("Est,kw", [(OAUCM, dict(lam=0.01)), (OAUCS, dict(lam=0.01, eta=0.02))])
@pytest.mark.parametrize("n_epochs,seed", [(1, None), (2, None), (2, 5)])
@pytest.mark.parametrize("p", [5, 40, 100])
def test_fixed_fit_is_the_documented_algorithm(clusters, Est, kw, n_epochs, seed, p):
    """p = 5 and 40: the kernel's own loops for Sigma w; p = 100: BLAS dsymv."""
    X, y = skewed_stream(1, n=1550, p=p)
    cuts = [200, 950, 1150]                               # unequal blocks
    blocks = [(X[i], y[i]) for i in np.split(np.arange(1550), cuts)]
    w, ws, ts, mom = _simulate(blocks, Est(**kw), n_epochs, seed)
    with distributed.Client(clusters[1]):
        chunks = tuple(np.diff([0] + cuts + [1550]).tolist())
        Xd = da.from_array(X, chunks=(chunks, p))
        yd = da.from_array(y, chunks=(chunks,))
        fit = Parallel(Est(**kw), moments="fixed", n_epochs=n_epochs, shuffle=seed is not None,
                       random_state=seed).fit(Xd, yd)
    e = fit.estimator_
    scale = np.abs(w).max()
    assert scale > 1e-2
    assert np.abs(e.coef_[0] - w).max() < 1e-11 * scale
    assert e.t_ == e.n_seen_ == sum(ts) == n_epochs * 1550 and fit.n_iter_ == n_epochs
    assert np.array_equal(e.counts_, mom.counts)
    assert np.allclose(e.covariances_, mom.scatter / mom.weights[:, None, None], rtol=1e-12,
                       atol=1e-13)
    assert np.allclose(e.means_, mom.means, rtol=1e-12, atol=1e-14)
    assert np.all(np.isfinite(e.calibration_)) and e.calibration_[0] > 0
    # mutants: the plain average, and moments that move with the block's rows
    assert np.abs(np.mean(ws, axis=0) - e.coef_[0]).max() > 1e-3 * scale
    glob = Parallel(Est(**kw), n_epochs=n_epochs, shuffle=seed is not None,
                    random_state=seed).fit([b[0] for b in blocks], [b[1] for b in blocks])
    assert np.abs(glob.estimator_.coef_ - e.coef_).max() > 1e-6 * scale


def test_result_does_not_depend_on_the_workers(clusters):
    X, y = skewed_stream(2, n=2400, p=36)
    Xd, yd = da.from_array(X, chunks=(500, 36)), da.from_array(y, chunks=500)
    fits = []
    kw = dict(moments="fixed", n_epochs=2, shuffle=True, random_state=0)
    for cluster in clusters:
        with distributed.Client(cluster):
            fits.append(Parallel(OAUCM(lam=0.01), **kw).fit(Xd, yd).estimator_)
    fits.append(Parallel(OAUCM(lam=0.01), **kw).fit(Xd, yd).estimator_)   # threads
    assert_same_learned_state(fits[0], fits[1])
    assert_same_learned_state(fits[0], fits[2])
    other = Parallel(OAUCM(lam=0.01), **dict(kw, random_state=1)).fit(Xd, yd)
    assert not np.array_equal(other.estimator_.coef_, fits[0].coef_)   # the seed matters
    in_order = Parallel(OAUCM(lam=0.01), moments="fixed", n_epochs=2).fit(Xd, yd)
    assert not np.array_equal(in_order.estimator_.coef_, fits[0].coef_)


@pytest.mark.parametrize("shuffle", [False, True])
def test_sparse_blocks_equal_dense_blocks(shuffle):
    from sosl.dask import _solvers as sd
    X, y = skewed_stream(3, n=2000, p=8)
    X[np.abs(X) < 1.0] = 0.0
    idx = np.split(np.arange(2000), [600, 1300])
    kw = dict(moments="fixed", n_epochs=1, shuffle=shuffle, random_state=4)
    dense = Parallel(OAUCS(lam=0.01, eta=0.01), **kw).fit([X[i] for i in idx],
                                                         [y[i] for i in idx]).estimator_
    sparse = Parallel(OAUCS(lam=0.01, eta=0.01), **kw).fit(
        [sp.csr_matrix(X[i]) for i in idx], [y[i] for i in idx]).estimator_
    assert np.allclose(sparse.coef_, dense.coef_, rtol=1e-12, atol=1e-14)
    assert np.allclose(sparse.calibration_, dense.calibration_, rtol=1e-12)
    assert np.abs(dense.coef_).max() > 1e-3
    # sparse rows densified in several pieces (the pass continues w and t across them)
    old = sd._FIXED_PIECE_VALUES
    try:
        sd._FIXED_PIECE_VALUES = 8 * 70                   # 70 rows a piece
        pieces = Parallel(OAUCS(lam=0.01, eta=0.01), **kw).fit(
            [sp.csr_matrix(X[i]) for i in idx], [y[i] for i in idx]).estimator_
    finally:
        sd._FIXED_PIECE_VALUES = old
    assert_same_learned_state(pieces, sparse)


def test_one_block_is_one_fixed_pass_over_all_rows():
    X, y = skewed_stream(4, n=1800, p=7)
    est = Parallel(OAUCM(lam=0.01), moments="fixed").fit([X], [y]).estimator_
    w, _, ts, _ = _simulate([(X, y)], OAUCM(lam=0.01))
    assert est.t_ == ts[0] == 1800
    assert np.abs(est.coef_[0] - w).max() < 1e-11 * np.abs(w).max()
    seq = OAUCM(lam=0.01).fit(X, y)                     # not the sequential pass
    assert np.abs(seq.coef_ - est.coef_).max() > 1e-4


def test_bad_settings_and_a_diverging_pass_leave_the_wrapper_as_it_was():
    X, y = skewed_stream(5, n=1200, p=5)
    with pytest.raises(ValueError, match="'global', 'local' or 'fixed'"):
        Parallel(OAUCM(), moments="frozen").fit([X], [y])
    with pytest.raises(ValueError, match="forgetting=1.0"):
        Parallel(OAUCM(forgetting=0.99), moments="fixed").fit([X], [y])
    with pytest.raises(ValueError, match="must be 'global'"):
        Parallel(OAUCM(), moments="fixed", solver="lbfgs").fit([X], [y])
    with pytest.raises(ValueError, match="local"):
        Parallel(SketchedOAUCM(rank=2), moments="fixed").fit([X], [y])
    wrapper = Parallel(OAUCS(lam=0.0, eta=0.01), moments="fixed")
    wrapper.fit([X[:600], X[600:]], [y[:600], y[600:]])
    before = wrapper.estimator_
    coef = before.coef_.copy()
    with pytest.raises(FloatingPointError, match="non-finite"):
        wrapper.fit([1e3 * X[:600], 1e3 * X[600:]], [y[:600], y[600:]])
    assert wrapper.estimator_ is before and np.array_equal(before.coef_, coef)
    Xnan = X.copy()
    Xnan[700, 2] = np.nan
    with pytest.raises(ValueError, match="NaN or infinity"):
        wrapper.fit([Xnan[:600], Xnan[600:]], [y[:600], y[600:]])
    assert wrapper.estimator_ is before


def test_fixed_model_pickles_and_continues_streaming():
    X, y = skewed_stream(6, n=3000, p=6)
    idx = np.split(np.arange(2000), 4)
    wrapper = Parallel(OAUCM(lam=0.01), moments="fixed", n_epochs=1).fit(
        [X[i] for i in idx], [y[i] for i in idx])
    est = wrapper.to_estimator()
    again = pickle.loads(pickle.dumps(wrapper)).estimator_
    est.partial_fit(X[2000:], y[2000:])
    again.partial_fit(X[2000:], y[2000:])
    assert_same_learned_state(est, again)
    assert est.t_ == 3000 and est.counts_.sum() == 3000
    assert np.array_equal(wrapper.predict(X), wrapper.estimator_.predict(X))


def test_client_merge_and_in_cluster_trees_give_the_same_bits(clusters, monkeypatch):
    """The global moments merged by one task (small states) or by a tree of tasks on the workers:
    the same tree, the same fixed-moment fit to the bit."""
    import sosl.dask._estimator as SD
    X, y = skewed_stream(8, n=3000, p=7)
    Xd, yd = da.from_array(X, chunks=(400, 7)), da.from_array(y, chunks=400)   # 8 blocks

    def fit():
        with distributed.get_task_stream() as ts:
            est = Parallel(OAUCM(lam=0.01), moments="fixed", n_epochs=2, shuffle=True,
                           random_state=0).fit(Xd, yd).estimator_
        return est, {str(d["key"]).split("-")[0].strip("('\"") for d in ts.data}

    with distributed.Client(clusters[1]):
        small, names = fit()
        assert "_merge_op" not in names and {"_reduce_moments", "_fixed_passes"} <= names
        monkeypatch.setattr(SD, "_CLIENT_MERGE_BYTES", 0)
        tree, names = fit()
        assert "_merge_op" in names and "_fixed_passes" in names
    assert_same_learned_state(small, tree)
    assert np.abs(small.coef_).max() > 1e-2
