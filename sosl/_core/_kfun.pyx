# cython: language_level=3
"""Typed kernel expansions for prediction: f(x_i) = sum_q alpha_q k(SV_q, x_i).

The inline kernel evaluations are declared in ``_kfun.pxd`` (shared by the kernel passes);
this module adds the prediction loop of the kernel learners. The NumPy reference is
``kernel_matrix(X, SV) @ alpha`` of :mod:`sosl._core._kfun_ref`.
"""

from sosl._core._kfun cimport kernel_rows, sosl_exp_scaled


cdef extern from "_vexp.h" nogil:
    int sosl_vexp_scalar


def set_scalar_path(bint scalar):
    """Take this module's scalar loops (True) or its AVX2 + FMA ones where present (False).

    A test hook for the two code paths of ``_vexp.h``; it affects only the functions of
    this module (``exp_scaled``, ``kernel_decision``), not the learners' passes.
    """
    global sosl_vexp_scalar
    sosl_vexp_scalar = 1 if scalar else 0


def exp_scaled(double[::1] v, double c):
    """v[i] = exp(c v[i]) in place (``_vexp.h``; meant for c v[i] <= 0)."""
    with nogil:
        sosl_exp_scaled(&v[0] if v.shape[0] > 0 else NULL, v.shape[0], c)


def kernel_decision(const double[:, ::1] X, const double[:, ::1] SV, const double[::1] alpha,
                    int kind, double gamma, double degree, double coef0, double[::1] out,
                    double[::1] work):
    """out[i] = sum_q alpha[q] k(SV[q], X[i]) for every row of ``X``.

    ``work`` is scratch space of length at least ``SV.shape[0]``. Cost O(n M p), memory
    O(M) beyond the arguments (no (n, M) Gram block).
    """
    cdef Py_ssize_t n = X.shape[0]
    cdef Py_ssize_t p = X.shape[1]
    cdef Py_ssize_t M = SV.shape[0]
    cdef Py_ssize_t i, q
    cdef double acc
    if (SV.shape[1] != p or alpha.shape[0] != M or out.shape[0] != n
            or work.shape[0] < M):
        raise ValueError("kernel_decision: inconsistent shapes (need SV of shape (M, p), "
                         "alpha of length M, out of length n, work of length >= M)")
    if M == 0:
        out[:] = 0.0
        return
    with nogil:
        for i in range(n):
            kernel_rows(&SV[0, 0], M, &X[i, 0], p, kind, gamma, degree, coef0, &work[0])
            acc = 0.0
            for q in range(M):
                acc += alpha[q] * work[q]
            out[i] = acc
