"""The one-BLAS-thread context of the passes (``sosl._core._blas``)."""

import copy
import os
import threading

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from sosl import OAUCM
from sosl._core import _blas
from sosl._core._blas import one_blas_thread
from sosl.linear import BLAS_THREADED_P


def _blas_threads():
    return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]


def test_the_context_sets_one_thread_and_restores_the_counts():
    with threadpool_limits(limits=2, user_api="blas"):
        before = _blas_threads()
        with one_blas_thread():
            assert set(_blas_threads()) == {1}
            with one_blas_thread():                     # nested
                assert set(_blas_threads()) == {1}
            assert set(_blas_threads()) == {1}
        assert _blas_threads() == before


def test_a_pass_does_not_depend_on_the_callers_thread_count():
    """The p x p dsymv of a pass runs with one thread whatever the caller set, so the
    bits are the same, and a one-row round equals the batch path bit for bit above the
    threaded size too."""
    p = BLAS_THREADED_P + 72
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, p))
    y = (X[:, 0] + rng.normal(size=300) > 0.5).astype(int)
    fits = []
    for threads in (1, 2):
        with threadpool_limits(limits=threads, user_api="blas"):
            fits.append(OAUCM().fit(X, y))
    assert np.array_equal(fits[0].coef_, fits[1].coef_)
    a = OAUCM().fit(X[:200], y[:200])
    b = copy.deepcopy(a)
    with threadpool_limits(limits=2, user_api="blas"):
        for i in range(200, 300):
            a.learn_one(X[i], y[i])
            b._transaction(b._learn_validated, X[i:i + 1], np.array([1.0 if y[i] else -1.0]))
    assert np.array_equal(a.coef_, b.coef_) and np.array_equal(a.scatter_, b.scatter_)


def test_the_batch_pass_runs_with_one_thread(monkeypatch):
    """Inside a pass at p >= BLAS_MIN_P the BLAS libraries are at one thread (the check
    above would also hold by luck if the two thread counts rounded alike)."""
    from sosl import linear
    seen = []
    real = linear._linear.linear_pass

    def spy(*args):
        seen.append(set(_blas_threads()))
        return real(*args)
    monkeypatch.setattr(linear._linear, "linear_pass", spy)
    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, linear.BLAS_MIN_P + 8))
    with threadpool_limits(limits=2, user_api="blas"):
        OAUCM().fit(X, (X[:, 0] > 0).astype(int))
        assert set(_blas_threads()) == {2}
    assert seen == [{1}]


def _direct_calls():
    """Whether some BLAS library is set through its own C function (pthreads OpenBLAS)."""
    with one_blas_thread():
        pass
    return any(direct is not None for _, direct, _ in _blas._LIBS)


def test_a_thread_that_does_not_control_openblas_leaves_its_count(monkeypatch):
    """OpenBLAS on pthreads has one process-wide count, which threadpoolctl lets only its
    controlling thread change; the direct calls keep that rule, so the context in another
    thread changes nothing while the main thread controls the count (and the main thread,
    which does, still gets one thread). The mutant that always calls directly is caught."""
    if not _direct_calls():
        pytest.skip("no pthreads OpenBLAS: every library goes through threadpoolctl")

    def counts_in_a_worker():
        seen = []

        def worker():
            with one_blas_thread():
                seen.append(_blas_threads())
        thread = threading.Thread(target=worker)
        thread.start()
        thread.join()
        return seen[0]

    with threadpool_limits(limits=2, user_api="blas"):   # the main thread controls it now
        before = _blas_threads()
        assert 2 in before
        with one_blas_thread():
            assert set(_blas_threads()) == {1}
        assert counts_in_a_worker() == before
        monkeypatch.setattr(_blas, "_controls", lambda: True)
        assert counts_in_a_worker() != before


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_forked_child_finds_the_libraries_anew():
    """The libraries found in the parent are dropped in a forked child (which may load
    another BLAS) and found again on its first use there; the child's context still works.
    Exit code 1: the cache survived the fork (the mutant without the fork hook); 2: no
    libraries found again; 3: the count not 1 inside the context."""
    with one_blas_thread():
        pass
    assert _blas._LIBS is not None
    pid = os.fork()
    if pid == 0:                                          # the child: report by exit code
        code = 4
        try:
            if _blas._LIBS is not None:
                code = 1
            else:
                with threadpool_limits(limits=2, user_api="blas"):
                    with one_blas_thread():
                        ones = set(_blas_threads()) == {1}
                code = 2 if _blas._LIBS is None else (0 if ones else 3)
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
