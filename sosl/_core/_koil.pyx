# cython: language_level=3
"""Typed pass of KOIL (Hu et al., AAAI 2015): pairwise hinge against the k nearest
violating opposite support vectors, buffers of fixed budgets with RS++ / FIFO++.

One ``nogil`` loop over the samples in a given order; no validation, no allocation of
results. The NumPy reference with the same signature, one line per step, is
:mod:`sosl._core._koil_ref`; see it for the symbol table, the slot layout and the round.
Cost per round: O(B p) kernel evaluations for x_t plus O(k B) to keep f on the buffer up
to date through the cached Gram matrix (B = N+ + N-), instead of the O(B_o B p) of
re-evaluating f on the opposite buffer with kernel evaluations.

Two entry points share one pass body (``_pass``), as in :mod:`sosl._core._okauc`:
``koil_pass`` for dense rows and dense slots ``buf`` (B, p), ``koil_pass_csr`` for CSR rows
and sparse slots (``buf_ind`` (B, L) int32, ``buf_val`` (B, L), ``buf_nnz`` (B,) int32;
slot j holds ``buf_nnz[j]`` entries at increasing positions ``buf_ind[j, :buf_nnz[j]]``),
whose kernel rows cost O(B (nnz(x_t) + L)) whatever p (the merges of ``_kfun.pxd``). L
must be at least the largest nnz of the rows visited (checked).
"""

cimport numpy as cnp
from libc.math cimport isfinite
from libc.stdint cimport uint64_t
from libc.string cimport memcpy

from sosl._core._calibration cimport platt_step

from sosl._core._codes cimport POLICY_RS
from sosl._core._kfun cimport (
    KernelSpec,
    SlotStore,
    SourceRow,
    SourceRows,
    csr_source,
    get_row,
    store_kernel_row,
    store_put,
    store_self_kernel,
    kernel_rows,
    weighted_sum,
)
from sosl._core._rows cimport dense_source

from sosl._core._kparams import KOIL_REFRESH

cnp.import_array()

cdef long long REFRESH = KOIL_REFRESH      # one source for the pass and its reference


cdef inline void axpy_col(double* f, double[:, ::1] gram, Py_ssize_t col, double a,
                          const long long* n_buf, const Py_ssize_t* off) noexcept nogil:
    """f[l] += a * gram[l, col] on the filled slots (f follows a change a of alpha_col).

    Reads row ``col`` (contiguous) instead of the column: the Gram cache is kept exactly
    symmetric (``put_slot`` writes both), so the values are the same.
    """
    cdef Py_ssize_t q, l
    cdef const double* g = &gram[col, 0]
    for q in range(2):
        for l in range(off[q], off[q] + n_buf[q]):
            f[l] += a * g[l]


cdef inline double row_dot(double[:, ::1] gram, Py_ssize_t row, const double* alpha,
                           const long long* n_buf, const Py_ssize_t* off) noexcept nogil:
    """sum_l gram[row, l] alpha[l] over the filled slots (f at slot ``row``)."""
    cdef Py_ssize_t q, l
    cdef double acc = 0.0
    for q in range(2):
        for l in range(off[q], off[q] + n_buf[q]):
            acc += gram[row, l] * alpha[l]
    return acc


cdef inline void put_slot(SlotStore* buf, double* alpha, double[:, ::1] gram,
                          const SourceRow* x, const double* kx, double kxx, Py_ssize_t j,
                          double a_t, Py_ssize_t p, const long long* n_buf,
                          const Py_ssize_t* off) noexcept nogil:
    """Store x_t with weight a_t in slot j and refresh row/column j of the Gram cache."""
    cdef Py_ssize_t q, l
    store_put(buf, x, j, p)
    alpha[j] = a_t
    for q in range(2):
        for l in range(off[q], off[q] + n_buf[q]):
            gram[j, l] = kx[l]
            gram[l, j] = kx[l]
    gram[j, j] = kxx


def koil_pass(const double[:, ::1] X, const double[::1] s, const Py_ssize_t[::1] order,
              const double[:, ::1] U, double[:, ::1] buf, double[::1] alpha_mv,
              double[:, ::1] gram, double[::1] f_mv, long long[::1] n_buf, long long[::1] n_seen,
              long long[::1] head, const long long[::1] budgets, long long t0,
              double eta, double C, Py_ssize_t k_nn, int policy, KernelSpec kern,
              double[::1] work):
    """Run KOIL over ``X[order]``; update the buffers in place; return the round counter.

    Raises FloatingPointError (the arrays are then partly updated) at the first row whose
    k(x_t, x_t) or f_t(x_t) is not finite. ``work`` is scratch space of length at least
    ``2 B + 2 k_nn`` (B = total slots); ``kern`` is the kernel
    (``sosl._core._kparams.kernel_spec``). See :func:`sosl._core._koil_ref.koil_pass` for
    the parameters.
    """
    cdef SourceRows rows
    cdef SlotStore st
    cdef Py_ssize_t B = alpha_mv.shape[0]
    if buf.shape[0] != B or buf.shape[1] != X.shape[1] or X.shape[1] == 0:
        raise ValueError("koil_pass: inconsistent shapes (need buf of shape (B, p), p >= 1)")
    dense_source(X, &rows)
    st.dense = True
    st.SV = &buf[0, 0] if B > 0 else NULL
    st.L = 0
    return _pass(&rows, &st, s, order, U, alpha_mv, gram, f_mv, n_buf, n_seen, head,
                 budgets, t0, eta, C, k_nn, policy, &kern, work)


def koil_pass_csr(const double[::1] data, const int[::1] indices, const int[::1] indptr,
                  const double[::1] s, const Py_ssize_t[::1] order, const double[:, ::1] U,
                  int[:, ::1] buf_ind, double[:, ::1] buf_val, int[::1] buf_nnz,
                  double[::1] alpha_mv, double[:, ::1] gram, double[::1] f_mv,
                  long long[::1] n_buf, long long[::1] n_seen, long long[::1] head,
                  const long long[::1] budgets, long long t0, double eta, double C,
                  Py_ssize_t k_nn, int policy, KernelSpec kern, double[::1] work):
    """KOIL over the CSR rows ``order`` (``data, indices, indptr``, sorted int32 indices)
    into sparse slots (see the module docstring); every other argument as in
    :func:`koil_pass`; it equals the reference :func:`sosl._core._koil_ref.koil_pass` run on
    the rows and slots densified
    (tests/_core/test_koil.py::test_csr_pass_matches_reference_on_densified_rows)."""
    cdef SourceRows rows
    cdef SlotStore st
    cdef Py_ssize_t B = alpha_mv.shape[0]
    cdef Py_ssize_t n = indptr.shape[0] - 1
    cdef Py_ssize_t L = buf_ind.shape[1]
    csr_source(data, indices, indptr, order, 0, L, "koil_pass_csr", &rows)
    if (buf_ind.shape[0] != B or buf_val.shape[0] != B or buf_val.shape[1] != L
            or buf_nnz.shape[0] != B or s.shape[0] < n or L == 0):
        raise ValueError("koil_pass_csr: inconsistent shapes (need buf_ind and buf_val of "
                         "shape (B, L) with L >= 1, buf_nnz of length B, a label for every "
                         "row)")
    st.dense = False
    st.ind = &buf_ind[0, 0] if B > 0 else NULL
    st.val = &buf_val[0, 0] if B > 0 else NULL
    st.nnz = &buf_nnz[0] if B > 0 else NULL
    st.L = L
    return _pass(&rows, &st, s, order, U, alpha_mv, gram, f_mv, n_buf, n_seen, head,
                 budgets, t0, eta, C, k_nn, policy, &kern, work)


cdef long long _pass(const SourceRows* rows, SlotStore* buf, const double[::1] s,
                     const Py_ssize_t[::1] order, const double[:, ::1] U,
                     double[::1] alpha_mv, double[:, ::1] gram, double[::1] f_mv,
                     long long[::1] n_buf, long long[::1] n_seen, long long[::1] head,
                     const long long[::1] budgets, long long t0, double eta, double C,
                     Py_ssize_t k_nn, int policy, const KernelSpec* kern,
                     double[::1] work) except? -1:
    """The pass body shared by the dense and the CSR entry point."""
    cdef SourceRow xr
    cdef Py_ssize_t p = rows.p
    cdef Py_ssize_t m = order.shape[0]
    cdef Py_ssize_t B = alpha_mv.shape[0]
    cdef Py_ssize_t off[2]
    cdef Py_ssize_t r, i, j, l, q, c, o, n_sel, n_viol, pos, best
    cdef long long t = t0
    cdef int kind = kern.kind
    cdef double gamma = kern.gamma, degree = kern.degree, coef0 = kern.coef0
    cdef double y, kxx, f_x, loss, d2, a_t, a_old, best_d, decay, g
    cdef double* alpha = &alpha_mv[0]
    cdef double* f = &f_mv[0]
    cdef double* kx = &work[0]
    cdef double* kold = &work[B]
    cdef double* sel_d = &work[2 * B]
    cdef double* sel_i = &work[2 * B + k_nn]
    cdef bint replace
    cdef Py_ssize_t bad = -1

    off[0] = 0
    off[1] = budgets[0]
    with nogil:
        for r in range(m):
            i = order[r]
            t += 1
            get_row(rows, i, &xr)
            y = s[i]
            if y > 0:
                c = 1
            else:
                c = 0
            o = 1 - c
            n_seen[c] += 1
            # 1. k(x_t, x_j) on the filled slots and f_t(x_t)
            f_x = 0.0
            for q in range(2):
                store_kernel_row(buf, &xr, off[q], n_buf[q], p, kind, gamma, degree, coef0,
                                 &kx[off[q]])
                for l in range(off[q], off[q] + n_buf[q]):
                    f_x += alpha[l] * kx[l]
            kxx = store_self_kernel(buf, &xr, p, kind, gamma, degree, coef0)
            if not (isfinite(f_x) and isfinite(kxx)):
                bad = i
                break
            # 2.-3. violators among the opposite SVs; keep the k nearest (sorted, stable)
            n_sel = 0
            n_viol = 0
            for l in range(off[o], off[o] + n_buf[o]):
                loss = 1.0 - y * (f_x - f[l])
                if loss > 0.0:
                    n_viol += 1
                    d2 = kxx + gram[l, l] - 2.0 * kx[l]
                    pos = n_sel
                    while pos > 0 and sel_d[pos - 1] > d2:
                        pos -= 1
                    if pos < k_nn:
                        if n_sel < k_nn:
                            n_sel += 1
                        q = n_sel - 1
                        while q > pos:
                            sel_d[q] = sel_d[q - 1]
                            sel_i[q] = sel_i[q - 1]
                            q -= 1
                        sel_d[pos] = d2
                        sel_i[pos] = <double> l
            # 4. gradient step (alpha and the cached f on the buffer)
            decay = 1.0 - eta
            for q in range(2):
                for l in range(off[q], off[q] + n_buf[q]):
                    alpha[l] *= decay
                    f[l] *= decay
            g = eta * C * y
            if n_buf[o] == 0 or (n_buf[c] == 0 and n_viol == 0):
                a_t = g
            else:
                for q in range(n_sel):
                    l = <Py_ssize_t> sel_i[q]
                    alpha[l] -= g
                    axpy_col(f, gram, l, -g, &n_buf[0], off)
                a_t = g * n_sel
            if a_t != 0.0:
                # 5. budget maintenance
                if n_buf[c] < budgets[c]:
                    j = off[c] + n_buf[c]
                    for q in range(2):
                        for l in range(off[q], off[q] + n_buf[q]):
                            f[l] += a_t * kx[l]
                    put_slot(buf, alpha, gram, &xr, kx, kxx, j, a_t, p, &n_buf[0], off)
                    n_buf[c] += 1
                    f[j] = row_dot(gram, j, alpha, &n_buf[0], off)
                else:
                    replace = True
                    if policy == POLICY_RS:
                        if U[r, 0] < (<double> budgets[c]) / (<double> n_seen[c]):
                            j = off[c] + <Py_ssize_t> (U[r, 1] * budgets[c])
                        else:
                            replace = False
                    else:
                        j = off[c] + head[c]
                        head[c] = (head[c] + 1) % budgets[c]
                    if not replace:
                        # RS++: x_t not admitted; its weight goes to the nearest own SV
                        best = off[c]
                        best_d = 0.0
                        for l in range(off[c], off[c] + n_buf[c]):
                            d2 = kxx + gram[l, l] - 2.0 * kx[l]
                            if l == off[c] or d2 < best_d:
                                best_d = d2
                                best = l
                        alpha[best] += a_t
                        axpy_col(f, gram, best, a_t, &n_buf[0], off)
                    else:
                        a_old = alpha[j]
                        axpy_col(f, gram, j, -a_old, &n_buf[0], off)
                        for l in range(off[c], off[c] + n_buf[c]):
                            if l == j:
                                kold[l] = gram[j, j] + kxx - 2.0 * kx[j]
                            else:
                                kold[l] = gram[j, j] + gram[l, l] - 2.0 * gram[j, l]
                        put_slot(buf, alpha, gram, &xr, kx, kxx, j, a_t, p, &n_buf[0], off)
                        for q in range(2):
                            for l in range(off[q], off[q] + n_buf[q]):
                                if l != j:
                                    f[l] += a_t * gram[j, l]
                        f[j] = row_dot(gram, j, alpha, &n_buf[0], off)
                        best = off[c]
                        best_d = 0.0
                        for l in range(off[c], off[c] + n_buf[c]):
                            if l == off[c] or kold[l] < best_d:
                                best_d = kold[l]
                                best = l
                        alpha[best] += a_old
                        axpy_col(f, gram, best, a_old, &n_buf[0], off)
            if t % REFRESH == 0:
                for q in range(2):
                    for l in range(off[q], off[q] + n_buf[q]):
                        f[l] = row_dot(gram, l, alpha, &n_buf[0], off)
    if bad >= 0:
        raise FloatingPointError(f"koil_pass: k(x, x) or f(x) is not finite at row {bad} "
                                 "(the kernel overflowed)")
    return t


# -- the uniforms of a round: Philox4x64-10, as numpy.random.Philox draws them ----------------
cdef extern from *:
    """
    #include <stdint.h>
    static inline uint64_t sosl_mulhilo64(uint64_t a, uint64_t b, uint64_t* hi) {
        __uint128_t prod = (__uint128_t) a * b;
        *hi = (uint64_t) (prod >> 64);
        return (uint64_t) prod;
    }
    /* block = Philox4x64-10(counter = (t, 0, 0, 0), key = (seed, 0)) (Salmon et al. 2011) */
    static inline void sosl_philox_block(uint64_t t, uint64_t seed, uint64_t* out) {
        uint64_t c0 = t, c1 = 0, c2 = 0, c3 = 0, k0 = seed, k1 = 0, hi0, hi1, lo0, lo1;
        int r;
        for (r = 0; r < 10; r++) {
            if (r > 0) { k0 += 0x9E3779B97F4A7C15ULL; k1 += 0xBB67AE8584CAA73BULL; }
            lo0 = sosl_mulhilo64(0xD2E7470EE14C6C93ULL, c0, &hi0);
            lo1 = sosl_mulhilo64(0xCA5A826395121157ULL, c2, &hi1);
            c0 = hi1 ^ c1 ^ k0; c1 = lo1; c2 = hi0 ^ c3 ^ k1; c3 = lo0;
        }
        out[0] = c0; out[1] = c1; out[2] = c2; out[3] = c3;
    }
    """
    void sosl_philox_block(uint64_t t, uint64_t seed, uint64_t* out) nogil


def philox_uniforms(long long seed, long long t0, Py_ssize_t m):
    """The uniforms ``U`` (m, 2) of rounds t0 + 1 .. t0 + m: the first two doubles of
    Philox block t (key ``seed``), ``(u >> 11) 2^-53`` as ``Generator.random`` makes them;
    the typed twin of ``sosl.koil._philox_uniforms`` (tested equal:
    tests/_core/test_koil.py::test_philox_uniforms_equal_an_advanced_fresh_generator)."""
    cdef double[:, ::1] U = cnp.PyArray_ZEROS(2, [m, 2], cnp.NPY_DOUBLE, 0)
    cdef uint64_t out[4]
    cdef Py_ssize_t r
    for r in range(m):
        sosl_philox_block(<uint64_t> (t0 + r + 1), <uint64_t> seed, out)
        U[r, 0] = (out[0] >> 11) * (1.0 / 9007199254740992.0)
        U[r, 1] = (out[1] >> 11) * (1.0 / 9007199254740992.0)
    return U.base


cdef inline double midpoint(const double* f, Py_ssize_t n0, Py_ssize_t off,
                            Py_ssize_t n1) noexcept nogil:
    """-(mean f on B- + mean f on B+) / 2 (0 until both are filled), sums in slot order."""
    cdef Py_ssize_t l
    cdef double a = 0.0, b = 0.0
    if n0 == 0 or n1 == 0:
        return 0.0
    for l in range(n0):
        a += f[l]
    for l in range(off, off + n1):
        b += f[l]
    return -0.5 * (a / n0 + b / n1)


def koil_midpoint(const double[::1] f, const long long[::1] n_buf, Py_ssize_t off):
    """The intercept of KOIL from the cached scores (:func:`midpoint`)."""
    return midpoint(&f[0], n_buf[0], off, n_buf[1])


cdef class Stepper:
    """One-row rounds of KOIL on an estimator's own dense buffers, bound once.

    ``step(x, s, t, seed, intercept)`` plays round t on the 1-D float64 row x (label sign
    s) in place, as ``partial_fit`` on the row would: the pre-score f(x) + intercept for
    the Platt scaling (the kernel row of the filled slots in slot order, as the decision
    function computes it), the round's uniforms (:func:`philox_uniforms`), the pass, and
    the Platt step. Before anything is written it checks that x is finite with the right
    length and saves what the round can write: the weights, the cached scores, the
    counters and the row of the one slot the row can go to (the Gram cache is symmetric:
    its column is that row). After the pass it checks the weights, the scores and that
    row; a kernel overflow or anything non-finite restores the saved state. Returns the
    new intercept, or NaN (the state as it was) when the caller must take the general
    path, which then reports the row or the overflow. The filled slots must be adjacent
    (the negative buffer full, or the positive one empty); otherwise NaN too.
    """
    cdef SlotStore st
    cdef SourceRows rows
    cdef KernelSpec kern
    cdef double eta, C
    cdef Py_ssize_t k_nn, B, p, off
    cdef int policy
    cdef readonly object arrays
    cdef double[:, ::1] buf, gram, U
    cdef double[::1] alpha, f, work, save, s1, calib
    cdef long long[::1] n_buf, n_seen, head, budgets, save_n
    cdef Py_ssize_t[::1] order

    def __init__(self, double[:, ::1] buf, double[::1] alpha, double[:, ::1] gram,
                 double[::1] f, long long[::1] n_buf, long long[::1] n_seen,
                 long long[::1] head, const long long[::1] budgets, double eta, double C,
                 Py_ssize_t k_nn, int policy, KernelSpec kern, double[::1] calibration):
        cdef Py_ssize_t B = alpha.shape[0]
        if (buf.shape[0] != B or buf.shape[1] == 0 or gram.shape[0] != B
                or gram.shape[1] != B or f.shape[0] != B or budgets.shape[0] != 2
                or budgets[0] + budgets[1] != B or calibration.shape[0] != 2 or B == 0):
            raise ValueError("koil Stepper: inconsistent buffers")
        self.arrays = (buf.base, alpha.base, gram.base, f.base, n_buf.base, n_seen.base,
                       head.base, calibration.base)
        self.buf, self.alpha, self.gram, self.f = buf, alpha, gram, f
        self.n_buf, self.n_seen, self.head, self.calib = n_buf, n_seen, head, calibration
        self.budgets = cnp.PyArray_ZEROS(1, [2], cnp.NPY_INT64, 0)
        self.budgets[0] = budgets[0]
        self.budgets[1] = budgets[1]
        self.B, self.p, self.off = B, buf.shape[1], budgets[0]
        self.eta, self.C, self.k_nn, self.policy, self.kern = eta, C, k_nn, policy, kern
        self.U = cnp.PyArray_ZEROS(2, [1, 2], cnp.NPY_DOUBLE, 0)
        self.work = cnp.PyArray_ZEROS(1, [2 * B + 2 * k_nn], cnp.NPY_DOUBLE, 0)
        self.save = cnp.PyArray_ZEROS(1, [3 * B + self.p], cnp.NPY_DOUBLE, 0)
        self.save_n = cnp.PyArray_ZEROS(1, [6], cnp.NPY_INT64, 0)
        self.s1 = cnp.PyArray_ZEROS(1, [1], cnp.NPY_DOUBLE, 0)
        self.order = cnp.PyArray_ZEROS(1, [1], cnp.NPY_INTP, 0)
        self.st.dense = True
        self.st.SV = &buf[0, 0]
        self.st.L = 0
        self.rows.dense = True
        self.rows.p = self.p

    cdef double pre_score(self, const double* x, Py_ssize_t M, double intercept):
        """f(x) + intercept as the decision function computes it: the kernel row of the
        M filled slots, in slot order."""
        if M == 0:
            return intercept
        kernel_rows(&self.buf[0, 0], M, x, self.p, self.kern.kind, self.kern.gamma,
                    self.kern.degree, self.kern.coef0, &self.work[0])
        return intercept + weighted_sum(&self.alpha[0], &self.work[0], M)

    def score(self, const double[::1] x, double intercept):
        """``decision_function`` of the 1-D float64 row x, to the bit (the pre-score of
        ``step``); NaN when the caller must take the general path (x of the wrong length
        or not finite, the filled slots not adjacent), which then reports the row."""
        cdef Py_ssize_t l, off = self.off, n0 = self.n_buf[0], n1 = self.n_buf[1]
        if x.shape[0] != self.p or not (n0 == off or n1 == 0):
            return float("nan")
        for l in range(self.p):
            if not isfinite(x[l]):
                return float("nan")
        return self.pre_score(&x[0], n0 + n1 if n0 == off else n0, intercept)

    def step(self, const double[::1] x, double s, long long t, long long seed,
             double intercept):
        cdef Py_ssize_t B = self.B, p = self.p, off = self.off
        cdef Py_ssize_t j, l, c = 1 if s > 0 else 0, n0, n1
        cdef double pre
        cdef uint64_t out[4]
        cdef double* save = &self.save[0]
        cdef double* alpha = &self.alpha[0]
        cdef double* f = &self.f[0]
        cdef double* grow
        cdef bint ok
        if x.shape[0] != p:
            return float("nan")
        for l in range(p):
            if not isfinite(x[l]):
                return float("nan")
        n0, n1 = self.n_buf[0], self.n_buf[1]
        if not (n0 == off or n1 == 0):
            return float("nan")             # filled slots not adjacent: the general path
        pre = self.pre_score(&x[0], n0 + n1 if n0 == off else n0, intercept)
        # the uniforms of round t and the slot the round can write
        sosl_philox_block(<uint64_t> t, <uint64_t> seed, out)
        self.U[0, 0] = (out[0] >> 11) * (1.0 / 9007199254740992.0)
        self.U[0, 1] = (out[1] >> 11) * (1.0 / 9007199254740992.0)
        j = 0 if c == 0 else off
        if self.n_buf[c] < self.budgets[c]:
            j += self.n_buf[c]
        elif self.policy == POLICY_RS:
            j += <Py_ssize_t> (self.U[0, 1] * self.budgets[c])
        else:
            j += self.head[c]
        grow = &self.gram[j, 0]
        memcpy(save, alpha, B * sizeof(double))
        memcpy(save + B, f, B * sizeof(double))
        memcpy(save + 2 * B, grow, B * sizeof(double))
        memcpy(save + 3 * B, &self.buf[j, 0], p * sizeof(double))
        for l in range(2):
            self.save_n[l] = self.n_buf[l]
            self.save_n[2 + l] = self.n_seen[l]
            self.save_n[4 + l] = self.head[l]
        self.rows.X = &x[0]
        self.s1[0] = s
        ok = True
        try:
            _pass(&self.rows, &self.st, self.s1, self.order, self.U, self.alpha, self.gram,
                  self.f, self.n_buf, self.n_seen, self.head, self.budgets, t - 1, self.eta,
                  self.C, self.k_nn, self.policy, &self.kern, self.work)
        except FloatingPointError:
            ok = False
        if ok:
            for l in range(B):
                if not (isfinite(alpha[l]) and isfinite(f[l]) and isfinite(grow[l])):
                    ok = False
                    break
        if not ok:
            memcpy(alpha, save, B * sizeof(double))
            memcpy(f, save + B, B * sizeof(double))
            memcpy(grow, save + 2 * B, B * sizeof(double))
            for l in range(B):
                self.gram[l, j] = grow[l]
            memcpy(&self.buf[j, 0], save + 3 * B, p * sizeof(double))
            for l in range(2):
                self.n_buf[l] = self.save_n[l]
                self.n_seen[l] = self.save_n[2 + l]
                self.head[l] = self.save_n[4 + l]
            return float("nan")
        if isfinite(pre):
            platt_step(&self.calib[0], pre, 1.0 if s > 0 else 0.0)
        return midpoint(f, self.n_buf[0], off, self.n_buf[1])
