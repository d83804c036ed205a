# cython: language_level=3
"""The greedy removals of destructive KOMP, shared by ``_komp`` and ``_polk`` (cimport only).

Usage from a ``.pyx``::

    from sosl._core._komp_greedy cimport komp_removals

The setting is that of :mod:`sosl.komp`: m atoms with inverse Gram matrix G = K_II^{-1}
(row-major with row stride ``stride``), least-squares weights w = G b_I of the function f
being compressed, and e2 = ||f - w.k_I||^2. Removing atom j and refitting costs
gamma_j^2 = e2 + w_j^2 / G_jj; removing the last atom costs ||f||^2.
"""


cdef extern from *:
    """
    #include <stddef.h>
    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) \
        && defined(__linux__) && !defined(SOSL_NO_CLONES)
    #if __GNUC__ >= 12
    #define KOMP_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
    #else
    #define KOMP_CLONES __attribute__((target_clones("avx2", "default")))
    #endif
    #else
    #define KOMP_CLONES
    #endif
    /* G_{-j,-j} - g_{-j} g_{-j}' / g_j in place on the leading m x m block (row stride
     * ``stride``), g the column j of G: row l reads row l + (l >= j), column c reads
     * column c + (c >= j), never behind a write. Compiled for the baseline and for
     * x86-64-v3 (AVX2, FMA), picked at load time. */
    KOMP_CLONES static void komp_downdate(double* G, ptrdiff_t stride,
                                          const double* restrict g, ptrdiff_t m,
                                          ptrdiff_t jstar) {
        double igj = 1.0 / g[jstar];
        ptrdiff_t l, c, j;
        for (l = 0; l < m - 1; l++) {
            j = l + (l >= jstar);
            double* out = G + l * stride;
            const double* in = G + j * stride;
            double gl = g[j];
            for (c = 0; c < jstar; c++)
                out[c] = in[c] - gl * g[c] * igj;
            for (c = jstar; c < m - 1; c++)
                out[c] = in[c + 1] - gl * g[c + 1] * igj;
        }
    }
    """
    void komp_downdate(double* G, Py_ssize_t stride, const double* g, Py_ssize_t m,
                       Py_ssize_t jstar) noexcept nogil


cdef inline Py_ssize_t komp_removals(double* G, Py_ssize_t stride, double* w, Py_ssize_t* I,
                                     double* g, Py_ssize_t m, double* e2, double eps2,
                                     double fn2, bint* removed) noexcept nogil:
    """Remove the cheapest atom while its cost stays <= eps2; return the atoms left.

    Each removal downdates G (G_{-j,-j} - G_{-j,j} G_{j,-j} / G_jj) and w
    (w_{-j} - G_{-j,j} w_j / G_jj) in place, keeping the row stride, shifts I, sets
    ``e2[0]`` to the new squared error and ``removed[0]`` to True. Ties go to the first
    atom. ``fn2`` is ||f||^2, the cost of removing the last atom; a negative ``fn2`` means
    it is not known yet: the loop then returns as soon as one atom is left (the caller
    computes ||f||^2 and calls again with m = 1). ``g`` is scratch of length m.
    """
    cdef Py_ssize_t jstar, l, j
    cdef double best, gam, gj, wj
    while m > 0:
        jstar = 0
        if m == 1:
            if fn2 < 0.0:
                return m
            best = fn2
        else:
            best = e2[0] + w[0] * w[0] / G[0]
            for l in range(1, m):
                gam = e2[0] + w[l] * w[l] / G[l * stride + l]
                if gam < best:
                    best = gam
                    jstar = l
        if best > eps2:
            return m
        e2[0] = best
        removed[0] = True
        for l in range(m):
            g[l] = G[l * stride + jstar]
        gj = g[jstar]
        wj = w[jstar]
        for l in range(m - 1):
            j = l + (l >= jstar)
            w[l] = w[j] - g[j] * (wj / gj)
            I[l] = I[j]
        komp_downdate(G, stride, g, m, jstar)
        m -= 1
    return m
