"""Regret of OAUC-M (step 1/(lam t)) vs T, with the 18(1 + ln T)/lam bound of Theorem 6.

The numbers come from :func:`verify._regret.regret_curve` (comparator solved to a
certified tolerance; the plotted regret is an upper estimate of the true regret). Streams:
breast cancer and, when ``$SOSL_DATA_DIR`` has them, fourclass and diabetes, scaled to
[-1, 1], shuffled with ``--seed`` and divided by the largest row norm (Theorem 6 assumes
||x|| <= 1). Solid with markers: regret, one colour per lam; dashed: the bound 18(1 + ln T)/lam
of Theorem 6; dotted: the sharpened 8(1 + ln T)/lam that verify establishes. Log-x axis; the
y axis is logarithmic when every plotted regret is positive, and symmetric-log with its lower
end at the most negative regret otherwise (a regret can be negative when the moving learner
beats the best fixed w), so that no half of the axis is empty.
"""

import sys

import numpy as np

from sosl import datasets as ds
from verify import _regret

from ._common import LEGEND_FONTSIZE, parser, plt, save


def main(argv=None):
    p = parser(__doc__.splitlines()[0])
    args = p.parse_args(argv)
    names = ["default"] + [d for d in ("fourclass", "diabetes") if d in ds.available_datasets()]
    if args.quick:
        names, lams, n_max, n_T = names[:1], (0.1,), 150, 5
    else:
        lams, n_max, n_T = (0.01, 0.1, 1.0), 3000, 20
    fig, axes = plt.subplots(1, len(names), figsize=(5.2 * len(names), 4.3), squeeze=False)
    rng = np.random.default_rng(args.seed)
    for ax, name in zip(axes[0], names):
        X, y = ds.load_dataset(name)
        order = rng.permutation(X.shape[0])
        X, y = ds.to_unit_ball(X[order]), y[order]
        if X.shape[0] < n_max:  # short sets: several shuffled passes make a longer stream
            reps = int(np.ceil(n_max / X.shape[0]))
            perms = [rng.permutation(X.shape[0]) for _ in range(reps)]
            X = np.concatenate([X[q] for q in perms])[:n_max]
            y = np.concatenate([y[q] for q in perms])[:n_max]
        X, y = X[:n_max], y[:n_max]
        T_grid = np.unique(np.geomspace(10, X.shape[0], n_T).round().astype(int))
        lo, hi = np.inf, -np.inf
        for i, lam in enumerate(lams):
            r = _regret.regret_curve(X, y, lam, T_grid)
            c = f"C{i}"
            ax.plot(r["T"], r["regret"], c, marker="o", ms=4, label=f"regret, lam={lam:g}")
            ax.plot(r["T"], r["bound18"], c, ls="--", lw=1.2)
            ax.plot(r["T"], r["bound8"], c, ls=":", lw=1.2)
            lo = min(lo, np.min(r["regret"]))
            hi = max(hi, np.max(r["bound18"]))
            ratio = np.max(r["regret"] / r["bound18"])
            print(f"{name:10s} lam={lam:<5g} T={r['T'][-1]}  regret {r['regret'][-1]:.4g}  "
                  f"bound18 {r['bound18'][-1]:.4g}  max ratio {ratio:.3g}")
        ax.plot([], [], "0.2", ls="--", lw=1.2,
                label="bound 18(1+ln T)/lam (Theorem 6), dashed, colour of its lam")
        ax.plot([], [], "0.2", ls=":", lw=1.2,
                label="sharpened bound 8(1+ln T)/lam (verify), dotted")
        if lo > 0:
            ax.set_yscale("log")
            ax.set_ylim(lo / 2.0, hi * 2.0)
            ylabel = "regret (log axis; every value > 0)"
        else:  # negative regrets: symlog, down to the most negative value only
            ax.set_yscale("symlog", linthresh=1.0)
            ax.set_ylim(1.5 * lo - 0.5, hi * 2.0)
            ylabel = f"regret (symlog, linear in [-1, 1]; min {lo:.3g})"
        ax.set(xscale="log", xlabel="T (rounds)", ylabel=ylabel,
               title=f"OAUC-M regret on {name} (||x|| <= 1)")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=LEGEND_FONTSIZE, loc="upper center", bbox_to_anchor=(0.5, -0.14))
    paths = save(fig, args.out, "regret")
    print("\n".join(paths))
    return paths


if __name__ == "__main__":
    sys.exit(0 if main() is not None else 1)
