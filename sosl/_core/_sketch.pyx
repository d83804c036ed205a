# cython: language_level=3
"""Typed kernel of the sketched second-order learner (frequent-directions covariances).

One ``nogil`` loop over CSR rows in a given order; no validation, no allocation of results
(scratch only). The NumPy reference, one line per equation with the tags (S1)-(S5) used
below, is :mod:`sosl._core._sketch_ref`; see it for the symbol table.

Active-feature scheme
---------------------
Columns are renumbered by first appearance: ``colmap[j]`` is the compact index of original
column j (-1 while j has never held a stored value), assigned by :func:`assign_columns` in
the order the rows are visited. Every state vector (weights, means, sketch rows, diagonals)
lives in compact coordinates and every operation runs over the ``m`` columns seen so far.
This is exact, not an approximation: a column that has never held a value has mean 0, a
zero column in every sketch (a shrink only recombines rows) and therefore a weight that
stays exactly 0, so leaving it out changes nothing. A round costs about ``2 nrows m`` for
``Sigma w`` (two BLAS ``dgemv``), O(m) for the mean, the new sketch row and the weight
step, and a shrink (every ``r`` rows of a class) ``4 r^2 m`` (``dsyrk`` Gram, LAPACK
``dsyevd`` of the ``2r x 2r`` Gram, ``dgemm`` for the new rows), i.e. ``O(r m)`` amortised
per round with m the number of distinct features seen, never ``O(p)`` or ``O(p^2)``.
Memory is ``O(r m)`` floats plus one integer per original column.
"""

from libc.math cimport sqrt
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset
from scipy.linalg.cython_blas cimport dgemm, dgemv, dsyrk
from scipy.linalg.cython_lapack cimport dsyevd

from sosl._core._codes cimport FAMILY_FD_DIAG
from sosl._core._losses cimport loss_grad
from sosl._core._moments cimport round_prologue



def assign_columns(const int[::1] indptr, const int[::1] indices, const Py_ssize_t[::1] order,
                   long long[::1] colmap, long long m):
    """Give the columns first seen in ``order`` the next compact indices; return the new m."""
    cdef Py_ssize_t q, k, i, j
    with nogil:
        for q in range(order.shape[0]):
            i = order[q]
            for k in range(indptr[i], indptr[i + 1]):
                j = indices[k]
                if colmap[j] < 0:
                    colmap[j] = m
                    m += 1
    return m


cdef double shrink(double* B, int r, int m, int cap, double* gram, double* evals,
                   double* uf, double* tmp, double* lwork, int nlwork, int* iwork,
                   int niwork) noexcept nogil:
    """(S3)-(S4): shrink the full sketch B (2r rows, stride cap) to r rows; return delta."""
    cdef int n2 = 2 * r, info = 0, d, q
    cdef double one = 1.0, zero = 0.0, delta, lam, f
    cdef char* up = b"U"
    cdef char* tr = b"T"
    cdef char* nt = b"N"
    cdef char* jv = b"V"
    dsyrk(up, tr, &n2, &m, &one, B, &cap, &zero, gram, &n2)          # B B'
    dsyevd(jv, up, &n2, gram, &n2, evals, lwork, &nlwork, iwork, &niwork, &info)
    delta = evals[r - 1]                                             # (S3), ascending order
    if delta < 0.0:
        delta = 0.0
    for d in range(r):
        lam = evals[n2 - 1 - d]
        f = sqrt((lam - delta) / lam) if lam > delta else 0.0
        for q in range(n2):
            uf[d * n2 + q] = f * gram[(n2 - 1 - d) * n2 + q]
    dgemm(nt, nt, &m, &r, &n2, &one, B, &cap, uf, &n2, &zero, tmp, &cap)   # (S4)
    for d in range(r):
        memcpy(&B[<Py_ssize_t> d * cap], &tmp[<Py_ssize_t> d * cap], m * sizeof(double))
    for d in range(r, n2):
        memset(&B[<Py_ssize_t> d * cap], 0, m * sizeof(double))
    return delta


def sketch_pass(const double[::1] data, const int[::1] indices, const int[::1] indptr,
                const double[::1] s, const Py_ssize_t[::1] order, const long long[::1] colmap,
                long long m, double[::1] w, double[:, ::1] xbar, double[:, :, ::1] B,
                long long[::1] nrows, long long[::1] N, double[:, ::1] dA, double[:, ::1] dB,
                double[::1] delta, long long t0, double lam, double eta, int schedule,
                int loss, int family, int r):
    """Run the sketched learner over the CSR rows ``order``; update the state in place.

    ``colmap`` must already map every column of the visited rows (:func:`assign_columns`);
    the state arrays have a capacity ``cap >= m`` (last axis). Returns the round counter
    after the pass. See :func:`sosl._core._sketch_ref.sketch_pass` for the parameters (the
    reference takes dense rows in original coordinates).
    """
    cdef int cap = <int> w.shape[0]
    cdef int mi = <int> m
    cdef int n2 = 2 * r
    cdef int nlwork = 1 + 6 * n2 + 2 * n2 * n2
    cdef int niwork = 3 + 5 * n2
    cdef Py_ssize_t nq = order.shape[0]
    cdef Py_ssize_t q, i, k, j, d
    cdef long long t = t0
    cdef int own, opp, nr, inc = 1
    cdef bint has_opp
    cdef double y, eta_t, mu, s2, d_mu = 0.0, d_s2 = 0.0, n, f, zj, invn, one = 1.0, zero = 0.0
    cdef double* Bc
    cdef double* row
    cdef char* tr = b"T"
    cdef char* nt = b"N"
    cdef size_t ncap = <size_t> cap, nr2 = <size_t> n2
    cdef double* xd = <double*> malloc((4 * ncap + nr2 + nr2 * nr2 + nr2 + nr2 * <size_t> r
                                        + <size_t> r * ncap + <size_t> nlwork)
                                       * sizeof(double))
    cdef int* iwork = <int*> malloc(niwork * sizeof(int))
    if xd == NULL or iwork == NULL:
        free(xd)
        free(iwork)
        raise MemoryError("sketch_pass: no memory for the scratch space")
    cdef double* a = xd + cap
    cdef double* Sw = a + cap
    cdef double* z = Sw + cap
    cdef double* Bw = z + cap
    cdef double* gram = Bw + n2
    cdef double* evals = gram + n2 * n2
    cdef double* uf = evals + n2
    cdef double* tmp = uf + n2 * r
    cdef double* lwork = tmp + <size_t> r * ncap
    memset(xd, 0, cap * sizeof(double))
    try:
        with nogil:
            for q in range(nq):
                i = order[q]
                t += 1
                y = s[i]
                eta_t = round_prologue(y, t, schedule, eta, lam, &own, &opp)
                for k in range(indptr[i], indptr[i + 1]):
                    xd[colmap[indices[k]]] += data[k]
                has_opp = N[opp] > 0
                if has_opp:
                    mu = 0.0
                    for j in range(mi):
                        a[j] = y * (xd[j] - xbar[opp, j])                 # a = y (x - xbar)
                        mu += w[j] * a[j]
                    nr = <int> nrows[opp]
                    invn = 1.0 / <double> N[opp]
                    if nr > 0:
                        Bc = &B[opp, 0, 0]
                        dgemv(tr, &mi, &nr, &one, Bc, &cap, &w[0], &inc, &zero, Bw, &inc)
                        dgemv(nt, &mi, &nr, &invn, Bc, &cap, Bw, &inc, &zero, Sw, &inc)  # (S2)
                    else:
                        memset(Sw, 0, mi * sizeof(double))
                    if family == FAMILY_FD_DIAG:
                        for j in range(mi):
                            f = dA[opp, j] - dB[opp, j]
                            if f > 0.0:
                                Sw[j] += f * w[j] * invn                  # (S5)
                    s2 = 0.0
                    for j in range(mi):
                        s2 += w[j] * Sw[j]
                    loss_grad(loss, mu, s2, &d_mu, &d_s2)                 # eq. (13)/(14)
                # add x to its own class: (S1), eq. (15)/(17), shrink (S3)-(S4)
                N[own] += 1
                n = <double> N[own]
                f = sqrt((n - 1.0) / n)
                for j in range(mi):
                    z[j] = f * (xd[j] - xbar[own, j])                     # (S1)
                    xbar[own, j] += (xd[j] - xbar[own, j]) / n
                if N[own] > 1:
                    row = &B[own, nrows[own], 0]
                    for j in range(mi):
                        zj = z[j]
                        row[j] = zj
                        dA[own, j] += zj * zj
                        dB[own, j] += zj * zj
                    nrows[own] += 1
                    if nrows[own] == n2:
                        delta[own] += shrink(&B[own, 0, 0], r, mi, cap, gram, evals, uf, tmp,
                                             lwork, nlwork, iwork, niwork)
                        nrows[own] = r
                        for j in range(mi):
                            dB[own, j] = 0.0
                        for d in range(r):
                            row = &B[own, d, 0]
                            for j in range(mi):
                                dB[own, j] += row[j] * row[j]
                if has_opp:                                               # eq. (12)
                    for j in range(mi):
                        w[j] -= eta_t * (lam * w[j] + d_mu * a[j] + 2.0 * d_s2 * Sw[j])
                else:
                    for j in range(mi):
                        w[j] -= eta_t * (lam * w[j])
                for k in range(indptr[i], indptr[i + 1]):
                    xd[colmap[indices[k]]] = 0.0
    finally:
        free(xd)
        free(iwork)
    return t
