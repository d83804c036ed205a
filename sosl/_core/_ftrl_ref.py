"""NumPy reference of FTRL-AUC (Zhou, Ying & Skiena, ICDM 2020), one line per equation.

The square-loss AUC objective written as a saddle point (Ying et al., SOLAM) has, for fixed
dual variables, a per-instance function whose gradient in w is a multiple of the instance:

    F(w; x, y) = (1-p)(w.x - a)^2 [y=+1] + p (w.x - b)^2 [y=-1]
                 + 2 (1 + alpha)(p w.x [y=-1] - (1-p) w.x [y=+1]) - p(1-p) alpha^2      (F1)

with p the fraction of positives, a and b the mean scores of the positive and negative
instances and alpha = b - a at the saddle point. Holding (a, b, alpha) there, the gradient
in w is ``c x`` with the scalar

    c = 2 (1-p) (w.x - b - 1)   if y = +1,      c = 2 p (w.x - a + 1)   if y = -1       (F2)

so a round touches only the k non-zeros of x. The weights follow the FTRL-Proximal rule
(McMahan et al., 2013) per coordinate, with g = c x:

    sigma_i = (sqrt(n_i + g_i^2) - sqrt(n_i)) / gamma                                   (F3)
    z_i <- z_i + g_i - sigma_i w_i,   n_i <- n_i + g_i^2                                 (F4)
    w_i = 0 if |z_i| <= l1 else -(z_i - sign(z_i) l1) / ((beta + sqrt(n_i))/gamma + l2)  (F5)

A coordinate with x_i = 0 has g_i = 0 and is left exactly as it was, so the reference may
run (F3)-(F5) over all p coordinates while the typed core runs them over the k non-zeros.

Conventions (where this departs from the paper's description)
--------------------------------------------------------------
* ``a`` and ``b`` are the running means of the scores ``w_s.x_s`` the positive and negative
  instances received on arrival (the current instance included), the lazy estimate that
  keeps the round O(k); ``p`` counts the current instance too. The score of round t uses
  the weights w_t of (F5) after round t-1 (kept current on every touched coordinate).
* Before the first instance of the other class ``p`` is 0 or 1, so ``c = 0`` (no step).
* The typed core evaluates (F5) in the equal form ``(sign(z_i) l1 - z_i) gamma /
  (sqrt(n_i) + beta + gamma l2)`` (one division) and (F3) with ``1/gamma`` precomputed:
  the two agree to rounding.

Symbols
-------
=========  ==========================================  ==============================
symbol     meaning                                     public name
=========  ==========================================  ==============================
w          weights (F5)                                ``w_`` (``coef_[0]``)
z          FTRL accumulated linear term (F4)           ``z_``
nsq        sum of squared gradients n_i (F4)           ``sq_grad_``
N          per-class counts                            ``counts_``
score      running mean score per class: (b, a)        ``mean_scores_``
gamma      FTRL learning rate                          ``gamma``
beta       FTRL stabilizer                             ``beta``
l1, l2     L1 / L2 weights of FTRL-Proximal            ``l1``, ``l2``
=========  ==========================================  ==============================
"""

import numpy as np

from ._numeric import ftrl_weights  # noqa: F401  (shared with sosl.state)

__all__ = ["ftrl_weights", "ftrl_pass"]


def ftrl_pass(X, s, order, w, z, nsq, N, score, t0, l1, l2, beta, gamma, pre=None):
    """One online pass of FTRL-AUC over ``X[order]`` (state updated in place).

    Parameters
    ----------
    X : ndarray (n, p), dense rows
    s : ndarray (n,) of +-1.0
    order : ndarray (m,) of intp
    w, z, nsq : ndarray (p,), weights, FTRL linear term, squared-gradient sums (updated)
    N : ndarray (2,) of int64, per-class counts (updated)
    score : ndarray (2,), running mean score of each class (row 0 negative) (updated)
    t0 : int, rounds already played
    l1, l2, beta, gamma : float, FTRL-Proximal parameters
    pre : None or ndarray (m,), receives the decision value of row ``order[q]`` before
        its own round: ``w_t.x`` plus the intercept -(a + b)/2 of the state before it
        (0 until both classes have been seen)

    Returns
    -------
    t : int, rounds played after the pass
    """
    t = t0
    for i in order:
        t += 1
        x, y = X[i], s[i]
        c_own = 1 if y > 0 else 0
        f = float(w @ x)                                             # score with w_t
        if pre is not None:                                          # before the round
            both = N[0] > 0 and N[1] > 0
            pre[t - t0 - 1] = f + (-0.5 * (score[0] + score[1]) if both else 0.0)
        N[c_own] += 1
        score[c_own] += (f - score[c_own]) / N[c_own]                # running mean score
        p = N[1] / (N[0] + N[1])                                     # fraction of positives
        if y > 0:
            c = 2.0 * (1.0 - p) * (f - score[0] - 1.0)               # (F2), y = +1
        else:
            c = 2.0 * p * (f - score[1] + 1.0)                       # (F2), y = -1
        g = c * x
        sigma = (np.sqrt(nsq + g * g) - np.sqrt(nsq)) / gamma        # (F3)
        z += g - sigma * w                                           # (F4)
        nsq += g * g                                                 # (F4)
        w[:] = ftrl_weights(z, nsq, l1, l2, beta, gamma)             # (F5)
    return t
