# cython: language_level=3
"""Typed online Platt scaling over a sequence of scores (see ``_calibration.pxd``)."""

from sosl._core._calibration cimport platt_step


def platt_steps(const double[::1] f, const double[::1] s, double[::1] calib):
    """Apply ``platt_step`` to each (score f[i], sign s[i]) in order; ``calib = [A, H]``."""
    cdef Py_ssize_t i
    if f.shape[0] != s.shape[0] or calib.shape[0] != 2:
        raise ValueError("platt_steps: f and s must have one length, calib two values")
    with nogil:
        for i in range(f.shape[0]):
            platt_step(&calib[0], f[i], 1.0 if s[i] > 0 else 0.0)
