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

Bounded sketch
--------------
With at most ``K`` tracked columns (``max_columns``; reference
:func:`sosl._core._sketch_ref.capped_pass`, tags (C1)-(C6)) the dense arrays (weights,
means, sketch rows, diagonals) are indexed by *slot*: ``slot_col[k]`` is the compact column
held by slot k and ``col_slot[j]`` the slot of compact column j (-1: untracked). Columns take
free slots in order of first appearance, so with K at least the number of columns seen slot
k is compact column k and the pass is the uncapped one, operation for operation. An
untracked column keeps raw sums and a lazy weight and costs O(1) on the rounds where it is
stored and nothing on the others (its weight is ``R (W + S1_0 H_0 + S1_1 H_1)`` with a
global scale R and drift sums H, (C2)), so a round costs O(r K + nnz) plus a scan of the K
slot counts on the rounds where a column may be promoted. With no cap, ``m`` above reads
the number of slots. :func:`one_row` plays one round transactionally for ``learn_one``
(saves what the round can write, restores it on a non-finite value); :class:`Stepper`
binds the state arrays once and plays it, with the pre-score and the Platt step, keeping
its scratch space across calls (binding some thirty arrays on every call would cost a
large share of a one-row round, and a fresh malloc of the pass scratch page faults).
"""

import numpy as np

cimport numpy as cnp
from cpython.dict cimport PyDict_GetItem
from cpython.object cimport PyObject
from libc.math cimport fabs, sqrt
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcpy, memset
from scipy.linalg.cython_blas cimport dgemm, dgemv, dsyrk
from scipy.linalg.cython_lapack cimport dsyevd

from sosl._core._calibration cimport platt_step
from sosl._core._codes cimport FAMILY_FD_DIAG, STEP_CONSTANT
from sosl._core._lock cimport reader_may_pass
from sosl._core._losses cimport loss_grad
from sosl._core._moments cimport round_prologue

cnp.import_array()


cdef enum:
    PROMOTE = 2       # sosl._core._sketch_ref.PROMOTE (the hysteresis of a promotion)

cdef double RESCALE = 1e100     # sosl._core._sketch_ref.RESCALE


cdef struct Buffers:
    # scratch of the pass (run_pass) and the saves of a one-row round (one_row_core), kept
    # by a Stepper across calls (a fresh malloc of the pass scratch, 120 to 200 KB at
    # r = 32, costs page faults on each call); grown on demand, never shrunk
    double* xd
    size_t nxd
    int* iwork
    size_t niwork
    double* bufd
    size_t nbufd
    long long* bufi
    size_t nbufi
    Py_ssize_t* cols
    size_t ncols


cdef int grow(void** a, size_t* have, size_t need, size_t size) except -1:
    """Make the buffer ``*a`` hold at least ``need`` items of ``size`` bytes."""
    cdef void* b
    if need <= have[0]:
        return 0
    b = realloc(a[0], need * size)
    if b == NULL:
        raise MemoryError("sosl._core._sketch: no memory for the scratch space")
    a[0] = b
    have[0] = need
    return 0


cdef void release(Buffers* bf) noexcept:
    free(bf.xd)
    free(bf.iwork)
    free(bf.bufd)
    free(bf.bufi)
    free(bf.cols)
    memset(bf, 0, sizeof(Buffers))


cdef struct SketchSpec:
    # the hyper-parameters of a pass (a dict with these keys converts to it at the call;
    # sosl.sketch builds it per call, so a value may change between blocks)
    double lam
    double eta
    int schedule
    int loss
    int family
    int r
    long long K


cdef class SketchState:
    """The state arrays of the sketched learner, bound once: the bundle a pass, a one-row
    round and a :class:`Stepper` take instead of some twenty loose arrays.

    The slot arrays (``w, xbar, B, dA, dB, slot_col``, last axis) have a capacity of at
    least ``min(K, m)`` slots, the column arrays (``cnt, col_slot, W, ep, S``) at least m
    (the compact columns seen). ``nslots[0]`` (slots in use) and ``epoch[0]`` (of the lazy
    weights) are read and written by the passes. The arrays are the caller's, not copies.
    The names are those of the reference's state dict (:func:`sosl._core._sketch_ref.capped_state`
    uses ``col``, ``kt`` and ``slot`` for ``slot_col``, ``nslots`` and ``col_slot``).
    """
    cdef readonly double[::1] w
    cdef readonly double[:, ::1] xbar
    cdef readonly double[:, :, ::1] B
    cdef readonly long long[::1] nrows
    cdef readonly long long[::1] N
    cdef readonly double[:, ::1] dA
    cdef readonly double[:, ::1] dB
    cdef readonly double[::1] delta
    cdef readonly long long[::1] slot_col
    cdef readonly long long[::1] nslots
    cdef readonly long long[::1] cnt
    cdef readonly long long[::1] col_slot
    cdef readonly double[::1] W
    cdef readonly long long[::1] ep
    cdef readonly double[:, :, ::1] S
    cdef readonly double[:, ::1] Pv
    cdef readonly double[:, :, ::1] Qm
    cdef readonly double[::1] RH
    cdef readonly long long[::1] epoch

    def __init__(self, double[::1] w, double[:, ::1] xbar, double[:, :, ::1] B,
                 long long[::1] nrows, long long[::1] N, double[:, ::1] dA,
                 double[:, ::1] dB, double[::1] delta, long long[::1] slot_col,
                 long long[::1] nslots, long long[::1] cnt, long long[::1] col_slot,
                 double[::1] W, long long[::1] ep, double[:, :, ::1] S, double[:, ::1] Pv,
                 double[:, :, ::1] Qm, double[::1] RH, long long[::1] epoch):
        cdef Py_ssize_t k = w.shape[0], mc = cnt.shape[0]
        if (xbar.shape[0] != 2 or xbar.shape[1] != k or B.shape[0] != 2 or B.shape[2] != k
                or dA.shape[0] != 2 or dA.shape[1] != k or dB.shape[0] != 2
                or dB.shape[1] != k or slot_col.shape[0] != k or nrows.shape[0] != 2
                or N.shape[0] != 2 or delta.shape[0] != 2 or nslots.shape[0] != 1
                or epoch.shape[0] != 1 or col_slot.shape[0] != mc or W.shape[0] != mc
                or ep.shape[0] != mc or S.shape[0] != 2 or S.shape[1] != 2
                or S.shape[2] != mc or Pv.shape[0] != 2 or Pv.shape[1] != 3
                or Qm.shape[0] != 4 or Qm.shape[1] != 3 or Qm.shape[2] != 3
                or RH.shape[0] != 3):
            raise ValueError("SketchState: inconsistent array shapes (see the docstring)")
        self.w, self.xbar, self.B, self.nrows, self.N = w, xbar, B, nrows, N
        self.dA, self.dB, self.delta, self.slot_col, self.nslots = dA, dB, delta, slot_col, nslots
        self.cnt, self.col_slot, self.W, self.ep, self.S = cnt, col_slot, W, ep, S
        self.Pv, self.Qm, self.RH, self.epoch = Pv, Qm, RH, epoch


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


def current_weights(const long long[::1] c, const long long[::1] col_slot,
                    const double[::1] w, const double[::1] W, const long long[::1] ep,
                    const double[:, :, ::1] S, const double[::1] RH, long long epoch,
                    double[::1] out):
    """Current weights of the compact columns ``c`` into ``out``: a tracked column's slot
    weight, an untracked one's lazy weight R (W + S1_0 H_0 + S1_1 H_1) (C2)."""
    cdef Py_ssize_t q, j
    with nogil:
        for q in range(c.shape[0]):
            j = c[q]
            if col_slot[j] >= 0:
                out[q] = w[col_slot[j]]
            else:
                out[q] = weight_of(j, W, ep, epoch, S, RH)


def row_scores(const double[::1] data, const int[::1] indices, const int[::1] indptr,
               const long long[::1] colmap, const long long[::1] col_slot,
               const double[::1] w, const double[::1] W, const long long[::1] ep,
               const double[:, :, ::1] S, const double[::1] RH, long long epoch,
               double[::1] out):
    """w.x of every CSR row into ``out`` (columns never seen count 0), in the row's order."""
    cdef Py_ssize_t i, k, j
    cdef double acc
    with nogil:
        for i in range(out.shape[0]):
            acc = 0.0
            for k in range(indptr[i], indptr[i + 1]):
                j = colmap[indices[k]]
                if j < 0:
                    continue
                if col_slot[j] >= 0:
                    acc += data[k] * w[col_slot[j]]
                else:
                    acc += data[k] * weight_of(j, W, ep, epoch, S, RH)
            out[i] = acc


def intercept(const double[::1] w, const double[:, ::1] xbar, long long kt,
              const double[:, ::1] Pv, const double[::1] RH, const long long[::1] N):
    """-(w.xbar_0 + w.xbar_1) / 2 over every column: the slots directly, the untracked
    columns through P_c = R h.Pv_c = N_c w.xbar_c there (C3)."""
    return intercept_of(w, xbar, kt, Pv, RH, N)


cdef inline double intercept_of(const double[::1] w, const double[:, ::1] xbar, long long kt,
                                const double[:, ::1] Pv, const double[::1] RH,
                                const long long[::1] N) noexcept nogil:
    """The value of :func:`intercept` (both classes seen)."""
    cdef Py_ssize_t k
    cdef double acc = 0.0, P0, P1
    for k in range(kt):
        acc += w[k] * (xbar[0, k] + xbar[1, k])
    P0 = RH[0] * (Pv[0, 0] + Pv[0, 1] * RH[1] + Pv[0, 2] * RH[2])
    P1 = RH[0] * (Pv[1, 0] + Pv[1, 1] * RH[1] + Pv[1, 2] * RH[2])
    return -0.5 * (acc + P0 / <double> N[0] + P1 / <double> N[1])


def dense_scores(const double[:, :] X, const long long[::1] colmap,
                 const long long[::1] col_slot, const double[::1] w, const double[::1] W,
                 const long long[::1] ep, const double[:, :, ::1] S, const double[::1] RH,
                 long long epoch, double[::1] out):
    """w.x of every dense row of X into ``out``: its non-zero entries at columns seen, in
    column order (the terms and order of :func:`row_scores` on the row's CSR form)."""
    cdef Py_ssize_t i, step = X.strides[1] // sizeof(double)
    with nogil:
        for i in range(out.shape[0]):
            out[i] = dense_dot(&X[i, 0], step, X.shape[1], colmap, col_slot, w, W, ep, S,
                               RH, epoch)


cdef inline double dense_dot(const double* x, Py_ssize_t step, Py_ssize_t p,
                             const long long[::1] colmap, const long long[::1] col_slot,
                             const double[::1] w, const double[::1] W,
                             const long long[::1] ep, const double[:, :, ::1] S,
                             const double[::1] RH, long long epoch) noexcept nogil:
    """w.x over the non-zero x_j (stride ``step``) at columns seen, in column order."""
    cdef Py_ssize_t k
    cdef long long j
    cdef double acc = 0.0, v
    for k in range(p):
        v = x[k * step]
        if v == 0.0:
            continue
        j = colmap[k]
        if j < 0:
            continue
        if col_slot[j] >= 0:
            acc += v * w[col_slot[j]]
        else:
            acc += v * weight_of(j, W, ep, epoch, S, RH)
    return acc


cdef inline double weight_of(Py_ssize_t j, const double[::1] W, const long long[::1] ep,
                             long long epoch, const double[:, :, ::1] S,
                             const double[::1] RH) noexcept nogil:
    """R (W_j + S1_0j H_0 + S1_1j H_1), W_j counted as 0 outside the current epoch (C2)."""
    cdef double Wj = W[j] if ep[j] == epoch else 0.0
    return RH[0] * (Wj + S[0, 0, j] * RH[1] + S[0, 1, j] * RH[2])


cdef inline void set_weight(Py_ssize_t j, double v, double[::1] W, long long[::1] ep,
                            long long epoch, const double[:, :, ::1] S,
                            const double[::1] RH) noexcept nogil:
    """Store weight v of untracked column j (after its sums S are final)."""
    W[j] = v / RH[0] - (S[0, 0, j] * RH[1] + S[0, 1, j] * RH[2])
    ep[j] = epoch


cdef void moments(Py_ssize_t j, double sign, const double[::1] W, const long long[::1] ep,
                  long long epoch, const double[:, :, ::1] S, double[:, ::1] Pv,
                  double[:, :, ::1] Qm) noexcept nogil:
    """Add (sign=1) or remove (-1) column j's terms u S1_c of Pv and u u' T of Qm (C3)."""
    cdef double u[3]
    cdef double T[4]
    cdef int c, a, b
    u[0] = W[j] if ep[j] == epoch else 0.0
    u[1] = S[0, 0, j]
    u[2] = S[0, 1, j]
    T[0] = S[1, 0, j]
    T[1] = S[1, 1, j]
    T[2] = u[1] * u[1]
    T[3] = u[2] * u[2]
    for c in range(2):
        for a in range(3):
            Pv[c, a] += sign * (u[1 + c] * u[a])
    for c in range(4):
        for a in range(3):
            for b in range(3):
                Qm[c, a, b] += sign * (T[c] * (u[a] * u[b]))


cdef inline double quad(const double[:, :, ::1] Qm, int c, const double[::1] RH) noexcept nogil:
    """h' Qm_c h, h = (1, H_0, H_1)."""
    cdef double h[3]
    cdef double acc = 0.0
    cdef int a, b
    h[0] = 1.0
    h[1] = RH[1]
    h[2] = RH[2]
    for a in range(3):
        for b in range(3):
            acc += h[a] * Qm[c, a, b] * h[b]
    return acc


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
                long long m, SketchState st, long long t0, SketchSpec spec):
    """Run the sketched learner over the CSR rows ``order``; update the state in place.

    ``colmap`` must already map every column of the visited rows (:func:`assign_columns`);
    ``st`` holds the state arrays (:class:`SketchState`, capacities there), ``spec`` the
    hyper-parameters (:class:`SketchSpec`: lam, eta, schedule, loss, family, r, K).
    Returns the round counter after the pass. See
    :func:`sosl._core._sketch_ref.capped_pass` for the parameters (the reference takes
    dense rows in original coordinates).
    """
    return run_pass(data, indices, indptr, s, order, colmap, m, st, t0, &spec, NULL)


cdef long long run_pass(const double[::1] data, const int[::1] indices, const int[::1] indptr,
                        const double[::1] s, const Py_ssize_t[::1] order,
                        const long long[::1] colmap, long long m, SketchState st,
                        long long t0, const SketchSpec* spec, Buffers* bf) except? -1:
    """The pass of :func:`sketch_pass` (shared with :func:`one_row`); its scratch space is
    allocated here (``bf`` NULL) or taken from ``bf`` (grown as needed, kept)."""
    # the bundles unpacked into locals: the loops below index them directly
    cdef double[::1] w = st.w
    cdef double[:, ::1] xbar = st.xbar
    cdef double[:, :, ::1] B = st.B
    cdef long long[::1] nrows = st.nrows
    cdef long long[::1] N = st.N
    cdef double[:, ::1] dA = st.dA
    cdef double[:, ::1] dB = st.dB
    cdef double[::1] delta = st.delta
    cdef long long[::1] slot_col = st.slot_col
    cdef long long[::1] nslots = st.nslots
    cdef long long[::1] cnt = st.cnt
    cdef long long[::1] col_slot = st.col_slot
    cdef double[::1] W = st.W
    cdef long long[::1] ep = st.ep
    cdef double[:, :, ::1] S = st.S
    cdef double[:, ::1] Pv = st.Pv
    cdef double[:, :, ::1] Qm = st.Qm
    cdef double[::1] RH = st.RH
    cdef long long[::1] epoch_ = st.epoch
    cdef double lam = spec.lam, eta = spec.eta
    cdef int schedule = spec.schedule, loss = spec.loss, family = spec.family, r = spec.r
    cdef long long K = spec.K
    cdef int cap = <int> w.shape[0]
    cdef int n2 = 2 * r
    cdef int nlwork = 1 + 6 * n2 + 2 * n2 * n2
    cdef int niwork = 3 + 5 * n2
    cdef Py_ssize_t nq = order.shape[0]
    cdef Py_ssize_t q, i, k, j, d, sl, kmin, nu, u
    cdef long long t = t0, cmin = 0, kt = nslots[0], maxnnz = 1, epoch = epoch_[0]
    cdef int own, opp, nr, inc = 1, mi, c
    cdef bint has_opp
    cdef double y, eta_t, mu, s2, d_mu = 0.0, d_s2 = 0.0, n, f, zj, invn, one = 1.0, zero = 0.0
    cdef double rho, v, xj, s1o, s2o, gj, mu_u, P, Q2, Q1, Rn, nopp = 0.0
    cdef double* Bc
    cdef double* row
    cdef char* tr = b"T"
    cdef char* nt = b"N"
    for q in range(nq):
        i = order[q]
        if indptr[i + 1] - indptr[i] > maxnnz:
            maxnnz = indptr[i + 1] - indptr[i]
    cdef size_t ncap = <size_t> cap, nr2 = <size_t> n2
    cdef size_t nxd = (4 * ncap + nr2 + nr2 * nr2 + nr2 + nr2 * <size_t> r + <size_t> r * ncap
                       + <size_t> nlwork + <size_t> maxnnz)
    cdef double* xd
    cdef int* iwork
    if bf == NULL:
        xd = <double*> malloc(nxd * sizeof(double))
        iwork = <int*> malloc(niwork * sizeof(int))
        if xd == NULL or iwork == NULL:
            free(xd)
            free(iwork)
            raise MemoryError("sketch_pass: no memory for the scratch space")
    else:
        grow(<void**> &bf.xd, &bf.nxd, nxd, sizeof(double))
        grow(<void**> &bf.iwork, &bf.niwork, niwork, sizeof(int))
        xd = bf.xd
        iwork = bf.iwork
    cdef double* a = xd + cap
    cdef double* Sw = a + cap
    cdef double* z = Sw + cap
    cdef double* Bw = z + cap
    cdef double* gram = Bw + n2
    cdef double* evals = gram + n2 * n2
    cdef double* uf = evals + n2
    cdef double* tmp = uf + n2 * r
    cdef double* lwork = tmp + <size_t> r * ncap
    cdef double* uv = lwork + nlwork
    memset(xd, 0, cap * sizeof(double))
    try:
        with nogil:
            for q in range(nq):
                i = order[q]
                if not (1.0 / RESCALE <= fabs(RH[0]) <= RESCALE):
                    rescale(m, col_slot, W, ep, epoch, S, Pv, Qm, RH)
                # (C1): counts, free slots, promotion of a frequent untracked column
                for k in range(indptr[i], indptr[i + 1]):
                    j = colmap[indices[k]]
                    cnt[j] += 1
                    if col_slot[j] >= 0:
                        continue
                    if kt < K:
                        track(j, kt, N, w, xbar, B, dA, dB, slot_col, col_slot, W, ep,
                              epoch, S, Pv, Qm, RH, n2)
                        kt += 1
                        continue
                    if cnt[j] <= PROMOTE * cmin:        # cmin <= the least count: no
                        continue
                    kmin = 0
                    for sl in range(1, kt):
                        if cnt[slot_col[sl]] < cnt[slot_col[kmin]]:
                            kmin = sl
                    cmin = cnt[slot_col[kmin]]
                    if cnt[j] > PROMOTE * cmin:
                        untrack(kmin, N, w, xbar, B, dA, dB, slot_col, col_slot, W, ep,
                                epoch, S, Pv, Qm, RH, n2)
                        track(j, kmin, N, w, xbar, B, dA, dB, slot_col, col_slot, W, ep,
                              epoch, S, Pv, Qm, RH, n2)
                t += 1
                mi = <int> kt
                y = s[i]
                eta_t = round_prologue(y, t, schedule, eta, lam, &own, &opp)
                rho = 1.0 - eta_t * lam
                nu = 0
                mu_u = 0.0
                for k in range(indptr[i], indptr[i + 1]):
                    j = colmap[indices[k]]
                    sl = col_slot[j]
                    if sl >= 0:
                        xd[sl] += data[k]
                    else:
                        v = weight_of(j, W, ep, epoch, S, RH)
                        uv[nu] = v
                        nu += 1
                        mu_u += v * data[k]
                has_opp = N[opp] > 0
                if has_opp:
                    mu = 0.0
                    for j in range(mi):
                        a[j] = y * (xd[j] - xbar[opp, j])                 # a = y (x - xbar)
                        mu += w[j] * a[j]
                    nr = <int> nrows[opp]
                    invn = 1.0 / <double> N[opp]
                    if nr > 0 and mi > 0:
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
                    nopp = <double> N[opp]
                    P = RH[0] * (Pv[opp, 0] + Pv[opp, 1] * RH[1] + Pv[opp, 2] * RH[2])  # (C3)
                    Q2 = RH[0] * RH[0] * quad(Qm, opp, RH)
                    Q1 = RH[0] * RH[0] * quad(Qm, 2 + opp, RH)
                    mu += y * (mu_u - P / nopp)                           # (C4)
                    f = Q2 - Q1 / nopp
                    if f > 0.0:
                        s2 += f / nopp                                    # (C5)
                    loss_grad(loss, mu, s2, &d_mu, &d_s2)                 # eq. (13)/(14)
                if nu > 0:
                    for k in range(indptr[i], indptr[i + 1]):
                        j = colmap[indices[k]]
                        if col_slot[j] < 0:
                            moments(j, -1.0, W, ep, epoch, S, Pv, Qm)
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
                        if mi > 0:
                            delta[own] += shrink(&B[own, 0, 0], r, mi, cap, gram, evals, uf,
                                                 tmp, lwork, nlwork, iwork, niwork)
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
                # the lazy weights: scale, epoch, drift (C2); the untracked columns of x (C6)
                if schedule == STEP_CONSTANT:
                    Rn = RH[0] * rho
                else:
                    Rn = 1.0 / <double> t
                if Rn == 0.0:                                             # a new epoch
                    epoch += 1
                    for c in range(2):
                        Pv[c, 0] = 0.0
                    for c in range(4):
                        for d in range(3):
                            Qm[c, 0, d] = 0.0
                            Qm[c, d, 0] = 0.0
                    RH[1] = 0.0
                    RH[2] = 0.0
                    Rn = 1.0
                RH[0] = Rn
                if has_opp:
                    RH[1 + opp] += eta_t * d_mu * y / (nopp * Rn)
                u = 0
                for k in range(indptr[i], indptr[i + 1]):
                    j = colmap[indices[k]]
                    if col_slot[j] >= 0:
                        xd[col_slot[j]] = 0.0
                        continue
                    v = uv[u]
                    u += 1
                    xj = data[k]
                    gj = lam * v
                    if has_opp:
                        s1o = S[0, opp, j]
                        s2o = S[1, opp, j] - s1o * s1o / nopp
                        if s2o < 0.0:
                            s2o = 0.0
                        gj = gj + d_mu * y * (xj - s1o / nopp) + 2.0 * d_s2 * (s2o / nopp) * v
                    S[0, own, j] += xj
                    S[1, own, j] += xj * xj
                    set_weight(j, v - eta_t * gj, W, ep, epoch, S, RH)
                    moments(j, 1.0, W, ep, epoch, S, Pv, Qm)
    finally:
        if bf == NULL:
            free(xd)
            free(iwork)
    nslots[0] = kt
    epoch_[0] = epoch
    return t


cdef void untrack(Py_ssize_t k, long long[::1] N, double[::1] w, double[:, ::1] xbar,
                  double[:, :, ::1] B, double[:, ::1] dA, double[:, ::1] dB,
                  long long[::1] slot_col, long long[::1] col_slot, double[::1] W,
                  long long[::1] ep, long long epoch, double[:, :, ::1] S, double[:, ::1] Pv,
                  double[:, :, ::1] Qm, const double[::1] RH, int n2) noexcept nogil:
    """The column of slot k leaves it: mean, scatter and weight kept (raw sums, lazy
    weight), its sketch coordinates dropped. Reference ``_untrack``."""
    cdef Py_ssize_t j = slot_col[k], d
    cdef int c
    cdef double nc
    for c in range(2):
        nc = <double> N[c]
        S[0, c, j] = nc * xbar[c, k]                             # S1 = N xbar
        S[1, c, j] = dA[c, k] + nc * xbar[c, k] * xbar[c, k]     # S2 = scatter + N xbar^2
    set_weight(j, w[k], W, ep, epoch, S, RH)
    moments(j, 1.0, W, ep, epoch, S, Pv, Qm)
    for c in range(2):
        xbar[c, k] = 0.0
        dA[c, k] = 0.0
        dB[c, k] = 0.0
        for d in range(n2):
            B[c, d, k] = 0.0
    w[k] = 0.0
    col_slot[j] = -1
    slot_col[k] = -1


cdef void track(Py_ssize_t j, Py_ssize_t k, long long[::1] N, double[::1] w,
                double[:, ::1] xbar, double[:, :, ::1] B, double[:, ::1] dA,
                double[:, ::1] dB, long long[::1] slot_col, long long[::1] col_slot,
                double[::1] W, long long[::1] ep, long long epoch, double[:, :, ::1] S,
                double[:, ::1] Pv, double[:, :, ::1] Qm, const double[::1] RH,
                int n2) noexcept nogil:
    """Compact column j enters slot k with zero sketch coordinates, its mean S1/N and its
    exact scatter S2 - S1^2/N. Reference ``_track``."""
    cdef int c
    cdef Py_ssize_t d
    cdef double s1, s2, nc
    w[k] = weight_of(j, W, ep, epoch, S, RH)
    moments(j, -1.0, W, ep, epoch, S, Pv, Qm)
    for c in range(2):
        s1 = S[0, c, j]
        s2 = S[1, c, j]
        xbar[c, k] = 0.0
        dA[c, k] = 0.0
        if N[c] > 0:
            nc = <double> N[c]
            xbar[c, k] = s1 / nc
            dA[c, k] = s2 - s1 * s1 / nc
            if dA[c, k] < 0.0:
                dA[c, k] = 0.0
        dB[c, k] = 0.0
        for d in range(n2):
            B[c, d, k] = 0.0
        S[0, c, j] = 0.0
        S[1, c, j] = 0.0
    W[j] = 0.0
    slot_col[k] = j
    col_slot[j] = k


cdef void rescale(long long m, const long long[::1] col_slot, double[::1] W,
                  long long[::1] ep, long long epoch, const double[:, :, ::1] S,
                  double[:, ::1] Pv, double[:, :, ::1] Qm, double[::1] RH) noexcept nogil:
    """Fold the scale and drift into the W's of the untracked columns < m (R = 1, H = 0)
    and rebuild Pv, Qm. Reference ``_rescale``."""
    cdef Py_ssize_t j
    cdef int c, a, b
    for j in range(m):
        if col_slot[j] < 0:
            W[j] = weight_of(j, W, ep, epoch, S, RH)
            ep[j] = epoch
    RH[0] = 1.0
    RH[1] = 0.0
    RH[2] = 0.0
    for c in range(2):
        for a in range(3):
            Pv[c, a] = 0.0
    for c in range(4):
        for a in range(3):
            for b in range(3):
                Qm[c, a, b] = 0.0
    for j in range(m):
        if col_slot[j] < 0:
            moments(j, 1.0, W, ep, epoch, S, Pv, Qm)


cdef bint finite(const double* a, Py_ssize_t n) noexcept nogil:
    """Whether a[0:n] holds only finite values (x - x is 0 exactly for them, NaN else).

    Four sums, so that the additions do not wait on one another (one sum was a chain of
    dependent additions, a few cycles a value, over the O(K) arrays a one-row round
    checks)."""
    cdef Py_ssize_t k = 0
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    while k + 4 <= n:
        s0 += a[k] - a[k]
        s1 += a[k + 1] - a[k + 1]
        s2 += a[k + 2] - a[k + 2]
        s3 += a[k + 3] - a[k + 3]
        k += 4
    while k < n:
        s0 += a[k] - a[k]
        k += 1
    return (s0 + s1) + (s2 + s3) == 0.0


def one_row(const double[::1] data, const int[::1] indices, const int[::1] indptr,
            const double[::1] s, const Py_ssize_t[::1] order, long long[::1] colmap,
            long long m0, SketchState st, long long t0, SketchSpec spec,
            bint save_sketch=True):
    """One round of a capped model on the live state, transactional: the row ``0`` of the
    CSR arrays, label sign ``s[0]`` (``order`` is ``[0]``).

    Saves what the round can write (the slot arrays, of the sketches everything when the
    row may promote a column, else per class the row it appends or the whole class when
    that row fills it; the column arrays at the row's columns, the new columns' indices
    and, with a possible promotion, the tracked ones; the column map at the row; the
    counts and small sums), assigns the row's new columns, plays the round
    (:func:`sketch_pass`), and restores everything if a written value is not finite.
    Returns ``(t, m)`` after the round, or ``(-1, m0)`` when the row does not suit (more
    capacity needed, or a scale to fold into every weight: nothing was written) and
    ``(-2, m0)`` when the round came out non-finite (the state is as it was).
    ``save_sketch=False`` leaves the sketches unsaved (a mutant for the tests only).
    """
    cdef Buffers bf
    cdef long long m = m0, t
    memset(&bf, 0, sizeof(Buffers))
    try:
        t = one_row_core(data, indices, indptr, s, order, colmap, m0, st, t0, &spec,
                         save_sketch, &bf, &m)
    finally:
        release(&bf)
    return t, m


cdef long long one_row_core(const double[::1] data, const int[::1] indices,
                            const int[::1] indptr, const double[::1] s,
                            const Py_ssize_t[::1] order, long long[::1] colmap, long long m0,
                            SketchState st, long long t0, const SketchSpec* spec,
                            bint save_sketch, Buffers* bf, long long* m_out) except -3:
    """The round of :func:`one_row` with its saves in ``bf`` (grown as needed); returns t,
    -1 or -2 as :func:`one_row` and the new m in ``m_out``."""
    cdef long long K = spec.K
    cdef int r = spec.r
    cdef Py_ssize_t nnz = indptr[1] - indptr[0], k, q, ncols, sl, nB, off
    cdef long long kt = st.nslots[0], kcap = st.w.shape[0], cap = st.cnt.shape[0]
    cdef long long nnew = 0, cmin
    cdef long long j, m = m0, t = -2
    cdef int n2 = 2 * r, c
    cdef bint may_promote = False, ok = False
    cdef double* bufd
    cdef long long* bufi
    cdef Py_ssize_t* cols
    cdef double* p
    cdef long long* pi
    cdef Py_ssize_t rowB[2]
    cdef Py_ssize_t lenB[2]
    if not (1.0 / RESCALE <= fabs(st.RH[0]) <= RESCALE):
        m_out[0] = m0
        return -1
    for k in range(nnz):
        if colmap[indices[k]] < 0:
            nnew += 1
    if m0 + nnew > cap or (kt < K and kt + nnew > kcap):
        m_out[0] = m0
        return -1
    if kt == K and kt > 0:
        cmin = st.cnt[st.slot_col[0]]
        for sl in range(1, kt):
            if st.cnt[st.slot_col[sl]] < cmin:
                cmin = st.cnt[st.slot_col[sl]]
        for k in range(nnz):
            j = colmap[indices[k]]
            if j >= 0 and st.col_slot[j] < 0 and st.cnt[j] + 1 > PROMOTE * cmin:
                may_promote = True
    # the parts of the sketches at stake: (offset, length) in B's flat storage per class
    if may_promote:
        rowB[0], lenB[0], rowB[1], lenB[1] = 0, 2 * n2 * kcap, 0, 0
    else:
        for c in range(2):
            if st.nrows[c] + 1 >= n2:
                rowB[c], lenB[c] = c * n2 * kcap, n2 * kcap
            else:
                rowB[c], lenB[c] = (c * n2 + st.nrows[c]) * kcap, kcap
    if not save_sketch:
        lenB[0] = lenB[1] = 0
    nB = lenB[0] + lenB[1]
    ncols = nnz + (kt if may_promote else 0)
    grow(<void**> &bf.cols, &bf.ncols, ncols + 1, sizeof(Py_ssize_t))
    grow(<void**> &bf.bufd, &bf.nbufd, 7 * kcap + nB + 5 * ncols + 49, sizeof(double))
    grow(<void**> &bf.bufi, &bf.nbufi, kcap + 3 * ncols + nnz + 4, sizeof(long long))
    cols, bufd, bufi = bf.cols, bf.bufd, bf.bufi
    try:
        q = 0
        for k in range(nnz):                       # new columns take m0, m0 + 1, ... in order
            j = colmap[indices[k]]
            if j < 0:
                j = m
                m += 1
            cols[q] = j
            q += 1
        if may_promote:
            for sl in range(kt):
                cols[q] = st.slot_col[sl]
                q += 1
        m = m0
        # save
        p = bufd
        memcpy(p, &st.w[0], kcap * sizeof(double))
        memcpy(p + kcap, &st.xbar[0, 0], 2 * kcap * sizeof(double))
        memcpy(p + 3 * kcap, &st.dA[0, 0], 2 * kcap * sizeof(double))
        memcpy(p + 5 * kcap, &st.dB[0, 0], 2 * kcap * sizeof(double))
        p += 7 * kcap
        for c in range(2):
            if lenB[c] > 0:
                memcpy(p, &st.B[0, 0, 0] + rowB[c], lenB[c] * sizeof(double))
                p += lenB[c]
        for q in range(ncols):
            j = cols[q]
            p[0], p[1], p[2] = st.W[j], st.S[0, 0, j], st.S[0, 1, j]
            p[3], p[4] = st.S[1, 0, j], st.S[1, 1, j]
            p += 5
        p[0], p[1] = st.delta[0], st.delta[1]
        memcpy(p + 2, &st.Pv[0, 0], 6 * sizeof(double))
        memcpy(p + 8, &st.Qm[0, 0, 0], 36 * sizeof(double))
        memcpy(p + 44, &st.RH[0], 3 * sizeof(double))
        pi = bufi
        memcpy(pi, &st.slot_col[0], kcap * sizeof(long long))
        pi += kcap
        for q in range(ncols):
            j = cols[q]
            pi[0], pi[1], pi[2] = st.cnt[j], st.col_slot[j], st.ep[j]
            pi += 3
        for k in range(nnz):
            pi[k] = colmap[indices[k]]
        pi += nnz
        pi[0], pi[1], pi[2], pi[3] = st.nrows[0], st.nrows[1], st.N[0], st.N[1]
        # assign the new columns (assign_columns), play the round
        for k in range(nnz):
            if colmap[indices[k]] < 0:
                colmap[indices[k]] = m
                m += 1
        t = run_pass(data, indices, indptr, s, order, colmap, m, st, t0, spec, bf)
        ok = (finite(&st.w[0], kcap) and finite(&st.xbar[0, 0], 2 * kcap)
              and finite(&st.dA[0, 0], 2 * kcap) and finite(&st.dB[0, 0], 2 * kcap)
              and finite(&st.delta[0], 2) and finite(&st.Pv[0, 0], 6)
              and finite(&st.Qm[0, 0, 0], 36) and finite(&st.RH[0], 3))
        for c in range(2):
            ok = ok and (lenB[c] == 0 or finite(&st.B[0, 0, 0] + rowB[c], lenB[c]))
        for q in range(ncols):
            j = cols[q]
            ok = ok and finite(&st.W[j], 1) and finite(&st.S[0, 0, j], 1) \
                and finite(&st.S[0, 1, j], 1) and finite(&st.S[1, 0, j], 1) \
                and finite(&st.S[1, 1, j], 1)
    finally:
        if not ok:
            p = bufd
            memcpy(&st.w[0], p, kcap * sizeof(double))
            memcpy(&st.xbar[0, 0], p + kcap, 2 * kcap * sizeof(double))
            memcpy(&st.dA[0, 0], p + 3 * kcap, 2 * kcap * sizeof(double))
            memcpy(&st.dB[0, 0], p + 5 * kcap, 2 * kcap * sizeof(double))
            p += 7 * kcap
            for c in range(2):
                if lenB[c] > 0:
                    memcpy(&st.B[0, 0, 0] + rowB[c], p, lenB[c] * sizeof(double))
                    p += lenB[c]
            for q in range(ncols - 1, -1, -1):     # in reverse: the first save of a
                j = cols[q]                        # duplicated column is the original
                off = 5 * q
                st.W[j], st.S[0, 0, j], st.S[0, 1, j], st.S[1, 0, j], st.S[1, 1, j] = (
                    p[off], p[off + 1], p[off + 2], p[off + 3], p[off + 4])
            p += 5 * ncols
            st.delta[0], st.delta[1] = p[0], p[1]
            memcpy(&st.Pv[0, 0], p + 2, 6 * sizeof(double))
            memcpy(&st.Qm[0, 0, 0], p + 8, 36 * sizeof(double))
            memcpy(&st.RH[0], p + 44, 3 * sizeof(double))
            pi = bufi
            memcpy(&st.slot_col[0], pi, kcap * sizeof(long long))
            pi += kcap
            for q in range(ncols - 1, -1, -1):
                j = cols[q]
                off = 3 * q
                st.cnt[j], st.col_slot[j], st.ep[j] = pi[off], pi[off + 1], pi[off + 2]
            pi += 3 * ncols
            for k in range(nnz):
                colmap[indices[k]] = pi[k]
            pi += nnz
            st.nrows[0], st.nrows[1], st.N[0], st.N[1] = pi[0], pi[1], pi[2], pi[3]
    if not ok:
        m_out[0] = m0
        return -2
    m_out[0] = m
    return t


cdef class Stepper:
    """One-row rounds and scores of a capped model on its own arrays, bound once
    (``learn_one`` and ``score_one``).

    Built from the estimator's state arrays (which it keeps, not copies) and its
    hyper-parameters; a model whose arrays are replaced (a general-path call, a load, an
    assignment) drops its stepper and binds a new one. The scalar state (m, t, the slots in
    use, the epoch) stays the estimator's: each call takes it and returns the new values.
    The scratch space of the pass and the saves of the round are kept across calls.
    """
    cdef long long[::1] colmap
    cdef SketchState st         # the state arrays; its nslots and epoch are the stepper's
    cdef SketchSpec spec
    cdef double[::1] calib
    cdef Py_ssize_t p
    # the one-row CSR arrays of a dense row, the label sign, the pass order
    cdef double[::1] rdata
    cdef int[::1] rind
    cdef int[::1] rptr
    cdef double[::1] sv
    cdef Py_ssize_t[::1] order
    cdef Buffers bf

    def __cinit__(self):
        memset(&self.bf, 0, sizeof(Buffers))

    def __dealloc__(self):
        release(&self.bf)

    def __init__(self, long long[::1] colmap, SketchState st, double[::1] calibration,
                 SketchSpec spec):
        """``st``: the estimator's arrays with one-value ``nslots`` and ``epoch`` arrays of
        the stepper's own (each call sets them from its arguments)."""
        if calibration.shape[0] != 2:
            raise ValueError("Stepper: calibration must hold [A, H]")
        self.colmap, self.st, self.calib, self.spec = colmap, st, calibration, spec
        self.p = colmap.shape[0]
        self.rdata = np.zeros(16)
        self.rind = np.zeros(16, dtype=np.int32)
        self.rptr = np.zeros(2, dtype=np.int32)
        self.sv = np.zeros(1)
        self.order = np.zeros(1, dtype=np.intp)

    cdef double icpt(self, long long kt) noexcept nogil:
        """The model's intercept (0 until both classes are seen)."""
        if self.st.N[0] == 0 or self.st.N[1] == 0:
            return 0.0
        return intercept_of(self.st.w, self.st.xbar, kt, self.st.Pv, self.st.RH, self.st.N)

    cdef double csr_dot(self, const double[::1] data, const int[::1] indices,
                        long long epoch) noexcept nogil:
        """w.x of one CSR row (the terms and order of :func:`row_scores`)."""
        cdef Py_ssize_t k
        cdef long long j
        cdef double acc = 0.0
        for k in range(data.shape[0]):
            j = self.colmap[indices[k]]
            if j < 0:
                continue
            if self.st.col_slot[j] >= 0:
                acc += data[k] * self.st.w[self.st.col_slot[j]]
            else:
                acc += data[k] * weight_of(j, self.st.W, self.st.ep, epoch, self.st.S,
                                           self.st.RH)
        return acc

    cdef double dense_score(self, const double* x, long long kt, long long epoch) noexcept nogil:
        """w.x + the intercept of one dense row of p values (``decision_function``'s bits)."""
        return dense_dot(x, 1, self.p, self.colmap, self.st.col_slot, self.st.w, self.st.W,
                         self.st.ep, self.st.S, self.st.RH, epoch) + self.icpt(kt)

    cdef bint csr_ok(self, const double[::1] data, const int[::1] indices,
                     const int[::1] indptr) noexcept nogil:
        """One canonical row (indptr [0, nnz], increasing indices in [0, p)), finite."""
        cdef Py_ssize_t k, nnz = data.shape[0]
        if indptr.shape[0] != 2 or indptr[0] != 0 or indptr[1] != nnz \
                or indices.shape[0] != nnz:
            return False
        for k in range(nnz):
            if indices[k] < (0 if k == 0 else indices[k - 1] + 1) or indices[k] >= self.p:
                return False
        return nnz == 0 or finite(&data[0], nnz)

    def score_dense(self, const double[::1] x, long long kt, long long epoch):
        """The score of a finite dense row of p values (``decision_function``'s bits), or
        None (a row of another length or not finite: the general path says why)."""
        cdef double f
        if x.shape[0] != self.p or not finite(&x[0], self.p):
            return None
        f = self.dense_score(&x[0], kt, epoch)
        return f if finite(&f, 1) else None

    def score_csr(self, const double[::1] data, const int[::1] indices,
                  const int[::1] indptr, long long kt, long long epoch):
        """The score of one canonical finite CSR row (as :meth:`score_dense`), or None."""
        cdef double f
        if not self.csr_ok(data, indices, indptr):
            return None
        f = self.csr_dot(data, indices, epoch) + self.icpt(kt)
        return f if finite(&f, 1) else None

    def learn_dense(self, const double[::1] x, double s, long long m0, long long t0,
                    long long kt, long long epoch, bint save_sketch=True,
                    bint score_first=True):
        """Round t0 + 1 on a finite dense row of p values with label sign s: the
        pre-score (for the Platt step), the round on the row's non-zero entries (the ones
        ``_canonical_csr`` keeps) by :func:`one_row`, the Platt step. Returns
        ``(t, m, slots, epoch)`` after the round, or None with the state as it was (the
        row or the round does not suit this path: the general path then runs).
        ``save_sketch=False``, ``score_first=False``: mutants for the tests only (no
        sketch saved; the Platt step on the score after the round)."""
        cdef double f
        cdef Py_ssize_t k, nnz = 0
        if x.shape[0] != self.p or not finite(&x[0], self.p):
            return None
        f = self.dense_score(&x[0], kt, epoch)
        if not finite(&f, 1):
            return None
        for k in range(self.p):
            nnz += x[k] != 0.0
        if nnz > self.rdata.shape[0]:
            self.rdata = np.zeros(max(nnz, 2 * self.rdata.shape[0]))
            self.rind = np.zeros(self.rdata.shape[0], dtype=np.int32)
        nnz = 0
        for k in range(self.p):
            if x[k] != 0.0:
                self.rdata[nnz] = x[k]
                self.rind[nnz] = <int> k
                nnz += 1
        self.rptr[1] = <int> nnz
        return self.play(self.rdata, self.rind, self.rptr, f, s, m0, t0, kt, epoch,
                         save_sketch, score_first, 1)

    def learn_csr(self, const double[::1] data, const int[::1] indices, const int[::1] indptr,
                  double s, long long m0, long long t0, long long kt, long long epoch,
                  bint save_sketch=True, bint score_first=True):
        """:meth:`learn_dense` for one canonical finite CSR row (its arrays), or None."""
        cdef double f
        if not self.csr_ok(data, indices, indptr):
            return None
        f = self.csr_dot(data, indices, epoch) + self.icpt(kt)
        if not finite(&f, 1):
            return None
        return self.play(data, indices, indptr, f, s, m0, t0, kt, epoch, save_sketch,
                         score_first, 0)

    cdef object play(self, const double[::1] data, const int[::1] indices,
                     const int[::1] indptr, double f, double s, long long m0, long long t0,
                     long long kt, long long epoch, bint save_sketch, bint score_first,
                     bint dense):
        cdef long long t, m = m0
        cdef SketchState st = self.st
        self.sv[0] = s
        st.nslots[0] = kt
        st.epoch[0] = epoch
        t = one_row_core(data, indices, indptr, self.sv, self.order, self.colmap, m0, st, t0,
                         &self.spec, save_sketch, &self.bf, &m)
        if t < 0:
            return None
        if not score_first:                   # the mutant: the score after the round
            if dense:
                f = self.csr_dot(data[:indptr[1]], indices[:indptr[1]], st.epoch[0]) \
                    + self.icpt(st.nslots[0])
            else:
                f = self.csr_dot(data, indices, st.epoch[0]) + self.icpt(st.nslots[0])
        platt_step(&self.calib[0], f, 1.0 if s > 0 else 0.0)
        return t, m, st.nslots[0], st.epoch[0]


def read_score(dict d, object x, bint lock=True):
    """``score_one`` of a fitted model on a dense float64 row read without its lock: the
    score of ``x`` by the model's bound :class:`Stepper` (``d`` is the model's
    ``__dict__``), or None when the caller must take the lock and its ordinary path (the
    lock held by another thread, hyper-parameters not checked, no stepper, another kind
    of row, a row that is not finite or a score that is not). The check of the lock, the
    slots in use, the epoch and the read run with the GIL held and call no Python code,
    which makes the unlocked read safe (:mod:`sosl._core._lock`). ``lock=False`` reads
    whoever holds the lock: a mutant for the tests only.
    """
    cdef PyObject* o = PyDict_GetItem(d, "_lock_")
    cdef PyObject* kt
    cdef PyObject* ep
    cdef Stepper sp
    cdef cnp.ndarray a
    cdef double f
    if lock and o != NULL and not reader_may_pass(<object> o):
        return None
    o = PyDict_GetItem(d, "_params_ok")
    if o == NULL or <object> o is not True:
        return None
    o = PyDict_GetItem(d, "_stepper_")
    kt = PyDict_GetItem(d, "n_slots_")
    ep = PyDict_GetItem(d, "untracked_epoch_")
    if (o == NULL or kt == NULL or ep == NULL or type(<object> o) is not Stepper
            or type(<object> kt) is not int or type(<object> ep) is not int
            or type(x) is not cnp.ndarray):
        return None
    sp = <Stepper> o
    a = <cnp.ndarray> x
    if (cnp.PyArray_NDIM(a) != 1 or cnp.PyArray_DIM(a, 0) != sp.p
            or cnp.PyArray_TYPE(a) != cnp.NPY_DOUBLE or not cnp.PyArray_ISCARRAY_RO(a)
            or not finite(<const double*> cnp.PyArray_DATA(a), sp.p)):
        return None
    f = sp.dense_score(<const double*> cnp.PyArray_DATA(a), <object> kt, <object> ep)
    return f if finite(&f, 1) else None
