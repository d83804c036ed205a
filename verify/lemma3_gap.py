"""Lemma 3: psi_M is within sigma/2 above the hinge and converges to it uniformly.

Statement
---------
For every mu and sigma >= 0: 0 <= psi_M(mu, sigma^2) - max(0, 1 - mu) <= sigma/2, so
sup_mu |psi_M - hinge| <= sigma/2 -> 0 as sigma -> 0 (uniform convergence). The upper gap
is attained at mu = 1, where psi_M = sigma/2 and the hinge is 0.

Checks (thresholds fixed before running)
----------------------------------------
* sympy, both signs of b = 1 - mu (c = |b| > 0, s = sigma > 0 positive symbols): each gap is
  rewritten as a manifestly nonnegative fraction and simplify(gap - fraction) == 0:
  b >= 0: psi - b = s^2 / (2(sqrt(c^2+s^2) + c)), s/2 - (psi - b) = c s/(c + s + sqrt(c^2+s^2));
  b < 0:  psi - 0 = s^2 / (2(sqrt(c^2+s^2) + c)), s/2 - psi = c s/(c + s + sqrt(c^2+s^2));
  sympy also confirms each fraction is nonnegative from the assumptions; at b = 0 the upper
  gap is exactly 0 (equality at mu = 1).
* numeric grid (mu in [-5, 7], sigma from 1e-8 to 10): min of the lower gap >= -1e-12 and
  max of gap/(sigma/2) <= 1 + 1e-12 (rounding).
* uniform convergence: sup over a fine mu grid of the gap equals sigma/2 (rtol 1e-9) for each
  sigma in a decreasing sequence, hence -> 0 linearly in sigma.
* negative control: the wrong constant sigma/4 is exceeded.
"""

import numpy as np

from sosl._core._losses_ref import psi_m

from . import _records as R

NAME = "lemma3"
TITLE = "Lemma 3: 0 <= psi_M - hinge <= sigma/2, uniform convergence"
ORDER = 30


def _sympy():
    import sympy as sp
    c, s = sp.symbols("c s", positive=True)
    R = sp.sqrt(c ** 2 + s ** 2)
    lower_frac = s ** 2 / (2 * (R + c))
    upper_frac = c * s / (c + s + R)
    res = {}
    for sign, label in ((1, "1-mu > 0"), (-1, "1-mu < 0")):
        b = sign * c
        psi = (b + sp.sqrt(b ** 2 + s ** 2)) / 2
        hinge = b if sign > 0 else 0
        lo = sp.simplify(psi - hinge - lower_frac)
        up = sp.simplify(s / 2 - (psi - hinge) - upper_frac)
        res[f"lower gap, {label}"] = (lo == 0 and bool(lower_frac.is_nonnegative))
        res[f"upper gap, {label}"] = (up == 0 and bool(upper_frac.is_nonnegative))
    psi0 = sp.sqrt(s ** 2) / 2
    res["equality at mu = 1"] = sp.simplify(psi0 - s / 2) == 0
    return res


def run(profile, seed, out_dir):
    import matplotlib.pyplot as plt
    quick = profile == "quick"
    recs = []
    for label, ok in _sympy().items():
        recs.append(R.emit(R.identity(
            f"Lemma 3 sympy: {label}",
            "gap == manifestly nonnegative fraction (simplify -> 0; measured 1 if not)",
            0.0 if ok else 1.0, 0.0, atol=0.0, sizes="symbolic", seed=seed,
            evidence="derivation")))

    m = 2001 if quick else 20001
    mu = np.concatenate([np.linspace(-5.0, 7.0, m), [1.0]])
    sig = np.geomspace(1e-8, 10.0, 40 if quick else 200)
    MU, S = np.meshgrid(mu, sig)
    hinge = np.maximum(0.0, 1.0 - MU)
    gap = psi_m(MU, S * S) - hinge
    sizes = f"{mu.size} mu x {sig.size} sigma"
    recs.append(R.emit(R.lower_bound(
        "Lemma 3 lower gap psi_M - hinge", "min gap >= -1e-12 (rounding)", gap.min(), -1e-12,
        sizes=sizes, seed=seed)))
    r = float(np.max(gap / (S / 2)))
    recs.append(R.emit(R.upper_bound(
        "Lemma 3 upper gap / (sigma/2)", "max gap/(sigma/2) <= 1 + 1e-12", r, 1.0 + 1e-12,
        sizes=sizes, seed=seed, headline=True)))
    sup = gap.max(axis=1)
    dev = float(np.max(np.abs(sup / (sig / 2) - 1.0)))
    recs.append(R.emit(R.identity(
        "Lemma 3 sup_mu gap = sigma/2 (uniform conv.)", "max_sigma |sup_mu gap/(sigma/2) - 1|",
        dev, 0.0, atol=1e-9, sizes=sizes, seed=seed,
        note=f"sup gap at sigma={sig[0]:.0e}: {sup[0]:.3e}, at sigma={sig[-1]:.0f}: {sup[-1]:.3f}: "
             "-> 0 linearly as sigma -> 0")))
    recs.append(R.emit(R.upper_bound(
        "Lemma 3 neg. control: constant sigma/4", "max gap/(sigma/4) <= 1",
        float(np.max(gap / (S / 4))), 1.0, sizes=sizes, seed=seed, negative=True)))

    fig, ax = plt.subplots(1, 2, figsize=(10, 3.8))
    mm = np.linspace(-1.5, 3.0, 600)
    ax[0].plot(mm, np.maximum(0, 1 - mm), "k", lw=1.5, label="hinge max(0, 1-mu)")
    for s in (0.25, 0.5, 1.0):
        line, = ax[0].plot(mm, psi_m(mm, s * s), label=f"psi_M, sigma={s}")
        ax[0].plot(mm, np.maximum(0, 1 - mm) + s / 2, "--", color=line.get_color(), lw=0.8)
    ax[0].set(xlabel="mu", ylabel="loss", title="psi_M vs hinge (dashed: hinge + sigma/2)")
    ax[0].legend(fontsize=8)
    ax[1].loglog(sig, sup, "o", ms=3, label="sup_mu (psi_M - hinge)")
    ax[1].loglog(sig, sig / 2, "k-", lw=0.8, label="sigma/2")
    ax[1].set(xlabel="sigma", ylabel="sup gap", title="uniform convergence")
    ax[1].legend(fontsize=8)
    recs[-2].figures.append(R.save_figure(
        fig, out_dir, "lemma3_psi_vs_hinge",
        caption="Left: psi_M(mu, sigma^2) from sosl._core._losses_ref for three sigma "
                "between the hinge max(0, 1 - mu) (black) and hinge + sigma/2 (dashed, "
                "Lemma 3). Right: the largest gap psi_M - hinge over a grid of mu against "
                "sigma, with the sigma/2 envelope of Lemma 3 (black)."))
    return recs
