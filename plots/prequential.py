"""Prequential AUC over an imbalanced stream whose concept changes at its midpoint.

The stream is :func:`sosl.datasets.make_drifting_stream` (``--drift abrupt`` or ``gradual``; the
direction separating the classes turns by 90 degrees at the midpoint, class proportions
unchanged). Each learner is run test-then-train by :func:`sosl.evaluate.prequential`: OAUC-M,
OAUC-M with forgetting (exponentially weighted class moments, ``forgetting=0.99``), OAUC-S and
the Perceptron. The figure draws the rolling AUC of the last ``--window`` predictions
(:class:`sosl.metrics.RollingAUC`, the prequential AUC) and, dashed, the AUC of all predictions
so far (:class:`sosl.metrics.StreamingAUC`), each learner in its fixed style
(:data:`plots._common.STYLES`) with markers at staggered sparse points, so that curves on top of
each other stay distinguishable (the first learners drawn on top); a learner whose rolling curve
stays within 0.005 of an earlier one's says so in the legend. ``--quick`` uses a short stream
and window.
"""

import sys

import numpy as np

from sosl import OAUCM, OAUCS, Perceptron
from sosl.datasets import make_drifting_stream
from sosl.evaluate import prequential
from sosl.metrics import RollingAUC, StreamingAUC

from ._common import LEGEND_FONTSIZE, parser, plot_kw, plt, save, style

LEARNERS = {
    "OAUC-M": lambda: OAUCM(lam=0.01),
    "OAUC-M forgetting 0.99": lambda: OAUCM(lam=0.01, forgetting=0.99),
    "OAUC-S": lambda: OAUCS(lam=0.01),
    "Perceptron": lambda: Perceptron(),
}


def main(argv=None):
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=None, help="stream length (default 20000; quick 800)")
    p.add_argument("--features", type=int, default=10, help="number of features")
    p.add_argument("--ir", type=float, default=10.0, help="imbalance ratio (negatives/positive)")
    p.add_argument("--window", type=int, default=None,
                   help="rolling AUC window (default 1000; quick 150)")
    p.add_argument("--drift", choices=("abrupt", "gradual"), default="abrupt",
                   help="kind of concept change at the midpoint")
    args = p.parse_args(argv)
    n = args.n if args.n is not None else (800 if args.quick else 20000)
    window = args.window if args.window is not None else (150 if args.quick else 1000)
    if n < 20 or window < 1 or args.features < 2 or not args.ir >= 1:
        p.error("need --n >= 20, --window >= 1, --features >= 2 and --ir >= 1")
    X, y, _ = make_drifting_stream(n, args.features, drift=args.drift, imbalance=args.ir,
                                   class_sep=2.0, random_state=args.seed)
    change = n // 2
    every = max(1, n // 300)

    fig, ax = plt.subplots(figsize=(8.5, 5.0))
    print(f"stream n={n} p={args.features} IR={args.ir:g} {args.drift} change at {change} "
          f"window={window} seed={args.seed}")
    drawn, lows = {}, []
    for k, (name, make) in enumerate(LEARNERS.items()):
        res = prequential(make(), X, y, every=every,
                          metrics={"rolling": RollingAUC(window), "all": StreamingAUC()})
        rolling = np.asarray(res["rolling"], dtype=float)
        label = f"{name} rolling ({window})"
        for other, curve in drawn.items():
            gap = np.nanmax(np.abs(rolling - curve))
            if gap < 0.005:
                label += f"\n  (within {gap:.1g} of {other}: markers offset)"
                break
        drawn[name] = rolling
        ax.plot(res.steps, rolling, **plot_kw(name, len(res.steps), 3 * k, n_markers=12,
                                              ls="-", label=label, zorder=3 + len(LEARNERS) - k))
        ax.plot(res.steps, res["all"], color=style(name)["color"], lw=0.9, ls="--", alpha=0.8)
        lows.append(np.nanmin(np.concatenate([rolling, res["all"]])))
        before = res["rolling"][np.searchsorted(res.steps, change) - 1]
        print(f"{name:24s} rolling AUC before change {before:.4f}  at end {res['rolling'][-1]:.4f}"
              f"  AUC of all predictions {res['all'][-1]:.4f}  "
              f"({n / res.cpu_seconds:,.0f} rows/s CPU)")
    ax.plot([], [], color="0.3", lw=0.9, ls="--", label="dashed: AUC of all predictions so far")
    lo = max(0.0, np.floor(20 * min(lows)) / 20 - 0.05) if np.isfinite(min(lows)) else 0.3
    ax.axvline(change, color="0.4", lw=0.8, ls=":")
    ax.text(change, 1.0, f" {args.drift} concept change", color="0.3", fontsize=9, va="top")
    ax.set(xlabel="rows seen (test-then-train)", ylabel="AUC", ylim=(lo, 1.01),
           title=f"Prequential AUC, IR {args.ir:g}, p = {args.features} (seed {args.seed})")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=LEGEND_FONTSIZE, loc="lower left")
    paths = save(fig, args.out, "prequential")
    print("\n".join(paths))
    return paths


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
