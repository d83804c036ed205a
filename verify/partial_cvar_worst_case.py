"""psi_beta: the worst-case CVaR_beta of the pairwise hinge under two moment constraints.

Statement (docs/user_guide/partial_auc.md)
------------------------------------------
For beta in (0, 1), b = 1 - mu and sigma > 0, over every law of z with mean 0 and variance
sigma^2, the largest CVaR_beta of L = (b + z)_+ (the mean of its top beta) is

    psi_beta = b + sigma sqrt((1 - beta) / beta)      if b >= c*
             = psi_M(mu, sigma^2) / beta               otherwise,
    c* = (2 beta - 1) sigma / (2 sqrt(beta (1 - beta))),

attained by a two-point law; at beta = 1 it is psi_M (Lemma 2).

Checks (thresholds fixed before running)
----------------------------------------
* sympy (derivation): with c = A - eta the Scarf bound's objective
  G(eta) = eta + (c + sqrt(c^2 + s^2)) / (2 beta) has G'(eta*) = 0 and
  G(eta*) = b + sigma sqrt((1 - beta)/beta) at c = c*, and the two branches meet at b = c*
  with equal value and slope; each difference must simplify to exactly 0 (beta written as
  1 / (1 + r^2), r > 0, so every square root is of a square). Negative control: the first
  branch with sqrt(beta / (1 - beta)) (the ratio inverted) must not simplify to 0.
* Attainment (identity): for random (beta, mu, sigma) the CVaR_beta of the two-point law of
  the derivation (mean 0 and variance sigma^2 checked), computed as the mean of the top beta
  of the law, equals the library's ``psi_cvar`` to relative 1e-9. Negative control: the
  normal law's CVaR (b + sigma phi(z)/beta on the first branch) in place of the bound is
  exceeded by the two-point law (the same identity must FAIL).
* Upper bound: random discrete laws (n points, standardized exactly) never exceed psi_beta:
  max CVaR / psi_beta <= 1 + 1e-9.
* Lemma 2 (identity): psi_cvar at level 1 equals ``psi_m`` exactly (threshold 0) at 1,000
  points, and psi_cvar at 1 - 1e-9 is within 1e-6 of it. Negative control: level 0.5 is not
  psi_M (the same identity must FAIL).
"""

import math

import numpy as np
from scipy.special import ndtri
from scipy.stats import norm

from sosl._core._losses_ref import psi_cvar, psi_m

from . import _records as R

NAME = "partial_cvar"
TITLE = "psi_beta: worst-case CVaR of the hinge (PartialOAUCM)"
ORDER = 21

TOL_ATTAIN = 1e-9
TOL_BOUND = 1e-9


def cvar_discrete(values, probs, beta):
    """Mean of the top beta of a discrete law."""
    order = np.argsort(-values)
    v, p = values[order], probs[order]
    taken = np.minimum(p, np.maximum(beta - (np.cumsum(p) - p), 0.0))
    return float(taken @ v / beta)


def two_point(beta, mu, sigma):
    """The attaining law of z: (values, probs)."""
    b = 1.0 - mu
    c_star = (2 * beta - 1) * sigma / (2 * math.sqrt(beta * (1 - beta)))
    if b >= c_star:
        return (np.array([sigma * math.sqrt((1 - beta) / beta),
                          -sigma * math.sqrt(beta / (1 - beta))]), np.array([beta, 1 - beta]))
    A = math.sqrt(b * b + sigma * sigma)
    p = 0.5 * (1 + b / A)
    return np.array([-b + A, -b - A]), np.array([p, 1 - p])


def symbolic_records(seed):
    import sympy as sp
    r, sigma = sp.symbols("r sigma", positive=True)
    b = sp.symbols("b", real=True)
    beta = 1 / (1 + r ** 2)                     # sqrt((1 - beta)/beta) = r
    k = sp.sqrt((1 - beta) / beta)
    root = sp.sqrt(beta * (1 - beta))
    c_star = (2 * beta - 1) * sigma / (2 * root)
    eta = sp.symbols("eta", real=True)
    c = b - eta
    G = eta + (c + sp.sqrt(c ** 2 + sigma ** 2)) / (2 * beta)
    dG = sp.diff(G, eta)
    eta_star = b - c_star
    out = []

    def simp(e):
        # every square root here is of a perfect square once factored (r, sigma > 0)
        e = sp.together(e)
        e = e.replace(lambda x: x.is_Pow and x.exp == sp.S.Half,
                      lambda x: sp.sqrt(sp.factor(x.base)))
        return sp.simplify(sp.factor(e))

    d1 = simp(dG.subs(eta, eta_star))
    d2 = simp(G.subs(eta, eta_star) - (b + k * sigma))
    branch2 = (b + sp.sqrt(b ** 2 + sigma ** 2)) / (2 * beta)
    d3 = simp((b + k * sigma - branch2).subs(b, c_star))
    d4 = simp(sp.diff(b + k * sigma - branch2, b).subs(b, c_star))
    for name, d in (("G'(eta*) = 0 at c = c*", d1),
                    ("G(eta*) = b + sigma sqrt((1-beta)/beta)", d2),
                    ("branches meet at b = c* (value)", d3),
                    ("branches meet at b = c* (slope)", d4)):
        out.append(R.identity(f"sympy: {name}", "simplify(lhs - rhs) == 0",
                              0.0 if d == 0 else 1.0, 0.0, seed=seed, evidence="derivation"))
    wrong = simp(G.subs(eta, eta_star) - (b + sigma / k))
    out.append(R.identity("sympy control: ratio inverted in branch 1", "must not simplify to 0",
                          0.0 if wrong == 0 else 1.0, 0.0, seed=seed, negative=True,
                          evidence="derivation"))
    return out


def run(profile, seed, out_dir):
    rng = np.random.default_rng(seed)
    n_pts = 300 if profile == "quick" else 3000
    records = []
    for rec in symbolic_records(seed):
        records.append(R.emit(rec))

    # attainment by the two-point law, and the normal law's CVaR as a control
    err, err_normal = 0.0, 0.0
    for _ in range(n_pts):
        beta = float(rng.uniform(0.01, 0.99))
        mu, sigma = float(rng.normal(scale=2.0)), float(rng.exponential())
        vals, probs = two_point(beta, mu, sigma)
        assert abs(vals @ probs) < 1e-9 * (1 + sigma) and \
            abs(vals ** 2 @ probs - sigma ** 2) < 1e-9 * (1 + sigma ** 2)
        got = cvar_discrete(np.maximum(1 - mu + vals, 0.0), probs, beta)
        bound = float(psi_cvar(beta, mu, sigma ** 2))
        err = max(err, abs(got - bound) / max(bound, 1e-12))
        zq = ndtri(1 - beta)
        normal = (1 - mu) + sigma * norm.pdf(zq) / beta
        if 1 - mu >= (2 * beta - 1) * sigma / (2 * math.sqrt(beta * (1 - beta))):
            err_normal = max(err_normal, abs(got - normal) / max(got, 1e-12))
    sizes = f"{n_pts} random (beta, mu, sigma)"
    records.append(R.emit(R.identity(
        "two-point law attains psi_beta (max rel. error)", f"rel. error <= {TOL_ATTAIN}",
        err, 0.0, atol=TOL_ATTAIN, sizes=sizes, seed=seed)))
    records.append(R.emit(R.identity(
        "control: the normal law's CVaR as the worst case", f"rel. error <= {TOL_ATTAIN}",
        err_normal, 0.0, atol=TOL_ATTAIN, sizes=sizes, seed=seed, negative=True)))

    # random discrete laws stay below the bound
    worst = 0.0
    for _ in range(n_pts):
        beta = float(rng.uniform(0.01, 0.99))
        mu, sigma = float(rng.normal(scale=2.0)), float(rng.exponential())
        n = int(rng.integers(2, 12))
        z = rng.standard_t(2, size=n)
        p = rng.dirichlet(np.ones(n))
        z = z - p @ z
        sd = math.sqrt(float(p @ z ** 2))
        if sd == 0:
            continue
        z *= sigma / sd
        got = cvar_discrete(np.maximum(1 - mu + z, 0.0), p, beta)
        worst = max(worst, got / float(psi_cvar(beta, mu, sigma ** 2)))
    records.append(R.emit(R.upper_bound(
        "random laws: max CVaR_beta / psi_beta", f"<= 1 + {TOL_BOUND}", worst, 1 + TOL_BOUND,
        sizes=f"{n_pts} laws of 2-11 points", seed=seed)))

    # beta = 1 is Lemma 2's psi_M
    mu = rng.normal(scale=3.0, size=1000)
    s2 = rng.exponential(scale=2.0, size=1000)
    gap1 = float(np.max(np.abs(psi_cvar(1.0, mu, s2) - psi_m(mu, s2))))
    gap_near = float(np.max(np.abs(psi_cvar(1 - 1e-9, mu, s2) - psi_m(mu, s2))))
    gap_half = float(np.max(np.abs(psi_cvar(0.5, mu, s2) - psi_m(mu, s2))))
    records.append(R.emit(R.identity("beta = 1: psi_beta == psi_M (max abs. gap)", "exactly 0",
                                     gap1, 0.0, sizes="1000 points", seed=seed)))
    records.append(R.emit(R.identity("beta = 1 - 1e-9: psi_beta -> psi_M", "gap <= 1e-6",
                                     gap_near, 0.0, atol=1e-6, sizes="1000 points", seed=seed)))
    records.append(R.emit(R.identity("control: beta = 0.5 taken for psi_M", "gap <= 1e-6",
                                     gap_half, 0.0, atol=1e-6, sizes="1000 points", seed=seed,
                                     negative=True)))
    return records
