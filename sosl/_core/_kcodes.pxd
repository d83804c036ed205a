# cython: language_level=3
"""Option codes of the kernel-side typed passes that ``_codes.pxd`` does not (yet) hold.

Same scheme as :mod:`sosl._core._codes`: ``cpdef enum`` usable from Cython
(``from sosl._core._kcodes cimport POLK_STEP_CONSTANT``) and from Python as an ``IntEnum``
of the compiled module (``from sosl._core._kcodes import PolkSchedule``).
"""

cpdef enum PolkSchedule:
    POLK_STEP_CONSTANT = 0      # eta_t = eta (POLK, Theorem 4)
    POLK_STEP_DIMINISHING = 1   # eta_t = eta / (1 + lam eta t), O(1/t) (POLK, Theorem 3)

cpdef enum PolkBudget:
    POLK_EPS_FIXED = 0          # eps_t = epsilon as given
    POLK_EPS_PAPER = 1          # eps_t = K eta^{3/2} (constant step) or K eta_t^2 (diminishing)
