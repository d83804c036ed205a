"""Aggregating the runner's rows: names, protocols, ceilings, the run summary and costs.

The rows of a result cache (:mod:`sosl.experiments.cache`) are read here and reduced to
what the tables need, with nothing computed: the name a run records for a dataset
(:func:`run_name`), which rows belong to a protocol's tables (:func:`pick_protocol`: the
run's protocol, else a capped reference's ``1x5/5@4000``, never a mix in one cell), the
oracle ceiling of every run (:func:`oracle_ceilings`), what went wrong in a run
(:func:`run_summary`) and the compute behind each cell (:func:`cost_table`). The tables
themselves are written by :mod:`sosl.experiments.tables`; :mod:`sosl.experiments.runner`
computes the rows.
"""

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from .. import datasets as ds
from .algorithms import ALGORITHMS, REFERENCES, _exponents, grid_label, grid_points, spec_of
from .cache import CACHE_NAME, read_cache
from .protocol import DIVERGED, FAILED, INVALID, error_kind, parse_protocol

__all__ = ["POSITIVE_TAG", "cached_grids", "cost_table", "load_rows", "oracle_ceilings",
           "pick_protocol", "run_name", "run_summary", "same_protocol", "split_run_name"]


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

def _params_key(params):
    return json.dumps(params, sort_keys=True)

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
    full: set[Any] = set()
    capped: dict[Any, Any] = {}
    for r in rows:
        cell = (r["dataset"], r["algorithm"], int(r["seed"]))
        if r["protocol"] == protocol:
            full.add(cell)
        elif r["protocol"].startswith(prefix):
            capped.setdefault(cell, r["protocol"])
    return [r for r in rows if r["protocol"] == protocol or (
        (r["dataset"], r["algorithm"], int(r["seed"])) not in full
        and capped.get((r["dataset"], r["algorithm"], int(r["seed"]))) == r["protocol"])]

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
    points: dict[Any, Any] = {}
    best: dict[Any, Any] = {}
    seen: defaultdict[Any, set] = defaultdict(set)
    out: defaultdict[Any, dict] = defaultdict(dict)
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
            cv: dict[Any, Any] = {}
            for r in mine:
                if r["kind"] == "cv" and r["params"] in points:
                    cv.setdefault((int(r["run"]), r["params"]), r)
            tests: dict[Any, Any] = {}
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
            notes += _cell_notes(f"{d} {a}", rec, kinds, len(cv), refit_bad, len(tests),
                                 lo, hi)
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


def _cell_notes(cell, rec, kinds, n_cv, refit_bad, n_runs, lo, hi):
    """The warning lines of one (dataset, algorithm) cell of :func:`run_summary`."""
    notes = []
    for k in (DIVERGED, INVALID, FAILED):
        if kinds[k]:
            ex = kinds[k][0]
            notes.append(
                f"warning: {cell}: {len(kinds[k])} of {n_cv} inner-CV tasks {k} at "
                f"{rec[f'{k}_points']} grid points, scored 0 in the selection (e.g. "
                f"{_fmt_params(ex['params'])}: {ex['error'][:120]})")
    if refit_bad:
        notes.append(f"warning: {cell}: {len(refit_bad)} of {n_runs} refits of "
                     f"the selected point failed and score 0 "
                     f"({refit_bad[0]['error'][:120]})")
    for name, (n_lo, n_hi) in rec["edges"].items():
        for n_edge, where, e in ((n_lo, "lower", lo), (n_hi, "upper", hi)):
            if n_edge:
                notes.append(
                    f"warning: {cell}: {name} selected at the {where} grid edge 2^{e} "
                    f"in {n_edge} of {n_runs} runs; the best value may lie outside "
                    "the grid")
    return notes


def _fmt_params(key):
    params = json.loads(key)
    return ", ".join(f"{k}=2^{_exp_of(v)}" for k, v in params.items()) or "no parameters"


def cached_grids(out):
    """The searches cached in ``<out>/rows.csv``: (grid, protocol, seed) -> number of test rows.

    ``grid`` is the name given to the runner (a capped search's ``@k`` dropped).
    """
    found: defaultdict[Any, int] = defaultdict(int)
    for r in load_rows(out):
        if r["kind"] == "test":
            found[(r["grid"].split("@")[0], r["protocol"], int(r["seed"]))] += 1
    return dict(sorted(found.items()))

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
    tests: defaultdict[Any, int] = defaultdict(int)
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
    cpu: defaultdict[Any, float] = defaultdict(float)
    n_cv: defaultdict[Any, int] = defaultdict(int)
    seen: set[Any] = set()
    cpu_oracle: defaultdict[Any, float] = defaultdict(float)
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
