"""NumPy twin of ``_moments.pxd``: the round prologue and the class-moment update.

Used by every NumPy reference of a second-order learner; one line per equation.
"""

import numpy as np

from ._codes import Schedule

__all__ = ["round_prologue", "moment_update", "welford_update"]

STEP_CONSTANT = int(Schedule.STEP_CONSTANT)


def round_prologue(y, t, schedule, eta, lam):
    """(own, opp, eta_t): own/opp class rows (1 = positive) and the step of round t."""
    own, opp = (1, 0) if y > 0 else (0, 1)
    eta_t = eta if schedule == STEP_CONSTANT else 1.0 / (lam * t)   # eq. (12); Thm 6: 1/(lam t)
    return own, opp, eta_t


def moment_update(x, xbar, Sigma, W, beta=1.0, v=1.0):
    """Add x with weight v to a class of weight W, mean xbar, covariance Sigma (in place);
    returns W'.

    Eqs. (15)-(18) in centered form, with the earlier instances' weights decayed by beta
    (beta = 1: no forgetting, W = N the count; beta < 1: effective memory 1/(1 - beta)):
    W' = beta W + v, xbar' = xbar + v d/W', Sigma' = (beta W/W') (Sigma + v d d'/W'),
    d = x - xbar. With beta = 1 and v = 1 this is Welford's update
    Sigma + ((x - xbar)(x - xbar')' - Sigma)/N'; an integer v equals v repeated rows.
    """
    W_new = beta * W + v                                        # decayed weight
    d = x - xbar
    xbar += (v / W_new) * d                                     # eq. (15)/(17)
    Sigma *= beta * W / W_new                                   # eq. (16)/(18), centered
    Sigma += (v * beta * W / W_new ** 2) * np.outer(d, d)
    return W_new


def welford_update(x, xbar, Sigma, N):
    """``moment_update`` without forgetting, on an integer count; returns N + 1."""
    return int(moment_update(x, xbar, Sigma, float(N), 1.0))
