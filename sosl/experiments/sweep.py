"""One-at-a-time sweeps around the selected models of a result record: budget and sensitivity.

A committed record (``data/results/table2_coarse``, ``table3_sparse``) holds, per cell and
run, the grid point the inner CV selected. A sweep refits that point with *one*
hyper-parameter changed, on the same run (same training part, same pass order, same test
fold: :func:`sosl.experiments.protocol.heldout_score`), so the change of the test AUC is the
effect of that parameter alone.

* ``budget`` study (Table 3): OKAUC-M's support-vector budget per class swept over
  :data:`BUDGETS` (100, the paper's, to 2,000, and unbounded), lam and sigma as selected at
  100 + 100; the table puts the paper's value, the oracle ceiling at 100 + 100 and the batch
  references of the record (the RBF SVC and the unbounded OKAUC-M, each with its own
  selection) beside it, and names the first budget at which the paper's cell is reached
  (our mean within the paper's spread below it).
* ``sensitivity`` study: for each learner and each of its searched parameters, the test
  AUC with that parameter at every exponent of the grid, the others as selected.

Rows go to ``<out>/sweep_<study>.csv`` (:data:`SWEEP_FIELDS`), resumable like every cache
of the package; :func:`sweep_tables` writes ``sweep_<study>.md`` from that file alone.
"""

import json
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from .. import datasets as ds
from .algorithms import GRIDS, spec_of
from .cache import CacheError, open_cache, read_cache
from .protocol import heldout_score
from .summary import load_rows

__all__ = ["BUDGETS", "SWEEP_FIELDS", "budget_tasks", "run_sweep", "sensitivity_tasks",
           "sweep_tables"]

#: budgets per class of the Table 3 sweep; None = unbounded (every instance kept)
BUDGETS = (100, 200, 500, 1000, 2000, None)

#: the columns of ``sweep_<study>.csv``
SWEEP_FIELDS = ("study", "dataset", "algorithm", "param", "value", "run", "params", "auc",
                "cpu_seconds", "error")


def _value_key(v):
    return "none" if v is None else repr(float(v)) if not float(v).is_integer() else \
        str(int(v))


def _selected(record, table_rows=None):
    """(dataset, algorithm, run) -> selected params, from a record's test rows."""
    rows = table_rows if table_rows is not None else load_rows(record)
    return {(r["dataset"], r["algorithm"], int(r["run"])): json.loads(r["params"])
            for r in rows if r["kind"] == "test" and r["protocol"] == "4x5/5"}


def budget_tasks(record, datasets, algorithm="OKAUC-M", runs=range(5), budgets=BUDGETS):
    """Tasks ``(study, dataset, algorithm, param, value, run, params)`` of the budget sweep."""
    sel = _selected(record)
    out = []
    for d in datasets:
        for r in runs:
            base = sel.get((d, algorithm, r))
            if base is None:
                continue
            for b in budgets:
                out.append(("budget", d, algorithm, "budget", b, r, base))
    return out


def sensitivity_tasks(record, datasets, algorithms, runs=range(5), grid="coarse"):
    """Tasks of the sensitivity sweep: each searched parameter over ``grid``'s exponents."""
    sel = _selected(record)
    out = []
    for a in algorithms:
        spec = spec_of(a)
        for d in datasets:
            for r in runs:
                base = sel.get((d, a, r))
                if base is None:
                    continue
                for p in spec.searched:
                    for e in GRIDS[grid]:
                        out.append(("sensitivity", d, a, p, 2.0 ** e, r, base))
    return out


def _task(study, dataset, algorithm, param, value, run, base, data_dir=None):
    c0 = time.process_time()
    X, y = ds.load_dataset(dataset, data_dir)
    spec = spec_of(algorithm)
    params = {**base, param: value}
    score, err = heldout_score(spec, params, X, y, dataset, run)
    return {"study": study, "dataset": dataset, "algorithm": algorithm, "param": param,
            "value": _value_key(value), "run": int(run),
            "params": json.dumps(base, sort_keys=True), "auc": f"{score:.6f}",
            "cpu_seconds": f"{time.process_time() - c0:.3f}", "error": err}


def _parse(values, path, line):
    if len(values) != len(SWEEP_FIELDS):
        raise CacheError(path, line, f"{len(values)} fields, expected {len(SWEEP_FIELDS)}; "
                                     "delete the line to have its task computed again")
    row = dict(zip(SWEEP_FIELDS, values))
    try:
        row["run"] = int(row["run"])
        row["auc"] = float(row["auc"])
        row["cpu_seconds"] = float(row["cpu_seconds"])
    except ValueError:
        raise CacheError(path, line, "not a row of a sweep cache; delete the line to have "
                                     "its task computed again") from None
    return row


def sweep_path(out, study):
    """The sweep's cache (and record) file."""
    return Path(out) / f"sweep_{study}.csv"


def run_sweep(tasks, out, study, n_jobs=1, backend="loky", data_dir=None, log=print):
    """Compute the tasks the cache lacks (cheapest datasets first); return the new count."""
    from .backends import executor

    path = sweep_path(out, study)
    path.parent.mkdir(parents=True, exist_ok=True)
    rows, writer = open_cache(path, SWEEP_FIELDS, _parse)
    done = {(r["dataset"], r["algorithm"], r["param"], r["value"], r["run"]) for r in rows}
    todo = [t for t in tasks if (t[1], t[2], t[3], _value_key(t[4]), t[5]) not in done]
    new = 0
    with writer, executor(backend, n_jobs) as ex:
        for row in ex.map_unordered(_task, [(*t, data_dir) for t in todo]):
            writer.write(row)
            new += 1
            if new % 50 == 0:
                log(f"sweep {study}: {new}/{len(todo)}")
    return new


def _num(r, k):
    return float(r[k]) if r.get(k) not in (None, "", "None") else None


def _paper(record_tables):
    """(dataset, algorithm) -> (paper mean, paper std, ceiling, ours, protocol) from a table
    CSV of a record."""
    import csv

    out = {}
    with open(record_tables, newline="") as f:
        for r in csv.DictReader(f):
            out[(r["dataset"], r["algorithm"])] = (
                _num(r, "paper_mean"), _num(r, "paper_std"), _num(r, "oracle_mean"),
                _num(r, "auc_mean"), r.get("protocol", ""))
    return out


def _ref(paper, d, name):
    rec = paper.get((d, name))
    if rec is None or rec[3] is None:
        return "-"
    return f"{rec[3]:.2f}" + ("†" if rec[4] else "")


def sweep_tables(path, table_csv, out_md):
    """Write the markdown of a sweep from its cache and the record's table CSV."""
    rows = read_cache(path, SWEEP_FIELDS, _parse)
    cells = defaultdict(list)
    failed = set()
    for r in rows:
        key = (r["study"], r["dataset"], r["algorithm"], r["param"], r["value"])
        if r["error"].startswith("invalid"):    # a value outside the learner's domain
            continue
        cells[key].append(100.0 * r["auc"])
        if r["error"]:
            failed.add(key)
    paper = _paper(table_csv)
    lines = []
    studies = sorted({r["study"] for r in rows})
    if "budget" in studies:
        lines += _budget_lines(rows, cells, paper)
    if "sensitivity" in studies:
        lines += _sensitivity_lines(rows, cells, failed)
    Path(out_md).write_text("\n".join(lines) + "\n")
    return str(out_md)


def _budget_lines(rows, cells, paper):
    keys = [_value_key(b) for b in BUDGETS]
    sets = list(dict.fromkeys(r["dataset"] for r in rows if r["study"] == "budget"))
    algos = list(dict.fromkeys(r["algorithm"] for r in rows if r["study"] == "budget"))
    n_runs = sorted({r["run"] for r in rows if r["study"] == "budget"})
    head = " | ".join(("unbounded" if k == "none" else k) for k in keys)
    lines = ["# Table 3: the budget sweep", "",
             f"Test AUC (%) of the selected (lam, sigma) of each run at budget 100 + 100 "
             f"(the record's selection), refitted with only the budget per class changed; "
             f"runs {n_runs[0]}..{n_runs[-1]} (the first outer partition), mean over runs. "
             "`paper`: mean ± spread; `ceiling`: the oracle at 100 + 100 (record); "
             "`SVC`, `inf`: the record's RBF SVC and unbounded OKAUC-M, each selected by its "
             "own inner CV (`†`: capped reference, 4,000-row training subsample); `reached "
             "at`: the first budget whose mean is within the paper's spread below it "
             "(ours >= paper - spread); `n/a`: a budget the learner does not take (KOIL has no "
             "unbounded buffer).", ""]
    for a in algos:
        lines += [f"## {a}", "", f"| dataset | paper | ceiling@100 | {head} | SVC | inf | "
                  "reached at |", "|---|---:|---:|" + "---:|" * len(keys) + "---:|---:|---|"]
        for d in sets:
            pm, ps, ceil, _, _ = paper.get((d, a), (None,) * 5)
            means = []
            for k in keys:
                v = cells.get(("budget", d, a, "budget", k))
                means.append(None if not v else float(np.mean(v)))
            reached = "-"
            if pm is not None:
                for k, m in zip(keys, means):
                    if m is not None and m >= pm - ps:
                        reached = "unbounded" if k == "none" else k
                        break
                else:
                    reached = "not reached"

            fmt = [("n/a" if m is None else f"{m:.2f}") for m in means]
            lines.append(f"| {d} | {'-' if pm is None else f'{pm:.2f} ± {ps:.2f}'} | "
                         f"{'-' if ceil is None else f'{ceil:.2f}'} | " + " | ".join(fmt)
                         + f" | {_ref(paper, d, 'SVC')} | {_ref(paper, d, 'OKAUC-M_inf')} | "
                         f"{reached} |")
        lines.append("")
    return lines


def _sensitivity_lines(rows, cells, failed=()):
    lines = ["# Sensitivity: test AUC against each searched hyper-parameter", "",
             "Each row: one learner, dataset and parameter; the parameter set to 2^e for every "
             "exponent of the coarse grid, the other parameters as the inner CV selected them "
             "on each run (the record); mean test AUC (%) over the runs. `sel`: the exponents "
             "the inner CV selected on those runs (their median). `x`: at least one run "
             "diverged or failed and scored 0, as it would in the inner CV.", ""]
    sens = [r for r in rows if r["study"] == "sensitivity"]
    exps = GRIDS["coarse"]
    lines += ["| learner | dataset | param | sel | " + " | ".join(f"2^{e}" for e in exps)
              + " | max - min |", "|---|---|---|---:|" + "---:|" * len(exps) + "---:|"]
    combos = list(dict.fromkeys((r["algorithm"], r["dataset"], r["param"]) for r in sens))
    for a, d, p in combos:
        means, marks = [], []
        for e in exps:
            key = ("sensitivity", d, a, p, _value_key(2.0 ** e))
            v = cells.get(key)
            means.append(None if not v else float(np.mean(v)))
            marks.append("x" if key in failed else "")
        chosen = [np.log2(json.loads(r["params"])[p]) for r in sens
                  if (r["algorithm"], r["dataset"], r["param"]) == (a, d, p)
                  and p in json.loads(r["params"])]
        sel = "-" if not chosen else f"{np.median(chosen):g}"
        vals = [m for m in means if m is not None]
        spread = "-" if not vals else f"{max(vals) - min(vals):.2f}"
        lines.append(f"| {a} | {d} | {p} | {sel} | "
                     + " | ".join("-" if m is None else f"{m:.2f}{x}"
                                  for m, x in zip(means, marks))
                     + f" | {spread} |")
    return lines + [""]


#: the records the sweeps start from, and their table CSVs
RECORDS = {"budget": ("data/results/table3_sparse", "table3_sparse.csv"),
           "sensitivity": ("data/results/table2_coarse", "table2_coarse.csv")}


def main(argv=None):
    """``python -m sosl.experiments.sweep {budget,sensitivity} [--report-only] ...``."""
    import argparse
    import sys

    p = argparse.ArgumentParser(prog="python -m sosl.experiments.sweep",
                                description=__doc__.splitlines()[0])
    p.add_argument("study", choices=sorted(RECORDS))
    p.add_argument("--record", default=None,
                   help="result record holding the selected points (default: the committed "
                        "one of the study's table)")
    p.add_argument("--datasets", nargs="+", default=None)
    p.add_argument("--algorithms", nargs="+", default=None)
    p.add_argument("--runs", type=int, default=5, help="runs 0..N-1 (default 5: the first "
                                                       "outer partition)")
    p.add_argument("--out", default="results")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--data-dir", default=None)
    p.add_argument("--report-only", action="store_true")
    args = p.parse_args(argv)
    name, table = RECORDS[args.study]
    record = Path(args.record or name)
    md = Path(args.out) / f"sweep_{args.study}.md"
    if not args.report_only:
        if args.study == "budget":
            tasks = []
            for a in args.algorithms or ["OKAUC-M"]:
                tasks += budget_tasks(record, args.datasets or [], a, range(args.runs))
        else:
            tasks = sensitivity_tasks(record, args.datasets or [], args.algorithms or [],
                                      range(args.runs))
        if not tasks:
            print(f"{p.prog}: error: no selected points in {record} for the datasets and "
                  "algorithms given", file=sys.stderr)
            return 2
        n = run_sweep(tasks, args.out, args.study, args.jobs, data_dir=args.data_dir)
        print(f"{n} new rows")
    path = sweep_path(args.out, args.study)
    if not path.exists():
        print(f"{p.prog}: error: no {path}", file=sys.stderr)
        return 2
    print(Path(sweep_tables(path, record / table, md)).read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
