# cython: language_level=3
"""Typed kernel of the linear second-order learners (Algorithm 1, eqs. 12-18).

One ``nogil`` loop over the samples in a given order; no validation, no allocation of
results. The NumPy reference, one line per equation, is :mod:`sosl._core._linear_ref`
(see it for the symbol table and conventions); the loss is ``_losses.pxd``'s and the round
prologue ``_moments.pxd``'s. The two agree to ~1e-12 on the same sample order.

How this kernel differs from the reference (same mathematics, cheaper arithmetic):

* **Scaled scatter instead of covariance.** Class k keeps ``C[k]`` with
  ``Sigma_k = scale[k] * C[k] / W[k]``, where ``W`` is the (forgetting-weighted) count.
  A moment update is then a rank-one *addition* ``C += (c / scale) d d'``, with
  ``d = x - xbar_old`` and ``c = beta W_old / W_new`` (``(N-1)/N`` without forgetting),
  instead of the covariance form, which rescales every entry by 1/N each round. The decay
  ``beta`` of forgetting goes into the scalar ``scale`` (``scale *= beta``), renormalised
  into ``C`` when it falls below 1e-150, so forgetting costs O(1) per round too.
* **Upper triangle.** Only ``C[k, j, l]`` for ``l >= j`` is kept up to date; the lower
  triangle is stale (read the matrix through the estimator's ``covariances_``).
* **Two paths by dimension.** For ``p < blas_min_p`` the rank-one updates are applied at
  once to the whole matrix and ``C w`` is a sum of row-scaled rows (``_simd.h``: loops the
  compiler vectorises without reassociating sums, with an AVX2+FMA clone chosen at run
  time where GCC can build one). For larger ``p`` a class's pending rank-one
  terms are collected (up to ``kmax`` of them) and applied as one rank-k update by BLAS
  ``dsyrk`` when the matrix is next read (an instance of the other class), when the buffer
  is full, or at the end of the pass; ``C w`` is BLAS ``dsymv``. A class's matrix is read
  only when the other class arrives, so under imbalance the majority class's updates come
  in long runs and go through level-3 BLAS. Merging the run's terms is exact in exact
  arithmetic (the same rank-one terms, summed in another order).
"""

from libc.math cimport sqrt
from scipy.linalg.cython_blas cimport ddot, dsymv, dsyrk

from sosl._core._losses cimport loss_grad
from sosl._core._moments cimport round_prologue

cdef double RESCALE_BELOW = 1e-150


cdef inline void flush(double* C, double* V, int* k, int p) noexcept nogil:
    """C += V' V for the k pending rows of V (row-major k x p): one BLAS rank-k update."""
    cdef char uplo = b'L'         # the row-major upper triangle is BLAS's lower one
    cdef char trans = b'N'
    cdef double one = 1.0
    if k[0] == 0:
        return
    dsyrk(&uplo, &trans, &p, k, &one, V, &p, &one, C, &p)
    k[0] = 0


cdef inline void rescale(double* C, double* scale, Py_ssize_t p) noexcept nogil:
    """Fold ``scale`` into C (scale -> 1); the whole matrix, stale lower triangle included."""
    cdef Py_ssize_t j
    cdef double f = scale[0]
    for j in range(p * p):
        C[j] *= f
    scale[0] = 1.0


cdef extern from "_simd.h" nogil:
    void small_matvec "sosl_small_matvec" (const double* C, const double* w, double* Cw,
                                            Py_ssize_t p)
    void small_rank_one "sosl_small_rank_one" (double* C, const double* d, double f,
                                                Py_ssize_t p)


def linear_pass(const double[:, ::1] X, const double[::1] s, const Py_ssize_t[::1] order,
                double[::1] w, double[:, ::1] xbar, double[:, :, ::1] C, double[::1] scale,
                double[::1] W, long long[::1] N, long long t0, double lam, double eta,
                int schedule, int loss, double beta, Py_ssize_t blas_min_p,
                double[::1] work):
    """Run Algorithm 1 over ``X[order]``; update ``w, xbar, C, scale, W, N`` in place.

    ``C`` holds scaled scatter matrices (see the module docstring); ``work`` has length at
    least ``3 p`` plus, for ``p >= blas_min_p``, ``2 kmax p`` for the pending rank-one terms
    (``kmax >= 1`` is read from its length). Returns the round counter after the pass. See
    :func:`sosl._core._linear_ref.linear_pass` for the other parameters.
    """
    cdef int p = <int> X.shape[1]
    cdef Py_ssize_t m = order.shape[0]
    cdef Py_ssize_t r, i, j
    cdef long long t = t0
    cdef int own, opp, one_i = 1
    cdef int kmax = 0
    cdef int pending[2]
    cdef bint use_blas = p >= blas_min_p
    cdef double y, eta_t, mu, s2, d_mu, d_s2, coef_S, f, W_new, c, sc, alpha
    cdef double zero = 0.0
    cdef char uplo = b'L'
    cdef double* a = &work[0]
    cdef double* Sw = &work[p]
    cdef double* d = &work[2 * p]
    cdef double* V[2]
    cdef double* Ck
    cdef const double* x
    if work.shape[0] < 3 * p:
        raise ValueError("linear_pass: work must hold at least 3 p values")
    if use_blas:
        kmax = <int> ((work.shape[0] - 3 * p) // (2 * p))
        if kmax < 1:
            raise ValueError("linear_pass: for p >= blas_min_p, work must hold 3 p + 2 kmax p "
                             "values with kmax >= 1")
        V[0] = &work[3 * p]
        V[1] = &work[3 * p + kmax * p]
    pending[0] = 0
    pending[1] = 0

    with nogil:
        for r in range(m):
            i = order[r]
            t += 1
            x = &X[i, 0]
            y = s[i]
            eta_t = round_prologue(y, t, schedule, eta, lam, &own, &opp)
            if N[opp] > 0:
                Ck = &C[opp, 0, 0]
                mu = 0.0
                for j in range(p):
                    a[j] = y * (x[j] - xbar[opp, j])
                    mu += w[j] * a[j]
                alpha = scale[opp] / W[opp]                     # Sigma = scale C / W
                if use_blas:
                    flush(Ck, V[opp], &pending[opp], p)
                    dsymv(&uplo, &p, &alpha, Ck, &p, &w[0], &one_i, &zero, Sw, &one_i)
                    s2 = ddot(&p, &w[0], &one_i, Sw, &one_i)
                else:
                    small_matvec(Ck, &w[0], Sw, p)
                    s2 = 0.0
                    for j in range(p):
                        Sw[j] *= alpha
                        s2 += w[j] * Sw[j]
                loss_grad(loss, mu, s2, &d_mu, &d_s2)
                coef_S = 2.0 * d_s2
            # own class: eqs. (15)-(18) with decay beta, as a rank-one term of the scatter
            W_new = beta * W[own] + 1.0
            c = beta * W[own] / W_new
            for j in range(p):
                d[j] = x[j] - xbar[own, j]
                xbar[own, j] += d[j] / W_new
            W[own] = W_new
            N[own] += 1
            if c > 0.0:
                scale[own] *= beta
                if use_blas:
                    if pending[own] == kmax or scale[own] < RESCALE_BELOW:
                        flush(&C[own, 0, 0], V[own], &pending[own], p)
                    if scale[own] < RESCALE_BELOW:
                        rescale(&C[own, 0, 0], &scale[own], p)
                    f = sqrt(c / scale[own])
                    for j in range(p):
                        V[own][pending[own] * p + j] = f * d[j]
                    pending[own] += 1
                else:
                    if scale[own] < RESCALE_BELOW:
                        rescale(&C[own, 0, 0], &scale[own], p)
                    small_rank_one(&C[own, 0, 0], d, c / scale[own], p)
            if N[opp] > 0:
                for j in range(p):
                    w[j] -= eta_t * (lam * w[j] + d_mu * a[j] + coef_S * Sw[j])
            else:
                for j in range(p):
                    w[j] -= eta_t * (lam * w[j])
        if use_blas:
            flush(&C[0, 0, 0], V[0], &pending[0], p)
            flush(&C[1, 0, 0], V[1], &pending[1], p)
    return t
