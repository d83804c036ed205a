"""The task engine of :class:`sosl.dask.Parallel`: where a block's task runs (placement on
the workers that hold it) and how a round of tasks is submitted and gathered (dask graphs
for any scheduler, or futures of a ``distributed`` client).
"""

from __future__ import annotations

import threading
from typing import Any

from ._blocks import _dask


def _holders(Xs):
    """For each block, the workers of the current ``distributed`` client that already hold
    it in memory (None: no client, or the block is not computed yet)."""
    return _where(Xs)[0]


def _where(Xs, ys=()):
    """``(holders, client, stored)``: :func:`_holders` of the X blocks, the current
    ``distributed`` client (or None), and for each X block then each y block whether its
    own key is in cluster memory (a persisted array's chunk: no task computes it), in one
    query of the scheduler."""
    import sys
    none = [None] * len(Xs), None, [False] * (len(Xs) + len(ys))
    if "distributed" not in sys.modules:
        return none
    import distributed
    try:
        client = distributed.Client.current(allow_global=True)   # as_current() too
    except ValueError:                                  # no client: a local scheduler
        return none
    keys = []
    for Xb in Xs:
        if not hasattr(Xb, "key"):                      # an in-memory block
            return none[:1] + (client,) + none[2:]
        futs = distributed.futures_of(Xb)               # a task over one stored block
        keys.append(futs[0].key if len(futs) == 1 else Xb.key)
    own = [getattr(b, "key", None) for b in list(Xs) + list(ys)]
    who = client.sync(client.scheduler.who_has,
                      keys=list(dict.fromkeys(keys + [k for k in own if k is not None])))
    return ([sorted(who.get(k, ())) or None for k in keys], client,
            [k is not None and bool(who.get(k)) for k in own])


def _task(holders, j, fn, *args):
    """``delayed(fn)(*args)`` for block j, placed on the workers that hold it (None: no
    restriction; see :func:`_placement`)."""
    return _task_on(holders[j], fn, *args)


def _groups(holders):
    """The blocks in groups that run as one task a round: the blocks held by one worker
    (its first holder), in block order, and each block of unknown place alone. Each task
    has a fixed cost to the scheduler and its worker; a group's task runs its blocks one after the
    other, as the worker would have run their tasks, so the results are the same."""
    out: list[list[int]] = []
    by: dict[Any, list[int]] = {}
    for j, h in enumerate(holders):
        if h is None:
            out.append([j])
        elif h[0] in by:
            by[h[0]].append(j)
        else:
            by[h[0]] = [j]
            out.append(by[h[0]])
    return out


def _group_workers(holders, group):
    """The worker a group's task goes to (its blocks' common holder), or None."""
    return None if holders[group[0]] is None else [holders[group[0]][0]]


def _placement(workers):
    """The keywords that send a task to ``workers`` (None: anywhere). A loose restriction:
    dask's own placement can pick another worker when one is busier (moving the block,
    tens of MB), which this prevents while a holder lives; if they are lost, any worker
    may run the task."""
    return {} if workers is None else {"workers": workers, "allow_other_workers": True}


def _task_on(workers, fn, *args, priority=0):
    """``delayed(fn)(*args)`` placed on ``workers`` (:func:`_placement`); a task of higher
    ``priority`` runs first among the ready tasks of its worker."""
    from dask import delayed
    where = _placement(workers)
    if priority:
        where["priority"] = priority
    with _dask().annotate(**where):
        return delayed(fn)(*args)


class _Graphs:
    """Rounds as dask graphs (``delayed``), for any scheduler: each :meth:`gather` is one
    ``dask.compute``; a held task (``dask.persist``) stays in cluster memory while
    referenced (with a local scheduler it is computed at once)."""

    def __init__(self, Xs, ys, holders):
        dask = _dask()
        self.Xs, self.ys = Xs, ys
        self.blocks = Xs, ys
        # blocks already in cluster or client memory: the passes can be submitted before
        # the moments round ends; blocks a task still has to load would then be held from
        # their moments task to their pass task, so for them the client waits for the
        # round (each round loads them again, as the fit's docstring says)
        self.wait_rounds = not all(h is not None or not dask.is_dask_collection(Xb)
                                   for h, Xb in zip(holders, Xs))

    @staticmethod
    def submit(workers, fn, *args, priority=0):
        return _task_on(workers, fn, *args, priority=priority)

    @staticmethod
    def hold(items):
        return list(_dask().persist(*items))

    @staticmethod
    def gather(items):
        return list(_dask().compute(*items))

    @staticmethod
    def value(x):
        from dask import delayed
        return delayed(x)                               # one key, shared by the tasks


class _Futures:
    """Rounds as futures of a ``distributed`` client, used when every X block is a future
    in cluster memory (a persisted array or dataframe): ``client.submit`` per task (a
    graph of ``delayed`` calls costs the client more per task to build), the dependencies
    left to the scheduler, so the moments round, its reduction and the passes go out at
    once and the client waits once. The same task functions as :class:`_Graphs`: the same bits."""

    wait_rounds = False

    def __init__(self, client, blocks, Xs, ys):
        self.client = client
        self.blocks = blocks
        self.Xs, self.ys = Xs, ys

    def submit(self, workers, fn, *args, priority=0):
        return self.client.submit(fn, *args, pure=False, priority=priority,
                                  **_placement(workers))

    @staticmethod
    def hold(items):
        return list(items)

    def gather(self, items):
        return self.client.gather(items)

    @staticmethod
    def value(x):
        return x                                        # small (w): in each task's message


def _engine(Xs, ys):
    """``(holders, engine)``: :func:`_holders` of the X blocks, and :class:`_Futures` when
    every X block is in the cluster memory of the current distributed client and every y
    block too or in the client's, else :class:`_Graphs`."""
    dask = _dask()
    holders, client, stored = _where(Xs, ys)
    K = len(Xs)
    if client is not None and all(stored[:K]) and all(
            ok or not dask.is_dask_collection(b) for ok, b in zip(stored[K:], ys)):
        from distributed import Future
        fx: list[Any] = [Future(b.key, client) for b in Xs]
        fy = [Future(b.key, client) if ok else b for ok, b in zip(stored[K:], ys)]
        return holders, _Futures(client, (Xs, ys), fx, fy)
    return holders, _Graphs(Xs, ys, holders)


def _within(seconds, fn, *args):
    """``fn(*args)`` in a helper thread; TimeoutError if it has not returned in time (its
    result, if it comes later, is dropped: the caller assigns nothing)."""
    box: dict = {}

    def run():
        try:
            box["value"] = fn(*args)
        except BaseException as exc:                    # re-raised in the caller
            box["error"] = exc
    worker = threading.Thread(target=run, daemon=True, name="sosl-parallel-fit")
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        raise TimeoutError(f"Parallel.fit did not finish within timeout={seconds} s (a "
                           "worker paused over its memory limit waits without an error); "
                           "the wrapper is left as it was")
    if "error" in box:
        raise box["error"]
    return box["value"]

