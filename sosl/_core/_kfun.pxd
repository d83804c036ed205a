# cython: language_level=3
"""Shared inline kernel evaluation for the kernel learners (cimport, not an extension).

Kernel codes (the Python table is :data:`sosl.kernels.KERNEL_CODES`)::

    KERNEL_LINEAR   = 0   k(a, b) = a.b
    KERNEL_GAUSSIAN = 1   k(a, b) = exp(-gamma ||a - b||^2)      (gamma = 1/sigma^2 of the paper)
    KERNEL_POLY     = 2   k(a, b) = (gamma a.b + coef0)^degree

Usage from a ``.pyx``::

    from sosl._core._kfun cimport kernel_eval, KERNEL_GAUSSIAN
"""

from libc.math cimport exp, pow

cdef enum:
    KERNEL_LINEAR = 0
    KERNEL_GAUSSIAN = 1
    KERNEL_POLY = 2


cdef inline double kernel_eval(const double* a, const double* b, Py_ssize_t p, int kind,
                               double gamma, double degree, double coef0) noexcept nogil:
    """k(a, b) for vectors of length ``p``; ``kind`` is one of the codes above."""
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
