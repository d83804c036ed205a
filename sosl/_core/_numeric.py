"""Small NumPy formulas that production code and the references share.

Production modules (``sosl._base``, ``sosl.state``) use them from here; the references
(``_calibration_ref``, ``_ftrl_ref``) import them too, so that no production module
imports a ``*_ref`` module (a reference is an oracle only).
"""

import math

import numpy as np

__all__ = ["ftrl_weights", "sigmoid", "sigmoid_one"]


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


def ftrl_weights(z, nsq, l1, l2, beta, gamma):
    """The FTRL-Proximal solution (F5), coordinate-wise."""
    return np.where(np.abs(z) <= l1, 0.0,
                    -(z - np.sign(z) * l1) / ((beta + np.sqrt(nsq)) / gamma + l2))
