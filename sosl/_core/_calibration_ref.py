"""NumPy twin of ``_calibration.pxd``: the online one-parameter Platt scaling.

P(positive | f) = sigmoid(A f); one Newton step per instance on the logistic loss with a
quadratic prior of weight H (the curvature accumulated so far) around the previous value,
taken in theta = log A (the textbook form; the typed step rearranges it, see
``_calibration.pxd``). In theta the gradient and the curvature of the loss of a score f are
(q - z) u and q (1 - q) u^2 with u = A f, which do not change when every score is
multiplied by a constant (A then divides by it): the step is free of the scale of the
scores, and a row whose probability is saturated (q (1 - q) u^2 -> 0) adds no curvature, so
early scores of another magnitude cannot freeze A. The step is clipped to [-1, 1] (A changes
by at most a factor e per instance): a confident mistake moves A a bounded amount.
1 - q is taken as sigmoid(-u), exact in both tails (1 - sigmoid(u) loses every digit for
u > 37).
"""

import math

from ._numeric import sigmoid, sigmoid_one

__all__ = ["platt_steps", "A_MIN", "MAX_STEP", "sigmoid", "sigmoid_one"]

A_MIN = 1e-12
MAX_STEP = 1.0


def platt_steps(f, s, calib):
    """Update ``calib = [A, H]`` in place with the scores f and signs s, in order."""
    for fi, si in zip(f, s):
        z = 1.0 if si > 0 else 0.0
        u = calib[0] * fi                                       # the scaled score A f
        q = float(sigmoid(u))                                   # current probability
        calib[1] += q * float(sigmoid(-u)) * u * u              # curvature in log A
        d = (q - z) * u / calib[1]                              # Newton step in log A
        d = min(max(d, -MAX_STEP), MAX_STEP)                    # bounded step
        calib[0] = max(calib[0] * math.exp(-d), A_MIN)
