# cython: language_level=3
"""Typed kernel of the kernel second-order learners (Algorithms 2-4, eqs. 20-28).

One ``nogil`` loop over the samples in a given order; no validation, no allocation of
results. The NumPy reference with the same signature, one line per equation, is
:mod:`sosl._core._okauc_ref`; see it for the symbol table, the slot layout of the buffers
and the conventions. Cost per round: O(M p) kernel evaluations for x_t against the M
stored vectors, plus O(M |S_t|) to keep f on the buffers up to date through the cached
Gram matrix (one BLAS dgemv per occupied block, or one for both once the first block is
full and the occupied slots are adjacent), i.e. O(B^2 + B p) for budgets B.

Two entry points share one pass body (``_pass``):

* ``kernel_pass``: dense rows ``X`` (n, p) and dense slots ``SV`` (M, p).
* ``kernel_pass_csr``: CSR rows (data, indices, indptr; sorted int32 indices) and sparse
  slots: slot q holds ``sv_nnz[q]`` entries at positions ``sv_ind[q, :sv_nnz[q]]``
  (increasing) with values ``sv_val[q, :sv_nnz[q]]``; the slot width L =
  ``sv_ind.shape[1]`` must be at least the largest row nnz of the rows visited (the
  caller widens the slots before the pass). A kernel row then costs
  O(M (nnz(x_t) + L)) through the merges of ``_kfun.pxd``, independent of p, and storing
  x_t copies its nnz(x_t) entries.

The two differ only in the two per-round steps "kernel row of x_t" and "store x_t in slot
j", which branch once per round on the storage (``SlotStore`` of ``_kfun.pxd``), not per
element.
"""

cimport numpy as cnp
from libc.math cimport fabs, isfinite
from libc.string cimport memcpy
from scipy.linalg.cython_blas cimport dgemv

from sosl._core._calibration cimport platt_step

from sosl._core._codes cimport TRANSFER_OPTIMAL
from sosl._core._kfun cimport (
    KernelSpec,
    kernel_rows,
    SlotStore,
    SourceRow,
    SourceRows,
    StepSpec,
    csr_source,
    get_row,
    store_kernel_row,
    store_put,
    store_self_kernel,
    weighted_sum,
)
from sosl._core._rows cimport dense_source
from sosl._core._losses cimport loss_grad, loss_scale
from sosl._core._moments cimport round_prologue

cnp.import_array()


def kernel_pass(const double[:, ::1] X, const double[::1] s, const Py_ssize_t[::1] order,
                double[:, ::1] SV, double[::1] alpha, double[:, ::1] G, double[::1] fb,
                const long long[::1] cap, long long[::1] count, long long[::1] head,
                long long t0, StepSpec step, KernelSpec kern, int transfer,
                double[::1] work, double[:, ::1] trace):
    """Run Algorithm 2 over ``X[order]``; update the buffers in place.

    ``step`` carries eta, lam, the ``Schedule`` and the ``Loss`` code, ``kern`` the
    kernel (``sosl._core._kparams.step_spec`` / ``kernel_spec`` build them). ``work`` is
    scratch space of length at least ``3 M`` (M = ``alpha.shape[0]``).
    Returns the round counter after the pass. See
    :func:`sosl._core._okauc_ref.kernel_pass` for the parameters.
    """
    cdef SourceRows rows
    cdef SlotStore st
    cdef Py_ssize_t M = alpha.shape[0]
    if SV.shape[0] != M or SV.shape[1] != X.shape[1]:
        raise ValueError("kernel_pass: inconsistent buffer shapes (need SV of shape (M, p))")
    dense_source(X, &rows)
    if order.shape[0] > 0 and (rows.X == NULL or SV.shape[0] == 0 or SV.shape[1] == 0):
        raise ValueError("kernel_pass: rows to visit but no features or no slots")
    st.dense = True
    st.SV = &SV[0, 0] if M > 0 and SV.shape[1] > 0 else NULL
    st.ind = NULL
    st.val = NULL
    st.nnz = NULL
    st.L = 0
    return _pass(&rows, &st, s, order, alpha, G, fb, cap, count, head, t0, &step, &kern,
                 transfer, work, trace)


def kernel_pass_csr(const double[::1] data, const int[::1] indices, const int[::1] indptr,
                    const double[::1] s, const Py_ssize_t[::1] order, int[:, ::1] sv_ind,
                    double[:, ::1] sv_val, int[::1] sv_nnz, double[::1] alpha,
                    double[:, ::1] G, double[::1] fb, const long long[::1] cap,
                    long long[::1] count, long long[::1] head, long long t0, StepSpec step,
                    KernelSpec kern, int transfer, double[::1] work, double[:, ::1] trace):
    """Run Algorithm 2 over the CSR rows ``order`` into sparse slots; in place.

    The rows are ``(data, indices, indptr)`` of a canonical CSR matrix (sorted int32
    indices); the slots ``sv_ind`` (M, L) int32, ``sv_val`` (M, L), ``sv_nnz`` (M,) int32
    (see the module docstring), with L at least the largest nnz of the rows visited
    (checked). Every other argument as in :func:`kernel_pass`; the reference is
    :func:`sosl._core._okauc_ref.kernel_pass_csr`. Returns the round counter.
    """
    cdef SourceRows rows
    cdef SlotStore st
    cdef Py_ssize_t M = alpha.shape[0]
    cdef Py_ssize_t n = indptr.shape[0] - 1
    cdef Py_ssize_t L = sv_ind.shape[1]
    csr_source(data, indices, indptr, order, 0, L, "kernel_pass_csr", &rows)
    if (sv_ind.shape[0] != M or sv_val.shape[0] != M or sv_val.shape[1] != L
            or sv_nnz.shape[0] != M or s.shape[0] < n):
        raise ValueError("kernel_pass_csr: inconsistent shapes (need sv_ind and sv_val of "
                         "shape (M, L), sv_nnz of length M, a label for every row)")
    if order.shape[0] > 0 and (M == 0 or L == 0):
        raise ValueError("kernel_pass_csr: rows to visit but no slots (M = 0 or L = 0)")
    st.dense = False
    st.SV = NULL
    st.ind = &sv_ind[0, 0] if M > 0 and L > 0 else NULL
    st.val = &sv_val[0, 0] if M > 0 and L > 0 else NULL
    st.nnz = &sv_nnz[0] if M > 0 else NULL
    st.L = L
    return _pass(&rows, &st, s, order, alpha, G, fb, cap, count, head, t0, &step, &kern,
                 transfer, work, trace)


cdef long long _pass(const SourceRows* rows, SlotStore* sv, const double[::1] s,
                     const Py_ssize_t[::1] order, double[::1] alpha, double[:, ::1] G,
                     double[::1] fb, const long long[::1] cap, long long[::1] count,
                     long long[::1] head, long long t0, const StepSpec* step,
                     const KernelSpec* kern, int transfer, double[::1] work,
                     double[:, ::1] trace) except? -1:
    """The pass body shared by the dense and the CSR entry point."""
    cdef SourceRow xr
    cdef Py_ssize_t p = rows.p
    cdef Py_ssize_t m = order.shape[0]
    cdef Py_ssize_t M = alpha.shape[0]
    cdef double* kx = &work[0]
    cdef double* d = &work[M]
    cdef double* tmp = &work[2 * M]
    cdef int nq, nl, inc = 1
    cdef int ldg = <int> M
    cdef double one = 1.0
    cdef double zero = 0.0
    cdef char* trans_n = b"N"
    cdef Py_ssize_t start[2]
    cdef Py_ssize_t stop[2]
    cdef Py_ssize_t r_, i, c, q, l, j, rs, slot
    cdef long long t = t0
    cdef int own, opp, record
    cdef double lam = step.lam, eta = step.eta
    cdef int schedule = step.schedule, loss = step.loss
    cdef int kind = kern.kind
    cdef double gamma = kern.gamma, degree = kern.degree, coef0 = kern.coef0
    # the kernel learners minimize psi_M and psi_S / 2 (eq. 27): the shared loss times `scale`
    cdef double scale = loss_scale(loss)
    cdef double y, eta_t, kxx, fx, decay, mu, s2, b, psi, d_mu, d_s2, a_new, acc, aj
    cdef double score, best_score, delta, krr, krj, N, eN
    if (work.shape[0] < 3 * M or G.shape[0] != M or G.shape[1] != M
            or fb.shape[0] != M or cap[0] + cap[1] != M):
        raise ValueError("kernel_pass: inconsistent buffer shapes (need M = cap[0] + cap[1] "
                         "slots, G of shape (M, M), work of length 3 M)")
    start[0] = 0
    start[1] = cap[0]
    record = trace.shape[0] == m and m > 0

    with nogil:
        for r_ in range(m):
            i = order[r_]
            t += 1
            get_row(rows, i, &xr)
            y = s[i]
            eta_t = round_prologue(y, t, schedule, eta, lam, &own, &opp)
            stop[0] = start[0] + count[0]
            stop[1] = start[1] + count[1]
            if record:
                acc = 0.0
                for c in range(2):
                    for q in range(start[c], stop[c]):
                        for l in range(2):
                            for j in range(start[l], stop[l]):
                                acc += alpha[q] * G[q, j] * alpha[j]
                trace[r_, 1] = acc
            # kernel row of x_t and f_t(x_t), eq. (20)
            fx = 0.0
            if count[0] == cap[0]:
                # the occupied slots are adjacent: one row computation for both blocks
                store_kernel_row(sv, &xr, 0, count[0] + count[1], p, kind, gamma, degree,
                                 coef0, &kx[0])
            else:
                for c in range(2):
                    store_kernel_row(sv, &xr, start[c], count[c], p, kind, gamma, degree,
                                     coef0, &kx[start[c]])
            for c in range(2):
                for q in range(start[c], stop[c]):
                    fx += alpha[q] * kx[q]
            kxx = store_self_kernel(sv, &xr, p, kind, gamma, degree, coef0)
            decay = 1.0 - lam * eta_t
            a_new = 0.0
            if count[opp] > 0:
                N = <double> count[opp]
                mu = 0.0
                for q in range(start[opp], stop[opp]):
                    mu += fb[q]
                mu /= N
                s2 = 0.0
                for q in range(start[opp], stop[opp]):
                    s2 += (fb[q] - mu) * (fb[q] - mu)
                s2 /= N
                b = 1.0 - y * (fx - mu)
                # psi and its partials at (mu_t = 1 - b_t, sigma_t^2), eqs. (23)-(27)
                psi = scale * loss_grad(loss, 1.0 - b, s2, &d_mu, &d_s2)
                d_mu = scale * d_mu
                d_s2 = scale * d_s2
                if record:
                    trace[r_, 0] = psi
                a_new = -eta_t * y * d_mu
                eN = eta_t / N
                for q in range(start[opp], stop[opp]):
                    d[q] = eN * (y * d_mu - 2.0 * d_s2 * (fb[q] - mu))
                # f on the buffers and at x_t after the step, eq. (22)
                # tmp[l] = sum_{q in I_t} d_q G[q, l] on each occupied block: one dgemv per
                # block (the row-major block G[I_t, block] is the column-major transpose)
                # (one call for both blocks once the first is full: they are then adjacent)
                nq = <int> count[opp]
                if count[0] == cap[0] and count[1] > 0:
                    nl = <int> (count[0] + count[1])
                    dgemv(trans_n, &nl, &nq, &one, &G[start[opp], 0], &ldg,
                          &d[start[opp]], &inc, &zero, &tmp[0], &inc)
                else:
                    for c in range(2):
                        nl = <int> count[c]
                        if nl > 0:
                            dgemv(trans_n, &nl, &nq, &one, &G[start[opp], start[c]], &ldg,
                                  &d[start[opp]], &inc, &zero, &tmp[start[c]], &inc)
                acc = 0.0
                for q in range(start[opp], stop[opp]):
                    acc += d[q] * kx[q]
                fx = decay * fx + acc + a_new * kxx
                for c in range(2):
                    for l in range(start[c], stop[c]):
                        fb[l] = decay * fb[l] + tmp[l] + a_new * kx[l]
                        alpha[l] = decay * alpha[l]
                for q in range(start[opp], stop[opp]):
                    alpha[q] += d[q]
            else:
                if record:
                    trace[r_, 0] = 0.0
                for c in range(2):
                    for q in range(start[c], stop[c]):
                        fb[q] = decay * fb[q]
                        alpha[q] = decay * alpha[q]
                fx = decay * fx
            # Algorithm 4: insert x_t into its own buffer; FIFO removal + eq. (28) if full
            if count[own] < cap[own]:
                slot = start[own] + count[own]
            else:
                slot = start[own] + head[own]
                head[own] = (head[own] + 1) % cap[own]
                j = slot
                aj = alpha[j]
                rs = -2
                best_score = 0.0
                delta = 0.0
                for q in range(start[own], stop[own] + 1):
                    if q == j:
                        continue
                    if q == stop[own]:
                        krr = kxx
                        krj = kx[j]
                    else:
                        krr = G[q, q]
                        krj = G[j, q]           # = G[q, j]: the cache is kept symmetric
                    if krr <= 0:
                        continue
                    if transfer == TRANSFER_OPTIMAL:
                        score = krj * krj / krr
                    else:
                        score = -fabs(krj)
                    if rs == -2 or score > best_score:
                        rs = q
                        best_score = score
                        delta = aj * krj / krr
                for c in range(2):
                    for l in range(start[c], stop[c]):
                        fb[l] -= aj * G[j, l]
                fx -= aj * kx[j]
                if rs == stop[own]:
                    for c in range(2):
                        for l in range(start[c], stop[c]):
                            fb[l] += delta * kx[l]
                    fx += delta * kxx
                    a_new += delta
                elif rs >= 0:
                    for c in range(2):
                        for l in range(start[c], stop[c]):
                            fb[l] += delta * G[rs, l]
                    fx += delta * kx[rs]
                    alpha[rs] += delta
            if count[own] < cap[own]:
                count[own] += 1
                stop[own] += 1
            store_put(sv, &xr, slot, p)
            for c in range(2):
                for l in range(start[c], stop[c]):
                    if l != slot:
                        G[slot, l] = kx[l]
                        G[l, slot] = kx[l]
            G[slot, slot] = kxx
            alpha[slot] = a_new
            fb[slot] = fx
    return t


cdef class Stepper:
    """One-row rounds of OKAUC-M/S with budgeted FIFO buffers on an estimator's own dense
    buffers, bound once (``learn_one``'s typed path).

    ``step(x, s, t0, intercept)`` plays round t0 + 1 on the 1-D float64 row x (label sign
    s) in place, as ``partial_fit`` on the row would: the pre-score f(x) + intercept for
    the Platt scaling (the kernel row of the occupied slots in slot order, as the decision
    function computes it from ``support_vectors_``), the pass and the Platt step. Before
    anything is written it checks that x is finite with the right length and the
    pre-score finite, and saves what the round can write: the weights, the scores on the
    buffers, the counters and the row of the slot x goes to (its class's next free slot,
    or its oldest one; the Gram cache is symmetric, so its column is that row). After the
    pass it checks the weights, the scores and that row; anything non-finite restores the
    saved state. Returns the round counter after the round, or -1 (the state as it was)
    when the caller must take the general path, which then reports the row or the
    overflow. The occupied slots must be adjacent (the negative buffer full, or the
    positive one empty); otherwise -1 too. The caller refreshes the public attributes.
    """
    cdef SlotStore st
    cdef SourceRows rows
    cdef KernelSpec kern
    cdef StepSpec step_
    cdef int transfer
    cdef Py_ssize_t M, p
    cdef readonly object arrays
    cdef double[:, ::1] SV, G, trace
    cdef double[::1] alpha, fb, work, save, s1, calib
    cdef long long[::1] cap, count, head
    cdef long long save_n[4]
    cdef Py_ssize_t[::1] order

    def __init__(self, double[:, ::1] SV, double[::1] alpha, double[:, ::1] G,
                 double[::1] fb, long long[::1] cap, long long[::1] count,
                 long long[::1] head, StepSpec step, KernelSpec kern, int transfer,
                 double[::1] calibration):
        cdef Py_ssize_t M = alpha.shape[0]
        if (SV.shape[0] != M or SV.shape[1] == 0 or G.shape[0] != M or G.shape[1] != M
                or fb.shape[0] != M or cap.shape[0] != 2 or cap[0] + cap[1] != M
                or cap[0] < 1 or cap[1] < 1 or calibration.shape[0] != 2):
            raise ValueError("okauc Stepper: inconsistent buffers")
        self.arrays = (SV.base, alpha.base, G.base, fb.base, cap.base, count.base,
                       head.base, calibration.base)
        self.SV, self.alpha, self.G, self.fb = SV, alpha, G, fb
        self.cap, self.count, self.head, self.calib = cap, count, head, calibration
        self.M, self.p = M, SV.shape[1]
        self.step_, self.kern, self.transfer = step, kern, transfer
        self.work = cnp.PyArray_ZEROS(1, [3 * M], cnp.NPY_DOUBLE, 0)
        self.save = cnp.PyArray_ZEROS(1, [3 * M + self.p], cnp.NPY_DOUBLE, 0)
        self.s1 = cnp.PyArray_ZEROS(1, [1], cnp.NPY_DOUBLE, 0)
        self.order = cnp.PyArray_ZEROS(1, [1], cnp.NPY_INTP, 0)
        self.trace = cnp.PyArray_ZEROS(2, [0, 2], cnp.NPY_DOUBLE, 0)
        self.st.dense = True
        self.st.SV = &SV[0, 0]
        self.st.ind = NULL
        self.st.val = NULL
        self.st.nnz = NULL
        self.st.L = 0
        self.rows.dense = True
        self.rows.data = NULL
        self.rows.indices = NULL
        self.rows.indptr = NULL
        self.rows.p = self.p

    cdef double pre_score(self, const double* x, Py_ssize_t k, double intercept):
        """f(x) + intercept as the decision function computes it from
        ``support_vectors_``: the kernel row of the k occupied slots, in slot order."""
        if k == 0:
            return intercept
        kernel_rows(&self.SV[0, 0], k, x, self.p, self.kern.kind, self.kern.gamma,
                    self.kern.degree, self.kern.coef0, &self.work[0])
        return weighted_sum(&self.alpha[0], &self.work[0], k) + intercept

    def score(self, const double[::1] x, double intercept):
        """``decision_function`` of the 1-D float64 row x, to the bit (the pre-score of
        ``step``); NaN when the caller must take the general path (x of the wrong length
        or not finite, the occupied slots not adjacent), which then reports the row."""
        cdef Py_ssize_t l, c0 = self.cap[0]
        cdef long long n0 = self.count[0], n1 = self.count[1]
        if x.shape[0] != self.p or not (n0 == c0 or n1 == 0):
            return float("nan")
        for l in range(self.p):
            if not isfinite(x[l]):
                return float("nan")
        return self.pre_score(&x[0], n0 + n1 if n0 == c0 else n0, intercept)

    def step(self, const double[::1] x, double s, long long t0, double intercept):
        cdef Py_ssize_t M = self.M, p = self.p, c0 = self.cap[0]
        cdef Py_ssize_t l, slot, own = 1 if s > 0 else 0
        cdef long long n0 = self.count[0], n1 = self.count[1], t
        cdef double pre
        cdef double* save = &self.save[0]
        cdef double* alpha = &self.alpha[0]
        cdef double* fb = &self.fb[0]
        cdef double* grow
        cdef bint ok
        if x.shape[0] != p:
            return -1
        for l in range(p):
            if not isfinite(x[l]):
                return -1
        if not (n0 == c0 or n1 == 0):
            return -1                     # occupied slots not adjacent: the general path
        pre = self.pre_score(&x[0], n0 + n1 if n0 == c0 else n0, intercept)
        if not isfinite(pre):
            return -1
        slot = (0 if own == 0 else c0) + (self.count[own] if self.count[own] < self.cap[own]
                                          else self.head[own])
        grow = &self.G[slot, 0]
        memcpy(save, alpha, M * sizeof(double))
        memcpy(save + M, fb, M * sizeof(double))
        memcpy(save + 2 * M, grow, M * sizeof(double))
        memcpy(save + 3 * M, &self.SV[slot, 0], p * sizeof(double))
        self.save_n[0], self.save_n[1] = self.count[0], self.count[1]
        self.save_n[2], self.save_n[3] = self.head[0], self.head[1]
        self.rows.X = &x[0]
        self.s1[0] = s
        t = _pass(&self.rows, &self.st, self.s1, self.order, self.alpha, self.G, self.fb,
                  self.cap, self.count, self.head, t0, &self.step_, &self.kern,
                  self.transfer, self.work, self.trace)
        ok = True
        for l in range(M):
            if not (isfinite(alpha[l]) and isfinite(fb[l]) and isfinite(grow[l])):
                ok = False
                break
        if not ok:
            memcpy(alpha, save, M * sizeof(double))
            memcpy(fb, save + M, M * sizeof(double))
            memcpy(grow, save + 2 * M, M * sizeof(double))
            for l in range(M):
                self.G[l, slot] = grow[l]
            memcpy(&self.SV[slot, 0], save + 3 * M, p * sizeof(double))
            self.count[0], self.count[1] = self.save_n[0], self.save_n[1]
            self.head[0], self.head[1] = self.save_n[2], self.save_n[3]
            return -1
        platt_step(&self.calib[0], pre, 1.0 if s > 0 else 0.0)
        return t
