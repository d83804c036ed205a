# cython: language_level=3
"""Typed POLK pass with an incrementally maintained inverse Gram matrix.

Same rounds as the NumPy reference :func:`sosl._core._polk_ref.polk_pass` (see it for the
symbols and conventions), but instead of handing the whole (M+1) x (M+1) Gram matrix to
:func:`sosl.komp.komp_prune` every round (pivoted Cholesky + inverse, O(M^3)), it keeps
G = K_DD^{-1} of the current dictionary from round to round:

1. k_x = k_D(x_t), f = w . k_x, g = l'(f, y_t), eta_t, eps_t as in the reference;
2. bordering with the new atom: u = G k_x, Schur complement sc = k(x_t, x_t) - k_x . u,

       G~ = [[G + u u' / sc, -u / sc], [-u' / sc, 1 / sc]];

3. destructive KOMP on (K~, alpha = [(1 - eta_t lam) w, -eta_t g]) exactly as
   :mod:`sosl._core._komp` does it after its rank check: e^2 = 0, w = alpha, costs
   gamma_j^2 = e^2 + w_j^2 / G_jj (the last element: ||f~||^2), first minimum, stop when
   above eps_t^2, rank-one downdates of G and w (see :mod:`sosl.komp`). The first
   removal is chosen from the diagonal of G~ (O(M)) before G~ is formed; when there is
   one, the bordering and that downdate are written in one pass over G;
4. if anything was removed, the kept weights are the downdated ones (G b_I with
   b = K~ alpha, but for rounding) plus one step of
   iterative refinement (w += G (b_I - K_II w)), so that their accuracy is that of a
   backward-stable solve whatever small drift G has; ||f~ - f_new||_H from
   (alpha - beta)' K~ (alpha - beta) as :func:`sosl.komp.komp_error`;
5. once the new weights, the error and the new G are known to be finite, the round
   commits: the weights, the dictionary and K are compacted in place to the kept set and
   the new G (built in a second buffer: the bordering reads G and writes the other one)
   becomes the state's. A round declined at any point leaves the state as it was, so the
   one-row path (``PolkStepper``) needs no copy of it.

The reference's rank guard (pivoted Cholesky with threshold rtol * max_i K~_ii) is only
reproduced in the easy case: the round is played here only if the squared distance of
every element of D~ to the span of the others (1 / G~_jj, and sc for the new atom) exceeds
``safety * rtol * max_i K~_ii``; then the pivoted factorization is full rank (every pivot
residual is at least that distance). Otherwise the loop returns ``STATUS_FALLBACK`` before
changing anything, and the caller plays the round with the exact reference and rebuilds G.
The loop also returns ``STATUS_GROW`` when the buffers are full, ``STATUS_NONFINITE``
(before committing) when the round's result is not finite, and ``STATUS_REBUILD``
(after finishing a round) when the drift check fails: each round one column c of G is
tested, max_i |(K G)_ic - delta_ic| <= max(drift_tol, drift_rel max_i K_ii max_j G_jj)
(the second term follows the accuracy of a freshly computed inverse, about 1e-15 times
max K_ii max G_jj, a lower bound of the condition number).

Storage: ``w`` (cap), ``K`` and ``G`` (cap x cap, row-major with row stride cap; G with a
second buffer of that shape) and the dictionary, whose first M slots/rows/columns are the
current atoms in dictionary order. The products with the symmetric K and G are written
as row-scaled additions (``polk_symv_add``: the same sums in the same order as the dot
products of the rows, in vector registers; compiled for the baseline and for AVX2 + FMA,
picked at load time), the compaction copies runs of consecutive kept columns.
Two entry points share one pass body (``run``), reading their rows and keeping their
atoms through the ``SourceRows`` / ``SlotStore`` helpers of :mod:`sosl._core._kfun`:
``polk_fast_pass`` takes dense rows and a dense dictionary ``D`` (cap x p), cost per round
O(M p + M^2); ``polk_fast_pass_csr`` takes CSR rows and a dictionary of sparse slots
(``D_ind`` (cap, L) int32, ``D_val`` (cap, L), ``D_nnz`` (cap,) int32; slot q holds
``D_nnz[q]`` entries at increasing positions), whose kernel rows come from merges of
sorted index lists, O(M (nnz(x_t) + L) + M^2) per round whatever p. Plus O(M^2) per
removal in both.
"""

from libc.math cimport sqrt, tanh, fabs, pow, isfinite

from sosl._core._calibration cimport platt_step
from sosl._core._codes cimport LOSS_HINGE, LOSS_LOGISTIC
from sosl._core._codes cimport POLK_EPS_FIXED, POLK_STEP_CONSTANT
from sosl._core._kfun cimport (
    KernelSpec,
    SlotStore,
    SourceRow,
    SourceRows,
    StepSpec,
    csr_source,
    get_row,
    kernel_rows_slots,
    sparse_kernel_eval,
    store_kernel_row,
    store_move,
    store_put,
    store_self_kernel,
)
from sosl._core._rows cimport dense_source
from sosl._core._komp_greedy cimport komp_removals

STATUS_DONE = 0
STATUS_GROW = 1
STATUS_FALLBACK = 2
STATUS_REBUILD = 3
STATUS_NONFINITE = 4


cdef struct PolkSpec:
    # the KOMP budget of a round (a ``PolkBudget`` code, epsilon, parsimony) and the
    # numerical tolerances of this pass (rank guard rtol * safety, drift check); built by
    # ``sosl._core._polk_driver.polk_spec``
    int eps_rule
    double epsilon
    double parsimony
    double rtol
    double safety
    double drift_tol
    double drift_rel


cdef inline double loss_derivative(double z, double y, int loss) noexcept nogil:
    """l'(z, y), as :func:`sosl._core._polk_ref.loss_derivative`."""
    if loss == LOSS_HINGE:
        return -y if y * z < 1.0 else 0.0
    if loss == LOSS_LOGISTIC:
        return -y * 0.5 * (1.0 - tanh(0.5 * y * z))
    return z - y


cdef inline double step_and_budget(long long t, double eta, double lam, int schedule,
                                   int eps_rule, double epsilon, double parsimony,
                                   double* eps_t) noexcept nogil:
    """eta_t of round t (``PolkSchedule``) and, in ``eps_t``, the KOMP budget (``PolkBudget``)."""
    cdef double eta_t = eta if schedule == POLK_STEP_CONSTANT else eta / (1.0 + lam * eta * t)
    if eps_rule == POLK_EPS_FIXED:
        eps_t[0] = epsilon
    elif schedule == POLK_STEP_CONSTANT:
        eps_t[0] = parsimony * pow(eta_t, 1.5)
    else:
        eps_t[0] = parsimony * pow(eta_t, 2.0)
    return eta_t


def polk_loss_derivative(double z, double y, int loss):
    """l'(z, y) of the typed pass (for the rounds played outside it)."""
    return loss_derivative(z, y, loss)


def polk_step_and_budget(long long t, StepSpec step, PolkSpec polk):
    """``(eta_t, eps_t)`` of round t, as the typed pass computes them."""
    cdef double eps_t
    cdef double eta_t = step_and_budget(t, step.eta, step.lam, step.schedule, polk.eps_rule,
                                        polk.epsilon, polk.parsimony, &eps_t)
    return eta_t, eps_t


cdef extern from *:
    """
    #include <stddef.h>
    #include <stdint.h>
    #include <string.h>
    /* compiled for the build's baseline and for x86-64-v3 (AVX2, FMA), picked at load
     * time, as the loops of _simd.h are */
    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) \
        && defined(__linux__) && !defined(SOSL_NO_CLONES)
    #if __GNUC__ >= 12
    #define POLK_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
    #else
    #define POLK_CLONES __attribute__((target_clones("avx2", "default")))
    #endif
    #else
    #define POLK_CLONES
    #endif
    /* y += A x (OP +) or y -= A x (OP -) for a symmetric n x n block A with row stride
     * cap: row-scaled additions over rows c, c + 1, ... of A (its columns, by symmetry), so
     * every y[l] is changed by A[l, c] x[c] for c in increasing order exactly as the
     * row-by-row dot product would be (the same bits without fused multiply-adds) while
     * the loop over l runs in vector registers with no dependency chain (a dot product's
     * chain of additions cannot be vectorized without reordering them). */
    #define POLK_SYMV(NAME, OP) \
    POLK_CLONES static void NAME(const double* restrict A, ptrdiff_t cap, \
                                 const double* restrict x, ptrdiff_t n, \
                                 double* restrict y) { \
        ptrdiff_t c = 0, l; \
        for (; c + 4 <= n; c += 4) { \
            const double* r0 = A + c * cap; \
            const double* r1 = r0 + cap; \
            const double* r2 = r1 + cap; \
            const double* r3 = r2 + cap; \
            double x0 = x[c], x1 = x[c + 1], x2 = x[c + 2], x3 = x[c + 3]; \
            for (l = 0; l < n; l++) \
                y[l] = (((y[l] OP r0[l] * x0) OP r1[l] * x1) OP r2[l] * x2) OP r3[l] * x3; \
        } \
        for (; c < n; c++) { \
            const double* r0 = A + c * cap; \
            double x0 = x[c]; \
            for (l = 0; l < n; l++) y[l] = y[l] OP r0[l] * x0; \
        } \
    }
    POLK_SYMV(polk_symv_add, +)
    POLK_SYMV(polk_symv_sub, -)
    /* Gb = Ga + u u' / sc on the leading n x n block (both with row stride cap, never the
     * same buffer), as (u_l u_c) isc so that Gb stays exactly symmetric; returns 1 if every
     * written entry is finite. */
    POLK_CLONES static int polk_border(const double* restrict Ga, double* restrict Gb,
                                       ptrdiff_t cap, const double* restrict u, ptrdiff_t n,
                                       double isc) {
        /* finiteness from the exponent bits: e = bits & EXP equals EXP only for inf and
         * nan, and then e + 2^52 carries into the (masked) sign bit; integer operations
         * the compiler vectorizes (a floating-point test would need a reduction) */
        const uint64_t EXP = 0x7ff0000000000000ULL, ONE = 0x0010000000000000ULL;
        uint64_t bad = 0, bits;
        ptrdiff_t l, c;
        for (l = 0; l < n; l++) {
            const double* ra = Ga + l * cap;
            double* rb = Gb + l * cap;
            double ul = u[l];
            for (c = 0; c < n; c++) {
                double v = ra[c] + ul * u[c] * isc;
                rb[c] = v;
                memcpy(&bits, &v, sizeof bits);
                bad |= (bits & EXP) + ONE;
            }
        }
        return (bad >> 63) == 0;
    }
    /* A[l, c] = A[I[l], I[c]] for l, c < m in place (I increasing; row stride cap): each
     * row copied as the runs of consecutive indices in I (two runs after one removal),
     * found once; row l reads row I[l] >= l and, within a row, position c reads
     * I[c] >= c, so no copy reads what another wrote. */
    POLK_CLONES static void polk_compact(double* A, ptrdiff_t cap, const ptrdiff_t* I,
                                         ptrdiff_t m) {
        enum { RUNS = 16 };
        ptrdiff_t first[RUNS], len[RUNS];
        ptrdiff_t l, c, k, q, nr = 0;
        for (c = 0; c < m && nr <= RUNS; ) {
            k = c + 1;
            while (k < m && I[k] == I[k - 1] + 1) k++;
            if (nr < RUNS) { first[nr] = c; len[nr] = k - c; }
            nr++;
            c = k;
        }
        for (l = 0; l < m; l++) {
            const double* ra = A + I[l] * cap;
            double* rb = A + l * cap;
            if (nr <= RUNS) {
                for (q = 0; q < nr; q++) {
                    const double* src = ra + I[first[q]];
                    double* dst = rb + first[q];
                    if (src != dst) memmove(dst, src, (size_t) len[q] * sizeof(double));
                }
            } else {
                for (c = 0; c < m; c++) rb[c] = ra[I[c]];
            }
        }
    }
    /* The bordered G~ of polk_border (n = M + 1 atoms, row and column M: -u / sc and
     * 1 / sc) with atom j removed, G~_{-j,-j} - g g' / g_j for g the column j of G~, in
     * one pass into the leading M x M block of Gb; returns 1 if it is finite. */
    POLK_CLONES static int polk_border_remove(const double* restrict Ga,
                                              double* restrict Gb, ptrdiff_t cap,
                                              const double* restrict u, ptrdiff_t M,
                                              double isc, const double* restrict g,
                                              ptrdiff_t j) {
        const uint64_t EXP = 0x7ff0000000000000ULL, ONE = 0x0010000000000000ULL;
        uint64_t bad = 0, bits;
        double igj = 1.0 / g[j];
        double v;
        ptrdiff_t lp, cp, l;
        for (lp = 0; lp < M; lp++) {
            l = lp + (lp >= j);
            double* rb = Gb + lp * cap;
            double gl = g[l];
            if (l < M) {
                const double* ra = Ga + l * cap;
                double ul = u[l];
                ptrdiff_t end = j < M ? j : M;
                for (cp = 0; cp < end; cp++) {
                    v = ra[cp] + ul * u[cp] * isc - gl * g[cp] * igj;
                    rb[cp] = v;
                    memcpy(&bits, &v, sizeof bits);
                    bad |= (bits & EXP) + ONE;
                }
                if (j < M) {
                    for (cp = j; cp < M - 1; cp++) {
                        v = ra[cp + 1] + ul * u[cp + 1] * isc - gl * g[cp + 1] * igj;
                        rb[cp] = v;
                        memcpy(&bits, &v, sizeof bits);
                        bad |= (bits & EXP) + ONE;
                    }
                    v = -ul * isc - gl * g[M] * igj;
                    rb[M - 1] = v;
                    memcpy(&bits, &v, sizeof bits);
                    bad |= (bits & EXP) + ONE;
                }
            } else {                                  /* the new atom's row (j < M) */
                for (cp = 0; cp < M - 1; cp++) {
                    ptrdiff_t c = cp + (cp >= j);
                    v = -u[c] * isc - gl * g[c] * igj;
                    rb[cp] = v;
                    memcpy(&bits, &v, sizeof bits);
                    bad |= (bits & EXP) + ONE;
                }
                v = isc - gl * g[M] * igj;
                rb[M - 1] = v;
                memcpy(&bits, &v, sizeof bits);
                bad |= (bits & EXP) + ONE;
            }
        }
        return (bad >> 63) == 0;
    }
    """
    int polk_border_remove(const double* Ga, double* Gb, Py_ssize_t cap, const double* u,
                           Py_ssize_t M, double isc, const double* g,
                           Py_ssize_t j) noexcept nogil
    void polk_compact(double* A, Py_ssize_t cap, const Py_ssize_t* I, Py_ssize_t m) noexcept nogil
    void polk_symv_add(const double* A, Py_ssize_t cap, const double* x, Py_ssize_t n,
                       double* y) noexcept nogil
    void polk_symv_sub(const double* A, Py_ssize_t cap, const double* x, Py_ssize_t n,
                       double* y) noexcept nogil
    int polk_border(const double* Ga, double* Gb, Py_ssize_t cap, const double* u,
                    Py_ssize_t n, double isc) noexcept nogil


cdef inline double products(const double* K, Py_ssize_t cap, const double* a, Py_ssize_t n,
                            double* b) noexcept nogil:
    """b = K a (K symmetric, row stride cap); returns a . b."""
    cdef Py_ssize_t l
    cdef double out = 0.0
    for l in range(n):
        b[l] = 0.0
    polk_symv_add(K, cap, a, n, b)
    for l in range(n):
        out += a[l] * b[l]
    return out


cdef inline bint all_finite(const double* a, Py_ssize_t n) noexcept nogil:
    """Whether a[0:n] is finite."""
    cdef Py_ssize_t l
    cdef bint ok = True
    for l in range(n):
        ok &= (a[l] - a[l] == 0.0)
    return ok


def polk_fast_pass(const double[:, ::1] X, const double[::1] s, const Py_ssize_t[::1] order,
                   Py_ssize_t r0, double[:, ::1] D, double[::1] w, double[:, ::1] K,
                   double[:, ::1] G, double[:, ::1] G2, Py_ssize_t M,
                   long long t_start, StepSpec step, PolkSpec polk, KernelSpec kern,
                   long long[::1] orders, double[::1] errors, double[::1] budgets,
                   double[::1] work, Py_ssize_t[::1] iwork):
    """Play rounds ``order[r0:]`` from a dictionary of size ``M``; see the module notes.

    The round at position r has the counter t = t_start + r + 1. ``step`` carries eta,
    lam, the ``PolkSchedule`` and the ``PolkLoss`` code, ``polk`` the KOMP budget and the
    tolerances, ``kern`` the kernel. ``K`` and ``G`` hold the state, ``G2`` is the second
    buffer of G (same shape); ``work`` needs ``7 * cap`` doubles and ``iwork``
    ``cap`` integers (cap = ``D.shape[0]``).

    Returns
    -------
    status : int
        ``STATUS_DONE``, ``STATUS_GROW``, ``STATUS_FALLBACK`` (round r not played),
        ``STATUS_REBUILD`` (round r - 1 played, G to be rebuilt) or ``STATUS_NONFINITE``
        (round r not played: it would have made the state non-finite).
    r : int
        Position in ``order`` of the next round to play.
    M : int
        Current model order.
    swapped : int
        1 if the state's G is now in ``G2`` (the caller then swaps its two G buffers),
        else 0.
    """
    cdef SourceRows rows
    cdef SlotStore st
    cdef Py_ssize_t cap = w.shape[0]
    _check_buffers(cap, K, G, G2, M, work, iwork)
    if D.shape[0] != cap or D.shape[1] != X.shape[1] or X.shape[1] == 0:
        raise ValueError("polk_fast_pass: inconsistent shapes (need D of shape (cap, p), "
                         "p >= 1)")
    if s.shape[0] < X.shape[0] or orders.shape[0] < order.shape[0] or (
            errors.shape[0] < order.shape[0] or budgets.shape[0] < order.shape[0]):
        raise ValueError("polk_fast_pass: need a label for every row and an output slot for "
                         "every round")
    dense_source(X, &rows)
    st.dense = True
    st.SV = &D[0, 0]
    st.L = 0
    return _play(&rows, &st, s, order, r0, w, K, G, G2, M, t_start, &step, &polk, &kern,
                 orders, errors, budgets, work, iwork)


def polk_fast_pass_csr(const double[::1] data, const int[::1] indices, const int[::1] indptr,
                       const double[::1] s, const Py_ssize_t[::1] order, Py_ssize_t r0,
                       int[:, ::1] D_ind, double[:, ::1] D_val, int[::1] D_nnz,
                       double[::1] w, double[:, ::1] K, double[:, ::1] G,
                       double[:, ::1] G2, Py_ssize_t M, long long t_start, StepSpec step,
                       PolkSpec polk, KernelSpec kern, long long[::1] orders,
                       double[::1] errors, double[::1] budgets, double[::1] work,
                       Py_ssize_t[::1] iwork):
    """:func:`polk_fast_pass` on the CSR rows ``(data, indices, indptr)`` (sorted int32
    indices) with a dictionary of sparse slots (see the module notes; L =
    ``D_ind.shape[1]`` must be at least the nnz of every row ``order[r0:]``, checked).
    It plays the rounds of the reference :func:`sosl._core._polk_ref.polk_pass` run on the
    rows densified (tests/_core/test_polk.py::test_sparse_pass_equals_reference)."""
    cdef SourceRows rows
    cdef SlotStore st
    cdef Py_ssize_t cap = w.shape[0]
    cdef Py_ssize_t n = indptr.shape[0] - 1
    cdef Py_ssize_t L = D_ind.shape[1]
    _check_buffers(cap, K, G, G2, M, work, iwork)
    csr_source(data, indices, indptr, order, r0, L, "polk_fast_pass_csr", &rows)
    if (D_ind.shape[0] != cap or D_val.shape[0] != cap or D_val.shape[1] != L
            or D_nnz.shape[0] != cap or s.shape[0] < n or L == 0
            or orders.shape[0] < order.shape[0] or errors.shape[0] < order.shape[0]
            or budgets.shape[0] < order.shape[0]):
        raise ValueError("polk_fast_pass_csr: inconsistent shapes (need D_ind and D_val of "
                         "shape (cap, L) with L >= 1, D_nnz of length cap, a label for "
                         "every row, an output slot for every round)")
    st.dense = False
    st.ind = &D_ind[0, 0]
    st.val = &D_val[0, 0]
    st.nnz = &D_nnz[0]
    st.L = L
    return _play(&rows, &st, s, order, r0, w, K, G, G2, M, t_start, &step, &polk, &kern,
                 orders, errors, budgets, work, iwork)


def polk_sparse_kernel_row(int[:, ::1] D_ind, double[:, ::1] D_val, int[::1] D_nnz,
                           Py_ssize_t M, const int[::1] xi, const double[::1] xv,
                           KernelSpec kern, double[::1] out):
    """out[q] = k(slot q, x) for the first M sparse slots and the sparse row ``(xi, xv)``
    (the merges of the typed pass); returns k(x, x). For the rounds played outside it."""
    cdef const int* pi = &xi[0] if xi.shape[0] > 0 else NULL
    cdef const double* pv = &xv[0] if xv.shape[0] > 0 else NULL
    if (M < 0 or M > D_ind.shape[0] or D_val.shape[0] != D_ind.shape[0]
            or D_val.shape[1] != D_ind.shape[1] or D_nnz.shape[0] != D_ind.shape[0]
            or out.shape[0] < M or xv.shape[0] != xi.shape[0] or D_ind.shape[1] == 0):
        raise ValueError("polk_sparse_kernel_row: inconsistent shapes")
    if M > 0:
        kernel_rows_slots(&D_ind[0, 0], &D_val[0, 0], &D_nnz[0], D_ind.shape[1], M, pi, pv,
                          xi.shape[0], kern.kind, kern.gamma, kern.degree, kern.coef0,
                          &out[0])
    return sparse_kernel_eval(pi, pv, xi.shape[0], pi, pv, xi.shape[0], kern.kind, kern.gamma,
                              kern.degree, kern.coef0)


cdef void _check_buffers(Py_ssize_t cap, double[:, ::1] K,
                         double[:, ::1] G, double[:, ::1] G2, Py_ssize_t M, double[::1] work,
                         Py_ssize_t[::1] iwork) except *:
    """The buffer shapes every entry point needs (cap = len(w)), and two distinct buffers
    of each pair."""
    if (cap == 0 or K.shape[0] != cap or K.shape[1] != cap or G.shape[0] != cap
            or G.shape[1] != cap
            or G2.shape[0] != cap or G2.shape[1] != cap or M < 0 or M > cap
            or work.shape[0] < 7 * cap or iwork.shape[0] < cap):
        raise ValueError("polk_fast_pass: inconsistent buffers (need K, G and G2 of shape "
                         "(cap, cap), 0 <= M <= cap, work of 7 cap and iwork of cap entries)")
    if &G[0, 0] == &G2[0, 0] or &K[0, 0] == &G[0, 0] or &K[0, 0] == &G2[0, 0]:
        raise ValueError("polk_fast_pass: K, G and G2 must be distinct buffers")


cdef tuple _play(const SourceRows* rows, SlotStore* st, const double[::1] s,
                 const Py_ssize_t[::1] order, Py_ssize_t r0, double[::1] w, double[:, ::1] K,
                 double[:, ::1] G, double[:, ::1] G2, Py_ssize_t M,
                 long long t_start, const StepSpec* step, const PolkSpec* polk,
                 const KernelSpec* kern, long long[::1] orders, double[::1] errors,
                 double[::1] budgets, double[::1] work, Py_ssize_t[::1] iwork):
    """Run the pass body without the GIL; ``(status, r, M, swapped)``."""
    cdef Py_ssize_t n_rounds = order.shape[0]
    cdef Py_ssize_t r = r0
    cdef int status = 0
    cdef int swapped = 0
    cdef double f
    if n_rounds > r0:
        with nogil:
            status = run(rows, st, &s[0], &order[0], n_rounds, &r, &w[0], w.shape[0],
                         &K[0, 0], &G[0, 0], &G2[0, 0], &M, t_start, step, polk,
                         kern, &orders[0], &errors[0], &budgets[0], &work[0], &iwork[0],
                         &swapped, &f)
    return status, r, M, swapped


cdef class PolkStepper:
    """The typed one-row path of :class:`sosl.POLK` on dense rows: one round of the pass
    body on buffers the model keeps from call to call (``D`` (cap, p), ``w`` (cap), ``K``,
    ``G``, ``G2`` (cap, cap), the history ``orders``, ``errors``, ``budgets``
    (hcap)), without allocating anything.

    ``step(x, s, t)`` plays round t on the row ``x`` (label sign ``s``) and returns the
    status of :func:`polk_fast_pass`, or ``-1`` (nothing done) when ``x`` is not a finite
    row of length p, ``-2`` when the buffers are full (the caller grows them). After
    ``STATUS_DONE`` or ``STATUS_REBUILD`` the round is committed: ``M`` atoms, ``n`` history
    entries, ``f`` the score f_t(x_t) before the round; the attributes ``K`` and ``G`` name
    the buffer holding the state's G (it alternates with ``G2``). Any other status
    leaves the state (the first ``M`` atoms, weights, rows and columns, the first ``n``
    history entries) exactly as it was.
    """

    cdef double[:, ::1] Dv
    cdef double[::1] wv
    cdef double[:, ::1] Kv, Gv, G2v
    cdef long long[::1] ov
    cdef double[::1] ev, bv, workv
    cdef Py_ssize_t[::1] iworkv
    cdef StepSpec step_
    cdef PolkSpec polk_
    cdef KernelSpec kern_
    cdef public object D, w, K, G, G2, orders, errors, budgets
    cdef public object views          # the model's attributes last published (POLK)
    cdef public Py_ssize_t M, n
    cdef Py_ssize_t published_M
    cdef public double f
    cdef double s_one[1]
    cdef Py_ssize_t order_one[1]

    def __init__(self, double[:, ::1] D, double[::1] w, double[:, ::1] K,
                 double[:, ::1] G, double[:, ::1] G2, long long[::1] orders,
                 double[::1] errors, double[::1] budgets, double[::1] work,
                 Py_ssize_t[::1] iwork, Py_ssize_t M, Py_ssize_t n, StepSpec step,
                 PolkSpec polk, KernelSpec kern):
        cdef Py_ssize_t cap = w.shape[0]
        _check_buffers(cap, K, G, G2, M, work, iwork)
        if (D.shape[0] != cap or D.shape[1] == 0 or errors.shape[0] != orders.shape[0]
                or budgets.shape[0] != orders.shape[0] or not 0 <= n <= orders.shape[0]):
            raise ValueError("PolkStepper: inconsistent buffers (need D of shape (cap, p), "
                             "p >= 1, and three history buffers of one length >= n)")
        self.Dv, self.wv, self.Kv, self.Gv, self.G2v = D, w, K, G, G2
        self.ov, self.ev, self.bv, self.workv, self.iworkv = orders, errors, budgets, work, iwork
        self.D, self.w, self.K, self.G, self.G2 = D.base, w.base, K.base, G.base, G2.base
        self.orders, self.errors, self.budgets = orders.base, errors.base, budgets.base
        self.M, self.n = M, n
        self.step_, self.polk_, self.kern_ = step, polk, kern
        self.f = 0.0
        self.views = None
        self.published_M = -1
        self.order_one[0] = 0

    def step(self, x, double s, long long t, double[::1] calib):
        """Round t on the dense row ``x``; the status (see the class notes). A committed
        round then takes the online Platt step of its score on ``calib`` (``[A, H]``, see
        :mod:`sosl._core._calibration`), as the general path does after its pass."""
        return self._step(x, s, t, calib)

    cdef int _step(self, x, double s, long long t, double[::1] calib):
        cdef const double[::1] xv
        cdef SourceRows rows
        cdef SlotStore st
        cdef Py_ssize_t p = self.Dv.shape[1]
        cdef Py_ssize_t cap = self.wv.shape[0]
        cdef Py_ssize_t r = 0
        cdef Py_ssize_t M = self.M
        cdef int status, swapped = 0
        cdef double f = 0.0
        try:
            xv = x
        except (TypeError, ValueError, BufferError):
            return -1
        if xv.shape[0] != p or not all_finite(&xv[0], p) or calib.shape[0] != 2:
            return -1
        if M + 1 > cap or self.n >= self.ov.shape[0]:
            return -2
        rows.dense = True
        rows.X = &xv[0]
        rows.p = p
        st.dense = True
        st.SV = &self.Dv[0, 0]
        st.L = 0
        self.s_one[0] = s
        with nogil:
            status = run(&rows, &st, self.s_one, self.order_one, 1, &r, &self.wv[0], cap,
                         &self.Kv[0, 0], &self.Gv[0, 0], &self.G2v[0, 0], &M,
                         t - 1, &self.step_, &self.polk_, &self.kern_, &self.ov[self.n],
                         &self.ev[self.n], &self.bv[self.n], &self.workv[0],
                         &self.iworkv[0], &swapped, &f)
        if status != 0 and status != 3:           # not DONE or REBUILD
            return status
        if swapped & 1:
            self.Gv, self.G2v = self.G2v, self.Gv
            self.G, self.G2 = self.G2, self.G
        self.M = M
        self.n += 1
        self.f = f
        if isfinite(f):
            platt_step(&calib[0], f, 1.0 if s > 0 else 0.0)
        return status

    def publish(self, dict d):
        """Point the model's fitted attributes (in its ``__dict__`` ``d``) at the first M
        atoms and n rounds of the buffers (views, which the next round updates in place)."""
        cdef Py_ssize_t M = self.M, n = self.n
        v = self.views
        if v is not None and self.published_M == M:   # D, w, K: the same buffers and order
            views = (v[0], v[1], v[2], self.G[:M, :M], self.orders[:n], self.errors[:n],
                     self.budgets[:n])
        else:
            views = (self.D[:M], self.w[:M], self.K[:M, :M], self.G[:M, :M],
                     self.orders[:n], self.errors[:n], self.budgets[:n])
        self.published_M = M
        d["support_vectors_"] = views[0]
        d["dual_coef_"] = views[1]
        d["gram_"] = views[2]
        d["_gram_inv"] = views[3]
        d["model_orders_"] = views[4]
        d["projection_errors_"] = views[5]
        d["projection_budgets_"] = views[6]
        self.views = views

    def is_current(self, dict d):
        """Whether the model's fitted attributes are still the views last published."""
        v = self.views
        return v is not None and (
            d["dual_coef_"] is v[1] and d["support_vectors_"] is v[0] and d["gram_"] is v[2]
            and d["_gram_inv"] is v[3] and d["model_orders_"] is v[4]
            and d["projection_errors_"] is v[5] and d["projection_budgets_"] is v[6])

    def learn(self, dict d, x, double s):
        """:meth:`step` on the model's ``__dict__`` ``d``: round ``d["t_"] + 1``, its Platt
        step on ``d["calibration_"]``; a committed round advances ``t_`` and ``n_seen_``
        and publishes the attributes. -3 (nothing done) when the attributes are not the
        views last published; else the status of :meth:`step`."""
        if not self.is_current(d):
            return -3
        t = d["t_"] + 1
        status = self._step(x, s, t, d["calibration_"])
        if status == 0 or status == 3:
            d["t_"] = t
            d["n_seen_"] += 1
            self.publish(d)
        return status


cdef int run(const SourceRows* rows, SlotStore* st, const double* s, const Py_ssize_t* order,
             Py_ssize_t n_rounds, Py_ssize_t* r_io, double* w, Py_ssize_t cap, double* K,
             double* G, double* Gx, Py_ssize_t* M_io, long long t_start,
             const StepSpec* step, const PolkSpec* polk, const KernelSpec* kern,
             long long* orders, double* errors, double* budgets, double* work,
             Py_ssize_t* I, int* swapped, double* f_last) noexcept nogil:
    """The pass body of every entry point; returns the status, updates ``*r_io``,
    ``*M_io``, ``*swapped`` (1: G now in the buffer given as ``Gx``) and ``*f_last``
    (f_t(x_t) of the last round played).

    A round reads the state (K, G, w, the first M atoms) and writes only outside it (the
    new atom's slot M, row and column M of K) until it is known to be finite: the bordered
    and downdated inverse goes to the other G buffer, the new weights to scratch; then it
    commits (weights, the compaction of K and of the atoms, the swap of the G buffers). A
    declined round therefore leaves the state exactly as it was."""
    cdef Py_ssize_t p = rows.p
    cdef Py_ssize_t M = M_io[0]
    cdef Py_ssize_t r, i, l, n, m, col, c, jstar
    cdef long long t
    cdef double* kx = &work[0]            # k_D(x_t), then b = K~ alpha (when needed)
    cdef double* u = &work[cap]           # G k_x, then the removed column of G, then residuals
    cdef double* a = &work[2 * cap]       # alpha (weights of f~), then the diff of komp_error
    cdef double* v = &work[3 * cap]       # the downdated weights
    cdef double* wn = &work[4 * cap]      # the new weights (committed once finite)
    cdef double* ve = &work[5 * cap]      # the downdated weights at their positions in D~
    cdef double* ky = &work[6 * cap]      # b - K~ ve
    cdef double* tmp
    cdef SourceRow xr
    cdef double y, eta_t, eps_t, eps2, kxx, f, g, scale, thr, sc, gjj, decay
    cdef double fn2, e2, err2, res, kmax, gmax, tol, isc, best, gam, wj
    cdef bint removed_any, have_b, ok
    cdef double lam = step.lam, eta = step.eta
    cdef int schedule = step.schedule, loss = step.loss
    cdef int eps_rule = polk.eps_rule
    cdef double epsilon = polk.epsilon, parsimony = polk.parsimony, rtol = polk.rtol
    cdef double safety = polk.safety, drift_tol = polk.drift_tol, drift_rel = polk.drift_rel
    cdef int kind = kern.kind
    cdef double gamma = kern.gamma, degree = kern.degree, coef0 = kern.coef0

    for r in range(r_io[0], n_rounds):
        if M + 1 > cap:
            r_io[0] = r
            M_io[0] = M
            return 1
        i = order[r]
        get_row(rows, i, &xr)
        y = s[i]
        t = t_start + r + 1
        eta_t = step_and_budget(t, eta, lam, schedule, eps_rule, epsilon, parsimony, &eps_t)
        eps2 = eps_t * eps_t

        # k_D(x_t), f_t(x_t), l'
        f = 0.0
        kxx = store_self_kernel(st, &xr, p, kind, gamma, degree, coef0)
        scale = kxx
        store_kernel_row(st, &xr, 0, M, p, kind, gamma, degree, coef0, kx)
        for l in range(M):
            f += w[l] * kx[l]
            if K[l * cap + l] > scale:
                scale = K[l * cap + l]
        g = loss_derivative(f, y, loss)

        # bordering: u = G k_x, sc = k(x, x) - k_x . u; easy case check
        thr = safety * rtol * scale
        if not scale > 0.0:
            r_io[0] = r
            M_io[0] = M
            return 2
        for l in range(M):
            u[l] = 0.0
        polk_symv_add(G, cap, kx, M, u)
        sc = kxx
        for l in range(M):
            sc -= kx[l] * u[l]
        if not sc > thr:
            r_io[0] = r
            M_io[0] = M
            return 2
        for l in range(M):
            gjj = G[l * cap + l] + u[l] * u[l] / sc
            if not (gjj > 0.0 and gjj * thr < 1.0):
                r_io[0] = r
                M_io[0] = M
                return 2

        # the new atom in slot M, row and column M of K (outside the state); the weights
        # alpha of f~
        isc = 1.0 / sc                    # products (u_l u_c) / sc keep G exactly symmetric
        ok = all_finite(u, M) and all_finite(kx, M)
        for l in range(M):
            K[l * cap + M] = kx[l]
            K[M * cap + l] = kx[l]
        K[M * cap + M] = kxx
        store_put(st, &xr, M, p)
        decay = 1.0 - eta_t * lam
        for l in range(M):
            a[l] = decay * w[l]
        a[M] = -eta_t * g
        n = M + 1

        # destructive KOMP (Algorithm 1) on (K~, alpha), full-rank branch of _komp, with
        # the bordered inverse G~ = [[G + u u' / sc, -u / sc], [-u' / sc, 1 / sc]] in the
        # other buffer Gx. Its first removal is chosen from the diagonal of G~ (O(M)), and
        # when there is one G~ is bordered and downdated in one pass (polk_border_remove);
        # further removals downdate Gx in place. b = K~ alpha and ||f~||^2 are only needed
        # after a removal (computed then).
        have_b = False
        fn2 = 0.0
        for l in range(n):
            I[l] = l
            v[l] = a[l]
        e2 = 0.0
        m = n
        removed_any = False
        jstar = -1
        if M >= 1:
            best = a[M] * a[M] * sc        # a_M^2 / G~_MM, G~_MM = 1 / sc
            jstar = M
            for l in range(M):
                gjj = G[l * cap + l] + u[l] * u[l] * isc
                gam = a[l] * a[l] / gjj
                if gam < best or (gam == best and l < jstar):
                    best = gam
                    jstar = l
            if not best <= eps2:
                jstar = -1
        if jstar >= 0:
            # the column jstar of G~ (into ky, free until the residual below)
            if jstar < M:
                for l in range(M):
                    ky[l] = G[l * cap + jstar] + u[l] * u[jstar] * isc
                ky[M] = -u[jstar] * isc
            else:
                for l in range(M):
                    ky[l] = -u[l] * isc
                ky[M] = isc
            ok = polk_border_remove(G, Gx, cap, u, M, isc, ky, jstar) and ok
            wj = v[jstar]
            for l in range(n - 1):
                c = l + (l >= jstar)
                v[l] = v[c] - ky[c] * (wj / ky[jstar])
                I[l] = I[c]
            e2 = best
            removed_any = True
            m = n - 1
        else:
            ok = polk_border(G, Gx, cap, u, M, isc) and ok
            for l in range(M):
                Gx[l * cap + M] = -u[l] * isc
                Gx[M * cap + l] = -u[l] * isc
            Gx[M * cap + M] = isc
        m = komp_removals(Gx, cap, v, I, u, m, &e2, eps2, -1.0, &removed_any)
        if m == 1:                        # the last atom's cost ||f~||^2 is needed now
            fn2 = products(K, cap, a, n, kx)
            have_b = True
            m = komp_removals(Gx, cap, v, I, u, m, &e2, eps2, fn2, &removed_any)

        if not removed_any:
            for l in range(n):
                wn[l] = a[l]
            err2 = 0.0
        else:
            if not have_b:
                fn2 = products(K, cap, a, n, kx)
                have_b = True
            # the weights: from the downdated ones v (= G b_I but for rounding), one
            # refinement step wn = v + G (b_I - K_II v), the residual read off b - K~ v~
            # (v~: v at the kept positions I, zero elsewhere: the same operations on the
            # kept rows, with exact zeros between them)
            for l in range(n):
                ve[l] = 0.0
                ky[l] = kx[l]
            for l in range(m):
                ve[I[l]] = v[l]
            polk_symv_sub(K, cap, ve, n, ky)
            for l in range(m):
                u[l] = ky[I[l]]
                wn[l] = 0.0
            polk_symv_add(Gx, cap, u, m, wn)
            for l in range(m):
                wn[l] = v[l] + wn[l]
            # ||f~ - f_new||_H^2 = diff' K~ diff, diff = alpha - beta (as komp_error)
            for l in range(m):
                a[I[l]] -= wn[l]
            err2 = products(K, cap, a, n, kx)
            if err2 < 0.0:
                err2 = 0.0
            ok = ok and all_finite(wn, m) and (err2 - err2 == 0.0)
        if not (ok and all_finite(wn, m) and fn2 - fn2 == 0.0):
            r_io[0] = r
            M_io[0] = M
            return 4

        # commit: weights, atoms (compacted: I increasing, reads never behind writes), the
        # buffers of K (after a removal) and G
        for l in range(m):
            w[l] = wn[l]
        if removed_any:
            polk_compact(K, cap, I, m)
            for l in range(m):
                store_move(st, I[l], l, p)
        tmp = G
        G = Gx
        Gx = tmp
        swapped[0] ^= 1
        f_last[0] = f
        M = m
        orders[r] = M
        errors[r] = sqrt(err2)
        budgets[r] = eps_t

        # drift check on one column of G, against a tolerance that follows the accuracy of
        # a fresh inverse (about 1e-15 * kappa, kappa = max K_ii max G_jj <= cond(K))
        if M > 0:
            col = <Py_ssize_t> (t % M)
            kmax = 0.0
            gmax = 0.0
            for l in range(M):
                if K[l * cap + l] > kmax:
                    kmax = K[l * cap + l]
                if G[l * cap + l] > gmax:
                    gmax = G[l * cap + l]
            tol = drift_rel * kmax * gmax
            if tol < drift_tol:
                tol = drift_tol
            for l in range(M):
                u[l] = -1.0 if l == col else 0.0
            polk_symv_add(K, cap, &G[col * cap], M, u)   # G symmetric: its row col
            res = 0.0
            for l in range(M):
                if fabs(u[l]) > res:
                    res = fabs(u[l])
            if not res <= tol:
                r_io[0] = r + 1
                M_io[0] = M
                return 3
    r_io[0] = n_rounds
    M_io[0] = M
    return 0
