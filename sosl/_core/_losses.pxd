# cython: language_level=3
"""The surrogate losses, once, for every typed kernel, with what the learners need to know
about each (cimport; the Python-visible twin is the small extension ``_losses.pyx``).

Both losses are functions of ``mu = y w.(x - xbar)`` (the margin against the mean of the
other class) and ``s2 = w' Sigma w`` (the variance of the scores of the other class):

    psi_M(mu, s2) = ((1 - mu) + sqrt((1 - mu)^2 + s2)) / 2          eq. (8)
    psi_S(mu, s2) = (1 - mu)^2 + s2                                  eq. (3)

``loss_grad`` returns the value and writes both partial derivatives. A gradient in w follows
by the chain rule, ``d_mu * a + 2 * d_s2 * Sigma w``; in function space (kernel learners) the
same two numbers weight the new instance and the centred buffer scores.

Convention at the kink of psi_M (b = 1 - mu = 0 and s2 = 0, where sqrt is not
differentiable): the one-sided derivative ``d_mu = -1/2, d_s2 = 0`` is used. A negative
``s2`` (round-off of a PSD quadratic form) is read as 0.

Per loss, beside the value (one explicit branch per ``Loss`` code in each function):

* ``loss_scale``: the factor the kernel learners put on the loss (OKAUC-S minimizes
  psi_S / 2, eq. 27).
* ``grad_bound`` G and ``curvature_bound`` H, the constants of the linear learners' no-copy
  argument (``sosl.linear``): for rows with every ``|x_j| <= R`` (so ``||a|| <= 2 R sqrt(p)``
  and ``trace(Sigma) <= p R^2``), the w-gradient splits as ``g(w) = g0 + M w`` with
  ``||g0|| <= G R sqrt(p)`` and ``0 <= M <= H R^2 p`` (as matrices). A step
  ``w' = (1 - eta lam) w - eta g(w)`` then satisfies ``||w'|| <= ||w|| + eta G R sqrt(p)``
  whenever ``eta (lam + H R^2 p) <= 2``.

An unknown code gives NaN everywhere (these functions cannot raise inside a pass): a pass
then reports a non-finite state, and every ``<=`` of a no-copy proof is false, so the safe
path is taken. The Python-visible functions raise instead.

The NumPy twin, one line per equation, is :mod:`sosl._core._losses_ref`; its module
docstring lists the files a new loss touches.
"""

from libc.math cimport NAN, sqrt

from sosl._core._codes cimport LOSS_M, LOSS_S


cdef inline double loss_grad(int loss, double mu, double s2, double* d_mu,
                             double* d_s2) noexcept nogil:
    """psi(mu, s2) for ``loss`` (a ``Loss`` code), with d psi/d mu and d psi/d s2."""
    cdef double b = 1.0 - mu
    cdef double A
    if loss == LOSS_M:
        if s2 < 0.0:
            s2 = 0.0
        A = sqrt(b * b + s2)
        if A == 0.0:
            d_mu[0] = -0.5
            d_s2[0] = 0.0
        else:
            d_mu[0] = -0.5 * (1.0 + b / A)
            d_s2[0] = 0.25 / A
        return 0.5 * (b + A)
    if loss == LOSS_S:
        d_mu[0] = -2.0 * b
        d_s2[0] = 1.0
        return b * b + s2
    d_mu[0] = NAN
    d_s2[0] = NAN
    return NAN


cdef inline double loss_scale(int loss) noexcept nogil:
    """Factor of the kernel learners on the loss: psi_M, psi_S / 2 (eq. 27)."""
    if loss == LOSS_M:
        return 1.0
    if loss == LOSS_S:
        return 0.5
    return NAN


cdef inline double grad_bound(int loss) noexcept nogil:
    """G: ||g0|| <= G R sqrt(p), the part of the w-gradient not proportional to w."""
    if loss == LOSS_M:
        # M = 0: |d_mu| <= 1 and 2 d_s2 ||Sigma w|| <= sqrt(||Sigma||) / 2, so
        # ||g|| <= (2 + 1/2) R sqrt(p), rounded up
        return 3.0
    if loss == LOSS_S:
        return 4.0              # g0 = -2 a
    return NAN


cdef inline double curvature_bound(int loss) noexcept nogil:
    """H: 0 <= M <= H R^2 p, the part of the w-gradient proportional to w (M w)."""
    if loss == LOSS_M:
        return 0.0
    if loss == LOSS_S:
        return 10.0             # M = 2 (a a' + Sigma): 2 (4 + 1) R^2 p
    return NAN


cdef inline double cvar_grad(double frac, double mu, double s2, double* d_mu,
                             double* d_s2) noexcept nogil:
    """psi_beta(mu, s2), the worst-case CVaR at level ``frac`` = beta of the pairwise hinge
    loss over the other class with the kept mean and variance (PartialOAUCM), with d psi/d mu
    and d psi/d s2; ``frac >= 1`` is psi_M itself (the same operations as ``LOSS_M``).

        c* = (2 beta - 1) sigma / (2 sqrt(beta (1 - beta))),  b = 1 - mu
        psi_beta = b + sigma sqrt((1 - beta) / beta)          if b >= c*
                 = psi_M(mu, s2) / beta                        otherwise

    (derivation: docs/user_guide/partial_auc.md). At sigma = 0 the first branch's d_s2 is
    taken as 0 (Sigma w = 0 there, so the w-gradient does not depend on it). A ``frac``
    outside (0, 1] gives NaN.
    """
    cdef double b = 1.0 - mu
    cdef double sigma, root, k, value
    if frac >= 1.0:
        return loss_grad(LOSS_M, mu, s2, d_mu, d_s2)
    if not frac > 0.0:
        d_mu[0] = NAN
        d_s2[0] = NAN
        return NAN
    if s2 < 0.0:
        s2 = 0.0
    sigma = sqrt(s2)
    root = sqrt(frac * (1.0 - frac))
    if 2.0 * root * b >= (2.0 * frac - 1.0) * sigma:
        k = sqrt((1.0 - frac) / frac)
        d_mu[0] = -1.0
        d_s2[0] = 0.5 * k / sigma if sigma > 0.0 else 0.0
        return b + k * sigma
    value = loss_grad(LOSS_M, mu, s2, d_mu, d_s2)
    d_mu[0] = d_mu[0] / frac
    d_s2[0] = d_s2[0] / frac
    return value / frac
