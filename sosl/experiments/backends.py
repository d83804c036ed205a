"""Where the runner's tasks execute: joblib locally, a dask.distributed cluster, or ray.

:func:`executor` opens a session on one backend; its ``map_unordered(fn, tasks)`` takes a
module-level function and a list of argument tuples and yields ``fn(*task)`` for every task
in the order the tasks finish (:func:`run_tasks` does both at once). Every task is deterministic
(all its randomness is seeded from its arguments), so each backend yields the same set of
results; only the order and the timing columns differ.

* ``loky`` (default), ``threading``, ``multiprocessing``: :class:`joblib.Parallel` with
  unordered results; ``None`` leaves the choice to an enclosing
  :func:`joblib.parallel_config`.
* ``dask``: :mod:`distributed` used directly (``Client.submit`` and ``as_completed``) rather
  than through joblib's dask backend. Without a scheduler address a
  :class:`distributed.LocalCluster` of ``n_jobs`` single-threaded worker processes bound to
  127.0.0.1 is started for the call and closed after it; with one, the running cluster is
  used as it is (its workers must import sosl and see the data directory).
* ``ray``: ray's task API (``ray.remote`` and ``ray.wait``), not ``ray.util.joblib`` (whose
  joblib backend cannot return results as they finish). Without an address (and no
  ``$RAY_ADDRESS``) a local ray instance of ``n_jobs`` CPUs on 127.0.0.1 is started for
  the call and shut down after it.

For the two cluster backends the tasks travel in small batches, a few per worker in
flight at a time, so a grid of 10^5 tasks is neither submitted at once nor paid one
scheduler round trip per task.
"""

import math
import os
from contextlib import contextmanager

import joblib

__all__ = ["BACKENDS", "BackendUnavailable", "dask_client", "executor", "run_tasks"]

BACKENDS = ("loky", "threading", "multiprocessing", "dask", "ray")

#: batches in flight per worker on the cluster backends
_IN_FLIGHT = 3
#: largest batch sent to a cluster worker
_MAX_BATCH = 16


class BackendUnavailable(RuntimeError):
    """The backend asked for cannot be used here (a package is missing, a cluster unreachable)."""


def _run_batch(fn, batch):
    """Run one batch of tasks in a worker; the results in task order."""
    return [fn(*task) for task in batch]


def _batches(tasks, n_workers):
    size = max(1, min(_MAX_BATCH, math.ceil(len(tasks) / (4 * _IN_FLIGHT * max(n_workers, 1)))))
    return [tasks[i:i + size] for i in range(0, len(tasks), size)]


def run_tasks(fn, tasks, backend="loky", n_jobs=1, scheduler=None):
    """Yield ``fn(*task)`` for each task, in completion order (one backend session).

    Parameters
    ----------
    fn : callable
        A module-level function (it is pickled by reference for the worker processes).
    tasks : list of tuple
        Positional arguments of each call.
    backend, n_jobs, scheduler
        As for :func:`executor`.
    """
    with executor(backend, n_jobs, scheduler) as ex:
        yield from ex.map_unordered(fn, tasks)


@contextmanager
def executor(backend="loky", n_jobs=1, scheduler=None):
    """A session on one backend; its ``map_unordered(fn, tasks)`` yields ``fn(*task)`` per task.

    A local dask cluster or ray instance started here lives for the whole ``with`` block, so
    the runner's two phases (inner CV, then the refits) share it.

    Parameters
    ----------
    backend : {"loky", "threading", "multiprocessing", "dask", "ray"} or None
        See the module docstring; None defers to an enclosing ``joblib.parallel_config``.
    n_jobs : int
        Workers (negative as in joblib: -1 = one per core). Ignored when ``scheduler``
        names a running cluster (its workers are used).
    scheduler : str or None
        Address of a running dask scheduler or ray cluster.

    Raises
    ------
    BackendUnavailable
        When dask/distributed or ray is asked for and cannot be imported or reached.
    ValueError
        For an unknown backend name or ``n_jobs == 0``.
    """
    if backend is not None and backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)} or None, got {backend!r}")
    if int(n_jobs) == 0:
        raise ValueError("n_jobs must be a positive number of workers or negative, got 0")
    if backend == "dask":
        with dask_client(scheduler, _local_workers(n_jobs)) as client:
            yield _DaskExecutor(client)
    elif backend == "ray":
        with _ray_session(scheduler, _local_workers(n_jobs)):
            yield _RayExecutor()
    else:
        yield _JoblibExecutor(backend, n_jobs)


class _JoblibExecutor:
    def __init__(self, backend, n_jobs):
        self.backend, self.n_jobs = backend, n_jobs

    def map_unordered(self, fn, tasks):
        if not tasks:
            return iter(())
        parallel = joblib.Parallel(n_jobs=self.n_jobs, backend=self.backend,
                                   return_as="generator_unordered", batch_size="auto")
        return parallel(joblib.delayed(fn)(*t) for t in tasks)


def _local_workers(n_jobs):
    return max(1, joblib.effective_n_jobs(int(n_jobs)))


@contextmanager
def dask_client(scheduler=None, n_workers=1, processes=True, timeout=20):
    """A :class:`distributed.Client` of ``scheduler``, or of a local cluster made for it.

    Parameters
    ----------
    scheduler : str or None
        Address of a running scheduler (``tcp://host:8786``), used as it is.
    n_workers : int
        Workers of the local cluster started when ``scheduler`` is None.
    processes : bool, default=True
        Local workers as processes (True: real parallelism, each worker imports sosl
        once, a few seconds) or as threads of this process (quick to start; the Cython
        passes release the GIL, the bookkeeping does not).
    timeout : float, default=20
        Seconds to wait for a connection to ``scheduler``.

    The local cluster has ``n_workers`` workers of one thread each and listens on
    127.0.0.1 only (scheduler, workers and the scheduler's HTTP endpoint, on free ports);
    it is closed on exit.
    """
    try:
        from distributed import Client, LocalCluster
    except ImportError as err:
        raise BackendUnavailable("--backend dask needs dask and distributed "
                                 f"(pip install 'sosl[dask]'): {err}") from None
    if scheduler:
        try:
            client = Client(scheduler, timeout=f"{float(timeout)}s")
        except OSError as err:
            raise BackendUnavailable(
                f"cannot reach the dask scheduler {scheduler}: {err}") from None
        try:
            yield client
        finally:
            client.close()
        return
    cluster = LocalCluster(n_workers=int(n_workers), threads_per_worker=1,
                           processes=bool(processes), protocol="tcp://", host="127.0.0.1",
                           dashboard_address="127.0.0.1:0")
    try:
        with Client(cluster) as client:
            yield client
    finally:
        cluster.close()


class _DaskExecutor:
    def __init__(self, client):
        self.client = client

    def map_unordered(self, fn, tasks):
        from distributed import as_completed

        if not tasks:
            return
        client = self.client
        n_workers = sum(client.nthreads().values()) or 1
        todo = _batches(list(tasks), n_workers)[::-1]
        first = [client.submit(_run_batch, fn, todo.pop(), pure=False)
                 for _ in range(min(len(todo), _IN_FLIGHT * n_workers))]
        pending = as_completed(first)
        try:
            for future in pending:
                results = future.result()
                if todo:
                    pending.add(client.submit(_run_batch, fn, todo.pop(), pure=False))
                yield from results
        finally:
            left = list(pending.futures)
            if left:
                client.cancel(left)


@contextmanager
def _ray_session(scheduler, n_workers):
    try:
        import ray
    except ImportError as err:
        raise BackendUnavailable(f"--backend ray needs ray (pip install 'sosl[ray]'): {err}") \
            from None
    address = scheduler or os.environ.get("RAY_ADDRESS") or None
    started = not ray.is_initialized()
    if started:
        kw = {"address": address} if address else {"num_cpus": int(n_workers),
                                                  "include_dashboard": False,
                                                  "_node_ip_address": "127.0.0.1"}
        try:
            ray.init(log_to_driver=False, **kw)
        except ConnectionError as err:
            raise BackendUnavailable(f"cannot reach the ray cluster {address}: {err}") from None
    try:
        yield
    finally:
        if started:
            ray.shutdown()


class _RayExecutor:
    def map_unordered(self, fn, tasks):
        import ray

        if not tasks:
            return
        n_workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
        remote = ray.remote(num_cpus=1)(_run_batch)
        todo = _batches(list(tasks), n_workers)[::-1]
        pending = [remote.remote(fn, todo.pop())
                   for _ in range(min(len(todo), _IN_FLIGHT * n_workers))]
        try:
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                if todo:
                    pending.append(remote.remote(fn, todo.pop()))
                yield from ray.get(done[0])
        finally:
            for ref in pending:
                ray.cancel(ref)
