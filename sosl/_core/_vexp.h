/* exp(c v_i) in place over an array, for the Gaussian kernel rows (arguments <= 0).
 *
 * One Gaussian kernel row costs M exponentials per round; libm's exp is a scalar call of
 * several nanoseconds. This header evaluates them four at a time with AVX2 + FMA when the
 * processor has them (checked at run time; the build stays portable) and with the same
 * formula in scalar code otherwise:
 *
 *   x = c v,  k = round(x / ln 2),  r = x - k ln 2   (ln 2 split in a high and a low part,
 *   so k ln2_hi is exact),  exp(x) = 2^k exp(r),  |r| <= ln(2) / 2,
 *
 * with exp(r) from its Taylor polynomial of degree 13 (truncation below 2e-17 relative on
 * |r| <= ln 2 / 2) by Horner's rule and 2^k written directly into the exponent bits. The
 * rounding of k uses the 1.5 * 2^52 shift (adding it leaves k in the low mantissa bits).
 * Measured against libm on 10^7 arguments in [-708, 0]: largest relative difference
 * 2.2197e-16, below 2^-52, on both code paths. Arguments below -708 give 0 (libm gives a
 * subnormal number there, below 3.1e-308), arguments above 0 are treated as 0 (the
 * Gaussian kernel never has them), NaN stays NaN. */
#ifndef SOSL_VEXP_H
#define SOSL_VEXP_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define SOSL_EXP_LOG2E 1.4426950408889634074
#define SOSL_EXP_LN2_HI 6.93147180369123816490e-01
#define SOSL_EXP_LN2_LO 1.90821492927058770002e-10
#define SOSL_EXP_SHIFT 6755399441055744.0
#define SOSL_EXP_FLOOR (-708.0)

/* Set to 1 to take the scalar loops even where AVX2 + FMA are present (a test hook: each
 * extension module that includes this header has its own copy). */
static int sosl_vexp_scalar = 0;

/* exp(r) for |r| <= ln(2) / 2: Taylor polynomial of degree 13, Horner. */
static inline double sosl_exp_poly(double r) {
    double q = 1.0 / 6227020800.0;
    q = q * r + 1.0 / 479001600.0;
    q = q * r + 1.0 / 39916800.0;
    q = q * r + 1.0 / 3628800.0;
    q = q * r + 1.0 / 362880.0;
    q = q * r + 1.0 / 40320.0;
    q = q * r + 1.0 / 5040.0;
    q = q * r + 1.0 / 720.0;
    q = q * r + 1.0 / 120.0;
    q = q * r + 1.0 / 24.0;
    q = q * r + 1.0 / 6.0;
    q = q * r + 0.5;
    q = q * r + 1.0;
    return q * r + 1.0;
}

/* exp(x) for one x <= 0 (the scalar form of the vector loop below). */
static inline double sosl_exp_nonpos_1(double x) {
    if (!(x >= SOSL_EXP_FLOOR)) return x != x ? x : 0.0;
    if (x > 0.0) x = 0.0;
    double t = x * SOSL_EXP_LOG2E + SOSL_EXP_SHIFT;
    double k = t - SOSL_EXP_SHIFT;
    double r = (x - k * SOSL_EXP_LN2_HI) - k * SOSL_EXP_LN2_LO;
    int64_t kb, sb; double sh = SOSL_EXP_SHIFT, s;
    memcpy(&kb, &t, 8); memcpy(&sb, &sh, 8);
    int64_t e = (kb - sb + 1023) << 52;
    memcpy(&s, &e, 8);
    return sosl_exp_poly(r) * s;
}

#if defined(__GNUC__) && defined(__x86_64__) && !defined(SOSL_NO_CLONES)
#include <immintrin.h>
__attribute__((target("avx2,fma")))
static void sosl_exp_avx2(double* v, ptrdiff_t n, double c) {
    const __m256d vc = _mm256_set1_pd(c), l2e = _mm256_set1_pd(SOSL_EXP_LOG2E);
    const __m256d hi = _mm256_set1_pd(SOSL_EXP_LN2_HI), lo = _mm256_set1_pd(SOSL_EXP_LN2_LO);
    const __m256d sh = _mm256_set1_pd(SOSL_EXP_SHIFT), fl = _mm256_set1_pd(SOSL_EXP_FLOOR);
    const __m256d zero = _mm256_setzero_pd();
    const __m256i bias = _mm256_set1_epi64x(1023);
    ptrdiff_t i = 0;
    for (; i + 4 <= n; i += 4) {
        __m256d x = _mm256_mul_pd(vc, _mm256_loadu_pd(v + i));
        __m256d keep = _mm256_cmp_pd(x, fl, _CMP_GE_OQ);
        __m256d xc = _mm256_min_pd(_mm256_max_pd(x, fl), zero);
        __m256d t = _mm256_fmadd_pd(xc, l2e, sh);
        __m256d k = _mm256_sub_pd(t, sh);
        __m256d r = _mm256_fnmadd_pd(k, lo, _mm256_fnmadd_pd(k, hi, xc));
        __m256d q = _mm256_set1_pd(1.0 / 6227020800.0);
        q = _mm256_fmadd_pd(q, r, _mm256_set1_pd(1.0 / 479001600.0));
        q = _mm256_fmadd_pd(q, r, _mm256_set1_pd(1.0 / 39916800.0));
        q = _mm256_fmadd_pd(q, r, _mm256_set1_pd(1.0 / 3628800.0));
        q = _mm256_fmadd_pd(q, r, _mm256_set1_pd(1.0 / 362880.0));
        q = _mm256_fmadd_pd(q, r, _mm256_set1_pd(1.0 / 40320.0));
        q = _mm256_fmadd_pd(q, r, _mm256_set1_pd(1.0 / 5040.0));
        q = _mm256_fmadd_pd(q, r, _mm256_set1_pd(1.0 / 720.0));
        q = _mm256_fmadd_pd(q, r, _mm256_set1_pd(1.0 / 120.0));
        q = _mm256_fmadd_pd(q, r, _mm256_set1_pd(1.0 / 24.0));
        q = _mm256_fmadd_pd(q, r, _mm256_set1_pd(1.0 / 6.0));
        q = _mm256_fmadd_pd(q, r, _mm256_set1_pd(0.5));
        q = _mm256_fmadd_pd(q, r, _mm256_set1_pd(1.0));
        q = _mm256_fmadd_pd(q, r, _mm256_set1_pd(1.0));
        __m256i e = _mm256_slli_epi64(_mm256_add_epi64(
            _mm256_sub_epi64(_mm256_castpd_si256(t), _mm256_castpd_si256(sh)), bias), 52);
        __m256d res = _mm256_and_pd(_mm256_mul_pd(q, _mm256_castsi256_pd(e)), keep);
        __m256d nan = _mm256_and_pd(x, _mm256_cmp_pd(x, x, _CMP_UNORD_Q));
        _mm256_storeu_pd(v + i, _mm256_or_pd(res, nan));
    }
    for (; i < n; i++) v[i] = sosl_exp_nonpos_1(c * v[i]);
}
#define SOSL_HAVE_AVX2_EXP 1

static inline int sosl_vexp_use_avx2(void) {
    return !sosl_vexp_scalar && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#endif

/* v_i = exp(c v_i) for i < n (c v_i <= 0 expected). */
static void sosl_exp_scaled(double* v, ptrdiff_t n, double c) {
    ptrdiff_t i;
#ifdef SOSL_HAVE_AVX2_EXP
    if (sosl_vexp_use_avx2()) {
        sosl_exp_avx2(v, n, c);
        return;
    }
#endif
    for (i = 0; i < n; i++) v[i] = sosl_exp_nonpos_1(c * v[i]);
}

/* out[q] = ||A[q] - x||^2 for the n consecutive rows of length p starting at A. Scalar
 * form: four interleaved partial sums per row (coordinates j mod 4), as sq_dist of
 * _kfun.pxd. AVX2 form: four rows at a time, each with a 4-wide accumulator over the
 * coordinates, then a horizontal sum; the tail coordinates are added last. */
static inline double sosl_sqdist_1(const double* a, const double* x, ptrdiff_t p) {
    ptrdiff_t j, p4 = p - p % 4;
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0, d, acc;
    for (j = 0; j < p4; j += 4) {
        d = a[j] - x[j]; s0 += d * d;
        d = a[j + 1] - x[j + 1]; s1 += d * d;
        d = a[j + 2] - x[j + 2]; s2 += d * d;
        d = a[j + 3] - x[j + 3]; s3 += d * d;
    }
    acc = (s0 + s1) + (s2 + s3);
    for (j = p4; j < p; j++) { d = a[j] - x[j]; acc += d * d; }
    return acc;
}

#ifdef SOSL_HAVE_AVX2_EXP
__attribute__((target("avx2,fma")))
static void sosl_sqdist_avx2(const double* A, ptrdiff_t n, const double* x, ptrdiff_t p,
                             double* out) {
    ptrdiff_t q = 0, j, p4 = p - p % 4;
    for (; q + 4 <= n; q += 4) {
        const double* a0 = A + q * p;
        const double* a1 = a0 + p;
        const double* a2 = a1 + p;
        const double* a3 = a2 + p;
        __m256d c0 = _mm256_setzero_pd(), c1 = c0, c2 = c0, c3 = c0;
        for (j = 0; j < p4; j += 4) {
            __m256d xv = _mm256_loadu_pd(x + j);
            __m256d d0 = _mm256_sub_pd(_mm256_loadu_pd(a0 + j), xv);
            __m256d d1 = _mm256_sub_pd(_mm256_loadu_pd(a1 + j), xv);
            __m256d d2 = _mm256_sub_pd(_mm256_loadu_pd(a2 + j), xv);
            __m256d d3 = _mm256_sub_pd(_mm256_loadu_pd(a3 + j), xv);
            c0 = _mm256_fmadd_pd(d0, d0, c0);
            c1 = _mm256_fmadd_pd(d1, d1, c1);
            c2 = _mm256_fmadd_pd(d2, d2, c2);
            c3 = _mm256_fmadd_pd(d3, d3, c3);
        }
        /* lanes (c0 c1 c2 c3) -> one vector of the four row sums */
        __m256d h01 = _mm256_hadd_pd(c0, c1);   /* c0[0]+c0[1], c1[0]+c1[1], c0[2]+c0[3], .. */
        __m256d h23 = _mm256_hadd_pd(c2, c3);
        __m256d lo = _mm256_permute2f128_pd(h01, h23, 0x20);
        __m256d hi = _mm256_permute2f128_pd(h01, h23, 0x31);
        __m256d sum = _mm256_add_pd(lo, hi);
        double tmp[4];
        _mm256_storeu_pd(tmp, sum);
        for (j = p4; j < p; j++) {
            double e0 = a0[j] - x[j], e1 = a1[j] - x[j], e2 = a2[j] - x[j], e3 = a3[j] - x[j];
            tmp[0] += e0 * e0; tmp[1] += e1 * e1; tmp[2] += e2 * e2; tmp[3] += e3 * e3;
        }
        out[q] = tmp[0]; out[q + 1] = tmp[1]; out[q + 2] = tmp[2]; out[q + 3] = tmp[3];
    }
    for (; q < n; q++) out[q] = sosl_sqdist_1(A + q * p, x, p);
}
#endif

static void sosl_sqdist_rows(const double* A, ptrdiff_t n, const double* x, ptrdiff_t p,
                             double* out) {
    ptrdiff_t q;
#ifdef SOSL_HAVE_AVX2_EXP
    if (sosl_vexp_use_avx2()) {
        sosl_sqdist_avx2(A, n, x, p, out);
        return;
    }
#endif
    for (q = 0; q < n; q++) out[q] = sosl_sqdist_1(A + q * p, x, p);
}

#endif
