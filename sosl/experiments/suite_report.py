"""Tables and statistics of the many-datasets suite, written from its record alone.

:func:`summarize` reduces the rows of ``suite_<name>.csv`` (:mod:`sosl.experiments.suite`)
to one score per (dataset, learner): the mean over the 25 test folds (5 seeds x 5 folds).
Only the datasets on which every learner has all its seeds enter the comparison (a run
stopped early leaves whole datasets, so this drops at most the one being computed).
:func:`write_suite_report` writes, next to the record:

* ``suite_<name>.md`` -- the Friedman / Iman-Davenport tests on AUC and on pAUC, the
  average ranks with the Nemenyi critical difference and its groups, and OAUC-M (the
  paper's learner, the control) against every other learner: Holm-adjusted z tests of
  rank differences, Wilcoxon signed-rank tests with the rank-biserial effect size, and a
  bootstrap interval of the mean AUC difference;
* ``suite_<name>_pairs.csv`` -- the same for every pair of learners (Holm over all pairs);
* ``suite_<name>_datasets.csv`` -- the mean AUC and pAUC of every learner on every dataset;
* ``suite_<name>_cd.svg`` / ``.png`` -- the critical-difference diagram (``plots/cd_diagram.py``,
  when the ``plots`` package of a checkout is importable).

Everything is a function of the record, so ``--report-only`` rewrites the same files.
"""

import csv
import io
from pathlib import Path
from typing import Any

import numpy as np

from . import stats
from .algorithms import control_class_name
from .suite import SEEDS, public_learners, read_suite

__all__ = ["CONTROL", "summarize", "write_suite_report"]

#: the learner the others are compared with (the paper's proposal: the spec of the
#: algorithm table marked ``control``)
CONTROL = control_class_name()

#: bootstrap resamples of the mean-difference intervals (seeded: the report is exact)
N_BOOT = 10_000


def _order(names):
    known = public_learners()
    return sorted(names, key=lambda n: (known.index(n) if n in known else len(known), n))


def summarize(rows, seeds=SEEDS):
    """Per-dataset mean scores of the complete datasets.

    Returns
    -------
    dict
        ``learners`` (list), ``datasets`` (list, sorted), ``auc`` and ``pauc`` (arrays
        of shape (datasets, learners)), ``meta`` (dataset -> (n, p, n_pos)), ``partial``
        (datasets with some rows missing), ``errors`` (rows with a failed fold).
    """
    learners = _order({r["algorithm"] for r in rows})
    by: dict[Any, Any] = {}
    meta = {}
    for r in rows:
        by.setdefault(r["dataset"], {}).setdefault(r["algorithm"], {})[r["seed"]] = r
        meta[r["dataset"]] = (r["n"], r["p"], r["n_pos"])
    want = set(int(s) for s in seeds)
    complete = sorted(d for d, per in by.items()
                      if all(want <= set(per.get(a, {})) for a in learners))
    partial = sorted(set(by) - set(complete))
    auc = np.empty((len(complete), len(learners)))
    pauc = np.empty_like(auc)
    for i, d in enumerate(complete):
        for j, a in enumerate(learners):
            runs = [by[d][a][s] for s in sorted(want)]
            auc[i, j] = np.mean([v for r in runs for v in r["auc_folds"]])
            pauc[i, j] = np.mean([v for r in runs for v in r["pauc_folds"]])
    errors = sum(1 for r in rows if r["error"])
    return {"learners": learners, "datasets": complete, "auc": auc, "pauc": pauc,
            "meta": meta, "partial": partial, "errors": errors}


def _friedman_lines(name, res, cd):
    return [f"- {name}: Friedman chi2_F = {res.chi2:.2f} (k - 1 = {res.n_learners - 1} dof, "
            f"p = {res.chi2_p:.3g}); Iman-Davenport F_F = {res.f:.2f} "
            f"(F({res.n_learners - 1}, {(res.n_learners - 1) * (res.n_datasets - 1)}), "
            f"p = {res.f_p:.3g}); Nemenyi CD (alpha 0.05) = {cd:.3f}"]


def _groups_text(learners, ranks, cd):
    groups = stats.nemenyi_groups(ranks, cd)
    if not groups:
        return "no two learners within the CD of each other"
    return "; ".join("{" + ", ".join(learners[i] for i in g) + "}" for g in groups)


def _pairs(s, learners, control=None):
    """Rank z tests (Holm), Wilcoxon and bootstrap for the family of comparisons."""
    idx = {a: j for j, a in enumerate(learners)}
    tests = stats.rank_tests(s, control=None if control is None else idx[control])
    out = []
    for t in tests:
        i, j = t["i"], t["j"]
        w = stats.wilcoxon(s[:, i], s[:, j])
        mean, lo, hi = stats.bootstrap_mean_diff(s[:, i], s[:, j], n_boot=N_BOOT, seed=0)
        out.append({"a": learners[i], "b": learners[j], "z": t["z"], "p": t["p"],
                    "p_holm": t["p_holm"], "wins": int(np.sum(s[:, i] > s[:, j])),
                    "losses": int(np.sum(s[:, i] < s[:, j])), "r_plus": w.r_plus,
                    "r_minus": w.r_minus, "wilcoxon_p": w.p, "rank_biserial": w.rank_biserial,
                    "mean_diff": mean, "ci_low": lo, "ci_high": hi})
    return out


def _csv_text(header, rows):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue()


def _fmt(v, nd=4):
    return f"{v:.{nd}f}"


def write_suite_report(path, out=None, suite="keel", figure=True):
    """Write the suite's tables (and CD diagram) from its record; return the paths written."""
    path = Path(path)
    out = Path(out) if out is not None else path.parent
    rows = read_suite(path)
    summ = summarize(rows)
    learners, datasets = summ["learners"], summ["datasets"]
    if len(datasets) < 2 or len(learners) < 2:
        return []
    auc, pauc = summ["auc"], summ["pauc"]
    n, k = auc.shape
    fa, fp = stats.friedman(auc), stats.friedman(pauc)
    cd = stats.nemenyi(n, k)
    stem = f"suite_{suite}"
    lines = [f"# The {suite} suite: {k} learners with their defaults on {n} datasets", "",
             f"Record: `{path.name}` ({len(rows)} rows: dataset x learner x seed, 5 folds "
             f"each). Datasets complete for every learner and seeds {list(SEEDS)}: {n}"
             + (f"; incomplete, left out: {len(summ['partial'])} "
                f"({', '.join(summ['partial'])})" if summ["partial"] else "")
             + f". Rows with a failed fold (scored 0.5): {summ['errors']}.", "",
             "Scores: mean test AUC / pAUC (FPR <= 0.1, McClish-standardized) over 5 seeds x "
             "5 stratified folds, one pass with the constructor's defaults, features scaled "
             "to [-1, 1]. Ranks: 1 = best on a dataset, ties averaged.", "",
             "## Friedman tests", ""]
    lines += _friedman_lines("AUC", fa, cd) + _friedman_lines("pAUC", fp, stats.nemenyi(n, k))
    if CONTROL in learners:
        j = learners.index(CONTROL)
        same = np.isclose(fa.ranks, fa.ranks[j], rtol=0, atol=1e-9)
        place = 1 + int(np.sum((fa.ranks < fa.ranks[j]) & ~same))
        ties = int(np.sum(same)) - 1
        best = learners[int(np.argmin(fa.ranks))]
        lines += ["", f"{CONTROL} ranks {place} of {k} on AUC (average rank {fa.ranks[j]:.3f}"
                  + (f", tied with {ties} other" if ties else "") + f"); the best average "
                  f"rank is {best}'s ({fa.ranks.min():.3f})."]
    lines += ["", f"Nemenyi groups on AUC (average ranks within CD {cd:.3f} of each other): "
              + _groups_text(learners, fa.ranks, cd) + ".", "",
              "## Average ranks", "",
              "| rank | learner | avg rank AUC | mean AUC | median AUC | avg rank pAUC | "
              "mean pAUC |", "|---:|---|---:|---:|---:|---:|---:|"]
    for pos, j in enumerate(np.argsort(fa.ranks, kind="stable"), 1):
        lines.append(f"| {pos} | {learners[j]} | {fa.ranks[j]:.3f} | {_fmt(auc[:, j].mean())} | "
                     f"{_fmt(np.median(auc[:, j]))} | {fp.ranks[j]:.3f} | "
                     f"{_fmt(pauc[:, j].mean())} |")
    paths = []
    if CONTROL in learners:
        ctrl = _pairs(auc, learners, CONTROL)
        lines += ["", f"## {CONTROL} against each learner (AUC)", "",
                  f"z = (rank of the other - rank of {CONTROL}) / SE, two-sided, Holm over the "
                  f"{k - 1} comparisons (negative: the other ranks better); Wilcoxon signed-rank "
                  f"over datasets ({CONTROL} - "
                  "other; r_rb = (R+ - R-) / (R+ + R-)); 95% percentile bootstrap interval "
                  f"of the mean AUC difference ({N_BOOT} resamples of the datasets, seed 0).",
                  "", "| other | z | p (Holm) | wins/losses | Wilcoxon p | r_rb | "
                  "mean diff [95% CI] |", "|---|---:|---:|---:|---:|---:|---:|"]
        for c in ctrl:
            lines.append(f"| {c['b']} | {-c['z']:.2f} | {c['p_holm']:.3g} | {c['wins']}/"
                         f"{c['losses']} | {c['wilcoxon_p']:.3g} | {c['rank_biserial']:+.3f} | "
                         f"{c['mean_diff']:+.4f} [{c['ci_low']:+.4f}, {c['ci_high']:+.4f}] |")
    md = out / f"{stem}.md"
    md.write_text("\n".join(lines) + "\n")
    paths.append(str(md))
    pairs = _pairs(auc, learners)
    head = list(pairs[0])
    pcsv = out / f"{stem}_pairs.csv"
    pcsv.write_text(_csv_text(head, [[(f"{p[h]:.6g}" if isinstance(p[h], float) else p[h])
                                      for h in head] for p in pairs]))
    paths.append(str(pcsv))
    dcsv = out / f"{stem}_datasets.csv"
    drows = []
    for i, d in enumerate(datasets):
        nn, p, npos = summ["meta"][d]
        drows.append([d, nn, p, npos, f"{(nn - npos) / npos:.2f}"]
                     + [f"{v:.6f}" for v in auc[i]] + [f"{v:.6f}" for v in pauc[i]])
    dcsv.write_text(_csv_text(["dataset", "n", "p", "n_pos", "imbalance_ratio"]
                              + [f"auc_{a}" for a in learners]
                              + [f"pauc_{a}" for a in learners], drows))
    paths.append(str(dcsv))
    if figure:
        paths += _figure(out, stem, learners, fa.ranks, cd, n)
    return paths


def _figure(out, stem, learners, ranks, cd, n):
    try:
        from plots.cd_diagram import draw
    except ImportError:       # an installed sosl without the checkout's plots/
        return []
    return draw(learners, ranks, cd, n, out, stem + "_cd")

