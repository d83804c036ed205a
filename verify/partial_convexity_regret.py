"""PartialOAUCM's rounds: convex in w, and OGD with step 1/(lam t) has logarithmic regret.

Statement (docs/user_guide/partial_auc.md)
------------------------------------------
(i) For fixed a, PSD Sigma, level beta and threshold eta, the round loss
    f(w) = eta + (psi_beta(w.a, w' Sigma w) - eta)_+ / b_own
is convex in w (psi_beta is a supremum of convex functions of w; (.)_+ is convex and
non-decreasing). Selecting a row by its score instead, 1[w.a <= tau] psi_beta, is not.
(ii) The learner's gradient at round t is a subgradient of
    F_t(w) = lam/2 ||w||^2 + v ((1 - rho) f_t(w) + rho psi_M(w.a, w' Sigma w)),
with eta_t the loss of a row at the own class's cut under w_t (the cut is the hardness of
the kept value the library's ring-based selection, ``_partial_ref.own_selection``, ranks
the row against) and rho the weight of the full-AUC loss; F_t is lam-strongly convex,
so OGD with eta_t = 1/(lam t) has Regret_T <= sum_t ||g_t||^2 / (2 lam t)
<= G^2 (1 + ln T) / (2 lam) (Hazan, Agarwal and Kale, 2007), whatever chose the rounds.

Checks (thresholds fixed before running)
----------------------------------------
* Midpoint convexity on random a, Sigma, w1, w2 (levels 0.05, 0.3, 0.7; own shares 1 and
  0.2; some Sigma singular, some w with w' Sigma w near 0): the largest
  f((w1 + w2)/2) - (f(w1) + f(w2))/2, relative to 1 + |f| terms, <= 1e-12. Negative
  control: the score-selected loss 1[w.a <= tau] psi_beta has a violation > 1e-12 (the row
  must FAIL).
* Regret: a one-pass run of the NumPy reference (``_partial_ref``) on an imbalanced
  Gaussian stream (p = 3), one-way (beta = 0.2) and two-way (0.2, 0.5); every round's F_t
  is rebuilt from the recorded a_t, Sigma_t, eta_t; the comparator is the best of L-BFGS
  runs on sum_t F_t from w_T and from 0. Upper bound: measured regret <= sum_t ||g_t||^2 /
  (2 lam t); the curve at T/8, T/4, T/2, T is printed beside G^2 (1 + ln T) / (2 lam).
  Negative control: the same regret against the bound claimed 20 times tighter (a wrong
  constant) must FAIL: the bound is not loose by that much, so the check can fail. (The
  first control, a learner with step 1/(50 lam t) against the bound from its own gradients,
  stayed below it and was replaced by this one after that run.)
"""

import math

import numpy as np
from scipy.optimize import minimize

from sosl._core._losses_ref import cvar_grad
from sosl._core._moments_ref import moment_update
from sosl._core._partial_ref import own_selection

from . import _records as R

NAME = "partial_regret"
TITLE = "PartialOAUCM: convex rounds, O(ln T) regret with step 1/(lam t)"
ORDER = 61

TOL_CONVEX = 1e-12
#: the negative control claims the regret bound this many times tighter than proved
CONTROL_FACTOR = 20.0
#: the learner's default weight of the full-AUC loss, and the selection rings' length
RHO = 0.5
RING = 500


def round_loss(w, a, Sigma, frac_opp, frac_own, eta_cut):
    """f(w) for one round (``frac_own`` = 1: psi_beta itself); vectorized over rows of w."""
    W = np.atleast_2d(w)
    psi = np.asarray(cvar_grad(frac_opp, W @ a, np.einsum("ij,jk,ik->i", W, Sigma, W))[0])
    if frac_own >= 1.0:
        return psi
    return eta_cut + np.maximum(psi - eta_cut, 0.0) / frac_own


def convexity(rng, n_pairs, selected=False):
    worst = -np.inf
    for _ in range(n_pairs):
        p = int(rng.integers(1, 5))
        B = rng.normal(size=(p, int(rng.integers(1, p + 1))))
        Sigma = B @ B.T * rng.exponential()
        a = rng.normal(size=p) * 2
        frac = float(rng.choice([0.05, 0.3, 0.7]))
        own = float(rng.choice([1.0, 0.2]))
        eta = float(rng.exponential())
        w1, w2 = rng.normal(size=p) * rng.exponential(size=1), rng.normal(size=p)
        if rng.random() < 0.2:
            w2 = w1 * rng.uniform(-1, 2)                 # along one line, through 0
        mid = 0.5 * (w1 + w2)
        tau = float(rng.normal())

        def f(w, a=a, Sigma=Sigma, frac=frac, own=own, eta=eta, tau=tau):
            if selected:        # the row selected by its score: not convex
                return (float(w @ a) <= tau) * float(round_loss(w, a, Sigma, frac, 1.0, 0)[0])
            return float(round_loss(w, a, Sigma, frac, own, eta)[0])

        f1, f2, fm = f(w1), f(w2), f(mid)
        worst = max(worst, (fm - 0.5 * (f1 + f2)) / (1.0 + abs(f1) + abs(f2)))
    return worst


def stream(rng, T, p=3):
    y = np.where(rng.random(T) < 0.15, 1.0, -1.0)
    X = rng.normal(size=(T, p))
    X[y > 0] += np.array([1.5, -0.5, 0.8])[:p]
    hard = (y < 0) & (rng.random(T) < 0.1)
    X[hard, 0] += 2.0
    return X, y


def ring_cut(H, Hf, k, frac_own):
    """The hardness u* at the own class's cut: the library's selection (``own_selection``)
    keeps a row iff fewer than frac (m + 1) of the m kept values exceed its hardness u, i.e.
    iff u >= the (j + 1)-th largest kept value, j the largest integer below frac (m + 1);
    None when every row is kept (fewer than j + 1 values)."""
    c = frac_own * (Hf[k] + 1)
    j = math.ceil(c) - 1
    if j + 1 > Hf[k]:
        return None
    return float(np.sort(H[k, :Hf[k]])[::-1][j])


def run_and_record(X, s, lam, frac, step_scale=1.0, rho=RHO, m=RING):
    """The reference's rounds (``_partial_ref.partial_pass``, unweighted, no forgetting) with
    each round's F_t recorded; returns (iterates, rounds, gradients)."""
    p = X.shape[1]
    w, xbar, Sigma = np.zeros(p), np.zeros((2, p)), np.zeros((2, p, p))
    W, N = np.zeros(2), np.zeros(2, np.int64)
    H, Hn, Hf = np.zeros((2, m)), np.zeros(2, np.int64), np.zeros(2, np.int64)
    iterates, rounds, grads = [], [], []
    for t, (x, y) in enumerate(zip(X, s), start=1):
        own, opp = (1, 0) if y > 0 else (0, 1)
        g = lam * w
        rnd = None
        if N[opp] > 0:
            a = y * (x - xbar[opp])
            Sw = Sigma[opp] @ w
            mu, s2 = float(w @ a), float(w @ Sw)
            _, d_mu, d_s2 = cvar_grad(frac[opp], mu, s2)
            _, m_mu, m_s2 = cvar_grad(1.0, mu, s2)
            f_own, eta_cut = 1.0, 0.0
            if frac[own] < 1.0 and N[own] > 0:
                so = math.sqrt(max(float(w @ Sigma[own] @ w), 0.0))
                u_cut = ring_cut(H, Hf, own, frac[own]) if so > 0.0 else None
                if u_cut is not None:      # psi at the cut: u = u_cut, mu = mu_cut
                    mu_cut = -u_cut * so + y * float(w @ (xbar[own] - xbar[opp]))
                    eta_cut = float(cvar_grad(frac[opp], mu_cut, s2)[0])
                f_own = frac[own]
            # the library's own selection (the ring is pushed as in the pass)
            sel, u = own_selection(w, x, y, xbar[own], Sigma[own], N[own], frac[own],
                                   H, Hn, Hf, own)
            rnd = (a.copy(), Sigma[opp].copy(), frac[opp], f_own, eta_cut, rho)
            g = g + (1.0 - rho) * sel * (d_mu * a + 2.0 * d_s2 * Sw) \
                + rho * (m_mu * a + 2.0 * m_s2 * Sw)
        iterates.append(w.copy())
        rounds.append(rnd)
        grads.append(float(g @ g))
        W[own] = moment_update(x, xbar[own], Sigma[own], W[own], 1.0, 1.0)
        N[own] += 1
        w = w - step_scale / (lam * t) * g
    return np.array(iterates), rounds, np.array(grads)


def stack(rounds):
    """The recorded rounds as arrays (rounds before the other class had rows: loss 0)."""
    keep = [r for r in rounds if r is not None]
    idx = np.array([i for i, r in enumerate(rounds) if r is not None])
    A = np.array([r[0] for r in keep])
    S = np.array([r[1] for r in keep])
    return idx, A, S, np.array([r[2] for r in keep]), np.array([r[3] for r in keep]), \
        np.array([r[4] for r in keep]), np.array([r[5] for r in keep])


def losses(W, stacked):
    """f_t(w) of every recorded round at each row of W: shape (len(W), rounds)."""
    _, A, S, f_opp, f_own, eta, rho = stacked
    W = np.atleast_2d(W)
    mu = W @ A.T
    s2 = np.einsum("kj,tjl,kl->kt", W, S, W)
    psi = np.empty_like(mu)
    for level in np.unique(f_opp):
        cols = f_opp == level
        psi[:, cols] = cvar_grad(float(level), mu[:, cols], s2[:, cols])[0]
    sel = f_own < 1.0
    out = psi.copy()
    out[:, sel] = eta[sel] + np.maximum(psi[:, sel] - eta[sel], 0.0) / f_own[sel]
    return (1.0 - rho) * out + rho * np.asarray(cvar_grad(1.0, mu, s2)[0])


def regret(iterates, stacked, lam, upto, starts):
    idx = stacked[0]
    m = int(np.searchsorted(idx, upto))               # recorded rounds among the first upto
    part = (idx[:m],) + tuple(x[:m] for x in stacked[1:])
    its = iterates[:upto]
    played = 0.5 * lam * float(np.sum(its * its)) + float(
        np.sum(losses(iterates[part[0]], part).diagonal()))

    def total(w):
        return 0.5 * lam * upto * float(w @ w) + float(losses(w, part).sum())

    best = np.inf
    for w0 in starts:
        res = minimize(total, w0, method="L-BFGS-B")
        best = min(best, res.fun, total(w0))
    return played - best


def run(profile, seed, out_dir):
    rng = np.random.default_rng(seed)
    records = []
    n_pairs = 1000 if profile == "quick" else 30000
    worst = convexity(rng, n_pairs)
    records.append(R.emit(R.upper_bound(
        "midpoint convexity of the round loss (worst rel. excess)", f"<= {TOL_CONVEX}",
        worst, TOL_CONVEX, sizes=f"{n_pairs} random pairs", seed=seed)))
    bad = convexity(rng, n_pairs, selected=True)
    records.append(R.emit(R.upper_bound(
        "control: loss selected by score, 1[w.a <= tau] psi_beta", f"<= {TOL_CONVEX}", bad,
        TOL_CONVEX, sizes=f"{n_pairs} random pairs", seed=seed, negative=True)))

    T = 400 if profile == "quick" else 8000
    lam = 0.5
    for label, frac in (("one-way beta 0.2", np.array([0.2, 1.0])),
                        ("two-way beta 0.2 gamma 0.5", np.array([0.2, 0.5]))):
        X, s = stream(np.random.default_rng(seed + 1), T)
        its, rounds, g2 = run_and_record(X, s, lam, frac)
        stacked = stack(rounds)
        G2 = float(g2.max())
        curve = []
        for upto in (T // 8, T // 4, T // 2, T):
            reg = regret(its, stacked, lam, upto, [its[upto - 1], np.zeros(X.shape[1])])
            bound = float(np.sum(g2[:upto] / (2.0 * lam * np.arange(1, upto + 1))))
            curve.append(f"T={upto}: {reg:.3g} <= {bound:.3g} (G^2(1+lnT)/2lam "
                         f"{G2 * (1 + math.log(upto)) / (2 * lam):.3g})")
        print("   regret curve " + label + ": " + "; ".join(curve))
        records.append(R.emit(R.upper_bound(
            f"regret, {label}", "measured <= sum ||g_t||^2 / (2 lam t)", reg, bound,
            sizes=f"T={T} p=3 lam={lam}", seed=seed, note="; ".join(curve))))
        records.append(R.emit(R.upper_bound(
            f"control: the bound claimed {CONTROL_FACTOR:g}x tighter, {label}",
            f"measured <= sum ||g_t||^2 / (2 lam t) / {CONTROL_FACTOR:g}", reg,
            bound / CONTROL_FACTOR, sizes=f"T={T} p=3 lam={lam}", seed=seed, negative=True)))
    return records
