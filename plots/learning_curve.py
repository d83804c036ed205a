"""Test AUC vs instances seen (the online learning curve) for every algorithm on a dataset.

The stream is the training part of the protocol's first run (a stratified 4/5 of the data,
in the protocol's seeded order) and the curve is the AUC on the held-out fifth after each
log-spaced prefix (:func:`sosl.experiments.curves.learning_curve`), drawn on a linear axis
from the end of a burn-in (``--burn-in``, by default the first tenth of the stream, whose
points are not drawn: there the curves only show which learner needs both classes first).
Linear learners (Table 2) and kernel learners (Table 3) are drawn in two panels, each
learner in its fixed style (:data:`plots._common.STYLES`). Hyper-parameters are
chosen as in the protocol by inner 5-fold CV (:func:`sosl.experiments.cv_score`) on the
coarse grid (linear) or the quick grid (kernel); ``--quick`` runs four algorithms
(Perceptron, OAUC-M, OAUC-S, OKAUC-M) on the quick grid with 3 inner folds and fewer curve
points.
"""

import sys

import numpy as np

from sosl.experiments import cv_score, get_data, grid_points, resolve_algorithms
from sosl.experiments.curves import learning_curve
from sosl.experiments.protocol import run_seed, train_part

from ._common import LEGEND_FONTSIZE, parser, plot_kw, plt, save


def main(argv=None):
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--dataset", default="default",
                   help="'default' (breast cancer), 'synthetic' or a registry name "
                        "($SOSL_DATA_DIR)")
    p.add_argument("--algorithms", nargs="+", default=None)
    p.add_argument("--burn-in", type=int, default=None,
                   help="rows at the start of the stream not drawn (default: a tenth)")
    args = p.parse_args(argv)
    X, y = get_data(args.dataset)
    names = args.algorithms
    if names is None and args.quick:
        names = ["Perceptron", "OAUC-M", "OAUC-S", "OKAUC-M"]
    specs = resolve_algorithms(names)
    panels = [("linear learners (Table 2)", [s for s in specs if not s.kernel]),
              ("kernel learners (Table 3)", [s for s in specs if s.kernel])]
    panels = [pn for pn in panels if pn[1]]
    fig, axes = plt.subplots(1, len(panels), figsize=(6.4 * len(panels), 4.8), sharey=True,
                             squeeze=False)
    lows, burn = [], None
    for ax, (title, group) in zip(axes[0], panels):
        for k, spec in enumerate(group):
            grid = "quick" if args.quick or spec.kernel else "coarse"
            proto = dict(seed=args.seed, n_repeats=1, n_folds=5)
            points = grid_points(spec, grid)
            scores = [cv_score(spec, q, X, y, args.dataset, 0,
                               inner_folds=3 if args.quick else 5, **proto)[0] for q in points]
            best = points[int(np.argmax(scores))]
            train, test = train_part(y, args.dataset, 0, kernel=spec.kernel, **proto)
            order = train[np.random.default_rng(run_seed(args.seed, args.dataset, 0, 3))
                          .permutation(train.shape[0])]
            est = spec.make(**best)
            if "random_state" in est.get_params():  # e.g. KOIL's reservoir: same seed, same curve
                est.set_params(random_state=args.seed)
            seen, aucs = learning_curve(est, X[order], y[order], X[test],
                                        y[test], n_points=16 if args.quick else 80)
            burn = (int(np.ceil(0.1 * seen[-1])) if args.burn_in is None
                    else min(args.burn_in, int(seen[-1]) - 1))
            keep = seen >= burn
            ax.plot(seen[keep], aucs[keep],
                    **plot_kw(spec.name, keep.sum(), k, label=f"{spec.name} ({aucs[-1]:.3f})"))
            lows.append(np.nanmin(aucs[keep]))
            print(f"{spec.name:12s} params {best}  final test AUC {aucs[-1]:.4f}")
        ax.set(xlabel=f"instances seen (linear axis; the first {burn} rows, burn-in, not shown)",
               title=title)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=LEGEND_FONTSIZE, loc="upper center", bbox_to_anchor=(0.5, -0.14),
                  ncol=3, title="learner (final test AUC)", title_fontsize=LEGEND_FONTSIZE)
    lo = min(lows) if np.isfinite(min(lows)) else 0.5
    axes[0, 0].set(ylabel="test AUC", ylim=(max(0.0, lo - 0.02), 1.0))
    fig.suptitle(f"Online learning curves on {args.dataset} (seed {args.seed})")
    paths = save(fig, args.out, f"learning_curve_{args.dataset}")
    print("\n".join(paths))
    return paths


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
