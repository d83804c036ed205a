# cython: language_level=3
"""Typed kernel expansions for prediction: f(x_i) = sum_q alpha_q k(SV_q, x_i).

The inline kernel evaluations are declared in ``_kfun.pxd`` (shared by the kernel passes);
this module adds the prediction loops of the kernel learners: ``kernel_decision`` for
dense rows and support vectors, ``kernel_decision_csr`` for both in CSR form (the merges
of ``_kfun.pxd``; the cost depends on the non-zeros, not on the number of features), and
``kernel_decision_slots`` for CSR rows against support vectors kept in sparse slots (the
learners' own storage, read in place). The NumPy reference is ``kernel_matrix(X, SV) @
alpha`` of :mod:`sosl._core._kfun_ref` on the densified rows, and ``sparse_kernel_row`` of
the same module for one sparse row.
"""

from sosl._core._codes cimport KERNEL_GAUSSIAN
from sosl._core._kfun cimport (KernelSpec, _sparse_finish, kernel_rows, kernel_rows_csr,
                               sosl_exp_scaled, sparse_dot, sparse_sq_dist,
                               weighted_sum)


cdef extern from "_vexp.h" nogil:
    int sosl_vexp_scalar


def set_scalar_path(bint scalar):
    """Take this module's scalar loops (True) or its AVX2 + FMA ones where present (False).

    A test hook for the two code paths of ``_vexp.h``; it affects only the functions of
    this module (``exp_scaled``, ``kernel_decision``), not the learners' passes.
    """
    global sosl_vexp_scalar
    sosl_vexp_scalar = 1 if scalar else 0


def exp_scaled(double[::1] v, double c):
    """v[i] = exp(c v[i]) in place (``_vexp.h``; meant for c v[i] <= 0)."""
    with nogil:
        sosl_exp_scaled(&v[0] if v.shape[0] > 0 else NULL, v.shape[0], c)


def kernel_decision(const double[:, ::1] X, const double[:, ::1] SV, const double[::1] alpha,
                    KernelSpec kern, double[::1] out, double[::1] work):
    """out[i] = sum_q alpha[q] k(SV[q], X[i]) for every row of ``X``.

    ``kern`` is the kernel (``sosl._core._kparams.kernel_spec``); ``work`` is scratch space
    of length at least ``SV.shape[0]``. Cost O(n M p), memory O(M) beyond the arguments (no
    (n, M) Gram block).
    """
    cdef Py_ssize_t n = X.shape[0]
    cdef Py_ssize_t p = X.shape[1]
    cdef Py_ssize_t M = SV.shape[0]
    cdef Py_ssize_t i
    if (SV.shape[1] != p or alpha.shape[0] != M or out.shape[0] != n
            or work.shape[0] < M):
        raise ValueError("kernel_decision: inconsistent shapes (need SV of shape (M, p), "
                         "alpha of length M, out of length n, work of length >= M)")
    if M == 0:
        out[:] = 0.0
        return
    with nogil:
        for i in range(n):
            kernel_rows(&SV[0, 0], M, &X[i, 0], p, kern.kind, kern.gamma, kern.degree,
                        kern.coef0, &work[0])
            out[i] = weighted_sum(&alpha[0], &work[0], M)


def kernel_decision_csr(const double[::1] x_data, const int[::1] x_ind, const int[::1] x_ptr,
                        const double[::1] sv_data, const int[::1] sv_ind,
                        const int[::1] sv_ptr, const double[::1] alpha, KernelSpec kern,
                        double[::1] out, double[::1] work):
    """out[i] = sum_q alpha[q] k(SV[q], X[i]) for CSR rows X and CSR support vectors SV.

    Both matrices come as (data, indices, indptr) with sorted int32 indices in every row
    (canonical CSR). ``work`` is scratch space of length at least ``M``. Cost
    O(sum_i sum_q (nnz(X[i]) + nnz(SV[q]))), memory O(M) beyond the arguments.
    """
    cdef Py_ssize_t n = x_ptr.shape[0] - 1
    cdef Py_ssize_t M = sv_ptr.shape[0] - 1
    cdef Py_ssize_t i, a
    cdef const double* xd = &x_data[0] if x_data.shape[0] > 0 else NULL
    cdef const int* xi = &x_ind[0] if x_ind.shape[0] > 0 else NULL
    cdef const double* sd = &sv_data[0] if sv_data.shape[0] > 0 else NULL
    cdef const int* si = &sv_ind[0] if sv_ind.shape[0] > 0 else NULL
    if (n < 0 or M < 0 or alpha.shape[0] != M or out.shape[0] != n or work.shape[0] < M
            or x_ind.shape[0] != x_data.shape[0] or sv_ind.shape[0] != sv_data.shape[0]
            or x_ptr[n] > x_data.shape[0] or sv_ptr[M] > sv_data.shape[0]):
        raise ValueError("kernel_decision_csr: inconsistent shapes (need indptr arrays of "
                         "length n + 1 and M + 1, alpha of length M, out of length n, work "
                         "of length >= M)")
    if M == 0:
        out[:] = 0.0
        return
    with nogil:
        for i in range(n):
            a = x_ptr[i]
            kernel_rows_csr(&sv_ptr[0], si, sd, M, xi + a, xd + a, x_ptr[i + 1] - a,
                            kern.kind, kern.gamma, kern.degree, kern.coef0, &work[0])
            out[i] = weighted_sum(&alpha[0], &work[0], M)


def kernel_decision_slots(const double[::1] x_data, const int[::1] x_ind, const int[::1] x_ptr,
                          const int[:, ::1] ind, const double[:, ::1] val,
                          const int[::1] nnz, const Py_ssize_t[::1] slots,
                          const double[::1] alpha, KernelSpec kern, double[::1] out,
                          double[::1] work):
    """out[i] = sum_q alpha[q] k(slot slots[q], X[i]) for CSR rows X and sparse slots.

    Slot j holds ``nnz[j]`` entries at ``ind[j, :nnz[j]]`` (sorted), ``val[j, :nnz[j]]``.
    The same operations in the same order as ``kernel_decision_csr`` on the CSR matrix
    whose row q is slot ``slots[q]`` (so the same bits), without building that matrix.
    ``work``: scratch of length at least M = len(slots).
    """
    cdef Py_ssize_t n = x_ptr.shape[0] - 1
    cdef Py_ssize_t M = slots.shape[0]
    cdef Py_ssize_t L = ind.shape[1]
    cdef Py_ssize_t i, q, a, j, xn
    cdef const double* xd = &x_data[0] if x_data.shape[0] > 0 else NULL
    cdef const int* xi = &x_ind[0] if x_ind.shape[0] > 0 else NULL
    if (n < 0 or alpha.shape[0] != M or out.shape[0] != n or work.shape[0] < M
            or x_ind.shape[0] != x_data.shape[0] or x_ptr[n] > x_data.shape[0]
            or val.shape[0] != ind.shape[0] or val.shape[1] != L
            or nnz.shape[0] != ind.shape[0]):
        raise ValueError("kernel_decision_slots: inconsistent shapes")
    for q in range(M):
        j = slots[q]
        if j < 0 or j >= ind.shape[0] or nnz[j] < 0 or nnz[j] > L or L == 0:
            raise ValueError(f"kernel_decision_slots: slot {j} is not a filled slot of the "
                             f"{ind.shape[0]} x {L} storage")
    if M == 0:
        out[:] = 0.0
        return
    with nogil:
        for i in range(n):
            a = x_ptr[i]
            xn = x_ptr[i + 1] - a
            if kern.kind == KERNEL_GAUSSIAN:
                for q in range(M):
                    j = slots[q]
                    work[q] = sparse_sq_dist(xi + a, xd + a, xn, &ind[j, 0], &val[j, 0],
                                             nnz[j])
            else:
                for q in range(M):
                    j = slots[q]
                    work[q] = sparse_dot(xi + a, xd + a, xn, &ind[j, 0], &val[j, 0], nnz[j])
            _sparse_finish(M, kern.kind, kern.gamma, kern.degree, kern.coef0, &work[0])
            out[i] = weighted_sum(&alpha[0], &work[0], M)
