# cython: language_level=3
"""Typed pass of KOIL (Hu et al., AAAI 2015): pairwise hinge against the k nearest
violating opposite support vectors, buffers of fixed budgets with RS++ / FIFO++.

One ``nogil`` loop over the samples in a given order; no validation, no allocation of
results. The NumPy reference with the same signature, one line per step, is
:mod:`sosl._core._koil_ref`; see it for the symbol table, the slot layout and the round.
Cost per round: O(B p) kernel evaluations for x_t plus O(k B) to keep f on the buffer up
to date through the cached Gram matrix (B = N+ + N-), instead of the O(B_o B p) of
re-evaluating f on the opposite buffer with kernel evaluations.

Two entry points share one pass body (``_pass``), as in :mod:`sosl._core._kernel`:
``koil_pass`` for dense rows and dense slots ``buf`` (B, p), ``koil_pass_csr`` for CSR rows
and sparse slots (``buf_ind`` (B, L) int32, ``buf_val`` (B, L), ``buf_nnz`` (B,) int32;
slot j holds ``buf_nnz[j]`` entries at increasing positions ``buf_ind[j, :buf_nnz[j]]``),
whose kernel rows cost O(B (nnz(x_t) + L)) whatever p (the merges of ``_kfun.pxd``). L
must be at least the largest nnz of the rows visited (checked).
"""

from libc.math cimport isfinite

from sosl._core._codes cimport POLICY_RS
from sosl._core._kfun cimport (
    SlotStore,
    SourceRow,
    SourceRows,
    csr_source,
    get_row,
    store_kernel_row,
    store_put,
    store_self_kernel,
)

cdef long long REFRESH = 1024      # same constant as _koil_ref.REFRESH


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
              double eta, double C, Py_ssize_t k_nn, int policy, int kind, double gamma,
              double degree, double coef0, double[::1] work):
    """Run KOIL over ``X[order]``; update the buffers in place; return the round counter.

    Raises FloatingPointError (the arrays are then partly updated) at the first row whose
    k(x_t, x_t) or f_t(x_t) is not finite. ``work`` is scratch space of length at least
    ``2 B + 2 k_nn`` (B = total slots).
    See :func:`sosl._core._koil_ref.koil_pass` for the parameters.
    """
    cdef SourceRows rows
    cdef SlotStore st
    cdef Py_ssize_t B = alpha_mv.shape[0]
    if buf.shape[0] != B or buf.shape[1] != X.shape[1] or X.shape[1] == 0:
        raise ValueError("koil_pass: inconsistent shapes (need buf of shape (B, p), p >= 1)")
    rows.dense = True
    rows.X = &X[0, 0] if X.shape[0] > 0 else NULL
    rows.p = X.shape[1]
    st.dense = True
    st.SV = &buf[0, 0] if B > 0 else NULL
    st.L = 0
    return _pass(&rows, &st, s, order, U, alpha_mv, gram, f_mv, n_buf, n_seen, head,
                 budgets, t0, eta, C, k_nn, policy, kind, gamma, degree, coef0, work)


def koil_pass_csr(const double[::1] data, const int[::1] indices, const int[::1] indptr,
                  const double[::1] s, const Py_ssize_t[::1] order, const double[:, ::1] U,
                  int[:, ::1] buf_ind, double[:, ::1] buf_val, int[::1] buf_nnz,
                  double[::1] alpha_mv, double[:, ::1] gram, double[::1] f_mv,
                  long long[::1] n_buf, long long[::1] n_seen, long long[::1] head,
                  const long long[::1] budgets, long long t0, double eta, double C,
                  Py_ssize_t k_nn, int policy, int kind, double gamma, double degree,
                  double coef0, double[::1] work):
    """KOIL over the CSR rows ``order`` (``data, indices, indptr``, sorted int32 indices)
    into sparse slots (see the module docstring); every other argument as in
    :func:`koil_pass`; it equals the reference :func:`sosl._core._koil_ref.koil_pass` run on
    the rows and slots densified
    (tests/test_koil.py::test_csr_pass_matches_reference_on_densified_rows)."""
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
                 budgets, t0, eta, C, k_nn, policy, kind, gamma, degree, coef0, work)


cdef long long _pass(const SourceRows* rows, SlotStore* buf, const double[::1] s,
                     const Py_ssize_t[::1] order, const double[:, ::1] U,
                     double[::1] alpha_mv, double[:, ::1] gram, double[::1] f_mv,
                     long long[::1] n_buf, long long[::1] n_seen, long long[::1] head,
                     const long long[::1] budgets, long long t0, double eta, double C,
                     Py_ssize_t k_nn, int policy, int kind, double gamma, double degree,
                     double coef0, double[::1] work) except? -1:
    """The pass body shared by the dense and the CSR entry point."""
    cdef SourceRow xr
    cdef Py_ssize_t p = rows.p
    cdef Py_ssize_t m = order.shape[0]
    cdef Py_ssize_t B = alpha_mv.shape[0]
    cdef Py_ssize_t off[2]
    cdef Py_ssize_t r, i, j, l, q, c, o, n_sel, n_viol, pos, best
    cdef long long t = t0
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
