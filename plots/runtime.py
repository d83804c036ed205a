"""Time per instance of one online pass: vs the dimension p (linear) and vs the budget (kernel).

Each point is the best of 3 ``fit`` passes over a synthetic imbalanced stream
(:func:`sosl.datasets.make_imbalanced_stream`, IR 3, divided by its largest row norm)
measured by
:func:`sosl.experiments.curves.time_per_instance`. The second-order learners cost O(p^2)
per round and the first-order ones O(p); the kernel learners O(B p + B^2) for a buffer of
B per class. Timings depend on the machine and its load: read the slopes, not the values.
"""

import sys

import numpy as np

from sosl.datasets import make_imbalanced_stream, to_unit_ball
from sosl.experiments import ALGORITHMS
from sosl.experiments.curves import time_per_instance

from ._common import parser, plt, save

LINEAR = ["Perceptron", "PA-I", "OAM", "OL-UBAUC", "SOLAM", "OAUC-S", "OAUC-M"]
KERNEL = ["KOIL", "OKAUC-M", "OKAUC-S"]


def main(argv=None):
    args = parser(__doc__.splitlines()[0]).parse_args(argv)
    ps = (2, 8) if args.quick else (2, 5, 10, 20, 50, 100, 200)
    budgets = (5, 20) if args.quick else (10, 25, 50, 100, 200, 400)
    n_lin, n_ker = (300, 200) if args.quick else (20000, 3000)
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.3))
    for name in LINEAR:
        spec = ALGORITHMS[name]
        params = {k: 2.0 ** -4 for k in spec.searched}
        t = []
        for p in ps:
            X, y = make_imbalanced_stream(n_lin, p, imbalance_ratio=3.0, random_state=args.seed)
            X = to_unit_ball(X)  # keeps every step size stable at every p; timing unaffected
            t.append(time_per_instance(lambda s=spec, q=params: s.make(**q), X, y))
        a.loglog(ps, np.array(t) * 1e6, "o-", ms=3, label=name)
        print(f"{name:10s} " + "  ".join(f"p={p}: {v * 1e6:.3g} us" for p, v in zip(ps, t)))
    X, y = make_imbalanced_stream(n_ker, 10, imbalance_ratio=3.0, random_state=args.seed)
    X = to_unit_ball(X)
    for name in KERNEL:
        spec = ALGORITHMS[name]
        params = {k: 2.0 ** -4 for k in spec.searched if k != "sigma"}
        params["sigma"] = 2.0
        t = []
        for B in budgets:
            t.append(time_per_instance(lambda s=spec, q={**params, "budget": B}: s.make(**q), X, y))
        b.loglog(budgets, np.array(t) * 1e6, "o-", ms=3, label=name)
        print(f"{name:10s} " + "  ".join(f"B={B}: {v * 1e6:.3g} us" for B, v in zip(budgets, t)))
    a.set(xlabel="features p", ylabel="microseconds per instance",
          title=f"Linear learners ({n_lin} instances)")
    b.set(xlabel="budget B per class", ylabel="microseconds per instance",
          title=f"Kernel learners (p = 10, {n_ker} instances)")
    for ax in (a, b):
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=8)
    paths = save(fig, args.out, "runtime")
    print("\n".join(paths))
    return paths


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
