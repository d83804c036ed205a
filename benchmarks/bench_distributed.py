"""Data-parallel fits (sosl.dask.Parallel): quality against the sequential pass, speed with
1 and 2 workers, bytes per merge, and a projection to 16-256 workers.

1. **Quality.** Test AUC of ``Parallel(OAUCM(lam))`` against one sequential pass of
   ``OAUCM(lam)`` over the same training rows in the same order, for K = 2, 8, 64 blocks
   (simulated: Dask's synchronous scheduler in this process, so K is not limited by the
   machine), with global moments (1 and 2 epochs) and local moments. Two orders: the file
   order (contiguous blocks of the file) and a seeded shuffle of the training rows (then
   the sequential pass runs over the shuffled rows too). lam is chosen once per dataset
   and order, for the sequential pass, on a validation split (a seeded 20% of the
   training rows; the pass runs over the rest in order) from {1e-4, ..., 1},
   and used by every method. Data: a synthetic stream
   (``sosl.datasets.make_imbalanced_stream``), magic04 (``$SOSL_DATA_DIR``), w8a
   and sms_spam hashed to 512 columns (``$SOSL_DATA_DIR/highdim``, sparse blocks); 30% of
   the rows (seeded) are the test set.
2. **Bytes per merge** (the pickled class moments, 2p^2 + 3p + 3 numbers that matter) at
   p = 50, 500, 2000.
3. **Speed.** A dask array of ``--rows`` x 50 generated on the workers (``da.random``, a
   seeded generator task per block, 16 blocks), persisted there and rebalanced to 8 blocks
   per worker *before* timing (as Parquet or loader data would already sit on the
   workers: the timed fit ships no rows from the client), then fitted on a
   ``LocalCluster`` of 1 and of 2 single-threaded worker processes (interleaved, min of
   ``--repeats``; ``--work-stealing off`` keeps every task on the worker that holds its
   block). By default only the cluster being timed is running (``--clusters one``: each
   repeat starts a cluster, makes its rows, times its fits and stops it, the two clusters
   in alternating order), so the idle cluster's event loops, heartbeats and profilers
   (~35 ms/s of a worker process, ~25 ms/s of this process) do not take their share of
   the 2 cores during the other's fit; ``--clusters both`` keeps both running throughout.
   Printed: wall time; the process CPU time of the busiest worker process
   (tasks, serialization, event loop) per row it owns, against the in-memory sequential
   pass over the same rows (process CPU time); the thread CPU time of the moments and
   pass tasks; the bytes the workers fetched from each other during the fit; the CPU of
   the client process (client, scheduler and nannies); and a model of the idle machine
   from the thread CPU figures (a worker is busy for its tasks plus its measured idle
   rate, and with 2 workers the client process shares the 2 cores), which the load of a
   shared machine does not move as it moves the wall times.
4. **Projection** to 16-256 workers from the measured per-row task cost and the merge size,
   under the network model printed with it.

    SOSL_DATA_DIR=/work/shared/data nice -n 10 python benchmarks/bench_distributed.py
"""

import argparse
import math
import os
import pickle
import time

import numpy as np

from sosl import OAUCM
from sosl import datasets as ds
from sosl import state as S
from sosl.metrics import auc

LAMS = (1e-4, 1e-3, 1e-2, 1e-1, 1.0)
#: the quality table's columns: label, Parallel's settings, width
METHODS = (("global", dict(n_epochs=1), 8), ("global2", dict(n_epochs=2), 8),
           ("auto", dict(n_epochs="auto"), 11), ("local", dict(n_epochs=1, moments="local"), 8),
           ("lbfgs", dict(solver="lbfgs"), 13), ("fixed", dict(n_epochs=1, moments="fixed"), 8),
           ("fixed2", dict(n_epochs=2, moments="fixed"), 8),
           ("fixauto", dict(n_epochs="auto", moments="fixed"), 11))


def _datasets(n_synth):
    X, y = ds.make_imbalanced_stream(n_synth, 50, imbalance_ratio=10.0, class_sep=1.5,
                                     random_state=0)
    yield "synthetic", X, y
    if "magic04" in ds.available_datasets():
        X, y = ds.load_dataset("magic04")
        yield "magic04", X, y
    else:
        print("magic04: not in $SOSL_DATA_DIR, skipped")
    try:
        X, y = ds.load_highdim("w8a")
        yield "w8a", X, y
    except (ds.DatasetError, OSError) as err:
        print(f"w8a: skipped ({type(err).__name__})")
    try:
        texts, y = ds.load_sms_spam()
        # hashed to 512 columns: the dense learner keeps 2 x 512 x 512 moments
        X = ds.vectorize_texts(texts, "hashing", n_features=512)
        yield "sms_spam", X, y
    except (ds.DatasetError, OSError) as err:
        print(f"sms_spam: skipped ({type(err).__name__})")


def _score(est, X, y):
    return auc(y, est.decision_function(X))


def quality(args):
    import dask

    from sosl.dask import Parallel
    print("\n== 1. Test AUC: data-parallel fit minus the sequential pass (same rows, same order)")
    print("global = 1 epoch, global2 = 2 epochs (both from the global moments), auto = "
          "n_epochs='auto' (the default; its epochs in brackets), local = local moments, "
          "lbfgs = solver='lbfgs' (its passes in brackets), fixed / fixed2 = "
          "moments='fixed' (every row against the fixed moments of all rows), 1 / 2 epochs, "
          "fixauto = moments='fixed', n_epochs='auto'")
    methods = [m for m in METHODS if m[0] in args.methods]
    print(f"{'data':10s} {'order':8s} {'lam':>6s} {'seq AUC':>8s} {'K':>3s} {'rows/K':>7s} "
          + " ".join(f"{label:>{width}s}" for label, _, width in methods))
    worst, bounds_of = {}, {}
    with dask.config.set(scheduler="synchronous"):
        for name, X, y in _datasets(args.synthetic_rows):
            rng = np.random.default_rng(0)
            test = rng.random(X.shape[0]) < 0.3
            Xtr, ytr, Xte, yte = X[~test], y[~test], X[test], y[test]
            for order in ("file", "shuffled"):
                if order == "shuffled":
                    perm = np.random.default_rng(1).permutation(Xtr.shape[0])
                    Xo, yo = Xtr[perm], ytr[perm]
                else:
                    Xo, yo = Xtr, ytr
                val = np.random.default_rng(2).random(Xo.shape[0]) < 0.2
                best = max(LAMS, key=lambda lam: _score(
                    OAUCM(lam=lam).fit(Xo[~val], yo[~val]), Xo[val], yo[val]))
                seq = _score(OAUCM(lam=best).fit(Xo, yo), Xte, yte)
                for K in args.shards:
                    bounds = np.linspace(0, Xo.shape[0], K + 1).astype(int)
                    Xs = [Xo[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
                    ys = [yo[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
                    row = []
                    for label, kw, width in methods:
                        par = Parallel(OAUCM(lam=best), **kw).fit(Xs, ys)
                        d = _score(par, Xte, yte) - seq
                        extra = {"auto": par.n_iter_, "fixauto": par.n_iter_,
                                 "lbfgs": par.n_passes_}.get(label)
                        cell = f"{d:+8.4f}" + ("" if extra is None else f" ({extra:d})")
                        row.append(f"{cell:>{width}s}")
                        key = (order, label)
                        worst[key] = min(worst.get(key, np.inf), d)
                        span = bounds_of.setdefault(key, [np.inf, -np.inf])
                        span[:] = [min(span[0], d), max(span[1], d)]
                    print(f"{name:10s} {order:8s} {best:6.0e} {seq:8.4f} {K:3d} "
                          f"{Xo.shape[0] // K:7d} " + " ".join(row), flush=True)
    print("range of the difference over datasets and K (the done-when: within 0.003 on "
          "shuffled shards, 0.01 on file-order shards):")
    for (order, label), (lo, hi) in sorted(bounds_of.items()):
        limit = 0.003 if order == "shuffled" else 0.01
        ok = max(abs(lo), abs(hi)) <= limit
        print(f"  {order:8s} {label:8s} {lo:+.4f} ... {hi:+.4f}  "
              f"{'within' if ok else 'OUTSIDE'} {limit}")


def _worker_cpu(dask_worker=None):
    """(process CPU seconds, bytes received from other workers) of a worker."""
    got = sum(t.get("total", 0) for t in dask_worker.transfer_incoming_log)
    return time.process_time(), got


def _make_block(j, rows, p):
    rng = np.random.default_rng([0, j])
    X = rng.normal(size=(rows, p))
    y = ((X[:, 0] + 0.5 * X[:, 1] + rng.normal(size=rows)) > 2.0).astype(np.int64)
    return X, y


def _blocks_on_workers(client, nb, rows, p):
    """A (X, y) pair of dask arrays whose block j is made and held by worker j mod W."""
    import operator

    import dask
    import dask.array as da
    import distributed
    workers = sorted(client.scheduler_info()["workers"])
    Xs, ys = [], []
    for j in range(nb):
        at = dict(workers=[workers[j % len(workers)]], allow_other_workers=False)
        pair = client.submit(_make_block, j, rows, p, pure=False, **at)
        Xs.append(client.submit(operator.getitem, pair, 0, **at))
        ys.append(client.submit(operator.getitem, pair, 1, **at))
    client.gather(ys)                           # every block made (only y comes back)
    X = da.concatenate([da.from_delayed(dask.delayed(f), (rows, p), dtype=float) for f in Xs])
    y = da.concatenate([da.from_delayed(dask.delayed(f), (rows,), dtype=np.int64) for f in ys])
    X, y = client.persist([X, y])               # blocks under the array's own keys, in place
    with client.as_current():
        distributed.wait([X, y])                # every block in memory before any timing
    return X, y


def speed(args):
    import distributed

    from sosl.dask import Parallel
    n, p, nb = args.rows, 50, 16
    print(f"\n== 3. Speed: {n:,} x {p} dask array in {nb} blocks, OAUCM(lam=1e-3), 1 epoch")
    print(f"load average before: {os.getloadavg()[0]:.2f} (2 cores shared with other jobs)")
    # the rows are made on the workers (a seeded generator task per block, block j on
    # worker j mod W) and kept there before timing, as a user's Parquet or loader data
    # would already be: the timed fit ships no rows from the client
    rows = n // nb
    kw = dict(threads_per_worker=1, processes=True, protocol="tcp://", host="127.0.0.1",
              dashboard_address="127.0.0.1:0", silence_logs=40)
    inf = np.inf
    modes = list(args.modes)
    runs = [(mode, w) for mode in modes for w in (1, 2)]
    res = {"memory": [inf, inf]}
    for key in runs:
        res[key] = dict(wall=inf, task=inf, mom=inf, pas=inf, proc=inf, client=inf)
    moved = {key: 0 for key in runs}
    import dask
    steal = args.work_stealing == "on"
    print(f"dask work stealing {args.work_stealing} (off: no block moves to even out a "
          "momentary queue; 'moved MB' below counts the bytes workers fetched from others: "
          "the block moments and the round's merged moments, ~1 MB, no X block)")
    print(f"clusters: {args.clusters} ('one': only the cluster being timed is running, "
          "started and stopped around its fits each repeat, in alternating order; "
          "'both': both clusters run throughout, the idle one's event loops, heartbeats and "
          "profilers taking their share of the 2 cores)")
    # the same rows in memory, for the in-memory pass (the seeded blocks the workers make)
    X = np.concatenate([_make_block(j, rows, p)[0] for j in range(nb)])
    y = np.concatenate([_make_block(j, rows, p)[1] for j in range(nb)])
    idle, idle_client = {}, {}

    def start(w):
        t0 = time.perf_counter()
        with dask.config.set({"distributed.scheduler.work-stealing": steal}):
            cluster = distributed.LocalCluster(n_workers=w, **kw)
        client = distributed.Client(cluster, set_as_default=False)
        data = _blocks_on_workers(client, nb, rows, p)
        if w not in idle:
            held = client.who_has(data[0])
            per = {a: sum(a in v for v in held.values())
                   for a in client.scheduler_info()["workers"]}
            print(f"cluster of {w} worker(s) started and its rows made in "
                  f"{time.perf_counter() - t0:.1f} s (not timed); X blocks held per worker "
                  f"{sorted(per.values())}")
            # an idle worker process burns CPU too (event loop, heartbeats, dask's sampling
            # profiler), in proportion to wall time: on a loaded machine a fit's wall time
            # grows and so does this share of the worker's process CPU; measured here for 3 s
            a, t1, c0 = client.run(_worker_cpu), time.perf_counter(), time.process_time()
            time.sleep(3.0)
            b, dt = client.run(_worker_cpu), time.perf_counter() - t1
            idle[w] = max((b[k][0] - a[k][0]) / dt for k in a)
            idle_client[w] = (time.process_time() - c0) / dt
        return cluster, client, data

    alive = {}
    coefs = {}
    for rep in range(args.repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        ref = OAUCM(lam=1e-3).fit(X, y)
        res["memory"] = [min(res["memory"][0], time.perf_counter() - t0),
                         min(res["memory"][1], time.process_time() - c0)]
        for w in ((1, 2) if rep % 2 == 0 else (2, 1)):   # interleaved: every run each repeat
            if w not in alive:
                alive[w] = start(w)
            cluster, cl, data = alive[w]
            for mode in modes:
                before = cl.run(_worker_cpu)
                with cl.as_current():
                    t0, c0 = time.perf_counter(), time.process_time()
                    par = Parallel(OAUCM(lam=1e-3), n_epochs=1, moments=mode).fit(*data)
                    wall = time.perf_counter() - t0
                    client = time.process_time() - c0       # client + scheduler + nannies
                after = cl.run(_worker_cpu)
                proc = max(after[a][0] - before[a][0] for a in after)   # the busiest worker
                moved[mode, w] = max(moved[mode, w],
                                     sum(after[a][1] - before[a][1] for a in after))
                cpu = par.task_cpu_seconds_
                coefs[mode, w] = par.estimator_.coef_[0]
                r = res[mode, w]
                for k, v in (("wall", wall), ("task", cpu["moments"] + cpu["passes"]),
                             ("mom", cpu["moments"]), ("pas", cpu["passes"]), ("proc", proc),
                             ("client", client)):
                    r[k] = min(r[k], v)
            if args.clusters == "one":
                cl.close()
                cluster.close()
                del alive[w]
    for cluster, cl, _ in alive.values():
        cl.close()
        cluster.close()
    print("idle worker process CPU: " + ", ".join(f"{w} worker(s) {1e3 * idle[w]:.1f} ms/s"
                                                  for w in (1, 2))
          + "; this (client) process: " + ", ".join(
              f"{1e3 * idle_client[w]:.1f} ms/s with the {w}-worker cluster"
              + (" (both running)" if args.clusters == "both" and w == 2 else "")
              for w in (1, 2)))
    for mode in modes:
        assert np.array_equal(coefs[mode, 1], coefs[mode, 2]), f"{mode}: 1 and 2 workers differ"
    head = slice(0, min(n, 200_000))
    print(f"in-sample AUC on the first {head.stop:,} rows: in-memory pass "
          f"{auc(y[head], ref.decision_function(X[head])):.4f}, " + ", ".join(
              f"Parallel {mode} {auc(y[head], X[head] @ coefs[mode, 2]):.4f}" for mode in modes))
    mem_wall, mem_cpu = res["memory"]
    print(f"min of {args.repeats}, interleaved; 'worker CPU' is the process CPU time of the "
          "busiest worker process (tasks, (de)serialization, its event loop); 'moments' and "
          "'passes' the thread CPU time of those tasks, summed over the workers")
    print("'net' subtracts the idle rate times the wall time")
    print(f"{'run':30s} {'wall s':>8s} {'worker CPU':>11s} {'us/row':>7s} {'net us/row':>10s} "
          f"{'moments':>8s} {'passes':>8s} {'moved MB':>9s}")
    print(f"{'in-memory fit':30s} {mem_wall:8.2f} {mem_cpu:11.2f} {1e6 * mem_cpu / n:7.3f}"
          f" {1e6 * mem_cpu / n:10.3f}   (process CPU of this process, one pass)")
    net = {}
    for mode, w in runs:
        r = res[mode, w]
        rows_w = n / w
        net[mode, w] = r["proc"] - idle[w] * r["wall"]
        print(f"{'Parallel ' + mode + ', ' + str(w) + ' worker(s)':30s} {r['wall']:8.2f} "
              f"{r['proc']:11.2f} {1e6 * r['proc'] / rows_w:7.3f} "
              f"{1e6 * net[mode, w] / rows_w:10.3f} {r['mom']:8.2f} {r['pas']:8.2f} "
              f"{moved[mode, w] / 1e6:9.1f}")
    for mode in modes:
        r1, r2 = res[mode, 1], res[mode, 2]
        print(f"[{mode}] speedup 2 workers over 1: {r1['wall'] / r2['wall']:.2f}x wall")
        print(f"[{mode}] CPU per row against the in-memory pass: pass tasks "
              f"{r2['pas'] / mem_cpu:.2f}x, moments tasks {r2['mom'] / mem_cpu:.2f}x, both "
              f"{r2['task'] / mem_cpu:.2f}x (thread CPU, load-independent); busiest "
              f"2-worker process {r2['proc'] / (mem_cpu / 2):.2f}x, net "
              f"{net[mode, 2] / (mem_cpu / 2):.2f}x (1 worker: {r1['proc'] / mem_cpu:.2f}x, "
              f"net {net[mode, 1] / mem_cpu:.2f}x); 1 and 2 workers gave the same bits")
        # a model of the idle machine from the load-independent figures: a worker is busy
        # for its tasks' thread CPU and spends the idle rate of each second on its event
        # loop; with 2 workers on 2 cores the client process (client, scheduler, nannies:
        # its CPU during the fit, which a loaded machine inflates) takes its share of the
        # two cores (no waits at the barriers, no stragglers: a lower bound on the wall)
        net_client = {w: max(res[mode, w]["client"] - idle_client[w] * res[mode, w]["wall"],
                             0.0) for w in (1, 2)}
        m1 = r1["task"] / (1.0 - idle[1])
        m2 = (r2["task"] + net_client[2]) / (2.0 - 2.0 * idle[2] - idle_client[2])
        cpu2 = r2["task"] / 2 + idle[2] * m2            # a worker's CPU, 2 workers
        print(f"[{mode}] client process CPU during the fit: 1 worker {r1['client']:.2f} s, "
              f"2 workers {r2['client']:.2f} s; net of its idle rate {net_client[1]:.2f} s, "
              f"{net_client[2]:.2f} s")
        print(f"[{mode}] modelled idle machine (a worker: its tasks' thread CPU plus its idle "
              f"rate; with 2 workers the client process's net CPU and idle rate share the 2 "
              f"cores; no waits): wall 1 worker {m1:.2f} s, 2 workers {m2:.2f} s, speedup "
              f"{m1 / m2:.2f}x; a worker's CPU per row against the in-memory pass "
              f"{m1 / mem_cpu:.2f}x (1 worker), {cpu2 / (mem_cpu / 2):.2f}x (2 workers)")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return res, n


def merge_bytes():
    print("\n== 2. Bytes per merge (pickled class moments; 2p^2 + 3p + 3 numbers that matter)")
    print(f"{'p':>6s} {'2p^2+3p+3':>12s} {'x 8 bytes':>12s} {'pickled moments':>16s} "
          f"{'w message':>10s}")
    out = {}
    for p in (50, 500, 2000):
        m = S.empty_moments(p)
        nb = len(pickle.dumps(m, protocol=pickle.HIGHEST_PROTOCOL))
        wb = len(pickle.dumps((1, np.zeros(p), 1.0, 1.0, 1, 0.0),
                              protocol=pickle.HIGHEST_PROTOCOL))
        formula = 2 * p * p + 3 * p + 3
        out[p] = nb
        print(f"{p:6d} {formula:12,d} {8 * formula:12,d} {nb:16,d} {wb:10,d}")
    return out


def projection(res, n, sizes, mode):
    bw, lat = 1.25e9, 5e-4
    tot = res[mode, 2]["task"]
    c_row = tot / n
    fixed = max(res[mode, 1]["wall"] - res[mode, 1]["task"], 0.0)   # 1-worker wall not in tasks
    S50 = sizes[50]
    print(f"\n== 4. Projection (p = 50, moments={mode!r}), one epoch, from the measured task "
          f"CPU per row ({1e6 * c_row:.3f} us: moments + pass, 2-worker run) and the merge size "
          f"({S50:,} bytes)")
    print(f"network model: every message costs {lat * 1e3:.1f} ms latency + bytes / "
          f"{bw / 1e9:.2f} GB/s (10 GbE); a tree level of the up-sweep and of the down-"
          "sweep each costs one moments message (the down-sweep's two messages per node go "
          "to different children, in parallel), the w tree one w message per level; one "
          "worker per core, blocks evenly spread, no stragglers, data already on the "
          f"workers. 'fixed' adds the measured wall time of the 1-worker fit not spent in "
          f"tasks ({fixed:.2f} s: scheduling, the reduction's hops, the client's request; on "
          "this loaded machine an upper bound)")
    print(f"{'workers':>8s} {'rows':>8s} {'compute s':>10s} {'merges s':>9s} {'total s':>8s} "
          f"{'speedup':>8s} {'+fixed s':>9s} {'speedup':>8s}")
    for rows in (1e8, 1e10):
        one = rows * c_row
        for W in (16, 32, 64, 128, 256):
            depth = math.ceil(math.log2(W))
            merges = depth * (2 * (lat + S50 / bw) + (lat + 8 * 50 / bw))
            total = one / W + merges
            print(f"{W:8d} {rows:8.0e} {one / W:10.1f} {merges:9.3f} {total:8.1f} "
                  f"{one / total:8.1f} {total + fixed:9.1f} {one / (total + fixed):8.1f}")


def fixed_paths(args):
    """Section 5: CPU per row of the fixed pass with ``Sigma w`` from the kernel's own loops
    and from BLAS dsymv, by p (``sosl.dask._FIXED_BLAS_MIN_P`` is set from this)."""
    from sosl._core import _linear
    from sosl._core._blas import one_blas_thread
    from sosl._core._codes import Loss, Schedule
    from sosl.dask._solvers import _FIXED_BLAS_MIN_P
    print("\n== 5. The fixed pass (moments='fixed'): Sigma w by the kernel's own loops or BLAS "
          f"dsymv (one thread), process CPU per row, min of {args.repeats}, interleaved; "
          f"Parallel switches to dsymv at p = {_FIXED_BLAS_MIN_P}")
    print(f"{'p':>5s} {'rows':>8s} {'loops us':>9s} {'dsymv us':>9s} {'dsymv/loops':>12s}")
    rng = np.random.default_rng(0)
    for p in (20, 32, 50, 64, 80, 96, 128, 200):
        n = max(20_000, 10_000_000 // (p * p))
        X = rng.normal(size=(n, p))
        s = np.where(X[:, 0] + rng.normal(size=n) > 1.0, 1.0, -1.0)
        m = S.moments_of_rows(X, s)
        Sigma = m.scatter / m.weights[:, None, None]
        best = {"loops": np.inf, "dsymv": np.inf}
        for _ in range(args.repeats):
            for name, min_p in (("loops", 10**9), ("dsymv", 1)):
                w = np.zeros(p)
                with one_blas_thread():
                    c0 = time.process_time()
                    _linear.fixed_pass(X, s, None, w, m.means, Sigma, m.counts, 0, 1e-3, 0.0,
                                       int(Schedule.STEP_INV_LAM_T), int(Loss.LOSS_M), min_p,
                                       np.empty(4 * p))
                    best[name] = min(best[name], time.process_time() - c0)
        print(f"{p:5d} {n:8,d} {1e6 * best['loops'] / n:9.3f} {1e6 * best['dsymv'] / n:9.3f} "
              f"{best['dsymv'] / best['loops']:12.2f}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=2_000_000, help="rows of the speed test")
    p.add_argument("--synthetic-rows", type=int, default=300_000)
    p.add_argument("--shards", type=int, nargs="+", default=[2, 8, 64])
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--work-stealing", choices=("on", "off"), default="on",
                   help="dask's work stealing in the speed test's clusters (default: on)")
    p.add_argument("--methods", nargs="+", default=[m[0] for m in METHODS],
                   choices=[m[0] for m in METHODS],
                   help="columns of the quality table (default: all)")
    p.add_argument("--clusters", choices=("one", "both"), default="one",
                   help="speed test: only the timed cluster running (default), or both")
    p.add_argument("--modes", nargs="+", default=["global", "fixed"],
                   choices=["global", "fixed"], help="moments modes of the speed table")
    p.add_argument("--skip-quality", action="store_true")
    p.add_argument("--skip-speed", action="store_true")
    p.add_argument("--skip-paths", action="store_true",
                   help="skip section 5 (the fixed pass's Sigma w: own loops or dsymv, by p)")
    args = p.parse_args(argv)
    print(f"bench_distributed: {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.2f}, pid {os.getpid()}")
    if not args.skip_quality:
        quality(args)
    sizes = merge_bytes()
    if not args.skip_speed:
        res, n = speed(args)
        for mode in args.modes:
            projection(res, n, sizes, mode)
    if not args.skip_paths:
        fixed_paths(args)


if __name__ == "__main__":
    main()
