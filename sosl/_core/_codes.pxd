# cython: language_level=3
"""Option codes of every typed kernel, declared once.

Each ``cpdef enum`` is usable from Cython (``from sosl._core._codes cimport LOSS_M``) and
from Python as an ``IntEnum`` of the compiled module :mod:`sosl._core._codes`
(``from sosl._core._codes import Loss``; ``Loss.LOSS_M``). The NumPy references and the
estimators take their codes from there, so no code is restated by hand.
"""

cpdef enum Loss:
    LOSS_M = 0          # psi_M, the second-order hinge surrogate (eq. 8)
    LOSS_S = 1          # psi_S, the second-order square surrogate (eq. 3)

cpdef enum Schedule:
    STEP_INV_LAM_T = 0  # eta_t = 1 / (lam t), Theorem 6
    STEP_CONSTANT = 1   # eta_t = eta, OAUC-M_c / OAUC-S / Theorem 5

cpdef enum Kernel:
    KERNEL_LINEAR = 0   # k(a, b) = a.b
    KERNEL_GAUSSIAN = 1  # k(a, b) = exp(-gamma ||a - b||^2)
    KERNEL_POLY = 2     # k(a, b) = (gamma a.b + coef0)^degree

cpdef enum Transfer:
    TRANSFER_OPTIMAL = 0  # eq. (28): the removed vector's weight goes to its best stand-in
    TRANSFER_MIN_ABS = 1  # drop the vector of smallest |alpha|, no transfer

cpdef enum KoilPolicy:
    POLICY_RS = 0       # reservoir sampling with compensation (RS++)
    POLICY_FIFO = 1     # first in, first out with compensation (FIFO++)

cpdef enum OamUpdate:
    OAM_SEQ = 0         # sequential (one pass over the buffer)
    OAM_GRA = 1         # gradient step

cpdef enum PolkLoss:
    LOSS_HINGE = 0
    LOSS_LOGISTIC = 1
    LOSS_SQUARE = 2

cpdef enum PolkSchedule:
    POLK_STEP_CONSTANT = 0      # eta_t = eta (POLK, Theorem 4)
    POLK_STEP_DIMINISHING = 1   # eta_t = eta / (1 + lam eta t), O(1/t) (POLK, Theorem 3)

cpdef enum PolkBudget:
    POLK_EPS_FIXED = 0          # eps_t = epsilon as given
    POLK_EPS_PAPER = 1          # eps_t = K eta^{3/2} (constant step) or K eta_t^2 (diminishing)

cpdef enum SketchFamily:
    FAMILY_FD = 0               # frequent directions: Sigma ~ B'B / N
    FAMILY_FD_DIAG = 1          # frequent directions plus the exact diagonal of the residual
