# cython: language_level=3
"""Typed kernels of the linear online baselines: Perceptron, PA-I, OAM, OL-UBAUC, SOLAM, AdaOAM.

One ``nogil`` loop per learner over the samples in a given order; no validation, no
allocation of results. The NumPy references with the same signatures, one line per
equation, are in :mod:`sosl._core._baselines_ref` (symbol table, equations, and the
conventions at guards). Per-round cost: O(p) for Perceptron, PA-I, OL-UBAUC and SOLAM;
O(budget p) for OAM; O(p^2) for AdaOAM.
"""

from libc.math cimport sqrt

cdef int OAM_SEQ = 0
cdef int OAM_GRA = 1


cdef inline double dot(const double* a, const double* b, Py_ssize_t p) noexcept nogil:
    """a.b with four partial sums (breaks the add latency chain; the order of the sum
    differs from NumPy's only by rounding, as NumPy's own BLAS order does)."""
    cdef Py_ssize_t j, q = p - p % 4
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    for j in range(0, q, 4):
        s0 += a[j] * b[j]
        s1 += a[j + 1] * b[j + 1]
        s2 += a[j + 2] * b[j + 2]
        s3 += a[j + 3] * b[j + 3]
    for j in range(q, p):
        s0 += a[j] * b[j]
    return (s0 + s1) + (s2 + s3)


cdef inline unsigned long long splitmix64(unsigned long long* state) noexcept nogil:
    """splitmix64: advance the state in place and return the next 64-bit output."""
    cdef unsigned long long z
    state[0] += 0x9E3779B97F4A7C15ULL
    z = state[0]
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)


def perceptron_pass(const double[:, ::1] X, const double[::1] s, const Py_ssize_t[::1] order,
                    double[::1] w, long long t0):
    """Perceptron over ``X[order]``; see :func:`sosl._core._baselines_ref.perceptron_pass`."""
    cdef Py_ssize_t p = X.shape[1], m = order.shape[0], r, j
    cdef long long t = t0
    cdef const double* x
    cdef double y
    with nogil:
        for r in range(m):
            t += 1
            x = &X[order[r], 0]
            y = s[order[r]]
            if y * dot(&w[0], x, p) <= 0.0:
                for j in range(p):
                    w[j] += y * x[j]
    return t


def pa1_pass(const double[:, ::1] X, const double[::1] s, const Py_ssize_t[::1] order,
             double[::1] w, long long t0, double C):
    """PA-I over ``X[order]``; see :func:`sosl._core._baselines_ref.pa1_pass`."""
    cdef Py_ssize_t p = X.shape[1], m = order.shape[0], r, j
    cdef long long t = t0
    cdef const double* x
    cdef double y, sq, loss, tau
    with nogil:
        for r in range(m):
            t += 1
            x = &X[order[r], 0]
            y = s[order[r]]
            sq = dot(x, x, p)
            if sq == 0.0:
                continue
            loss = 1.0 - y * dot(&w[0], x, p)
            if loss < 0.0:
                loss = 0.0
            tau = loss / sq
            if tau > C:
                tau = C
            for j in range(p):
                w[j] += tau * y * x[j]
    return t


def oam_pass(const double[:, ::1] X, const double[::1] s, const Py_ssize_t[::1] order,
             double[::1] w, double[:, :, ::1] B, long long[::1] nB, long long[::1] N,
             unsigned long long[::1] rng, long long t0, double C, int update,
             double[::1] work):
    """OAM over ``X[order]``; ``work`` is scratch space of length >= 2 p.

    See :func:`sosl._core._baselines_ref.oam_pass`.
    """
    cdef Py_ssize_t p = X.shape[1], m = order.shape[0], budget = B.shape[1]
    cdef Py_ssize_t r, j, q
    cdef long long t = t0
    cdef unsigned long long u
    cdef int k, o
    cdef const double* x
    cdef double* b
    cdef double* d = &work[0]
    cdef double* g = &work[p]
    cdef double y, C_t, sq, loss, tau, ratio, wd
    with nogil:
        for r in range(m):
            t += 1
            x = &X[order[r], 0]
            y = s[order[r]]
            if y > 0:
                k = 1
                o = 0
            else:
                k = 0
                o = 1
            N[k] += 1
            ratio = <double> N[o] / <double> budget
            if ratio < 1.0:
                ratio = 1.0
            C_t = C * ratio
            if update == OAM_SEQ:
                for q in range(nB[o]):
                    b = &B[o, q, 0]
                    for j in range(p):
                        d[j] = x[j] - b[j]
                    sq = dot(d, d, p)
                    if sq == 0.0:
                        continue
                    loss = 1.0 - y * dot(&w[0], d, p)
                    if loss < 0.0:
                        loss = 0.0
                    tau = loss / sq
                    if tau > C_t / 2.0:
                        tau = C_t / 2.0
                    for j in range(p):
                        w[j] += tau * y * d[j]
            elif nB[o] > 0:
                for j in range(p):
                    g[j] = 0.0
                for q in range(nB[o]):
                    b = &B[o, q, 0]
                    for j in range(p):
                        d[j] = x[j] - b[j]
                    wd = dot(&w[0], d, p)
                    if y * wd <= 1.0:
                        for j in range(p):
                            g[j] += d[j]
                for j in range(p):
                    w[j] += (C_t / 2.0) * y * g[j]
            if nB[k] < budget:
                b = &B[k, nB[k], 0]
                for j in range(p):
                    b[j] = x[j]
                nB[k] += 1
            else:
                u = splitmix64(&rng[0]) % (<unsigned long long> N[k])
                if u < <unsigned long long> budget:
                    b = &B[k, <Py_ssize_t> u, 0]
                    for j in range(p):
                        b[j] = x[j]
    return t


def ubauc_pass(const double[:, ::1] X, const double[::1] s, const Py_ssize_t[::1] order,
               double[::1] w, double[::1] c, long long[::1] N, long long t0, double lam,
               double eta):
    """OL-UBAUC (reconstruction) over ``X[order]``; see ``_baselines_ref.ubauc_pass``."""
    cdef Py_ssize_t p = X.shape[1], m = order.shape[0], r, j
    cdef long long t = t0
    cdef int k
    cdef const double* x
    cdef double y, omega, eta_t, margin, coef_x, g_c
    with nogil:
        for r in range(m):
            t += 1
            x = &X[order[r], 0]
            y = s[order[r]]
            k = 1 if y > 0 else 0
            N[k] += 1
            omega = <double> t / (2.0 * <double> N[k])
            if eta > 0:
                eta_t = eta
            else:
                eta_t = 1.0 / (lam * <double> t)
            margin = y * (dot(&w[0], x, p) - c[0])
            if margin < 1.0:
                coef_x = -omega * y
                g_c = omega * y
            else:
                coef_x = 0.0
                g_c = 0.0
            for j in range(p):
                w[j] -= eta_t * (lam * w[j] + coef_x * x[j])
            c[0] -= eta_t * g_c
    return t


def solam_pass(const double[:, ::1] X, const double[::1] s, const Py_ssize_t[::1] order,
               double[::1] v, double[::1] v_avg, double[::1] alpha, double[::1] step_sum,
               long long[::1] N, long long t0, double eta, double R):
    """SOLAM over ``X[order]``; see :func:`sosl._core._baselines_ref.solam_pass`."""
    cdef Py_ssize_t p = X.shape[1], m = order.shape[0], r, j
    cdef long long t = t0
    cdef const double* x
    cdef double y, ph, gamma, a, b, al, f, cx, g_a, g_b, g_al, G, r_old, r_new, nw, val
    with nogil:
        for r in range(m):
            t += 1
            x = &X[order[r], 0]
            y = s[order[r]]
            if y > 0:
                N[1] += 1
            else:
                N[0] += 1
            ph = <double> N[1] / <double> t
            gamma = eta / sqrt(<double> t)
            a = v[p]
            b = v[p + 1]
            al = alpha[0]
            f = dot(&v[0], x, p)
            # dF/dw = cx * x
            if y > 0:
                cx = 2.0 * (1.0 - ph) * (f - a) - 2.0 * (1.0 + al) * (1.0 - ph)
                g_a = -2.0 * (1.0 - ph) * (f - a)
                g_b = 0.0
                g_al = -2.0 * (1.0 - ph) * f - 2.0 * ph * (1.0 - ph) * al
            else:
                cx = 2.0 * ph * (f - b) + 2.0 * (1.0 + al) * ph
                g_a = 0.0
                g_b = -2.0 * ph * (f - b)
                g_al = 2.0 * ph * f - 2.0 * ph * (1.0 - ph) * al
            G = step_sum[0] + gamma
            r_old = step_sum[0] / G
            r_new = gamma / G
            for j in range(p + 2):
                v_avg[j] = v_avg[j] * r_old + r_new * v[j]
            alpha[1] = (step_sum[0] * alpha[1] + gamma * al) / G
            step_sum[0] = G
            nw = 0.0
            for j in range(p):
                v[j] = v[j] - gamma * (cx * x[j])
                nw += v[j] * v[j]
            nw = sqrt(nw)
            if nw > R:
                for j in range(p):
                    v[j] *= R / nw
            val = a - gamma * g_a
            v[p] = R if val > R else (-R if val < -R else val)
            val = b - gamma * g_b
            v[p + 1] = R if val > R else (-R if val < -R else val)
            val = al + gamma * g_al
            alpha[0] = 2.0 * R if val > 2.0 * R else (-2.0 * R if val < -2.0 * R else val)
    return t


cdef inline void welford_update(const double* x, double* xbar, double* Sigma,
                                long long* N, double* d_old, double* d_new,
                                Py_ssize_t p) noexcept nogil:
    """Add x to a class (count, mean, covariance) in centered (Welford) form, in place."""
    cdef Py_ssize_t j, k
    cdef double n, inv_n, dj
    cdef double* row
    N[0] += 1
    n = <double> N[0]
    inv_n = 1.0 / n
    for j in range(p):
        d_old[j] = x[j] - xbar[j]
        xbar[j] += d_old[j] / n
        d_new[j] = x[j] - xbar[j]
    # O(p^2) part: a multiplication by 1/n (vectorizes; a division per entry does not),
    # equal to the reference's division up to rounding
    for j in range(p):
        dj = d_old[j] * inv_n
        row = &Sigma[j * p]
        for k in range(p):
            row[k] += dj * d_new[k] - row[k] * inv_n


def adaoam_pass(const double[:, ::1] X, const double[::1] s, const Py_ssize_t[::1] order,
                double[::1] w, double[:, ::1] xbar, double[:, :, ::1] Sigma,
                long long[::1] N, double[::1] G2, long long t0, double lam, double eta,
                double delta, double[::1] work):
    """AdaOAM over ``X[order]``; ``work`` is scratch space of length >= 4 p.

    See :func:`sosl._core._baselines_ref.adaoam_pass`.
    """
    cdef Py_ssize_t p = X.shape[1], m = order.shape[0], r, j, k
    cdef long long t = t0
    cdef int own, opp
    cdef const double* x
    cdef double* S
    cdef double* a = &work[0]
    cdef double* g = &work[p]
    cdef double* d_old = &work[2 * p]
    cdef double* d_new = &work[3 * p]
    cdef double y, wa, coef, acc, H
    with nogil:
        for r in range(m):
            t += 1
            x = &X[order[r], 0]
            y = s[order[r]]
            if y > 0:
                own = 1
                opp = 0
            else:
                own = 0
                opp = 1
            if N[opp] > 0:
                S = &Sigma[opp, 0, 0]
                wa = 0.0
                for j in range(p):
                    a[j] = y * (x[j] - xbar[opp, j])
                    wa += w[j] * a[j]
                coef = 1.0 - wa
                for j in range(p):
                    acc = dot(&S[j * p], &w[0], p)
                    g[j] = lam * w[j] - coef * a[j] + acc
            else:
                for j in range(p):
                    g[j] = lam * w[j]
            welford_update(x, &xbar[own, 0], &Sigma[own, 0, 0], &N[own], d_old, d_new, p)
            for j in range(p):
                G2[j] += g[j] * g[j]
                H = delta + sqrt(G2[j])
                if H > 0.0:
                    w[j] -= eta * (g[j] / H)
    return t
