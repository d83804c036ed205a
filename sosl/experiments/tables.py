"""Writing the tables: Tables 2 and 3 beside the paper's values, the result record.

:func:`report` turns the test rows of a run (and its oracle ceilings) into the markdown
and CSV tables with their marks, legend, ceilings, reachability summary and spreads;
:func:`report_from_cache` rewrites them from a cache or a result record without
computing; :func:`export_record` writes the compact record committed under
``data/results/``. The rows come from :mod:`sosl.experiments.runner`, their reduction
from :mod:`sosl.experiments.summary`.
"""
import csv
import os
from collections import defaultdict
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from .. import datasets as ds
from .algorithms import REFERENCES, default_references, grid_label
from .cache import CACHE_NAME, FIELDS
from .protocol import parse_protocol
from .summary import (
    _registry,
    _unique,
    cost_table,
    load_rows,
    oracle_ceilings,
    pick_protocol,
    run_summary,
    split_run_name,
)

__all__ = ["CAPPED_MARK", "PAPER_RUNS", "STD_KINDS", "export_record", "paper_table", "report",
           "report_from_cache"]


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


#: the label of a capped reference's cells in every table (see ``_capped_label``)
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
        "se_paper = the paper's spread itself: its figure has the size of a standard "
        "error, not of a std over its runs (see the ratios below the table), so it is not "
        f"divided again; the CSV's `flagged_std_reading` is the mark were it a std over its "
        f"{PAPER_RUNS} runs (se_paper = std / sqrt({PAPER_RUNS})), which flags more cells;",
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
    # dataset -> (mean, std) of the paper's best cell among those reported here
    best_paper: dict[Any, Any] = {}
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
                + (f" (of the {len(mine)}, {len(subs)} `{CAPPED_MARK}`: "
                   f"{_capped_label(subs[0])})" if subs else ""))
        with_or = [r for r in mine if r["oracle_mean"] is not None]
        if with_or:
            above = [r["dataset"] for r in with_or if round(
                best_paper[r["dataset"]][0] - r["oracle_mean"], 2) > best_paper[r["dataset"]][1]]
            text += (f"; that cell exceeds even {name}'s own ceiling by more than its std on "
                     f"{len(above)} of {len(with_or)}" + (f" ({', '.join(above)})" if above
                                                          else ""))
        lines.append(text + ".")
    return lines


def _cell_record(table, d, a, v, paper, parts, ceiling, runs, protocol):
    """The CSV record of one cell of :func:`report`: our runs' AUCs ``v`` (%), the paper's
    value, the spread three ways, the flags and the oracle ceiling."""
    mean, std = float(np.mean(v)), float(np.std(v, ddof=1)) if len(v) > 1 else 0.0
    key = (split_run_name(d)[0], a)
    pm: Any
    ps: Any                              # None where the paper has no cell
    pm, ps = (paper[key][1:] if key in paper else (None, None))
    diff = None if pm is None else mean - pm
    pm_means = [np.mean(x) for x in parts.values()]
    std_parts = float(np.std(pm_means, ddof=1)) if len(pm_means) > 1 else float("nan")
    sem = std / np.sqrt(len(v))
    ceil = _cell_ceiling(ceiling, runs)
    return {"table": table, "dataset": d, "algorithm": a, "n_runs": len(v),
            "protocol": protocol,
            "auc_mean": round(mean, 2), "auc_std": round(std, 2),
            "std_of_partition_means": round(std_parts, 2),
            "auc_sem": round(sem, 2),
            "paper_mean": pm, "paper_std": ps,
            "diff": None if diff is None else round(diff, 2),
            # two standard errors of the difference of the two means,
            # the paper's spread read as its standard error
            "flagged": bool(diff is not None and abs(diff) > 2.0 * np.hypot(sem, ps)),
            # the same, were the paper's spread a std over its runs
            "flagged_std_reading": bool(
                diff is not None
                and abs(diff) > 2.0 * np.hypot(sem, ps / np.sqrt(PAPER_RUNS))),
            # the paper far below ours: beyond its std plus our s.e.
            "paper_far_below": bool(diff is not None and diff > ps + sem),
            "ratio_std_runs": _ratio(std, ps),
            "ratio_std_means": _ratio(std_parts, ps),
            "ratio_sem": _ratio(sem, ps),
            "oracle_mean": None if ceil is None else round(ceil, 2),
            "paper_minus_oracle": (None if ceil is None or pm is None
                                   else round(pm - ceil, 2)),
            # on the printed (rounded) gap, so the mark matches the table
            "above_ceiling": bool(ceil is not None and pm is not None
                                  and round(pm - ceil, 2) > ps)}


def _cell_lines(algos, dsets, cell):
    """The rows of a table of :func:`report`: one per dataset, a cell per algorithm."""
    lines = []
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
    return lines


def _spread_lines(recs, fmt):
    """The spread table's rows of :func:`report` and the median ratios under it."""
    lines = []
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
    return lines


def report(test_rows, out, suffix="", ceilings=None, grid=None):
    """Write Tables 2 and 3 (markdown and CSV) beside the paper's numbers.

    Each cell is ``ours ± std`` over the runs, the paper's ``mean ± std`` and the
    difference ours - paper (AUC points, %); the difference is flagged with ``!`` where
    its magnitude exceeds two standard errors of the difference of the means (the paper's
    spread taken as its standard error; the reading as a std of the paper's twenty
    repetitions is the CSV's ``flagged_std_reading``, and both counts are printed under the
    table). Below each table, the
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
    # per outer partition (repeat)
    parts: defaultdict[Any, Any] = defaultdict(lambda: defaultdict(list))
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
                recs.append(_cell_record(table, d, a, v, paper, parts[(d, a)],
                                         ceilings.get((d, a)), runs_of[(d, a)],
                                         capped_of.get((d, a), "")))
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
        lines += _cell_lines(algos, dsets, cell)
        refs = [a for a in algos if a in REFERENCES]
        with_paper = [r for r in recs if r["paper_mean"] is not None]
        if with_paper:
            lines += ["", f"`!` on {sum(r['flagged'] for r in with_paper)} of "
                      f"{len(with_paper)} cells with a paper value (the paper's spread read as "
                      f"a standard error); "
                      f"{sum(r['flagged_std_reading'] for r in with_paper)} were it a std "
                      f"over its {PAPER_RUNS} runs."]
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

        lines += _spread_lines(recs, fmt)
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
