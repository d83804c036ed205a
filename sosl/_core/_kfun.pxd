# cython: language_level=3
"""Shared inline kernel evaluation for the kernel learners (cimport, not an extension).

The kernel codes are the ``Kernel`` enum of :mod:`sosl._core._codes`::

    KERNEL_LINEAR     k(a, b) = a.b
    KERNEL_GAUSSIAN   k(a, b) = exp(-gamma ||a - b||^2)      (gamma = 1/sigma^2 of the paper)
    KERNEL_POLY       k(a, b) = (gamma a.b + coef0)^degree

The NumPy twin, with the same arithmetic, is :mod:`sosl._core._kfun_ref`. Usage::

    from sosl._core._kfun cimport kernel_eval
"""

from libc.math cimport exp, pow

from sosl._core._codes cimport KERNEL_GAUSSIAN, KERNEL_POLY


cdef inline double kernel_eval(const double* a, const double* b, Py_ssize_t p, int kind,
                               double gamma, double degree, double coef0) noexcept nogil:
    """k(a, b) for vectors of length ``p``; ``kind`` is a ``Kernel`` code."""
    cdef Py_ssize_t j
    cdef double acc = 0.0
    cdef double d
    if kind == KERNEL_GAUSSIAN:
        for j in range(p):
            d = a[j] - b[j]
            acc += d * d
        return exp(-gamma * acc)
    for j in range(p):
        acc += a[j] * b[j]
    if kind == KERNEL_POLY:
        return pow(gamma * acc + coef0, degree)
    return acc
