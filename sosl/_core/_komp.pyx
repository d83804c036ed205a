# cython: language_level=3
"""Typed destructive KOMP with pre-fitting (the core of :func:`sosl.komp.komp_prune`).

Same algorithm, same order of operations and the same tie rules as the NumPy reference
``sosl.komp._komp_core`` (see :mod:`sosl.komp` for the symbols and the derivation):

1. b = K alpha, ||f~||^2 = alpha . b;
2. pivoted Cholesky with relative tolerance ``rtol`` finds a numerically independent
   subset I; if it is smaller than the dictionary, the rest is removed as one group
   when the error of the projection onto span(I) is within epsilon (else nothing is
   removed);
3. G = K_II^{-1} by Cholesky; greedy removals with gamma_j^2 = e^2 + w_j^2 / G_jj and the
   rank-one downdates of G and w, while gamma_j^2 <= epsilon^2;
4. the kept weights re-solved by a fresh Cholesky factorization.

No validation, no allocation: scratch space is passed in. The factorizations are plain
loops (dictionaries are small, and no BLAS call means no thread contention).
"""

from libc.math cimport sqrt

from sosl._core._komp_greedy cimport komp_removals


cdef int chol_sub(const double[:, ::1] K, const Py_ssize_t* I, Py_ssize_t m,
                  double* L) noexcept nogil:
    """Lower Cholesky factor of K[I, I] into L (row-major m x m); -1 if not PD."""
    cdef Py_ssize_t i, j, l
    cdef double acc
    for j in range(m):
        acc = K[I[j], I[j]]
        for l in range(j):
            acc -= L[j * m + l] * L[j * m + l]
        if not acc > 0.0:
            return -1
        L[j * m + j] = sqrt(acc)
        for i in range(j + 1, m):
            acc = K[I[i], I[j]]
            for l in range(j):
                acc -= L[i * m + l] * L[j * m + l]
            L[i * m + j] = acc / L[j * m + j]
    return 0


cdef void chol_solve(const double* L, Py_ssize_t m, double* x) noexcept nogil:
    """Solve L L^T z = x in place."""
    cdef Py_ssize_t i, l
    cdef double acc
    for i in range(m):
        acc = x[i]
        for l in range(i):
            acc -= L[i * m + l] * x[l]
        x[i] = acc / L[i * m + i]
    for i in range(m - 1, -1, -1):
        acc = x[i]
        for l in range(i + 1, m):
            acc -= L[l * m + i] * x[l]
        x[i] = acc / L[i * m + i]


cdef Py_ssize_t pivoted_rank(const double[:, ::1] K, Py_ssize_t n, double tol, double* L,
                             double* dres, Py_ssize_t* chosen, Py_ssize_t* perm) noexcept nogil:
    """Pivoted Cholesky (largest residual diagonal first); marks the chosen indices.

    Ties are broken as LAPACK ``dpstrf`` does: the first maximum in the current pivot
    order, where each step swaps the chosen index into position k.
    """
    cdef Py_ssize_t i, j, k, l, pos, q
    cdef double best, piv, acc
    for i in range(n):
        dres[i] = K[i, i]
        chosen[i] = 0
        perm[i] = i
    for k in range(n):
        pos = k
        best = dres[perm[k]]
        for q in range(k + 1, n):
            if dres[perm[q]] > best:
                best = dres[perm[q]]
                pos = q
        if not best > tol:
            return k
        j = perm[pos]
        perm[pos] = perm[k]
        perm[k] = j
        chosen[j] = 1
        piv = sqrt(best)
        L[j * n + k] = piv
        for q in range(k + 1, n):
            i = perm[q]
            acc = K[i, j]
            for l in range(k):
                acc -= L[i * n + l] * L[j * n + l]
            L[i * n + k] = acc / piv
            dres[i] -= L[i * n + k] * L[i * n + k]
    return n


def komp_core(const double[:, ::1] K, const double[::1] alpha, double eps2, double rtol,
              Py_ssize_t[::1] kept, double[::1] w_out, double[::1] work,
              Py_ssize_t[::1] iwork):
    """Destructive KOMP on the Gram matrix ``K`` (n x n) and weights ``alpha``.

    Writes the kept indices (increasing) to ``kept[:m]`` and their weights to
    ``w_out[:m]``; returns ``m``. ``work`` needs ``2 n^2 + 4 n`` doubles, ``iwork`` ``3 n``.
    """
    cdef Py_ssize_t m
    if K.shape[0] == 0:
        return 0
    with nogil:
        m = komp_run(K, alpha, eps2, rtol, &kept[0], &w_out[0], &work[0], &iwork[0])
    return m


cdef Py_ssize_t komp_run(const double[:, ::1] K, const double[::1] alpha, double eps2,
                         double rtol, Py_ssize_t* kept, double* w_out, double* work,
                         Py_ssize_t* iwork) noexcept nogil:
    """Body of :func:`komp_core` (n >= 1)."""
    cdef Py_ssize_t n = K.shape[0]
    cdef Py_ssize_t i, l, c, m, rank
    cdef double fn2, scale, e2, acc
    cdef double* L = &work[0]
    cdef double* G = &work[n * n]
    cdef double* b = &work[2 * n * n]
    cdef double* w = &work[2 * n * n + n]
    cdef double* g = &work[2 * n * n + 2 * n]
    cdef double* dres = &work[2 * n * n + 3 * n]
    cdef Py_ssize_t* I = &iwork[0]
    cdef Py_ssize_t* chosen = &iwork[n]
    cdef bint removed_any

    fn2 = 0.0
    scale = K[0, 0]
    for i in range(n):
        acc = 0.0
        for l in range(n):
            acc += K[i, l] * alpha[l]
        b[i] = acc
        if K[i, i] > scale:
            scale = K[i, i]
    for i in range(n):
        fn2 += alpha[i] * b[i]
    if not scale > 0.0:
        return 0
    rank = pivoted_rank(K, n, rtol * scale, L, dres, chosen, &iwork[2 * n])
    if rank < n:
        m = 0
        for i in range(n):
            if chosen[i]:
                I[m] = i
                m += 1
        chol_sub(K, I, m, L)
        for i in range(m):
            w[i] = b[I[i]]
        chol_solve(L, m, w)
        # e2 = (alpha - beta)' K (alpha - beta), beta = w on I: computed directly, not as
        # ||f||^2 - b_I . w, which cancels when K's diagonal spans many orders of magnitude
        for i in range(n):
            g[i] = alpha[i]
        for i in range(m):
            g[I[i]] -= w[i]
        e2 = 0.0
        for i in range(n):
            acc = 0.0
            for l in range(n):
                acc += K[i, l] * g[l]
            e2 += g[i] * acc
        if e2 < 0.0:
            e2 = 0.0
        if e2 > eps2:
            for i in range(n):
                kept[i] = i
                w_out[i] = alpha[i]
            return n
    else:
        m = n
        for i in range(n):
            I[i] = i
            w[i] = alpha[i]
        e2 = 0.0
    removed_any = m < n
    if m > 0:
        # G = K_II^{-1}, column by column from the Cholesky factor
        chol_sub(K, I, m, L)
        for c in range(m):
            for i in range(m):
                g[i] = 0.0
            g[c] = 1.0
            chol_solve(L, m, g)
            for i in range(c, m):
                G[i * m + c] = g[i]
        for i in range(m):
            for l in range(i + 1, m):
                G[i * m + l] = G[l * m + i]
    # G is stored with row stride m0 (its size at the start of the removals)
    m = komp_removals(G, m, w, I, g, m, &e2, eps2, fn2, &removed_any)
    for i in range(m):
        kept[i] = I[i]
    if not removed_any:
        for i in range(m):
            w_out[i] = alpha[i]
        return m
    if m > 0:
        chol_sub(K, I, m, L)
        for i in range(m):
            w_out[i] = b[I[i]]
        chol_solve(L, m, w_out)
    return m
