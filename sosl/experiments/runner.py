"""Parallel, resumable runner of the Section 6.3 protocol and the Tables 2/3 report.

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

import csv
import json
import logging
import os
import sys
import threading
import time
import warnings
from collections import defaultdict
from functools import lru_cache
from importlib import resources
from pathlib import Path

import numpy as np

from .. import datasets as ds
from ..datasets._loaders import find_dataset
from ..exceptions import ExperimentWarning
from .algorithms import (
    ALGORITHMS,
    GRIDS,
    REFERENCES,
    _exponents,
    default_references,
    grid_label,
    grid_points,
    grid_restrictions,
    resolve_algorithms,
    spec_of,
)
from .backends import executor
from .cache import CACHE_NAME, FIELDS, open_cache, read_cache
from .protocol import (
    DIVERGED,
    FAILED,
    INVALID,
    REFERENCE_MAX_TRAIN,
    capped_protocol,
    cv_score,
    error_kind,
    heldout_score,
    needs_cap,
    outer_splits,
    parse_protocol,
)

#: progress and the run's messages (``run_experiment(log=None)``) go to this logger
LOGGER = logging.getLogger("sosl.experiments")

__all__ = ["DEFAULT_OUT", "FIELDS", "POSITIVE_TAG", "cached_grids", "check_checksums",
           "cost_table", "get_data", "load_rows", "oracle_ceilings", "paper_table", "report",
           "report_from_cache", "run_experiment", "run_name", "run_specs", "run_summary",
           "split_run_name", "with_positive_classes"]

#: the result directory used when none is given (the command line's ``--out``)
DEFAULT_OUT = "results"


#: joins a dataset's name and the positive class a run chose for it: ``vowel:pos=3``
POSITIVE_TAG = ":pos="


def run_name(name, positive_class=None):
    """The name a run records for dataset ``name`` with ``positive_class`` made positive.

    ``name`` itself when ``positive_class`` is None or is the label the registry's rule
    names (``label=<v>``), else ``<name>:pos=<label>`` (e.g. ``vowel:pos=3``): the rows of
    another one-vs-rest task are other tasks in the cache and other rows of the tables.
    """
    if positive_class is None:
        return name
    label = float(positive_class)
    info = ds.DATASETS.get(name)
    if info is None:
        raise ValueError(f"a positive class can be chosen for a registered dataset, not "
                         f"{name!r}; registered: {', '.join(ds.DATASETS)}")
    kind, _, value = info.binarize.partition("=")
    if kind == "label" and float(value) == label:
        return name
    return f"{name}{POSITIVE_TAG}{label:g}"


def split_run_name(name):
    """``(dataset, positive class or None)`` of a name made by :func:`run_name`."""
    base, tag, label = name.partition(POSITIVE_TAG)
    return (base, float(label)) if tag else (name, None)


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


def _params_key(params):
    return json.dumps(params, sort_keys=True)


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


def _capped_prefix(protocol):
    """``"1x5/5@"`` for ``"4x5/5"``: how the capped protocols of a run's protocol begin."""
    try:
        _, folds, inner, cap = parse_protocol(protocol)
    except ValueError:
        return None
    return None if cap is not None else f"1x{folds}/{inner}@"


def same_protocol(row_protocol, protocol):
    """Whether a row of ``row_protocol`` belongs to the tables of ``protocol``: the same
    string, or the capped-reference protocol of the same folds (``1x5/5@4000`` for
    ``4x5/5``)."""
    if row_protocol == protocol:
        return True
    prefix = _capped_prefix(protocol)
    return bool(prefix) and str(row_protocol).startswith(prefix)


def pick_protocol(rows, protocol):
    """The rows of ``protocol`` and, for each (dataset, algorithm, seed) with none of them,
    those of one capped protocol of the same folds (see :func:`same_protocol`).

    So a cell is never a mix: a reference run both ways (``reference_max_train=None`` on a
    cache holding capped rows) is reported from its full-protocol rows.
    """
    prefix = _capped_prefix(protocol)
    if prefix is None:
        return [r for r in rows if r["protocol"] == protocol]
    full, capped = set(), {}
    for r in rows:
        cell = (r["dataset"], r["algorithm"], int(r["seed"]))
        if r["protocol"] == protocol:
            full.add(cell)
        elif r["protocol"].startswith(prefix):
            capped.setdefault(cell, r["protocol"])
    return [r for r in rows if r["protocol"] == protocol or (
        (r["dataset"], r["algorithm"], int(r["seed"])) not in full
        and capped.get((r["dataset"], r["algorithm"], int(r["seed"]))) == r["protocol"])]


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


def _key(row):
    return (row["kind"], row["dataset"], row["algorithm"], int(row["run"]), row["params"],
            row["grid"], int(row["seed"]), row["protocol"])


def _unique(rows):
    """``rows`` without repeated tasks (first kept): two calls sharing a cache may both
    have run one task, and a run must count once in a table."""
    seen, out = set(), []
    for r in rows:
        k = _key(r)
        if k not in seen:
            seen.add(k)
            out.append(r)
    return out


def load_rows(out):
    """Rows of ``<out>/rows.csv`` (an empty list if there is none), the file left unchanged.

    ``run`` and ``seed`` are int, ``auc``, ``seconds`` and ``cpu_seconds`` float; a torn
    last line (a row cut by a kill) is not a row and is ignored.

    Raises
    ------
    sosl.experiments.cache.CacheError
        (a ValueError) naming the file and line of a line that is not a row.
    """
    return read_cache(Path(out) / CACHE_NAME)


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
    cfg = {"seed": int(seed), "n_repeats": int(n_repeats), "n_folds": int(n_folds),
           "inner_folds": int(inner_folds), "grid": grid, "data_dir": data_dir,
           "verify": bool(verify),
           "max_points": None if max_points is None else int(max_points),
           "protocol": f"{int(n_repeats)}x{int(n_folds)}/{int(inner_folds)}",
           "reference_max_train": (None if reference_max_train is None
                                   else int(reference_max_train))}
    n_runs = cfg["n_repeats"] * cfg["n_folds"]
    if not verify:
        check_checksums(datasets, data_dir)
    for name in datasets:  # fail early, in this process, on a missing or refused dataset
        y = get_data(name, data_dir, cfg["verify"])[1]
        if len(outer_splits(y, name, seed, n_repeats, n_folds)) != n_runs:
            raise RuntimeError("unexpected number of outer runs")
    for s in specs:
        for msg in grid_restrictions(s, grid):
            log(f"grid: {msg}")
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
    task_seconds = defaultdict(float)
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


def oracle_ceilings(rows, grid, seed=0, protocol="4x5/5", max_points=None):
    """The oracle of every run with a complete set of cached ``oracle`` rows on ``grid``.

    The oracle of a run is the best test AUC over the grid points searched on ``grid``
    (each fitted on the whole training part, scored on the test fold): a selection made
    with the test fold, hence an upper bound of the run's selected test AUC on that grid
    (the selected point's oracle row is its test row, bit for bit). A run counts only
    when every point of the learner's search is cached for it.

    Returns
    -------
    oracle : dict
        (dataset, algorithm) -> {run: best test AUC (a fraction)}.
    """
    points, best, seen = {}, {}, defaultdict(set)
    out = defaultdict(dict)
    for r in pick_protocol(rows, protocol):
        if (r["kind"] == "ceiling" and int(r["seed"]) == int(seed)
                and r["algorithm"] in _registry()
                and r["grid"] == grid_label(spec_of(r["algorithm"]), grid, max_points)):
            out[(r["dataset"], r["algorithm"])][int(r["run"])] = float(r["auc"])
            continue                              # a record's run oracle, complete already
        if (r["kind"] != "oracle" or int(r["seed"]) != int(seed)
                or r["algorithm"] not in _registry()):
            continue
        a = r["algorithm"]
        if a not in points:
            points[a] = {_params_key(p) for p in grid_points(spec_of(a), grid, max_points)}
        if r["params"] not in points[a]:
            continue
        key = (r["dataset"], a, int(r["run"]))
        seen[key].add(r["params"])
        best[key] = max(best.get(key, -np.inf), float(r["auc"]))
    for (d, a, run), got in seen.items():
        if len(got) == len(points[a]):
            out[(d, a)][run] = best[(d, a, run)]
    return dict(out)


def _registry():
    """Every learner and batch reference by name, in table-column order (read at each call)."""
    return {**ALGORITHMS, **REFERENCES}


def _exp_of(value):
    return int(round(np.log2(float(value))))


def run_summary(rows, datasets, algorithms, grid, seed=0, protocol="4x5/5", max_points=None):
    """What happened in the runs of ``grid``: failures, divergences and edge selections.

    For each (dataset, algorithm): the grid points searched and those left out of the
    product grid as outside the learner's domain; the inner-CV tasks (one per run and
    grid point) that diverged (non-finite model or scores), were invalid or failed
    otherwise, each scored 0 in the selection, with the number of distinct grid points
    concerned; the refits that failed; and per searched parameter the number of runs whose
    selected value sat on the lower or upper edge of the grid's exponents (an edge of the
    learner's domain inside the grid is not counted: the search cannot go further there).
    A warning line follows for every cell with divergences, failures or edge selections.

    Parameters
    ----------
    rows : list of dict
        Cached rows (:func:`load_rows` or the runner's).
    datasets, algorithms : list of str
    grid : str
    seed : int
    protocol : str
        ``"<repeats>x<folds>/<inner folds>"``.
    max_points : int or None
        As given to the run.

    Returns
    -------
    text : str
        A markdown table and the warning lines.
    records : list of dict
        One per (dataset, algorithm) with the counts above.
    """
    exps = _exponents(grid)
    lo, hi = exps[0], exps[-1]
    recs, notes = [], []
    rows = pick_protocol(rows, protocol)
    for d in datasets:
        for a in algorithms:
            spec = spec_of(a)
            points = {_params_key(p) for p in grid_points(spec, grid, max_points)}
            label = grid_label(spec, grid, max_points)
            mine = [r for r in rows if r["dataset"] == d and r["algorithm"] == a
                    and int(r["seed"]) == int(seed)]
            cv = {}
            for r in mine:
                if r["kind"] == "cv" and r["params"] in points:
                    cv.setdefault((int(r["run"]), r["params"]), r)
            tests = {}
            for r in mine:
                if r["kind"] == "test" and r["grid"] == label:
                    tests.setdefault(int(r["run"]), r)
            kinds = defaultdict(list)
            for r in cv.values():
                k = error_kind(r.get("error", ""))
                if k:
                    kinds[k].append(r)
            refit_bad = [r for r in tests.values() if error_kind(r.get("error", ""))]
            edges = {}
            for name in spec.searched:
                chosen = [_exp_of(json.loads(r["params"])[name]) for r in tests.values()]
                edges[name] = (sum(e == lo for e in chosen), sum(e == hi for e in chosen))
            n_left_out = len(exps) ** len(spec.searched) - len(grid_points(spec, grid, 0))
            rec = {"dataset": d, "algorithm": a, "grid_points": len(points),
                   "left_out": n_left_out, "cv_tasks": len(cv), "runs": len(tests),
                   "refits_failed": len(refit_bad), "edges": edges}
            for k in (DIVERGED, INVALID, FAILED):
                rec[k] = len(kinds[k])
                rec[f"{k}_points"] = len({r["params"] for r in kinds[k]})
            recs.append(rec)
            for k in (DIVERGED, INVALID, FAILED):
                if kinds[k]:
                    ex = kinds[k][0]
                    notes.append(
                        f"warning: {d} {a}: {len(kinds[k])} of {len(cv)} inner-CV tasks {k} at "
                        f"{rec[f'{k}_points']} grid points, scored 0 in the selection (e.g. "
                        f"{_fmt_params(ex['params'])}: {ex['error'][:120]})")
            if refit_bad:
                notes.append(f"warning: {d} {a}: {len(refit_bad)} of {len(tests)} refits of "
                                f"the selected point failed and score 0 "
                                f"({refit_bad[0]['error'][:120]})")
            for name, (n_lo, n_hi) in edges.items():
                for n_edge, where, e in ((n_lo, "lower", lo), (n_hi, "upper", hi)):
                    if n_edge:
                        notes.append(
                            f"warning: {d} {a}: {name} selected at the {where} grid edge 2^{e} "
                            f"in {n_edge} of {len(tests)} runs; the best value may lie outside "
                            "the grid")
    lines = [f"Run summary: grid {grid}, protocol {protocol}, seed {seed}", "",
             "| dataset | algorithm | grid points (left out) | CV tasks | diverged | invalid "
             "| failed | refits failed | runs | at a grid edge (lower/upper) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in recs:
        cells = []
        for k in (DIVERGED, INVALID, FAILED):
            cells.append(f"{r[k]} ({r[f'{k}_points']} pts)" if r[k] else "0")
        edge = ", ".join(f"{n} {lo_}/{hi_}" for n, (lo_, hi_) in r["edges"].items()) or "-"
        lines.append(f"| {r['dataset']} | {r['algorithm']} | {r['grid_points']} "
                     f"({r['left_out']}) | {r['cv_tasks']} | " + " | ".join(cells)
                     + f" | {r['refits_failed']} | {r['runs']} | {edge} |")
    lines += ["", "grid points (left out): searched, and left out of the product grid as "
              "outside the learner's domain; diverged = non-finite model or test scores; "
              "invalid = hyper-parameters the learner rejects; failed = any other error "
              "(each scores AUC 0 in the selection; counts of inner-CV tasks, one per run and "
              "grid point, with the distinct grid points concerned)."]
    lines += [""] + notes if notes else ["", "no divergence, failure or edge selection"]
    return "\n".join(lines), recs


def _fmt_params(key):
    params = json.loads(key)
    return ", ".join(f"{k}=2^{_exp_of(v)}" for k, v in params.items()) or "no parameters"


def cached_grids(out):
    """The searches cached in ``<out>/rows.csv``: (grid, protocol, seed) -> number of test rows.

    ``grid`` is the name given to the runner (a capped search's ``@k`` dropped).
    """
    found = defaultdict(int)
    for r in load_rows(out):
        if r["kind"] == "test":
            found[(r["grid"].split("@")[0], r["protocol"], int(r["seed"]))] += 1
    return dict(sorted(found.items()))


def paper_table():
    """The paper's Tables 2 and 3 shipped as package data.

    Returns
    -------
    table : dict
        (dataset, algorithm) -> (table number, mean %, std %).
    """
    text = resources.files("sosl").joinpath("data/paper_tables.tsv").read_text()
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#") or line.startswith("table\t"):
            continue
        t, d, a, m, s = line.split("\t")
        out[(d, a)] = (int(t), float(m), float(s))
    return out


#: the three spreads of a cell, in the order they are printed
STD_KINDS = (("auc_std", "std over runs"),
             ("std_of_partition_means", "std of repetition means"),
             ("auc_sem", "standard error"))


#: runs behind each of the paper's cells (4 repetitions x 5 folds), for its standard error
PAPER_RUNS = 20


#: the label of a capped reference's cells in every table (see :func:`_capped_label`)
CAPPED_MARK = "†"


def _sub(rec):
    """The capped-reference mark of a table record, or ``""``."""
    return CAPPED_MARK if rec.get("protocol") else ""


def _capped_label(protocol):
    """``"reference: 4,000-row subsample, 1 x 5 folds"`` for ``"1x5/5@4000"``."""
    reps, folds, _, cap = parse_protocol(protocol)
    return f"reference: {cap:,}-row subsample, {reps} x {folds} folds"


def _legend(n_folds_seen, with_ceilings=False, references=(), relabelled=(), capped=()):
    lines = [
        "Legend:",
        "- `ours ± s`: mean of the test AUC over the runs of the protocol (repeats x folds) "
        "and `s`, the sample std (ddof 1) over those runs;",
        "- `paper ± s`: the mean and std the paper reports;",
        "- `(d)`: ours - paper, in AUC points;",
        "- `!` after `d`: |d| exceeds two standard errors of the difference of the two "
        "means, 2 sqrt(se_ours^2 + se_paper^2), with se_ours = our std / sqrt(runs) and "
        f"se_paper = the paper's std / sqrt({PAPER_RUNS}) (its 4 x 5 runs): the gap is "
        "larger than the run-to-run noise of both means explains;",
        "- `v` after the paper's value: the paper's mean lies *below* ours by more than the "
        "paper's std plus our standard error (a cell where the paper under-reports what "
        "this protocol reaches);",
        "- `/ -`: the paper has no value for the cell (an extra baseline or a batch "
        "reference).",
    ]
    if with_ceilings:
        lines += [
            "- `^` after the paper's value: the paper's mean exceeds the oracle ceiling of the "
            "cell by more than the paper's std, i.e. it is not reachable by this protocol on "
            "this data. The oracle of a run is the best test AUC over the grid, every point "
            "fitted on the whole training part (same split, preprocessing and pass order) "
            "and the best chosen on the test fold itself: an upper bound of any selection on "
            "that grid; the ceiling is its mean over the runs (table below).",
        ]
    if references:
        lines.append(f"- {', '.join(f'`{r}`' for r in references)}: batch "
                     f"reference{'s' if len(references) > 1 else ''}, "
                     "run by the same protocol on the same splits and preprocessing (inner-CV "
                     "selection on the training part, refit, test): " + "; ".join(
                         _REFERENCE_NOTES[r] for r in references if r in _REFERENCE_NOTES)
                     + ".")
    for proto in capped:
        lines.append(f"- `{CAPPED_MARK}` after our value or the algorithm ({_capped_label(proto)}):"
                     f" a batch reference on a dataset whose training parts exceed "
                     f"{parse_protocol(proto)[3]:,} rows, run on the first outer partition only "
                     f"and on a stratified subsample of {parse_protocol(proto)[3]:,} rows of "
                     "each training part (the same rows for every grid point, a fixed seed per "
                     "run; the test fold whole), because its fits grow with the cube of the "
                     "training size; the learners' cells and ceilings keep the full protocol.")
    for d in relabelled:
        base, label = split_run_name(d)
        lines.append(f"- `{d}`: {base} with its original label {label:g} as the positive "
                     "class (`--positive-class`), not the registry's; the paper's value "
                     f"beside it is the paper's {base}.")
    lines += [
        "",
        "Spread of each cell: the std over the runs (as in the table), the std (ddof 1) of "
        f"the repetition means (each the mean over the {n_folds_seen} folds of one outer "
        "partition) and the standard error of the mean (std over runs / sqrt(runs)); each "
        "divided by the paper's std in the last columns.",
    ]
    return lines


_REFERENCE_NOTES = {
    "LogReg": "`LogReg` is scikit-learn's L2 logistic regression, C = 2^e",
    "SVC": "`SVC` is scikit-learn's RBF support vector machine, C = 2^e and the kernel "
           "learners' widths sigma = 2^e (gamma = 1 / sigma^2)",
    "OKAUC-M_inf": "`OKAUC-M_inf` is OKAUC-M with unbounded buffers (the exact kernel "
                   "expansion, training parts subsampled like every kernel learner's)",
}


def _ratio(a, b):
    return round(a / b, 2) if b and np.isfinite(a) and b > 0 else None


def _cell_ceiling(oracle, runs):
    """Mean (%) of the oracle over ``runs``, None unless every run has its oracle."""
    if not oracle or not runs or any(r not in oracle for r in runs):
        return None
    return float(np.mean([100.0 * oracle[r] for r in runs]))


def _searches_nothing(name):
    known = _registry()
    return name in known and not known[name].searched


def _n(k, noun):
    return f"{k} {noun}" + ("" if k == 1 else "s")


def _reachability(recs, grid):
    """The measured summary under a table: which paper cells the protocol can reach."""
    capped = [r for r in recs if r["paper_mean"] is not None and r["oracle_mean"] is not None]
    n_paper = sum(r["paper_mean"] is not None for r in recs)
    if not capped:
        return []
    over = [r for r in capped if r["above_ceiling"]]
    under = [r for r in capped if not r["above_ceiling"]]
    reached = [r for r in under if abs(r["diff"]) <= r["paper_std"]]
    gaps = [r["oracle_mean"] - r["auc_mean"] for r in capped]
    g = f" (grid `{grid}`)" if grid else ""
    lines = [f"Reachability{g}, measured: {len(capped)} of the {n_paper} paper cells here have "
             "an oracle ceiling."]
    if over:
        listed = "; ".join(f"{r['dataset']} {r['algorithm']} (paper {r['paper_mean']:.2f} ± "
                           f"{r['paper_std']:.2f}, ceiling {r['oracle_mean']:.2f}"
                           + (", nothing searched: the ceiling is the one fit"
                              if _searches_nothing(r["algorithm"]) else "") + ")"
                           for r in over)
        lines.append(f"- Not reachable by this protocol on this data: {_n(len(over), 'cell')}, "
                     "whose paper mean exceeds the ceiling by more than the paper's std: "
                     f"{listed}.")
    else:
        lines.append("- Not reachable by this protocol on this data: none (no paper mean "
                     "exceeds its ceiling by more than the paper's std).")
    tight = sum(r["paper_minus_oracle"] > 0 for r in under)
    lines.append(f"- Reachable (paper mean at most the ceiling + the paper's std): "
                 f"{_n(len(under), 'cell')} ({tight} of them with the paper's mean above the "
                 "ceiling, by less than the paper's std); ours is within the paper's std of the "
                 f"paper's mean on {len(reached)} of them.")
    below = [r for r in recs if r.get("paper_far_below")]
    if below:
        lines.append(f"- Far below ours (`v`): {_n(len(below), 'paper cell')} lie below our "
                     "mean by more than the paper's std plus our standard error: " + "; ".join(
                         f"{r['dataset']} {r['algorithm']} (paper {r['paper_mean']:.2f}, ours "
                         f"{r['auc_mean']:.2f})" for r in below) + ".")
    else:
        lines.append("- Far below ours (`v`): none (no paper mean lies below ours by more "
                     "than the paper's std plus our standard error).")
    lines.append(f"- Selection cost (ceiling - ours): median {np.median(gaps):.2f}, largest "
                 f"{max(gaps):.2f} AUC points over the {_n(len(capped), 'cell')}.")
    refs = [r for r in recs if r["algorithm"] in REFERENCES]
    best_paper = {}  # dataset -> (mean, std) of the paper's best cell among those reported here
    for r in recs:
        if r["paper_mean"] is not None and r["paper_mean"] > best_paper.get(
                r["dataset"], (-np.inf, 0))[0]:
            best_paper[r["dataset"]] = (r["paper_mean"], r["paper_std"])
    for name in dict.fromkeys(r["algorithm"] for r in refs):
        mine = [r for r in refs if r["algorithm"] == name and r["dataset"] in best_paper]
        if not mine:
            continue
        reach = [r for r in mine if r["auc_mean"] >= best_paper[r["dataset"]][0]
                 - best_paper[r["dataset"]][1]]
        subs = [r["protocol"] for r in mine if r["protocol"]]
        text = (f"- {name} (batch reference): within the paper's std of (or above) the best "
                f"paper cell of its dataset on {len(reach)} of {len(mine)} datasets"
                + (f" ({len(subs)} of them `{CAPPED_MARK}`, {_capped_label(subs[0])})"
                   if subs else ""))
        with_or = [r for r in mine if r["oracle_mean"] is not None]
        if with_or:
            above = [r["dataset"] for r in with_or if round(
                best_paper[r["dataset"]][0] - r["oracle_mean"], 2) > best_paper[r["dataset"]][1]]
            text += (f"; that cell exceeds even {name}'s own ceiling by more than its std on "
                     f"{len(above)} of {len(with_or)}" + (f" ({', '.join(above)})" if above
                                                          else ""))
        lines.append(text + ".")
    return lines


def report(test_rows, out, suffix="", ceilings=None, grid=None):
    """Write Tables 2 and 3 (markdown and CSV) beside the paper's numbers.

    Each cell is ``ours ± std`` over the runs, the paper's ``mean ± std`` and the
    difference ours - paper (AUC points, %); the difference is flagged with ``!`` where
    its magnitude exceeds *our* run-to-run std (not the paper's). Below each table, the
    spread of every cell three ways (the std over the runs, the std of the per-partition
    means, i.e. of the repetition averages of ``folds`` runs each, and the standard error)
    with each one's ratio to the paper's std, and the median of each ratio over the cells;
    a legend says what every mark means.

    With ``ceilings`` (:func:`oracle_ceilings`), every cell whose runs all have an oracle
    gets its ceiling (the mean oracle over the same runs); the paper's value is marked
    ``^`` when its mean exceeds the ceiling by more than the paper's std, a table of the
    ceilings follows, and a measured summary of which paper cells the protocol can reach.
    Batch references (``LogReg``, ``SVC``, ``OKAUC-M_inf``) are columns of their tables.

    Returns
    -------
    paths : list of str
        The files written.
    """
    out = Path(out)
    paper = paper_table()
    ceilings = ceilings or {}
    agg = defaultdict(list)
    runs_of = defaultdict(list)
    parts = defaultdict(lambda: defaultdict(list))  # per outer partition (repeat)
    folds_seen = set()
    capped_of = {}  # (dataset, algorithm) -> the capped protocol of its rows
    for r in test_rows:
        if parse_protocol(r.get("protocol") or "1x1/1")[3] is not None:
            capped_of[(r["dataset"], r["algorithm"])] = r["protocol"]
        agg[(r["dataset"], r["algorithm"])].append(100.0 * float(r["auc"]))
        runs_of[(r["dataset"], r["algorithm"])].append(int(r.get("run", 0)))
        proto = r.get("protocol") or ""
        n_folds = int(proto.split("x")[1].split("/")[0]) if "x" in proto else 1
        folds_seen.add(n_folds)
        parts[(r["dataset"], r["algorithm"])][int(r.get("run", 0)) // n_folds].append(
            100.0 * float(r["auc"]))
    paths = []
    for table in (2, 3):
        algos = [a for a, s in _registry().items() if s.table == table
                 and any(k[1] == a for k in agg)]
        dsets = [d for d in dict.fromkeys(k[0] for k in agg)
                 if any((d, a) in agg for a in algos)]
        if not algos or not dsets:
            continue
        recs = []
        for d in dsets:
            for a in algos:
                v = agg.get((d, a))
                if not v:
                    continue
                mean, std = float(np.mean(v)), float(np.std(v, ddof=1)) if len(v) > 1 else 0.0
                key = (split_run_name(d)[0], a)
                pm, ps = (paper[key][1:] if key in paper else (None, None))
                diff = None if pm is None else mean - pm
                pm_means = [np.mean(x) for x in parts[(d, a)].values()]
                std_parts = float(np.std(pm_means, ddof=1)) if len(pm_means) > 1 else float("nan")
                sem = std / np.sqrt(len(v))
                ceil = _cell_ceiling(ceilings.get((d, a)), runs_of[(d, a)])
                recs.append({"table": table, "dataset": d, "algorithm": a, "n_runs": len(v),
                             "protocol": capped_of.get((d, a), ""),
                             "auc_mean": round(mean, 2), "auc_std": round(std, 2),
                             "std_of_partition_means": round(std_parts, 2),
                             "auc_sem": round(sem, 2),
                             "paper_mean": pm, "paper_std": ps,
                             "diff": None if diff is None else round(diff, 2),
                             # two standard errors of the difference of the two means
                             "flagged": bool(diff is not None and abs(diff) > 2.0 * np.hypot(
                                 sem, ps / np.sqrt(PAPER_RUNS))),
                             # the paper far below ours: beyond its std plus our s.e.
                             "paper_far_below": bool(diff is not None
                                                     and diff > ps + sem),
                             "ratio_std_runs": _ratio(std, ps),
                             "ratio_std_means": _ratio(std_parts, ps),
                             "ratio_sem": _ratio(sem, ps),
                             "oracle_mean": None if ceil is None else round(ceil, 2),
                             "paper_minus_oracle": (None if ceil is None or pm is None
                                                    else round(pm - ceil, 2)),
                             # on the printed (rounded) gap, so the mark matches the table
                             "above_ceiling": bool(ceil is not None and pm is not None
                                                   and round(pm - ceil, 2) > ps)})
        csv_path = out / f"table{table}{suffix}.csv"
        with open(csv_path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(recs[0]))
            w.writeheader()
            w.writerows(recs)
        cell = {(r["dataset"], r["algorithm"]): r for r in recs}
        with_ceilings = any(r["oracle_mean"] is not None for r in recs)
        lines = [f"Table {table}: test AUC (%), ours / paper (ours - paper); see the legend", "",
                 "| dataset | " + " | ".join(algos) + " |",
                 "|---|" + "---|" * len(algos)]
        for d in dsets:
            cells = []
            for a in algos:
                r = cell.get((d, a))
                if r is None:
                    cells.append("")
                elif r["paper_mean"] is None:
                    cells.append(f"{r['auc_mean']:.2f} ± {r['auc_std']:.2f}{_sub(r)} / -")
                else:
                    mark = "!" if r["flagged"] else ""
                    up = ("^" if r["above_ceiling"] else "") + (
                        "v" if r["paper_far_below"] else "")
                    cells.append(f"{r['auc_mean']:.2f} ± {r['auc_std']:.2f} / "
                                 f"{r['paper_mean']:.2f} ± {r['paper_std']:.2f}{up} "
                                 f"({r['diff']:+.2f}{mark})")
            lines.append(f"| {d} | " + " | ".join(cells) + " |")
        refs = [a for a in algos if a in REFERENCES]
        lines += [""] + _legend("/".join(map(str, sorted(folds_seen))) or "?", with_ceilings,
                                refs, [d for d in dsets if split_run_name(d)[1] is not None],
                                sorted({r["protocol"] for r in recs if r["protocol"]}))
        lines += [""]

        def fmt(x):
            return "-" if x is None or not np.isfinite(x) else f"{x:.2f}"

        if with_ceilings:
            lines += ["Oracle ceilings (AUC %): ours, the ceiling (mean over the same runs of "
                      "the best grid point on each test fold), the paper, and paper - ceiling "
                      "(`^`: above the ceiling by more than the paper's std)", "",
                      "| dataset | algorithm | ours | ceiling | ceiling - ours | paper "
                      "| paper - ceiling |", "|---|---|---|---|---|---|---|"]
            for r in recs:
                if r["oracle_mean"] is None:
                    continue
                paper_cell = ("-" if r["paper_mean"] is None else
                              f"{r['paper_mean']:.2f} ± {r['paper_std']:.2f}")
                gap = fmt(r["paper_minus_oracle"]) + (" ^" if r["above_ceiling"] else "")
                lines.append(f"| {r['dataset']} | {r['algorithm']}{_sub(r)} | "
                             f"{r['auc_mean']:.2f} | {r['oracle_mean']:.2f} | "
                             f"{r['oracle_mean'] - r['auc_mean']:.2f} "
                             f"| {paper_cell} | {gap} |")
            lines += [""] + _reachability(recs, grid) + [""]
        lines += ["| dataset | algorithm | runs | std over runs | std of repetition means "
                  "| standard error | paper std | ratios to paper std |",
                  "|---|---|---|---|---|---|---|---|"]

        for r in recs:
            ratios = " / ".join(fmt(r[k]) for k in ("ratio_std_runs", "ratio_std_means",
                                                    "ratio_sem"))
            lines.append(f"| {r['dataset']} | {r['algorithm']}{_sub(r)} | {r['n_runs']} | "
                         f"{fmt(r['auc_std'])} | {fmt(r['std_of_partition_means'])} | "
                         f"{fmt(r['auc_sem'])} | {fmt(r['paper_std'])} | {ratios} |")
        medians = []
        for key, name in zip(("ratio_std_runs", "ratio_std_means", "ratio_sem"),
                             (n for _, n in STD_KINDS)):
            vals = [r[key] for r in recs if r[key] is not None]
            if vals:
                medians.append(f"{name} {np.median(vals):.2f}x ({len(vals)} cells)")
        if medians:
            lines += ["", "Median ratio to the paper's std: " + "; ".join(medians)]
        md_path = out / f"table{table}{suffix}.md"
        md_path.write_text("\n".join(lines) + "\n")
        paths += [str(csv_path), str(md_path)]
    return paths


def export_record(out, dest, grid, seed=0, protocol="4x5/5", max_points=None):
    """Write the result record of ``out``'s cache for ``grid`` into ``dest``, and the tables
    rewritten from it: ``dest/rows.csv`` holds every ``test`` row (one per cell and run:
    the selected grid point and its test AUC) and, per run with a complete oracle, one
    ``ceiling`` row (the best test AUC over the grid), without the inner-CV rows. That is
    enough for ``--report-only --out dest`` to rewrite every table, and small enough to
    commit (the inner-CV rows, needed for the run summary and the cost table, stay in the
    cache).

    Returns
    -------
    paths : list of str
        The record and the tables written.
    """
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    known = _registry()
    cached = pick_protocol(load_rows(out), protocol)
    tests = _unique([r for r in cached if r["kind"] == "test" and r["algorithm"] in known
                     and r["grid"] == grid_label(known[r["algorithm"]], grid, max_points)
                     and r["seed"] == int(seed)])
    if not tests:
        return []
    ceil = oracle_ceilings(cached, grid, seed, protocol, max_points)
    cell_protocol = {(r["dataset"], r["algorithm"]): r["protocol"] for r in tests}
    rows = [dict(r) for r in tests]
    for (d, a), runs in sorted(ceil.items()):
        for run, auc in sorted(runs.items()):
            rows.append({**{k: "" for k in FIELDS}, "kind": "ceiling", "dataset": d,
                         "algorithm": a, "run": run, "params": "{}",
                         "grid": grid_label(known[a], grid, max_points), "seed": int(seed),
                         "protocol": cell_protocol.get((d, a), protocol), "auc": auc,
                         "seconds": 0.0,
                         "cpu_seconds": 0.0})
    record = dest / CACHE_NAME
    tmp = record.with_suffix(".tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(FIELDS), lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") for k in FIELDS})
    os.replace(tmp, record)
    return [str(record)] + report_from_cache(dest, grid, seed, protocol, max_points=max_points)


def report_from_cache(out, grid, seed=0, protocol="4x5/5", datasets=None, algorithms=None,
                      max_points=None):
    """Rewrite the tables of ``out`` from every cached test row of ``grid`` (no computing).

    ``max_points`` selects, as in :func:`run_experiment`, which search of a capped
    algorithm is reported. The cached batch references of the tables of ``algorithms``
    are reported with them, and the oracle ceilings wherever their rows are cached (see
    :func:`oracle_ceilings`). Writes the tables, ``summary_<grid>.md``
    (:func:`run_summary`) and ``cost_<grid>.md``; returns their paths, ``[]`` when
    nothing matching is cached.
    """
    known = _registry()
    if algorithms is not None:
        tables = {known[a].table for a in algorithms if a in known}
        algorithms = list(algorithms) + [n for n in default_references(tables)
                                         if n not in algorithms]
    cached = load_rows(out)
    rows = _unique([r for r in pick_protocol(cached, protocol) if r["kind"] == "test"
                    and r["algorithm"] in known
                    and r["grid"] == grid_label(known[r["algorithm"]], grid, max_points)
                    and r["seed"] == int(seed)
                    and (datasets is None or r["dataset"] in datasets)
                    and (algorithms is None or r["algorithm"] in algorithms)])
    order = {d: i for i, d in enumerate(ds.DATASETS)}
    rows.sort(key=lambda r: (order.get(split_run_name(r["dataset"])[0], -1), r["dataset"]))
    ceil = oracle_ceilings(cached, grid, seed, protocol, max_points)
    paths = report(rows, out, suffix=f"_{grid}", ceilings=ceil, grid=grid)
    if not any(r["kind"] == "cv" for r in cached):
        return paths                  # a result record: no inner-CV rows to summarize
    if rows:
        text, _ = run_summary(cached, list(dict.fromkeys(r["dataset"] for r in rows)),
                              [a for a in known if any(r["algorithm"] == a for r in rows)],
                              grid, seed, protocol, max_points)
        path = Path(out) / f"summary_{grid}.md"
        path.write_text(text + "\n")
        paths.append(str(path))
    return paths + cost_table(out, grid, seed, protocol, datasets, algorithms, max_points)


def cost_table(out, grid, seed=0, protocol="4x5/5", datasets=None, algorithms=None,
               max_points=None):
    """Write ``cost_<grid>.md``: the compute behind each cell of the tables.

    For each (dataset, algorithm) with test rows on ``grid``, the CPU seconds of the tasks
    the cell needed (the inner-CV task of every searched point and run, and the refits),
    summed from the cache whichever call computed them, and apart those of its oracle
    rows (the ceiling). On ``n`` idle cores the wall time
    of the cell is about this figure divided by ``n``.

    Returns
    -------
    paths : list of str
        ``[]`` when there is nothing to report, else the file written.
    """
    rows = pick_protocol(load_rows(out), protocol)
    known = _registry()
    tests = defaultdict(int)
    for r in rows:
        if (r["kind"] == "test" and r["algorithm"] in known and r["seed"] == int(seed)
                and r["grid"] == grid_label(known[r["algorithm"]], grid, max_points)
                and (datasets is None or r["dataset"] in datasets)
                and (algorithms is None or r["algorithm"] in algorithms)):
            tests[(r["dataset"], r["algorithm"])] += 1
    if not tests:
        return []
    points = {a: {_params_key(p) for p in grid_points(known[a], grid, max_points)}
              for a in {a for _, a in tests}}
    cpu, n_cv, seen = defaultdict(float), defaultdict(int), set()
    cpu_oracle = defaultdict(float)
    for r in rows:
        key = (r["dataset"], r["algorithm"])
        if key not in tests or r["seed"] != int(seed):
            continue
        k = _key(r)
        if k in seen:       # a task cached twice counts once
            continue
        if r["kind"] == "cv" and r["params"] in points[r["algorithm"]]:
            seen.add(k)
            cpu[key] += r["cpu_seconds"]
            n_cv[key] += 1
        elif r["kind"] == "test" and r["grid"] == grid_label(known[r["algorithm"]], grid,
                                                             max_points):
            seen.add(k)
            cpu[key] += r["cpu_seconds"]
        elif r["kind"] == "oracle" and r["params"] in points[r["algorithm"]]:
            seen.add(k)
            cpu_oracle[key] += r["cpu_seconds"]
    lines = [f"Compute per cell of the `{grid}` tables: CPU seconds (inner-CV tasks, refits)",
             "", "| dataset | algorithm | grid points | CV tasks | test runs | CPU s "
             "| oracle CPU s |", "|---|---|---|---|---|---|---|"]
    order = {d: i for i, d in enumerate(ds.DATASETS)}
    algo_order = {a: i for i, a in enumerate(known)}
    for d, a in sorted(tests, key=lambda k: (order.get(split_run_name(k[0])[0], -1), k[0],
                                             algo_order[k[1]])):
        lines.append(f"| {d} | {a} | {len(points[a])} | {n_cv[(d, a)]} | {tests[(d, a)]} | "
                     f"{cpu[(d, a)]:.0f} | {cpu_oracle[(d, a)]:.0f} |")
    lines.append(f"| total | | | {sum(n_cv.values())} | {sum(tests.values())} | "
                 f"{sum(cpu.values()):.0f} | {sum(cpu_oracle.values()):.0f} |")
    path = Path(out) / f"cost_{grid}.md"
    path.write_text("\n".join(lines) + "\n")
    return [str(path)]
