"""NumPy twin of ``_losses.pxd``: the surrogate losses, their partial derivatives and the
constants the learners need from each loss (the kernel learners' scale, the gradient bounds
of the linear learners' no-copy argument).

One line per equation of Luo, Cheng & Zhang; the typed kernels use ``_losses.pxd``, the
references, ``verify/`` and ``plots/`` use this module, the estimators the compiled view
``_losses.pyx`` (:func:`sosl._core._losses.loss_constants`). Each function has one explicit
branch per ``Loss`` code and raises ``ValueError`` for any other.

Adding a pairwise loss psi_X(mu, s2) touches exactly these files:

1. ``_codes.pxd``: a code ``LOSS_X`` in ``cpdef enum Loss``;
2. ``_losses.pxd``: a branch for it in ``loss_grad``, ``loss_scale``, ``grad_bound`` and
   ``curvature_bound`` (derive G and H as the comments there do, for rows in [-R, R]^p);
3. this file: the same branches in ``psi``, ``loss_grad``, ``loss_scale``, ``grad_bound``
   and ``curvature_bound``;
4. the estimator table: a class with ``_loss = int(Loss.LOSS_X)`` beside ``OAUCM`` in
   ``sosl/linear.py`` (or the kernel learners' ``sosl/okauc.py``), or an entry in the
   ``_LOSSES`` table of ``sosl/sketch.py``, and the new name in ``sosl/__init__.py``.

Nothing else branches on a ``Loss`` code
(tests/_core/test_losses.py::test_no_branch_on_a_loss_code_outside_the_home); every code has its
branch here and in the .pxd, the two agreeing to 1e-12
(tests/_core/test_losses.py::test_compiled_loss_equals_reference), and the exported bounds bound
the step they are used for
(tests/_core/test_losses.py::test_exported_bounds_hold_at_the_extreme_cases_and_are_not_loose).
The passes, the references and the no-copy argument of ``sosl.linear`` read the constants
from here (a new loss also gets a row in tests/_core/test_losses.py's parametrization for free:
the tests run over every ``Loss`` code).

Symbols
-------
====  ===============================================  ==========
mu    y_t w.(x_t - xbar_t), margin against the other   -
      class's mean
s2    w' Sigma_t w = sigma^2, variance of the other     -
      class's scores
b     1 - mu                                            -
A     sqrt(b^2 + s2)                                    -
R     max |x_j| over the rows seen                      -
G, H  gradient and curvature bounds (``_losses.pxd``)   -
====  ===============================================  ==========
"""

import numpy as np

from ._codes import Loss

__all__ = ["psi_m", "psi_s", "psi", "loss_grad", "grad_w", "loss_scale", "grad_bound",
           "curvature_bound", "psi_cvar", "cvar_grad", "cvar_grad_w"]

LOSS_M = int(Loss.LOSS_M)
LOSS_S = int(Loss.LOSS_S)


def psi_m(mu, s2):
    """psi_M(mu, s2) = ((1 - mu) + sqrt((1 - mu)^2 + s2)) / 2, eq. (8); vectorized."""
    b = 1.0 - np.asarray(mu, dtype=float)
    return 0.5 * (b + np.sqrt(b * b + np.maximum(s2, 0.0)))


def psi_s(mu, s2):
    """psi_S(mu, s2) = (1 - mu)^2 + s2, eq. (3); vectorized."""
    return (1.0 - np.asarray(mu, dtype=float)) ** 2 + np.asarray(s2, dtype=float)


def _unknown(loss):
    return ValueError(f"unknown Loss code {loss!r}: no branch for it in _losses_ref")


def psi(loss, mu, s2):
    """psi_M or psi_S by ``Loss`` code."""
    if loss == LOSS_M:
        return psi_m(mu, s2)
    if loss == LOSS_S:
        return psi_s(mu, s2)
    raise _unknown(loss)


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
    elif loss == LOSS_S:
        value, d_mu, d_s2 = b * b + s2, -2.0 * b, np.ones_like(b)       # eq. (13), factor 2
    else:
        raise _unknown(loss)
    return value[()], d_mu[()], d_s2[()]


def grad_w(loss, w, a, Sigma):
    """Gradient in w of psi(w.a, w' Sigma w): d_mu a + 2 d_s2 Sigma w (chain rule)."""
    Sw = Sigma @ w
    _, d_mu, d_s2 = loss_grad(loss, float(w @ a), float(w @ Sw))
    return d_mu * a + 2.0 * d_s2 * Sw


def loss_scale(loss):
    """Factor of the kernel learners on the loss: psi_M, psi_S / 2 (Section 5.2, eq. 27)."""
    if loss == LOSS_M:
        return 1.0
    if loss == LOSS_S:
        return 0.5
    raise _unknown(loss)


def grad_bound(loss):
    """G with ||g0|| <= G R sqrt(p), where g(w) = g0 + M w (see ``_losses.pxd``)."""
    if loss == LOSS_M:
        return 3.0      # M = 0, ||g|| <= |d_mu| ||a|| + ||Sigma w|| / (2 A) <= (2 + 1/2) R sqrt(p)
    if loss == LOSS_S:
        return 4.0      # g0 = -2 a, ||a|| <= 2 R sqrt(p)
    raise _unknown(loss)


def curvature_bound(loss):
    """H with 0 <= M <= H R^2 p, where g(w) = g0 + M w (see ``_losses.pxd``)."""
    if loss == LOSS_M:
        return 0.0
    if loss == LOSS_S:
        return 10.0     # M = 2 (a a' + Sigma), ||a||^2 <= 4 R^2 p, ||Sigma|| <= R^2 p
    raise _unknown(loss)


def psi_cvar(frac, mu, s2):
    """psi_beta(mu, s2) with beta = ``frac``: the worst-case CVaR_beta of the pairwise hinge
    loss over the other class with the kept mean and variance (PartialOAUCM); psi_M at 1."""
    return cvar_grad(frac, mu, s2)[0]


def cvar_grad(frac, mu, s2):
    """(psi_beta, d psi/d mu, d psi/d s2) at (mu, s2), scalars or arrays; twin of
    ``_losses.pxd``'s ``cvar_grad`` (derivation: docs/user_guide/partial_auc.md)."""
    if frac >= 1.0:
        return loss_grad(LOSS_M, mu, s2)                                # beta = 1: Lemma 2
    if not frac > 0.0:
        raise ValueError(f"cvar_grad: the level must be in (0, 1], got {frac!r}")
    mu = np.asarray(mu, dtype=float)
    b = 1.0 - mu
    sigma = np.sqrt(np.maximum(np.asarray(s2, dtype=float), 0.0))
    k = np.sqrt((1.0 - frac) / frac)
    first = 2.0 * np.sqrt(frac * (1.0 - frac)) * b >= (2.0 * frac - 1.0) * sigma   # b >= c*
    m_value, m_mu, m_s2 = loss_grad(LOSS_M, mu, s2)
    safe = np.where(sigma > 0.0, sigma, 1.0)
    value = np.where(first, b + k * sigma, np.asarray(m_value) / frac)     # eta* > 0 / eta* = 0
    d_mu = np.where(first, -1.0, np.asarray(m_mu) / frac)
    d_s2 = np.where(first, np.where(sigma > 0.0, 0.5 * k / safe, 0.0), np.asarray(m_s2) / frac)
    return value[()], d_mu[()], d_s2[()]


def cvar_grad_w(frac, w, a, Sigma):
    """Gradient in w of psi_beta(w.a, w' Sigma w): d_mu a + 2 d_s2 Sigma w."""
    Sw = Sigma @ w
    _, d_mu, d_s2 = cvar_grad(frac, float(w @ a), float(w @ Sw))
    return d_mu * a + 2.0 * d_s2 * Sw
