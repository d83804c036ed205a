# cython: language_level=3
"""Typed pass of OKAUC-M with ``budget_policy="komp"`` (comparison buffers + KOMP).

Same rounds, same order of operations and the same compressions as the NumPy reference
:func:`sosl._core._kbudget_ref.komp_policy_pass` (see it for the symbols and the round).
The rounds run in a ``nogil`` loop on pool arrays allocated with room for the rounds of a
chunk (the pool grows by one vector per round); after each round t = 0 mod ``period`` the
loop returns and the compression runs with the typed KOMP core
(:func:`sosl._core._komp_prune.komp_step`, O(M^3) for M weighted pool vectors, which is
NumPy indexing around :func:`sosl._core._komp.komp_core`). Cost per round O(M p + M |S_t|).

Two entry points share one round loop (``play``), which reads its rows and keeps the pool
through the ``SourceRows`` / ``SlotStore`` helpers of :mod:`sosl._core._kfun`:
``komp_policy_pass`` for dense rows and a dense pool ``Z`` (M, p), and
``komp_policy_pass_csr`` for CSR rows and a pool of sparse slots (``Z_ind`` (M, L) int32,
``Z_val`` (M, L), ``Z_nnz`` (M,) int32; slot q holds ``Z_nnz[q]`` entries at increasing
positions), whose kernel rows come from merges of sorted index lists: O(M (nnz(x_t) + L)
+ M |S_t|) per round whatever p.
"""

import numpy as np

from sosl._core._kfun cimport (
    KernelSpec,
    SlotStore,
    SourceRow,
    SourceRows,
    StepSpec,
    csr_source,
    get_row,
    store_kernel_row,
    store_put,
    store_self_kernel,
)
from sosl._core._rows cimport dense_source
from sosl._core._losses cimport loss_grad, loss_scale
from sosl._core._moments cimport round_prologue

from sosl._core._komp_prune import komp_step

#: rounds per allocation of the pool arrays (each chunk copies the pool once)
CHUNK = 256


cdef Py_ssize_t play(const SourceRows* rows, SlotStore* Z, const double[::1] s,
                     const Py_ssize_t[::1] order, Py_ssize_t r, Py_ssize_t r_end, double[:, ::1] G,
                     double[::1] beta, double[::1] f, long long[::1] buf, long long[::1] lab,
                     long long[::1] age, Py_ssize_t* n_io, const long long[::1] cap,
                     long long* t_io, double* acc_io, const StepSpec* step,
                     const KernelSpec* kern, double epsilon, long long period, double* kx,
                     double* d) noexcept nogil:
    """Rounds ``order[r:r_end]``, stopping after a round t = 0 mod period; returns the next r."""
    cdef Py_ssize_t n = n_io[0]
    cdef Py_ssize_t p = rows.p
    cdef Py_ssize_t i, q, l, oldest
    cdef long long t = t_io[0]
    cdef long long n_own
    cdef int own, opp
    cdef SourceRow x
    cdef double lam = step.lam, eta = step.eta
    cdef int schedule = step.schedule, loss = step.loss
    cdef int kind = kern.kind
    cdef double gamma = kern.gamma, degree = kern.degree, coef0 = kern.coef0
    cdef double y, eta_t, kxx, fx, decay, mu, s2, b, d_mu, d_s2, a_new, acc, N
    cdef double scale = loss_scale(loss)
    while r < r_end:
        i = order[r]
        r += 1
        t += 1
        get_row(rows, i, &x)
        y = s[i]
        eta_t = round_prologue(y, t, schedule, eta, lam, &own, &opp)
        fx = 0.0
        store_kernel_row(Z, &x, 0, n, p, kind, gamma, degree, coef0, kx)
        for q in range(n):
            fx += beta[q] * kx[q]
        kxx = store_self_kernel(Z, &x, p, kind, gamma, degree, coef0)
        decay = 1.0 - lam * eta_t
        a_new = 0.0
        N = 0.0
        mu = 0.0
        for q in range(n):
            d[q] = 0.0
            if buf[q] == opp:
                N += 1.0
                mu += f[q]
        if N > 0:
            mu /= N
            s2 = 0.0
            for q in range(n):
                if buf[q] == opp:
                    s2 += (f[q] - mu) * (f[q] - mu)
            s2 /= N
            b = 1.0 - y * (fx - mu)
            loss_grad(loss, 1.0 - b, s2, &d_mu, &d_s2)
            d_mu = scale * d_mu
            d_s2 = scale * d_s2
            a_new = -eta_t * y * d_mu
            for q in range(n):
                if buf[q] == opp:
                    d[q] = (eta_t / N) * (y * d_mu - 2.0 * d_s2 * (f[q] - mu))
        # eq. (22) on the pool and at x_t (G symmetric: row l holds G[q, l])
        for l in range(n):
            acc = 0.0
            for q in range(n):
                if buf[q] == opp:
                    acc += d[q] * G[l, q]
            f[l] = decay * f[l] + acc + a_new * kx[l]
        acc = 0.0
        for q in range(n):
            if buf[q] == opp:
                acc += d[q] * kx[q]
        fx = decay * fx + acc + a_new * kxx
        for q in range(n):
            beta[q] = decay * beta[q]
            if buf[q] == opp:
                beta[q] += d[q]
        # x_t joins the pool and its comparison buffer
        store_put(Z, &x, n, p)
        for l in range(n):
            G[n, l] = kx[l]
            G[l, n] = kx[l]
        G[n, n] = kxx
        beta[n] = a_new
        f[n] = fx
        buf[n] = own
        lab[n] = own
        age[n] = t
        n += 1
        n_own = 0
        oldest = -1
        for q in range(n):
            if buf[q] == own:
                n_own += 1
                if oldest < 0 or age[q] < age[oldest]:
                    oldest = q
        if n_own > cap[own]:
            buf[oldest] = -1
        acc_io[0] += epsilon * eta_t
        if t % period == 0:
            break
    n_io[0] = n
    t_io[0] = t
    return r


def komp_policy_pass(const double[:, ::1] X, const double[::1] s, const Py_ssize_t[::1] order,
                     Z, G, beta, f, buf, lab, age, const long long[::1] cap, long long t0,
                     double acc, StepSpec step, KernelSpec kern, double epsilon,
                     long long period):
    """Run the pass over ``X[order]``; returns ``(Z, G, beta, f, buf, lab, age, t, acc)``.

    Same parameters as :func:`sosl._core._kbudget_ref.komp_policy_pass`; the pool arrays
    passed in are not modified (new arrays are returned).
    """
    cdef SourceRows rows
    if Z.shape[1] != X.shape[1] or X.shape[1] == 0:
        raise ValueError("komp_policy_pass: inconsistent shapes (need Z of shape (M, p), "
                         "p >= 1)")
    dense_source(X, &rows)
    out = _pass(&rows, s, order, (np.ascontiguousarray(Z, dtype=np.float64),), G, beta, f,
                buf, lab, age, cap, t0, acc, &step, &kern, epsilon, period)
    return out[0][0], *out[1:]


def komp_policy_pass_csr(const double[::1] data, const int[::1] indices, const int[::1] indptr,
                         const double[::1] s, const Py_ssize_t[::1] order, Z_ind, Z_val,
                         Z_nnz, G, beta, f, buf, lab, age, const long long[::1] cap,
                         long long t0, double acc, StepSpec step, KernelSpec kern,
                         double epsilon, long long period):
    """:func:`komp_policy_pass` on the CSR rows ``(data, indices, indptr)`` (sorted int32
    indices) with a pool of sparse slots; returns ``(Z_ind, Z_val, Z_nnz, G, beta, f, buf,
    lab, age, t, acc)``. The slots are widened (copied) to the largest nnz of the rows
    visited. It equals the reference run on the rows and pool densified
    (tests/_core/test_okauc.py::test_komp_csr_pass_equals_reference_on_densified_rows)."""
    cdef SourceRows rows
    cdef Py_ssize_t n = indptr.shape[0] - 1
    cdef Py_ssize_t widest = csr_source(data, indices, indptr, order, 0, -1,
                                        "komp_policy_pass_csr", &rows)
    cdef Py_ssize_t L
    if (s.shape[0] < n or Z_ind.ndim != 2 or Z_val.shape != Z_ind.shape
            or Z_nnz.shape[0] != Z_ind.shape[0]):
        raise ValueError("komp_policy_pass_csr: inconsistent shapes (need Z_ind and Z_val of "
                         "shape (M, L), Z_nnz of length M, a label for every row)")
    L = max(1, Z_ind.shape[1], widest)
    ind = np.zeros((Z_ind.shape[0], L), dtype=np.int32)
    val = np.zeros((Z_ind.shape[0], L))
    ind[:, :Z_ind.shape[1]] = Z_ind
    val[:, :Z_ind.shape[1]] = Z_val
    out = _pass(&rows, s, order, (ind, val, np.ascontiguousarray(Z_nnz, dtype=np.int32)), G,
                beta, f, buf, lab, age, cap, t0, acc, &step, &kern, epsilon, period)
    return (*out[0], *out[1:])


cdef tuple _pass(const SourceRows* rows, const double[::1] s, const Py_ssize_t[::1] order,
                 tuple Z, G, beta, f, buf, lab, age, const long long[::1] cap, long long t0,
                 double acc, const StepSpec* step, const KernelSpec* kern, double epsilon,
                 long long period):
    """The chunk loop of both entry points; the pool ``Z`` is a tuple: ``(Z,)`` dense or
    ``(ind, val, nnz)`` sparse slots. Returns ``(Z, G, beta, f, buf, lab, age, t, acc)``
    with ``Z`` a tuple of the same kind. A pool whose Gram matrix or scores are not finite
    at a compression (an overflowed kernel) is returned as it is, before the remaining
    rounds: the estimator then reports the overflow."""
    cdef Py_ssize_t m = order.shape[0]
    cdef Py_ssize_t r = 0
    cdef Py_ssize_t r_end, n, P
    cdef long long t = t0
    cdef double[:, ::1] Gm, Zd, Zv
    cdef int[:, ::1] Zi
    cdef int[::1] Zn
    cdef double[::1] bm, fm, work
    cdef long long[::1] bufm, labm, agem
    cdef double a = acc
    cdef SlotStore st
    cdef bint dense = len(Z) == 1
    while r < m:
        n = Z[0].shape[0]
        r_end = min(m, r + CHUNK)
        P = n + (r_end - r)
        Zb = tuple(np.zeros((P,) + z.shape[1:], dtype=z.dtype) for z in Z)
        for zb, z in zip(Zb, Z):
            zb[:n] = z
        Gb = np.zeros((P, P))
        bb = np.zeros(P)
        fb = np.zeros(P)
        bufb = np.zeros(P, dtype=np.int64)
        labb = np.zeros(P, dtype=np.int64)
        ageb = np.zeros(P, dtype=np.int64)
        Gb[:n, :n] = G
        bb[:n] = beta
        fb[:n] = f
        bufb[:n] = buf
        labb[:n] = lab
        ageb[:n] = age
        st.dense = dense
        if dense:
            Zd = Zb[0]
            st.SV = &Zd[0, 0]
            st.L = 0
        else:
            Zi, Zv, Zn = Zb
            st.ind = &Zi[0, 0]
            st.val = &Zv[0, 0]
            st.nnz = &Zn[0]
            st.L = Zi.shape[1]
        Gm, bm, fm, bufm, labm, agem = Gb, bb, fb, bufb, labb, ageb
        work = np.zeros(2 * P + 2)
        while r < r_end:
            with nogil:
                r = play(rows, &st, s, order, r, r_end, Gm, bm, fm, bufm, labm, agem, &n, cap,
                         &t, &a, step, kern, epsilon, period, &work[0], &work[P + 1])
            Z = tuple(zb[:n] for zb in Zb)
            G, beta, f = Gb[:n, :n], bb[:n], fb[:n]
            buf, lab, age = bufb[:n], labb[:n], ageb[:n]
            if t % period == 0:
                if not (np.isfinite(G).all() and np.isfinite(f).all()):
                    # an overflowed kernel: no compression of a non-finite pool; the
                    # caller finds the non-finite values and raises its own error
                    return Z, G, beta, f, buf, lab, age, t, a
                Zk, G, beta, f, buf, lab, age, a = komp_step(
                    Z[0] if dense else tuple(z.copy() for z in Z),
                    np.ascontiguousarray(G), beta.copy(), f.copy(), buf.copy(), lab.copy(),
                    age.copy(), a)
                Z = (Zk,) if dense else tuple(Zk)
                break
        Z = tuple(np.ascontiguousarray(z) for z in Z)
        G, beta, f = (np.ascontiguousarray(G), np.ascontiguousarray(beta),
                      np.ascontiguousarray(f))
        buf, lab, age = (np.ascontiguousarray(buf), np.ascontiguousarray(lab),
                         np.ascontiguousarray(age))
    return Z, G, beta, f, buf, lab, age, t, a
