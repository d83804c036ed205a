"""psi_M and psi_S against the pairwise hinge and square losses, with Lemma 3's envelope.

For a comparison set whose margins have mean mu and standard deviation sigma, psi_M(mu,
sigma^2) (eq. 8) lies between the hinge at the mean, max(0, 1 - mu), and that hinge plus
sigma/2 (Lemma 3); psi_S(mu, sigma^2) = (1 - mu)^2 + sigma^2 (eq. 3) is the square loss
shifted up by the variance. Left: psi_M for several sigma with the envelope; right: psi_S
against the square loss.
"""

import sys

import numpy as np

from sosl._core._losses_ref import psi_m, psi_s

from ._common import parser, plt, save


def main(argv=None):
    args = parser(__doc__.splitlines()[0]).parse_args(argv)
    mu = np.linspace(-2.0, 3.0, 101 if args.quick else 801)
    sigmas = (0.5, 1.0) if args.quick else (0.25, 0.5, 1.0, 2.0)
    hinge = np.maximum(0.0, 1.0 - mu)
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    a.plot(mu, hinge, "k", lw=2, label="hinge max(0, 1-mu)")
    b.plot(mu, (1.0 - mu) ** 2, "k", lw=2, label="square (1-mu)^2")
    for i, s in enumerate(sigmas):
        c = f"C{i}"
        a.plot(mu, psi_m(mu, s * s), c, label=f"psi_M, sigma={s:g}")
        a.plot(mu, hinge + s / 2.0, c, ls=":", lw=1,
               label="dotted: hinge + sigma/2 (Lemma 3)" if i == 0 else None)
        b.plot(mu, psi_s(mu, s * s), c, label=f"psi_S, sigma={s:g}")
    a.set(xlabel="mean margin mu", ylabel="loss", title="psi_M between hinge and hinge + sigma/2")
    b.set(xlabel="mean margin mu", ylabel="loss", title="psi_S = square loss + sigma^2",
          ylim=(0, 12))
    a.legend(fontsize=8)
    b.legend(fontsize=8)
    for ax in (a, b):
        ax.grid(alpha=0.3)
    paths = save(fig, args.out, "losses")
    print("\n".join(paths))
    return paths


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
