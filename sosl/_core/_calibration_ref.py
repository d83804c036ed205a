"""NumPy twin of ``_calibration.pxd``: the online one-parameter Platt scaling.

P(positive | f) = sigmoid(A f); one Newton step per instance on the logistic loss with a
quadratic prior of weight H (the curvature accumulated so far) around the previous A, in
the textbook form (the typed step rearranges it, see ``_calibration.pxd``). 1 - q is
taken as sigmoid(-u), exact in both tails (1 - sigmoid(u) loses every digit for u > 37).
"""


from ._numeric import sigmoid, sigmoid_one

__all__ = ["platt_steps", "A_MIN", "sigmoid", "sigmoid_one"]

A_MIN = 1e-12


def platt_steps(f, s, calib):
    """Update ``calib = [A, H]`` in place with the scores f and signs s, in order."""
    for fi, si in zip(f, s):
        z = 1.0 if si > 0 else 0.0
        u = calib[0] * fi
        q = float(sigmoid(u))                                   # current probability
        calib[1] += q * float(sigmoid(-u)) * fi * fi            # curvature h = q (1 - q) f^2
        calib[0] = max(calib[0] - (q - z) * fi / calib[1], A_MIN)   # Newton step
