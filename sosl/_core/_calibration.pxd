# cython: language_level=3
"""One step of the online Platt scaling of a score (cimport, not an extension).

The probability of the positive class is sigmoid(A f) for a score f: a one-parameter
Platt scaling through the learner's own threshold, so that ``predict`` (f > 0) and the
most probable class always agree. A is fitted online by a Newton step per instance on
the logistic loss plus a quadratic prior of weight H around the previous A (H the curvature
accumulated so far): g = (sigmoid(A f) - z) f, h = sigmoid(A f) (1 - sigmoid(A f)) f^2,
A <- max(A - g / (H + h), A_MIN), H <- H + h. The NumPy twin is
:func:`sosl._core._calibration_ref.platt_steps`.
"""

from libc.math cimport exp, fabs


cdef inline void platt_step(double* calib, double f, double z) noexcept nogil:
    """calib = [A, H]; f the score before the update, z = 1 for the positive class, else 0."""
    cdef double u = calib[0] * f
    cdef double q, h, A, e
    # sigmoid(u) = 1 / (1 + e) for u >= 0, e / (1 + e) below, with e = exp(-|u|): the same
    # operations as two branches, without one on the sign of u (random, and known only at
    # the end of the previous step's chain, so a mispredicted branch there discarded the
    # work of the learner's round that the processor had overlapped with this chain)
    e = exp(-fabs(u))
    q = (1.0 if u >= 0.0 else e) / (1.0 + e)
    h = q * (1.0 - q) * f * f
    calib[1] += h
    A = calib[0] - (q - z) * f / calib[1]
    calib[0] = A if A > 1e-12 else 1e-12        # A_MIN of the NumPy twin: A stays > 0
