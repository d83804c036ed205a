# cython: language_level=3
"""The row view: one pass body for dense and CSR rows (cimport, not an extension).

A typed pass reads its rows through a ``SourceRows`` (dense (n, p) rows, row i at
``X + i p``, or a CSR matrix: ``data``, sorted int32 ``indices``, ``indptr``), fetches
row x_t once per round (``get_row``, a ``SourceRow``) and works on it through the row
primitives below, which branch once per call on the storage, not per element:

    row_dot(x, p, v)        x.v
    row_sq(x, p)            ||x||^2
    row_axpy(x, p, c, v)    v += c x      (on the row's columns only, for a CSR row)

so that a learner's update equations are written once for both formats. A dense row costs
O(p) per primitive and a CSR row O(nnz(x)). The dense sums run in four interleaved partial
sums (coordinates j = 0, 1, 2, 3 mod 4, added as (s0 + s1) + (s2 + s3), then the tail):
independent chains the processor overlaps, equal to NumPy's sum up to rounding.

Users: the kernel learners (``_kernel``, ``_koil``, ``_polk``, ``_kbudget``, through
:mod:`sosl._core._kfun`, which re-exports the view beside its slot store) and the linear
baselines (``_baselines``). Usage::

    from sosl._core._rows cimport SourceRow, SourceRows, dense_source, csr_source, get_row
"""


cdef struct SourceRows:
    # the input rows: dense (row i at X + i p) or CSR (data, indices, indptr)
    bint dense
    const double* X
    const double* data
    const int* indices
    const int* indptr
    Py_ssize_t p


cdef inline Py_ssize_t csr_source(const double[::1] data, const int[::1] indices,
                                  const int[::1] indptr, const Py_ssize_t[::1] order,
                                  Py_ssize_t r0, Py_ssize_t L, str name,
                                  SourceRows* rows) except -1:
    """Point ``rows`` at CSR arrays after checking the rows ``order[r0:]`` will visit.

    Each visited row must lie in the matrix and, when ``L >= 0``, hold at most ``L``
    stored entries (the width of the slots it will be written to). Returns the largest
    number of stored entries among the visited rows (0 if none). ``name`` starts the
    messages of the ValueError raised otherwise.
    """
    cdef Py_ssize_t n = indptr.shape[0] - 1
    cdef Py_ssize_t r_, i, width, widest = 0
    if n < 0 or indices.shape[0] != data.shape[0] or indptr[n] > data.shape[0]:
        raise ValueError(f"{name}: inconsistent shapes (need indptr of length n + 1 and "
                         "indices and data of equal length)")
    for r_ in range(r0, order.shape[0]):
        i = order[r_]
        if i < 0 or i >= n:
            raise ValueError(f"{name}: order holds a row outside the matrix")
        width = indptr[i + 1] - indptr[i]
        if 0 <= L < width:
            raise ValueError(f"{name}: row {i} has {width} stored entries but the slots "
                             f"hold at most L = {L}")
        if width > widest:
            widest = width
    rows.dense = False
    rows.X = NULL
    rows.data = &data[0] if data.shape[0] > 0 else NULL
    rows.indices = &indices[0] if indices.shape[0] > 0 else NULL
    rows.indptr = &indptr[0]
    rows.p = 0
    return widest


cdef struct SourceRow:
    # the current row x_t: its dense pointer (xn = p), or its sparse entries
    bint dense
    const double* x
    const int* xi
    const double* xv
    Py_ssize_t xn


cdef inline void get_row(const SourceRows* rows, Py_ssize_t i,
                         SourceRow* r) noexcept nogil:
    """Point ``r`` at row i of ``rows``."""
    cdef Py_ssize_t a
    r.dense = rows.dense
    if rows.dense:
        r.x = rows.X + i * rows.p
        r.xi = NULL
        r.xv = NULL
        r.xn = rows.p
    else:
        r.x = NULL
        a = rows.indptr[i]
        r.xi = rows.indices + a
        r.xv = rows.data + a
        r.xn = rows.indptr[i + 1] - a


cdef inline void dense_source(const double[:, ::1] X, SourceRows* rows) noexcept:
    """Point ``rows`` at the dense (n, p) rows of ``X`` (no check needed: any row index
    in [0, n) is a row)."""
    rows.dense = True
    rows.X = &X[0, 0] if X.shape[0] > 0 and X.shape[1] > 0 else NULL
    rows.data = NULL
    rows.indices = NULL
    rows.indptr = NULL
    rows.p = X.shape[1]


# -- row primitives: one branch on the storage per call -------------------------------------

cdef inline double dense_dot(const double* a, const double* b, Py_ssize_t p) noexcept nogil:
    """a.b of two dense vectors in four interleaved partial sums."""
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


cdef inline double row_dot(const SourceRow* r, Py_ssize_t p, const double* v) noexcept nogil:
    """x.v for the current row x and a dense p-vector v."""
    cdef Py_ssize_t k
    cdef double acc = 0.0
    if r.dense:
        return dense_dot(v, r.x, p)
    for k in range(r.xn):
        acc += v[r.xi[k]] * r.xv[k]
    return acc


cdef inline double row_sq(const SourceRow* r, Py_ssize_t p) noexcept nogil:
    """||x||^2 for the current row x."""
    cdef Py_ssize_t k
    cdef double acc = 0.0
    if r.dense:
        return dense_dot(r.x, r.x, p)
    for k in range(r.xn):
        acc += r.xv[k] * r.xv[k]
    return acc


cdef inline void row_axpy(const SourceRow* r, Py_ssize_t p, double c,
                          double* v) noexcept nogil:
    """v += c x on the row's columns (all p of a dense row)."""
    cdef Py_ssize_t j
    if r.dense:
        for j in range(p):
            v[j] += c * r.x[j]
    else:
        for j in range(r.xn):
            v[r.xi[j]] += c * r.xv[j]
