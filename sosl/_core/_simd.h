/* Small dense loops of the linear kernel (_linear.pyx) and its inlined pass.
 *
 * - Where GCC's target_clones is available (x86-64 Linux), each loop is compiled for the
 *   build's baseline, for x86-64-v3 (AVX2 + FMA) and, with GCC 12+, for x86-64-v4
 *   (AVX-512: 32 vector registers); the clone is picked at load time, so a build is portable.
 * - Sums over p are kept in four interleaved partial sums (lane i sums entries 4 J + i in
 *   order of J) and nothing licenses reordering, so results do not depend on the clone.
 * - Matrix products are row-scaled additions (axpy) over blocks of four rows; a hand-
 *   vectorised loop stays only if it clears the bar of docs/performance.md against its
 *   plain loop in a same-run A/B.
 * - Each loop is an always-inlined body of p, copied for every constant p below 32 and
 *   dispatched from one exported function; sosl_small_pass inlines a whole round.
 * - A round is bound by instruction throughput, not by its dependency chain. What was
 *   tried, with figures: docs/performance.md; bench_linear_ab.py times two builds.
 * Pointers marked restrict never alias. */
#ifndef SOSL_SIMD_H
#define SOSL_SIMD_H

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "_calibration.h"   /* sosl_platt_step, SOSL_ROUNDED */

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) \
    && !defined(SOSL_NO_CLONES)
#if __GNUC__ >= 12
#define SOSL_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define SOSL_CLONES __attribute__((target_clones("avx2", "default")))
#endif
#else
#define SOSL_CLONES
#endif

/* Each loop below is written once, as an always-inlined body of its dimension p; the
 * exported function dispatches every p below 32 (the kernel's own-loop range) to a copy
 * compiled for that constant p, which the compiler unrolls (straight-line vector code, no
 * loop set-up or remainder handling: at p = 20 these dominated), and every other p to the
 * generic copy; each copy performs the same operations in the same order (the same bits
 * as the generic copy up to the compiler's choice of fused multiply-adds, seen at
 * p = 6, 10, 14: 2e-16 relative). The loops along
 * a row of a rank-one or rank-k update stay loops (``unroll 1``): fully unrolled, GCC
 * vectorised the constant-p copies across rows instead, with permutations, and at p = 16
 * they ran slower. At p = 1 those two keep the generic copy: there GCC contracted the
 * constant copy of the rank-k update into fused multiply-adds otherwise than k rank-one
 * updates, and batching must not change a bit (``tests/test_linear.py``). The remainder
 * loops run only when p is not a multiple of four (dead code in the constant copies,
 * which GCC would otherwise analyse and warn about). */
#define SOSL_BODY static inline __attribute__((always_inline))

/* Four doubles as one value (GCC and Clang vector extensions: one AVX register in the
 * x86-64-v3 clone, two SSE2 registers in the baseline one); loads and stores through
 * memcpy, which compiles to unaligned vector moves. */
typedef double sosl_v4 __attribute__((vector_size(32)));
#define SOSL_LD(v, ptr) memcpy(&(v), (ptr), sizeof(sosl_v4))
#define SOSL_ST(ptr, v) memcpy((ptr), &(v), sizeof(sosl_v4))
#if defined(__clang__) || __GNUC__ >= 12
#define SOSL_SHUF(a, b, i, j, k, l) __builtin_shufflevector((a), (b), i, j, k, l)
#else
typedef long long sosl_v4i __attribute__((vector_size(32)));
#define SOSL_SHUF(a, b, i, j, k, l) __builtin_shuffle((a), (b), (sosl_v4i){i, j, k, l})
#endif

/* a = y (x - xbar); returns the margin w.a. Written in four-wide vectors (the scalar
 * form with four partial sums compiled to 145 instructions at p = 20, mostly lane
 * shuffles): the same operations, lane i summing the entries 4 J + i in the order of J. */
SOSL_BODY double sosl_margin_body(const double* restrict x, const double* restrict xbar,
                                      const double* restrict w, double y, double* restrict a,
                                      ptrdiff_t p) {
    sosl_v4 acc = {0.0, 0.0, 0.0, 0.0};
    double s0;
    ptrdiff_t l = 0;
    for (; l + 4 <= p; l += 4) {
        sosl_v4 X, B, Wv, A;
        SOSL_LD(X, x + l);
        SOSL_LD(B, xbar + l);
        SOSL_LD(Wv, w + l);
        A = y * (X - B);
        SOSL_ST(a + l, A);
        acc = acc + Wv * A;
    }
    s0 = acc[0];
    if (p % 4) for (; l < p; l++) {
        a[l] = y * (x[l] - xbar[l]);
        s0 += w[l] * a[l];
    }
    return (s0 + acc[1]) + (acc[2] + acc[3]);
}

/* u.v */
SOSL_BODY double sosl_dot_body(const double* restrict u, const double* restrict v,
                                   ptrdiff_t p) {
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    ptrdiff_t l = 0;
    for (; l + 4 <= p; l += 4) {
        s0 += u[l] * v[l];
        s1 += u[l + 1] * v[l + 1];
        s2 += u[l + 2] * v[l + 2];
        s3 += u[l + 3] * v[l + 3];
    }
    if (p % 4) for (; l < p; l++) s0 += u[l] * v[l];
    return (s0 + s1) + (s2 + s3);
}

/* [sum of the lanes of a0, ..., sum of the lanes of a3], each as (x0 + x1) + (x2 + x3). */
#define SOSL_REDUCE4(out, a0, a1, a2, a3) do {                                       \
        sosl_v4 t01_ = SOSL_SHUF(a0, a1, 0, 4, 2, 6) + SOSL_SHUF(a0, a1, 1, 5, 3, 7);  \
        sosl_v4 t23_ = SOSL_SHUF(a2, a3, 0, 4, 2, 6) + SOSL_SHUF(a2, a3, 1, 5, 3, 7);  \
        (out) = SOSL_SHUF(t01_, t23_, 0, 1, 4, 5) + SOSL_SHUF(t01_, t23_, 2, 3, 6, 7); \
    } while (0)

/* One sweep over the padded upper triangle of C (row j from column 4 floor(j/4) on: the
 * upper triangle and the lower half of the 4 x 4 diagonal blocks; the rest of the lower
 * triangle is neither read nor written): first the k pending rank-one terms
 * C += f_i v_i v_i' (rows of V) are applied to each entry, in the order of the rows, with
 * the same operations as sosl_small_rank_one (so the same bits), and the entry is stored
 * back; then, with u = alpha w (written to u), the entry enters Sw = C u twice by
 * symmetry: C[j, l] u[j] into Sw[l] (down the column, four rows at a time) and, off the
 * diagonal blocks, C[j, l] u[l] into Sw[j] (along the row, in four lane-wise partial
 * sums per row, added up at the end of the block row). Returns w.Sw (w' Sigma w for
 * Sigma = alpha C). Each entry is read and written once per round instead of read twice
 * and written once (a separate rank-k update, then a product), and the update touches
 * 60% of the matrix at p = 20 instead of all of it. k = 0: no stores. Terms are applied
 * here only for p a multiple of four (k must be 0 otherwise): the scalar code of the
 * remainder rows and columns was contracted into fused multiply-adds otherwise than the
 * rank-one update (seen at p = 6, 13, 25, 29), and batching must not change a bit, so
 * sosl_small_symv applies them with sosl_small_rank_k first for such p. */
SOSL_BODY double sosl_small_symv_body(double* restrict C, const double* restrict V,
                                      const double* restrict f, ptrdiff_t k,
                                      const double* restrict w, double alpha,
                                      double* restrict u, double* restrict Sw, ptrdiff_t p) {
    const ptrdiff_t nb = p / 4, q = 4 * (p / 4);    /* full blocks; first remainder index */
    ptrdiff_t J, L, i, j, l;
    for (l = 0; l < p; l++) {
        u[l] = alpha * w[l];
        Sw[l] = 0.0;
    }
    for (J = 0; J < nb; J++) {
        const ptrdiff_t j0 = 4 * J;
        double* restrict r0 = C + j0 * p;
        double* restrict r1 = r0 + p;
        double* restrict r2 = r1 + p;
        double* restrict r3 = r2 + p;
        const double u0 = u[j0], u1 = u[j0 + 1], u2 = u[j0 + 2], u3 = u[j0 + 3];
        sosl_v4 a0 = {0.0, 0.0, 0.0, 0.0}, a1 = a0, a2 = a0, a3 = a0, S, R, U;
        double t0 = 0.0, t1 = 0.0, t2 = 0.0, t3 = 0.0;
        for (L = J; L < nb; L++) {
            const ptrdiff_t l0 = 4 * L;
            sosl_v4 c0, c1, c2, c3;
            SOSL_LD(c0, r0 + l0);
            SOSL_LD(c1, r1 + l0);
            SOSL_LD(c2, r2 + l0);
            SOSL_LD(c3, r3 + l0);
            for (i = 0; i < k; i++) {
                const double* restrict v = V + i * p;
                sosl_v4 vl;
                SOSL_LD(vl, v + l0);
                c0 = c0 + (f[i] * v[j0]) * vl;
                c1 = c1 + (f[i] * v[j0 + 1]) * vl;
                c2 = c2 + (f[i] * v[j0 + 2]) * vl;
                c3 = c3 + (f[i] * v[j0 + 3]) * vl;
            }
            if (k) {
                SOSL_ST(r0 + l0, c0);
                SOSL_ST(r1 + l0, c1);
                SOSL_ST(r2 + l0, c2);
                SOSL_ST(r3 + l0, c3);
            }
            SOSL_LD(S, Sw + l0);
            S = S + ((u0 * c0 + u1 * c1) + (u2 * c2 + u3 * c3));
            SOSL_ST(Sw + l0, S);
            if (L > J) {
                SOSL_LD(U, u + l0);
                a0 = a0 + c0 * U;
                a1 = a1 + c1 * U;
                a2 = a2 + c2 * U;
                a3 = a3 + c3 * U;
            }
        }
        if (p % 4) for (l = q; l < p; l++) {        /* the remainder columns (k = 0) */
            const double c0 = r0[l], c1 = r1[l], c2 = r2[l], c3 = r3[l];
            Sw[l] += (u0 * c0 + u1 * c1) + (u2 * c2 + u3 * c3);
            t0 += c0 * u[l];
            t1 += c1 * u[l];
            t2 += c2 * u[l];
            t3 += c3 * u[l];
        }
        SOSL_REDUCE4(R, a0, a1, a2, a3);
        SOSL_LD(S, Sw + j0);
        S = S + R;
        if (p % 4) {
            sosl_v4 T = {t0, t1, t2, t3};
            S = S + T;
        }
        SOSL_ST(Sw + j0, S);
    }
    if (p % 4) for (j = q; j < p; j++) {            /* the remainder diagonal block (k = 0) */
        const double* restrict row = C + j * p;
        const double uj = u[j];
        for (l = q; l < p; l++) Sw[l] += row[l] * uj;
    }
    return sosl_dot_body(w, Sw, p);
}

/* The update part of a block of the register sweep, shared by sosl_small_symv_reg_body and
 * sosl_small_update_reg_body (the same text, so the same operations): the products
 * g[i][m] = f_i v_i[j0 + m] of block row j0, formed once for k <= 4 pending terms, and the
 * k terms added to the four rows c0..c3 of block (j0, l0), one after the other (the
 * constant-k copies read g; more terms form the products in place). */
#define SOSL_BLOCK_COEFFS()                                                   \
    if (k <= 4) for (i = 0; i < k; i++) {                                     \
        const double* restrict v_ = V + i * p;                                \
        g[i][0] = f[i] * v_[j0];                                              \
        g[i][1] = f[i] * v_[j0 + 1];                                          \
        g[i][2] = f[i] * v_[j0 + 2];                                          \
        g[i][3] = f[i] * v_[j0 + 3];                                          \
    }
#define SOSL_BLOCK_TERMS()                                                    \
    if (k <= 4) for (i = 0; i < k; i++) {                                     \
        sosl_v4 vl_;                                                          \
        SOSL_LD(vl_, V + i * p + l0);                                         \
        c0 = c0 + g[i][0] * vl_;                                              \
        c1 = c1 + g[i][1] * vl_;                                              \
        c2 = c2 + g[i][2] * vl_;                                              \
        c3 = c3 + g[i][3] * vl_;                                              \
    } else for (i = 0; i < k; i++) {                                          \
        const double* restrict v_ = V + i * p;                                \
        sosl_v4 vl_;                                                          \
        SOSL_LD(vl_, v_ + l0);                                                \
        c0 = c0 + (f[i] * v_[j0]) * vl_;                                      \
        c1 = c1 + (f[i] * v_[j0 + 1]) * vl_;                                  \
        c2 = c2 + (f[i] * v_[j0 + 2]) * vl_;                                  \
        c3 = c3 + (f[i] * v_[j0 + 3]) * vl_;                                  \
    }

/* The same sweep for p < 32 (at most seven full blocks), with the same operations in the
 * same order, but the column sums of Sw held in registers across the block rows instead
 * of read and written back once per block row: in sosl_small_symv_body the sum of block
 * column L goes through memory L + 1 times, a chain of stores and loads that the next
 * round's w waits on (measured at p = 20: the store-to-load round trips were the hottest
 * instructions of the pass). Sw is stored once per block, when its sum is final (after
 * its own block row), and w.Sw accumulates there in four lanes, as sosl_dot_body sums
 * it (lane i: the entries 4 J + i in the order of J, then the remainder into lane 0), so
 * the result needs no second pass over Sw. Only the constant-p copies use it (the loops
 * over blocks unrolled, the arrays below held in registers). */
#define SOSL_NB_MAX 8
SOSL_BODY double sosl_small_symv_reg_body(double* restrict C, const double* restrict V,
                                          const double* restrict f, ptrdiff_t k,
                                          const double* restrict w, double alpha,
                                          double* restrict u, double* restrict Sw,
                                          ptrdiff_t p) {
    const ptrdiff_t nb = p / 4, q = 4 * (p / 4);
    sosl_v4 Wb[SOSL_NB_MAX], Ub[SOSL_NB_MAX], S[SOSL_NB_MAX];
    sosl_v4 acc = {0.0, 0.0, 0.0, 0.0};
    double Sr[4] = {0.0, 0.0, 0.0, 0.0}, ur[4] = {0.0, 0.0, 0.0, 0.0}, s0;
    ptrdiff_t J, L, i, j, l;
#pragma GCC unroll 8
    for (J = 0; J < nb; J++) {
        SOSL_LD(Wb[J], w + 4 * J);
        Ub[J] = alpha * Wb[J];
        SOSL_ST(u + 4 * J, Ub[J]);
        S[J] = acc;                                  /* zero */
    }
    if (p % 4) for (l = q; l < p; l++) {
        ur[l - q] = alpha * w[l];
        u[l] = ur[l - q];
    }
#pragma GCC unroll 8
    for (J = 0; J < nb; J++) {
        const ptrdiff_t j0 = 4 * J;
        double* restrict r0 = C + j0 * p;
        double* restrict r1 = r0 + p;
        double* restrict r2 = r1 + p;
        double* restrict r3 = r2 + p;
        const double u0 = Ub[J][0], u1 = Ub[J][1], u2 = Ub[J][2], u3 = Ub[J][3];
        sosl_v4 a0 = {0.0, 0.0, 0.0, 0.0}, a1 = a0, a2 = a0, a3 = a0, R;
        double t0 = 0.0, t1 = 0.0, t2 = 0.0, t3 = 0.0;
        double g[4][4];         /* k <= 4: f_i v_i[j0 + m], the same products, formed once */
        SOSL_BLOCK_COEFFS()
#pragma GCC unroll 8
        for (L = J; L < nb; L++) {
            const ptrdiff_t l0 = 4 * L;
            sosl_v4 c0, c1, c2, c3;
            SOSL_LD(c0, r0 + l0);
            SOSL_LD(c1, r1 + l0);
            SOSL_LD(c2, r2 + l0);
            SOSL_LD(c3, r3 + l0);
            SOSL_BLOCK_TERMS()                       /* the constant-k copies, or in place */
            if (k) {
                SOSL_ST(r0 + l0, c0);
                SOSL_ST(r1 + l0, c1);
                SOSL_ST(r2 + l0, c2);
                SOSL_ST(r3 + l0, c3);
            }
            S[L] = S[L] + ((u0 * c0 + u1 * c1) + (u2 * c2 + u3 * c3));
            if (L > J) {
                a0 = a0 + c0 * Ub[L];
                a1 = a1 + c1 * Ub[L];
                a2 = a2 + c2 * Ub[L];
                a3 = a3 + c3 * Ub[L];
            }
        }
        if (p % 4) for (l = q; l < p; l++) {        /* the remainder columns (k = 0) */
            const double c0 = r0[l], c1 = r1[l], c2 = r2[l], c3 = r3[l];
            Sr[l - q] += (u0 * c0 + u1 * c1) + (u2 * c2 + u3 * c3);
            t0 += c0 * ur[l - q];
            t1 += c1 * ur[l - q];
            t2 += c2 * ur[l - q];
            t3 += c3 * ur[l - q];
        }
        SOSL_REDUCE4(R, a0, a1, a2, a3);
        S[J] = S[J] + R;
        if (p % 4) {
            sosl_v4 T = {t0, t1, t2, t3};
            S[J] = S[J] + T;
        }
        SOSL_ST(Sw + j0, S[J]);
        acc = acc + Wb[J] * S[J];
    }
    s0 = acc[0];
    if (p % 4) {
        for (j = q; j < p; j++) {                   /* the remainder diagonal block (k = 0) */
            const double* restrict row = C + j * p;
            const double uj = ur[j - q];
            for (l = q; l < p; l++) Sr[l - q] += row[l] * uj;
        }
        for (l = q; l < p; l++) {
            Sw[l] = Sr[l - q];
            s0 += w[l] * Sr[l - q];
        }
    }
    return (s0 + acc[1]) + (acc[2] + acc[3]);
}

/* C += f d d' on the padded upper triangle of the p x p row-major matrix (row j from
 * column 4 floor(j/4) on, as sosl_small_symv_body reads it). */
SOSL_BODY void sosl_small_rank_one_body(double* restrict C, const double* restrict d,
                                            double f, ptrdiff_t p) {
    ptrdiff_t j, l;
    for (j = 0; j < p; j++) {
        const double fd = f * d[j];
        double* restrict row = C + j * p;
#pragma GCC unroll 1
        for (l = j & ~(ptrdiff_t)3; l < p; l++) row[l] += fd * d[l];
    }
}

/* C += sum_i f_i v_i v_i' over the k rows v_i of V (row-major k x p), on the whole matrix.
 * Each entry receives the k terms one after the other, in the order of the rows, with the
 * same operations as k calls of sosl_small_rank_one (on the same padded upper triangle):
 * the result is the same to the bit, but C is read and written once per four terms
 * instead of once per term. */
SOSL_BODY void sosl_small_rank_k_body(double* restrict C, const double* restrict V,
                                          const double* restrict f, ptrdiff_t k, ptrdiff_t p) {
    ptrdiff_t i = 0, j, l;
    for (; i + 4 <= k; i += 4) {
        const double* restrict v0 = V + i * p;
        const double* restrict v1 = v0 + p;
        const double* restrict v2 = v1 + p;
        const double* restrict v3 = v2 + p;
        for (j = 0; j < p; j++) {
            const double u0 = f[i] * v0[j], u1 = f[i + 1] * v1[j];
            const double u2 = f[i + 2] * v2[j], u3 = f[i + 3] * v3[j];
            double* restrict row = C + j * p;
#pragma GCC unroll 1
            for (l = j & ~(ptrdiff_t)3; l < p; l++)
                row[l] = (((row[l] + u0 * v0[l]) + u1 * v1[l]) + u2 * v2[l]) + u3 * v3[l];
        }
    }
    if (k - i == 3) {
        const double* restrict v0 = V + i * p;
        const double* restrict v1 = v0 + p;
        const double* restrict v2 = v1 + p;
        for (j = 0; j < p; j++) {
            const double u0 = f[i] * v0[j], u1 = f[i + 1] * v1[j], u2 = f[i + 2] * v2[j];
            double* restrict row = C + j * p;
#pragma GCC unroll 1
            for (l = j & ~(ptrdiff_t)3; l < p; l++) row[l] = ((row[l] + u0 * v0[l]) + u1 * v1[l]) + u2 * v2[l];
        }
    } else if (k - i == 2) {
        const double* restrict v0 = V + i * p;
        const double* restrict v1 = v0 + p;
        for (j = 0; j < p; j++) {
            const double u0 = f[i] * v0[j], u1 = f[i + 1] * v1[j];
            double* restrict row = C + j * p;
#pragma GCC unroll 1
            for (l = j & ~(ptrdiff_t)3; l < p; l++) row[l] = (row[l] + u0 * v0[l]) + u1 * v1[l];
        }
    } else if (k - i == 1) {
        sosl_small_rank_one_body(C, V + i * p, f[i], p);
    }
}

/* The signs of ``binary_signs`` (_linear.pyx): +1 where y == hi, -1 elsewhere; returns how
 * many labels are neither lo nor hi (a NaN among them). Selects and a count, no branch. */
SOSL_CLONES static ptrdiff_t sosl_signs_i64(const int64_t* restrict y, ptrdiff_t n,
                                            int64_t lo, int64_t hi,
                                            double* restrict out) {
    int64_t bad = 0;
    ptrdiff_t i;
    for (i = 0; i < n; i++) {
        const int64_t v = y[i];
        out[i] = v == hi ? 1.0 : -1.0;
        bad += (v != hi) & (v != lo);
    }
    return (ptrdiff_t)bad;
}

SOSL_CLONES static ptrdiff_t sosl_signs_f64(const double* restrict y, ptrdiff_t n, double lo,
                                            double hi, double* restrict out) {
    int64_t bad = 0;
    ptrdiff_t i;
    for (i = 0; i < n; i++) {
        const double v = y[i];
        out[i] = v == hi ? 1.0 : -1.0;
        bad += (v != hi) & (v != lo);
    }
    return (ptrdiff_t)bad;
}

/* C += sum_i f_i v_i v_i' (the k rows v_i of V) as sosl_small_rank_k_body, for p a multiple
 * of four below 32: block by block with the register sweep's update part (the same
 * operations in the same order, each entry receiving the k terms one after the other:
 * the same bits), its four rows of a block loaded and stored once for all k terms
 * (sosl_small_rank_k_body reads and writes each entry once per four terms, along rows,
 * with loops GCC vectorises with remainders), for the flushes of the passes: at the end
 * of every partial_fit batch, and when a class's terms reach the budget. */
SOSL_BODY void sosl_small_update_reg_body(double* restrict C, const double* restrict V,
                                          const double* restrict f, ptrdiff_t k,
                                          ptrdiff_t p) {
    const ptrdiff_t nb = p / 4;
    ptrdiff_t J, L, i;
#pragma GCC unroll 8
    for (J = 0; J < nb; J++) {
        const ptrdiff_t j0 = 4 * J;
        double* restrict r0 = C + j0 * p;
        double* restrict r1 = r0 + p;
        double* restrict r2 = r1 + p;
        double* restrict r3 = r2 + p;
        double g[4][4];
        SOSL_BLOCK_COEFFS()
#pragma GCC unroll 8
        for (L = J; L < nb; L++) {
            const ptrdiff_t l0 = 4 * L;
            sosl_v4 c0, c1, c2, c3;
            SOSL_LD(c0, r0 + l0);
            SOSL_LD(c1, r1 + l0);
            SOSL_LD(c2, r2 + l0);
            SOSL_LD(c3, r3 + l0);
            SOSL_BLOCK_TERMS()
            SOSL_ST(r0 + l0, c0);
            SOSL_ST(r1 + l0, c1);
            SOSL_ST(r2 + l0, c2);
            SOSL_ST(r3 + l0, c3);
        }
    }
}

/* A hint that the row at ptr (n doubles) will be read soon. */
static inline void sosl_prefetch(const double* ptr, ptrdiff_t n) {
#if defined(__GNUC__)
    ptrdiff_t l;
    for (l = 0; l < n; l += 8) __builtin_prefetch(ptr + l);
    __builtin_prefetch(ptr + n - 1);
#else
    (void)ptr;
    (void)n;
#endif
}

/* d = x - xbar, then xbar += d / W (inv_W = 1 / W). Returns max_l |x_l|, or NaN when x
 * holds a NaN or an infinity (x_l * 0 is 0 exactly for every finite x_l): four lane-wise
 * maxima and sums, as sosl_abs_max, so a NaN compares false and keeps the maximum. */
SOSL_BODY double sosl_mean_update_body(const double* restrict x, double* restrict xbar,
                                           double* restrict d, double inv_W, ptrdiff_t p) {
    double m0 = 0.0, m1 = 0.0, m2 = 0.0, m3 = 0.0, z0 = 0.0, z1 = 0.0, z2 = 0.0, z3 = 0.0, v;
    ptrdiff_t l = 0;
    for (; l + 4 <= p; l += 4) {
        d[l] = x[l] - xbar[l];
        d[l + 1] = x[l + 1] - xbar[l + 1];
        d[l + 2] = x[l + 2] - xbar[l + 2];
        d[l + 3] = x[l + 3] - xbar[l + 3];
        xbar[l] += d[l] * inv_W;
        xbar[l + 1] += d[l + 1] * inv_W;
        xbar[l + 2] += d[l + 2] * inv_W;
        xbar[l + 3] += d[l + 3] * inv_W;
        v = fabs(x[l]);     m0 = v > m0 ? v : m0;     z0 += x[l] * 0.0;
        v = fabs(x[l + 1]); m1 = v > m1 ? v : m1;     z1 += x[l + 1] * 0.0;
        v = fabs(x[l + 2]); m2 = v > m2 ? v : m2;     z2 += x[l + 2] * 0.0;
        v = fabs(x[l + 3]); m3 = v > m3 ? v : m3;     z3 += x[l + 3] * 0.0;
    }
    if (p % 4) for (; l < p; l++) {
        d[l] = x[l] - xbar[l];
        xbar[l] += d[l] * inv_W;
        v = fabs(x[l]);
        m0 = v > m0 ? v : m0;
        z0 += x[l] * 0.0;
    }
    if ((z0 + z1) + (z2 + z3) != 0.0) return NAN;
    m0 = m1 > m0 ? m1 : m0;
    m2 = m3 > m2 ? m3 : m2;
    return m2 > m0 ? m2 : m0;
}

/* max_l |x_l| over n values, or NaN when one of them is a NaN or an infinity. */
SOSL_CLONES static double sosl_abs_max(const double* restrict x, ptrdiff_t n) {
    double m0 = 0.0, m1 = 0.0, m2 = 0.0, m3 = 0.0;
    double z0 = 0.0, z1 = 0.0, z2 = 0.0, z3 = 0.0;
    double v;
    ptrdiff_t l = 0;
    for (; l + 4 <= n; l += 4) {
        v = fabs(x[l]);     m0 = v > m0 ? v : m0;     z0 += x[l] * 0.0;
        v = fabs(x[l + 1]); m1 = v > m1 ? v : m1;     z1 += x[l + 1] * 0.0;
        v = fabs(x[l + 2]); m2 = v > m2 ? v : m2;     z2 += x[l + 2] * 0.0;
        v = fabs(x[l + 3]); m3 = v > m3 ? v : m3;     z3 += x[l + 3] * 0.0;
    }
    for (; l < n; l++) {
        v = fabs(x[l]);
        m0 = v > m0 ? v : m0;
        z0 += x[l] * 0.0;
    }
    if ((z0 + z1) + (z2 + z3) != 0.0) return NAN;
    m0 = m1 > m0 ? m1 : m0;
    m2 = m3 > m2 ? m3 : m2;
    return m2 > m0 ? m2 : m0;
}

/* Eq. (12) with the gradient assembled in place: w -= eta (lam w + g_a a + g_c Cw). */
SOSL_BODY void sosl_step_body(double* restrict w, const double* restrict a,
                                  const double* restrict Cw, double eta, double lam,
                                  double g_a, double g_c, ptrdiff_t p) {
    ptrdiff_t l = 0;
    for (; l + 4 <= p; l += 4) {     /* four-wide loads, as a and Cw were stored (a wider
                                        load over two stores waits for both to commit) */
        sosl_v4 Wv, A, G;
        SOSL_LD(Wv, w + l);
        SOSL_LD(A, a + l);
        SOSL_LD(G, Cw + l);
        Wv = Wv - eta * (lam * Wv + g_a * A + g_c * G);
        SOSL_ST(w + l, Wv);
    }
    if (p % 4) for (; l < p; l++) w[l] -= eta * (lam * w[l] + g_a * a[l] + g_c * Cw[l]);
}

/* w -= eta lam w (a round before the other class has been seen). */
SOSL_CLONES static void sosl_shrink(double* restrict w, double eta, double lam, ptrdiff_t p) {
    ptrdiff_t l;
    for (l = 0; l < p; l++) w[l] -= eta * (lam * w[l]);
}

SOSL_CLONES static double sosl_margin(const double* restrict x, const double* restrict xbar,
                                      const double* restrict w, double y, double* restrict a,
                                      ptrdiff_t p) {
    switch (p) {
    case 1: return sosl_margin_body(x, xbar, w, y, a, 1);
    case 2: return sosl_margin_body(x, xbar, w, y, a, 2);
    case 3: return sosl_margin_body(x, xbar, w, y, a, 3);
    case 4: return sosl_margin_body(x, xbar, w, y, a, 4);
    case 5: return sosl_margin_body(x, xbar, w, y, a, 5);
    case 6: return sosl_margin_body(x, xbar, w, y, a, 6);
    case 7: return sosl_margin_body(x, xbar, w, y, a, 7);
    case 8: return sosl_margin_body(x, xbar, w, y, a, 8);
    case 9: return sosl_margin_body(x, xbar, w, y, a, 9);
    case 10: return sosl_margin_body(x, xbar, w, y, a, 10);
    case 11: return sosl_margin_body(x, xbar, w, y, a, 11);
    case 12: return sosl_margin_body(x, xbar, w, y, a, 12);
    case 13: return sosl_margin_body(x, xbar, w, y, a, 13);
    case 14: return sosl_margin_body(x, xbar, w, y, a, 14);
    case 15: return sosl_margin_body(x, xbar, w, y, a, 15);
    case 16: return sosl_margin_body(x, xbar, w, y, a, 16);
    case 17: return sosl_margin_body(x, xbar, w, y, a, 17);
    case 18: return sosl_margin_body(x, xbar, w, y, a, 18);
    case 19: return sosl_margin_body(x, xbar, w, y, a, 19);
    case 20: return sosl_margin_body(x, xbar, w, y, a, 20);
    case 21: return sosl_margin_body(x, xbar, w, y, a, 21);
    case 22: return sosl_margin_body(x, xbar, w, y, a, 22);
    case 23: return sosl_margin_body(x, xbar, w, y, a, 23);
    case 24: return sosl_margin_body(x, xbar, w, y, a, 24);
    case 25: return sosl_margin_body(x, xbar, w, y, a, 25);
    case 26: return sosl_margin_body(x, xbar, w, y, a, 26);
    case 27: return sosl_margin_body(x, xbar, w, y, a, 27);
    case 28: return sosl_margin_body(x, xbar, w, y, a, 28);
    case 29: return sosl_margin_body(x, xbar, w, y, a, 29);
    case 30: return sosl_margin_body(x, xbar, w, y, a, 30);
    case 31: return sosl_margin_body(x, xbar, w, y, a, 31);
    default: return sosl_margin_body(x, xbar, w, y, a, p);
    }
}

SOSL_CLONES static double sosl_dot(const double* restrict u, const double* restrict v,
                                   ptrdiff_t p) {
    switch (p) {
    case 1: return sosl_dot_body(u, v, 1);
    case 2: return sosl_dot_body(u, v, 2);
    case 3: return sosl_dot_body(u, v, 3);
    case 4: return sosl_dot_body(u, v, 4);
    case 5: return sosl_dot_body(u, v, 5);
    case 6: return sosl_dot_body(u, v, 6);
    case 7: return sosl_dot_body(u, v, 7);
    case 8: return sosl_dot_body(u, v, 8);
    case 9: return sosl_dot_body(u, v, 9);
    case 10: return sosl_dot_body(u, v, 10);
    case 11: return sosl_dot_body(u, v, 11);
    case 12: return sosl_dot_body(u, v, 12);
    case 13: return sosl_dot_body(u, v, 13);
    case 14: return sosl_dot_body(u, v, 14);
    case 15: return sosl_dot_body(u, v, 15);
    case 16: return sosl_dot_body(u, v, 16);
    case 17: return sosl_dot_body(u, v, 17);
    case 18: return sosl_dot_body(u, v, 18);
    case 19: return sosl_dot_body(u, v, 19);
    case 20: return sosl_dot_body(u, v, 20);
    case 21: return sosl_dot_body(u, v, 21);
    case 22: return sosl_dot_body(u, v, 22);
    case 23: return sosl_dot_body(u, v, 23);
    case 24: return sosl_dot_body(u, v, 24);
    case 25: return sosl_dot_body(u, v, 25);
    case 26: return sosl_dot_body(u, v, 26);
    case 27: return sosl_dot_body(u, v, 27);
    case 28: return sosl_dot_body(u, v, 28);
    case 29: return sosl_dot_body(u, v, 29);
    case 30: return sosl_dot_body(u, v, 30);
    case 31: return sosl_dot_body(u, v, 31);
    default: return sosl_dot_body(u, v, p);
    }
}

SOSL_CLONES static void sosl_small_rank_one(double* restrict C, const double* restrict d,
                                            double f, ptrdiff_t p) {
    switch (p) {
    case 2: sosl_small_rank_one_body(C, d, f, 2); return;
    case 3: sosl_small_rank_one_body(C, d, f, 3); return;
    case 4: sosl_small_rank_one_body(C, d, f, 4); return;
    case 5: sosl_small_rank_one_body(C, d, f, 5); return;
    case 6: sosl_small_rank_one_body(C, d, f, 6); return;
    case 7: sosl_small_rank_one_body(C, d, f, 7); return;
    case 8: sosl_small_rank_one_body(C, d, f, 8); return;
    case 9: sosl_small_rank_one_body(C, d, f, 9); return;
    case 10: sosl_small_rank_one_body(C, d, f, 10); return;
    case 11: sosl_small_rank_one_body(C, d, f, 11); return;
    case 12: sosl_small_rank_one_body(C, d, f, 12); return;
    case 13: sosl_small_rank_one_body(C, d, f, 13); return;
    case 14: sosl_small_rank_one_body(C, d, f, 14); return;
    case 15: sosl_small_rank_one_body(C, d, f, 15); return;
    case 16: sosl_small_rank_one_body(C, d, f, 16); return;
    case 17: sosl_small_rank_one_body(C, d, f, 17); return;
    case 18: sosl_small_rank_one_body(C, d, f, 18); return;
    case 19: sosl_small_rank_one_body(C, d, f, 19); return;
    case 20: sosl_small_rank_one_body(C, d, f, 20); return;
    case 21: sosl_small_rank_one_body(C, d, f, 21); return;
    case 22: sosl_small_rank_one_body(C, d, f, 22); return;
    case 23: sosl_small_rank_one_body(C, d, f, 23); return;
    case 24: sosl_small_rank_one_body(C, d, f, 24); return;
    case 25: sosl_small_rank_one_body(C, d, f, 25); return;
    case 26: sosl_small_rank_one_body(C, d, f, 26); return;
    case 27: sosl_small_rank_one_body(C, d, f, 27); return;
    case 28: sosl_small_rank_one_body(C, d, f, 28); return;
    case 29: sosl_small_rank_one_body(C, d, f, 29); return;
    case 30: sosl_small_rank_one_body(C, d, f, 30); return;
    case 31: sosl_small_rank_one_body(C, d, f, 31); return;
    default: sosl_small_rank_one_body(C, d, f, p);
    }
}

/* sosl_small_update_reg_body for the constant p of a multiple of four below 32 (returns), with
 * the count K of terms */
#define SOSL_UPDATE_BY_P(K) do {                                          \
        switch (p) {                                                      \
        case 4: sosl_small_update_reg_body(C, V, f, (K), 4); return;      \
        case 8: sosl_small_update_reg_body(C, V, f, (K), 8); return;      \
        case 12: sosl_small_update_reg_body(C, V, f, (K), 12); return;    \
        case 16: sosl_small_update_reg_body(C, V, f, (K), 16); return;    \
        case 20: sosl_small_update_reg_body(C, V, f, (K), 20); return;    \
        case 24: sosl_small_update_reg_body(C, V, f, (K), 24); return;    \
        case 28: sosl_small_update_reg_body(C, V, f, (K), 28); return;    \
        default: break;                                                   \
        }                                                                 \
    } while (0)

SOSL_CLONES static void sosl_small_rank_k(double* restrict C, const double* restrict V,
                                          const double* restrict f, ptrdiff_t k, ptrdiff_t p) {
    if (p % 4 == 0 && p < 32) {    /* the blocked copies, constant p and (k <= 4) k */
        switch (k) {
        case 1: SOSL_UPDATE_BY_P(1); break;
        case 2: SOSL_UPDATE_BY_P(2); break;
        case 3: SOSL_UPDATE_BY_P(3); break;
        case 4: SOSL_UPDATE_BY_P(4); break;
        default: SOSL_UPDATE_BY_P(k);
        }
    }
    switch (p) {
    case 2: sosl_small_rank_k_body(C, V, f, k, 2); return;
    case 3: sosl_small_rank_k_body(C, V, f, k, 3); return;
    case 4: sosl_small_rank_k_body(C, V, f, k, 4); return;
    case 5: sosl_small_rank_k_body(C, V, f, k, 5); return;
    case 6: sosl_small_rank_k_body(C, V, f, k, 6); return;
    case 7: sosl_small_rank_k_body(C, V, f, k, 7); return;
    case 8: sosl_small_rank_k_body(C, V, f, k, 8); return;
    case 9: sosl_small_rank_k_body(C, V, f, k, 9); return;
    case 10: sosl_small_rank_k_body(C, V, f, k, 10); return;
    case 11: sosl_small_rank_k_body(C, V, f, k, 11); return;
    case 12: sosl_small_rank_k_body(C, V, f, k, 12); return;
    case 13: sosl_small_rank_k_body(C, V, f, k, 13); return;
    case 14: sosl_small_rank_k_body(C, V, f, k, 14); return;
    case 15: sosl_small_rank_k_body(C, V, f, k, 15); return;
    case 16: sosl_small_rank_k_body(C, V, f, k, 16); return;
    case 17: sosl_small_rank_k_body(C, V, f, k, 17); return;
    case 18: sosl_small_rank_k_body(C, V, f, k, 18); return;
    case 19: sosl_small_rank_k_body(C, V, f, k, 19); return;
    case 20: sosl_small_rank_k_body(C, V, f, k, 20); return;
    case 21: sosl_small_rank_k_body(C, V, f, k, 21); return;
    case 22: sosl_small_rank_k_body(C, V, f, k, 22); return;
    case 23: sosl_small_rank_k_body(C, V, f, k, 23); return;
    case 24: sosl_small_rank_k_body(C, V, f, k, 24); return;
    case 25: sosl_small_rank_k_body(C, V, f, k, 25); return;
    case 26: sosl_small_rank_k_body(C, V, f, k, 26); return;
    case 27: sosl_small_rank_k_body(C, V, f, k, 27); return;
    case 28: sosl_small_rank_k_body(C, V, f, k, 28); return;
    case 29: sosl_small_rank_k_body(C, V, f, k, 29); return;
    case 30: sosl_small_rank_k_body(C, V, f, k, 30); return;
    case 31: sosl_small_rank_k_body(C, V, f, k, 31); return;
    default: sosl_small_rank_k_body(C, V, f, k, p);
    }
}

SOSL_CLONES static double sosl_small_symv(double* restrict C, const double* restrict V,
                                          const double* restrict f, ptrdiff_t k,
                                          const double* restrict w, double alpha,
                                          double* restrict u, double* restrict Sw,
                                          ptrdiff_t p) {
    if (k > 0 && p % 4) {           /* see sosl_small_symv_body */
        sosl_small_rank_k(C, V, f, k, p);
        k = 0;
    }
    if (k == 0) {                   /* a copy without the update and its stores */
        switch (p) {
        case 1: return sosl_small_symv_reg_body(C, V, f, 0, w, alpha, u, Sw, 1);
        case 2: return sosl_small_symv_reg_body(C, V, f, 0, w, alpha, u, Sw, 2);
        case 3: return sosl_small_symv_reg_body(C, V, f, 0, w, alpha, u, Sw, 3);
        case 4: return sosl_small_symv_reg_body(C, V, f, 0, w, alpha, u, Sw, 4);
        case 5: return sosl_small_symv_reg_body(C, V, f, 0, w, alpha, u, Sw, 5);
        case 6: return sosl_small_symv_reg_body(C, V, f, 0, w, alpha, u, Sw, 6);
        case 7: return sosl_small_symv_reg_body(C, V, f, 0, w, alpha, u, Sw, 7);
        case 8: return sosl_small_symv_reg_body(C, V, f, 0, w, alpha, u, Sw, 8);
        case 9: return sosl_small_symv_reg_body(C, V, f, 0, w, alpha, u, Sw, 9);
        case 10: return sosl_small_symv_reg_body(C, V, f, 0, w, alpha, u, Sw, 10);
        case 11: return sosl_small_symv_reg_body(C, V, f, 0, w, alpha, u, Sw, 11);
        case 12: return sosl_small_symv_reg_body(C, V, f, 0, w, alpha, u, Sw, 12);
        case 13: return sosl_small_symv_reg_body(C, V, f, 0, w, alpha, u, Sw, 13);
        case 14: return sosl_small_symv_reg_body(C, V, f, 0, w, alpha, u, Sw, 14);
        case 15: return sosl_small_symv_reg_body(C, V, f, 0, w, alpha, u, Sw, 15);
        case 16: return sosl_small_symv_reg_body(C, V, f, 0, w, alpha, u, Sw, 16);
        case 17: return sosl_small_symv_reg_body(C, V, f, 0, w, alpha, u, Sw, 17);
        case 18: return sosl_small_symv_reg_body(C, V, f, 0, w, alpha, u, Sw, 18);
        case 19: return sosl_small_symv_reg_body(C, V, f, 0, w, alpha, u, Sw, 19);
        case 20: return sosl_small_symv_reg_body(C, V, f, 0, w, alpha, u, Sw, 20);
        case 21: return sosl_small_symv_reg_body(C, V, f, 0, w, alpha, u, Sw, 21);
        case 22: return sosl_small_symv_reg_body(C, V, f, 0, w, alpha, u, Sw, 22);
        case 23: return sosl_small_symv_reg_body(C, V, f, 0, w, alpha, u, Sw, 23);
        case 24: return sosl_small_symv_reg_body(C, V, f, 0, w, alpha, u, Sw, 24);
        case 25: return sosl_small_symv_reg_body(C, V, f, 0, w, alpha, u, Sw, 25);
        case 26: return sosl_small_symv_reg_body(C, V, f, 0, w, alpha, u, Sw, 26);
        case 27: return sosl_small_symv_reg_body(C, V, f, 0, w, alpha, u, Sw, 27);
        case 28: return sosl_small_symv_reg_body(C, V, f, 0, w, alpha, u, Sw, 28);
        case 29: return sosl_small_symv_reg_body(C, V, f, 0, w, alpha, u, Sw, 29);
        case 30: return sosl_small_symv_reg_body(C, V, f, 0, w, alpha, u, Sw, 30);
        case 31: return sosl_small_symv_reg_body(C, V, f, 0, w, alpha, u, Sw, 31);
        default: return sosl_small_symv_body(C, V, f, 0, w, alpha, u, Sw, p);
        }
    }
    if (k <= 4) {   /* one to four pending terms (most rounds with any): copies for that
                       constant k, whose products f_i v_i[j] are formed once per block row
                       instead of once per block */
        switch (k) {
        case 1:
            switch (p) {
            case 4: return sosl_small_symv_reg_body(C, V, f, 1, w, alpha, u, Sw, 4);
            case 8: return sosl_small_symv_reg_body(C, V, f, 1, w, alpha, u, Sw, 8);
            case 12: return sosl_small_symv_reg_body(C, V, f, 1, w, alpha, u, Sw, 12);
            case 16: return sosl_small_symv_reg_body(C, V, f, 1, w, alpha, u, Sw, 16);
            case 20: return sosl_small_symv_reg_body(C, V, f, 1, w, alpha, u, Sw, 20);
            case 24: return sosl_small_symv_reg_body(C, V, f, 1, w, alpha, u, Sw, 24);
            case 28: return sosl_small_symv_reg_body(C, V, f, 1, w, alpha, u, Sw, 28);
            default: break;
            }
            break;
        case 2:
            switch (p) {
            case 4: return sosl_small_symv_reg_body(C, V, f, 2, w, alpha, u, Sw, 4);
            case 8: return sosl_small_symv_reg_body(C, V, f, 2, w, alpha, u, Sw, 8);
            case 12: return sosl_small_symv_reg_body(C, V, f, 2, w, alpha, u, Sw, 12);
            case 16: return sosl_small_symv_reg_body(C, V, f, 2, w, alpha, u, Sw, 16);
            case 20: return sosl_small_symv_reg_body(C, V, f, 2, w, alpha, u, Sw, 20);
            case 24: return sosl_small_symv_reg_body(C, V, f, 2, w, alpha, u, Sw, 24);
            case 28: return sosl_small_symv_reg_body(C, V, f, 2, w, alpha, u, Sw, 28);
            default: break;
            }
            break;
        case 3:
            switch (p) {
            case 4: return sosl_small_symv_reg_body(C, V, f, 3, w, alpha, u, Sw, 4);
            case 8: return sosl_small_symv_reg_body(C, V, f, 3, w, alpha, u, Sw, 8);
            case 12: return sosl_small_symv_reg_body(C, V, f, 3, w, alpha, u, Sw, 12);
            case 16: return sosl_small_symv_reg_body(C, V, f, 3, w, alpha, u, Sw, 16);
            case 20: return sosl_small_symv_reg_body(C, V, f, 3, w, alpha, u, Sw, 20);
            case 24: return sosl_small_symv_reg_body(C, V, f, 3, w, alpha, u, Sw, 24);
            case 28: return sosl_small_symv_reg_body(C, V, f, 3, w, alpha, u, Sw, 28);
            default: break;
            }
            break;
        case 4:
            switch (p) {
            case 4: return sosl_small_symv_reg_body(C, V, f, 4, w, alpha, u, Sw, 4);
            case 8: return sosl_small_symv_reg_body(C, V, f, 4, w, alpha, u, Sw, 8);
            case 12: return sosl_small_symv_reg_body(C, V, f, 4, w, alpha, u, Sw, 12);
            case 16: return sosl_small_symv_reg_body(C, V, f, 4, w, alpha, u, Sw, 16);
            case 20: return sosl_small_symv_reg_body(C, V, f, 4, w, alpha, u, Sw, 20);
            case 24: return sosl_small_symv_reg_body(C, V, f, 4, w, alpha, u, Sw, 24);
            case 28: return sosl_small_symv_reg_body(C, V, f, 4, w, alpha, u, Sw, 28);
            default: break;
            }
            break;
        default: break;
        }
    }
    switch (p) {
    case 4: return sosl_small_symv_reg_body(C, V, f, k, w, alpha, u, Sw, 4);
    case 8: return sosl_small_symv_reg_body(C, V, f, k, w, alpha, u, Sw, 8);
    case 12: return sosl_small_symv_reg_body(C, V, f, k, w, alpha, u, Sw, 12);
    case 16: return sosl_small_symv_reg_body(C, V, f, k, w, alpha, u, Sw, 16);
    case 20: return sosl_small_symv_reg_body(C, V, f, k, w, alpha, u, Sw, 20);
    case 24: return sosl_small_symv_reg_body(C, V, f, k, w, alpha, u, Sw, 24);
    case 28: return sosl_small_symv_reg_body(C, V, f, k, w, alpha, u, Sw, 28);
    default: return sosl_small_symv_body(C, V, f, k, w, alpha, u, Sw, p);
    }
}

/* The sweep of sosl_small_symv for one constant p, a multiple of four below 32 (the pass
 * below takes no other p), inlined into the pass: the same copies (k = 0, k = 1..4, the
 * generic k), so the same bits. */
SOSL_BODY double sosl_small_symv_inl(double* restrict C, const double* restrict V,
                                     const double* restrict f, ptrdiff_t k,
                                     const double* restrict w, double alpha,
                                     double* restrict u, double* restrict Sw, ptrdiff_t p) {
    if (k == 0) return sosl_small_symv_reg_body(C, V, f, 0, w, alpha, u, Sw, p);
    switch (k) {
    case 1: return sosl_small_symv_reg_body(C, V, f, 1, w, alpha, u, Sw, p);
    case 2: return sosl_small_symv_reg_body(C, V, f, 2, w, alpha, u, Sw, p);
    case 3: return sosl_small_symv_reg_body(C, V, f, 3, w, alpha, u, Sw, p);
    case 4: return sosl_small_symv_reg_body(C, V, f, 4, w, alpha, u, Sw, p);
    default: return sosl_small_symv_reg_body(C, V, f, k, w, alpha, u, Sw, p);
    }
}

/* The loss's value and partial derivatives, as ``loss_grad`` of the loss home (_losses.pxd),
 * whose address the pass is given: the losses stay defined once, and the rounds get their
 * bits (one call a round). */
typedef double (*sosl_loss_grad_fn)(int loss, double mu, double s2, double* d_mu,
                                    double* d_s2);


/* The pass of linear_pass and Stepper.batch (_linear.pyx) on the own loops, for rows of
 * weight one and p a multiple of four below 32 (at other p GCC fused the remainder loops'
 * multiply-adds otherwise in this context, at p = 3, 7, 11, 15, 18, 19, 22, 23, 26, 27, 30,
 * 31: the round loop plays those). Each round is play_round's, operation for operation,
 * with every loop of the round inlined for the constant p (the round's six calls into the
 * loops above would cost about a tenth of it). Updates the state, t and the pending
 * terms (V, f, pending) in place and *R_max to the largest |x_j| seen. With ``pre`` (a
 * score per row of X) or ``b_old`` (the w before the batch, scored as decision_rows does,
 * minus half_off, by sosl_dot_body),
 * each round is followed by the row's Platt step on that score
 * (sosl_platt_step of _calibration.h; a non-finite score skipped), as the two loops do.
 * Returns the position in the pass of the first row holding a NaN or an infinity (the pass
 * stops there when track is set), else -1. */
SOSL_BODY ptrdiff_t sosl_small_pass_body(
        const double* restrict X, const double* restrict s, const ptrdiff_t* restrict order,
        ptrdiff_t n, long long* t_io, double* restrict w, double* restrict xbar,
        double* restrict C, double* restrict scale, double* restrict W, long long* restrict N,
        double* restrict a, double* restrict Sw, double* restrict d, double* V0, double* V1,
        double* restrict f, ptrdiff_t fstride, int* restrict pending, ptrdiff_t kmax,
        double lam, double eta, int constant, sosl_loss_grad_fn grad, int loss, double beta,
        const double* restrict pre, const double* restrict b_old, double half_off,
        double* restrict calib, int track, double* restrict R_max, ptrdiff_t p) {
    long long t = *t_io;
    double Rm = *R_max;
    ptrdiff_t r, bad = -1;
    for (r = 0; r < n; r++) {
        const ptrdiff_t i = order ? order[r] : r;
        const double* restrict x = X + i * p;
        const double y = s[i];
        int own, opp, seen = 0, batch;
        double eta_t, d_mu = 0.0, d_s2 = 0.0, coef_S = 0.0, R, Wo, prod, W_new, c;
        double* restrict Ck;
        double* dd = d;
        double* Vown;
        double fs = 0.0;
        t += 1;
        if (r + 1 < n) sosl_prefetch(X + (order ? order[r + 1] : r + 1) * p, p);
        if (b_old) fs = sosl_dot_body(b_old, x, p) - half_off;   /* the score before the batch */
        else if (pre) fs = pre[i];
        if (y > 0) {
            own = 1;
            opp = 0;
        } else {
            own = 0;
            opp = 1;
        }
        eta_t = constant ? eta : 1.0 / (lam * (double)t);
        if (N[opp] > 0) {
            double mu, alpha, s2;
            seen = 1;
            Ck = C + (ptrdiff_t)opp * p * p;
            mu = sosl_margin_body(x, xbar + opp * p, w, y, a, p);
            alpha = scale[opp] / W[opp];
            s2 = sosl_small_symv_inl(Ck, opp ? V1 : V0, f + opp * fstride, pending[opp], w,
                                     alpha, dd, Sw, p);
            pending[opp] = 0;
            grad(loss, mu, s2, &d_mu, &d_s2);   /* the loss home's loss_grad (_losses.pxd) */
            coef_S = 2.0 * d_s2;
        }
        Wo = W[own];
        prod = beta * Wo;
        SOSL_ROUNDED(prod);
        W_new = prod + 1.0;
        c = beta * Wo / W_new;
        batch = c > 0.0 && kmax > 0;
        Ck = C + (ptrdiff_t)own * p * p;
        Vown = own ? V1 : V0;
        if (c > 0.0) {
            scale[own] *= beta;
            if (scale[own] < 1e-150 || pending[own] == kmax) {
                if (pending[own] != 0) sosl_small_rank_k(Ck, Vown, f + own * fstride,
                                                         pending[own], p);
                pending[own] = 0;
            }
            if (scale[own] < 1e-150) {
                const double g = scale[own];
                ptrdiff_t j;
                for (j = 0; j < p * p; j++) Ck[j] *= g;
                scale[own] = 1.0;
            }
        }
        if (batch) dd = Vown + pending[own] * p;
        R = sosl_mean_update_body(x, xbar + own * p, dd, 1.0 / W_new, p);
        W[own] = W_new;
        N[own] += 1;
        if (batch) {
            f[own * fstride + pending[own]] = c / scale[own];
            pending[own] += 1;
        } else if (c > 0.0) {
            sosl_small_rank_one(Ck, dd, c / scale[own], p);
        }
        if (seen) sosl_step_body(w, a, Sw, eta_t, lam, d_mu, coef_S, p);
        else sosl_shrink(w, eta_t, lam, p);
        if ((b_old || pre) && fabs(fs) <= DBL_MAX) sosl_platt_step(calib, fs, y > 0 ? 1.0 : 0.0);
        if (R > Rm) {
            Rm = R;
        } else if (R != R) {
            if (track) {
                bad = r;
                break;
            }
        }
    }
    *t_io = t;
    *R_max = Rm;
    return bad;
}

SOSL_CLONES static double sosl_mean_update(const double* restrict x, double* restrict xbar,
                                           double* restrict d, double inv_W, ptrdiff_t p) {
    switch (p) {
    case 1: return sosl_mean_update_body(x, xbar, d, inv_W, 1);
    case 2: return sosl_mean_update_body(x, xbar, d, inv_W, 2);
    case 3: return sosl_mean_update_body(x, xbar, d, inv_W, 3);
    case 4: return sosl_mean_update_body(x, xbar, d, inv_W, 4);
    case 5: return sosl_mean_update_body(x, xbar, d, inv_W, 5);
    case 6: return sosl_mean_update_body(x, xbar, d, inv_W, 6);
    case 7: return sosl_mean_update_body(x, xbar, d, inv_W, 7);
    case 8: return sosl_mean_update_body(x, xbar, d, inv_W, 8);
    case 9: return sosl_mean_update_body(x, xbar, d, inv_W, 9);
    case 10: return sosl_mean_update_body(x, xbar, d, inv_W, 10);
    case 11: return sosl_mean_update_body(x, xbar, d, inv_W, 11);
    case 12: return sosl_mean_update_body(x, xbar, d, inv_W, 12);
    case 13: return sosl_mean_update_body(x, xbar, d, inv_W, 13);
    case 14: return sosl_mean_update_body(x, xbar, d, inv_W, 14);
    case 15: return sosl_mean_update_body(x, xbar, d, inv_W, 15);
    case 16: return sosl_mean_update_body(x, xbar, d, inv_W, 16);
    case 17: return sosl_mean_update_body(x, xbar, d, inv_W, 17);
    case 18: return sosl_mean_update_body(x, xbar, d, inv_W, 18);
    case 19: return sosl_mean_update_body(x, xbar, d, inv_W, 19);
    case 20: return sosl_mean_update_body(x, xbar, d, inv_W, 20);
    case 21: return sosl_mean_update_body(x, xbar, d, inv_W, 21);
    case 22: return sosl_mean_update_body(x, xbar, d, inv_W, 22);
    case 23: return sosl_mean_update_body(x, xbar, d, inv_W, 23);
    case 24: return sosl_mean_update_body(x, xbar, d, inv_W, 24);
    case 25: return sosl_mean_update_body(x, xbar, d, inv_W, 25);
    case 26: return sosl_mean_update_body(x, xbar, d, inv_W, 26);
    case 27: return sosl_mean_update_body(x, xbar, d, inv_W, 27);
    case 28: return sosl_mean_update_body(x, xbar, d, inv_W, 28);
    case 29: return sosl_mean_update_body(x, xbar, d, inv_W, 29);
    case 30: return sosl_mean_update_body(x, xbar, d, inv_W, 30);
    case 31: return sosl_mean_update_body(x, xbar, d, inv_W, 31);
    default: return sosl_mean_update_body(x, xbar, d, inv_W, p);
    }
}

SOSL_CLONES static void sosl_step(double* restrict w, const double* restrict a,
                                  const double* restrict Cw, double eta, double lam,
                                  double g_a, double g_c, ptrdiff_t p) {
    switch (p) {
    case 1: sosl_step_body(w, a, Cw, eta, lam, g_a, g_c, 1); return;
    case 2: sosl_step_body(w, a, Cw, eta, lam, g_a, g_c, 2); return;
    case 3: sosl_step_body(w, a, Cw, eta, lam, g_a, g_c, 3); return;
    case 4: sosl_step_body(w, a, Cw, eta, lam, g_a, g_c, 4); return;
    case 5: sosl_step_body(w, a, Cw, eta, lam, g_a, g_c, 5); return;
    case 6: sosl_step_body(w, a, Cw, eta, lam, g_a, g_c, 6); return;
    case 7: sosl_step_body(w, a, Cw, eta, lam, g_a, g_c, 7); return;
    case 8: sosl_step_body(w, a, Cw, eta, lam, g_a, g_c, 8); return;
    case 9: sosl_step_body(w, a, Cw, eta, lam, g_a, g_c, 9); return;
    case 10: sosl_step_body(w, a, Cw, eta, lam, g_a, g_c, 10); return;
    case 11: sosl_step_body(w, a, Cw, eta, lam, g_a, g_c, 11); return;
    case 12: sosl_step_body(w, a, Cw, eta, lam, g_a, g_c, 12); return;
    case 13: sosl_step_body(w, a, Cw, eta, lam, g_a, g_c, 13); return;
    case 14: sosl_step_body(w, a, Cw, eta, lam, g_a, g_c, 14); return;
    case 15: sosl_step_body(w, a, Cw, eta, lam, g_a, g_c, 15); return;
    case 16: sosl_step_body(w, a, Cw, eta, lam, g_a, g_c, 16); return;
    case 17: sosl_step_body(w, a, Cw, eta, lam, g_a, g_c, 17); return;
    case 18: sosl_step_body(w, a, Cw, eta, lam, g_a, g_c, 18); return;
    case 19: sosl_step_body(w, a, Cw, eta, lam, g_a, g_c, 19); return;
    case 20: sosl_step_body(w, a, Cw, eta, lam, g_a, g_c, 20); return;
    case 21: sosl_step_body(w, a, Cw, eta, lam, g_a, g_c, 21); return;
    case 22: sosl_step_body(w, a, Cw, eta, lam, g_a, g_c, 22); return;
    case 23: sosl_step_body(w, a, Cw, eta, lam, g_a, g_c, 23); return;
    case 24: sosl_step_body(w, a, Cw, eta, lam, g_a, g_c, 24); return;
    case 25: sosl_step_body(w, a, Cw, eta, lam, g_a, g_c, 25); return;
    case 26: sosl_step_body(w, a, Cw, eta, lam, g_a, g_c, 26); return;
    case 27: sosl_step_body(w, a, Cw, eta, lam, g_a, g_c, 27); return;
    case 28: sosl_step_body(w, a, Cw, eta, lam, g_a, g_c, 28); return;
    case 29: sosl_step_body(w, a, Cw, eta, lam, g_a, g_c, 29); return;
    case 30: sosl_step_body(w, a, Cw, eta, lam, g_a, g_c, 30); return;
    case 31: sosl_step_body(w, a, Cw, eta, lam, g_a, g_c, 31); return;
    default: sosl_step_body(w, a, Cw, eta, lam, g_a, g_c, p);
    }
}

SOSL_CLONES static ptrdiff_t sosl_small_pass(
        const double* X, const double* s, const ptrdiff_t* order, ptrdiff_t n, long long* t_io,
        double* w, double* xbar, double* C, double* scale, double* W, long long* N, double* a,
        double* Sw, double* d, double* V0, double* V1, double* f, ptrdiff_t fstride,
        int* pending, ptrdiff_t kmax, double lam, double eta, int constant,
        sosl_loss_grad_fn grad, int loss, double beta, const double* pre, const double* b_old,
        double half_off, double* calib, int track, double* R_max, ptrdiff_t p) {
    switch (p) {
    case 4: return sosl_small_pass_body(X, s, order, n, t_io, w, xbar, C, scale, W, N, a, Sw, d, V0, V1, f, fstride, pending, kmax, lam, eta, constant, grad, loss, beta, pre, b_old, half_off, calib, track, R_max, 4);
    case 8: return sosl_small_pass_body(X, s, order, n, t_io, w, xbar, C, scale, W, N, a, Sw, d, V0, V1, f, fstride, pending, kmax, lam, eta, constant, grad, loss, beta, pre, b_old, half_off, calib, track, R_max, 8);
    case 12: return sosl_small_pass_body(X, s, order, n, t_io, w, xbar, C, scale, W, N, a, Sw, d, V0, V1, f, fstride, pending, kmax, lam, eta, constant, grad, loss, beta, pre, b_old, half_off, calib, track, R_max, 12);
    case 16: return sosl_small_pass_body(X, s, order, n, t_io, w, xbar, C, scale, W, N, a, Sw, d, V0, V1, f, fstride, pending, kmax, lam, eta, constant, grad, loss, beta, pre, b_old, half_off, calib, track, R_max, 16);
    case 20: return sosl_small_pass_body(X, s, order, n, t_io, w, xbar, C, scale, W, N, a, Sw, d, V0, V1, f, fstride, pending, kmax, lam, eta, constant, grad, loss, beta, pre, b_old, half_off, calib, track, R_max, 20);
    case 24: return sosl_small_pass_body(X, s, order, n, t_io, w, xbar, C, scale, W, N, a, Sw, d, V0, V1, f, fstride, pending, kmax, lam, eta, constant, grad, loss, beta, pre, b_old, half_off, calib, track, R_max, 24);
    case 28: return sosl_small_pass_body(X, s, order, n, t_io, w, xbar, C, scale, W, N, a, Sw, d, V0, V1, f, fstride, pending, kmax, lam, eta, constant, grad, loss, beta, pre, b_old, half_off, calib, track, R_max, 28);
    default: return -2;              /* another p: the caller's round loop runs */
    }
}

#endif
