"""NumPy reference of the linear second-order learners (OAUC-M, OAUC-M_c, OAUC-S).

One line per equation of Luo, Cheng & Zhang, "Online AUC Optimization Based on
Second-order Surrogate Loss" (Section 4, Algorithm 1). Same signature and the same
sample order as the Cython kernel :func:`sosl._core._linear.linear_pass`, so the two can
be compared to ~1e-12; verify/ and plots/ use these functions too.

Symbols
-------
=========  ==========================================  ==============================
symbol     paper                                       public name
=========  ==========================================  ==============================
w          w_t, the weight vector                      ``coef_``
s          y_t in {-1, +1}                             ``classes_[1]`` -> +1
xbar       xbar_t^{+/-}, class means (eqs. 15, 17)     ``means_`` (row 0: negative)
Sigma      Sigma_t^{+/-}, class covariances (16, 18)   ``covariances_``
N          N_t^{+/-}, class counts                     ``counts_``
a          y_t (x_t - xbar_t), xbar_t of the opposite  -
mu         y_t w^T (x_t - xbar_t) = w.a                 -
s2         w^T Sigma_t w (sigma^2)                      -
lam        lambda, Tikhonov weight                     ``lam``
eta        eta_t (constant) or 1/(lam t)               ``eta``
=========  ==========================================  ==============================

Conventions
-----------
* ``loss=0`` is psi_M (eq. 8), ``loss=1`` is psi_S (eq. 3).
* The psi_S gradient is the exact derivative of psi_S(w.a, w^T Sigma w) =
  (1 - w.a)^2 + w^T Sigma w, i.e. ``2 * [-(1 - mu) a + Sigma w]``. Eq. (13) of the paper
  omits the factor 2 (it is half the derivative); with a constant step the two differ only
  by a rescaling of eta by 2.
* ``eta <= 0`` selects the step 1/(lam t) of Theorem 6; ``eta > 0`` a constant step.
* The covariance is updated in the centered (Welford) form, equal to eqs. (16)/(18) in
  exact arithmetic but free of their cancellation.
"""

import numpy as np

__all__ = ["psi_m", "psi_s", "grad_psi_m", "grad_psi_s", "welford_update", "linear_pass",
           "LOSS_M", "LOSS_S"]

LOSS_M = 0
LOSS_S = 1


def psi_m(mu, s2):
    """Second-order hinge surrogate psi_M(mu, sigma^2), eq. (8)."""
    b = 1.0 - mu
    return 0.5 * (b + np.sqrt(b * b + s2))


def psi_s(mu, s2):
    """Second-order square surrogate psi_S(mu, sigma^2), eq. (3)."""
    return (1.0 - mu) ** 2 + s2


def grad_psi_m(w, a, Sigma):
    """Gradient in w of psi_M(w.a, w^T Sigma w), eq. (14) without the division by sigma.

    With b = 1 - w.a and A = sqrt(b^2 + w^T Sigma w),
    grad = -(1/2)(1 + b/A) a + Sigma w / (2A). This equals eq. (14) (Phi_M(v) = (1 + b/A)/2
    and phi_M(v)/sigma = 1/(2A)) but stays defined at sigma = 0. A = 0 only when b = 0 and
    Sigma w = 0; there the one-sided derivative -(1/2) a is used.
    """
    Sw = Sigma @ w
    b = 1.0 - w @ a
    A = np.sqrt(b * b + max(w @ Sw, 0.0))
    if A == 0.0:
        return -0.5 * a
    return -0.5 * (1.0 + b / A) * a + Sw / (2.0 * A)


def grad_psi_s(w, a, Sigma):
    """Gradient in w of psi_S(w.a, w^T Sigma w): 2[-(1 - w.a) a + Sigma w] (2 x eq. (13))."""
    return 2.0 * (-(1.0 - w @ a) * a + Sigma @ w)


def welford_update(x, xbar, Sigma, N):
    """Add x to a class with N instances, mean xbar and covariance Sigma (in place).

    Eqs. (15)-(18) in centered form:
    xbar <- xbar + (x - xbar)/N', Sigma <- Sigma + ((x - xbar_old)(x - xbar_new)^T - Sigma)/N'.
    Returns the new count N' = N + 1.
    """
    N = N + 1
    d_old = x - xbar
    xbar += d_old / N                                           # eq. (15)/(17)
    d_new = x - xbar
    Sigma += (np.outer(d_old, d_new) - Sigma) / N               # eq. (16)/(18), Welford
    return N


def linear_pass(X, s, order, w, xbar, Sigma, N, t0, lam, eta, loss):
    """One online pass of Algorithm 1 over ``X[order]`` (state updated in place).

    Parameters
    ----------
    X : ndarray (n, p)
    s : ndarray (n,) of +-1.0
    order : ndarray (m,) of intp, the rows to visit, in order
    w : ndarray (p,), the weights w_t (updated)
    xbar : ndarray (2, p), class means, row 0 negative, row 1 positive (updated)
    Sigma : ndarray (2, p, p), class covariances (updated)
    N : ndarray (2,) of int64, class counts (updated)
    t0 : int, rounds already played
    lam, eta : float, regularization and step (eta <= 0 means 1/(lam t))
    loss : int, LOSS_M or LOSS_S

    Returns
    -------
    t : int, rounds played after the pass
    """
    t = t0
    for i in order:
        t += 1
        x, y = X[i], s[i]
        own, opp = (1, 0) if y > 0 else (0, 1)
        eta_t = eta if eta > 0 else 1.0 / (lam * t)             # step: constant or 1/(lam t)
        g = lam * w                                             # gradient of (lam/2)||w||^2
        if N[opp] > 0:
            a = y * (x - xbar[opp])                             # a = y_t (x_t - xbar_t)
            if loss == LOSS_M:
                g = g + grad_psi_m(w, a, Sigma[opp])            # eq. (14)
            else:
                g = g + grad_psi_s(w, a, Sigma[opp])            # eq. (13) x 2
        N[own] = welford_update(x, xbar[own], Sigma[own], N[own])   # eqs. (15)-(18)
        w -= eta_t * g                                          # eq. (12)
    return t
