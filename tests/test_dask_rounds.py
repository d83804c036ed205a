"""``Parallel`` on blocks held in cluster memory: one task per worker a round, submitted as
futures (``sosl.dask._Futures``), against the graph of one task per block (``_Graphs``).

Blocks are placed by hand, block j on worker j mod W, so that a worker's group of blocks
is not a contiguous run: a reduction that took the block moments in the order the groups
arrive (worker by worker) instead of block order is a mutant the tests catch.
"""

import dask
import numpy as np
import pytest
from helpers import assert_same_learned_state, skewed_stream

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import sosl.dask._engine as SE  # noqa: E402
import sosl.dask._estimator as SD  # noqa: E402  (the fit, where tests patch)
from sosl import OAUCM, OAUCS  # noqa: E402
from sosl.dask import Parallel  # noqa: E402

N, P, CHUNK = 4800, 9, 600                              # 8 blocks


def _held(client, X, y, chunk=CHUNK):
    """Dask arrays of X and y whose block j is in the memory of worker j mod W."""
    workers = sorted(client.scheduler_info()["workers"])
    xs, ys = [], []
    for j, a in enumerate(range(0, X.shape[0], chunk)):
        at = [workers[j % len(workers)]]
        Xb, yb = X[a:a + chunk], y[a:a + chunk]
        fx = client.scatter(Xb, workers=at, hash=False)
        fy = client.scatter(yb, workers=at, hash=False)
        xs.append(da.from_delayed(dask.delayed(fx), Xb.shape, dtype=Xb.dtype))
        ys.append(da.from_delayed(dask.delayed(fy), yb.shape, dtype=yb.dtype))
    Xp, yp = client.persist([da.concatenate(xs), da.concatenate(ys)])
    distributed.wait([Xp, yp])
    holders, run = SD._engine(list(Xp.to_delayed()[:, 0]), list(yp.to_delayed()))
    assert [h[0] for h in holders] == [workers[j % len(workers)] for j in range(len(xs))]
    assert isinstance(run, SE._Futures)
    return Xp, yp


def _names(ts):
    return [str(d["key"]).split("-")[0].strip("('\"") for d in ts.data]


CASES = {
    "global": (OAUCM(lam=0.01), dict(n_epochs=1)),
    "global-2-shuffled": (OAUCM(lam=0.01), dict(n_epochs=2, shuffle=True, random_state=1)),
    "forgetting": (OAUCM(lam=0.01, forgetting=0.995),          # a moments round an epoch
                   dict(n_epochs=2, shuffle=True, random_state=2)),
    "local": (OAUCS(lam=0.01, eta=0.02), dict(n_epochs=2, moments="local")),
    "fixed": (OAUCM(lam=0.01), dict(n_epochs=2, moments="fixed", shuffle=True,
                                    random_state=3)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_blocks_in_cluster_memory_give_the_bits_of_a_task_per_block(clusters, case):
    est, kw = CASES[case]
    X, y = skewed_stream(21, n=N, p=P)
    Xd, yd = da.from_array(X, chunks=(CHUNK, P)), da.from_array(y, chunks=CHUNK)
    ref = Parallel(est, **kw).fit(Xd, yd)                # no client: threads, a task a block
    assert np.abs(ref.estimator_.coef_).max() > 1e-2
    rounds = kw["n_epochs"] if "forgetting" in case else 1
    for cluster in clusters:
        W = len(cluster.workers)
        with distributed.Client(cluster) as client:
            Xp, yp = _held(client, X, y)
            with distributed.get_task_stream() as ts:
                got = Parallel(est, **kw).fit(Xp, yp)
        assert_same_learned_state(got.estimator_, ref.estimator_)
        assert got.block_rows_ == ref.block_rows_ and got.n_iter_ == ref.n_iter_
        names = _names(ts)
        passes = "_fixed_passes" if kw.get("moments") == "fixed" else "_passes"
        # one task per worker a round, one reduction a moments round
        assert names.count("_summaries") == W * rounds
        assert names.count("_reduce_moments") == rounds
        assert names.count(passes) == W * kw["n_epochs"]
        assert "_summary" not in names and "_block_pass" not in names
        # held X with y still to be computed: a graph, grouped by worker as well
        with distributed.Client(cluster) as client:
            Xp, _ = _held(client, X, y)
            assert isinstance(SD._engine(list(Xp.to_delayed()[:, 0]),
                                         list(yd.to_delayed()))[1], SE._Graphs)
            with distributed.get_task_stream() as ts:
                mixed = Parallel(est, **kw).fit(Xp, yd)
        assert_same_learned_state(mixed.estimator_, ref.estimator_)
        assert _names(ts).count("_summaries") == W * rounds


def test_the_reduction_takes_the_blocks_in_block_order(clusters, monkeypatch):
    """Mutant: block moments relabelled in the order the groups arrive (worker by worker:
    0, 2, 4, 6, 1, 3, 5, 7) give each block the wrong prior, a different model."""
    X, y = skewed_stream(22, n=N, p=P)
    kw = dict(n_epochs=1)
    with distributed.Client(clusters[1]) as client:
        Xp, yp = _held(client, X, y)
        right = Parallel(OAUCM(lam=0.01), **kw).fit(Xp, yp).estimator_
        real = SD._reduce_moments

        def arrival_order(groups, *args):
            flat = [s for g in groups for s in g]
            return real([[(s[0], dict(s[1], block=i)) for i, s in enumerate(flat)]], *args)

        monkeypatch.setattr(SD, "_reduce_moments", arrival_order)
        wrong = Parallel(OAUCM(lam=0.01), **kw).fit(Xp, yp).estimator_
    assert not np.array_equal(wrong.coef_, right.coef_)
    assert np.array_equal(wrong.counts_, right.counts_)       # the same rows, all of them


def test_one_held_block_is_the_sequential_pass(clusters):
    X, y = skewed_stream(23, n=1500, p=P)
    with distributed.Client(clusters[1]) as client:
        Xp, yp = _held(client, X, y, chunk=1500)
        par = Parallel(OAUCM(lam=0.01)).fit(Xp, yp).estimator_
    assert_same_learned_state(par, OAUCM(lam=0.01).fit(X, y))


def test_big_states_merged_by_a_tree_of_tasks_give_the_same_bits(clusters, monkeypatch):
    X, y = skewed_stream(24, n=N, p=P)
    kw = dict(n_epochs=2, shuffle=True, random_state=0)
    with distributed.Client(clusters[1]) as client:
        Xp, yp = _held(client, X, y)
        fits = {}
        for mode in ("global", "fixed"):
            small = Parallel(OAUCM(lam=0.01), moments=mode, **kw).fit(Xp, yp)
            monkeypatch.setattr(SD, "_CLIENT_MERGE_BYTES", 0)     # the workers' trees
            with distributed.get_task_stream() as ts:
                tree = Parallel(OAUCM(lam=0.01), moments=mode, **kw).fit(Xp, yp)
            monkeypatch.undo()
            assert "_merge_op" in _names(ts) and "_reduce_moments" not in _names(ts)
            assert_same_learned_state(small.estimator_, tree.estimator_)
            fits[mode] = small.estimator_
    assert not np.array_equal(fits["global"].coef_, fits["fixed"].coef_)


def test_bad_held_blocks_are_refused_and_the_wrapper_is_unchanged(clusters):
    X, y = skewed_stream(25, n=N, p=P)
    with distributed.Client(clusters[1]) as client:
        wrapper = Parallel(OAUCM(lam=0.01), n_epochs=1).fit(*_held(client, X, y))
        before = wrapper.estimator_
        coef = before.coef_.copy()
        three = y.copy()
        three[700] = 2                                          # a third label, block 1
        with pytest.raises(ValueError, match="exactly two classes"):
            wrapper.fit(*_held(client, X, three))
        Xnan = X.copy()
        Xnan[3100, 4] = np.nan                                  # block 5
        with pytest.raises(ValueError, match="block 5: X contains NaN"):
            wrapper.fit(*_held(client, Xnan, y))
        with pytest.raises(ValueError, match="classes=.*differ"):
            Parallel(OAUCM(lam=0.01), moments="fixed").fit(*_held(client, X, y),
                                                           classes=[0, 7])
    assert wrapper.estimator_ is before and np.array_equal(before.coef_, coef)


def test_a_held_dataframe_with_auto_epochs(clusters):
    """A persisted dataframe whose label column is split off by tasks (blocks still to be
    computed, of lengths the client does not know): the client waits for the moments
    round (n_epochs="auto" needs its row counts: 2 epochs on these small blocks)."""
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    X, y = skewed_stream(26, n=2400, p=5)
    df = pd.DataFrame(X, columns=[f"f{k}" for k in range(5)]).assign(label=y)
    ref = Parallel(OAUCM(lam=0.01)).fit(da.from_array(X, chunks=(600, 5)),
                                        da.from_array(y, chunks=600))
    assert ref.n_iter_ == 2
    with distributed.Client(clusters[1]) as client:
        ddf = client.persist(dd.from_pandas(df, npartitions=4))
        distributed.wait(ddf)
        Xs, ys = SD._split(ddf, "label")
        assert SD._known_rows(ddf, Xs) is None
        assert SD._engine(Xs, ys)[1].wait_rounds
        with distributed.get_task_stream() as ts:
            got = Parallel(OAUCM(lam=0.01)).fit(ddf, "label")
    assert got.n_iter_ == 2 and got.block_rows_ == [600] * 4
    assert_same_learned_state(got.estimator_, ref.estimator_)
    assert _names(ts).count("_reduce_moments") == 1
