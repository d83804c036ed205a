# cython: language_level=3
"""Shared inline kernel evaluation for the kernel learners (cimport, not an extension).

The kernel codes are the ``Kernel`` enum of :mod:`sosl._core._codes`::

    KERNEL_LINEAR     k(a, b) = a.b
    KERNEL_GAUSSIAN   k(a, b) = exp(-gamma ||a - b||^2)      (gamma = 1/sigma^2 of the paper)
    KERNEL_POLY       k(a, b) = (gamma a.b + coef0)^degree

The NumPy twin, with the same arithmetic, is :mod:`sosl._core._kfun_ref`. Usage::

    from sosl._core._kfun cimport kernel_eval, kernel_rows

``kernel_eval`` gives one value (libm's exp); ``kernel_rows`` a whole kernel row against
stored vectors: for the Gaussian kernel it first writes the M squared distances and then
takes their exponentials in one vectorised sweep (``_vexp.h``: AVX2 + FMA when the
processor has them; relative difference from libm's exp below 2^-52).

Sparse rows (sorted int32 index lists, as canonical CSR gives them) have their own
helpers: ``sparse_sq_dist`` and ``sparse_dot`` merge two index lists in
O(nnz(a) + nnz(b)); ``kernel_rows_slots`` (slot store of the sparse kernel pass) and
``kernel_rows_csr`` (CSR support vectors of the sparse expansion) evaluate a kernel row
from them, the Gaussian rows through the same ``sosl_exp_scaled`` sweep.
"""

from libc.math cimport exp, pow

from sosl._core._codes cimport KERNEL_GAUSSIAN, KERNEL_POLY
# the row view (re-exported: the kernel passes cimport it from here or from _rows)
from sosl._core._rows cimport SourceRow, SourceRows, csr_source, get_row


# -- parameter bundles of the kernel passes -------------------------------------------------
# Built once per call from Python by ``sosl._core._kparams.kernel_spec`` / ``step_spec``
# (plain dicts with these keys, converted by Cython at the call); the NumPy references
# take the same dicts.

cdef struct KernelSpec:
    # the kernel: a ``Kernel`` code and its three parameters (unused ones are ignored)
    int kind
    double gamma
    double degree
    double coef0


cdef struct StepSpec:
    # the step of a round: eta (0 with the 1/(lam t) schedule), lam, the schedule code
    # (``Schedule`` or ``PolkSchedule``) and the loss code (``Loss`` or ``PolkLoss``)
    double eta
    double lam
    int schedule
    int loss


cdef extern from "_vexp.h" nogil:
    void sosl_exp_scaled(double* v, Py_ssize_t n, double c)
    void sosl_sqdist_rows(const double* A, Py_ssize_t n, const double* x, Py_ssize_t p,
                          double* out)


cdef inline double sq_dist(const double* a, const double* b, Py_ssize_t p) noexcept nogil:
    """||a - b||^2 in four interleaved partial sums (see ``kernel_eval``)."""
    cdef Py_ssize_t j
    cdef Py_ssize_t p4 = p - p % 4
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    cdef double d0, d1, d2, d3, acc
    for j in range(0, p4, 4):
        d0 = a[j] - b[j]
        d1 = a[j + 1] - b[j + 1]
        d2 = a[j + 2] - b[j + 2]
        d3 = a[j + 3] - b[j + 3]
        s0 += d0 * d0
        s1 += d1 * d1
        s2 += d2 * d2
        s3 += d3 * d3
    acc = (s0 + s1) + (s2 + s3)
    for j in range(p4, p):
        d0 = a[j] - b[j]
        acc += d0 * d0
    return acc


cdef inline double kernel_eval(const double* a, const double* b, Py_ssize_t p, int kind,
                               double gamma, double degree, double coef0) noexcept nogil:
    """k(a, b) for vectors of length ``p``; ``kind`` is a ``Kernel`` code.

    The sum over the p coordinates runs in four interleaved partial sums (coordinates
    j = 0, 1, 2, 3 mod 4), added as (s0 + s1) + (s2 + s3) and then the tail: independent
    chains the processor overlaps, where one running sum waits for each addition.
    """
    cdef Py_ssize_t j
    cdef Py_ssize_t p4 = p - p % 4
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    cdef double acc
    if kind == KERNEL_GAUSSIAN:
        return exp(-gamma * sq_dist(a, b, p))
    for j in range(0, p4, 4):
        s0 += a[j] * b[j]
        s1 += a[j + 1] * b[j + 1]
        s2 += a[j + 2] * b[j + 2]
        s3 += a[j + 3] * b[j + 3]
    acc = (s0 + s1) + (s2 + s3)
    for j in range(p4, p):
        acc += a[j] * b[j]
    if kind == KERNEL_POLY:
        return pow(gamma * acc + coef0, degree)
    return acc


cdef inline double weighted_sum(const double* alpha, const double* k,
                                Py_ssize_t M) noexcept nogil:
    """sum_q alpha[q] k[q], added up in slot order (one expansion value: the
    prediction loops and the kernel learners' one-row pre-scores)."""
    cdef Py_ssize_t q
    cdef double acc = 0.0
    for q in range(M):
        acc += alpha[q] * k[q]
    return acc


cdef inline void kernel_rows(const double* A, Py_ssize_t n, const double* x, Py_ssize_t p,
                             int kind, double gamma, double degree, double coef0,
                             double* out) noexcept nogil:
    """out[q] = k(A[q], x) for the ``n`` consecutive rows of length ``p`` starting at ``A``.

    Gaussian: the squared distances first (four rows at a time with AVX2 + FMA when the
    processor has them), then one vectorised exponential sweep; the other kernels call
    ``kernel_eval`` row by row.
    """
    cdef Py_ssize_t q
    if n <= 0:
        return
    if kind == KERNEL_GAUSSIAN:
        sosl_sqdist_rows(A, n, x, p, out)
        sosl_exp_scaled(out, n, -gamma)
        return
    for q in range(n):
        out[q] = kernel_eval(&A[q * p], x, p, kind, gamma, degree, coef0)


# -- sparse rows: sorted index lists, two-pointer merges ------------------------------------
# A sparse vector is (ind, val, n): n stored entries at the strictly increasing int32
# positions ind[0 .. n-1] (canonical CSR rows), every other coordinate zero. The merges run
# in O(n_a + n_b) and never touch the other coordinates, so their cost does not depend on p.

cdef inline double sparse_sq_dist(const int* ai, const double* av, Py_ssize_t an,
                                  const int* bi, const double* bv,
                                  Py_ssize_t bn) noexcept nogil:
    """||a - b||^2 of two sparse vectors: the sum over the union of their supports of
    (a_j - b_j)^2 (the difference form, without the cancellation of
    ||a||^2 + ||b||^2 - 2 a.b for nearby points), in one merge of the sorted indices."""
    cdef Py_ssize_t i = 0, j = 0
    cdef double acc = 0.0, d
    while i < an and j < bn:
        if ai[i] == bi[j]:
            d = av[i] - bv[j]
            i += 1
            j += 1
        elif ai[i] < bi[j]:
            d = av[i]
            i += 1
        else:
            d = bv[j]
            j += 1
        acc += d * d
    while i < an:
        acc += av[i] * av[i]
        i += 1
    while j < bn:
        acc += bv[j] * bv[j]
        j += 1
    return acc


cdef inline double sparse_dot(const int* ai, const double* av, Py_ssize_t an,
                              const int* bi, const double* bv, Py_ssize_t bn) noexcept nogil:
    """a.b of two sparse vectors: the sum over the intersection of their supports."""
    cdef Py_ssize_t i = 0, j = 0
    cdef double acc = 0.0
    while i < an and j < bn:
        if ai[i] == bi[j]:
            acc += av[i] * bv[j]
            i += 1
            j += 1
        elif ai[i] < bi[j]:
            i += 1
        else:
            j += 1
    return acc


cdef inline double sparse_kernel_eval(const int* ai, const double* av, Py_ssize_t an,
                                      const int* bi, const double* bv, Py_ssize_t bn,
                                      int kind, double gamma, double degree,
                                      double coef0) noexcept nogil:
    """k(a, b) of two sparse vectors (libm's exp); the sparse twin of ``kernel_eval``."""
    if kind == KERNEL_GAUSSIAN:
        return exp(-gamma * sparse_sq_dist(ai, av, an, bi, bv, bn))
    cdef double acc = sparse_dot(ai, av, an, bi, bv, bn)
    if kind == KERNEL_POLY:
        return pow(gamma * acc + coef0, degree)
    return acc


cdef inline void _sparse_finish(Py_ssize_t n, int kind, double gamma, double degree,
                                double coef0, double* out) noexcept nogil:
    """Turn the n merged sums in ``out`` into kernel values (Gaussian: one exp sweep)."""
    cdef Py_ssize_t q
    if kind == KERNEL_GAUSSIAN:
        sosl_exp_scaled(out, n, -gamma)
    elif kind == KERNEL_POLY:
        for q in range(n):
            out[q] = pow(gamma * out[q] + coef0, degree)


cdef inline void kernel_rows_slots(const int* ind, const double* val, const int* nnz,
                                   Py_ssize_t L, Py_ssize_t n, const int* xi,
                                   const double* xv, Py_ssize_t xn, int kind, double gamma,
                                   double degree, double coef0, double* out) noexcept nogil:
    """out[q] = k(slot q, x) for ``n`` sparse slots of width ``L`` and a sparse row x.

    Slot q holds ``nnz[q]`` entries at ``ind[q L ..]``, ``val[q L ..]``. Gaussian: the
    squared distances by ``sparse_sq_dist``, then one vectorised exponential sweep
    (``_vexp.h``), as ``kernel_rows``; linear and poly: ``sparse_dot``. O(n (xn + L)).
    """
    cdef Py_ssize_t q
    if n <= 0:
        return
    if kind == KERNEL_GAUSSIAN:
        for q in range(n):
            out[q] = sparse_sq_dist(xi, xv, xn, &ind[q * L], &val[q * L], nnz[q])
    else:
        for q in range(n):
            out[q] = sparse_dot(xi, xv, xn, &ind[q * L], &val[q * L], nnz[q])
    _sparse_finish(n, kind, gamma, degree, coef0, out)


cdef inline void kernel_rows_csr(const int* indptr, const int* ind, const double* val,
                                 Py_ssize_t n, const int* xi, const double* xv,
                                 Py_ssize_t xn, int kind, double gamma, double degree,
                                 double coef0, double* out) noexcept nogil:
    """out[q] = k(A[q], x) for the ``n`` rows of a CSR matrix A (``indptr``, ``ind``,
    ``val``) and a sparse row x; the CSR form of ``kernel_rows_slots``."""
    cdef Py_ssize_t q, a
    if n <= 0:
        return
    if kind == KERNEL_GAUSSIAN:
        for q in range(n):
            a = indptr[q]
            out[q] = sparse_sq_dist(xi, xv, xn, &ind[a], &val[a], indptr[q + 1] - a)
    else:
        for q in range(n):
            a = indptr[q]
            out[q] = sparse_dot(xi, xv, xn, &ind[a], &val[a], indptr[q + 1] - a)
    _sparse_finish(n, kind, gamma, degree, coef0, out)


# -- one pass body for dense and CSR rows -------------------------------------------------
# The kernel passes read their rows through ``SourceRows`` (``_rows.pxd``) and keep
# their support vectors in a ``SlotStore`` (dense (M, p) slots, or sparse slots of width L:
# slot q holds nnz[q] entries at ind + q L, val + q L, at increasing positions). Dense rows
# go with dense slots, CSR rows with sparse slots. Each round fetches x_t once
# (``get_row``); the per-round steps below branch once on the storage, not per element.

cdef struct SlotStore:
    # the support-vector slots: dense (slot q at SV + q p) or sparse (see above)
    bint dense
    double* SV
    int* ind
    double* val
    int* nnz
    Py_ssize_t L


cdef inline void store_kernel_row(const SlotStore* st, const SourceRow* r, Py_ssize_t first,
                                  Py_ssize_t n, Py_ssize_t p, int kind, double gamma,
                                  double degree, double coef0, double* out) noexcept nogil:
    """out[q] = k(slot first + q, x_t) for q < n (``kernel_rows`` or ``kernel_rows_slots``)."""
    if n <= 0:
        return
    if st.dense:
        kernel_rows(st.SV + first * p, n, r.x, p, kind, gamma, degree, coef0, out)
    else:
        kernel_rows_slots(st.ind + first * st.L, st.val + first * st.L, st.nnz + first,
                          st.L, n, r.xi, r.xv, r.xn, kind, gamma, degree, coef0, out)


cdef inline double store_self_kernel(const SlotStore* st, const SourceRow* r, Py_ssize_t p,
                                     int kind, double gamma, double degree,
                                     double coef0) noexcept nogil:
    """k(x_t, x_t)."""
    if st.dense:
        return kernel_eval(r.x, r.x, p, kind, gamma, degree, coef0)
    return sparse_kernel_eval(r.xi, r.xv, r.xn, r.xi, r.xv, r.xn, kind, gamma, degree, coef0)


cdef inline void store_put(SlotStore* st, const SourceRow* r, Py_ssize_t slot,
                           Py_ssize_t p) noexcept nogil:
    """Write x_t into ``slot``."""
    cdef Py_ssize_t j
    cdef Py_ssize_t off
    if st.dense:
        off = slot * p
        for j in range(p):
            st.SV[off + j] = r.x[j]
    else:
        off = slot * st.L
        for j in range(r.xn):
            st.ind[off + j] = r.xi[j]
            st.val[off + j] = r.xv[j]
        st.nnz[slot] = <int> r.xn


cdef inline void store_move(SlotStore* st, Py_ssize_t src, Py_ssize_t dst,
                            Py_ssize_t p) noexcept nogil:
    """Copy slot ``src`` into slot ``dst`` (compaction of a dictionary to its kept atoms;
    with dst <= src the copy reads nothing it has already overwritten)."""
    cdef Py_ssize_t j, a, b
    if src == dst:
        return
    if st.dense:
        a = src * p
        b = dst * p
        for j in range(p):
            st.SV[b + j] = st.SV[a + j]
    else:
        a = src * st.L
        b = dst * st.L
        for j in range(st.nnz[src]):
            st.ind[b + j] = st.ind[a + j]
            st.val[b + j] = st.val[a + j]
        st.nnz[dst] = st.nnz[src]
