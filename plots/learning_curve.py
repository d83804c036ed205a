"""Test AUC vs instances seen (the online learning curve) for every algorithm on a dataset.

The stream is the training part of the protocol's first run (a stratified 4/5 of the data,
in the protocol's seeded order) and the curve is the AUC on the held-out fifth after each
log-spaced prefix (:func:`sosl.experiments.curves.learning_curve`). Hyper-parameters are
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

from ._common import parser, plt, save


def main(argv=None):
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--dataset", default="default",
                   help="'default' (breast cancer), 'synthetic' or a registry name "
                        "($SOSL_DATA_DIR)")
    p.add_argument("--algorithms", nargs="+", default=None)
    args = p.parse_args(argv)
    X, y = get_data(args.dataset)
    names = args.algorithms
    if names is None and args.quick:
        names = ["Perceptron", "OAUC-M", "OAUC-S", "OKAUC-M"]
    specs = resolve_algorithms(names)
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    for spec in specs:
        grid = "quick" if args.quick or spec.kernel else "coarse"
        proto = dict(seed=args.seed, n_repeats=1, n_folds=5)
        points = grid_points(spec, grid)
        scores = [cv_score(spec, q, X, y, args.dataset, 0, inner_folds=3 if args.quick else 5,
                           **proto)[0] for q in points]
        best = points[int(np.argmax(scores))]
        train, test = train_part(y, args.dataset, 0, kernel=spec.kernel, **proto)
        order = train[np.random.default_rng(run_seed(args.seed, args.dataset, 0, 3))
                      .permutation(train.shape[0])]
        seen, aucs = learning_curve(spec.make(**best), X[order], y[order], X[test], y[test],
                                    n_points=8 if args.quick else 30)
        style = "-" if spec.in_paper else "--"
        ax.plot(seen, aucs, style, marker=".", ms=3, label=f"{spec.name} (final {aucs[-1]:.3f})")
        print(f"{spec.name:12s} params {best}  final test AUC {aucs[-1]:.4f}")
    ax.set(xscale="log", xlabel="instances seen", ylabel="test AUC",
           title=f"Online learning curves on {args.dataset} (seed {args.seed})")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, loc="lower right")
    paths = save(fig, args.out, f"learning_curve_{args.dataset}")
    print("\n".join(paths))
    return paths


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
