"""Critical-difference diagram (Demsar 2006) of the many-datasets suite.

An axis of average ranks (1, the best, on the left), each learner hung from its average
rank by a line to its name (the better half on the left, the rest on the right), the
Nemenyi critical difference drawn as a bar above the axis, and thick bars joining the
learners whose average ranks differ by less than the CD (no difference detected).

Every number comes from :mod:`sosl.experiments.stats` through
:func:`sosl.experiments.suite_report.summarize`; the runner's ``--suite keel --report-only``
calls :func:`draw`. Run alone it reads a record::

    python -m plots.cd_diagram --record data/results/suite_keel/suite_keel.csv --out figures

The SVG is written with a fixed hash salt and no date, so the same record gives the same
file (the test of the committed record compares it).
"""

import sys
from pathlib import Path

from sosl.experiments import stats

from ._common import CLASS_NAMES, parser, plt, style

__all__ = ["draw", "main"]


def draw(learners, ranks, cd, n_datasets, out, stem):
    """Draw the diagram; write ``<out>/<stem>.svg`` and ``.png``; return both paths."""
    k = len(learners)
    order = sorted(range(k), key=lambda j: (ranks[j], learners[j]))
    names = [CLASS_NAMES.get(learners[j], learners[j]) for j in order]
    r = [float(ranks[j]) for j in order]
    left = (k + 1) // 2
    groups = stats.nemenyi_groups(r, cd)
    bar_step, step = 0.09, 0.28
    top = -0.2 - bar_step * len(groups)          # the first name line, below the bars
    height = 1.2 - top + step * max(left, k - left)
    fig, ax = plt.subplots(figsize=(7.5, height))
    lo, hi = 1, k
    ax.set_xlim(lo - 0.6, hi + 0.6)
    ax.set_ylim(-height + 0.2, 1.05)
    ax.axis("off")
    ax.plot([lo, hi], [0, 0], color="k", lw=1, marker="none")
    for t in range(lo, hi + 1):
        ax.plot([t, t], [0, 0.06], color="k", lw=1, marker="none")
        ax.text(t, 0.1, str(t), ha="center", va="bottom", fontsize=8)
    ax.plot([lo, lo + cd], [0.55, 0.55], color="k", lw=1.5, marker="none")
    for x in (lo, lo + cd):
        ax.plot([x, x], [0.5, 0.6], color="k", lw=1, marker="none")
    ax.text(lo + cd / 2, 0.63, f"CD = {cd:.2f} (Nemenyi, alpha 0.05, N = {n_datasets})",
            ha="center", va="bottom", fontsize=8)
    for pos, (name, rank) in enumerate(zip(names, r)):
        c = style(name)["color"] if _has_style(name) else "k"
        if pos < left:
            y, x_text, ha = top - step * pos, lo - 0.5, "right"
        else:
            y, x_text, ha = top - step * (k - 1 - pos), hi + 0.5, "left"
        ax.plot([rank, rank, x_text], [0, y, y], color=c, lw=1, marker="none")
        ax.text(x_text + (-0.05 if ha == "right" else 0.05), y, f"{name} ({rank:.2f})",
                ha=ha, va="center", fontsize=8, color=c)
    for g_pos, g in enumerate(groups):
        y = -0.12 - bar_step * g_pos
        ax.plot([r[g[0]] - 0.03, r[g[-1]] + 0.03], [y, y], color="k", lw=2.5,
                solid_capstyle="round", zorder=3, marker="none")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / f"{stem}.svg", out / f"{stem}.png"]
    with plt.rc_context({"svg.hashsalt": "sosl-cd", "svg.fonttype": "none"}):
        fig.savefig(paths[0], bbox_inches="tight", metadata={"Date": None})
    fig.savefig(paths[1], dpi=120, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    return [str(p) for p in paths]


def _has_style(name):
    try:
        style(name)
    except KeyError:
        return False
    return True


def main(argv=None):
    from sosl.experiments.suite import read_suite
    from sosl.experiments.suite_report import summarize

    p = parser(__doc__.splitlines()[0])
    p.add_argument("--record", required=True, help="a suite_<name>.csv record")
    args = p.parse_args(argv)
    summ = summarize(read_suite(args.record))
    n, k = summ["auc"].shape
    if n < 2:
        p.exit(2, f"{args.record}: fewer than 2 complete datasets\n")
    ranks = stats.average_ranks(summ["auc"])
    cd = stats.nemenyi(n, k)
    for name, r in sorted(zip(summ["learners"], ranks), key=lambda t: t[1]):
        print(f"{name:16s} average rank {r:.3f}")
    print(f"Nemenyi CD (alpha 0.05, N = {n}, k = {k}) = {cd:.3f}")
    return draw(summ["learners"], ranks, cd, n, args.out, Path(args.record).stem + "_cd")


if __name__ == "__main__":
    main()
    sys.exit(0)
