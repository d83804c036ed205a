# cython: language_level=3
"""Typed kernels of the linear online baselines: Perceptron, PA-I, OAM, OL-UBAUC, SOLAM, AdaOAM.

One ``nogil`` loop per learner over the samples in a given order; no validation, no
allocation of results. The NumPy references with the same signatures, one line per
equation, are in :mod:`sosl._core._baselines_ref` (symbol table, equations, and the
conventions at guards). Per-round cost on dense rows: O(p) for Perceptron, PA-I, OL-UBAUC
and SOLAM; O(budget p) for OAM; O(p^2) for AdaOAM.

The ``*_pass_csr`` kernels run the same learners on a CSR matrix (``data``, ``indices``,
``indptr``; sorted int32 column indices) and give the same state as the dense pass up to
rounding. Perceptron, PA-I, OL-UBAUC and SOLAM cost O(nnz(x_t)) per round: the weights
are held as ``w = a u`` (a scalar scale ``a`` times a vector ``u``), so
a shrinkage or a projection onto a ball multiplies ``a`` only, and SOLAM's running
average of the iterates is kept as ``Gamma vbar = c u - Q`` (a scalar ``c`` and a vector
``Q`` changed only where ``u`` changes). Converting to and from that form costs O(p) once
per pass. OAM's CSR pass keeps its buffers as sparse rows (sorted columns and values in
fixed-capacity slots, a state of another shape than the dense pass's, holding the same
rows) and forms each pairwise difference x_t - x by merging the two rows' columns, so a
round costs O(sum over the opposite buffer of nnz(x_t) + nnz(x)) with no term in p, and
:func:`oam_midpoint_score` gives its intercept in O(buffered values).

A score w.x_t (or a squared norm) that is not finite stops the pass with a
``FloatingPointError`` naming the row: the features are too large for double precision.
"""

from libc.math cimport isfinite, sqrt

from sosl._core._codes cimport LOSS_S, OAM_SEQ, STEP_CONSTANT
from sosl._core._losses cimport loss_grad

# u (of w = a u) is folded back into w when |a| falls below this (OL-UBAUC: no
# cancellation, as for scikit-learn's weight vector); SOLAM folds back at a larger
# scale, because its average c u - Q loses about log10(1 / a) digits to cancellation
cdef double RESCALE_MIN = 1e-9
cdef double RESCALE_MIN_AVG = 1e-3


def _overflow(Py_ssize_t row, str what):
    raise FloatingPointError(
        f"the {what} of row {row} of the batch is not finite: the features are too large "
        "for double precision (scale them)")


cdef inline double sdot(const double* w, const double* xd, const int* xi,
                        Py_ssize_t nnz) noexcept nogil:
    """w.x for a sparse row x (values ``xd``, columns ``xi``)."""
    cdef Py_ssize_t k
    cdef double acc = 0.0
    for k in range(nnz):
        acc += w[xi[k]] * xd[k]
    return acc


cdef inline double ssq(const double* xd, Py_ssize_t nnz) noexcept nogil:
    """||x||^2 for a sparse row."""
    cdef Py_ssize_t k
    cdef double acc = 0.0
    for k in range(nnz):
        acc += xd[k] * xd[k]
    return acc


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
    cdef Py_ssize_t p = X.shape[1], m = order.shape[0], r, j, bad = -1
    cdef long long t = t0
    cdef const double* x
    cdef double y, f
    with nogil:
        for r in range(m):
            t += 1
            x = &X[order[r], 0]
            y = s[order[r]]
            f = dot(&w[0], x, p)
            if not isfinite(f):
                bad = order[r]
                break
            if y * f <= 0.0:
                for j in range(p):
                    w[j] += y * x[j]
    if bad >= 0:
        _overflow(bad, "score w.x")
    return t


def perceptron_pass_csr(const double[::1] data, const int[::1] indices,
                        const int[::1] indptr, const double[::1] s,
                        const Py_ssize_t[::1] order, double[::1] w, long long t0):
    """Perceptron over the CSR rows ``order``, O(nnz) per round; as :func:`perceptron_pass`."""
    cdef Py_ssize_t m = order.shape[0], r, k, lo, nnz, bad = -1
    cdef long long t = t0
    cdef double y, f
    with nogil:
        for r in range(m):
            t += 1
            lo = indptr[order[r]]
            nnz = indptr[order[r] + 1] - lo
            y = s[order[r]]
            f = sdot(&w[0], &data[lo], &indices[lo], nnz)
            if not isfinite(f):
                bad = order[r]
                break
            if y * f <= 0.0:
                for k in range(lo, lo + nnz):
                    w[indices[k]] += y * data[k]
    if bad >= 0:
        _overflow(bad, "score w.x")
    return t


def pa1_pass(const double[:, ::1] X, const double[::1] s, const Py_ssize_t[::1] order,
             double[::1] w, long long t0, double C):
    """PA-I over ``X[order]``; see :func:`sosl._core._baselines_ref.pa1_pass`."""
    cdef Py_ssize_t p = X.shape[1], m = order.shape[0], r, j, bad = -1
    cdef long long t = t0
    cdef const double* x
    cdef double y, sq, f, loss, tau
    with nogil:
        for r in range(m):
            t += 1
            x = &X[order[r], 0]
            y = s[order[r]]
            sq = dot(x, x, p)
            f = dot(&w[0], x, p)
            if not (isfinite(sq) and isfinite(f)):
                bad = order[r]
                break
            if sq == 0.0:
                continue
            loss = 1.0 - y * f
            if loss < 0.0:
                loss = 0.0
            tau = loss / sq
            if tau > C:
                tau = C
            for j in range(p):
                w[j] += tau * y * x[j]
    if bad >= 0:
        _overflow(bad, "score w.x or norm ||x||^2")
    return t


def pa1_pass_csr(const double[::1] data, const int[::1] indices, const int[::1] indptr,
                 const double[::1] s, const Py_ssize_t[::1] order, double[::1] w,
                 long long t0, double C):
    """PA-I over the CSR rows ``order``, O(nnz) per round; as :func:`pa1_pass`."""
    cdef Py_ssize_t m = order.shape[0], r, k, lo, nnz, bad = -1
    cdef long long t = t0
    cdef double y, sq, f, loss, tau
    with nogil:
        for r in range(m):
            t += 1
            lo = indptr[order[r]]
            nnz = indptr[order[r] + 1] - lo
            y = s[order[r]]
            sq = ssq(&data[lo], nnz)
            f = sdot(&w[0], &data[lo], &indices[lo], nnz)
            if not (isfinite(sq) and isfinite(f)):
                bad = order[r]
                break
            if sq == 0.0:
                continue
            loss = 1.0 - y * f
            if loss < 0.0:
                loss = 0.0
            tau = loss / sq
            if tau > C:
                tau = C
            for k in range(lo, lo + nnz):
                w[indices[k]] += tau * y * data[k]
    if bad >= 0:
        _overflow(bad, "score w.x or norm ||x||^2")
    return t


cdef inline double oam_round_weight(double y, double C, Py_ssize_t budget, long long* N,
                                    int* k, int* o) noexcept nogil:
    """Count x_t in its class k (o: the other one); return C_t = C max(1, N_o / budget)."""
    cdef double ratio
    if y > 0:
        k[0] = 1
        o[0] = 0
    else:
        k[0] = 0
        o[0] = 1
    N[k[0]] += 1
    ratio = <double> N[o[0]] / <double> budget
    if ratio < 1.0:
        ratio = 1.0
    return C * ratio


cdef inline double oam_seq_step(double y, double wd, double sq, double C_t) noexcept nogil:
    """The sequential (PA-I) step size of one pair: min(max(0, 1 - y w.d) / ||d||^2, C_t / 2)."""
    cdef double tau = 1.0 - y * wd
    if tau < 0.0:
        tau = 0.0
    tau = tau / sq
    if tau > C_t / 2.0:
        tau = C_t / 2.0
    return tau


cdef inline bint oam_step(const double* x, double y, Py_ssize_t p, double* w, double* B,
                          long long* nB, long long* N, unsigned long long* rng, double C,
                          int update, Py_ssize_t budget, double* d,
                          double* g) noexcept nogil:
    """One OAM round on a dense row ``x``; False if a score or a norm is not finite."""
    cdef Py_ssize_t j, q
    cdef unsigned long long u
    cdef int k, o
    cdef double* b
    cdef double C_t, sq, tau, wd
    C_t = oam_round_weight(y, C, budget, N, &k, &o)
    if update == OAM_SEQ:
        for q in range(nB[o]):
            b = &B[(o * budget + q) * p]
            for j in range(p):
                d[j] = x[j] - b[j]
            sq = dot(d, d, p)
            wd = dot(w, d, p)
            if not (isfinite(sq) and isfinite(wd)):
                return False
            if sq == 0.0:
                continue
            tau = oam_seq_step(y, wd, sq, C_t)
            for j in range(p):
                w[j] += tau * y * d[j]
    elif nB[o] > 0:
        for j in range(p):
            g[j] = 0.0
        for q in range(nB[o]):
            b = &B[(o * budget + q) * p]
            for j in range(p):
                d[j] = x[j] - b[j]
            wd = dot(w, d, p)
            if not isfinite(wd):
                return False
            if y * wd <= 1.0:
                for j in range(p):
                    g[j] += d[j]
        for j in range(p):
            w[j] += (C_t / 2.0) * y * g[j]
    if nB[k] < budget:
        b = &B[(k * budget + nB[k]) * p]
        for j in range(p):
            b[j] = x[j]
        nB[k] += 1
    else:
        u = splitmix64(rng) % (<unsigned long long> N[k])
        if u < <unsigned long long> budget:
            b = &B[(k * budget + <Py_ssize_t> u) * p]
            for j in range(p):
                b[j] = x[j]
    return True


def oam_pass(const double[:, ::1] X, const double[::1] s, const Py_ssize_t[::1] order,
             double[::1] w, double[:, :, ::1] B, long long[::1] nB, long long[::1] N,
             unsigned long long[::1] rng, long long t0, double C, int update,
             double[::1] work):
    """OAM over ``X[order]``; ``work`` is scratch space of length >= 2 p.

    See :func:`sosl._core._baselines_ref.oam_pass`.
    """
    cdef Py_ssize_t p = X.shape[1], m = order.shape[0], budget = B.shape[1], r, bad = -1
    cdef long long t = t0
    with nogil:
        for r in range(m):
            t += 1
            if not oam_step(&X[order[r], 0], s[order[r]], p, &w[0], &B[0, 0, 0], &nB[0],
                            &N[0], &rng[0], C, update, budget, &work[0], &work[p]):
                bad = order[r]
                break
    if bad >= 0:
        _overflow(bad, "pairwise score w.(x_t - x) or norm")
    return t


cdef inline void pair_stats(const double* w, const int* xi, const double* xv, Py_ssize_t nx,
                            const int* bi, const double* bv, Py_ssize_t nb, double* sq,
                            double* wd) noexcept nogil:
    """||d||^2 and w.d for d = x - b, two sparse rows with sorted columns (one merge).

    Each entry of d is formed as the dense round forms it (x_j - b_j, x_j, or -b_j where
    the other row has no value), so only the order of the two sums differs.
    """
    cdef Py_ssize_t a = 0, c = 0
    cdef int j
    cdef double dj, acc_sq = 0.0, acc_wd = 0.0
    while a < nx or c < nb:
        if c >= nb or (a < nx and xi[a] < bi[c]):
            j = xi[a]
            dj = xv[a]
            a += 1
        elif a >= nx or bi[c] < xi[a]:
            j = bi[c]
            dj = -bv[c]
            c += 1
        else:
            j = xi[a]
            dj = xv[a] - bv[c]
            a += 1
            c += 1
        acc_sq += dj * dj
        acc_wd += w[j] * dj
    sq[0] = acc_sq
    wd[0] = acc_wd


cdef inline void pair_axpy(double* v, double coef, const int* xi, const double* xv,
                           Py_ssize_t nx, const int* bi, const double* bv,
                           Py_ssize_t nb) noexcept nogil:
    """v += coef d on the columns of d = x - b (the union of the two rows' columns)."""
    cdef Py_ssize_t a = 0, c = 0
    while a < nx or c < nb:
        if c >= nb or (a < nx and xi[a] < bi[c]):
            v[xi[a]] += coef * xv[a]
            a += 1
        elif a >= nx or bi[c] < xi[a]:
            v[bi[c]] += coef * (-bv[c])
            c += 1
        else:
            v[xi[a]] += coef * (xv[a] - bv[c])
            a += 1
            c += 1


cdef inline bint oam_step_csr(const int* xi, const double* xv, Py_ssize_t nx, double y,
                              double* w, int* Bi, double* Bv, long long* Bn, Py_ssize_t cap,
                              long long* nB, long long* N, unsigned long long* rng,
                              double C, int update, Py_ssize_t budget, double* g,
                              unsigned char* act) noexcept nogil:
    """One OAM round on a sparse row against sparse buffers; False if a score or a norm
    is not finite. Slot q of class c holds ``Bn[c budget + q]`` sorted columns and values
    at ``Bi``, ``Bv`` offset ``(c budget + q) cap``; the rest of a slot is 0."""
    cdef Py_ssize_t q, a, slot, nb, old
    cdef unsigned long long u
    cdef int k, o
    cdef int* bi
    cdef double* bv
    cdef double C_t, sq, tau, wd, coef
    cdef bint any_active = False
    C_t = oam_round_weight(y, C, budget, N, &k, &o)
    if update == OAM_SEQ:
        for q in range(nB[o]):
            slot = o * budget + q
            bi = &Bi[slot * cap]
            bv = &Bv[slot * cap]
            nb = Bn[slot]
            pair_stats(w, xi, xv, nx, bi, bv, nb, &sq, &wd)
            if not (isfinite(sq) and isfinite(wd)):
                return False
            if sq == 0.0:
                continue
            tau = oam_seq_step(y, wd, sq, C_t)
            pair_axpy(w, tau * y, xi, xv, nx, bi, bv, nb)
    elif nB[o] > 0:
        # every pairwise score at w_t first (the gradient is evaluated there), then the
        # sum of the active differences in g (zero outside a pass), then one step
        for q in range(nB[o]):
            slot = o * budget + q
            pair_stats(w, xi, xv, nx, &Bi[slot * cap], &Bv[slot * cap], Bn[slot], &sq, &wd)
            if not isfinite(wd):
                return False
            act[q] = y * wd <= 1.0
            any_active = any_active or act[q]
        if any_active:
            for q in range(nB[o]):
                if act[q]:
                    slot = o * budget + q
                    pair_axpy(g, 1.0, xi, xv, nx, &Bi[slot * cap], &Bv[slot * cap], Bn[slot])
            coef = (C_t / 2.0) * y
            for a in range(nx):
                w[xi[a]] += coef * g[xi[a]]
                g[xi[a]] = 0.0
            for q in range(nB[o]):
                if act[q]:
                    slot = o * budget + q
                    bi = &Bi[slot * cap]
                    for a in range(Bn[slot]):
                        w[bi[a]] += coef * g[bi[a]]
                        g[bi[a]] = 0.0
    if nB[k] < budget:
        slot = k * budget + nB[k]
        nB[k] += 1
    else:
        u = splitmix64(rng) % (<unsigned long long> N[k])
        if u >= <unsigned long long> budget:
            return True
        slot = k * budget + <Py_ssize_t> u
    old = Bn[slot]
    bi = &Bi[slot * cap]
    bv = &Bv[slot * cap]
    for a in range(nx):
        bi[a] = xi[a]
        bv[a] = xv[a]
    for a in range(nx, old):
        bi[a] = 0
        bv[a] = 0.0
    Bn[slot] = nx
    return True


def oam_pass_csr(const double[::1] data, const int[::1] indices, const int[::1] indptr,
                 const double[::1] s, const Py_ssize_t[::1] order, double[::1] w,
                 int[:, :, ::1] Bi, double[:, :, ::1] Bv, long long[:, ::1] Bn,
                 long long[::1] nB, long long[::1] N, unsigned long long[::1] rng,
                 long long t0, double C, int update, double[::1] g, unsigned char[::1] act):
    """OAM over the CSR rows ``order`` with sparse buffers, O(nnz) per pair.

    Buffer slot q of class c holds a row as ``Bn[c, q]`` sorted columns ``Bi[c, q, :]``
    and values ``Bv[c, q, :]`` (zeros after them); the capacity ``Bi.shape[2]`` must be
    at least the longest row of the pass. A round costs O(sum over the opposite buffer
    of nnz(x_t) + nnz(x)), independent of p. Scratch: ``g`` (length p, all zero, left
    zero; used by the gradient update only, may be empty for the sequential one) and
    ``act`` (length >= buffer size). See :func:`sosl._core._baselines_ref.oam_pass_csr`;
    the state equals that of :func:`oam_pass` over the same rows given dense.
    """
    cdef Py_ssize_t m = order.shape[0], budget = Bi.shape[1], cap = Bi.shape[2]
    cdef Py_ssize_t r, lo, nx, bad = -1, long_row = -1
    cdef long long t = t0
    cdef const double* xd = &data[0] if data.shape[0] > 0 else NULL
    cdef const int* xi = &indices[0] if indices.shape[0] > 0 else NULL
    cdef double* gp = &g[0] if g.shape[0] > 0 else NULL
    cdef unsigned char* ap = &act[0] if act.shape[0] > 0 else NULL
    if update != OAM_SEQ and (g.shape[0] < w.shape[0] or act.shape[0] < budget):
        raise ValueError("the gradient update needs scratch g of length p and act of "
                         "length buffer_size")
    with nogil:
        for r in range(m):
            lo = indptr[order[r]]
            nx = indptr[order[r] + 1] - lo
            if nx > cap:
                long_row = order[r]
                break
            t += 1
            if not oam_step_csr(xi + lo, xd + lo, nx, s[order[r]], &w[0],
                                &Bi[0, 0, 0], &Bv[0, 0, 0], &Bn[0, 0], cap, &nB[0], &N[0],
                                &rng[0], C, update, budget, gp, ap):
                bad = order[r]
                break
    if long_row >= 0:
        raise ValueError(f"row {long_row} has {indptr[long_row + 1] - indptr[long_row]} "
                         f"stored values, more than the buffer capacity {cap}")
    if bad >= 0:
        _overflow(bad, "pairwise score w.(x_t - x) or norm")
    return t


def oam_midpoint_score(const double[::1] w, const int[:, :, ::1] Bi,
                       const double[:, :, ::1] Bv, const long long[:, ::1] Bn,
                       const long long[::1] nB):
    """w.(mean(B^-) + mean(B^+)) / 2 over sparse buffers, O(buffered values).

    Formed as the mean of the buffered rows' scores w.x per class, as the estimator does
    for dense buffers. Both buffers must hold an instance. See
    :func:`sosl._core._baselines_ref.oam_midpoint_score`.
    """
    cdef Py_ssize_t k, q, a
    cdef double acc, mid = 0.0
    with nogil:
        for k in range(2):
            acc = 0.0
            for q in range(nB[k]):
                for a in range(Bn[k, q]):
                    acc += w[Bi[k, q, a]] * Bv[k, q, a]
            mid += 0.5 * (acc / <double> nB[k])
    return mid


def ubauc_pass(const double[:, ::1] X, const double[::1] s, const Py_ssize_t[::1] order,
               double[::1] w, double[::1] c, long long[::1] N, long long t0, double lam,
               int schedule, double eta):
    """OL-UBAUC (reconstruction) over ``X[order]``; see ``_baselines_ref.ubauc_pass``."""
    cdef Py_ssize_t p = X.shape[1], m = order.shape[0], r, j, bad = -1
    cdef long long t = t0
    cdef int k
    cdef const double* x
    cdef double y, f, omega, eta_t, margin, coef_x, g_c
    with nogil:
        for r in range(m):
            t += 1
            x = &X[order[r], 0]
            y = s[order[r]]
            k = 1 if y > 0 else 0
            N[k] += 1
            omega = <double> t / (2.0 * <double> N[k])
            if schedule == STEP_CONSTANT:
                eta_t = eta
            else:
                eta_t = 1.0 / (lam * <double> t)
            f = dot(&w[0], x, p)
            if not isfinite(f):
                bad = order[r]
                break
            margin = y * (f - c[0])
            if margin < 1.0:
                coef_x = -omega * y
                g_c = omega * y
            else:
                coef_x = 0.0
                g_c = 0.0
            for j in range(p):
                w[j] -= eta_t * (lam * w[j] + coef_x * x[j])
            c[0] -= eta_t * g_c
    if bad >= 0:
        _overflow(bad, "score w.x")
    return t


def ubauc_pass_csr(const double[::1] data, const int[::1] indices, const int[::1] indptr,
                   const double[::1] s, const Py_ssize_t[::1] order, double[::1] w,
                   double[::1] c, long long[::1] N, long long t0, double lam, int schedule,
                   double eta):
    """OL-UBAUC over the CSR rows ``order``, O(nnz) per round; as :func:`ubauc_pass`.

    ``w = a u`` during the pass (``u`` in place in ``w``): the shrinkage
    ``w <- (1 - eta_t lam) w`` multiplies ``a``, the hinge step changes ``u`` on the
    row's columns by ``-eta_t coef_x x / a``. A shrink factor of exactly 0 (round 1 of
    eta_t = 1/(lam t)) zeroes ``u`` (O(p), once).
    """
    cdef Py_ssize_t p = w.shape[0], m = order.shape[0], r, j, k, lo, nnz, bad = -1
    cdef long long t = t0
    cdef int cls
    cdef double y, f, omega, eta_t, margin, coef_x, g_c, shrink, step
    cdef double a = 1.0
    with nogil:
        for r in range(m):
            t += 1
            lo = indptr[order[r]]
            nnz = indptr[order[r] + 1] - lo
            y = s[order[r]]
            cls = 1 if y > 0 else 0
            N[cls] += 1
            omega = <double> t / (2.0 * <double> N[cls])
            if schedule == STEP_CONSTANT:
                eta_t = eta
            else:
                eta_t = 1.0 / (lam * <double> t)
            f = a * sdot(&w[0], &data[lo], &indices[lo], nnz)
            if not isfinite(f):
                bad = order[r]
                break
            margin = y * (f - c[0])
            if margin < 1.0:
                coef_x = -omega * y
                g_c = omega * y
            else:
                coef_x = 0.0
                g_c = 0.0
            shrink = 1.0 - eta_t * lam
            if shrink == 0.0:
                for j in range(p):
                    w[j] = 0.0
                a = 1.0
            else:
                a *= shrink
            if coef_x != 0.0:
                step = eta_t * coef_x / a
                for k in range(lo, lo + nnz):
                    w[indices[k]] -= step * data[k]
            if -RESCALE_MIN < a < RESCALE_MIN:
                for j in range(p):
                    w[j] *= a
                a = 1.0
            c[0] -= eta_t * g_c
        if a != 1.0:
            for j in range(p):
                w[j] *= a
    if bad >= 0:
        _overflow(bad, "score w.x")
    return t


cdef inline void solam_scalars(double y, double f, double ph, double a, double b,
                               double al, double* cx, double* g_a, double* g_b,
                               double* g_al) noexcept nogil:
    """SOLAM's partial derivatives of F: dF/dw = cx x, dF/da, dF/db, dF/dalpha."""
    if y > 0:
        cx[0] = 2.0 * (1.0 - ph) * (f - a) - 2.0 * (1.0 + al) * (1.0 - ph)
        g_a[0] = -2.0 * (1.0 - ph) * (f - a)
        g_b[0] = 0.0
        g_al[0] = -2.0 * (1.0 - ph) * f - 2.0 * ph * (1.0 - ph) * al
    else:
        cx[0] = 2.0 * ph * (f - b) + 2.0 * (1.0 + al) * ph
        g_a[0] = 0.0
        g_b[0] = -2.0 * ph * (f - b)
        g_al[0] = 2.0 * ph * f - 2.0 * ph * (1.0 - ph) * al


cdef inline double clip(double val, double R) noexcept nogil:
    return R if val > R else (-R if val < -R else val)


def solam_pass(const double[:, ::1] X, const double[::1] s, const Py_ssize_t[::1] order,
               double[::1] v, double[::1] v_avg, double[::1] alpha, double[::1] step_sum,
               long long[::1] N, long long t0, double eta, double R):
    """SOLAM over ``X[order]``; see :func:`sosl._core._baselines_ref.solam_pass`."""
    cdef Py_ssize_t p = X.shape[1], m = order.shape[0], r, j, bad = -1
    cdef long long t = t0
    cdef const double* x
    cdef double y, ph, gamma, a, b, al, f, cx, g_a, g_b, g_al, G, r_old, r_new, nw
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
            if not isfinite(f):
                bad = order[r]
                break
            solam_scalars(y, f, ph, a, b, al, &cx, &g_a, &g_b, &g_al)
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
            if not isfinite(nw):
                bad = order[r]
                break
            if nw > R:
                for j in range(p):
                    v[j] *= R / nw
            v[p] = clip(a - gamma * g_a, R)
            v[p + 1] = clip(b - gamma * g_b, R)
            alpha[0] = clip(al + gamma * g_al, 2.0 * R)
    if bad >= 0:
        _overflow(bad, "score w.x or norm ||w||")
    return t


def solam_pass_csr(const double[::1] data, const int[::1] indices, const int[::1] indptr,
                   const double[::1] s, const Py_ssize_t[::1] order, double[::1] v,
                   double[::1] v_avg, double[::1] alpha, double[::1] step_sum,
                   long long[::1] N, long long t0, double eta, double R, double[::1] work):
    """SOLAM over the CSR rows ``order``, O(nnz) per round; as :func:`solam_pass`.

    During the pass ``w = sc u`` and the gamma-weighted sum of the iterates is
    ``Gamma wbar = c u - Q``: adding gamma_t w_t to the sum adds gamma_t sc to ``c``; a
    step du on the row's columns adds c du to ``Q``; the projection onto ||w|| <= R
    multiplies ``sc`` (with ||u||^2 kept up to date on the row's columns). ``u`` and ``Q``
    are interleaved in ``work`` (length >= 2 p; ``work[2j] = u_j``, ``work[2j+1] = Q_j``)
    so that a row's update touches one cache line per column. When ``sc`` falls below
    ``RESCALE_MIN_AVG`` the sum is formed, ``u`` takes the scale and ``c, Q`` restart from
    it (O(p)), which bounds the cancellation in ``c u - Q``.
    """
    cdef Py_ssize_t p = v.shape[0] - 2, m = order.shape[0], r, j, k, lo, nnz, bad = -1
    cdef long long t = t0
    cdef double y, ph, gamma, a, b, al, f, cx, g_a, g_b, g_al, G, r_old, r_new, nw
    cdef double sc = 1.0, c = 0.0, uu = 0.0, step, old, new, S_j, acc
    cdef double* uq = &work[0]
    if m == 0:
        return t
    with nogil:
        for j in range(p):
            uu += v[j] * v[j]
            uq[2 * j] = v[j]
            uq[2 * j + 1] = -step_sum[0] * v_avg[j]
        for r in range(m):
            t += 1
            lo = indptr[order[r]]
            nnz = indptr[order[r] + 1] - lo
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
            acc = 0.0
            for k in range(lo, lo + nnz):
                acc += uq[2 * <Py_ssize_t> indices[k]] * data[k]
            f = sc * acc
            if not isfinite(f):
                bad = order[r]
                break
            solam_scalars(y, f, ph, a, b, al, &cx, &g_a, &g_b, &g_al)
            G = step_sum[0] + gamma
            r_old = step_sum[0] / G
            r_new = gamma / G
            c += gamma * sc
            v_avg[p] = v_avg[p] * r_old + r_new * a
            v_avg[p + 1] = v_avg[p + 1] * r_old + r_new * b
            alpha[1] = (step_sum[0] * alpha[1] + gamma * al) / G
            step_sum[0] = G
            step = gamma * cx / sc
            for k in range(lo, lo + nnz):
                j = 2 * <Py_ssize_t> indices[k]
                old = uq[j]
                new = old - step * data[k]
                uq[j] = new
                uu += new * new - old * old
                uq[j + 1] += c * (new - old)
            if uu < 0.0:
                uu = 0.0
            nw = sc * sqrt(uu)
            if not isfinite(nw):
                bad = order[r]
                break
            if nw > R:
                sc *= R / nw
            if sc < RESCALE_MIN_AVG:
                uu = 0.0
                for j in range(p):
                    S_j = c * uq[2 * j] - uq[2 * j + 1]
                    uq[2 * j] *= sc
                    uq[2 * j + 1] = -S_j
                    uu += uq[2 * j] * uq[2 * j]
                c = 0.0
                sc = 1.0
            v[p] = clip(a - gamma * g_a, R)
            v[p + 1] = clip(b - gamma * g_b, R)
            alpha[0] = clip(al + gamma * g_al, 2.0 * R)
        # wbar = (c u - Q) / Gamma; Gamma > 0 after any round (eta > 0)
        G = 1.0 / step_sum[0] if step_sum[0] > 0.0 else 0.0
        for j in range(p):
            v_avg[j] = (c * uq[2 * j] - uq[2 * j + 1]) * G
            v[j] = sc * uq[2 * j]
    if bad >= 0:
        _overflow(bad, "score w.x or norm ||w||")
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
    cdef Py_ssize_t p = X.shape[1], m = order.shape[0], r, j, bad = -1
    cdef long long t = t0
    cdef int own, opp
    cdef const double* x
    cdef double* S
    cdef double* a = &work[0]
    cdef double* g = &work[p]
    cdef double* d_old = &work[2 * p]
    cdef double* d_new = &work[3 * p]
    cdef double y, wa, s2, d_mu, d_s2, H
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
                for j in range(p):
                    g[j] = dot(&S[j * p], &w[0], p)
                s2 = dot(&w[0], g, p)
                if not (isfinite(wa) and isfinite(s2)):
                    bad = order[r]
                    break
                # half the gradient of psi_S(w.a, w' Sigma w): d_mu a + 2 d_s2 Sigma w
                loss_grad(LOSS_S, wa, s2, &d_mu, &d_s2)
                for j in range(p):
                    g[j] = lam * w[j] + 0.5 * d_mu * a[j] + d_s2 * g[j]
            else:
                for j in range(p):
                    g[j] = lam * w[j]
            welford_update(x, &xbar[own, 0], &Sigma[own, 0, 0], &N[own], d_old, d_new, p)
            for j in range(p):
                G2[j] += g[j] * g[j]
                H = delta + sqrt(G2[j])
                if H > 0.0:
                    w[j] -= eta * (g[j] / H)
    if bad >= 0:
        _overflow(bad, "score w.a or variance w' Sigma w")
    return t
