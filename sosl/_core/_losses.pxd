# cython: language_level=3
"""The surrogate losses, once, for every typed kernel (cimport, not an extension).

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

The NumPy twin, one line per equation, is :mod:`sosl._core._losses_ref`.
"""

from libc.math cimport sqrt

from sosl._core._codes cimport LOSS_M


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
    d_mu[0] = -2.0 * b
    d_s2[0] = 1.0
    return b * b + s2
