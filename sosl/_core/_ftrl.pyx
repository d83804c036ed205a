# cython: language_level=3
"""Typed kernel of FTRL-AUC: one ``nogil`` loop over CSR rows, O(k) per round.

A round reads and writes only the k stored entries of its row: the score and the
FTRL-Proximal update (F3)-(F5) of the touched coordinates; the weights of the
other coordinates do not change (their gradient entry is 0). The NumPy reference, one
line per equation with the tags (F1)-(F5), is :mod:`sosl._core._ftrl_ref`.
"""

from libc.math cimport fabs, sqrt


cdef inline double ftrl_weight(double z, double nsq, double l1, double l2, double beta,
                               double gamma) noexcept nogil:
    """(F5) for one coordinate."""
    if fabs(z) <= l1:
        return 0.0
    if z > 0:
        return -(z - l1) / ((beta + sqrt(nsq)) / gamma + l2)
    return -(z + l1) / ((beta + sqrt(nsq)) / gamma + l2)


def ftrl_pass(const double[::1] data, const int[::1] indices, const int[::1] indptr,
              const double[::1] s, const Py_ssize_t[::1] order, double[::1] w, double[::1] z,
              double[::1] nsq, long long[::1] N, double[::1] score,
              long long t0, double l1, double l2, double beta, double gamma):
    """Run FTRL-AUC over the CSR rows ``order``; update the state in place.

    Returns the round counter after the pass. See :func:`sosl._core._ftrl_ref.ftrl_pass`
    for the parameters (the reference takes dense rows).
    """
    cdef Py_ssize_t nq = order.shape[0]
    cdef Py_ssize_t q, i, k, j
    cdef long long t = t0
    cdef int own
    cdef double y, f, p, c, g, sigma, xv
    with nogil:
        for q in range(nq):
            i = order[q]
            t += 1
            y = s[i]
            own = 1 if y > 0 else 0
            f = 0.0
            for k in range(indptr[i], indptr[i + 1]):
                f += w[indices[k]] * data[k]                          # score with w_t
            N[own] += 1
            score[own] += (f - score[own]) / <double> N[own]
            p = <double> N[1] / <double> (N[0] + N[1])
            if y > 0:
                c = 2.0 * (1.0 - p) * (f - score[0] - 1.0)            # (F2)
            else:
                c = 2.0 * p * (f - score[1] + 1.0)                    # (F2)
            for k in range(indptr[i], indptr[i + 1]):
                j = indices[k]
                xv = data[k]
                g = c * xv
                sigma = (sqrt(nsq[j] + g * g) - sqrt(nsq[j])) / gamma  # (F3)
                z[j] += g - sigma * w[j]                               # (F4)
                nsq[j] += g * g
                w[j] = ftrl_weight(z[j], nsq[j], l1, l2, beta, gamma)  # (F5)
    return t
