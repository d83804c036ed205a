/* Small dense loops of the linear kernel, compiled twice where the compiler can dispatch
 * at run time: once for the baseline instruction set of the build and once for x86-64-v3
 * (AVX2 with FMA; GCC's target_clones on x86-64 Linux picks the clone when the module is
 * loaded, so the default build stays portable). Sums over the p features of a vector are
 * kept in four interleaved partial sums, which the compiler maps onto one vector register
 * without any licence to reorder floating-point additions; matrix products are written as
 * row-scaled additions (axpy) over blocks of four rows. With FMA each multiply-add is
 * rounded once instead of twice. Pointers marked restrict never alias in the kernel. */
#ifndef SOSL_SIMD_H
#define SOSL_SIMD_H

#include <math.h>
#include <stddef.h>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) \
    && !defined(SOSL_NO_CLONES)
#if __GNUC__ >= 12
#define SOSL_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define SOSL_CLONES __attribute__((target_clones("avx2", "default")))
#endif
#else
#define SOSL_CLONES
#endif

/* a = y (x - xbar); returns the margin w.a. */
SOSL_CLONES static double sosl_margin(const double* restrict x, const double* restrict xbar,
                                      const double* restrict w, double y, double* restrict a,
                                      ptrdiff_t p) {
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    ptrdiff_t l = 0;
    for (; l + 4 <= p; l += 4) {
        a[l] = y * (x[l] - xbar[l]);
        a[l + 1] = y * (x[l + 1] - xbar[l + 1]);
        a[l + 2] = y * (x[l + 2] - xbar[l + 2]);
        a[l + 3] = y * (x[l + 3] - xbar[l + 3]);
        s0 += w[l] * a[l];
        s1 += w[l + 1] * a[l + 1];
        s2 += w[l + 2] * a[l + 2];
        s3 += w[l + 3] * a[l + 3];
    }
    for (; l < p; l++) {
        a[l] = y * (x[l] - xbar[l]);
        s0 += w[l] * a[l];
    }
    return (s0 + s1) + (s2 + s3);
}

/* u.v */
SOSL_CLONES static double sosl_dot(const double* restrict u, const double* restrict v,
                                   ptrdiff_t p) {
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    ptrdiff_t l = 0;
    for (; l + 4 <= p; l += 4) {
        s0 += u[l] * v[l];
        s1 += u[l + 1] * v[l + 1];
        s2 += u[l + 2] * v[l + 2];
        s3 += u[l + 3] * v[l + 3];
    }
    for (; l < p; l++) s0 += u[l] * v[l];
    return (s0 + s1) + (s2 + s3);
}

/* Cw = C' w for a full p x p row-major matrix C (symmetric up to rounding); returns w.Cw.
 * Four rows per sweep over Cw, so Cw is read and written p/4 times instead of p. */
SOSL_CLONES static double sosl_small_matvec(const double* restrict C, const double* restrict w,
                                            double* restrict Cw, ptrdiff_t p) {
    ptrdiff_t j = 0, l;
    for (l = 0; l < p; l++) Cw[l] = 0.0;
    for (; j + 4 <= p; j += 4) {
        const double w0 = w[j], w1 = w[j + 1], w2 = w[j + 2], w3 = w[j + 3];
        const double* restrict r0 = C + j * p;
        const double* restrict r1 = r0 + p;
        const double* restrict r2 = r1 + p;
        const double* restrict r3 = r2 + p;
        for (l = 0; l < p; l++) Cw[l] += (w0 * r0[l] + w1 * r1[l]) + (w2 * r2[l] + w3 * r3[l]);
    }
    for (; j < p; j++) {
        const double wj = w[j];
        const double* restrict row = C + j * p;
        for (l = 0; l < p; l++) Cw[l] += wj * row[l];
    }
    return sosl_dot(w, Cw, p);
}

/* C += f d d' on the whole p x p row-major matrix. */
SOSL_CLONES static void sosl_small_rank_one(double* restrict C, const double* restrict d,
                                            double f, ptrdiff_t p) {
    ptrdiff_t j, l;
    for (j = 0; j < p; j++) {
        const double fd = f * d[j];
        double* restrict row = C + j * p;
        for (l = 0; l < p; l++) row[l] += fd * d[l];
    }
}

/* C += sum_i f_i v_i v_i' over the k rows v_i of V (row-major k x p), on the whole matrix.
 * Each entry receives the k terms one after the other, in the order of the rows, with the
 * same operations as k calls of sosl_small_rank_one: the result is the same to the bit,
 * but C is read and written once per four terms instead of once per term. */
SOSL_CLONES static void sosl_small_rank_k(double* restrict C, const double* restrict V,
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
            for (l = 0; l < p; l++)
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
            for (l = 0; l < p; l++) row[l] = ((row[l] + u0 * v0[l]) + u1 * v1[l]) + u2 * v2[l];
        }
    } else if (k - i == 2) {
        const double* restrict v0 = V + i * p;
        const double* restrict v1 = v0 + p;
        for (j = 0; j < p; j++) {
            const double u0 = f[i] * v0[j], u1 = f[i + 1] * v1[j];
            double* restrict row = C + j * p;
            for (l = 0; l < p; l++) row[l] = (row[l] + u0 * v0[l]) + u1 * v1[l];
        }
    } else if (k - i == 1) {
        sosl_small_rank_one(C, V + i * p, f[i], p);
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
 * holds a NaN or an infinity (x_l * 0 is 0 exactly for every finite x_l). */
SOSL_CLONES static double sosl_mean_update(const double* restrict x, double* restrict xbar,
                                           double* restrict d, double inv_W, ptrdiff_t p) {
    double m0 = 0.0, m1 = 0.0, m2 = 0.0, m3 = 0.0;
    double z0 = 0.0, z1 = 0.0, z2 = 0.0, z3 = 0.0;
    double v;
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
    for (; l < p; l++) {
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
SOSL_CLONES static void sosl_step(double* restrict w, const double* restrict a,
                                  const double* restrict Cw, double eta, double lam,
                                  double g_a, double g_c, ptrdiff_t p) {
    ptrdiff_t l;
    for (l = 0; l < p; l++) w[l] -= eta * (lam * w[l] + g_a * a[l] + g_c * Cw[l]);
}

/* w -= eta lam w (a round before the other class has been seen). */
SOSL_CLONES static void sosl_shrink(double* restrict w, double eta, double lam, ptrdiff_t p) {
    ptrdiff_t l;
    for (l = 0; l < p; l++) w[l] -= eta * (lam * w[l]);
}

#endif
