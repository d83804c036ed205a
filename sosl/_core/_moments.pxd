# cython: language_level=3
"""Shared pieces of every second-order round (cimport, not an extension).

* ``round_prologue``: which class is the instance's own and which the other one, and the
  step eta_t of the round (a ``Schedule`` code: 1/(lam t) or constant).
* ``welford_update``: eqs. (15)-(18) in centered (Welford) form on the upper triangle of a
  class covariance, integer counts, no forgetting; the NumPy twin is
  :func:`sosl._core._moments_ref.welford_update`. No kernel cimports it at present: the
  linear pass keeps scaled scatters with forgetting (``_linear.pyx``) and OPAUC its own
  update (``_baselines.pyx``).
"""

from sosl._core._codes cimport STEP_CONSTANT


cdef inline double round_prologue(double y, long long t, int schedule, double eta, double lam,
                                  int* own, int* opp) noexcept nogil:
    """Set own/opp (1 for the positive class) and return eta_t of round t."""
    if y > 0:
        own[0] = 1
        opp[0] = 0
    else:
        own[0] = 0
        opp[0] = 1
    if schedule == STEP_CONSTANT:
        return eta
    return 1.0 / (lam * <double> t)


cdef inline void welford_update(const double* x, double* xbar, double* Sigma,
                                long long* N, double* d_old, Py_ssize_t p) noexcept nogil:
    """Eqs. (15)-(18) in centered (Welford) form, in place, on the upper triangle of Sigma."""
    cdef Py_ssize_t j, k
    cdef double n, dj
    N[0] += 1
    n = <double> N[0]
    for j in range(p):
        d_old[j] = x[j] - xbar[j]
        xbar[j] += d_old[j] / n
    for j in range(p):
        dj = d_old[j]
        for k in range(j, p):
            Sigma[j * p + k] += (dj * (x[k] - xbar[k]) - Sigma[j * p + k]) / n
