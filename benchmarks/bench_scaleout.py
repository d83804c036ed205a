"""Wall-clock speedup of 2 local workers over 1 on a small coarse-grid run, per backend.

The same protocol (coarse grid, OAUC-M_c: 121 grid points, 1 x 5-fold outer with 5-fold
inner CV by default, about 5 CPU seconds of tasks) runs into a fresh result directory for
each configuration: loky with 1 and 2 worker processes, and a dask.distributed cluster of
1 and 2 single-threaded worker processes on 127.0.0.1 (and ray, with ``--ray``, when it
is installed). Each cluster is started before the clock starts and its start-up time is
printed separately; loky's worker pool is warmed by one small run first. Configurations
are interleaved (ray, which allows one instance per process, is timed afterwards, one
block per worker count) and each is timed ``--repeats`` times; the minimum wall time
counts. Every configuration must write the same rows (timing columns aside): the script
checks it and exits non-zero otherwise.

The machine's load matters (the speedup of 2 workers cannot exceed the number of idle
cores): the load average is printed before and after, and beside each time the process
CPU seconds of its tasks divided by the wall time, the cores' worth the run obtained
(near 2 for 2 workers on an idle 2-core machine; near the 1-worker figure when other
work leaves only one core's worth).

    SOSL_DATA_DIR=/work/shared/data nice -n 10 python benchmarks/bench_scaleout.py
"""

import argparse
import csv
import os
import sys
import tempfile
import time
from pathlib import Path

from sosl import datasets as ds
from sosl.experiments import backends, run_experiment

TIMING = ("seconds", "cpu_seconds", "pid", "thread")


def _rows(out):
    with open(Path(out) / "rows.csv", newline="") as f:
        return sorted(tuple((k, v) for k, v in r.items() if k not in TIMING)
                      for r in csv.DictReader(f))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dataset", default=None,
                   help="default: fourclass if $SOSL_DATA_DIR has it, else synthetic")
    p.add_argument("--algorithms", nargs="+", default=["OAUC-M_c"])
    p.add_argument("--grid", default="coarse")
    p.add_argument("--outer-repeats", type=int, default=1, help="protocol repeats (default 1)")
    p.add_argument("--repeats", type=int, default=2, help="timed runs per configuration")
    p.add_argument("--ray", action="store_true", help="also time ray (if installed)")
    args = p.parse_args(argv)
    name = args.dataset or ("fourclass" if "fourclass" in ds.available_datasets() else "synthetic")
    proto = dict(n_repeats=args.outer_repeats, n_folds=5, inner_folds=5)
    tmp = Path(tempfile.mkdtemp(prefix="bench_scaleout_"))
    print(f"dataset {name}, algorithms {' '.join(args.algorithms)}, grid {args.grid}, protocol "
          f"{args.outer_repeats}x5/5; load average before {os.getloadavg()[0]:.2f}")

    def run(label, i, **kw):
        out = tmp / f"{label}_{i}"
        t0 = time.perf_counter()
        s = run_experiment([name], args.algorithms, grid=args.grid, out=out, progress=False,
                           log=lambda *_: None, **proto, **kw)
        wall = time.perf_counter() - t0
        return wall, s["new_rows"], _rows(out), sum(s["task_seconds"].values())

    # warm loky's reusable pool of 2 workers (process start-up and imports are not timed)
    run_experiment(["synthetic"], ["OAUC-M"], grid="quick", out=tmp / "warm", n_jobs=2,
                   backend="loky", progress=False, log=lambda *_: None, n_repeats=1,
                   n_folds=2, inner_folds=2)
    clusters, starts = {}, {}
    stack = []
    for n in (1, 2):
        t0 = time.perf_counter()
        cm = backends.dask_client(None, n_workers=n, processes=True)
        client = cm.__enter__()
        client.run(lambda: __import__("sosl.experiments.runner"))  # workers import sosl
        stack.append(cm)
        clusters[n], starts[f"dask{n}"] = client.scheduler.address, time.perf_counter() - t0
    configs = {"loky1": dict(n_jobs=1, backend="loky"), "loky2": dict(n_jobs=2, backend="loky"),
               "dask1": dict(backend="dask", scheduler=clusters[1]),
               "dask2": dict(backend="dask", scheduler=clusters[2])}
    ray = None
    if args.ray:
        try:
            import ray
        except ImportError:
            print("ray is not installed: skipped")
    best, reference, ok = {}, None, True

    def timed(label, i, **kw):
        nonlocal reference, ok
        wall, n_rows, rows, cpu = run(label, i, **kw)
        best[label] = min(best.get(label, float("inf")), wall)
        reference = rows if reference is None else reference
        same = rows == reference
        ok &= same
        print(f"  {label:6s} run {i}: {wall:7.2f} s wall, task CPU {cpu:6.2f} s "
              f"(CPU / wall {cpu / wall:.2f}), {n_rows} rows, "
              f"rows {'equal to' if same else 'DIFFER from'} the first run's")

    try:
        for i in range(args.repeats):
            for label, kw in configs.items():
                timed(label, i, **kw)
    finally:
        for cm in reversed(stack):
            cm.__exit__(None, None, None)
    if ray is not None:  # one ray instance per process: its runs are timed in blocks
        for n in (1, 2):
            t0 = time.perf_counter()
            ray.init(num_cpus=n, include_dashboard=False, log_to_driver=False,
                     _node_ip_address="127.0.0.1")
            try:
                ray.get([ray.remote(lambda: __import__("sosl.experiments.runner") and 0)
                         .remote() for _ in range(n)])
                starts[f"ray{n}"] = time.perf_counter() - t0
                for i in range(args.repeats):
                    timed(f"ray{n}", i, backend="ray")
            finally:
                ray.shutdown()
    print(f"load average after {os.getloadavg()[0]:.2f}")
    print("cluster start-up (not in the times below): "
          + ", ".join(f"{k} {v:.1f} s" for k, v in starts.items()))
    for kind in ("loky", "dask", "ray"):
        if f"{kind}1" in best:
            t1, t2 = best[f"{kind}1"], best[f"{kind}2"]
            print(f"{kind}: 1 worker {t1:.2f} s, 2 workers {t2:.2f} s (min of {args.repeats}), "
                  f"speedup {t1 / t2:.2f}x")
    if not ok:
        print("FAIL: the backends wrote different rows")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
