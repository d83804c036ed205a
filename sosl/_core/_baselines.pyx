# cython: language_level=3
"""Typed kernels of the linear online baselines: Perceptron, PA-I, OAM, OL-UBAUC, SOLAM, AdaOAM.

One ``nogil`` pass per learner over the samples in a given order; no validation, no
allocation of results. The NumPy references with the same signatures, one line per
equation, are in :mod:`sosl._core._baselines_ref` (symbol table, equations, and the
conventions at guards). Per-round cost on dense rows: O(p) for Perceptron, PA-I, OL-UBAUC
and SOLAM; O(budget p) for OAM; O(p^2) for AdaOAM.

Each pass is written once, over the row view of :mod:`sosl._core._rows` (``SourceRows``:
dense rows or a CSR matrix with sorted int32 column indices); ``*_pass`` points the view
at a dense (n, p) array and ``*_pass_csr`` at CSR arrays (``data``, ``indices``,
``indptr``), and both run the same body, so the CSR pass gives the state of the dense
pass over the same rows up to rounding. On a CSR row Perceptron, PA-I, OL-UBAUC and SOLAM
cost O(nnz(x_t)) per round: OL-UBAUC and SOLAM hold their weights as ``w = a u`` (a
scalar scale ``a`` times a vector ``u``, in both formats), so a shrinkage or a projection
onto a ball multiplies ``a`` only, and SOLAM's running average of the iterates is kept as
``Gamma vbar = c u - Q`` (a scalar ``c`` and a vector ``Q`` changed only where ``u``
changes). Converting to and from that form costs O(p) once per pass. OAM's buffers are an
``OamStore``: dense slots for dense rows, or sparse slots (sorted columns and values in
fixed-capacity slots, a state of another shape holding the same rows) for CSR rows, where
each pairwise difference x_t - x is formed by merging the two rows' columns, so a round
costs O(sum over the opposite buffer of nnz(x_t) + nnz(x)) with no term in p; the
intercept is :func:`oam_midpoint_score` (sparse) or :func:`oam_midpoint_dense`.

``oam_one``, ``solam_one`` and ``adaoam_one`` play one dense row on the live state for
``learn_one``: the round of the pass, with what it writes saved first (O(p); for AdaOAM
the O(p^2) covariance update is made only once it is known to stay finite, so nothing
O(p^2) is copied) and restored if a written value is not finite.

A score w.x_t (or a squared norm) that is not finite stops the pass with a
``FloatingPointError`` naming the row: the features are too large for double precision.
"""

import numpy as np

from libc.math cimport fabs, isfinite, sqrt
from libc.string cimport memcpy

from sosl._core._codes cimport LOSS_S, OAM_SEQ, STEP_CONSTANT
from sosl._core._losses cimport loss_grad
from sosl._core._rows cimport (
    SourceRow,
    SourceRows,
    csr_source,
    dense_dot,
    dense_source,
    get_row,
    row_axpy,
    row_dot,
    row_sq,
)

# u (of w = a u) is folded back into w when |a| falls below this (OL-UBAUC: no
# cancellation, as for scikit-learn's weight vector); SOLAM folds back at a larger
# scale, because its average c u - Q loses about log10(1 / a) digits to cancellation
cdef double RESCALE_MIN = 1e-9
cdef double RESCALE_MIN_AVG = 1e-3
# AdaOAM's one-row path makes the covariance update only when every term it adds stays
# below this (three such terms cannot overflow: 3 * 2^1020 < DBL_MAX ~ 2^1024)
cdef double SAFE_TERM = 2.0 ** 1020


def _overflow(Py_ssize_t row, str what):
    raise FloatingPointError(
        f"the {what} of row {row} of the batch is not finite: the features are too large "
        "for double precision (scale them)")


cdef inline bint all_finite(const double* a, Py_ssize_t n) noexcept nogil:
    """Whether a[0:n] holds only finite values (x - x is 0 exactly for them, NaN else)."""
    cdef Py_ssize_t k
    cdef double acc = 0.0
    for k in range(n):
        acc += a[k] - a[k]
    return acc == 0.0


cdef inline unsigned long long splitmix64(unsigned long long* state) noexcept nogil:
    """splitmix64: advance the state in place and return the next 64-bit output."""
    cdef unsigned long long z
    state[0] += 0x9E3779B97F4A7C15ULL
    z = state[0]
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef inline const double* cptr(const double[::1] a) noexcept:
    return &a[0] if a.shape[0] > 0 else NULL


cdef inline const Py_ssize_t* optr(const Py_ssize_t[::1] a) noexcept:
    return &a[0] if a.shape[0] > 0 else NULL


cdef inline SourceRows dense_rows(const double[:, ::1] X) noexcept:
    cdef SourceRows rows
    dense_source(X, &rows)
    return rows


cdef inline SourceRows csr_rows(const double[::1] data, const int[::1] indices,
                                const int[::1] indptr, const Py_ssize_t[::1] order,
                                str name) except *:
    cdef SourceRows rows
    csr_source(data, indices, indptr, order, 0, -1, name, &rows)
    return rows


# -- Perceptron ---------------------------------------------------------------------------

cdef long long perceptron_rows(const SourceRows* rows, Py_ssize_t p, const double[::1] s,
                               const Py_ssize_t[::1] order, double[::1] w,
                               long long t) except -1:
    """The perceptron over the rows ``order`` of ``rows``; returns the round counter."""
    cdef Py_ssize_t m = order.shape[0], r, i, bad = -1
    cdef SourceRow x
    cdef double y, f
    with nogil:
        for r in range(m):
            t += 1
            i = order[r]
            get_row(rows, i, &x)
            y = s[i]
            f = row_dot(&x, p, &w[0])
            if not isfinite(f):
                bad = i
                break
            if y * f <= 0.0:
                row_axpy(&x, p, y, &w[0])
    if bad >= 0:
        _overflow(bad, "score w.x")
    return t


def perceptron_pass(const double[:, ::1] X, const double[::1] s, const Py_ssize_t[::1] order,
                    double[::1] w, long long t0):
    """Perceptron over ``X[order]``; see :func:`sosl._core._baselines_ref.perceptron_pass`."""
    cdef SourceRows rows = dense_rows(X)
    return perceptron_rows(&rows, X.shape[1], s, order, w, t0)


def perceptron_pass_csr(const double[::1] data, const int[::1] indices,
                        const int[::1] indptr, const double[::1] s,
                        const Py_ssize_t[::1] order, double[::1] w, long long t0):
    """Perceptron over the CSR rows ``order``, O(nnz) per round; as :func:`perceptron_pass`."""
    cdef SourceRows rows = csr_rows(data, indices, indptr, order, "perceptron_pass_csr")
    return perceptron_rows(&rows, w.shape[0], s, order, w, t0)


# -- PA-I ---------------------------------------------------------------------------------

cdef long long pa1_rows(const SourceRows* rows, Py_ssize_t p, const double[::1] s,
                        const Py_ssize_t[::1] order, double[::1] w, long long t,
                        double C) except -1:
    """PA-I over the rows ``order`` of ``rows``; returns the round counter."""
    cdef Py_ssize_t m = order.shape[0], r, i, bad = -1
    cdef SourceRow x
    cdef double y, sq, f, loss, tau
    with nogil:
        for r in range(m):
            t += 1
            i = order[r]
            get_row(rows, i, &x)
            y = s[i]
            sq = row_sq(&x, p)
            f = row_dot(&x, p, &w[0])
            if not (isfinite(sq) and isfinite(f)):
                bad = i
                break
            if sq == 0.0:
                continue
            loss = 1.0 - y * f
            if loss < 0.0:
                loss = 0.0
            tau = loss / sq
            if tau > C:
                tau = C
            row_axpy(&x, p, tau * y, &w[0])
    if bad >= 0:
        _overflow(bad, "score w.x or norm ||x||^2")
    return t


def pa1_pass(const double[:, ::1] X, const double[::1] s, const Py_ssize_t[::1] order,
             double[::1] w, long long t0, double C):
    """PA-I over ``X[order]``; see :func:`sosl._core._baselines_ref.pa1_pass`."""
    cdef SourceRows rows = dense_rows(X)
    return pa1_rows(&rows, X.shape[1], s, order, w, t0, C)


def pa1_pass_csr(const double[::1] data, const int[::1] indices, const int[::1] indptr,
                 const double[::1] s, const Py_ssize_t[::1] order, double[::1] w,
                 long long t0, double C):
    """PA-I over the CSR rows ``order``, O(nnz) per round; as :func:`pa1_pass`."""
    cdef SourceRows rows = csr_rows(data, indices, indptr, order, "pa1_pass_csr")
    return pa1_rows(&rows, w.shape[0], s, order, w, t0, C)


# -- OAM ----------------------------------------------------------------------------------
# The buffers: slot q of class c is slot c budget + q. Dense slots hold p values at
# B + slot p; sparse slots hold Bn[slot] sorted columns and values at Bi, Bv + slot cap
# (zeros after them). Dense rows go with dense slots, CSR rows with sparse slots.

cdef struct OamStore:
    bint dense
    double* d          # dense: scratch of p for the difference x_t - b (sequential update)
    double* B
    int* Bi
    double* Bv
    long long* Bn
    Py_ssize_t cap
    Py_ssize_t p


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


cdef inline void dense_pair_stats(const double* x, const double* b, const double* w,
                                  double* d, Py_ssize_t p, bint need_sq, double* sq,
                                  double* wd) noexcept nogil:
    """``pair_stats`` of dense rows, in the sums of ``dense_dot``.

    With ``need_sq`` (the sequential update, which steps along d next): d = x - b is
    written to ``d``, then ||d||^2 and w.d each in a pass of ``dense_dot`` (measured:
    one pass forming both sums is slower here, see ``benchmarks/bench_baselines.py
    --against``). Without (the gradient update): one read-only pass over x, b and w
    that forms each d_j in a register and writes nothing; its sum is that of
    ``dense_dot(w, d, p)`` (four partial sums by j mod 4, added as (t0 + t1) + (t2 + t3),
    the tail into t0).
    """
    cdef Py_ssize_t j, q
    cdef double t0 = 0.0, t1 = 0.0, t2 = 0.0, t3 = 0.0
    if need_sq:
        for j in range(p):
            d[j] = x[j] - b[j]
        sq[0] = dense_dot(d, d, p)
        wd[0] = dense_dot(w, d, p)
        return
    q = p - (p & 3)
    for j in range(0, q, 4):
        t0 += w[j] * (x[j] - b[j])
        t1 += w[j + 1] * (x[j + 1] - b[j + 1])
        t2 += w[j + 2] * (x[j + 2] - b[j + 2])
        t3 += w[j + 3] * (x[j + 3] - b[j + 3])
    for j in range(q, p):
        t0 += w[j] * (x[j] - b[j])
    wd[0] = (t0 + t1) + (t2 + t3)


cdef void sparse_pair_stats(const int* xi, const double* xv, Py_ssize_t nx, const int* bi,
                            const double* bv, Py_ssize_t nb, const double* w, double* sq,
                            double* wd) noexcept nogil:
    """``pair_stats`` of sparse rows: one merge of the sorted columns."""
    cdef Py_ssize_t a = 0, c = 0
    cdef int col
    cdef double dj, acc_sq = 0.0, acc_wd = 0.0
    while a < nx or c < nb:
        if c >= nb or (a < nx and xi[a] < bi[c]):
            col = xi[a]
            dj = xv[a]
            a += 1
        elif a >= nx or bi[c] < xi[a]:
            col = bi[c]
            dj = -bv[c]
            c += 1
        else:
            col = xi[a]
            dj = xv[a] - bv[c]
            a += 1
            c += 1
        acc_sq += dj * dj
        acc_wd += w[col] * dj
    sq[0] = acc_sq
    wd[0] = acc_wd


cdef inline void pair_stats(const OamStore* st, Py_ssize_t slot, const SourceRow* x,
                            const double* w, bint need_sq, double* sq,
                            double* wd) noexcept nogil:
    """w.d and (if ``need_sq``; a sparse merge forms it anyway) ||d||^2 for the pairwise
    difference d = x_t - b, b the row in ``slot``.

    Dense: with ``need_sq``, d is written to the store's scratch ``st.d`` (for
    ``pair_axpy``), then the two sums; without, one read-only pass (see
    ``dense_pair_stats``). Sparse: one merge of the sorted columns, each entry of d
    formed as the dense round forms it (x_j - b_j, x_j, or -b_j where the other row has
    no value), so only the order of the two sums differs.
    """
    cdef double m_sq, m_wd
    if st.dense:
        dense_pair_stats(x.x, st.B + slot * st.p, w, st.d, st.p, need_sq, sq, wd)
    else:
        # the merge (not inlined) writes to these locals, not to ``sq`` and ``wd``: were
        # their addresses passed to it, the caller's sq and wd would live in memory on
        # the dense path too, a store and a reload on the sequential update's chain
        sparse_pair_stats(x.xi, x.xv, x.xn, st.Bi + slot * st.cap, st.Bv + slot * st.cap,
                          st.Bn[slot], w, &m_sq, &m_wd)
        sq[0] = m_sq
        wd[0] = m_wd


cdef void sparse_pair_axpy(const int* xi, const double* xv, Py_ssize_t nx, const int* bi,
                           const double* bv, Py_ssize_t nb, double coef,
                           double* v) noexcept nogil:
    """``pair_axpy`` of sparse rows, on the union of their columns."""
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


cdef inline void pair_axpy(const OamStore* st, Py_ssize_t slot, const SourceRow* x,
                           double coef, bint stored, double* v) noexcept nogil:
    """v += coef d on the columns of d = x_t - b, b the row in ``slot``, right after
    ``pair_stats`` of the same slot: for dense rows on all p, from ``st.d`` if that
    ``pair_stats`` stored d there (``stored``: it was called with ``need_sq``), else with
    each d_j formed again as it forms it; for sparse rows on the union of the two rows'
    columns."""
    cdef Py_ssize_t j, p
    cdef const double* xd
    cdef const double* b
    cdef const double* d
    if st.dense:
        p = st.p
        if stored:
            d = st.d
            for j in range(p):
                v[j] += coef * d[j]
        else:
            xd = x.x
            b = st.B + slot * p
            for j in range(p):
                v[j] += coef * (xd[j] - b[j])
    else:
        sparse_pair_axpy(x.xi, x.xv, x.xn, st.Bi + slot * st.cap, st.Bv + slot * st.cap,
                         st.Bn[slot], coef, v)


cdef inline void grad_apply(const OamStore* st, const SourceRow* x, Py_ssize_t first,
                            Py_ssize_t n, const unsigned char* act, double coef, double* w,
                            double* g) noexcept nogil:
    """w += coef g (unless ``w`` is NULL) on the columns g holds (of x_t and of the active
    slots first .. first + n - 1), and g back to 0 there."""
    cdef Py_ssize_t j, q, a
    cdef const int* bi
    if st.dense:
        if w != NULL:
            for j in range(st.p):
                w[j] += coef * g[j]
        for j in range(st.p):
            g[j] = 0.0
        return
    for a in range(x.xn):
        if w != NULL:
            w[x.xi[a]] += coef * g[x.xi[a]]
        g[x.xi[a]] = 0.0
    for q in range(n):
        if act[q]:
            bi = st.Bi + (first + q) * st.cap
            for a in range(st.Bn[first + q]):
                if w != NULL:
                    w[bi[a]] += coef * g[bi[a]]
                g[bi[a]] = 0.0


cdef inline void store_row(OamStore* st, Py_ssize_t slot, const SourceRow* x,
                           double* saved) noexcept nogil:
    """Write x_t into ``slot`` (a sparse slot: clear what a longer occupant left after it);
    a dense slot's old content goes to ``saved`` first unless it is NULL."""
    cdef Py_ssize_t j, old
    cdef double* b
    cdef int* bi
    cdef double* bv
    if st.dense:
        b = st.B + slot * st.p
        if saved != NULL:
            memcpy(saved, b, st.p * sizeof(double))
        for j in range(st.p):
            b[j] = x.x[j]
        return
    old = st.Bn[slot]
    bi = st.Bi + slot * st.cap
    bv = st.Bv + slot * st.cap
    for j in range(x.xn):
        bi[j] = x.xi[j]
        bv[j] = x.xv[j]
    for j in range(x.xn, old):
        bi[j] = 0
        bv[j] = 0.0
    st.Bn[slot] = x.xn


cdef inline bint oam_update(const SourceRow* x, double y, const OamStore* st, double* w,
                            const long long* nB, long long* N, double C, int update,
                            Py_ssize_t budget, double* g, unsigned char* act,
                            int* k) noexcept nogil:
    """The classifier part of an OAM round (x_t counted in its class ``k``, the update
    against the other buffer); False if a score or a norm is not finite. ``g`` (all 0,
    left 0) and ``act`` (budget flags) are the gradient update's scratch."""
    cdef Py_ssize_t q, first
    cdef int o
    cdef double C_t, sq, wd, tau
    cdef bint any_active = False
    # local copies of the store and the row: their fields (storage, pointers, strides)
    # are then loaded once per round, not again for every pair past the stores into w,
    # g and act (a store through unsigned char* act may alias anything)
    cdef OamStore sv = st[0]
    cdef SourceRow xv = x[0]
    C_t = oam_round_weight(y, C, budget, N, k, &o)
    first = o * budget
    if update == OAM_SEQ:
        for q in range(nB[o]):
            pair_stats(&sv, first + q, &xv, w, True, &sq, &wd)
            if not (isfinite(sq) and isfinite(wd)):
                return False
            if sq == 0.0:
                continue
            tau = oam_seq_step(y, wd, sq, C_t)
            pair_axpy(&sv, first + q, &xv, tau * y, True, w)
    elif nB[o] > 0:
        # every pairwise score at w_t (the gradient is evaluated there, w changes only
        # after the loop), the active differences summed in g, then one step
        for q in range(nB[o]):
            pair_stats(&sv, first + q, &xv, w, False, &sq, &wd)
            if not isfinite(wd):
                grad_apply(&sv, &xv, first, q, act, 0.0, NULL, g)   # g back to 0
                return False
            act[q] = y * wd <= 1.0
            if act[q]:
                any_active = True
                pair_axpy(&sv, first + q, &xv, 1.0, False, g)
        if any_active:
            grad_apply(&sv, &xv, first, nB[o], act, (C_t / 2.0) * y, w, g)
    return True


cdef inline Py_ssize_t oam_reservoir(const SourceRow* x, OamStore* st, long long* nB,
                                     const long long* N, unsigned long long* rng,
                                     Py_ssize_t budget, int k, double* saved) noexcept nogil:
    """x_t enters the buffer of its class ``k`` by reservoir sampling (Algorithm R);
    returns the slot written, or -1."""
    cdef Py_ssize_t slot
    cdef unsigned long long u
    if nB[k] < budget:
        slot = k * budget + nB[k]
        nB[k] += 1
    else:
        u = splitmix64(rng) % (<unsigned long long> N[k])
        if u >= <unsigned long long> budget:
            return -1
        slot = k * budget + <Py_ssize_t> u
    store_row(st, slot, x, saved)
    return slot


cdef long long oam_rows(const SourceRows* rows, OamStore* st, const double[::1] s,
                        const Py_ssize_t[::1] order, double[::1] w, long long[::1] nB,
                        long long[::1] N, unsigned long long[::1] rng, long long t, double C,
                        int update, Py_ssize_t budget, double* g,
                        unsigned char* act) except -1:
    """OAM over the rows ``order`` of ``rows`` against the buffers ``st``."""
    cdef Py_ssize_t m = order.shape[0], r, i, bad = -1
    cdef SourceRow x
    cdef int k
    with nogil:
        for r in range(m):
            t += 1
            i = order[r]
            get_row(rows, i, &x)
            if not oam_update(&x, s[i], st, &w[0], &nB[0], &N[0], C, update, budget, g, act,
                              &k):
                bad = i
                break
            oam_reservoir(&x, st, &nB[0], &N[0], &rng[0], budget, k, NULL)
    if bad >= 0:
        _overflow(bad, "pairwise score w.(x_t - x) or norm")
    return t


cdef inline OamStore dense_store(double[:, :, ::1] B, double* d) noexcept:
    cdef OamStore st
    st.dense = True
    st.d = d
    st.B = &B[0, 0, 0] if B.shape[2] > 0 else NULL
    st.Bi = NULL
    st.Bv = NULL
    st.Bn = NULL
    st.cap = 0
    st.p = B.shape[2]
    return st


def oam_pass(const double[:, ::1] X, const double[::1] s, const Py_ssize_t[::1] order,
             double[::1] w, double[:, :, ::1] B, long long[::1] nB, long long[::1] N,
             unsigned long long[::1] rng, long long t0, double C, int update,
             double[::1] work):
    """OAM over ``X[order]``; ``work`` is scratch space of length >= 2 p.

    See :func:`sosl._core._baselines_ref.oam_pass`.
    """
    cdef Py_ssize_t p = X.shape[1], budget = B.shape[1], j
    cdef SourceRows rows = dense_rows(X)
    cdef OamStore st
    cdef unsigned char[::1] act = np.zeros(budget, dtype=np.uint8)
    if work.shape[0] < 2 * p or B.shape[2] != p:
        raise ValueError("oam_pass: need work of length >= 2 p and buffers of p columns")
    st = dense_store(B, &work[p] if p > 0 else NULL)
    for j in range(p):
        work[j] = 0.0
    return oam_rows(&rows, &st, s, order, w, nB, N, rng, t0, C, update, budget,
                    &work[0] if p > 0 else NULL, &act[0])


def oam_pass_csr(const double[::1] data, const int[::1] indices, const int[::1] indptr,
                 const double[::1] s, const Py_ssize_t[::1] order, double[::1] w,
                 int[:, :, ::1] Bi, double[:, :, ::1] Bv, long long[:, ::1] Bn,
                 long long[::1] nB, long long[::1] N, unsigned long long[::1] rng,
                 long long t0, double C, int update, double[::1] g, unsigned char[::1] act):
    """OAM over the CSR rows ``order`` with sparse buffers, O(nnz) per pair.

    Buffer slot q of class c holds a row as ``Bn[c, q]`` sorted columns ``Bi[c, q, :]``
    and values ``Bv[c, q, :]`` (zeros after them); the capacity ``Bi.shape[2]`` must be
    at least the longest row of the pass (checked before any round). A round costs
    O(sum over the opposite buffer of nnz(x_t) + nnz(x)), independent of p. Scratch:
    ``g`` (length p, all zero, left zero; used by the gradient update only, may be empty
    for the sequential one) and ``act`` (length >= buffer size). See
    :func:`sosl._core._baselines_ref.oam_pass_csr`; the state equals that of
    :func:`oam_pass` over the same rows given dense.
    """
    cdef Py_ssize_t budget = Bi.shape[1], cap = Bi.shape[2], r, i
    cdef SourceRows rows = csr_rows(data, indices, indptr, order, "oam_pass_csr")
    cdef OamStore st
    if act.shape[0] < budget or (update != OAM_SEQ and g.shape[0] < w.shape[0]):
        raise ValueError("the gradient update needs scratch g of length p, and every "
                         "update act of length buffer_size")
    for r in range(order.shape[0]):
        i = order[r]
        if indptr[i + 1] - indptr[i] > cap:
            raise ValueError(f"row {i} has {indptr[i + 1] - indptr[i]} stored values, more "
                             f"than the buffer capacity {cap}")
    st.dense = False
    st.d = NULL
    st.B = NULL
    st.Bi = &Bi[0, 0, 0]
    st.Bv = &Bv[0, 0, 0]
    st.Bn = &Bn[0, 0]
    st.cap = cap
    st.p = w.shape[0]
    return oam_rows(&rows, &st, s, order, w, nB, N, rng, t0, C, update, budget,
                    &g[0] if g.shape[0] > 0 else NULL, &act[0])


cdef inline double midpoint_dense(const double* w, const double* B, const long long* nB,
                                  Py_ssize_t budget, Py_ssize_t p) noexcept nogil:
    """w.(mean(B^-) + mean(B^+)) / 2 over dense buffers, as the mean of the buffered rows'
    scores w.x per class."""
    cdef Py_ssize_t k, q
    cdef double acc, mid = 0.0
    for k in range(2):
        acc = 0.0
        for q in range(nB[k]):
            acc += dense_dot(&B[(k * budget + q) * p], w, p)
        mid += 0.5 * (acc / <double> nB[k])
    return mid


def oam_midpoint_dense(const double[::1] w, const double[:, :, ::1] B,
                       const long long[::1] nB):
    """w.(mean(B^-) + mean(B^+)) / 2 over dense buffers (both holding an instance)."""
    return midpoint_dense(&w[0], &B[0, 0, 0], &nB[0], B.shape[1], B.shape[2])


def oam_midpoint_score(const double[::1] w, const int[:, :, ::1] Bi,
                       const double[:, :, ::1] Bv, const long long[:, ::1] Bn,
                       const long long[::1] nB):
    """w.(mean(B^-) + mean(B^+)) / 2 over sparse buffers, O(buffered values).

    Formed as the mean of the buffered rows' scores w.x per class, as
    :func:`oam_midpoint_dense` does for dense buffers. Both buffers must hold an instance.
    See :func:`sosl._core._baselines_ref.oam_midpoint_score`.
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


def oam_one(const double[::1] x, double y, double[::1] w, double[:, :, ::1] B,
            long long[::1] nB, long long[::1] N, unsigned long long[::1] rng, double C,
            int update, double[::1] work, unsigned char[::1] act):
    """One OAM round on the dense row ``x`` (label sign ``y``) against dense buffers, on
    the live state, transactional; ``work`` (length >= 4 p) and ``act`` (length >= the
    buffer size) are scratch.

    The round of :func:`oam_pass`, with w and the counts saved first and the buffer slot
    the row replaces saved as it is written. Returns the new intercept, minus
    :func:`oam_midpoint_dense` (0 until both buffers hold an instance), or NaN with the
    state exactly as it was when a score, a weight or the intercept is not finite.
    """
    cdef Py_ssize_t p = x.shape[0], budget = B.shape[1], slot, j
    cdef OamStore st
    cdef SourceRow xr
    cdef long long N0 = N[0], N1 = N[1], nB0 = nB[0], nB1 = nB[1]
    cdef unsigned long long rng0 = rng[0]
    cdef double* g = &work[0]
    cdef double* w_saved = &work[p]
    cdef double* slot_saved = &work[2 * p]
    cdef double* d = &work[3 * p]
    cdef double icpt = 0.0
    cdef bint ok
    cdef int k
    if (work.shape[0] < 4 * p or act.shape[0] < budget or w.shape[0] != p
            or B.shape[2] != p or p == 0):
        raise ValueError("oam_one: need work of length >= 4 p, act of length >= the buffer "
                         "size and state of p columns")
    st = dense_store(B, d)
    xr.dense = True
    xr.x = &x[0]
    xr.xi = NULL
    xr.xv = NULL
    xr.xn = p
    with nogil:
        for j in range(p):
            g[j] = 0.0
        memcpy(w_saved, &w[0], p * sizeof(double))
        ok = oam_update(&xr, y, &st, &w[0], &nB[0], &N[0], C, update, budget, g, &act[0],
                        &k) and all_finite(&w[0], p)
        slot = -1
        if ok:
            slot = oam_reservoir(&xr, &st, &nB[0], &N[0], &rng[0], budget, k, slot_saved)
            if nB[0] > 0 and nB[1] > 0:
                icpt = -midpoint_dense(&w[0], &B[0, 0, 0], &nB[0], budget, p)
                ok = isfinite(icpt)
        if not ok:
            memcpy(&w[0], w_saved, p * sizeof(double))
            if slot >= 0:
                memcpy(&B[0, 0, 0] + slot * p, slot_saved, p * sizeof(double))
            N[0], N[1], nB[0], nB[1], rng[0] = N0, N1, nB0, nB1, rng0
    return icpt if ok else float("nan")


# -- OL-UBAUC -----------------------------------------------------------------------------

cdef inline double ubauc_step(const SourceRow* x, Py_ssize_t p, double* w, double step,
                              double a) noexcept nogil:
    """u -= step x on a sparse row's columns, for w = a u (``u`` in place in ``w``); returns
    the scale after it: ``a``, unless |a| < ``RESCALE_MIN`` (then folded into w, O(p))."""
    cdef Py_ssize_t j
    if step != 0.0:
        row_axpy(x, p, -step, w)
    if -RESCALE_MIN < a < RESCALE_MIN:
        for j in range(p):
            w[j] *= a
        return 1.0
    return a


cdef long long ubauc_rows(const SourceRows* rows, Py_ssize_t p, const double[::1] s,
                          const Py_ssize_t[::1] order, double[::1] w, double[::1] c,
                          long long[::1] N, long long t, double lam, int schedule,
                          double eta) except -1:
    """OL-UBAUC over the rows ``order`` of ``rows``. A dense row's round is O(p) anyway: it
    is the reference's step itself, ``w <- w - eta_t (lam w + coef_x x)`` in the
    reference's order of operations (so a margin that lands exactly on the hinge's kink
    takes the same branch as in the reference). A sparse row keeps ``w = a u`` (``u`` in
    place in ``w``): the shrinkage ``1 - eta_t lam`` multiplies ``a``, the hinge step
    changes ``u`` on the row's columns by ``-eta_t coef_x x / a``; a shrink factor of
    exactly 0 (round 1 of eta_t = 1/(lam t)) zeroes ``u`` (O(p), once); ``u`` is folded
    back into ``w`` before a dense row, when |a| < ``RESCALE_MIN`` and at the end of the
    pass."""
    cdef Py_ssize_t m = order.shape[0], r, i, j, bad = -1
    cdef SourceRow x
    cdef int cls
    cdef double y, f, omega, eta_t, margin, coef_x, g_c, shrink
    cdef double a = 1.0
    with nogil:
        for r in range(m):
            t += 1
            i = order[r]
            get_row(rows, i, &x)
            if x.dense and a != 1.0:            # the dense round works on w itself
                for j in range(p):
                    w[j] *= a
                a = 1.0
            y = s[i]
            cls = 1 if y > 0 else 0
            N[cls] += 1
            omega = <double> t / (2.0 * <double> N[cls])
            if schedule == STEP_CONSTANT:
                eta_t = eta
            else:
                eta_t = 1.0 / (lam * <double> t)
            f = a * row_dot(&x, p, &w[0])
            if not isfinite(f):
                bad = i
                break
            margin = y * (f - c[0])
            if margin < 1.0:
                coef_x = -omega * y
                g_c = omega * y
            else:
                coef_x = 0.0
                g_c = 0.0
            if x.dense:
                for j in range(p):
                    w[j] -= eta_t * (lam * w[j] + coef_x * x.x[j])
            else:
                shrink = 1.0 - eta_t * lam
                if shrink == 0.0:
                    for j in range(p):
                        w[j] = 0.0
                    a = 1.0
                else:
                    a *= shrink
                a = ubauc_step(&x, p, &w[0], eta_t * coef_x / a, a)
            c[0] -= eta_t * g_c
        if a != 1.0:
            for j in range(p):
                w[j] *= a
    if bad >= 0:
        _overflow(bad, "score w.x")
    return t


def ubauc_pass(const double[:, ::1] X, const double[::1] s, const Py_ssize_t[::1] order,
               double[::1] w, double[::1] c, long long[::1] N, long long t0, double lam,
               int schedule, double eta):
    """OL-UBAUC (reconstruction) over ``X[order]``; see ``_baselines_ref.ubauc_pass``."""
    cdef SourceRows rows = dense_rows(X)
    return ubauc_rows(&rows, X.shape[1], s, order, w, c, N, t0, lam, schedule, eta)


def ubauc_pass_csr(const double[::1] data, const int[::1] indices, const int[::1] indptr,
                   const double[::1] s, const Py_ssize_t[::1] order, double[::1] w,
                   double[::1] c, long long[::1] N, long long t0, double lam, int schedule,
                   double eta):
    """OL-UBAUC over the CSR rows ``order``, O(nnz) per round; as :func:`ubauc_pass`."""
    cdef SourceRows rows = csr_rows(data, indices, indptr, order, "ubauc_pass_csr")
    return ubauc_rows(&rows, w.shape[0], s, order, w, c, N, t0, lam, schedule, eta)


# -- SOLAM --------------------------------------------------------------------------------

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


cdef inline double uq_dot(const SourceRow* x, const double* uq) noexcept nogil:
    """u.x for a sparse row x, with u interleaved with Q in ``uq`` (u_j at uq[2 j])."""
    cdef Py_ssize_t k
    cdef double acc = 0.0
    for k in range(x.xn):
        acc += uq[2 * <Py_ssize_t> x.xi[k]] * x.xv[k]
    return acc


cdef inline double uq_move(double* uq, Py_ssize_t j, double xj, double step,
                           double c) noexcept nogil:
    """u_j -= step x_j and Q_j += c (the change of u_j); returns the old u_j."""
    cdef double old = uq[2 * j]
    cdef double new = old - step * xj
    uq[2 * j] = new
    uq[2 * j + 1] += c * (new - old)
    return old


cdef inline double avg_of(double c, double u, double Q, double inv_Gamma) noexcept nogil:
    """wbar_j = (c u_j - Q_j) / Gamma."""
    return (c * u - Q) * inv_Gamma


cdef inline double uq_step(const SourceRow* x, double* uq, double step, double c,
                           double uu) noexcept nogil:
    """The primal step (``uq_move``) on a sparse row's columns; returns ||u||^2 after it,
    updated on those columns."""
    cdef Py_ssize_t j, k
    cdef double old, new
    for k in range(x.xn):
        j = x.xi[k]
        old = uq_move(uq, j, x.xv[k], step, c)
        new = uq[2 * j]
        uu += new * new - old * old
    return uu


cdef inline double dense_step(const double* x, Py_ssize_t p, double* v, double* v_avg,
                              double step, double r_old, double r_new) noexcept nogil:
    """The primal step of a dense round, on the plain state (``sc = 1``, ``c = 0``: the
    scaled form reduces to ``u = w``), in one sweep: per column the average
    ``wbar_j <- r_old wbar_j + r_new w_j`` (the reference's order) and the step
    ``w_j <- w_j - step x_j``; returns ||w||^2 after it, summed in two interleaved
    partial sums (even and odd j, then added: a chain half as long; the reference's
    ``w @ w`` has its own order, so ||w|| agrees to rounding). (A dense round costs O(p)
    anyway, so the state between rounds and between calls is plain w and wbar: a pass
    split into calls gives the same bits; forming ``c u - Q`` here would only add work.)"""
    cdef Py_ssize_t j, q = p - p % 2
    cdef double u0, u1, n0, n1
    cdef double s0 = 0.0, s1 = 0.0
    for j in range(0, q, 2):
        u0 = v[j]
        u1 = v[j + 1]
        v_avg[j] = v_avg[j] * r_old + r_new * u0
        v_avg[j + 1] = v_avg[j + 1] * r_old + r_new * u1
        n0 = u0 - step * x[j]
        n1 = u1 - step * x[j + 1]
        v[j] = n0
        v[j + 1] = n1
        s0 += n0 * n0
        s1 += n1 * n1
    if q < p:
        u0 = v[q]
        v_avg[q] = v_avg[q] * r_old + r_new * u0
        n0 = u0 - step * x[q]
        v[q] = n0
        s0 += n0 * n0
    return s0 + s1


cdef inline double solam_enter(const double* v, const double* v_avg, double Gamma,
                               double* uq, Py_ssize_t p) noexcept nogil:
    """Enter the scaled form from (w, wbar): u = w, Q = -Gamma wbar (sc = 1, c = 0);
    returns ||u||^2."""
    cdef Py_ssize_t j
    cdef double uu = 0.0
    for j in range(p):
        uu += v[j] * v[j]
        uq[2 * j] = v[j]
        uq[2 * j + 1] = -Gamma * v_avg[j]
    return uu


cdef inline void solam_leave(const double* uq, double c, double sc, double Gamma,
                             double* v, double* v_avg, Py_ssize_t p) noexcept nogil:
    """Leave the scaled form: w = sc u and wbar = (c u - Q) / Gamma (Gamma > 0 after any
    round, eta > 0)."""
    cdef Py_ssize_t j
    cdef double G = 1.0 / Gamma if Gamma > 0.0 else 0.0
    for j in range(p):
        v_avg[j] = avg_of(c, uq[2 * j], uq[2 * j + 1], G)
        v[j] = sc * uq[2 * j]


cdef long long solam_rows(const SourceRows* rows, Py_ssize_t p, const double* s,
                          const Py_ssize_t* order, Py_ssize_t m, double* v, double* v_avg,
                          double* alpha, double* step_sum, long long* N, long long t,
                          double eta, double R, double* uq, Py_ssize_t* bad) noexcept nogil:
    """SOLAM over the rows ``order[:m]`` of ``rows``; ``bad`` gets the row whose score or
    norm is not finite (the pass stops there), else -1.

    During the pass ``w = sc u`` and the gamma-weighted sum of the iterates is
    ``Gamma wbar = c u - Q``: adding gamma_t w_t to the sum adds gamma_t sc to ``c``; a
    step du on the row's columns adds c du to ``Q``; the projection onto ||w|| <= R
    multiplies ``sc`` (with ||u||^2 kept up to date). On CSR rows ``u`` and ``Q`` are
    interleaved in ``uq`` (length >= 2 p; ``uq[2j] = u_j``, ``uq[2j+1] = Q_j``) so that
    a row's update touches one cache line per column; when ``sc`` falls below
    ``RESCALE_MIN_AVG`` the sum is formed, ``u`` takes the scale and ``c, Q`` restart from
    it (O(p)), which bounds the cancellation in ``c u - Q``. A dense round starts from
    and ends in the plain state (``dense_step``; ``uq`` is not used).
    """
    cdef Py_ssize_t r, i, j
    cdef SourceRow x
    cdef double y, ph, gamma, a, b, al, f, cx, g_a, g_b, g_al, G, r_old, r_new, nw
    cdef double sc = 1.0, c = 0.0, uu = 0.0, S_j, G_old
    # the scalar state in locals for the pass (written back once at the end, also after
    # a stop): the compiler cannot keep it in registers through the double pointers,
    # which it must assume may alias v and v_avg
    cdef double a_bar, b_bar, al_bar, Gamma
    cdef long long n_neg, n_pos
    cdef bint dense = rows.dense
    bad[0] = -1
    if m == 0:
        return t
    a, b, a_bar, b_bar = v[p], v[p + 1], v_avg[p], v_avg[p + 1]
    al, al_bar, Gamma, n_neg, n_pos = alpha[0], alpha[1], step_sum[0], N[0], N[1]
    if not dense:
        uu = solam_enter(v, v_avg, Gamma, uq, p)
    for r in range(m):
        t += 1
        i = order[r]
        get_row(rows, i, &x)
        y = s[i]
        if y > 0:
            n_pos += 1
        else:
            n_neg += 1
        ph = <double> n_pos / <double> t
        gamma = eta / sqrt(<double> t)
        f = dense_dot(v, x.x, p) if dense else sc * uq_dot(&x, uq)
        if not isfinite(f):
            bad[0] = i
            break
        solam_scalars(y, f, ph, a, b, al, &cx, &g_a, &g_b, &g_al)
        G_old = Gamma
        G = G_old + gamma
        r_old = G_old / G
        r_new = gamma / G
        a_bar = a_bar * r_old + r_new * a
        b_bar = b_bar * r_old + r_new * b
        al_bar = (G_old * al_bar + gamma * al) / G
        Gamma = G
        if dense:
            uu = dense_step(x.x, p, v, v_avg, gamma * cx, r_old, r_new)
        else:
            c += gamma * sc
            uu = uq_step(&x, uq, gamma * cx / sc, c, uu)
            if uu < 0.0:
                uu = 0.0
        nw = sc * sqrt(uu)
        if not isfinite(nw):
            bad[0] = i
            break
        if nw > R:
            sc *= R / nw
        if dense:
            if sc != 1.0:
                for j in range(p):
                    v[j] *= sc
            sc = 1.0
        elif sc < RESCALE_MIN_AVG:
            uu = 0.0
            for j in range(p):
                S_j = c * uq[2 * j] - uq[2 * j + 1]
                uq[2 * j] *= sc
                uq[2 * j + 1] = -S_j
                uu += uq[2 * j] * uq[2 * j]
            c = 0.0
            sc = 1.0
        a = clip(a - gamma * g_a, R)
        b = clip(b - gamma * g_b, R)
        al = clip(al + gamma * g_al, 2.0 * R)
    v[p], v[p + 1], v_avg[p], v_avg[p + 1] = a, b, a_bar, b_bar
    alpha[0], alpha[1], step_sum[0], N[0], N[1] = al, al_bar, Gamma, n_neg, n_pos
    if not dense:
        solam_leave(uq, c, sc, Gamma, v, v_avg, p)
    return t


cdef long long solam_run(const SourceRows* rows, Py_ssize_t p, const double[::1] s,
                         const Py_ssize_t[::1] order, double[::1] v, double[::1] v_avg,
                         double[::1] alpha, double[::1] step_sum, long long[::1] N,
                         long long t0, double eta, double R, double[::1] work) except -1:
    cdef Py_ssize_t bad
    cdef long long t
    cdef const double* sp = cptr(s)
    cdef const Py_ssize_t* op = optr(order)
    if work is None:
        work = np.empty(2 * p)
    if v.shape[0] != p + 2 or v_avg.shape[0] != p + 2 or work.shape[0] < 2 * p:
        raise ValueError("solam: need v and v_avg of length p + 2 and work of length >= 2 p")
    with nogil:
        t = solam_rows(rows, p, sp, op, order.shape[0], &v[0], &v_avg[0],
                       &alpha[0], &step_sum[0], &N[0], t0, eta, R,
                       &work[0] if p > 0 else NULL, &bad)
    if bad >= 0:
        _overflow(bad, "score w.x or norm ||w||")
    return t


def solam_pass(const double[:, ::1] X, const double[::1] s, const Py_ssize_t[::1] order,
               double[::1] v, double[::1] v_avg, double[::1] alpha, double[::1] step_sum,
               long long[::1] N, long long t0, double eta, double R, double[::1] work=None):
    """SOLAM over ``X[order]``; ``work`` (length >= 2 p) is scratch, allocated if None.

    See :func:`sosl._core._baselines_ref.solam_pass`.
    """
    cdef SourceRows rows = dense_rows(X)
    return solam_run(&rows, X.shape[1], s, order, v, v_avg, alpha, step_sum, N, t0, eta, R,
                     work)


def solam_pass_csr(const double[::1] data, const int[::1] indices, const int[::1] indptr,
                   const double[::1] s, const Py_ssize_t[::1] order, double[::1] v,
                   double[::1] v_avg, double[::1] alpha, double[::1] step_sum,
                   long long[::1] N, long long t0, double eta, double R,
                   double[::1] work=None):
    """SOLAM over the CSR rows ``order``, O(nnz) per round; as :func:`solam_pass`."""
    cdef SourceRows rows = csr_rows(data, indices, indptr, order, "solam_pass_csr")
    return solam_run(&rows, v.shape[0] - 2, s, order, v, v_avg, alpha, step_sum, N, t0, eta,
                     R, work)


def solam_one(const double[::1] x, double y, double[::1] v, double[::1] v_avg,
              double[::1] alpha, double[::1] step_sum, long long[::1] N, long long t0,
              double eta, double R, double[::1] work):
    """One SOLAM round on the dense row ``x`` (label sign ``y``) on the live state,
    transactional; ``work`` is scratch of length >= 4 p + 7.

    The round of :func:`solam_pass` (the same body on one row), with the state it writes
    saved first (O(p)). Returns the round counter after it, or -1 with the state exactly
    as it was when a score, a norm or a written value is not finite.
    """
    cdef Py_ssize_t p = x.shape[0], n = p + 2, bad, order0 = 0
    cdef SourceRows rows
    cdef double s0 = y
    cdef double* uq = &work[0]
    cdef double* saved = &work[2 * p]
    cdef long long t = -1, N0 = N[0], N1 = N[1]
    cdef bint ok
    if v.shape[0] != n or v_avg.shape[0] != n or work.shape[0] < 2 * p + 2 * n + 3 or p == 0:
        raise ValueError("solam_one: need v, v_avg of length p + 2 and work of length "
                         ">= 4 p + 7")
    rows.dense = True
    rows.X = &x[0]
    rows.p = p
    with nogil:
        memcpy(saved, &v[0], n * sizeof(double))
        memcpy(saved + n, &v_avg[0], n * sizeof(double))
        saved[2 * n], saved[2 * n + 1], saved[2 * n + 2] = alpha[0], alpha[1], step_sum[0]
        t = solam_rows(&rows, p, &s0, &order0, 1, &v[0], &v_avg[0], &alpha[0],
                       &step_sum[0], &N[0], t0, eta, R, uq, &bad)
        ok = (bad < 0 and all_finite(&v[0], n) and all_finite(&v_avg[0], n)
              and all_finite(&alpha[0], 2) and isfinite(step_sum[0]))
        if not ok:
            memcpy(&v[0], saved, n * sizeof(double))
            memcpy(&v_avg[0], saved + n, n * sizeof(double))
            alpha[0], alpha[1], step_sum[0] = saved[2 * n], saved[2 * n + 1], saved[2 * n + 2]
            N[0], N[1] = N0, N1
    return t if ok else -1


# -- AdaOAM -------------------------------------------------------------------------------

cdef inline void welford_mean(const double* x, double* xbar, long long* N, double* d_old,
                              double* d_new, Py_ssize_t p) noexcept nogil:
    """The count and mean part of ``welford_full``: N += 1, xbar += (x - xbar) / N, with
    d_old = x - xbar before and d_new = x - xbar after."""
    cdef Py_ssize_t j
    cdef double n
    N[0] += 1
    n = <double> N[0]
    for j in range(p):
        d_old[j] = x[j] - xbar[j]
        xbar[j] += d_old[j] / n
        d_new[j] = x[j] - xbar[j]


cdef inline void welford_cov(double* Sigma, long long N, const double* d_old,
                             const double* d_new, Py_ssize_t p) noexcept nogil:
    """The covariance part of ``welford_full``: Sigma += (d_old d_new' - Sigma) / N on the
    whole p x p square, as a multiplication by 1/N (vectorizes; a division per entry does
    not), equal to the reference's division up to rounding."""
    cdef Py_ssize_t j, k
    cdef double inv_n = 1.0 / <double> N, dj
    cdef double* row
    for j in range(p):
        dj = d_old[j] * inv_n
        row = &Sigma[j * p]
        for k in range(p):
            row[k] += dj * d_new[k] - row[k] * inv_n


cdef inline void welford_full(const double* x, double* xbar, double* Sigma, long long* N,
                              double* d_old, double* d_new, Py_ssize_t p) noexcept nogil:
    """Add x to a class (count, mean, full p x p covariance) in Welford's form, in place.

    Not the ``welford_update`` of ``_moments.pxd``: that one keeps only the upper triangle
    (the second-order learners read no other) and divides by N; AdaOAM multiplies Sigma by
    w row by row, so it keeps the whole square. Both are the reference
    :func:`sosl._core._moments_ref.welford_update` up to rounding.
    """
    welford_mean(x, xbar, N, d_old, d_new, p)
    welford_cov(Sigma, N[0], d_old, d_new, p)


cdef inline bint adaoam_grad(const double* x, double y, const double* w, const double* xbar,
                             const double* S, long long n_opp, double lam, Py_ssize_t p,
                             double* a, double* g) noexcept nogil:
    """The gradient g of the round at w (``S``, ``xbar``: the other class's covariance and
    mean, ``n_opp`` its count); False if w.a or w' S w is not finite."""
    cdef Py_ssize_t j
    cdef double wa, s2, d_mu, d_s2
    if n_opp > 0:
        wa = 0.0
        for j in range(p):
            a[j] = y * (x[j] - xbar[j])
            wa += w[j] * a[j]
        for j in range(p):
            g[j] = dense_dot(&S[j * p], w, p)
        s2 = dense_dot(w, g, p)
        if not (isfinite(wa) and isfinite(s2)):
            return False
        # half the gradient of psi_S(w.a, w' Sigma w): d_mu a + 2 d_s2 Sigma w
        loss_grad(LOSS_S, wa, s2, &d_mu, &d_s2)
        for j in range(p):
            g[j] = lam * w[j] + 0.5 * d_mu * a[j] + d_s2 * g[j]
    else:
        for j in range(p):
            g[j] = lam * w[j]
    return True


cdef inline void adagrad_step(const double* g, double* G2, double* w, double eta,
                              double delta, Py_ssize_t p) noexcept nogil:
    """G2 += g^2, w -= eta g / (delta + sqrt(G2)) (a 0 denominator leaves w_j as it is)."""
    cdef Py_ssize_t j
    cdef double H
    for j in range(p):
        G2[j] += g[j] * g[j]
        H = delta + sqrt(G2[j])
        if H > 0.0:
            w[j] -= eta * (g[j] / H)


cdef long long adaoam_rows(const SourceRows* rows, Py_ssize_t p, const double[::1] s,
                           const Py_ssize_t[::1] order, double[::1] w, double[:, ::1] xbar,
                           double[:, :, ::1] Sigma, long long[::1] N, double[::1] G2,
                           long long t, double lam, double eta, double delta,
                           double* work) except -1:
    """AdaOAM over the (dense) rows ``order`` of ``rows``; ``work``: 4 p scratch."""
    cdef Py_ssize_t m = order.shape[0], r, i, bad = -1
    cdef SourceRow x
    cdef int own, opp
    cdef double* a = work
    cdef double* g = work + p
    cdef double* d_old = work + 2 * p
    cdef double* d_new = work + 3 * p
    cdef double y
    with nogil:
        for r in range(m):
            t += 1
            i = order[r]
            get_row(rows, i, &x)
            y = s[i]
            own = 1 if y > 0 else 0
            opp = 1 - own
            if not adaoam_grad(x.x, y, &w[0], &xbar[opp, 0], &Sigma[opp, 0, 0], N[opp], lam,
                               p, a, g):
                bad = i
                break
            welford_full(x.x, &xbar[own, 0], &Sigma[own, 0, 0], &N[own], d_old, d_new, p)
            adagrad_step(g, &G2[0], &w[0], eta, delta, p)
    if bad >= 0:
        _overflow(bad, "score w.a or variance w' Sigma w")
    return t


def adaoam_pass(const double[:, ::1] X, const double[::1] s, const Py_ssize_t[::1] order,
                double[::1] w, double[:, ::1] xbar, double[:, :, ::1] Sigma,
                long long[::1] N, double[::1] G2, long long t0, double lam, double eta,
                double delta, double[::1] work):
    """AdaOAM over ``X[order]``; ``work`` is scratch space of length >= 4 p.

    See :func:`sosl._core._baselines_ref.adaoam_pass`.
    """
    cdef SourceRows rows = dense_rows(X)
    cdef Py_ssize_t p = X.shape[1]
    if work.shape[0] < 4 * p:
        raise ValueError("adaoam_pass: need work of length >= 4 p")
    return adaoam_rows(&rows, p, s, order, w, xbar, Sigma, N, G2, t0, lam, eta, delta,
                       &work[0] if work.shape[0] > 0 else NULL)


cdef inline double midpoint_means(const double* w, const double* xbar,
                                  Py_ssize_t p) noexcept nogil:
    """w.(xbar^- + xbar^+) / 2."""
    cdef Py_ssize_t j
    cdef double acc = 0.0
    for j in range(p):
        acc += w[j] * (0.5 * (xbar[j] + xbar[p + j]))
    return acc


def adaoam_intercept(const double[::1] w, const double[:, ::1] xbar):
    """-w.(xbar^- + xbar^+) / 2, AdaOAM's intercept (both classes seen)."""
    return -midpoint_means(&w[0], &xbar[0, 0], w.shape[0])


cdef inline double max_abs(const double* a, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t k
    cdef double mx = 0.0
    for k in range(n):
        if fabs(a[k]) > mx:
            mx = fabs(a[k])
    return mx


def adaoam_one(const double[::1] x, double y, double[::1] w, double[:, ::1] xbar,
               double[:, :, ::1] Sigma, long long[::1] N, double[::1] G2, double lam,
               double eta, double delta, double[::1] work):
    """One AdaOAM round on the dense row ``x`` (label sign ``y``) on the live state,
    transactional, with no O(p^2) copy; ``work`` is scratch of length >= 7 p.

    The round of :func:`adaoam_pass` (its gradient, Welford and AdaGrad steps: the own
    class's statistics and the AdaGrad step are independent, so their order does not
    matter) in an order that commits the O(p^2) covariance update last: the gradient,
    the AdaGrad step (w and G2 saved first), the own class's count and mean (saved), the
    new intercept, and only then the covariance, once every term it adds is known to be
    below 2^1020 in magnitude (so the sum of three cannot overflow). Returns the new
    intercept (0 until both classes are seen), or NaN with the state exactly as it was
    when the round would make a value non-finite (or its covariance update might).
    """
    cdef Py_ssize_t p = x.shape[0]
    cdef int own = 1 if y > 0 else 0, opp = 1 - own
    cdef double* a = &work[0]
    cdef double* g = &work[p]
    cdef double* d_old = &work[2 * p]
    cdef double* d_new = &work[3 * p]
    cdef double* w_saved = &work[4 * p]
    cdef double* G2_saved = &work[5 * p]
    cdef double* xbar_saved = &work[6 * p]
    cdef long long n_saved = N[own]
    cdef double icpt = 0.0
    cdef bint ok
    if (work.shape[0] < 7 * p or p == 0 or w.shape[0] != p or xbar.shape[1] != p
            or Sigma.shape[1] != p or Sigma.shape[2] != p):
        raise ValueError("adaoam_one: need work of length >= 7 p and state of p columns")
    with nogil:
        ok = adaoam_grad(&x[0], y, &w[0], &xbar[opp, 0], &Sigma[opp, 0, 0], N[opp], lam, p,
                         a, g)
        if ok:
            memcpy(w_saved, &w[0], p * sizeof(double))
            memcpy(G2_saved, &G2[0], p * sizeof(double))
            memcpy(xbar_saved, &xbar[own, 0], p * sizeof(double))
            adagrad_step(g, &G2[0], &w[0], eta, delta, p)
            welford_mean(&x[0], &xbar[own, 0], &N[own], d_old, d_new, p)
            ok = (all_finite(&w[0], p) and all_finite(&G2[0], p)
                  and all_finite(&xbar[own, 0], p) and all_finite(d_old, p)
                  and all_finite(d_new, p))
            if ok and N[opp] > 0:
                icpt = -midpoint_means(&w[0], &xbar[0, 0], p)
                ok = isfinite(icpt)
            ok = ok and (max_abs(d_old, p) / <double> N[own] * max_abs(d_new, p) < SAFE_TERM
                         and max_abs(&Sigma[own, 0, 0], p * p) < SAFE_TERM)
            if ok:
                welford_cov(&Sigma[own, 0, 0], N[own], d_old, d_new, p)
            else:
                memcpy(&w[0], w_saved, p * sizeof(double))
                memcpy(&G2[0], G2_saved, p * sizeof(double))
                memcpy(&xbar[own, 0], xbar_saved, p * sizeof(double))
                N[own] = n_saved
    return icpt if ok else float("nan")
