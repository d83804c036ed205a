"""Per-dataset test AUC of every algorithm: reproduced (mean +- std) beside the paper's.

Reads the ``table2_<grid>.csv`` / ``table3_<grid>.csv`` that ``python -m sosl.experiments``
writes (:func:`sosl.experiments.report`) in the runner's default result directory
(``results``) unless ``--results`` names another; without ``--grid`` it takes the grid whose
tables are there (the most recently written if there are several). Filled markers with
error bars are ours, hollow markers (larger, same shape) the published values; each
learner has its fixed colour and marker (:data:`plots._common.STYLES`). ``--quick`` first
runs a tiny protocol (1 x 2 folds, quick grid, OAUC-M and OAUC-S) on fourclass if
``$SOSL_DATA_DIR`` has it, else on breast cancer (which has no published value).
"""

import csv
import sys
from pathlib import Path

from sosl import datasets as ds
from sosl.experiments import GRIDS, run_experiment
from sosl.experiments.runner import DEFAULT_OUT

from ._common import LEGEND_FONTSIZE, parser, plt, save, style


def _read(results, grid):
    recs = []
    for t in (2, 3):
        f = Path(results) / f"table{t}_{grid}.csv"
        if f.exists():
            with open(f, newline="") as fh:
                recs += list(csv.DictReader(fh))
    return recs


def _grids_with_tables(results):
    """Grids with a table2/3 CSV in ``results``, the most recently written first."""
    found = {}
    for f in Path(results).glob("table[23]_*.csv"):
        grid = f.stem.split("_", 1)[1]
        if grid in GRIDS:
            found[grid] = max(found.get(grid, 0.0), f.stat().st_mtime)
    return sorted(found, key=found.get, reverse=True)


def main(argv=None):
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--results", default=DEFAULT_OUT,
                   help=f"directory of a runner output (default: {DEFAULT_OUT}, the runner's)")
    p.add_argument("--grid", default=None, choices=sorted(GRIDS),
                   help="grid of the tables to plot (default: the one found in --results, "
                        "the newest if several)")
    args = p.parse_args(argv)
    if args.quick:
        name = "fourclass" if "fourclass" in ds.available_datasets() else "default"
        args.results, args.grid = str(Path(args.out) / "_quick_run"), "quick"
        run_experiment([name], ["OAUC-M", "OAUC-S"], grid="quick", out=args.results,
                       seed=args.seed, n_repeats=1, n_folds=2, inner_folds=2, progress=False,
                       log=lambda *_: None)
    if args.grid is None:
        grids = _grids_with_tables(args.results)
        if not grids:
            p.exit(2, f"{p.prog}: error: no table2_<grid>.csv / table3_<grid>.csv in "
                      f"{args.results}; run python -m sosl.experiments first\n")
        args.grid = grids[0]
    recs = _read(args.results, args.grid)
    if not recs:
        others = ", ".join(_grids_with_tables(args.results)) or "none"
        p.exit(2, f"{p.prog}: error: no table2_{args.grid}.csv / table3_{args.grid}.csv in "
                  f"{args.results} (grids with tables there: {others}); run "
                  "python -m sosl.experiments first\n")
    dsets = list(dict.fromkeys(r["dataset"] for r in recs))
    algos = list(dict.fromkeys(r["algorithm"] for r in recs))
    width = 0.8 / len(algos)
    fig, ax = plt.subplots(figsize=(max(7, 1.1 * len(dsets) + 2), 4.8))
    for j, a in enumerate(algos):
        xs, ys, es, px, py = [], [], [], [], []
        for i, d in enumerate(dsets):
            for r in recs:
                if r["dataset"] == d and r["algorithm"] == a:
                    x = i - 0.4 + (j + 0.5) * width
                    xs.append(x)
                    ys.append(float(r["auc_mean"]))
                    es.append(float(r["auc_std"]))
                    if r["paper_mean"] not in ("", "None"):
                        px.append(x)
                        py.append(float(r["paper_mean"]))
        st = style(a)
        ax.errorbar(xs, ys, yerr=es, fmt=st["marker"], color=st["color"], ms=5, capsize=2,
                    label=f"{a} (ours)")
        ax.plot(px, py, st["marker"], mfc="none", mec=st["color"], ms=9)
    ax.plot([], [], "o", mfc="none", mec="k", label="paper (hollow, same marker)")
    ax.set_xticks(range(len(dsets)), dsets, rotation=30, ha="right")
    ax.set_xlim(-0.6, len(dsets) - 0.4)
    ax.set(ylabel="test AUC (%)", title=f"Reproduced vs published AUC ({args.grid} grid)")
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=LEGEND_FONTSIZE, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.22))
    paths = save(fig, args.out, f"auc_comparison_{args.grid}")
    print("\n".join(paths))
    return paths


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
