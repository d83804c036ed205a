"""Time per instance of one online pass: vs the dimension p (linear) and vs the budget (kernel).

Each point is the process CPU time (:func:`time.process_time`) of one ``fit`` pass over a
synthetic imbalanced stream (:func:`sosl.datasets.make_imbalanced_stream`, IR 3, divided by its
largest row norm), the minimum of ``--repeats`` passes (default 5, ``--quick`` 2), each on a
fresh model, the learners of a panel run in turn at each size
(:func:`plots._common.cpu_seconds_per_instance`), divided by the number of rows. The
second-order learners cost O(p^2) per round and the first-order ones O(p); the kernel learners
O(B p + B^2) for a buffer of B per class. Timings depend on the machine and its load: read the
slopes, not the values.
"""

import sys

import numpy as np

from sosl.datasets import make_imbalanced_stream, to_unit_ball
from sosl.experiments import ALGORITHMS

from ._common import LEGEND_FONTSIZE, cpu_seconds_per_instance, parser, plot_kw, plt, save

LINEAR = ["Perceptron", "PA-I", "OAM", "OL-UBAUC", "SOLAM", "OAUC-S", "OAUC-M"]
KERNEL = ["KOIL", "OKAUC-M", "OKAUC-S"]


def main(argv=None):
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=None,
                   help="timed passes per point, the minimum is drawn (default 5; quick 2)")
    args = p.parse_args(argv)
    k = args.repeats if args.repeats is not None else (2 if args.quick else 5)
    if k < 1:
        p.error("need --repeats >= 1")
    ps = (2, 8) if args.quick else (2, 5, 10, 20, 50, 100, 200)
    budgets = (5, 20) if args.quick else (10, 25, 50, 100, 200, 400)
    n_lin, n_ker = (300, 200) if args.quick else (20000, 3000)
    fig, (a, b) = plt.subplots(1, 2, figsize=(11.5, 4.6))
    lin = np.empty((len(ps), len(LINEAR)))
    for i, p_ in enumerate(ps):
        X, y = make_imbalanced_stream(n_lin, p_, imbalance_ratio=3.0, random_state=args.seed)
        X = to_unit_ball(X)  # keeps every step size stable at every p; timing unaffected
        makes = []
        for name in LINEAR:
            spec = ALGORITHMS[name]
            params = {q: 2.0 ** -4 for q in spec.searched}
            makes.append(lambda s=spec, q=params: s.make(**q))
        lin[i] = cpu_seconds_per_instance(makes, X, y, repeats=k)
    for j, name in enumerate(LINEAR):
        a.loglog(ps, lin[:, j] * 1e6, **plot_kw(name, len(ps), n_markers=len(ps), label=name))
        print(f"{name:10s} " + "  ".join(f"p={q}: {v * 1e6:.3g} us"
                                         for q, v in zip(ps, lin[:, j])))
    X, y = make_imbalanced_stream(n_ker, 10, imbalance_ratio=3.0, random_state=args.seed)
    X = to_unit_ball(X)
    ker = np.empty((len(budgets), len(KERNEL)))
    for i, B in enumerate(budgets):
        makes = []
        for name in KERNEL:
            spec = ALGORITHMS[name]
            params = {q: 2.0 ** -4 for q in spec.searched if q != "sigma"}
            params.update(sigma=2.0, budget=B)
            makes.append(lambda s=spec, q=params: s.make(**q))
        ker[i] = cpu_seconds_per_instance(makes, X, y, repeats=k)
    for j, name in enumerate(KERNEL):
        b.loglog(budgets, ker[:, j] * 1e6,
                 **plot_kw(name, len(budgets), n_markers=len(budgets), label=name))
        print(f"{name:10s} " + "  ".join(f"B={B}: {v * 1e6:.3g} us"
                                         for B, v in zip(budgets, ker[:, j])))
    ylabel = f"CPU microseconds per instance (min of {k} runs)"
    a.set(xlabel="features p", ylabel=ylabel, title=f"Linear learners ({n_lin} instances)")
    b.set(xlabel="budget B per class", ylabel=ylabel,
          title=f"Kernel learners (p = 10, {n_ker} instances)")
    for ax in (a, b):
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=LEGEND_FONTSIZE)
    fig.suptitle(f"Process CPU time (time.process_time) of one fit pass, minimum of {k} "
                 "interleaved runs per point", fontsize=10)
    paths = save(fig, args.out, "runtime")
    print("\n".join(paths))
    return paths


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
