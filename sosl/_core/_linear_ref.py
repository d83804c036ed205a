"""NumPy reference of the linear second-order learners (OAUC-M, OAUC-M_c, OAUC-S).

One line per equation of Luo, Cheng & Zhang, "Online AUC Optimization Based on
Second-order Surrogate Loss" (Section 4, Algorithm 1). Same signature and the same
sample order as the Cython kernel :func:`sosl._core._linear.linear_pass`, so the two can
be compared to ~1e-12; verify/ and plots/ use these functions too. The losses come from
:mod:`sosl._core._losses_ref`, the round prologue and the moment update from
:mod:`sosl._core._moments_ref`.

Symbols
-------
=========  ==========================================  ==============================
symbol     paper                                       public name
=========  ==========================================  ==============================
w          w_t, the weight vector                      ``w_`` (``coef_[0]``)
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
* ``loss`` is a ``Loss`` code, ``schedule`` a ``Schedule`` code (``sosl._core._codes``):
  ``STEP_INV_LAM_T`` is the step 1/(lam t) of Theorem 6, ``STEP_CONSTANT`` the step ``eta``.
* The psi_S gradient is the exact derivative of psi_S(w.a, w^T Sigma w) =
  (1 - w.a)^2 + w^T Sigma w, i.e. ``2 * [-(1 - mu) a + Sigma w]``. Eq. (13) of the paper
  omits the factor 2 (it is half the derivative); with a constant step the two differ only
  by a rescaling of eta by 2.
* Rounds before the other class has appeared carry only the regularizer.
* The covariance is updated in the centered (Welford) form, equal to eqs. (16)/(18) in
  exact arithmetic but free of their cancellation.
"""

from ._losses_ref import LOSS_M, LOSS_S, grad_w, psi_m, psi_s
from ._moments_ref import moment_update, round_prologue, welford_update

__all__ = ["linear_pass", "fixed_pass", "psi_m", "psi_s", "welford_update", "grad_psi_m",
           "grad_psi_s"]


def grad_psi_m(w, a, Sigma):
    """Gradient in w of psi_M(w.a, w' Sigma w) (the shared loss, eq. 14)."""
    return grad_w(LOSS_M, w, a, Sigma)


def grad_psi_s(w, a, Sigma):
    """Gradient in w of psi_S(w.a, w' Sigma w) (the shared loss, 2 x eq. 13)."""
    return grad_w(LOSS_S, w, a, Sigma)



def round_gradient(w, x, y, v, xbar_o, Sigma_o, N_o, lam, loss):
    """g of eq. (12) at round t: the regularizer's gradient, plus the row's loss term
    (weight v) against the other class's mean and covariance once it has rows."""
    g = lam * w                                                 # gradient of (lam/2)||w||^2
    if N_o > 0:
        a = y * (x - xbar_o)                                    # a = y_t (x_t - xbar_t)
        g = g + v * grad_w(loss, w, a, Sigma_o)                 # eq. (14) / eq. (13) x 2
    return g

def linear_pass(X, s, order, w, xbar, Sigma, N, t0, lam, eta, schedule, loss, beta=1.0,
                W=None, sw=None):
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
    lam, eta : float, regularization and constant step (read with STEP_CONSTANT only)
    schedule : int, a ``Schedule`` code
    loss : int, a ``Loss`` code
    beta : float in (0, 1], forgetting factor of the class moments (1: none)
    W : ndarray (2,) of float, decayed class weights (updated); None when beta = 1
        (then the weights are the counts N); required with ``sw``
    sw : ndarray (n,) of float > 0, importance weights of the rows, or None (all 1): a
        row of weight v counts v times in its class's moments and scales its loss term

    Returns
    -------
    t : int, rounds played after the pass
    """
    t = t0
    if sw is not None and W is None:
        raise ValueError("linear_pass: weighted rows need the class weights W")
    for i in order:
        t += 1
        x, y = X[i], s[i]
        v = 1.0 if sw is None else sw[i]                        # the row's weight
        own, opp, eta_t = round_prologue(y, t, schedule, eta, lam)
        g = round_gradient(w, x, y, v, xbar[opp], Sigma[opp], N[opp], lam, loss)
        Wk = N[own] if W is None else W[own]
        Wk = moment_update(x, xbar[own], Sigma[own], Wk, beta, v)  # eqs. (15)-(18)
        if W is not None:
            W[own] = Wk
        N[own] += 1
        w -= eta_t * g                                          # eq. (12)
    return t


def fixed_pass(X, s, order, w, xbar, Sigma, N, t0, lam, eta, schedule, loss, sw=None):
    """Rounds of Algorithm 1 over ``X[order]`` against fixed class moments (w in place).

    As :func:`linear_pass` with eqs. (15)-(18) left out: every round meets the given
    ``xbar`` (2, p) and ``Sigma`` (2, p, p) of the other class, which do not change; ``N``
    (2,) only tells which class has rows (none: the round only shrinks w). Same signature
    as the kernel :func:`sosl._core._linear.fixed_pass` without its ``blas_min_p`` and
    ``work``; returns the round counter after the pass.
    """
    t = t0
    for i in order:
        t += 1
        x, y = X[i], s[i]
        v = 1.0 if sw is None else sw[i]                        # the row's weight
        own, opp, eta_t = round_prologue(y, t, schedule, eta, lam)
        g = round_gradient(w, x, y, v, xbar[opp], Sigma[opp], N[opp], lam, loss)
        w -= eta_t * g                                          # eq. (12)
    return t
