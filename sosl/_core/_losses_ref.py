"""NumPy twin of ``_losses.pxd``: the surrogate losses and their partial derivatives.

One line per equation of Luo, Cheng & Zhang; the typed kernels use ``_losses.pxd``, the
references, ``verify/`` and ``plots/`` use this module. Changing a loss touches these two
files.

Symbols
-------
====  ===============================================  ==========
mu    y_t w.(x_t - xbar_t), margin against the other   -
      class's mean
s2    w' Sigma_t w = sigma^2, variance of the other     -
      class's scores
b     1 - mu                                            -
A     sqrt(b^2 + s2)                                    -
====  ===============================================  ==========
"""

import numpy as np

from ._codes import Loss

__all__ = ["psi_m", "psi_s", "psi", "loss_grad", "grad_w"]

LOSS_M = int(Loss.LOSS_M)
LOSS_S = int(Loss.LOSS_S)


def psi_m(mu, s2):
    """psi_M(mu, s2) = ((1 - mu) + sqrt((1 - mu)^2 + s2)) / 2, eq. (8); vectorized."""
    b = 1.0 - np.asarray(mu, dtype=float)
    return 0.5 * (b + np.sqrt(b * b + np.maximum(s2, 0.0)))


def psi_s(mu, s2):
    """psi_S(mu, s2) = (1 - mu)^2 + s2, eq. (3); vectorized."""
    return (1.0 - np.asarray(mu, dtype=float)) ** 2 + np.asarray(s2, dtype=float)


def psi(loss, mu, s2):
    """psi_M or psi_S by ``Loss`` code."""
    return psi_m(mu, s2) if loss == LOSS_M else psi_s(mu, s2)


def loss_grad(loss, mu, s2):
    """(psi, d psi/d mu, d psi/d s2) at (mu, s2), scalars or arrays; the kink as in the .pxd."""
    mu = np.asarray(mu, dtype=float)
    s2 = np.asarray(s2, dtype=float)
    b = 1.0 - mu
    if loss == LOSS_M:
        A = np.sqrt(b * b + np.maximum(s2, 0.0))
        safe = np.where(A > 0.0, A, 1.0)
        value = 0.5 * (b + A)                                           # eq. (8)
        d_mu = np.where(A > 0.0, -0.5 * (1.0 + b / safe), -0.5)         # eq. (14): Phi_M
        d_s2 = np.where(A > 0.0, 0.25 / safe, 0.0)                      # phi_M / sigma
    else:
        value, d_mu, d_s2 = b * b + s2, -2.0 * b, np.ones_like(b)       # eq. (13), factor 2
    return value[()], d_mu[()], d_s2[()]


def grad_w(loss, w, a, Sigma):
    """Gradient in w of psi(w.a, w' Sigma w): d_mu a + 2 d_s2 Sigma w (chain rule)."""
    Sw = Sigma @ w
    _, d_mu, d_s2 = loss_grad(loss, float(w @ a), float(w @ Sw))
    return d_mu * a + 2.0 * d_s2 * Sw
