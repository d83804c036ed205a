# cython: language_level=3
"""Shared inline kernel evaluation for the kernel learners (cimport, not an extension).

The kernel codes are the ``Kernel`` enum of :mod:`sosl._core._codes`::

    KERNEL_LINEAR     k(a, b) = a.b
    KERNEL_GAUSSIAN   k(a, b) = exp(-gamma ||a - b||^2)      (gamma = 1/sigma^2 of the paper)
    KERNEL_POLY       k(a, b) = (gamma a.b + coef0)^degree

The NumPy twin, with the same arithmetic, is :mod:`sosl._core._kfun_ref`. Usage::

    from sosl._core._kfun cimport kernel_eval, kernel_rows

``kernel_eval`` gives one value (libm's exp); ``kernel_rows`` a whole kernel row against
stored vectors: for the Gaussian kernel it first writes the M squared distances and then
takes their exponentials in one vectorised sweep (``_vexp.h``: AVX2 + FMA when the
processor has them; relative difference from libm's exp below 2^-52).
"""

from libc.math cimport exp, pow

from sosl._core._codes cimport KERNEL_GAUSSIAN, KERNEL_POLY


cdef extern from "_vexp.h" nogil:
    void sosl_exp_scaled(double* v, Py_ssize_t n, double c)
    void sosl_sqdist_rows(const double* A, Py_ssize_t n, const double* x, Py_ssize_t p,
                          double* out)


cdef inline double sq_dist(const double* a, const double* b, Py_ssize_t p) noexcept nogil:
    """||a - b||^2 in four interleaved partial sums (see ``kernel_eval``)."""
    cdef Py_ssize_t j
    cdef Py_ssize_t p4 = p - p % 4
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    cdef double d0, d1, d2, d3, acc
    for j in range(0, p4, 4):
        d0 = a[j] - b[j]
        d1 = a[j + 1] - b[j + 1]
        d2 = a[j + 2] - b[j + 2]
        d3 = a[j + 3] - b[j + 3]
        s0 += d0 * d0
        s1 += d1 * d1
        s2 += d2 * d2
        s3 += d3 * d3
    acc = (s0 + s1) + (s2 + s3)
    for j in range(p4, p):
        d0 = a[j] - b[j]
        acc += d0 * d0
    return acc


cdef inline double kernel_eval(const double* a, const double* b, Py_ssize_t p, int kind,
                               double gamma, double degree, double coef0) noexcept nogil:
    """k(a, b) for vectors of length ``p``; ``kind`` is a ``Kernel`` code.

    The sum over the p coordinates runs in four interleaved partial sums (coordinates
    j = 0, 1, 2, 3 mod 4), added as (s0 + s1) + (s2 + s3) and then the tail: independent
    chains the processor overlaps, where one running sum waits for each addition.
    """
    cdef Py_ssize_t j
    cdef Py_ssize_t p4 = p - p % 4
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    cdef double acc
    if kind == KERNEL_GAUSSIAN:
        return exp(-gamma * sq_dist(a, b, p))
    for j in range(0, p4, 4):
        s0 += a[j] * b[j]
        s1 += a[j + 1] * b[j + 1]
        s2 += a[j + 2] * b[j + 2]
        s3 += a[j + 3] * b[j + 3]
    acc = (s0 + s1) + (s2 + s3)
    for j in range(p4, p):
        acc += a[j] * b[j]
    if kind == KERNEL_POLY:
        return pow(gamma * acc + coef0, degree)
    return acc


cdef inline void kernel_rows(const double* A, Py_ssize_t n, const double* x, Py_ssize_t p,
                             int kind, double gamma, double degree, double coef0,
                             double* out) noexcept nogil:
    """out[q] = k(A[q], x) for the ``n`` consecutive rows of length ``p`` starting at ``A``.

    Gaussian: the squared distances first (four rows at a time with AVX2 + FMA when the
    processor has them), then one vectorised exponential sweep; the other kernels call
    ``kernel_eval`` row by row.
    """
    cdef Py_ssize_t q
    if n <= 0:
        return
    if kind == KERNEL_GAUSSIAN:
        sosl_sqdist_rows(A, n, x, p, out)
        sosl_exp_scaled(out, n, -gamma)
        return
    for q in range(n):
        out[q] = kernel_eval(&A[q * p], x, p, kind, gamma, degree, coef0)
