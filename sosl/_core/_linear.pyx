# cython: language_level=3
"""Typed kernel of the linear second-order learners (Algorithm 1, eqs. 12-18).

One ``nogil`` loop over the samples in a given order; no validation, no allocation of
results. The NumPy reference with the same signature, one line per equation, is
:mod:`sosl._core._linear_ref`; see it for the symbol table and conventions. The loss is
``_losses.pxd``'s, the round prologue and the moment update ``_moments.pxd``'s.
Cost per round: O(p^2) (one matrix-vector product with Sigma and one rank-one update),
both on the upper triangle only: the covariances are symmetric, so the lower triangles are
left stale during the pass and mirrored from the upper ones once at its end.
"""

from sosl._core._losses cimport loss_grad
from sosl._core._moments cimport round_prologue, welford_update


cdef inline double sym_matvec(const double* S, const double* w, double* Sw,
                              Py_ssize_t p) noexcept nogil:
    """Sw = S w from the upper triangle of the symmetric S; returns w' S w."""
    cdef Py_ssize_t j, k
    cdef double acc, wj, s2 = 0.0
    for j in range(p):
        Sw[j] = 0.0
    for j in range(p):
        wj = w[j]
        acc = S[j * p + j] * wj
        for k in range(j + 1, p):
            acc += S[j * p + k] * w[k]
            Sw[k] += S[j * p + k] * wj
        Sw[j] += acc
    for j in range(p):
        s2 += w[j] * Sw[j]
    return s2


cdef inline void mirror_upper(double* S, Py_ssize_t p) noexcept nogil:
    """Copy the upper triangle of S into its lower triangle."""
    cdef Py_ssize_t j, k
    for j in range(p):
        for k in range(j + 1, p):
            S[k * p + j] = S[j * p + k]


def linear_pass(const double[:, ::1] X, const double[::1] s, const Py_ssize_t[::1] order,
                double[::1] w, double[:, ::1] xbar, double[:, :, ::1] Sigma,
                long long[::1] N, long long t0, double lam, double eta, int schedule,
                int loss, double[::1] work):
    """Run Algorithm 1 over ``X[order]``; update ``w, xbar, Sigma, N`` in place.

    ``work`` is scratch space of length at least ``3 p``. Returns the round counter
    after the pass. See :func:`sosl._core._linear_ref.linear_pass` for the parameters.
    """
    cdef Py_ssize_t p = X.shape[1]
    cdef Py_ssize_t m = order.shape[0]
    cdef Py_ssize_t r, i, j
    cdef long long t = t0
    cdef int own, opp
    cdef double y, eta_t, mu, s2, d_mu, d_s2, coef_S
    cdef double* a = &work[0]
    cdef double* Sw = &work[p]
    cdef double* d_old = &work[2 * p]
    cdef const double* x
    if work.shape[0] < 3 * p:
        raise ValueError("linear_pass: work must hold at least 3 p values")

    with nogil:
        for r in range(m):
            i = order[r]
            t += 1
            x = &X[i, 0]
            y = s[i]
            eta_t = round_prologue(y, t, schedule, eta, lam, &own, &opp)
            if N[opp] > 0:
                mu = 0.0
                for j in range(p):
                    a[j] = y * (x[j] - xbar[opp, j])
                    mu += w[j] * a[j]
                s2 = sym_matvec(&Sigma[opp, 0, 0], &w[0], Sw, p)
                loss_grad(loss, mu, s2, &d_mu, &d_s2)
                coef_S = 2.0 * d_s2
            welford_update(x, &xbar[own, 0], &Sigma[own, 0, 0], &N[own], d_old, p)
            if N[opp] > 0:
                for j in range(p):
                    w[j] -= eta_t * (lam * w[j] + d_mu * a[j] + coef_S * Sw[j])
            else:
                for j in range(p):
                    w[j] -= eta_t * (lam * w[j])
        mirror_upper(&Sigma[0, 0, 0], p)
        mirror_upper(&Sigma[1, 0, 0], p)
    return t
