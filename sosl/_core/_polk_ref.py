"""NumPy implementation of POLK: functional SGD projected by KOMP (Koppel et al.).

One line per equation of "Parsimonious Online Learning with Kernels via Sparse
Projections in Function Space" (Koppel, Warnell, Stump, Ribeiro; Algorithm 2 and
eqs. (12), (17)-(18)). The projection (Algorithm 1) is the library's KOMP,
:func:`sosl._core._komp_prune.komp_prune`, whose typed core has its own NumPy reference
(:mod:`sosl._core._komp_ref`; tests/_core/test_komp.py::test_cython_core_matches_numpy_reference):
the comparison of the POLK pass with
this module then isolates what the typed POLK pass adds, the inverse Gram matrix kept
across rounds, from the rounding differences of two KOMP implementations. This module
is the reference of
:class:`sosl.POLK` (O(M^3) per round: the projection factorizes the whole Gram matrix
every round). The estimator runs the typed pass :mod:`sosl._core._polk` through its driver
:mod:`sosl._core._polk_driver`, which keeps the inverse Gram matrix across rounds (O(M^2)
per round) and plays the rounds with numerically dependent atoms with the typed
rank-revealing KOMP; the two agree to rounding
(tests/_core/test_polk.py::test_fast_pass_equals_reference).

Symbols
-------
=========  ==============================================  ============================
symbol     paper                                           public name
=========  ==============================================  ============================
D          D_t, kernel dictionary (M_t x p, rows)           ``support_vectors_``
w          w_t, weights of f_t = w . k_D(.)                 ``dual_coef_``
Kdd        K_{D_t, D_t}, Gram matrix of the dictionary     ``gram_``
s          y_t in {-1, +1}                                  ``classes_[1]`` -> +1
eta_t      step size (constant, or eta / (1 + lam eta t))  ``eta``, ``schedule``
lam        lambda, Tikhonov weight                         ``lam``
eps_t      KOMP budget epsilon_t                           ``epsilon``, ``parsimony``
Kpar       parsimony constant K in eps = K eta^{3/2}       ``parsimony``
M          model order (dictionary size)                   ``model_orders_``
=========  ==============================================  ============================

Conventions
-----------
* ``loss`` is a ``PolkLoss`` code (:mod:`sosl._core._codes`): LOSS_HINGE max(0, 1 - y z),
  LOSS_LOGISTIC log(1 + exp(-y z)), LOSS_SQUARE (z - y)^2 / 2; l'(z, y) is the
  derivative in z (for the hinge the subgradient -y where y z < 1, else 0).
* ``schedule`` is a ``PolkSchedule`` code (:mod:`sosl._core._codes`): eta_t is the
  constant ``eta`` (POLK_STEP_CONSTANT, Theorem 4) or the diminishing
  eta / (1 + lam eta t) (POLK_STEP_DIMINISHING), O(1/t) and always < 1/lam as Theorem 3
  requires.
* ``eps_rule`` is a ``PolkBudget`` code: POLK_EPS_FIXED uses ``epsilon`` as given,
  POLK_EPS_PAPER the paper's choices, Kpar eta^{3/2} (constant step, Theorem 4) or
  Kpar eta_t^2 (diminishing, Theorem 3).
"""

import numpy as np

from ._codes import PolkBudget, PolkLoss, PolkSchedule
from ._kfun_ref import KERNEL_NAMES, kernel_diag, kernel_matrix
from ._komp_prune import komp_prune

RTOL = 1e-10        # rank threshold of the projection (the rtol of sosl.komp.komp_prune)

__all__ = ["LOSS_HINGE", "LOSS_LOGISTIC", "LOSS_SQUARE", "STEP_CONSTANT", "STEP_DIMINISHING",
           "EPS_FIXED", "EPS_PAPER", "loss_value", "loss_derivative", "step_size",
           "komp_budget", "polk_step", "polk_pass", "border_inverse", "remove_from_inverse"]

LOSS_HINGE = int(PolkLoss.LOSS_HINGE)
LOSS_LOGISTIC = int(PolkLoss.LOSS_LOGISTIC)
LOSS_SQUARE = int(PolkLoss.LOSS_SQUARE)
STEP_CONSTANT = int(PolkSchedule.POLK_STEP_CONSTANT)
STEP_DIMINISHING = int(PolkSchedule.POLK_STEP_DIMINISHING)
EPS_FIXED = int(PolkBudget.POLK_EPS_FIXED)
EPS_PAPER = int(PolkBudget.POLK_EPS_PAPER)


def loss_value(z, y, loss):
    """l(z, y) for the three losses (z = f(x), y in {-1, +1})."""
    if loss == LOSS_HINGE:
        return np.maximum(0.0, 1.0 - y * z)
    if loss == LOSS_LOGISTIC:
        return np.logaddexp(0.0, -y * z)
    return 0.5 * (z - y) ** 2


def loss_derivative(z, y, loss):
    """l'(z, y) = d l(z, y) / d z, the scalar factor of the functional gradient (eq. 10)."""
    if loss == LOSS_HINGE:
        return -y if y * z < 1.0 else 0.0
    if loss == LOSS_LOGISTIC:
        return -y * 0.5 * (1.0 - np.tanh(0.5 * y * z))       # -y / (1 + exp(y z)), overflow-free
    return z - y


def step_size(t, eta, lam, schedule):
    """eta_t: constant (STEP_CONSTANT) or eta / (1 + lam eta t) (STEP_DIMINISHING)."""
    return eta if schedule == STEP_CONSTANT else eta / (1.0 + lam * eta * t)


def komp_budget(eta_t, eps_rule, epsilon, parsimony, schedule):
    """eps_t: ``epsilon`` (EPS_FIXED), else Kpar eta^{3/2} (Theorem 4) or Kpar eta_t^2 (Th. 3)."""
    if eps_rule == EPS_FIXED:
        return epsilon
    return parsimony * eta_t ** 1.5 if schedule == STEP_CONSTANT else parsimony * eta_t ** 2


def polk_step(D, w, Kdd, x, y, eta_t, lam, eps_t, loss, kern):
    """One round of Algorithm 2; returns ``(D, w, Kdd, f_x, error)``.

    ``kern`` is a dict with ``kernel, gamma, degree, coef0`` for :func:`kernel_matrix`.
    """
    kx = kernel_matrix(D, x[None, :], **kern)[:, 0]                    # k_D(x_t)
    f_x = float(w @ kx)                                                 # f_t(x_t) = w_t . k_D(x_t)
    g = loss_derivative(f_x, y, loss)                                   # l'(f_t(x_t), y_t)
    w_tilde = np.append((1.0 - eta_t * lam) * w, -eta_t * g)            # eq. (18): weights of f~
    D_tilde = np.vstack([D, x[None, :]])                                # eq. (18): D~ = [D_t, x_t]
    kxx = kernel_diag(x[None, :], **kern)[0]
    K_tilde = np.block([[Kdd, kx[:, None]], [kx[None, :], np.array([[kxx]])]])
    kept, w_new, err = komp_prune(K_tilde, w_tilde, eps_t, rtol=RTOL,
                                  return_error=True)                   # Algorithm 1
    return D_tilde[kept], w_new, K_tilde[np.ix_(kept, kept)], f_x, err


def polk_pass(X, s, order, D, w, Kdd, t0, step, polk, kern):
    """Run POLK over ``X[order]`` starting from ``(D, w, Kdd)`` after ``t0`` rounds.

    ``step`` (``_kparams.step_spec``): ``eta``, ``lam``, the ``schedule`` and ``loss``
    codes; ``polk`` (``_polk_driver.polk_spec``): the budget rule ``eps_rule``, ``epsilon``,
    ``parsimony`` (its tolerances are the typed pass's); ``kern``
    (``_kparams.kernel_spec``): the ``Kernel`` code ``kind`` and its parameters.

    Returns
    -------
    D, w, Kdd : the final dictionary, weights and Gram matrix
    t : int, the round counter after the pass
    orders : ndarray of int of shape (len(order),), model order M_{t+1} after each round
    errors : ndarray of shape (len(order),), ||f~_{t+1} - f_{t+1}||_H of each projection
    budgets : ndarray of shape (len(order),), the budget eps_t of each projection
    """
    lam, eta, schedule, loss = step["lam"], step["eta"], step["schedule"], step["loss"]
    eps_rule, epsilon, parsimony = polk["eps_rule"], polk["epsilon"], polk["parsimony"]
    kern = {"kernel": KERNEL_NAMES[kern["kind"]], "gamma": kern["gamma"],
            "degree": int(kern["degree"]), "coef0": kern["coef0"]}       # kernel_matrix's form
    m = order.shape[0]
    orders = np.empty(m, dtype=np.int64)
    errors = np.empty(m)
    budgets = np.empty(m)
    t = t0
    for r in range(m):
        i = order[r]
        t += 1
        eta_t = step_size(t, eta, lam, schedule)
        eps_t = komp_budget(eta_t, eps_rule, epsilon, parsimony, schedule)
        D, w, Kdd, _, err = polk_step(D, w, Kdd, X[i], s[i], eta_t, lam, eps_t, loss, kern)
        orders[r] = D.shape[0]
        errors[r] = err
        budgets[r] = eps_t
    return D, w, Kdd, t, orders, errors, budgets


# The two updates of the inverse Gram matrix G = K_DD^{-1} used by the typed pass
# sosl._core._polk (not used by polk_pass above; tested against direct inverses:
# tests/_core/test_polk.py::test_inverse_updates_match_direct_inverses).

def border_inverse(G, kx, kxx):
    """Inverse of [[K, k_x], [k_x', k(x, x)]] from G = K^{-1}; returns ``(G~, sc)``.

    sc = k(x, x) - k_x' G k_x is the squared distance of k(x, .) to span(D) (> 0 needed).
    """
    u = G @ kx                                                          # u = G k_x
    sc = kxx - kx @ u                                                   # Schur complement
    top = np.hstack([G + np.outer(u, u) / sc, -u[:, None] / sc])        # [G + u u'/sc, -u/sc]
    return np.vstack([top, np.append(-u / sc, 1.0 / sc)[None, :]]), sc  # [-u'/sc, 1/sc]


def remove_from_inverse(G, j):
    """Inverse of K with row and column j deleted, from G = K^{-1} (:mod:`sosl._core._komp_ref`)."""
    keep = np.arange(G.shape[0]) != j
    g = G[keep, j]
    return G[np.ix_(keep, keep)] - np.outer(g, g) / G[j, j]            # G_-j,-j - g g' / G_jj
