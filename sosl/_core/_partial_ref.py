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
w          weights                                            ``w_``
xbar       class means (row 0 negative)                       ``means_``
Sigma      class covariances                                  ``covariances_``
W, N       class (forgetting-) weights and counts             ``weights_``, ``counts_``
frac       share of each class kept: [beta, gamma]            ``max_fpr``, 1 - ``min_tpr``
zq         Phi^{-1}(1 - frac), the own-class cut (normal)     -
a, mu, s2  y (x - xbar_o), w.a, w' Sigma_o w                  -
sel        1/frac[own] when the row is inside its class's     -
           selected share, else 0
=========  =================================================  =======================
"""

import numpy as np

from ._losses_ref import cvar_grad
from ._moments_ref import moment_update, round_prologue

__all__ = ["partial_pass", "own_selection"]


def own_selection(w, x, y, xbar_own, Sigma_own, N_own, frac_own, zq_own):
    """1/frac when the row is inside its own class's kept share (or the share is 1, or the
    class has no rows yet: then 1), else 0; the cut is read under a normal model."""
    if frac_own >= 1.0 or N_own == 0:
        return 1.0
    sigma_own = np.sqrt(max(float(w @ Sigma_own @ w), 0.0))            # own scores' spread
    inside = y * float(w @ (x - xbar_own)) <= -zq_own * sigma_own       # in the top / bottom
    return 1.0 / frac_own if inside else 0.0


def partial_pass(X, s, order, w, xbar, Sigma, W, N, t0, lam, eta, schedule, beta, frac, zq,
                 sw=None):
    """PartialOAUCM's rounds over ``X[order]``, state in place; returns the round counter.

    ``Sigma`` (2, p, p) are covariances, ``W`` (2,) the decayed class weights, ``N`` (2,)
    counts; the other parameters as in the kernel.
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
            _, d_mu, d_s2 = cvar_grad(frac[opp], float(w @ a), float(w @ Sw))   # psi_beta
            sel = own_selection(w, x, y, xbar[own], Sigma[own], N[own], frac[own], zq[own])
            g = g + v * sel * (d_mu * a + 2.0 * d_s2 * Sw)             # chain rule
        W[own] = moment_update(x, xbar[own], Sigma[own], W[own], beta, v)   # eqs. (15)-(18)
        N[own] += 1
        w -= eta_t * g                                                  # eq. (12)
    return t
