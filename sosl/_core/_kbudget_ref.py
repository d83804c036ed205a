"""NumPy reference of OKAUC-M with ``budget_policy="komp"``: comparison buffers plus a
KOMP-compressed expansion.

Algorithm 2 of Luo, Cheng & Zhang (eqs. 20-27) with the budget maintenance of Algorithm 4
replaced (beyond the paper): the two roles a buffer plays are separated. The *comparison
buffers* (budgets N- and N+, FIFO) only define S_t, mu_t and sigma_t^2; the *expansion* of f
is a dictionary of its own, compressed by destructive KOMP with pre-fitting
(:func:`sosl._core._komp_prune.komp_prune`, as in POLK) instead of eq. (28). Same
signature and same sample order as the typed pass :func:`sosl._core._kbudget.komp_policy_pass`,
so the two agree to rounding.

Symbols
-------
=========  ================================================  ==========================
symbol     meaning                                           public name
=========  ================================================  ==========================
Z          the pool: every vector that is in a comparison     ``pool_x_``
           buffer or carries a weight in f
G          Gram matrix of the pool                            ``pool_gram_``
beta       weights of f on the pool (eq. 20)                  ``pool_beta_``
f          f_t on the pool (kept up to date)                  ``pool_f_``
buf        comparison buffer of each pool vector: 0, 1 or     ``pool_buf_``
           -1 (in none)
lab        class of each pool vector (0 negative)             ``pool_label_``
age        round at which it arrived                          ``pool_age_``
cap        N-, N+ (comparison budgets, slot order)            ``capacity_``
acc        KOMP error budget accumulated since the last run   ``komp_budget_``
epsilon    relative error budget per unit of step             ``epsilon``
period     KOMP runs after the rounds t = 0 mod period        ``KOMP_PERIOD``
=========  ================================================  ==========================

Round t: eqs. (20)-(27) exactly as in :mod:`sosl._core._okauc_ref` (the comparison set S_t
is the opposite comparison buffer); x_t joins the pool and its comparison buffer; a buffer
over its budget releases its oldest vector from the buffer only (its weight stays in f);
acc += epsilon eta_t. After the rounds t = 0 mod ``period``, KOMP compresses the expansion
(the vectors with beta != 0) within the error budget acc (then acc = 0), f on the pool is
recomputed from the new weights, and the pool vectors in no buffer and with no weight are
dropped. The total error budget equals that of a run every round with budget
epsilon eta_t, at about 1/period of the cost.
"""

import numpy as np

from ._codes import Schedule
from ._kfun_ref import kernel_row
from ._komp_prune import komp_step  # noqa: F401  (re-exported: the compression)
from ._okauc_ref import loss_coefficients

__all__ = ["komp_policy_pass", "komp_step"]

STEP_CONSTANT = int(Schedule.STEP_CONSTANT)


def komp_policy_pass(X, s, order, Z, G, beta, f, buf, lab, age, cap, t0, acc, step, kern,
                     epsilon, period):
    """Run the pass over ``X[order]``; returns ``(Z, G, beta, f, buf, lab, age, t, acc)``.

    The pool arrays are returned as new arrays (the pool grows by one vector per round
    and shrinks at the compressions); ``step`` and ``kern`` are the dicts of
    :func:`sosl._core._kparams.step_spec` and ``kernel_spec`` (their ``loss``,
    ``schedule`` and ``kind`` are codes of :mod:`sosl._core._codes`).
    """
    lam, schedule, eta, loss = step["lam"], step["schedule"], step["eta"], step["loss"]
    kind, gamma, degree, coef0 = kern["kind"], kern["gamma"], kern["degree"], kern["coef0"]
    t = t0
    for i in order:
        t += 1
        x, y = X[i], s[i]
        own = 1 if y > 0 else 0
        eta_t = eta if schedule == STEP_CONSTANT else 1.0 / (lam * t)      # round prologue
        kx = kernel_row(Z, x, kind, gamma, degree, coef0)
        kxx = float(kernel_row(x[None, :], x, kind, gamma, degree, coef0)[0])
        fx = float(beta @ kx)                                              # eq. (20)
        S = np.flatnonzero(buf == 1 - own)
        decay = 1.0 - lam * eta_t                                          # eq. (22)
        a_new, d = 0.0, np.zeros(0)
        if S.size:
            mu = f[S].mean()                                               # eq. (21)
            s2 = ((f[S] - mu) ** 2).mean()
            b = 1.0 - y * (fx - mu)                                        # eq. (23)
            a_new, d = loss_coefficients(loss, y, eta_t, b, s2, f[S], mu)  # eqs. (26)/(27)
        f = decay * f + d @ G[S] + a_new * kx                              # eq. (22)
        fx = decay * fx + d @ kx[S] + a_new * kxx
        beta = decay * beta
        beta[S] += d
        Z = np.vstack([Z, x])                                              # x_t joins the pool
        G = np.block([[G, kx[:, None]], [kx[None, :], np.array([[kxx]])]])
        beta, f = np.r_[beta, a_new], np.r_[f, fx]
        buf, lab, age = np.r_[buf, own], np.r_[lab, own], np.r_[age, t]
        mine = np.flatnonzero(buf == own)
        if mine.size > cap[own]:
            buf[mine[np.argmin(age[mine])]] = -1                           # FIFO, buffer only
        acc += epsilon * eta_t
        if t % period == 0:
            Z, G, beta, f, buf, lab, age, acc = komp_step(Z, G, beta, f, buf, lab, age, acc)
    return Z, G, beta, f, buf, lab, age, t, acc
