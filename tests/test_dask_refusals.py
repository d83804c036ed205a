"""Parallel refuses before any task what cannot merge (D5), names empty input and empty
blocks (D8/D9), picks a learner's only mode, and gives up after ``timeout`` seconds
leaving the wrapper as it was (issue 35, item 6)."""

import threading
import time

import numpy as np
import pytest

dask = pytest.importorskip("dask")

from sosl import FTRLAUC, OAUCM, SketchedOAUCM  # noqa: E402
from sosl.dask import Parallel  # noqa: E402

READS = []


def _block(X, y, delay=0.0):
    READS.append(X.shape[0])                    # one read per task that ran
    time.sleep(delay)
    return X


def _data(n=600, p=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    return X, (X[:, 0] + 0.3 * rng.normal(size=n) > 0).astype(int)


def _delayed_blocks(X, y, cuts, delay=0.0):
    idx = np.split(np.arange(X.shape[0]), cuts)
    return ([dask.delayed(_block)(X[i], y[i], delay) for i in idx], [y[i] for i in idx])


def test_capped_sketch_is_refused_before_any_task():
    X, y = _data()
    Xs, ys = _delayed_blocks(X, y, [300])
    READS.clear()
    with dask.config.set(scheduler="synchronous"):
        with pytest.raises(ValueError, match="max_columns=None"):
            Parallel(SketchedOAUCM()).fit(Xs, ys)       # default max_columns="auto"
        assert READS == []
        Parallel(SketchedOAUCM(max_columns=None)).fit(Xs, ys)
    assert sorted(READS) == [300, 300]


def test_ftrl_default_moments_picks_its_only_mode():
    X, y = _data()
    blocks = np.split(np.arange(600), [250])
    with dask.config.set(scheduler="synchronous"):
        a = Parallel(FTRLAUC()).fit([X[i] for i in blocks], [y[i] for i in blocks])
        b = Parallel(FTRLAUC(), moments="local").fit([X[i] for i in blocks],
                                                     [y[i] for i in blocks])
    assert np.array_equal(a.estimator_.coef_, b.estimator_.coef_)


def test_no_blocks_is_named():
    with pytest.raises(ValueError, match="no blocks"):
        Parallel(OAUCM()).fit([], [])


@pytest.mark.parametrize("make", [FTRLAUC, lambda: SketchedOAUCM(max_columns=None)])
def test_an_empty_block_is_named(make):
    X, y = _data()
    with dask.config.set(scheduler="synchronous"):
        with pytest.raises(ValueError, match="block 1 has no rows"):
            Parallel(make()).fit([X[:300], X[:0], X[300:]], [y[:300], y[:0], y[300:]])


def test_timeout_raises_and_leaves_the_wrapper_unfitted():
    X, y = _data()
    with dask.config.set(scheduler="synchronous"):
        par = Parallel(FTRLAUC(), timeout=0.3)
        Xs, ys = _delayed_blocks(X, y, [300], delay=1.0)
        start = time.perf_counter()
        with pytest.raises(TimeoutError, match="timeout=0.3"):
            par.fit(Xs, ys)
        assert time.perf_counter() - start < 0.9       # did not wait for the blocks
        time.sleep(2.5)                                 # the abandoned fit ends meanwhile
        assert not hasattr(par, "estimator_")
        assert not any(t.name == "sosl-parallel-fit" and t.is_alive()
                       for t in threading.enumerate())
        fitted = Parallel(FTRLAUC(), timeout=30).fit([X], [y])  # in time: fitted
        before = fitted.estimator_
        fitted.timeout = 0.3
        with pytest.raises(TimeoutError):
            fitted.fit(*_delayed_blocks(X, y, [300], delay=1.0))
        assert fitted.estimator_ is before              # the old fit kept
    with pytest.raises(ValueError, match="timeout"):
        Parallel(OAUCM(), timeout=-1).fit([X], [y])
