"""Parallel, resumable runner of the Section 6.3 protocol: the rows behind Tables 2 and 3.

This module computes and caches the rows; :mod:`sosl.experiments.summary` reduces them
(ceilings, the run summary, costs) and :mod:`sosl.experiments.tables` writes the tables
and the result record. Their public names are importable from here as well.

Work is split into independent tasks run through joblib:

1. ``cv`` tasks, one per (dataset, algorithm, run, grid point): the mean inner-CV AUC;
2. ``test`` tasks, one per (dataset, algorithm, run): refit the best grid point on the
   training part and score the held-out fold;
3. with ``ceilings=True``, ``oracle`` tasks, one per (dataset, algorithm, run, grid point):
   the grid point fitted on the whole training part and scored on the held-out fold. The
   best of them per run is the *oracle*, a selection made on the test fold itself: no honest
   selection on that grid can beat it, so its mean over the runs is the ceiling of the
   cell. Batch references (:data:`~sosl.experiments.algorithms.REFERENCES`) run through
   the same three steps; the capped ones (SVC, OKAUC-M_inf) on a dataset whose training
   parts exceed ``reference_max_train`` rows (4 000) run them on the first partition only,
   on a stratified subsample of each training part, and record the protocol
   ``1x5/5@4000`` (see :mod:`sosl.experiments.protocol`). The tables take, per cell, the
   rows of the run's protocol, else those of its capped protocol, and label the latter.

Every finished task is appended at once as one row of ``<out>/rows.csv``; a later call
with the same ``out`` skips the rows already there, so an interrupted run resumes where it
stopped (and a full-grid run reuses the points a coarse run has already scored, since the
coarse exponents are a subset of the full ones). Workers load each dataset once, by name.

The cache (:mod:`sosl.experiments.cache`)
-----------------------------------------
Each row is appended as one ``write()`` of a whole line as soon as its task is done (and
fsynced within a second), so a kill at any moment loses at most the row being written; the
torn last line such a kill leaves is cut off before the next run appends, and its task is
computed again. A line that is not a row (the file edited or damaged) stops the run with
an error naming the file and line, rather than being dropped or recomputed in silence: a
results record should not lose data without telling. An empty file gets its header.

Why a CSV and not SQLite. SQLite (in the standard library) would give transactions, so
torn writes and concurrent writers would be its problem, not ours, and it is the better
store for a workload of in-place updates or many writers. This one is neither: rows are
only ever appended, by the process that drives a run (workers return rows, they do not
write them), and each row is independent of the others, so "all of a row or none of it"
is the only atomicity needed, and one appended line plus a repair of the torn tail gives
it (an exclusive ``flock`` around each append and around the repair covers two runs
sharing a directory on a local disk; on a network file system neither ``flock`` nor
SQLite's own locking can be relied on). Against SQLite weighs what the record is for: it
is meant to be read, reviewed and committed. A compact per-run record kept in the
repository, with the tables regenerated from it, needs a text file whose changes show as
added lines in a diff and that opens in any tool; a binary database would need an export
beside it and so a second source of truth. So the CSV stays, made robust.
"""

import json
import logging
import os
import sys
import threading
import time
import warnings
from collections import defaultdict
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from .. import datasets as ds
from ..datasets._loaders import find_dataset
from ..exceptions import ExperimentWarning
from .algorithms import (
    GRIDS,
    REFERENCES,
    default_references,
    grid_label,
    grid_points,
    grid_restrictions,
    resolve_algorithms,
    spec_of,
)
from .backends import executor
from .cache import CACHE_NAME, FIELDS, open_cache
from .protocol import (
    REFERENCE_MAX_TRAIN,
    capped_protocol,
    cv_score,
    heldout_score,
    needs_cap,
    outer_splits,
)
from .summary import (
    POSITIVE_TAG,
    _key,
    _params_key,
    _unique,
    cached_grids,
    cost_table,
    load_rows,
    oracle_ceilings,
    pick_protocol,
    run_name,
    run_summary,
    same_protocol,
    split_run_name,
)
from .tables import export_record, paper_table, report, report_from_cache

# the aggregation (.summary) and the tables (.tables) are imported above for the run's own
# use and re-exported, so callers of sosl.experiments.runner keep working

#: progress and the run's messages (``run_experiment(log=None)``) go to this logger
LOGGER = logging.getLogger("sosl.experiments")

__all__ = ["DEFAULT_OUT", "FIELDS", "check_checksums", "get_data", "plan", "run_experiment",
           "run_specs", "with_positive_classes",
           # defined in sosl.experiments.summary and .tables, importable from here
           "POSITIVE_TAG", "cached_grids", "cost_table", "export_record", "load_rows",
           "oracle_ceilings", "paper_table", "pick_protocol", "report", "report_from_cache",
           "run_name", "run_summary", "same_protocol", "split_run_name"]

#: the result directory used when none is given (the command line's ``--out``)
DEFAULT_OUT = "results"


@lru_cache(maxsize=8)
def get_data(name, data_dir=None, verify=True):
    """X (scaled to [-1, 1]) and y in {0, 1} of a dataset, cached per process.

    Besides the registry's names: ``"default"`` (breast cancer) and ``"synthetic"``
    (a fixed 2000 x 8 stream with imbalance ratio 5 from
    :func:`sosl.datasets.make_imbalanced_stream`), and a registry name with another
    positive class (:func:`run_name`, ``vowel:pos=3``). ``verify`` is that of
    :func:`sosl.datasets.load_dataset` (False reads the file without its checksum; see
    :func:`check_checksums` for the warning).
    """
    if name == "synthetic":
        X, y = ds.make_imbalanced_stream(2000, 8, imbalance_ratio=5.0, class_sep=1.5,
                                         random_state=0)
        return ds.scale_features(X), y
    base, positive = split_run_name(name)
    return ds.load_dataset(base, data_dir, verify=verify, positive_class=positive)


def with_positive_classes(datasets, positive_class=None):
    """``datasets`` with each one given positive classes replaced by one name per class.

    Parameters
    ----------
    datasets : list of str
    positive_class : dict or None
        Dataset -> a label, or a list of labels (one one-vs-rest task each), made the
        positive class instead of the registry's rule; the names are :func:`run_name`'s.

    Raises
    ------
    ValueError
        For a positive class given for a dataset that is not in ``datasets``.
    """
    positive_class = dict(positive_class or {})
    missing = [n for n in positive_class if n not in datasets]
    if missing:
        raise ValueError(f"a positive class is given for {', '.join(map(repr, missing))}, "
                         f"which is not among the datasets run ({', '.join(datasets)})")
    out = []
    for d in datasets:
        labels = positive_class.get(d)
        if labels is None:
            out.append(d)
            continue
        for label in (labels if isinstance(labels, (list, tuple)) else [labels]):
            out.append(run_name(d, label))
    return list(dict.fromkeys(out))


def check_checksums(datasets, data_dir=None):
    """Check every registered dataset's file against its checksum, warning instead of raising.

    What a run with ``verify=False`` does once, in the calling process, before its tasks
    read the files unchecked: a file whose checksum the registry does not know, or that
    differs from it, is accepted with a :class:`sosl.datasets.UnverifiedDatasetWarning`
    naming the file and its sha256.

    Returns
    -------
    digests : dict
        name -> sha256 of the file used (registered datasets only).
    """
    out = {}
    for name in dict.fromkeys(split_run_name(d)[0] for d in datasets):
        if name in ds.DATASETS:
            path = find_dataset(name, data_dir)
            out[name] = ds.verify_sha256(name, path, ds.DATASETS[name].sha256, strict=False)
    return out

def plan(dataset, spec, cfg):
    """``(protocol, runs, max_train)`` of one (dataset, learner or reference) of a run.

    The run's protocol, its ``repeats x folds`` runs and no cap, except for a capped batch
    reference (``spec.capped``) on a dataset whose training parts exceed
    ``cfg["reference_max_train"]`` rows (None: never capped): then the protocol of
    :func:`~sosl.experiments.protocol.capped_protocol`, the ``folds`` runs of the first
    partition, and that cap.
    """
    cap = cfg.get("reference_max_train")
    if spec.capped and cap is not None:
        y = get_data(dataset, cfg["data_dir"], cfg["verify"])[1]
        if needs_cap(y, dataset, cfg["seed"], cfg["n_repeats"], cfg["n_folds"], cap):
            return (capped_protocol(cfg["n_folds"], cfg["inner_folds"], cap), cfg["n_folds"],
                    int(cap))
    return cfg["protocol"], cfg["n_repeats"] * cfg["n_folds"], None

def _task(kind, dataset, algorithm, run, params, cfg):
    t0, c0 = time.perf_counter(), time.process_time()
    X, y = get_data(dataset, cfg["data_dir"], cfg["verify"])
    spec = spec_of(algorithm)
    protocol, _, max_train = plan(dataset, spec, cfg)
    proto = dict(seed=cfg["seed"], n_repeats=cfg["n_repeats"], n_folds=cfg["n_folds"],
                 max_train=max_train)
    if kind == "cv":
        score, err = cv_score(spec, params, X, y, dataset, run, inner_folds=cfg["inner_folds"],
                              **proto)
    else:  # "test" (the selected point) and "oracle" (every point) are the same refit
        score, err = heldout_score(spec, params, X, y, dataset, run, **proto)
    label = grid_label(spec, cfg["grid"], cfg["max_points"]) if kind == "test" else ""
    return {"kind": kind, "dataset": dataset, "algorithm": algorithm, "run": run,
            "params": _params_key(params), "grid": label,
            "seed": cfg["seed"], "protocol": protocol, "auc": score,
            "seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - c0,
            "error": err, "pid": os.getpid(),
            "thread": threading.current_thread().name}

class _Progress:
    """Progress of a batch of tasks: a one-line bar redrawn in place when stderr is a
    terminal; otherwise (a redirected log) a plain ``logging`` line at most every
    ``log_every`` seconds and at the end, never carriage-return frames."""

    def __init__(self, total, label, enabled=True, every=1.0, log_every=60.0):
        self.total, self.label, self.enabled, self.every = total, label, enabled, every
        self.log_every = log_every
        self.tty = bool(getattr(sys.stderr, "isatty", lambda: False)())
        self.done, self.t0, self.last = 0, time.perf_counter(), 0.0

    def step(self):
        self.done += 1
        now = time.perf_counter() - self.t0
        every = self.every if self.tty else self.log_every
        if self.enabled and (now - self.last >= every or self.done == self.total):
            self.last = now
            frac = self.done / max(self.total, 1)
            eta = now / frac - now if frac > 0 else 0.0
            if not self.tty:
                LOGGER.info("%s: %d/%d tasks, %.1f s elapsed, ~%.1f s left", self.label,
                            self.done, self.total, now, eta)
                return
            bar = "#" * int(30 * frac)
            sys.stderr.write(f"\r{self.label} [{bar:<30}] {self.done}/{self.total} "
                             f"{now:7.1f}s elapsed, ~{eta:7.1f}s left")
            if self.done == self.total:
                sys.stderr.write("\n")
            sys.stderr.flush()


def _run_tasks(ex, tasks, cfg, writer, label, progress):
    bar = _Progress(len(tasks), label, progress)
    rows = []
    for row in ex.map_unordered(_task, [(*t, cfg) for t in tasks]):
        writer.write(row)
        rows.append(row)
        bar.step()
    return rows


def _select(cv_rows, points):
    """Best grid point (max mean inner AUC, first in grid order on ties)."""
    by_key = {r["params"]: r["auc"] for r in cv_rows}
    best, best_auc = None, -np.inf
    for p in points:
        k = _params_key(p)
        if by_key[k] > best_auc:
            best, best_auc = p, by_key[k]
    return best


def run_specs(algorithms=None, ceilings=False, references=None):
    """The specs a run computes: ``algorithms`` (see ``resolve_algorithms``), then the batch
    references (None = those of their tables when ``ceilings`` is set, else none)."""
    specs = resolve_algorithms(algorithms)
    if references is None:
        references = default_references({s.table for s in specs}) if ceilings else []
    for name in references:
        if name not in REFERENCES:
            raise ValueError(f"unknown batch reference {name!r}; known: {', '.join(REFERENCES)}")
    return specs + [REFERENCES[n] for n in references if all(s.name != n for s in specs)]


def _config(seed, n_repeats, n_folds, inner_folds, grid, data_dir, verify, max_points,
            reference_max_train):
    """The run's configuration as the tasks receive it (plain numbers and strings)."""
    return {"seed": int(seed), "n_repeats": int(n_repeats), "n_folds": int(n_folds),
            "inner_folds": int(inner_folds), "grid": grid, "data_dir": data_dir,
            "verify": bool(verify),
            "max_points": None if max_points is None else int(max_points),
            "protocol": f"{int(n_repeats)}x{int(n_folds)}/{int(inner_folds)}",
            "reference_max_train": (None if reference_max_train is None
                                    else int(reference_max_train))}


def _check_inputs(datasets, specs, cfg, log):
    """Fail early, in this process, on a missing or refused dataset; log each grid
    restriction of the specs."""
    n_runs = cfg["n_repeats"] * cfg["n_folds"]
    if not cfg["verify"]:
        check_checksums(datasets, cfg["data_dir"])
    for name in datasets:
        y = get_data(name, cfg["data_dir"], cfg["verify"])[1]
        if len(outer_splits(y, name, cfg["seed"], cfg["n_repeats"], cfg["n_folds"])) != n_runs:
            raise RuntimeError("unexpected number of outer runs")
    for s in specs:
        for msg in grid_restrictions(s, cfg["grid"]):
            log(f"grid: {msg}")


def run_experiment(datasets, algorithms=None, grid="full", n_jobs=1, backend="loky",
                   out=DEFAULT_OUT, seed=0, n_repeats=4, n_folds=5, inner_folds=5,
                   data_dir=None, progress=True, log=None, max_points=None, scheduler=None,
                   ceilings=False, references=None, verify=True, positive_class=None,
                   reference_max_train=REFERENCE_MAX_TRAIN):
    """Run (or resume) the protocol, write the tables and report what happened.

    Parameters
    ----------
    datasets : list of str
        Registry names, ``"default"`` or ``"synthetic"``.
    algorithms : list of str or None
        Paper names (keys of :data:`~sosl.experiments.ALGORITHMS`); None = all.
    grid : {"full", "coarse", "sparse", "quick", "wide"}
        Exponent set of the 2^e grids, cut to each learner's valid domain (see
        :func:`~sosl.experiments.grid_restrictions`; one message per constraint goes to
        ``log``).
    n_jobs : int
        Workers; 1 runs in this process (joblib backends).
    backend : str or None
        "loky", "threading", "multiprocessing", "dask" or "ray" (see
        :mod:`sosl.experiments.backends`); None leaves the choice to an enclosing
        ``joblib.parallel_config``. Every backend produces the same rows.
    out : path-like
        Result directory; ``rows.csv`` there is the resumable cache.
    seed, n_repeats, n_folds, inner_folds : int
        Protocol; the paper's is 4 x 5-fold outer with 5-fold inner CV.
    data_dir : path-like or None
        Where the dataset files are (default ``$SOSL_DATA_DIR``, then the cache dir).
    progress : bool
        Show a progress bar on stderr.
    log : callable or None
        Where the messages go: grid restrictions, then the run summary (see
        :func:`run_summary`), which is also written to ``<out>/summary_<grid>.md``.
        None (the default): ``logging.getLogger("sosl.experiments").info``. Each warning
        line of the summary is also issued as an ``ExperimentWarning``.
    max_points : int or None
        Cap on the grid points searched per algorithm (see
        :func:`~sosl.experiments.grid_points`): None keeps each algorithm's own cap (only
        OKAUC-S has one: as many points as a two-parameter grid, 441 of its 21^3 full-grid
        points), 0 searches every product grid whole. A capped search is recorded as grid
        ``"<grid>@<k>"``.
    scheduler : str or None
        Address of a running dask scheduler or ray cluster (``backend="dask"`` / ``"ray"``).
    ceilings : bool
        Also score every grid point of every run on the test fold (``oracle`` rows, one
        refit per run and point: about a fifth of the inner CV's cost), for the oracle
        ceiling of each cell (see :func:`ceilings`), and run the batch references of the
        tables concerned unless ``references`` names them.
    references : list of str or None
        Batch references (keys of :data:`~sosl.experiments.algorithms.REFERENCES`) run
        beside ``algorithms``; None = those of the tables of ``algorithms`` when
        ``ceilings`` is set, none otherwise; ``[]`` = none.
    verify : bool, default=True
        Check each dataset file's sha256 against the registry and refuse a file the
        registry has no checksum for (:class:`sosl.datasets.UnknownChecksumError`) or that
        differs from it (:class:`sosl.datasets.IntegrityError`). False accepts such a file
        with a :class:`sosl.datasets.UnverifiedDatasetWarning` giving its path and sha256
        (see :func:`check_checksums`; the command line's ``--no-verify``).
    positive_class : dict or None
        Dataset name -> the original label (or a list of labels, one task each) made the
        positive class instead of the registry's rule (the command line's
        ``--positive-class``); such a dataset's rows and table rows are named
        ``<name>:pos=<label>`` (see :func:`run_name` and :func:`with_positive_classes`).
    reference_max_train : int or None, default=4000
        The capped batch references (SVC, OKAUC-M_inf) on a dataset whose training parts
        exceed this many rows run on the first partition only (``n_folds`` runs), on a
        stratified subsample of this many rows of each training part, recorded under the
        protocol ``1x<folds>/<inner>@<rows>`` and labelled in the tables (the command
        line's ``--reference-max-train``); None runs them by the full protocol everywhere.

    Returns
    -------
    summary : dict
        ``wall_seconds``, ``task_seconds`` (CPU seconds per (dataset, algorithm) summed
        over the tasks run now), ``new_rows``, ``tables`` (paths written), ``test_rows``,
        ``report`` (the per-cell records of :func:`run_summary`) and ``summary_text``.
    """
    if grid not in GRIDS:
        raise ValueError(f"grid must be one of {sorted(GRIDS)}, got {grid!r}")
    if log is None:
        log = LOGGER.info
    t0 = time.perf_counter()
    datasets = with_positive_classes(datasets, positive_class)
    specs = run_specs(algorithms, ceilings, references)
    data_dir = None if data_dir is None else str(data_dir)
    cfg = _config(seed, n_repeats, n_folds, inner_folds, grid, data_dir, verify, max_points,
                  reference_max_train)
    _check_inputs(datasets, specs, cfg, log)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    existing, writer = open_cache(out / CACHE_NAME)
    done = {_key(r) for r in existing}
    rows_now = []
    plans = {(d, s.name): plan(d, s, cfg) for d in datasets for s in specs}

    def base(d, s):
        return {"grid": "", "seed": cfg["seed"], "protocol": plans[(d, s.name)][0],
                "dataset": d, "algorithm": s.name}

    with writer, executor(backend, n_jobs, scheduler) as ex:
        cv_tasks = [("cv", d, s.name, r, p) for d in datasets for s in specs
                    for r in range(plans[(d, s.name)][1]) for p in grid_points(s, grid, max_points)
                    if _key({**base(d, s), "kind": "cv", "run": r,
                             "params": _params_key(p)}) not in done]
        rows_now += _run_tasks(ex, cv_tasks, cfg, writer, "cv  ", progress)
        all_rows = existing + rows_now
        cv_by = defaultdict(list)
        for r in all_rows:
            cell = plans.get((r["dataset"], r["algorithm"]))
            if (r["kind"] == "cv" and cell is not None and r["seed"] == cfg["seed"]
                    and r["protocol"] == cell[0]):
                cv_by[(r["dataset"], r["algorithm"], int(r["run"]))].append(r)
        test_tasks = []
        for d in datasets:
            for s in specs:
                for r in range(plans[(d, s.name)][1]):
                    best = _select(cv_by[(d, s.name, r)], grid_points(s, grid, max_points))
                    row = {**base(d, s), "kind": "test", "run": r, "params": _params_key(best),
                           "grid": grid_label(s, grid, max_points)}
                    if _key(row) not in done:
                        test_tasks.append(("test", d, s.name, r, best))
        rows_now += _run_tasks(ex, test_tasks, cfg, writer, "test", progress)
        if ceilings:
            oracle_tasks = [("oracle", d, s.name, r, p) for d in datasets for s in specs
                            for r in range(plans[(d, s.name)][1])
                            for p in grid_points(s, grid, max_points)
                            if _key({**base(d, s), "kind": "oracle", "run": r,
                                     "params": _params_key(p)}) not in done]
            rows_now += _run_tasks(ex, oracle_tasks, cfg, writer, "oracle", progress)
    task_seconds: defaultdict[Any, float] = defaultdict(float)
    for r in rows_now:
        task_seconds[(r["dataset"], r["algorithm"])] += r["cpu_seconds"]
    labels = {s.name: grid_label(s, grid, max_points) for s in specs}
    test_rows = _unique([r for r in existing + rows_now if r["kind"] == "test"
                         and r["algorithm"] in labels and r["grid"] == labels[r["algorithm"]]
                         and int(r["seed"]) == cfg["seed"] and r["dataset"] in datasets
                         and r["protocol"] == plans[(r["dataset"], r["algorithm"])][0]])
    ceil = oracle_ceilings(existing + rows_now, grid, cfg["seed"], cfg["protocol"], max_points)
    tables = report(test_rows, out, suffix=f"_{grid}", ceilings=ceil, grid=grid)
    text, recs = run_summary(existing + rows_now, datasets, [s.name for s in specs], grid,
                             cfg["seed"], cfg["protocol"], max_points)
    summary_path = out / f"summary_{grid}.md"
    summary_path.write_text(text + "\n")
    log(text)
    for line in text.splitlines():                # the summary's warning lines, as warnings
        if line.startswith("warning: "):
            warnings.warn(line[len("warning: "):], ExperimentWarning, stacklevel=2)
    wall = time.perf_counter() - t0
    summary = {"wall_seconds": wall, "task_seconds": dict(task_seconds), "new_rows": len(rows_now),
               "tables": tables + [str(summary_path)], "test_rows": test_rows, "report": recs,
               "summary_text": text}
    with open(out / f"timing_{grid}.json", "a") as f:
        f.write(json.dumps({"datasets": list(datasets), "algorithms": [s.name for s in specs],
                            "grid": grid, "n_jobs": n_jobs, "backend": str(backend),
                            "wall_seconds": round(wall, 2), "new_rows": len(rows_now),
                            "task_seconds": {f"{d}/{a}": round(v, 2)
                                             for (d, a), v in task_seconds.items()}}) + "\n")
    return summary
