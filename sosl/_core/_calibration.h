/* The prequential Platt step, once, for the Cython kernels (through ``platt_step`` of
 * _calibration.pxd, which documents it: one Newton step in log A on the logistic loss of a
 * score with a quadratic prior of the accumulated curvature, its ratio formed with one
 * division) and for the inlined pass of _simd.h. */
#ifndef SOSL_CALIBRATION_H
#define SOSL_CALIBRATION_H

#include <math.h>

/* A product kept rounded on its own before an addition. The Cython kernels are compiled for
 * the build's baseline, which on x86-64 has no fused multiply-add; the clones of _simd.h have
 * one, and GCC would fuse `a * b + c` there. Every function inlined into both keeps such
 * products apart, so that both give the same bits. */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__FMA__)
#define SOSL_ROUNDED(v) __asm__("" : "+x"(v))
#else
#define SOSL_ROUNDED(v) ((void)0)
#endif

/* calib = [A, H]; f the score before the update, z = 1 for the positive class, else 0. The
 * Newton step is taken in theta = log A, the logarithm of the slope, so that its size does
 * not depend on the scale of the scores. With u = A f, e = exp(-|u|), D = 1 + e and q = n / D
 * (n = 1 for u >= 0, else e): d = (n - z D) u D / (H D^2 + e u^2) clipped to [-1, 1],
 * A <- max(A exp(-d), 1e-12) and H <- H + e u^2 / D^2. */
static inline void sosl_platt_step(double* calib, double f, double z) {
    const double A = calib[0];
    const double H = calib[1];
    const double u = A * f;
    const double e = exp(-fabs(u));
    const double D = 1.0 + e;
    const double n = u >= 0.0 ? 1.0 : e;
    const double eu2 = (e * u) * u;             /* h D^2; 0 when exp underflows */
    const double DD = D * D;
    double zD = z * D, HDD = H * DD;
    SOSL_ROUNDED(zD);
    SOSL_ROUNDED(HDD);
    double d = (n - zD) * (u * D) / (HDD + eu2);
    d = d > 1.0 ? 1.0 : (d < -1.0 ? -1.0 : d);  /* MAX_STEP of the NumPy twin */
    const double An = A * exp(-d);
    calib[1] = H + eu2 / DD;
    calib[0] = An > 1e-12 ? An : 1e-12;         /* A_MIN of the NumPy twin: A stays > 0 */
}

#endif
