"""NumPy reference of PartialOAUCM's pass (``_partial.pyx``), one line per equation.

Same sample order and the same rounds as :func:`sosl._core._partial.partial_pass`, on the
covariances themselves rather than the kernel's scaled scatters; the two agree to ~1e-12.
The loss is :func:`sosl._core._losses_ref.cvar_grad` (psi_beta), the prologue and the moment
update those of :mod:`sosl._core._moments_ref`. Derivation: docs/user_guide/partial_auc.md.

Symbols
-------
=========  =================================================  =======================
symbol     meaning                                            public name
=========  =================================================  =======================
w          weights (the iterate)                              ``w_``
wbar       the t-weighted average of the iterates             ``w_avg_``
xbar       class means (row 0 negative)                       ``means_``
Sigma      class covariances                                  ``covariances_``
W, N       class (forgetting-) weights and counts             ``weights_``, ``counts_``
frac       share of each class kept: [beta, gamma]            ``max_fpr``, 1 - ``min_tpr``
a, mu, s2  y (x - xbar_o), w.a, w' Sigma_o w                  -
u          a row's hardness in its own class before its       -
           round: -y w.(x - xbar_own) / sigma_own
H          per class, the last m hardness values (a ring)     ``selection_scores_``
Hn, Hf     per class, the ring's next slot and filled count   ``selection_next_``,
                                                              ``selection_filled_``
sel        1/frac[own] when the row is inside its class's     -
           selected share, else 0
rho        weight of the full-AUC loss psi_M in the mix       ``auc_weight``
=========  =================================================  =======================
"""

import numpy as np

from ._losses_ref import cvar_grad
from ._moments_ref import moment_update, round_prologue

__all__ = ["partial_pass", "own_selection"]


def own_selection(w, x, y, xbar_own, Sigma_own, N_own, frac_own, H, Hn, Hf, k):
    """(sel, u): sel = 1/frac when the row is inside its own class's kept share, else 0,
    read against the class's ring ``H[k]`` of the last hardness values (the row's rank
    among them and itself is at most frac times their number); u, the row's hardness, is
    pushed into the ring (NaN and nothing pushed when the share is 1, the class has no rows
    yet or its scores no spread: then sel = 1, 1/frac, 1/frac)."""
    if frac_own >= 1.0 or N_own == 0:
        return 1.0, np.nan
    sigma_own = np.sqrt(max(float(w @ Sigma_own @ w), 0.0))            # own scores' spread
    if not sigma_own > 0.0:
        return 1.0 / frac_own, np.nan
    u = -y * float(w @ (x - xbar_own)) / sigma_own                      # higher: harder
    above = int(np.sum(H[k, :Hf[k]] > u))                               # kept rows harder
    inside = above < frac_own * (Hf[k] + 1)                             # rank <= frac (m+1)
    H[k, Hn[k]] = u                                                     # ring push
    Hn[k] = (Hn[k] + 1) % H.shape[1]
    Hf[k] = min(Hf[k] + 1, H.shape[1])
    return (1.0 / frac_own if inside else 0.0), u


def partial_pass(X, s, order, w, xbar, Sigma, W, N, t0, lam, eta, schedule, beta, frac, rho,
                 H, Hn, Hf, sw=None, wbar=None):
    """PartialOAUCM's rounds over ``X[order]``, state in place; returns the round counter.

    ``Sigma`` (2, p, p) are covariances, ``W`` (2,) the decayed class weights, ``N`` (2,)
    counts, ``H`` (2, m), ``Hn``, ``Hf`` (2,) the selection rings; the other parameters as
    in the kernel; ``wbar`` (p,), if given, the t-weighted average of the iterates, in
    place (the rounds read only w).
    """
    t = t0
    for i in order:
        t += 1
        x, y = X[i], s[i]
        v = 1.0 if sw is None else sw[i]
        own, opp, eta_t = round_prologue(y, t, schedule, eta, lam)
        g = lam * w                                                     # (lam/2)||w||^2
        if N[opp] > 0:
            a = y * (x - xbar[opp])                                     # a = y (x - xbar_o)
            Sw = Sigma[opp] @ w
            mu, s2 = float(w @ a), float(w @ Sw)
            _, d_mu, d_s2 = cvar_grad(frac[opp], mu, s2)                # psi_beta
            _, m_mu, m_s2 = cvar_grad(1.0, mu, s2)                      # psi_M
            sel, _ = own_selection(w, x, y, xbar[own], Sigma[own], N[own], frac[own],
                                   H, Hn, Hf, own)
            g = g + v * ((1.0 - rho) * sel * (d_mu * a + 2.0 * d_s2 * Sw)   # chain rule,
                         + rho * (m_mu * a + 2.0 * m_s2 * Sw))                # mixed loss
        W[own] = moment_update(x, xbar[own], Sigma[own], W[own], beta, v)   # eqs. (15)-(18)
        N[own] += 1
        w -= eta_t * g                                                  # eq. (12)
        if wbar is not None:
            wbar += 2.0 / (t + 1) * (w - wbar)                          # sum t w_t / sum t
    return t
