"""Command line: ``python -m sosl.experiments [--datasets ...] [--algorithms ...] ...``."""

import argparse
import sys

from .. import datasets as ds
from .algorithms import ALGORITHMS, GRIDS
from .runner import report_from_cache, run_experiment


def _setup_backend(backend, scheduler):
    """Register the cluster backends on demand; return the joblib backend name."""
    if backend == "dask":
        try:
            from dask.distributed import Client
        except ImportError:
            sys.exit("--backend dask needs dask[distributed] (pip install 'dask[distributed]')")
        _setup_backend.client = Client(scheduler) if scheduler else Client()
    elif backend == "ray":
        try:
            from ray.util.joblib import register_ray
        except ImportError:
            sys.exit("--backend ray needs ray (pip install ray)")
        register_ray()
    return backend


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m sosl.experiments",
                                description="Reproduce Tables 2 and 3 of the SOSL paper.")
    p.add_argument("--datasets", nargs="+", default=None,
                   help="dataset names (default: every registered dataset found in the data "
                        "directory); also 'default' (breast cancer) and 'synthetic'")
    p.add_argument("--algorithms", nargs="+", default=None, choices=list(ALGORITHMS),
                   metavar="ALG", help=f"paper names, default all available: {', '.join(ALGORITHMS)}")
    p.add_argument("--grid", default="full", choices=sorted(GRIDS),
                   help="2^e grids: full e in -10..10 (paper), coarse every 2nd, sparse every 4th, "
                        "quick 3 points, wide e in -20..10 (diagnostic)")
    p.add_argument("--max-points", type=int, default=None,
                   help="search at most this many points of each product grid, drawn at random "
                        "(default: each algorithm's own cap; only OKAUC-S has one, the size of a "
                        "2-parameter grid: 441 on the full grid); "
                        "0 = whole grids")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--backend", default="loky",
                   help="joblib backend: loky (default), threading, multiprocessing, dask, ray")
    p.add_argument("--scheduler", default=None, help="Dask scheduler address (with --backend dask)")
    p.add_argument("--out", default="results")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--repeats", type=int, default=4)
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--inner-folds", type=int, default=5)
    p.add_argument("--data-dir", default=None, help="default: $SOSL_DATA_DIR, then ~/.cache/sosl")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--report-only", action="store_true",
                   help="only rewrite the tables from the rows cached in --out")
    args = p.parse_args(argv)

    if args.report_only:
        proto = f"{args.repeats}x{args.folds}/{args.inner_folds}"
        paths = report_from_cache(args.out, args.grid, args.seed, proto, args.datasets,
                                  args.algorithms, max_points=args.max_points)
        for path in paths:
            if path.endswith(".md"):
                print(open(path).read())
        return 0
    names = args.datasets or ds.available_datasets(args.data_dir)
    if not names:
        p.error("no dataset found: set SOSL_DATA_DIR, pass --data-dir, or --datasets default")
    backend = _setup_backend(args.backend, args.scheduler)
    summary = run_experiment(names, args.algorithms, grid=args.grid, n_jobs=args.jobs,
                             backend=backend, out=args.out, seed=args.seed,
                             n_repeats=args.repeats, n_folds=args.folds,
                             inner_folds=args.inner_folds, data_dir=args.data_dir,
                             progress=not args.quiet, max_points=args.max_points)
    for path in summary["tables"]:
        if path.endswith(".md"):
            print(open(path).read())
    print(f"wall time {summary['wall_seconds']:.1f} s, {summary['new_rows']} new rows; "
          f"tables: {', '.join(summary['tables'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
