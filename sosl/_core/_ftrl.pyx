# cython: language_level=3
"""Typed kernel of FTRL-AUC: one ``nogil`` loop over CSR rows, O(k) per round.

A round reads and writes only the k stored entries of its row: the score and the
FTRL-Proximal update (F3)-(F5) of the touched coordinates; the weights of the
other coordinates do not change (their gradient entry is 0). The NumPy reference, one
line per equation with the tags (F1)-(F5), is :mod:`sosl._core._ftrl_ref`.

The state of coordinate j, (w_j, z_j, n_j), is row j of one C-contiguous (p, 3) array,
so a round reads and writes one cache line per stored entry instead of three (the
``w_``, ``z_`` and ``sq_grad_`` of :class:`sosl.FTRLAUC` are its columns).

The pass guards itself, so that a caller need not copy the O(p) state first: every
value it writes is checked for finiteness (an ``x - x`` sum per row, a NaN when any
entry is not finite), and the pass stops after the first row that produced a non-finite
value. Given an undo log it records the old (w, z, n) of each entry before writing it,
sequentially (O(k) per row, no search for the distinct columns); on a stop it puts the
class counts and mean scores back and replays the log backwards: the state is then
exactly as before the call. (F5) is evaluated without a branch on the sign of z
(``copysign``; a branch on it is mispredicted half the time), and the update of a row's
entries runs two at a time (``sosl_ftrl_row`` below).
"""

import numpy as np

cimport numpy as cnp

cnp.import_array()

cdef extern from *:
    """
    /* The update (F3)-(F5) of the k stored entries of one row, in place on the (p, 3)
     * state S, two entries at a time with SSE2 (every x86-64 processor): the two square
     * roots and the division of an entry are the costliest steps of the round, and the
     * packed instructions do two entries for about the price of one. Each lane computes
     * exactly what the scalar loop below computes (the same correctly rounded operations
     * in the same order, no fused multiply-add), so the result does not depend on where
     * an entry falls. With undo != NULL the old (w, z, n) of each entry is written there
     * first, three doubles per entry in the order of the row. Returns a sum of x - x over
     * the values written: 0, or NaN if one of them is not finite. */
    #include <math.h>
    #include <stddef.h>
    #if defined(__SSE2__)
    #include <emmintrin.h>
    #endif
    static inline double sosl_ftrl_row(double* S, const int* idx, const double* x,
                                       ptrdiff_t n, double c, double l1, double gamma,
                                       double inv_gamma, double denom0, double* undo) {
        double chk = 0.0;
        ptrdiff_t k = 0;
    #if defined(__SSE2__)
        const __m128d vc = _mm_set1_pd(c), vl1 = _mm_set1_pd(l1), vgam = _mm_set1_pd(gamma);
        const __m128d vinv = _mm_set1_pd(inv_gamma), vden = _mm_set1_pd(denom0);
        const __m128d sign = _mm_set1_pd(-0.0);
        __m128d vchk = _mm_setzero_pd();
        double lanes[2];
        for (; k + 2 <= n; k += 2) {
            double* a = S + 3 * (ptrdiff_t) idx[k];
            double* b = S + 3 * (ptrdiff_t) idx[k + 1];
            const __m128d wo = _mm_set_pd(b[0], a[0]);
            const __m128d zo = _mm_set_pd(b[1], a[1]);
            const __m128d so = _mm_set_pd(b[2], a[2]);
            if (undo) {
                undo[0] = a[0]; undo[1] = a[1]; undo[2] = a[2];
                undo[3] = b[0]; undo[4] = b[1]; undo[5] = b[2];
                undo += 6;
            }
            const __m128d g = _mm_mul_pd(vc, _mm_loadu_pd(x + k));
            const __m128d nn = _mm_add_pd(so, _mm_mul_pd(g, g));                 /* (F4) */
            const __m128d sn = _mm_sqrt_pd(nn);
            const __m128d zn = _mm_sub_pd(_mm_add_pd(zo, g), _mm_mul_pd(        /* (F3), (F4) */
                _mm_mul_pd(_mm_sub_pd(sn, _mm_sqrt_pd(so)), vinv), wo));
            const __m128d cs = _mm_or_pd(_mm_and_pd(zn, sign), vl1);            /* sign(z) l1 */
            __m128d wn = _mm_div_pd(_mm_mul_pd(_mm_sub_pd(cs, zn), vgam),       /* (F5) */
                                    _mm_add_pd(sn, vden));
            wn = _mm_andnot_pd(_mm_cmple_pd(_mm_andnot_pd(sign, zn), vl1), wn);
            vchk = _mm_add_pd(vchk, _mm_add_pd(_mm_add_pd(_mm_sub_pd(zn, zn),
                                                          _mm_sub_pd(nn, nn)),
                                               _mm_sub_pd(wn, wn)));
            _mm_storel_pd(a, wn);
            _mm_storeh_pd(b, wn);
            _mm_storel_pd(a + 1, zn);
            _mm_storeh_pd(b + 1, zn);
            _mm_storel_pd(a + 2, nn);
            _mm_storeh_pd(b + 2, nn);
        }
        _mm_storeu_pd(lanes, vchk);
        chk = lanes[0] + lanes[1];
    #endif
        for (; k < n; k++) {
            double* a = S + 3 * (ptrdiff_t) idx[k];
            const double wo = a[0], zo = a[1], so = a[2];
            if (undo) {
                undo[0] = wo; undo[1] = zo; undo[2] = so;
                undo += 3;
            }
            const double g = c * x[k];
            const double nn = so + g * g;                                        /* (F4) */
            const double sn = sqrt(nn);
            const double zn = (zo + g) - ((sn - sqrt(so)) * inv_gamma) * wo;     /* (F3), (F4) */
            double wn = ((copysign(l1, zn) - zn) * gamma) / (sn + denom0);       /* (F5) */
            wn = fabs(zn) <= l1 ? 0.0 : wn;
            a[0] = wn;
            a[1] = zn;
            a[2] = nn;
            chk += ((zn - zn) + (nn - nn)) + (wn - wn);
        }
        return chk;
    }
    """
    double sosl_ftrl_row(double* S, const int* idx, const double* x, Py_ssize_t n, double c,
                         double l1, double gamma, double inv_gamma, double denom0,
                         double* undo) noexcept nogil


def ftrl_pass(const double[::1] data, const int[::1] indices, const int[::1] indptr,
              const double[::1] s, const Py_ssize_t[::1] order, double[:, ::1] wzn,
              long long[::1] N, double[::1] score,
              long long t0, double l1, double l2, double beta, double gamma,
              double[:, ::1] undo=None, double[::1] pre=None):
    """Run FTRL-AUC over the CSR rows ``order``; update the state in place.

    See :func:`sosl._core._ftrl_ref.ftrl_pass` for the parameters (the reference takes
    dense rows and the three p-vectors apart); ``wzn`` holds (w, z, n) as its columns,
    shape (p, 3). ``undo``: None, or an (m, 3) log with m at least the number of stored
    entries of the rows in ``order``; with it a pass that stops leaves the state exactly
    as it was. ``pre``: None, or an array of at least ``len(order)`` values; ``pre[q]``
    then receives the decision value of row ``order[q]`` under the state before its own
    round (progressive validation): the score ``w_t.x`` the round computes for its
    gradient, plus the intercept ``-(a + b) / 2`` of the class means before the round
    (0 until both classes have been seen), the sum ``ftrl_scores`` forms for that state.
    Rows from the one that stopped the pass on are not meaningful.

    Returns
    -------
    t : int
        The round counter after the pass (t0 + the rounds played).
    bad : int
        -1 when every value written is finite; else the position in ``order`` of the row
        that produced the first non-finite value. The pass then stopped, put the class
        counts, the mean scores and t back as they were and, given ``undo``, ``wzn`` too.
    """
    cdef Py_ssize_t nq = order.shape[0]
    cdef Py_ssize_t q, i, k, j, pos = 0
    cdef Py_ssize_t bad = -1
    cdef long long t = t0
    cdef long long N0 = N[0], N1 = N[1]
    cdef double score0 = score[0], score1 = score[1]
    cdef bint log = undo is not None
    cdef bint out = pre is not None
    cdef int own
    cdef double y, f, p, c, chk = 0.0
    cdef double inv_gamma = 1.0 / gamma
    cdef double denom0 = beta + gamma * l2   # (F5): w = (sign(z) l1 - z) gamma / (sqrt(n) + denom0)
    cdef double* S = NULL                    # p = 0: no row has a stored entry
    cdef double* U = NULL
    cdef const int* Ip = NULL
    cdef const double* Dp = NULL
    if data.shape[0] != indices.shape[0]:
        raise ValueError(f"data has {data.shape[0]} entries, indices {indices.shape[0]}")
    if data.shape[0] > 0:
        Ip = &indices[0]
        Dp = &data[0]
    if wzn.shape[1] != 3:
        raise ValueError(f"wzn must have 3 columns (w, z, n), got {wzn.shape[1]}")
    if wzn.shape[0] > 0:
        S = &wzn[0, 0]
    if out and pre.shape[0] < nq:
        raise ValueError(f"pre has {pre.shape[0]} values; the pass plays {nq} rows")
    if log:
        if undo.shape[1] != 3:
            raise ValueError(f"undo must have 3 columns, got {undo.shape[1]}")
        for q in range(nq):
            i = order[q]
            pos += indptr[i + 1] - indptr[i]
        if undo.shape[0] < pos:
            raise ValueError(f"undo has {undo.shape[0]} rows; the pass writes {pos} entries")
        pos = 0
        if undo.shape[0] > 0:
            U = &undo[0, 0]
    with nogil:
        for q in range(nq):
            i = order[q]
            t += 1
            y = s[i]
            own = 1 if y > 0 else 0
            f = 0.0
            for k in range(indptr[i], indptr[i + 1]):
                f += S[3 * indices[k]] * data[k]                      # score with w_t
            if out:                                  # the decision value before the round
                pre[q] = f + (-0.5 * (score[0] + score[1]) if N[0] > 0 and N[1] > 0
                              else 0.0)
            N[own] += 1
            score[own] += (f - score[own]) / <double> N[own]
            p = <double> N[1] / <double> (N[0] + N[1])
            if y > 0:
                c = 2.0 * (1.0 - p) * (f - score[0] - 1.0)            # (F2)
            else:
                c = 2.0 * p * (f - score[1] + 1.0)                    # (F2)
            chk += score[own] - score[own]
            k = indptr[i]
            chk += sosl_ftrl_row(S, Ip + k, Dp + k, indptr[i + 1] - k, c, l1, gamma,
                                 inv_gamma, denom0, U + 3 * pos if log else NULL)
            if log:
                pos += indptr[i + 1] - k
            if chk != chk:
                bad = q
                break
        if bad >= 0:
            N[0] = N0
            N[1] = N1
            score[0] = score0
            score[1] = score1
            t = t0
        if bad >= 0 and log:
            q = bad
            while q >= 0:
                i = order[q]
                k = indptr[i + 1] - 1
                while k >= indptr[i]:
                    pos -= 1
                    j = 3 * indices[k]
                    S[j] = undo[pos, 0]
                    S[j + 1] = undo[pos, 1]
                    S[j + 2] = undo[pos, 2]
                    k -= 1
                q -= 1
    return t, bad


def ftrl_scores(const double[::1] data, const int[::1] indices, const int[::1] indptr,
                const double[:, ::1] wzn, double offset):
    """``X @ w + offset`` for CSR rows X and the weights, column 0 of ``wzn`` (O(nnz)).

    The products of a row are summed in the order of its stored entries, from 0.
    """
    cdef Py_ssize_t n = indptr.shape[0] - 1
    cdef Py_ssize_t i, k
    cdef double f
    cdef const double* S = NULL
    out = np.empty(n)
    cdef double[::1] o = out
    if wzn.shape[1] != 3:
        raise ValueError(f"wzn must have 3 columns (w, z, n), got {wzn.shape[1]}")
    if wzn.shape[0] > 0:
        S = &wzn[0, 0]
    with nogil:
        for i in range(n):
            f = 0.0
            for k in range(indptr[i], indptr[i + 1]):
                f += S[3 * indices[k]] * data[k]
            o[i] = f + offset
    return out


def columns_of(object wzn, object w, object z, object n):
    """Whether the 1-D arrays w, z, n are the columns 0, 1, 2 of the C-contiguous float64
    (p, 3) array ``wzn`` (views of it, in that order). O(1)."""
    cdef cnp.ndarray b, a
    cdef char* base
    cdef Py_ssize_t col = 0
    if type(wzn) is not np.ndarray:
        return False
    b = wzn
    if not (cnp.PyArray_TYPE(b) == cnp.NPY_DOUBLE and cnp.PyArray_NDIM(b) == 2
            and cnp.PyArray_DIM(b, 1) == 3 and cnp.PyArray_IS_C_CONTIGUOUS(b)):
        return False
    base = <char*> cnp.PyArray_DATA(b)
    for v in (w, z, n):
        if type(v) is not np.ndarray:
            return False
        a = v
        if not (cnp.PyArray_BASE(a) == <cnp.PyObject*> b and cnp.PyArray_NDIM(a) == 1
                and cnp.PyArray_TYPE(a) == cnp.NPY_DOUBLE
                and cnp.PyArray_DIM(a, 0) == cnp.PyArray_DIM(b, 0)
                and cnp.PyArray_STRIDE(a, 0) == 3 * sizeof(double)
                and <char*> cnp.PyArray_DATA(a) == base + col * sizeof(double)):
            return False
        col += 1
    return True
