"""NumPy twin of ``_calibration.pxd``: the online one-parameter Platt scaling.

P(positive | f) = sigmoid(A f); one Newton step per instance on the logistic loss with a
quadratic prior of weight H (the curvature accumulated so far) around the previous A.
"""

import math

import numpy as np

__all__ = ["platt_steps", "A_MIN", "sigmoid", "sigmoid_one"]

A_MIN = 1e-12


def sigmoid(u):
    """1 / (1 + exp(-u)), without overflow."""
    u = np.asarray(u, dtype=float)
    e = np.exp(-np.abs(u))
    return np.where(u >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def sigmoid_one(u):
    """:func:`sigmoid` of one Python float with the ``math`` module (the same branches; a
    one-row probability without NumPy's per-call cost, equal to ``sigmoid`` up to the last
    bit of ``exp``)."""
    e = math.exp(-abs(u))
    return 1.0 / (1.0 + e) if u >= 0 else e / (1.0 + e)


def platt_steps(f, s, calib):
    """Update ``calib = [A, H]`` in place with the scores f and signs s, in order."""
    for fi, si in zip(f, s):
        z = 1.0 if si > 0 else 0.0
        q = float(sigmoid(calib[0] * fi))                       # current probability
        calib[1] += q * (1.0 - q) * fi * fi                     # curvature h, accumulated
        calib[0] = max(calib[0] - (q - z) * fi / calib[1], A_MIN)   # Newton step
