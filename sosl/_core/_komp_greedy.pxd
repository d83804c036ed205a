# cython: language_level=3
"""The greedy removals of destructive KOMP, shared by ``_komp`` and ``_polk`` (cimport only).

Usage from a ``.pyx``::

    from sosl._core._komp_greedy cimport komp_removals

The setting is that of :mod:`sosl.komp`: m atoms with inverse Gram matrix G = K_II^{-1}
(row-major with row stride ``stride``), least-squares weights w = G b_I of the function f
being compressed, and e2 = ||f - w.k_I||^2. Removing atom j and refitting costs
gamma_j^2 = e2 + w_j^2 / G_jj; removing the last atom costs ||f||^2.
"""


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
    cdef Py_ssize_t jstar, l, j, c
    cdef double best, gam, gj, wj, igj
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
        # in place: row l reads row j >= l, column c reads column >= c
        igj = 1.0 / gj
        for l in range(m - 1):
            j = l + (l >= jstar)
            for c in range(jstar):
                G[l * stride + c] = G[j * stride + c] - g[j] * g[c] * igj
            for c in range(jstar, m - 1):
                G[l * stride + c] = G[j * stride + c + 1] - g[j] * g[c + 1] * igj
        m -= 1
    return m
