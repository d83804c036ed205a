"""NumPy twin of ``_moments.pxd``: the round prologue and the class-moment update.

Used by every NumPy reference of a second-order learner; one line per equation.
"""

import numpy as np

from ._codes import Schedule

__all__ = ["round_prologue", "welford_update"]

STEP_CONSTANT = int(Schedule.STEP_CONSTANT)


def round_prologue(y, t, schedule, eta, lam):
    """(own, opp, eta_t): own/opp class rows (1 = positive) and the step of round t."""
    own, opp = (1, 0) if y > 0 else (0, 1)
    eta_t = eta if schedule == STEP_CONSTANT else 1.0 / (lam * t)   # eq. (12); Thm 6: 1/(lam t)
    return own, opp, eta_t


def welford_update(x, xbar, Sigma, N):
    """Add x to a class with N instances, mean xbar and covariance Sigma (in place).

    Eqs. (15)-(18) in centered form:
    xbar <- xbar + (x - xbar)/N', Sigma <- Sigma + ((x - xbar_old)(x - xbar_new)^T - Sigma)/N'.
    Returns the new count N' = N + 1.
    """
    N = N + 1
    d_old = x - xbar
    xbar += d_old / N                                           # eq. (15)/(17)
    d_new = x - xbar
    Sigma += (np.outer(d_old, d_new) - Sigma) / N               # eq. (16)/(18), Welford
    return N
