"""Parallel, resumable runner of the Section 6.3 protocol and the Tables 2/3 report.

Work is split into independent tasks run through joblib:

1. ``cv`` tasks, one per (dataset, algorithm, run, grid point): the mean inner-CV AUC;
2. ``test`` tasks, one per (dataset, algorithm, run): refit the best grid point on the
   training part and score the held-out fold.

Every finished task is appended at once as one row of ``<out>/rows.csv``; a later call
with the same ``out`` skips the rows already there, so an interrupted run resumes where it
stopped (and a full-grid run reuses the points a coarse run has already scored, since the
coarse exponents are a subset of the full ones). Workers load each dataset once, by name.
"""

import csv
import json
import os
import sys
import threading
import time
from collections import defaultdict
from functools import lru_cache
from importlib import resources
from pathlib import Path

import joblib
import numpy as np

from .. import datasets as ds
from .algorithms import ALGORITHMS, GRIDS, grid_label, grid_points, resolve_algorithms
from .protocol import cv_score, heldout_score, outer_splits

__all__ = ["FIELDS", "cost_table", "get_data", "load_rows", "paper_table", "report",
           "report_from_cache", "run_experiment"]

FIELDS = ("kind", "dataset", "algorithm", "run", "params", "grid", "seed", "protocol", "auc",
          "seconds", "cpu_seconds", "error", "pid", "thread")


@lru_cache(maxsize=8)
def get_data(name, data_dir=None):
    """X (scaled to [-1, 1]) and y in {0, 1} of a dataset, cached per process.

    Besides the registry's names: ``"default"`` (breast cancer) and ``"synthetic"``
    (a fixed 2000 x 8 stream with imbalance ratio 5 from
    :func:`sosl.datasets.make_imbalanced_stream`).
    """
    if name == "synthetic":
        X, y = ds.make_imbalanced_stream(2000, 8, imbalance_ratio=5.0, class_sep=1.5,
                                         random_state=0)
        return ds.scale_features(X), y
    return ds.load_dataset(name, data_dir)


def _params_key(params):
    return json.dumps(params, sort_keys=True)


def _task(kind, dataset, algorithm, run, params, cfg):
    t0, c0 = time.perf_counter(), time.process_time()
    X, y = get_data(dataset, cfg["data_dir"])
    spec = ALGORITHMS[algorithm]
    proto = dict(seed=cfg["seed"], n_repeats=cfg["n_repeats"], n_folds=cfg["n_folds"])
    if kind == "cv":
        score, err = cv_score(spec, params, X, y, dataset, run, inner_folds=cfg["inner_folds"],
                              **proto)
    else:
        score, err = heldout_score(spec, params, X, y, dataset, run, **proto)
    label = grid_label(spec, cfg["grid"], cfg["max_points"]) if kind == "test" else ""
    return {"kind": kind, "dataset": dataset, "algorithm": algorithm, "run": run,
            "params": _params_key(params), "grid": label,
            "seed": cfg["seed"], "protocol": cfg["protocol"], "auc": score,
            "seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - c0,
            "error": err, "pid": os.getpid(),
            "thread": threading.current_thread().name}


def _key(row):
    return (row["kind"], row["dataset"], row["algorithm"], int(row["run"]), row["params"],
            row["grid"], int(row["seed"]), row["protocol"])


def load_rows(out):
    """Rows of ``<out>/rows.csv`` (an empty list if there is none); ``auc`` as float."""
    path = Path(out) / "rows.csv"
    if not path.exists():
        return []
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        r["auc"] = float(r["auc"])
        r["run"] = int(r["run"])
        r["seed"] = int(r["seed"])
        r["seconds"] = float(r["seconds"])
        r["cpu_seconds"] = float(r.get("cpu_seconds") or "nan")
    return rows


class _Progress:
    """A one-line text progress bar on stderr (no extra dependency)."""

    def __init__(self, total, label, enabled=True, every=1.0):
        self.total, self.label, self.enabled, self.every = total, label, enabled, every
        self.done, self.t0, self.last = 0, time.perf_counter(), 0.0

    def step(self):
        self.done += 1
        now = time.perf_counter() - self.t0
        if self.enabled and (now - self.last >= self.every or self.done == self.total):
            self.last = now
            frac = self.done / max(self.total, 1)
            bar = "#" * int(30 * frac)
            eta = now / frac - now if frac > 0 else 0.0
            sys.stderr.write(f"\r{self.label} [{bar:<30}] {self.done}/{self.total} "
                             f"{now:7.1f}s elapsed, ~{eta:7.1f}s left")
            if self.done == self.total:
                sys.stderr.write("\n")
            sys.stderr.flush()


def _run_tasks(tasks, cfg, writer, fh, n_jobs, backend, label, progress):
    bar = _Progress(len(tasks), label, progress)
    if not tasks:
        return []
    rows = []
    parallel = joblib.Parallel(n_jobs=n_jobs, backend=backend, return_as="generator_unordered",
                               batch_size="auto")
    for row in parallel(joblib.delayed(_task)(*t, cfg) for t in tasks):
        writer.writerow(row)
        fh.flush()
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


def run_experiment(datasets, algorithms=None, grid="full", n_jobs=1, backend="loky", out="results",
                   seed=0, n_repeats=4, n_folds=5, inner_folds=5, data_dir=None, progress=True,
                   log=print, max_points=None):
    """Run (or resume) the protocol and write the tables.

    Parameters
    ----------
    datasets : list of str
        Registry names, ``"default"`` or ``"synthetic"``.
    algorithms : list of str or None
        Paper names (keys of :data:`~sosl.experiments.ALGORITHMS`); None = all available.
    grid : {"full", "coarse", "sparse", "quick", "wide"}
        Exponent set of the 2^e grids.
    n_jobs : int
        Workers (joblib); 1 runs in this process.
    backend : str or None
        joblib backend ("loky", "threading", "multiprocessing", "dask", "ray", ...); None
        leaves the choice to an enclosing ``joblib.parallel_config``.
    out : path-like
        Result directory; ``rows.csv`` there is the resumable cache.
    seed, n_repeats, n_folds, inner_folds : int
        Protocol; the paper's is 4 x 5-fold outer with 5-fold inner CV.
    data_dir : path-like or None
        Where the dataset files are (default ``$SOSL_DATA_DIR``, then the cache dir).
    progress : bool
        Show a progress bar on stderr.
    log : callable
        Where messages (skipped algorithms) go.
    max_points : int or None
        Cap on the grid points searched per algorithm (see
        :func:`~sosl.experiments.grid_points`): None keeps each algorithm's own cap (only
        OKAUC-S has one: as many points as a two-parameter grid, 441 of its 21^3 full-grid
        points), 0 searches every product grid whole. A capped search is recorded as grid
        ``"<grid>@<k>"``.

    Returns
    -------
    summary : dict
        ``wall_seconds``, ``task_seconds`` (CPU seconds per (dataset, algorithm) summed
        over the tasks run now), ``new_rows``, ``tables`` (paths written) and ``test_rows``.
    """
    if grid not in GRIDS:
        raise ValueError(f"grid must be one of {sorted(GRIDS)}, got {grid!r}")
    t0 = time.perf_counter()
    specs = resolve_algorithms(algorithms, log=log)
    data_dir = None if data_dir is None else str(data_dir)
    cfg = {"seed": int(seed), "n_repeats": int(n_repeats), "n_folds": int(n_folds),
           "inner_folds": int(inner_folds), "grid": grid, "data_dir": data_dir,
           "max_points": None if max_points is None else int(max_points),
           "protocol": f"{int(n_repeats)}x{int(n_folds)}/{int(inner_folds)}"}
    n_runs = cfg["n_repeats"] * cfg["n_folds"]
    for name in datasets:  # fail early, in this process, on a missing dataset
        y = get_data(name, data_dir)[1]
        if len(outer_splits(y, name, seed, n_repeats, n_folds)) != n_runs:
            raise RuntimeError("unexpected number of outer runs")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    existing = load_rows(out)
    done = {_key({**r, "params": r["params"]}) for r in existing}
    path = out / "rows.csv"
    new_file = not path.exists()
    rows_now = []
    with open(path, "a", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=FIELDS)
        if new_file:
            writer.writeheader()
        base = {"grid": "", "seed": cfg["seed"], "protocol": cfg["protocol"]}
        cv_tasks = [("cv", d, s.name, r, p) for d in datasets for s in specs
                    for r in range(n_runs) for p in grid_points(s, grid, max_points)
                    if _key({**base, "kind": "cv", "dataset": d, "algorithm": s.name, "run": r,
                             "params": _params_key(p)}) not in done]
        rows_now += _run_tasks(cv_tasks, cfg, writer, fh, n_jobs, backend, "cv  ", progress)
        all_rows = existing + rows_now
        cv_by = defaultdict(list)
        for r in all_rows:
            if r["kind"] == "cv" and r["seed"] == cfg["seed"] and r["protocol"] == cfg["protocol"]:
                cv_by[(r["dataset"], r["algorithm"], int(r["run"]))].append(r)
        test_tasks = []
        for d in datasets:
            for s in specs:
                for r in range(n_runs):
                    best = _select(cv_by[(d, s.name, r)], grid_points(s, grid, max_points))
                    row = {**base, "kind": "test", "dataset": d, "algorithm": s.name, "run": r,
                           "params": _params_key(best), "grid": grid_label(s, grid, max_points)}
                    if _key(row) not in done:
                        test_tasks.append(("test", d, s.name, r, best))
        rows_now += _run_tasks(test_tasks, cfg, writer, fh, n_jobs, backend, "test", progress)
    task_seconds = defaultdict(float)
    for r in rows_now:
        task_seconds[(r["dataset"], r["algorithm"])] += r["cpu_seconds"]
    labels = {s.name: grid_label(s, grid, max_points) for s in specs}
    test_rows = [r for r in existing + rows_now if r["kind"] == "test"
                 and r["algorithm"] in labels and r["grid"] == labels[r["algorithm"]]
                 and int(r["seed"]) == cfg["seed"] and r["protocol"] == cfg["protocol"]
                 and r["dataset"] in datasets]
    tables = report(test_rows, out, suffix=f"_{grid}")
    wall = time.perf_counter() - t0
    summary = {"wall_seconds": wall, "task_seconds": dict(task_seconds), "new_rows": len(rows_now),
               "tables": tables, "test_rows": test_rows}
    with open(out / f"timing_{grid}.json", "a") as f:
        f.write(json.dumps({"datasets": list(datasets), "algorithms": [s.name for s in specs],
                            "grid": grid, "n_jobs": n_jobs, "backend": str(backend),
                            "wall_seconds": round(wall, 2), "new_rows": len(rows_now),
                            "task_seconds": {f"{d}/{a}": round(v, 2)
                                             for (d, a), v in task_seconds.items()}}) + "\n")
    return summary


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


def report(test_rows, out, suffix=""):
    """Write Tables 2 and 3 (markdown and CSV) beside the paper's numbers.

    Each cell is ``ours ± std`` over the runs, the paper's ``mean ± std`` and the
    difference ours - paper (AUC points, %); the difference is flagged with ``!`` where
    its magnitude exceeds our run-to-run std. The CSV also gives the std of the
    per-partition means (the 4 averages of 5 folds), which is what the paper's smaller
    stds resemble.

    Returns
    -------
    paths : list of str
        The files written.
    """
    out = Path(out)
    paper = paper_table()
    agg = defaultdict(list)
    parts = defaultdict(lambda: defaultdict(list))  # per outer partition (repeat)
    for r in test_rows:
        agg[(r["dataset"], r["algorithm"])].append(100.0 * float(r["auc"]))
        proto = r.get("protocol") or ""
        n_folds = int(proto.split("x")[1].split("/")[0]) if "x" in proto else 1
        parts[(r["dataset"], r["algorithm"])][int(r.get("run", 0)) // n_folds].append(
            100.0 * float(r["auc"]))
    paths = []
    for table in (2, 3):
        algos = [a for a, s in ALGORITHMS.items() if s.table == table
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
                pm, ps = (paper[(d, a)][1:] if (d, a) in paper else (None, None))
                diff = None if pm is None else mean - pm
                pm_means = [np.mean(x) for x in parts[(d, a)].values()]
                std_parts = float(np.std(pm_means, ddof=1)) if len(pm_means) > 1 else float("nan")
                recs.append({"table": table, "dataset": d, "algorithm": a, "n_runs": len(v),
                             "auc_mean": round(mean, 2), "auc_std": round(std, 2),
                             "std_of_partition_means": round(std_parts, 2),
                             "paper_mean": pm, "paper_std": ps,
                             "diff": None if diff is None else round(diff, 2),
                             "flagged": bool(diff is not None and abs(diff) > std)})
        csv_path = out / f"table{table}{suffix}.csv"
        with open(csv_path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(recs[0]))
            w.writeheader()
            w.writerows(recs)
        cell = {(r["dataset"], r["algorithm"]): r for r in recs}
        lines = [f"Table {table}: test AUC (%) mean ± std over runs; ours / paper (ours - paper), "
                 "`!` = |difference| > our std", "",
                 "| dataset | " + " | ".join(algos) + " |",
                 "|---|" + "---|" * len(algos)]
        for d in dsets:
            cells = []
            for a in algos:
                r = cell.get((d, a))
                if r is None:
                    cells.append("")
                elif r["paper_mean"] is None:
                    cells.append(f"{r['auc_mean']:.2f} ± {r['auc_std']:.2f} / -")
                else:
                    cells.append(f"{r['auc_mean']:.2f} ± {r['auc_std']:.2f} / {r['paper_mean']:.2f} "
                                 f"± {r['paper_std']:.2f} ({r['diff']:+.2f}{'!' if r['flagged'] else ''})")
            lines.append(f"| {d} | " + " | ".join(cells) + " |")
        md_path = out / f"table{table}{suffix}.md"
        md_path.write_text("\n".join(lines) + "\n")
        paths += [str(csv_path), str(md_path)]
    return paths


def report_from_cache(out, grid, seed=0, protocol="4x5/5", datasets=None, algorithms=None,
                      max_points=None):
    """Rewrite the tables of ``out`` from every cached test row of ``grid`` (no computing).

    ``max_points`` selects, as in :func:`run_experiment`, which search of a capped
    algorithm is reported.
    """
    rows = [r for r in load_rows(out) if r["kind"] == "test" and r["algorithm"] in ALGORITHMS
            and r["grid"] == grid_label(ALGORITHMS[r["algorithm"]], grid, max_points)
            and r["seed"] == int(seed) and r["protocol"] == protocol
            and (datasets is None or r["dataset"] in datasets)
            and (algorithms is None or r["algorithm"] in algorithms)]
    order = {d: i for i, d in enumerate(ds.DATASETS)}
    rows.sort(key=lambda r: (order.get(r["dataset"], -1), r["dataset"]))
    return report(rows, out, suffix=f"_{grid}") + cost_table(out, grid, seed, protocol, datasets,
                                                            algorithms, max_points)


def cost_table(out, grid, seed=0, protocol="4x5/5", datasets=None, algorithms=None,
               max_points=None):
    """Write ``cost_<grid>.md``: the compute behind each cell of the tables.

    For each (dataset, algorithm) with test rows on ``grid``, the CPU seconds of the tasks
    the cell needed (the inner-CV task of every searched point and run, and the refits),
    summed from the cache whichever call computed them. On ``n`` idle cores the wall time
    of the cell is about this figure divided by ``n``.

    Returns
    -------
    paths : list of str
        ``[]`` when there is nothing to report, else the file written.
    """
    rows = load_rows(out)
    tests = defaultdict(int)
    for r in rows:
        if (r["kind"] == "test" and r["algorithm"] in ALGORITHMS and r["seed"] == int(seed)
                and r["protocol"] == protocol
                and r["grid"] == grid_label(ALGORITHMS[r["algorithm"]], grid, max_points)
                and (datasets is None or r["dataset"] in datasets)
                and (algorithms is None or r["algorithm"] in algorithms)):
            tests[(r["dataset"], r["algorithm"])] += 1
    if not tests:
        return []
    points = {a: {_params_key(p) for p in grid_points(ALGORITHMS[a], grid, max_points)}
              for a in {a for _, a in tests}}
    cpu, n_cv, seen = defaultdict(float), defaultdict(int), set()
    for r in rows:
        key = (r["dataset"], r["algorithm"])
        if key not in tests or r["seed"] != int(seed) or r["protocol"] != protocol:
            continue
        k = _key(r)
        if k in seen:       # a task cached twice counts once
            continue
        if r["kind"] == "cv" and r["params"] in points[r["algorithm"]]:
            seen.add(k)
            cpu[key] += r["cpu_seconds"]
            n_cv[key] += 1
        elif r["kind"] == "test" and r["grid"] == grid_label(ALGORITHMS[r["algorithm"]], grid,
                                                             max_points):
            seen.add(k)
            cpu[key] += r["cpu_seconds"]
    lines = [f"Compute per cell of the `{grid}` tables: CPU seconds (inner-CV tasks, refits)",
             "", "| dataset | algorithm | grid points | CV tasks | test runs | CPU s |",
             "|---|---|---|---|---|---|"]
    order = {d: i for i, d in enumerate(ds.DATASETS)}
    algo_order = {a: i for i, a in enumerate(ALGORITHMS)}
    for d, a in sorted(tests, key=lambda k: (order.get(k[0], -1), k[0], algo_order[k[1]])):
        lines.append(f"| {d} | {a} | {len(points[a])} | {n_cv[(d, a)]} | {tests[(d, a)]} | "
                     f"{cpu[(d, a)]:.0f} |")
    lines.append(f"| total | | | {sum(n_cv.values())} | {sum(tests.values())} | "
                 f"{sum(cpu.values()):.0f} |")
    path = Path(out) / f"cost_{grid}.md"
    path.write_text("\n".join(lines) + "\n")
    return [str(path)]
