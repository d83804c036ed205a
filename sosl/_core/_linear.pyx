# cython: language_level=3
"""Typed kernel of the linear second-order learners (Algorithm 1, eqs. 12-18).

One ``nogil`` loop over the samples in a given order; no validation, no allocation of
results. The NumPy reference, one line per equation, is :mod:`sosl._core._linear_ref`
(see it for the symbol table and conventions); the loss is ``_losses.pxd``'s and the round
prologue ``_moments.pxd``'s. The two agree to ~1e-12 on the same sample order.

How this kernel differs from the reference (same mathematics, cheaper arithmetic):

* **Scaled scatter instead of covariance.** Class k keeps ``C[k]`` with
  ``Sigma_k = scale[k] * C[k] / W[k]``, where ``W`` is the (forgetting-weighted) count.
  A moment update is then a rank-one *addition* ``C += (c / scale) d d'``, with
  ``d = x - xbar_old`` and ``c = beta W_old / W_new`` (``(N-1)/N`` without forgetting),
  instead of the covariance form, which rescales every entry by 1/N each round. The decay
  ``beta`` of forgetting goes into the scalar ``scale`` (``scale *= beta``), renormalised
  into ``C`` when it falls below 1e-150, so forgetting costs O(1) per round too.
* **No unscaled products.** ``Sigma w`` is formed as ``C u`` with ``u = (scale / W) w``,
  never as ``(scale / W) (C w)``: under forgetting ``C`` is up to 1e150 times ``Sigma W``
  (``scale`` falls to 1e-150 before it is folded back), so ``C w`` could overflow where
  ``Sigma w`` is finite. The no-copy argument of ``sosl.linear`` bounds ``Sigma w``.
* **Upper triangle.** Only ``C[k, j, l]`` for ``l >= j`` is guaranteed up to date (the
  own-loop path keeps the *padded* upper triangle, row j from column 4 floor(j/4) on, so
  also the lower halves of the 4 x 4 diagonal blocks; the BLAS path only the triangle);
  read the matrix through the estimator's ``covariances_``.
* **Batched rank-one terms.** A class's matrix is read only when an instance of the other
  class arrives, so its rank-one terms are collected (up to ``kmax`` of them) and applied
  together when the matrix is read (own loops: in the same sweep as the product; BLAS: in
  the round before, since the pass sees the next label), when the buffer is full, or at
  the end of the pass. Under imbalance the majority class's updates come in long runs.
* **Two paths by dimension.** For ``p < blas_min_p`` the kernel's own loops
  (``_simd.h``) do the work on the padded upper triangle: one sweep per round over the
  matrix being read applies its pending terms and forms ``C u`` by symmetry (each entry
  read and written once; p = 20: 60% of the entries of the whole matrix), with, for each
  entry, the same operations in the same order as one rank-one update after the other
  (so batching gives the same bits as immediate updates, which ``kmax = 0`` selects; for
  p not a multiple of four the terms go through the rank-k loop first, see ``_simd.h``),
  and the O(p) loops of a round fused (margin; mean update with the row's max |x| and
  finiteness; gradient step). For p < 32 the sweep keeps the column sums of ``C u`` in
  registers and forms ``w' C u`` as they complete, and it has copies for each constant
  p and, for p a multiple of four, for one to four pending terms. They are compiled for
  the build's baseline and, where GCC can dispatch at run time, for x86-64-v3 (AVX2 with
  FMA) and x86-64-v4 (AVX-512: the same four-wide code with 32 vector registers, fewer
  spills); sums over p use four interleaved partial sums. For larger ``p`` ``C u`` is
  BLAS ``dsymv`` and the pending terms go through one rank-k BLAS ``dsyrk`` (level 3);
  merging them is exact in exact arithmetic (the same rank-one terms, summed in another
  order).
"""

import numpy as np

cimport numpy as cnp
from cpython.dict cimport PyDict_GetItem
from cpython.object cimport PyObject
from libc.float cimport DBL_MAX
from libc.math cimport fabs, sqrt
from libc.string cimport memcpy
from scipy.linalg.cython_blas cimport ddot, dsymv, dsyrk

from sosl._core._calibration cimport platt_step
from sosl._core._codes cimport STEP_CONSTANT
from sosl._core._lock cimport ModelLock, reader_may_pass
from sosl._core._losses cimport curvature_bound, loss_grad
from sosl._core._moments cimport round_prologue

cnp.import_array()

cdef double RESCALE_BELOW = 1e-150
# linear_pass and Stepper.batch play their own-loop rounds of weight one, for p a multiple
# of four below 32, in one C loop (sosl_small_pass in _simd.h, every loop of a round inlined
# for the constant p: the same bits as play_round); the tests switch it off to compare the
# two (set_inlined_pass)
cdef bint INLINED_PASS = True


def set_inlined_pass(bint on):
    """Whether ``linear_pass`` and ``Stepper.batch`` may take the inlined own-loop pass
    (tests compare it with the round loop); returns the previous setting."""
    global INLINED_PASS
    cdef bint old = INLINED_PASS
    INLINED_PASS = on
    return old


cdef enum:
    SMALL_KMAX = 64       # most pending rank-one terms per class on the path of own loops


cdef inline void flush(double* C, double* V, int* k, int p) noexcept nogil:
    """C += V' V for the k pending rows of V (row-major k x p): one BLAS rank-k update."""
    cdef char uplo = b'L'         # the row-major upper triangle is BLAS's lower one
    cdef char trans = b'N'
    cdef double one = 1.0
    if k[0] == 0:
        return
    dsyrk(&uplo, &trans, &p, k, &one, V, &p, &one, C, &p)
    k[0] = 0


cdef inline void rescale(double* C, double* scale, Py_ssize_t p) noexcept nogil:
    """Fold ``scale`` into C (scale -> 1); the whole matrix, stale lower triangle included."""
    cdef Py_ssize_t j
    cdef double f = scale[0]
    for j in range(p * p):
        C[j] *= f
    scale[0] = 1.0


cdef extern from "_simd.h" nogil:
    double margin "sosl_margin" (const double* x, const double* xbar, const double* w,
                                 double y, double* a, Py_ssize_t p)
    double small_symv "sosl_small_symv" (double* C, const double* V, const double* f,
                                          Py_ssize_t k, const double* w, double alpha,
                                          double* u, double* Sw, Py_ssize_t p)
    void small_rank_one "sosl_small_rank_one" (double* C, const double* d, double f,
                                                Py_ssize_t p)
    void small_rank_k "sosl_small_rank_k" (double* C, const double* V, const double* f,
                                            Py_ssize_t k, Py_ssize_t p)
    void prefetch "sosl_prefetch" (const double* ptr, Py_ssize_t n)
    double mean_update "sosl_mean_update" (const double* x, double* xbar, double* d,
                                           double inv_W, Py_ssize_t p)
    void gradient_step "sosl_step" (double* w, const double* a, const double* Cw, double eta,
                                    double lam, double g_a, double g_c, Py_ssize_t p)
    void shrink "sosl_shrink" (double* w, double eta, double lam, Py_ssize_t p)
    double abs_max "sosl_abs_max" (const double* x, Py_ssize_t n)
    double small_dot "sosl_dot" (const double* u, const double* v, Py_ssize_t p)
    Py_ssize_t small_pass "sosl_small_pass" (
        const double* X, const double* s, const Py_ssize_t* order, Py_ssize_t n,
        long long* t_io, double* w, double* xbar, double* C, double* scale, double* W,
        long long* N, double* a, double* Sw, double* d, double* V0, double* V1, double* f,
        Py_ssize_t fstride, int* pending, Py_ssize_t kmax, double lam, double eta,
        int constant, double (*grad)(int, double, double, double*, double*) noexcept nogil,
        int loss, double beta, const double* pre, const double* b_old, double half_off,
        double* calib, int track, double* R_max, Py_ssize_t p)
    Py_ssize_t signs_i64 "sosl_signs_i64" (const cnp.int64_t* y, Py_ssize_t n,
                                           cnp.int64_t lo, cnp.int64_t hi, double* out)
    Py_ssize_t signs_f64 "sosl_signs_f64" (const double* y, Py_ssize_t n, double lo,
                                           double hi, double* out)


cdef struct Model:
    # pointers into the estimator's arrays, and the hyper-parameters of the pass
    double* w
    double* xbar        # (2, p)
    double* C           # (2, p, p), scaled scatter, upper triangles
    double* scale       # (2,)
    double* W           # (2,)
    long long* N        # (2,)
    double* a
    double* Sw
    double* d
    double* V[2]        # pending rank-one terms, kmax rows of p each
    double f[2][SMALL_KMAX]     # their coefficients (own loops; BLAS folds them into V)
    int pending[2]
    int kmax
    int p
    bint use_blas
    double lam
    double eta
    double beta
    int schedule
    int loss


cdef inline void flush_class(Model* m, int k) noexcept nogil:
    """Apply class k's pending rank-one terms to its scatter (nothing pending: no-op)."""
    if m.pending[k] == 0:
        return
    if m.use_blas:
        flush(&m.C[<Py_ssize_t> k * m.p * m.p], m.V[k], &m.pending[k], m.p)
    else:
        small_rank_k(&m.C[<Py_ssize_t> k * m.p * m.p], m.V[k], m.f[k], m.pending[k], m.p)
        m.pending[k] = 0


cdef inline double play_round(Model* m, const double* x, double y, long long t,
                              double y_next, double v) noexcept nogil:
    """Round t of Algorithm 1 on instance x with label y (eqs. 12-18), in place.

    ``v`` is the row's importance weight (1 for the paper's rounds): its class moments
    count it v times (W' = beta W + v, mean step v / W'), and its loss term is scaled by
    v in the gradient (the regularizer is not).

    ``y_next`` is the label of the next round (0 if unknown): when it is the other class,
    this class's matrix is read next, so its pending terms are applied now, while the
    gradient step waits for the loss, rather than at the start of the next round.
    Returns max_j |x_j|, or NaN when x is not finite (the state is then not meaningful).
    """
    cdef int p = m.p
    cdef int own, opp, one_i = 1
    cdef Py_ssize_t j
    cdef double eta_t, mu, s2, d_mu, d_s2, coef_S, f, W_new, c, alpha, R
    cdef double zero = 0.0, one = 1.0
    cdef char uplo = b'L'
    cdef double* w = m.w
    cdef double* a = m.a
    cdef double* Sw = m.Sw
    cdef double* d = m.d
    cdef double* Ck
    cdef bint seen = False, batch
    eta_t = round_prologue(y, t, m.schedule, m.eta, m.lam, &own, &opp)
    if m.N[opp] > 0:
        seen = True
        Ck = &m.C[<Py_ssize_t> opp * p * p]     # 64-bit offsets: p^2 passes 2^31 at p = 46341
        mu = margin(x, &m.xbar[opp * p], w, y, a, p)   # a = y_t (x_t - xbar_t), mu = w.a
        alpha = m.scale[opp] / m.W[opp]                 # Sigma = scale C / W
        # Sigma w = C (alpha w): alpha goes into w first, so the unscaled C w (up to
        # 1/scale = 1e150 times Sigma w under forgetting) is never formed; d is free here
        if m.use_blas:
            flush_class(m, opp)
            for j in range(p):
                d[j] = alpha * w[j]
            dsymv(&uplo, &p, &one, Ck, &p, d, &one_i, &zero, Sw, &one_i)
            s2 = ddot(&p, w, &one_i, Sw, &one_i)        # w' Sigma w
        else:                   # the pending terms applied in the same sweep as the product
            s2 = small_symv(Ck, m.V[opp], m.f[opp], m.pending[opp], w, alpha, d, Sw, p)
            m.pending[opp] = 0
        loss_grad(m.loss, mu, s2, &d_mu, &d_s2)     # eq. (14) / eq. (13)
        coef_S = 2.0 * d_s2
    # own class: eqs. (15)-(18) with decay beta, as a rank-one term of the scatter
    W_new = m.beta * m.W[own] + v
    c = v * m.beta * m.W[own] / W_new
    batch = c > 0.0 and m.kmax > 0
    Ck = &m.C[<Py_ssize_t> own * p * p]
    if c > 0.0:
        m.scale[own] *= m.beta
        if m.scale[own] < RESCALE_BELOW or m.pending[own] == m.kmax:
            flush_class(m, own)
        if m.scale[own] < RESCALE_BELOW:
            rescale(Ck, &m.scale[own], p)
    if batch and not m.use_blas:                        # d goes straight into the buffer
        d = &m.V[own][m.pending[own] * p]
    R = mean_update(x, &m.xbar[own * p], d, v / W_new, p)
    m.W[own] = W_new
    m.N[own] += 1
    if batch:
        if m.use_blas:
            f = sqrt(c / m.scale[own])
            for j in range(p):
                m.V[own][m.pending[own] * p + j] = f * d[j]
        else:
            m.f[own][m.pending[own]] = c / m.scale[own]
        m.pending[own] += 1
        # the own loops fuse these terms into the next sweep of this matrix instead
        # (applying them here for the own loops too was slower: docs/performance.md)
        if m.use_blas and y_next * y < 0.0:
            flush_class(m, own)
    elif c > 0.0:
        small_rank_one(Ck, d, c / m.scale[own], p)
    if seen:                                            # eq. (12)
        gradient_step(w, a, Sw, eta_t, m.lam, v * d_mu, v * coef_S, p)
    else:
        shrink(w, eta_t, m.lam, p)
    return R


cdef inline double offset(const double* w, const double* xbar, const long long* N,
                          Py_ssize_t p) noexcept nogil:
    """w.(xbar_0 + xbar_1) once both classes were seen, else 0 (twice minus the intercept)."""
    cdef Py_ssize_t j
    cdef double off = 0.0
    if N[0] > 0 and N[1] > 0:
        for j in range(p):
            off += w[j] * (xbar[j] + xbar[p + j])
    return off


cdef inline double decision(Model* m, const double* x) noexcept nogil:
    """w.x - w.(xbar_0 + xbar_1)/2: the same operations, in the same order, as one row of
    :func:`decision_rows` (so a one-row round's Platt step sees the batch path's score)."""
    return small_dot(m.w, x, m.p) - 0.5 * offset(m.w, m.xbar, m.N, m.p)


def decision_rows(const double[:, ::1] X, const double[::1] w, const double[:, ::1] xbar,
                  const long long[::1] N, double[::1] out):
    """``out[i] = w.X[i] - w.(xbar_0 + xbar_1)/2`` (the offset once both classes were seen):
    the estimators' decision function, equal to the one-row paths to the bit."""
    cdef Py_ssize_t i, n = X.shape[0], p = w.shape[0]
    cdef double half_off
    if X.shape[1] != p or xbar.shape[0] != 2 or xbar.shape[1] != p or N.shape[0] != 2 \
            or out.shape[0] != n:
        raise ValueError("decision_rows: inconsistent shapes")
    if n == 0 or p == 0:
        for i in range(n):
            out[i] = 0.0
        return
    with nogil:
        half_off = 0.5 * offset(&w[0], &xbar[0, 0], &N[0], p)
        for i in range(n):
            out[i] = small_dot(&w[0], &X[i, 0], p) - half_off


cdef inline void flush_all(Model* m) noexcept nogil:
    flush_class(m, 0)
    flush_class(m, 1)


cdef inline bint takes_inlined(Model* m) noexcept nogil:
    """Whether the rounds of ``m`` may run as the inlined pass (see ``INLINED_PASS``)."""
    return INLINED_PASS and not m.use_blas and 0 < m.p < 32 and m.p % 4 == 0


cdef inline Py_ssize_t inlined_pass(Model* m, const double* X, const double* s,
                                    const Py_ssize_t* rows, Py_ssize_t n, long long* t,
                                    const double* pre, const double* b_old, double half_off,
                                    double* calib, bint track, double* R_max) noexcept nogil:
    """``sosl_small_pass`` on the model's state and buffers (rows of weight one)."""
    return small_pass(X, s, rows, n, t, m.w, m.xbar, m.C, m.scale, m.W, m.N, m.a, m.Sw, m.d,
                      m.V[0], m.V[1], &m.f[0][0], SMALL_KMAX, m.pending, m.kmax, m.lam,
                      m.eta, m.schedule == STEP_CONSTANT, loss_grad, m.loss, m.beta, pre,
                      b_old, half_off, calib, track, R_max, m.p)


cdef int bind(Model* m, double[::1] w, double[:, ::1] xbar, double[:, :, ::1] C,
              double[::1] scale, double[::1] W, long long[::1] N, double lam, double eta,
              int schedule, int loss, double beta, Py_ssize_t blas_min_p,
              double[::1] work) except -1:
    cdef int p = <int> w.shape[0]
    if (xbar.shape[0] != 2 or xbar.shape[1] != p or C.shape[0] != 2 or C.shape[1] != p
            or C.shape[2] != p or scale.shape[0] != 2 or W.shape[0] != 2 or N.shape[0] != 2):
        raise ValueError("linear kernel: inconsistent state shapes")
    m.p = p
    m.w = &w[0]
    m.xbar = &xbar[0, 0]
    m.C = &C[0, 0, 0]
    m.scale = &scale[0]
    m.W = &W[0]
    m.N = &N[0]
    m.lam = lam
    m.eta = eta
    m.beta = beta
    m.schedule = schedule
    m.loss = loss
    m.use_blas = p >= blas_min_p
    bind_work(m, work)
    return 0


cdef int bind_work(Model* m, double[::1] work) except -1:
    """Point the model's scratch vectors and pending buffers into ``work`` (kmax from its
    length, as in ``linear_pass``); nothing may be pending."""
    cdef int p = m.p
    if work.shape[0] < 3 * p:
        raise ValueError("linear kernel: work must hold at least 3 p values")
    m.a = &work[0]
    m.Sw = &work[p]
    m.d = &work[2 * p]
    m.kmax = <int> ((work.shape[0] - 3 * p) // (2 * p)) if p > 0 else 0
    m.pending[0] = 0
    m.pending[1] = 0
    if m.use_blas and m.kmax < 1:
        raise ValueError("linear kernel: for p >= blas_min_p, work must hold 3 p + 2 kmax p "
                         "values with kmax >= 1")
    if not m.use_blas and m.kmax > SMALL_KMAX:
        m.kmax = SMALL_KMAX
    m.V[0] = NULL           # read only while terms are pending
    m.V[1] = NULL
    if m.kmax > 0:
        m.V[0] = &work[3 * p]
        m.V[1] = &work[3 * p + m.kmax * p]
    return 0


def linear_pass(const double[:, ::1] X, const double[::1] s, const Py_ssize_t[::1] order,
                double[::1] w, double[:, ::1] xbar, double[:, :, ::1] C, double[::1] scale,
                double[::1] W, long long[::1] N, long long t0, double lam, double eta,
                int schedule, int loss, double beta, Py_ssize_t blas_min_p,
                double[::1] work, double[::1] stats=None, const double[::1] sw=None,
                const double[::1] pre=None, double[::1] calib=None):
    """Run Algorithm 1 over ``X[order]``; update ``w, xbar, C, scale, W, N`` in place.

    ``order=None`` visits every row of X in order (as ``np.arange(len(X))``, without it).

    ``C`` holds scaled scatter matrices (see the module docstring); ``work`` has length at
    least ``3 p`` plus, for ``p >= blas_min_p``, ``2 kmax p`` for the pending rank-one terms
    (``kmax >= 1`` is read from its length). Returns the round counter after the pass. See
    :func:`sosl._core._linear_ref.linear_pass` for the other parameters.

    ``stats``, if given (length 2), receives what the pass saw of the rows, read while they
    are in cache anyway: ``stats[0]`` is raised to the largest ``|X[i, j]|`` visited, and if
    a row holds a NaN or an infinity the pass stops after that row's round with
    ``stats[1]`` set to its position in ``order`` (the state is then not meaningful; the
    caller discards it). ``stats[1]`` is left as given when every row is finite.

    ``sw``, if given (one value per row of X), holds the rows' importance weights (> 0;
    rows of weight 0 are left out of ``order`` by the caller): see ``play_round``.

    ``pre`` and ``calib``, if given, are the rows' scores under the model as it was before
    the pass (one per row of X) and the Platt scaling ``[A, H]``: the prequential Platt
    step of each row (``_calibration.pxd``; rows of a non-finite score skipped) runs
    right after the round of that row, in the same order as
    ``platt_steps(pre[order], s[order])`` would run them after the pass (the same bits).
    Its chain of dependent operations is independent of the round's, so the processor
    overlaps the two (after the round rather than before: measured slightly faster).
    """
    cdef Model m
    cdef bint every = order is None                 # every row of X, in order
    cdef Py_ssize_t r, i, i_next, n = X.shape[0] if every else order.shape[0]
    cdef long long t = t0
    cdef double R, R_max = 0.0
    cdef bint track = stats is not None
    cdef bint weighted = sw is not None
    cdef bint platt = pre is not None
    cdef double f_pre
    cdef const Py_ssize_t* rows = NULL
    cdef const double* pre_p = NULL
    cdef double* calib_p = NULL
    if every and s.shape[0] < n:
        raise ValueError("linear_pass: s must hold one sign per row of X")
    if X.shape[1] != w.shape[0]:
        raise ValueError("linear_pass: X and w disagree on the number of features")
    if weighted and sw.shape[0] != X.shape[0]:
        raise ValueError("linear_pass: sw must hold one weight per row of X")
    if track and stats.shape[0] != 2:
        raise ValueError("linear_pass: stats must hold [max |x|, position of a bad row]")
    if platt and (pre.shape[0] != X.shape[0] or calib is None or calib.shape[0] != 2):
        raise ValueError("linear_pass: pre must hold one score per row of X, calib [A, H]")
    bind(&m, w, xbar, C, scale, W, N, lam, eta, schedule, loss, beta, blas_min_p, work)
    if track:
        R_max = stats[0]
    if takes_inlined(&m) and not weighted and n > 0:
        if not every:
            rows = &order[0]
        if platt:
            pre_p = &pre[0]
            calib_p = &calib[0]
        with nogil:
            r = inlined_pass(&m, &X[0, 0], &s[0], rows, n, &t, pre_p, NULL, 0.0, calib_p,
                             track, &R_max)
            flush_all(&m)
        if track:
            stats[0] = R_max
            if r >= 0:
                stats[1] = <double> r
        return t
    with nogil:
        i_next = 0 if every or n == 0 else order[0]
        for r in range(n):
            t += 1
            i = i_next
            if r + 1 < n:
                i_next = r + 1 if every else order[r + 1]
                prefetch(&X[i_next, 0], m.p)
            R = play_round(&m, &X[i, 0], s[i], t, s[i_next] if r + 1 < n else 0.0,
                           sw[i] if weighted else 1.0)
            if platt:
                f_pre = pre[i]
                if fabs(f_pre) <= DBL_MAX:
                    platt_step(&calib[0], f_pre, 1.0 if s[i] > 0 else 0.0)
            if R > R_max:
                R_max = R
            elif R != R:
                if track:
                    stats[1] = <double> r
                    break
        flush_all(&m)
    if track:
        stats[0] = R_max
    return t


def signs01(const cnp.int64_t[::1] y, double[::1] out):
    """``out = 2 y - 1`` for labels 0/1 in one pass (``partial_fit``'s signs when
    ``classes_ = [0, 1]``); False, with ``out`` not meaningful, if some label is neither."""
    cdef Py_ssize_t i, n = y.shape[0]
    cdef cnp.int64_t bad = 0
    if out.shape[0] != n:
        raise ValueError("signs01: out must hold one value per label")
    with nogil:
        for i in range(n):
            bad |= y[i] & ~(<cnp.int64_t> 1)        # any bit but the lowest: not 0 or 1
            out[i] = 2.0 * <double> y[i] - 1.0
    return bad == 0


def binary_signs(y):
    """``(lo, hi, s)`` when the C-contiguous int64 or float64 labels ``y`` (at least one)
    hold exactly two distinct values lo < hi, with ``s`` the float64 signs (+1 where
    ``y == hi``, -1 elsewhere); None when they hold one value, a third one or a NaN, or
    for any other array. NumPy's min and max (vectorised; a NaN makes both NaN), then
    one typed pass for the signs and a count of the other values (in the
    clones of ``_simd.h``): the typed form of ``sosl._base._two_numbers_np``, its NumPy
    reference."""
    cdef const cnp.int64_t[::1] yi
    cdef const double[::1] yf
    cdef double[::1] out
    cdef Py_ssize_t n, bad
    cdef cnp.int64_t ilo, ihi
    cdef double flo, fhi
    if type(y) is not np.ndarray or y.ndim != 1 or y.shape[0] == 0 \
            or not y.flags.c_contiguous or y.dtype not in (np.int64, np.float64):
        return None
    lo, hi = y.min(), y.max()
    if not lo < hi:                     # one value, or a NaN
        return None
    n = y.shape[0]
    s = np.empty(n)
    out = s
    if y.dtype == np.int64:
        yi = y
        ilo, ihi = lo, hi
        with nogil:
            bad = signs_i64(&yi[0], n, ilo, ihi, &out[0])
    else:
        yf = y
        flo, fhi = lo, hi
        with nogil:
            bad = signs_f64(&yf[0], n, flo, fhi, &out[0])
    return None if bad else (lo, hi, s)


def finite_max_abs(const double[:, ::1] X):
    """``max |X|`` in one pass (0.0 for an empty X), or NaN if X holds a NaN or an inf."""
    cdef double R
    if X.shape[0] == 0 or X.shape[1] == 0:
        return 0.0
    with nogil:
        R = abs_max(&X[0, 0], X.shape[0] * X.shape[1])
    return R


cdef class Stepper:
    """One-row rounds on an estimator's own arrays, bound once (``learn_one``'s fast path).

    ``step(x, s, t, R)`` plays round t on the 1-D float64 array x with label sign s, in
    place, after checking, in one pass over x and before anything is written, that x is
    finite with the right length and every |x_j| <= R_max. When the no-copy argument of
    the estimator also holds (2 R sqrt(p) W <= margin with a contracting step, see
    ``sosl.linear``) the round is played directly. Otherwise it is *guarded*: the arrays
    the round can write (w, the calibration, and the own class's mean, scatter, scale,
    weight and count; the other class's are only read, and nothing is pending between
    calls) are saved first, O(p^2) copied memory instead of the general path's full state,
    and restored if w came out non-finite. The moments stay finite for |x_j| <= R_max by
    the same argument, so w is the only array to check. Returns the new max |x| seen, or
    -1.0 (the state as it was) when the caller must take the general path, which then
    reports the row or the divergence.
    """
    cdef Model m
    cdef object arrays
    cdef double* calib
    cdef double safe_abs
    cdef double margin
    cdef double G_factor
    cdef object saved           # backup of a guarded round, allocated on the first one
    cdef object kept            # the state before a batch (``batch``), likewise
    cdef double[::1] scratch    # a batch's pending buffers and signs, grown on demand
    cdef readonly long long n_guarded    # guarded rounds played (diagnostics and tests)
    cdef public bint labels01   # set by the estimator: its classes_ are [0, 1] (``batch``)
    cdef public bint one_row    # set by the estimator: ``learn_row`` may play its rounds

    def __init__(self, double[::1] w, double[:, ::1] xbar, double[:, :, ::1] C,
                 double[::1] scale, double[::1] W, long long[::1] N, double lam, double eta,
                 int schedule, int loss, double beta, Py_ssize_t blas_min_p,
                 double safe_abs, double margin, double G_factor, double[::1] calibration):
        cdef double[::1] work
        p = w.shape[0]
        work = cnp.PyArray_ZEROS(1, [3 * p + 2 * p], cnp.NPY_DOUBLE, 0)
        if calibration.shape[0] != 2:
            raise ValueError("Stepper: calibration must hold [A, H]")
        self.arrays = (w, xbar, C, scale, W, N, work, calibration)
        self.calib = &calibration[0]
        bind(&self.m, w, xbar, C, scale, W, N, lam, eta, schedule, loss, beta, blas_min_p,
             work)
        self.safe_abs = safe_abs
        self.margin = margin
        self.G_factor = G_factor
        # empty until the first batch (a memoryview must be bound before it is read: the
        # checked build's initializedcheck raises on an unbound one, even for ``is None``)
        self.scratch = cnp.PyArray_ZEROS(1, [0], cnp.NPY_DOUBLE, 0)

    def score(self, cnp.ndarray x):
        """w.x - w.(xbar_0 + xbar_1)/2 (the estimator's decision value; the offset only once
        both classes were seen), or NaN when x is not a float64 row of length p."""
        cdef int p = self.m.p
        if (cnp.PyArray_NDIM(x) != 1 or cnp.PyArray_DIM(x, 0) != p
                or cnp.PyArray_TYPE(x) != cnp.NPY_DOUBLE or not cnp.PyArray_ISCARRAY_RO(x)):
            return float("nan")
        return decision(&self.m, <const double*> cnp.PyArray_DATA(x))

    cpdef double step(self, cnp.ndarray x, double s, long long t,
                      double R_seen) except? -3.0:
        cdef Model* m = &self.m
        cdef int p = m.p
        cdef Py_ssize_t j
        cdef double R = R_seen
        cdef double v, wn = 0.0, eta_max, f
        cdef bint ok = True, proof
        cdef const double* xp
        cdef double* b
        cdef int own
        if (cnp.PyArray_NDIM(x) != 1 or cnp.PyArray_DIM(x, 0) != p
                or cnp.PyArray_TYPE(x) != cnp.NPY_DOUBLE or not cnp.PyArray_ISCARRAY_RO(x)):
            return -1.0
        xp = <const double*> cnp.PyArray_DATA(x)
        with nogil:                 # one release of the GIL: the scan, the proof, the round
            for j in range(p):
                v = fabs(xp[j])
                if not v <= self.safe_abs:          # also catches NaN and inf
                    ok = False
                    break
                if v > R:
                    R = v
                wn += m.w[j] * m.w[j]
            proof = ok and self.G_factor > 0.0
            if proof:                   # the step contracts the part of g linear in w
                eta_max = m.eta if m.schedule == STEP_CONSTANT else 1.0 / (m.lam * <double> t)
                proof = eta_max * (m.lam + curvature_bound(m.loss) * R * R * p) <= 2.0
            if proof:
                proof = (2.0 * R * sqrt(<double> p) * (sqrt(wn) + eta_max * self.G_factor * R
                                                       * sqrt(<double> p)) <= self.margin)
            if proof:
                platt_step(self.calib, decision(m, xp), 1.0 if s > 0 else 0.0)
                play_round(m, xp, s, t, 0.0, 1.0)
                flush_all(m)
        if not ok:
            return -1.0
        if proof:
            return R
        f = decision(m, xp)
        if not (fabs(f) <= DBL_MAX):                   # the general path skips its Platt step
            return -1.0
        if self.saved is None:
            self.saved = cnp.PyArray_ZEROS(1, [<Py_ssize_t> p * p + 2 * p + 5],
                                           cnp.NPY_DOUBLE, 0)
        b = <double*> cnp.PyArray_DATA(self.saved)
        own = 1 if s > 0 else 0
        self.n_guarded += 1
        with nogil:
            save_round(m, own, self.calib, b, True)
            platt_step(self.calib, f, 1.0 if s > 0 else 0.0)
            play_round(m, xp, s, t, 0.0, 1.0)
            flush_all(m)
            for j in range(p):
                if not fabs(m.w[j]) <= DBL_MAX:
                    ok = False
                    break
            if not ok:
                save_round(m, own, self.calib, b, False)
        return R if ok else -1.0

    def batch(self, cnp.ndarray X, cnp.ndarray y, long long t0, double R_seen, int kmax,
              bint labels):
        """Rounds t0 + 1, ... on the rows of X in order (``partial_fit``'s fast path), in place.

        Plays what the general path plays on a batch of a fitted model, to the bit: the
        rounds of ``linear_pass`` with at most min(kmax, n) pending rank-one terms per class
        (the general path's buffers) and, after each round, the prequential Platt step of
        the row on its score under the model before the batch, as ``decision_rows``
        computes it (``small_dot`` with a copy of w made before the first round and the
        offset of that model; a non-finite score skipped). One pass over the rows serves
        the scores, the rounds and, below ``blas_min_p``, the check of the rows.

        ``X``: C-contiguous float64 with p columns and n >= 1 rows, else -1. ``y``: one
        value per row; with ``labels`` the int64 labels 0/1 of a model whose ``classes_``
        are [0, 1] (the signs 2 y - 1 made here: a label other than 0 and 1 returns -3,
        a y that is not C-contiguous int64 -4, before X is read); without, the label
        signs (C-contiguous float64, > 0 for the positive class), else -1.

        A failed batch leaves the state as it was:

        * below ``blas_min_p`` (the kernel's own loops; the two scatter matrices hold at
          most 2 * 31^2 values) the whole state is copied into a buffer of this object
          first, which costs less than one pass over a chunk's rows. The rounds report
          each row's max |x| or that it is not finite; such a row stops the pass, the
          state is restored and -1 returned (the general path then reports the row); a
          state that came out non-finite is restored and -2 returned.
        * from ``blas_min_p`` on, only the O(p) arrays (w, the means, scales, weights,
          counts, calibration) are copied, so the batch is taken only when, first, it is
          finite with every |x_j| <= R_max and the no-copy argument of ``sosl.linear``
          holds for all its rows (``2 R sqrt(p) (||w|| + n eta_max G) <= margin``,
          G = G_factor R sqrt(p)); otherwise -1. If the pass leaves one array non-finite
          anyway, they are restored and -2 returned (the scatter matrices changed, as on
          the general path).

        Returns the new max |x| seen (at least ``R_seen``), or one of the codes above.
        """
        cdef Model mm = self.m          # the same state, with the batch's scratch buffers
        cdef int p = mm.p
        cdef Py_ssize_t r, j, n, length, kept_len, pp = <Py_ssize_t> p * p
        cdef double R = R_seen, R_row, wn = 0.0, eta_max, half_off, f, sr
        cdef long long t = t0
        cdef bint ok = True, finite = True, rows_ok = True
        cdef bint full = not mm.use_blas               # the whole state is kept
        cdef const double* xp
        cdef const double* sp
        cdef const cnp.int64_t* yp = NULL
        cdef double* sgn
        cdef double* b
        cdef double* calib = self.calib
        cdef cnp.int64_t bad = 0
        if labels and not (cnp.PyArray_NDIM(y) == 1 and cnp.PyArray_ISCARRAY_RO(y)
                           and cnp.PyArray_ISSIGNED(y) and cnp.PyArray_ITEMSIZE(y) == 8):
            return -4.0
        if (cnp.PyArray_NDIM(X) != 2 or cnp.PyArray_TYPE(X) != cnp.NPY_DOUBLE
                or not cnp.PyArray_ISCARRAY_RO(X) or cnp.PyArray_DIM(X, 1) != p or p == 0
                or cnp.PyArray_NDIM(y) != 1 or not cnp.PyArray_ISCARRAY_RO(y) or kmax < 1
                or not (labels or cnp.PyArray_TYPE(y) == cnp.NPY_DOUBLE)):
            return -1.0
        n = cnp.PyArray_DIM(X, 0)
        if n == 0 or cnp.PyArray_DIM(y, 0) != n:
            return -1.0
        length = 3 * p + 2 * p * (kmax if kmax < n else n)
        if self.scratch.shape[0] < length + n:
            self.scratch = cnp.PyArray_ZEROS(1, [2 * (length + n)], cnp.NPY_DOUBLE, 0)
        bind_work(&mm, self.scratch[:length])
        sgn = &self.scratch[length]
        kept_len = 3 * p + 8 + (2 * pp if full else 0)
        if self.kept is None or cnp.PyArray_DIM(self.kept, 0) < kept_len:
            self.kept = cnp.PyArray_ZEROS(1, [kept_len], cnp.NPY_DOUBLE, 0)
        b = <double*> cnp.PyArray_DATA(self.kept)
        xp = <const double*> cnp.PyArray_DATA(X)
        if labels:
            yp = <const cnp.int64_t*> cnp.PyArray_DATA(y)
            sp = sgn
        else:
            sp = <const double*> cnp.PyArray_DATA(y)
        with nogil:
            if labels:                  # the signs 2 y - 1, after the labels are checked
                for r in range(n):
                    bad |= yp[r] & ~(<cnp.int64_t> 1)    # any bit but the lowest: not 0/1
                    sgn[r] = 2.0 * <double> yp[r] - 1.0
                ok = bad == 0
            if ok and not full:
                R = abs_max(xp, n * p)
                if R_seen > R:
                    R = R_seen
                ok = R <= self.safe_abs and self.G_factor > 0.0        # NaN: not ok
                eta_max = mm.eta if mm.schedule == STEP_CONSTANT \
                    else 1.0 / (mm.lam * <double> (t0 + 1))     # the first round's is largest
                if ok:                  # every step contracts the part of g linear in w
                    ok = eta_max * (mm.lam + curvature_bound(mm.loss) * R * R * p) <= 2.0
                if ok:
                    for j in range(p):
                        wn += mm.w[j] * mm.w[j]
                    ok = (2.0 * R * sqrt(<double> p) * (sqrt(wn) + <double> n * eta_max
                                                        * self.G_factor * R * sqrt(<double> p))
                          <= self.margin)
            if ok:
                keep_state(&mm, calib, b, full, True)
                half_off = 0.5 * offset(mm.w, mm.xbar, mm.N, p)
                if takes_inlined(&mm):      # scores from b, the old w
                    rows_ok = inlined_pass(&mm, xp, sp, NULL, n, &t, NULL, b, half_off, calib,
                                           True, &R) < 0
                else:
                    for r in range(n):
                        t += 1
                        if r + 1 < n:
                            prefetch(&xp[(r + 1) * p], p)
                        f = small_dot(b, &xp[r * p], p) - half_off     # b starts with the old w
                        sr = sp[r]
                        R_row = play_round(&mm, &xp[r * p], sr, t, sp[r + 1] if r + 1 < n else 0.0,
                                           1.0)
                        if fabs(f) <= DBL_MAX:
                            platt_step(calib, f, 1.0 if sr > 0 else 0.0)
                        if R_row > R:
                            R = R_row
                        elif R_row != R_row:                # a NaN or an infinity in the row
                            rows_ok = False
                            break
                if rows_ok:
                    flush_all(&mm)
                    # abs_max is NaN for a non-finite value (and inf itself never a max);
                    # the scatter matrices stay finite for rows with |x_j| <= R_max (see
                    # ``sosl.linear``), so only a batch beyond it reads them
                    finite = (abs_max(mm.w, p) <= DBL_MAX and abs_max(mm.xbar, 2 * p) <= DBL_MAX
                              and abs_max(mm.scale, 2) <= DBL_MAX
                              and abs_max(mm.W, 2) <= DBL_MAX
                              and (R <= self.safe_abs or abs_max(mm.C, 2 * pp) <= DBL_MAX))
                if not (rows_ok and finite):
                    keep_state(&mm, calib, b, full, False)
        if bad != 0:
            return -3.0
        if not ok or not rows_ok:
            return -1.0
        return R if finite else -2.0


cdef inline void keep_state(Model* m, double* calib, double* b, bint full,
                            bint save) noexcept nogil:
    """Copy what a batch writes into ``b`` (save) or back (restore): w first (the batch's
    scores read the old w there), the means, scales, weights, counts, calibration and, if
    ``full``, the scatter matrices."""
    cdef Py_ssize_t p = m.p
    cdef Py_ssize_t pp = p * p
    if save:
        memcpy(b, m.w, p * sizeof(double))
        memcpy(&b[p], m.xbar, 2 * p * sizeof(double))
        b[3 * p] = m.scale[0]
        b[3 * p + 1] = m.scale[1]
        b[3 * p + 2] = m.W[0]
        b[3 * p + 3] = m.W[1]
        b[3 * p + 4] = <double> m.N[0]
        b[3 * p + 5] = <double> m.N[1]
        b[3 * p + 6] = calib[0]
        b[3 * p + 7] = calib[1]
        if full:
            memcpy(&b[3 * p + 8], m.C, 2 * pp * sizeof(double))
    else:
        memcpy(m.w, b, p * sizeof(double))
        memcpy(m.xbar, &b[p], 2 * p * sizeof(double))
        m.scale[0] = b[3 * p]
        m.scale[1] = b[3 * p + 1]
        m.W[0] = b[3 * p + 2]
        m.W[1] = b[3 * p + 3]
        m.N[0] = <long long> b[3 * p + 4]
        m.N[1] = <long long> b[3 * p + 5]
        calib[0] = b[3 * p + 6]
        calib[1] = b[3 * p + 7]
        if full:
            memcpy(m.C, &b[3 * p + 8], 2 * pp * sizeof(double))


cdef inline void save_round(Model* m, int own, double* calib, double* b,
                            bint save) noexcept nogil:
    """Copy what a round of class ``own`` writes into ``b`` (save) or back (restore)."""
    cdef Py_ssize_t p = m.p
    cdef Py_ssize_t pp = p * p
    if save:
        memcpy(b, m.w, p * sizeof(double))
        memcpy(&b[p], &m.xbar[own * p], p * sizeof(double))
        memcpy(&b[2 * p], &m.C[own * pp], pp * sizeof(double))
        b[2 * p + pp] = m.scale[own]
        b[2 * p + pp + 1] = m.W[own]
        b[2 * p + pp + 2] = <double> m.N[own]
        b[2 * p + pp + 3] = calib[0]
        b[2 * p + pp + 4] = calib[1]
    else:
        memcpy(m.w, b, p * sizeof(double))
        memcpy(&m.xbar[own * p], &b[p], p * sizeof(double))
        memcpy(&m.C[own * pp], &b[2 * p], pp * sizeof(double))
        m.scale[own] = b[2 * p + pp]
        m.W[own] = b[2 * p + pp + 1]
        m.N[own] = <long long> b[2 * p + pp + 2]
        calib[0] = b[2 * p + pp + 3]
        calib[1] = b[2 * p + pp + 4]


def fixed_pass(const double[:, ::1] X, const double[::1] s, const Py_ssize_t[::1] order,
               double[::1] w, const double[:, ::1] xbar, const double[:, :, ::1] Sigma,
               const long long[::1] N, long long t0, double lam, double eta, int schedule,
               int loss, Py_ssize_t blas_min_p, double[::1] work, const double[::1] sw=None):
    """Algorithm 1's rounds over ``X[order]`` against *fixed* class moments; w in place.

    Eq. (12) with the loss of eq. (14) / (13) at ``mu = s_t w.(x_t - xbar_o)``,
    ``s2 = w' Sigma_o w`` (o the other class), where ``xbar`` (2, p) and ``Sigma`` (2, p, p,
    covariances, the upper triangle read: full or the kernel's padded upper triangle)
    are given and stay as they are: eqs. (15)-(18) are not played. A round is the margin,
    ``Sigma_o w`` (the own loops' ``small_symv`` with no pending terms for
    ``p < blas_min_p``, BLAS ``dsymv`` otherwise), the loss and the step, with the
    step schedule of the learner (``round_prologue``). ``N`` (2,) only tells which class
    has rows: a round whose other class has none only shrinks w (as a learner's round
    before that class was seen). ``sw``, if given, weighs each row's loss term (not the
    regularizer), as in ``play_round``. ``order=None`` visits every row of X in order.

    ``work`` holds at least ``4 p`` values (the round's a, Sigma w, alpha w and a copy of
    w). Returns ``(t, finite)``: the round counter after the pass and whether w came out
    finite; if not, w is restored to its value before the pass. w is the pass's only
    state, and one check at the end suffices for it: a non-finite w_j stays non-finite
    (every round writes w_j - eta_t (lam w_j + ...), and inf - inf is NaN). A non-finite
    row (the callers have checked the rows) gives a NaN margin, hence a NaN w.

    The NumPy reference, one line per equation, is
    :func:`sosl._core._linear_ref.fixed_pass`.
    """
    cdef bint every = order is None
    cdef Py_ssize_t r, i, j, n = X.shape[0] if every else order.shape[0]
    cdef int p = <int> w.shape[0]
    cdef int own, opp, one_i = 1
    cdef long long t = t0
    cdef double eta_t, mu, s2, d_mu, d_s2, v, zero = 0.0, one = 1.0
    cdef char uplo = b'L'                   # the row-major upper triangle is BLAS's lower one
    cdef bint weighted = sw is not None
    cdef bint use_blas = p >= blas_min_p
    cdef bint finite = True
    cdef double* a
    cdef double* Sw
    cdef double* u
    cdef double* kept
    cdef double* Sk
    if (X.shape[1] != p or xbar.shape[0] != 2 or xbar.shape[1] != p or Sigma.shape[0] != 2
            or Sigma.shape[1] != p or Sigma.shape[2] != p or N.shape[0] != 2):
        raise ValueError("fixed_pass: inconsistent shapes")
    if every and s.shape[0] < n:
        raise ValueError("fixed_pass: s must hold one sign per row of X")
    if weighted and sw.shape[0] != X.shape[0]:
        raise ValueError("fixed_pass: sw must hold one weight per row of X")
    if work.shape[0] < 4 * p:
        raise ValueError("fixed_pass: work must hold at least 4 p values")
    if n == 0 or p == 0:
        return t + n, True
    a = &work[0]
    Sw = &work[p]
    u = &work[2 * p]
    kept = &work[3 * p]
    with nogil:
        memcpy(kept, &w[0], p * sizeof(double))
        i = 0 if every else order[0]
        for r in range(n):
            t += 1
            if r + 1 < n:
                prefetch(&X[r + 1 if every else order[r + 1], 0], p)
            eta_t = round_prologue(s[i], t, schedule, eta, lam, &own, &opp)
            v = sw[i] if weighted else 1.0
            if N[opp] > 0:
                # Sigma_o read only (no pending terms, hence no stores): the casts drop const
                Sk = <double*> &Sigma[opp, 0, 0]
                mu = margin(&X[i, 0], &xbar[opp, 0], &w[0], s[i], a, p)   # a, mu = w.a
                if use_blas:
                    dsymv(&uplo, &p, &one, Sk, &p, &w[0], &one_i, &zero, Sw, &one_i)
                    s2 = ddot(&p, &w[0], &one_i, Sw, &one_i)             # w' Sigma_o w
                else:
                    s2 = small_symv(Sk, NULL, NULL, 0, &w[0], 1.0, u, Sw, p)
                loss_grad(loss, mu, s2, &d_mu, &d_s2)                   # eq. (14) / (13)
                gradient_step(&w[0], a, Sw, eta_t, lam, v * d_mu, v * 2.0 * d_s2, p)
            else:
                shrink(&w[0], eta_t, lam, p)                            # eq. (12), no loss
            if r + 1 < n:
                i = r + 1 if every else order[r + 1]
        for j in range(p):
            if not fabs(w[j]) <= DBL_MAX:
                finite = False
                break
        if not finite:
            memcpy(&w[0], kept, p * sizeof(double))
    return t, finite


cdef inline object bound_stepper(dict d, object x):
    """The model's bound :class:`Stepper` (``d`` is its ``__dict__``) when its
    hyper-parameters are checked and ``x`` is an ndarray; None otherwise (the caller
    then takes its ordinary path). Calls no Python code."""
    cdef PyObject* o = PyDict_GetItem(d, "_params_ok")
    if o == NULL or <object> o is not True:
        return None
    o = PyDict_GetItem(d, "_stepper_")
    if o == NULL or type(<object> o) is not Stepper or type(x) is not cnp.ndarray:
        return None
    return <object> o


def read_score(dict d, object x, bint lock=True):
    """``score_one`` of a fitted model read without its lock: the decision value of the
    float64 row ``x`` by the model's bound :class:`Stepper` (``d`` is the model's
    ``__dict__``), or None when the caller must take the lock and its ordinary path: the
    lock is held by another thread, the hyper-parameters are not checked, no stepper is
    bound, ``x`` is not a C-contiguous float64 row of length p, or the score is not finite.

    The check of the lock and the read run with the GIL held and call no Python code,
    which makes the unlocked read safe (:mod:`sosl._core._lock`). ``lock=False`` reads
    whoever holds the lock: a mutant for the tests only.
    """
    cdef PyObject* o = PyDict_GetItem(d, "_lock_")
    cdef Stepper st
    cdef cnp.ndarray a
    cdef double f
    if lock and o != NULL and not reader_may_pass(<object> o):
        return None
    b = bound_stepper(d, x)
    if b is None:
        return None
    st = <Stepper> b
    a = <cnp.ndarray> x
    if (cnp.PyArray_NDIM(a) != 1 or cnp.PyArray_DIM(a, 0) != st.m.p
            or cnp.PyArray_TYPE(a) != cnp.NPY_DOUBLE or not cnp.PyArray_ISCARRAY_RO(a)):
        return None
    f = decision(&st.m, <const double*> cnp.PyArray_DATA(a))
    if not fabs(f) <= DBL_MAX:              # NaN or an infinity: the general path
        return None
    return f


def learn_row(dict d, object x, object y, bint lock=True):
    """``learn_one`` of a fitted model on one float64 row with the model's lock taken here
    (``d`` is the model's ``__dict__``, ``y`` the row's label): the label's sign from
    ``_signs_``, round ``t_ + 1`` by the bound :class:`Stepper` (``step``), ``t_``,
    ``n_seen_`` and ``max_abs_`` advanced. Returns the new ``max_abs_``, or None, with the
    model as it was, when the caller must take its ordinary path: no lock made yet, the
    lock held by another thread, the hyper-parameters not checked, no stepper bound or
    one not marked ``one_row`` by the estimator, a ``_learn_one_in_place`` set on the
    instance (it replaces the round this one plays), an unknown label, or a row the
    stepper declines. ``lock=False`` plays without the lock: a mutant for the tests only.

    Taking the lock in compiled code spares the ``with`` statement's cost on every row;
    the lock is the model's one lock (:mod:`sosl._core._lock`), so every other call waits
    for the round, and a score read without the lock never sees half a round.
    """
    cdef PyObject* o = PyDict_GetItem(d, "_lock_")
    cdef ModelLock lk
    cdef Stepper st
    cdef double s, R
    cdef long long t
    if o == NULL or type(<object> o) is not ModelLock:
        return None
    lk = <ModelLock> o
    if lock and not lk.acquire(False):      # held by another thread: the caller waits
        return None
    try:
        b = bound_stepper(d, x)
        if b is None:
            return None
        st = <Stepper> b
        if not st.one_row or PyDict_GetItem(d, "_learn_one_in_place") != NULL:
            return None
        o = PyDict_GetItem(d, "_signs_")
        if o == NULL:
            return None
        try:
            sign = (<object> o).get(y)
        except TypeError:                   # unhashable label: the general path says so
            return None
        if sign is None:
            return None
        s = sign
        t = d["t_"] + 1
        R = st.step(<cnp.ndarray> x, s, t, d["max_abs_"])
        if R < 0.0:
            return None
        d["t_"] = t
        d["n_seen_"] += 1
        d["max_abs_"] = R
        return R
    finally:
        if lock:
            lk.release()
