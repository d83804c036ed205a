/* Small dense loops of the linear kernel, compiled twice where the compiler can dispatch
 * at run time: once for the baseline instruction set of the build and once for AVX2+FMA
 * (GCC's target_clones on x86-64 Linux picks the clone when the module is loaded). The
 * loops are written as row-scaled additions (axpy), which vectorise without reordering
 * any sum; with FMA each multiply-add is rounded once instead of twice. */
#ifndef SOSL_SIMD_H
#define SOSL_SIMD_H

#include <stddef.h>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) \
    && !defined(SOSL_NO_CLONES)
#define SOSL_CLONES __attribute__((target_clones("avx2,fma", "default")))
#else
#define SOSL_CLONES
#endif

/* Cw = C w for a full p x p row-major matrix C. */
SOSL_CLONES static void sosl_small_matvec(const double* C, const double* w, double* Cw,
                                          ptrdiff_t p) {
    ptrdiff_t j, l;
    for (l = 0; l < p; l++) Cw[l] = 0.0;
    for (j = 0; j < p; j++) {
        const double wj = w[j];
        const double* row = C + j * p;
        for (l = 0; l < p; l++) Cw[l] += wj * row[l];
    }
}

/* C += f d d' on the whole p x p row-major matrix. */
SOSL_CLONES static void sosl_small_rank_one(double* C, const double* d, double f, ptrdiff_t p) {
    ptrdiff_t j, l;
    for (j = 0; j < p; j++) {
        const double fd = f * d[j];
        double* row = C + j * p;
        for (l = 0; l < p; l++) row[l] += fd * d[l];
    }
}

#endif
