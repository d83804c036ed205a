"""NumPy reference of the linear online baselines of the paper's Table 2 (and SOLAM).

One line per equation, same signatures and the same sample order as the Cython kernels
in :mod:`sosl._core._baselines`, so the two can be compared to ~1e-12 (bit-identical
random draws included). Each pass updates its state arrays in place and returns the
round counter after the pass. The same functions are the references of the kernels'
CSR passes (``*_pass_csr``, the same pass body over the CSR form of the row view), given
the rows densified: a sparse pass must give the state of the dense pass over the same
rows; and of the kernels' one-row rounds (``oam_one``, ``solam_one``, ``adaoam_one``).
OAM's CSR pass keeps its buffers as sparse rows, a state of another shape; its own
reference, :func:`oam_pass_csr`, runs the round of :func:`oam_pass` on that state (and
the tests check both against each other).

A score w.x_t (or a squared norm) that is not finite stops a pass with a
``FloatingPointError`` naming the row, as in the kernels.

Symbols
-------
=========  =============================================  ================================
symbol     paper                                          public name
=========  =============================================  ================================
w          w_t, the weight vector                         ``w_`` (SOLAM: ``v_[:p]``)
s          y_t in {-1, +1}                                ``classes_[1]`` -> +1
t          round counter                                  ``t_``
N          class counts (row 0 negative, 1 positive)      ``counts_``
C          PA-I aggressiveness C / OAM penalty C          ``C``
B, nB      OAM buffers B^-, B^+ and their fill levels     ``buffers_``, ``buffer_fill_``
Bi, Bv,    OAM sparse buffers: per slot the sorted columns,  ``buffer_indices_``,
Bn         values and number of stored values of a row     ``buffer_values_``, ``buffer_nnz_``
budget     OAM buffer size N_+ = N_-                      ``buffer_size``
C_t        C max(1, N_t^{opp} / budget), OAM weighting    -
rng        splitmix64 state of OAM's reservoir sampling   ``rng_state_``
c          OL-UBAUC threshold                             ``-intercept_[0]``
lam        lambda, Tikhonov weight                        ``lam``
eta        step: constant, 1/(lam t) or zeta/sqrt(t)      ``eta``
schedule   OL-UBAUC step code (``Schedule``)              ``eta is None`` -> 1/(lam t)
v          SOLAM primal iterate (w, a, b)                 ``v_``
alpha      SOLAM dual iterate alpha_t and its average     ``alpha_`` ([alpha, alpha_bar])
vbar       SOLAM weighted average of the v_t              ``v_avg_``
Gamma      SOLAM sum of the steps gamma_1 + ... + gamma_t ``step_sum_``
p_hat      SOLAM running fraction of positives N+/t      -
R          SOLAM radius of Omega_1 (kappa = 1)            ``radius``
xbar       AdaOAM class means c^-, c^+ (row 0 negative)   ``means_``
Sigma      AdaOAM class covariances S^-, S^+              ``covariances_``
G2         AdaOAM sum of squared gradients, per feature   ``grad_sq_``
delta      AdaOAM (AdaGrad) smoothing delta               ``delta``
=========  =============================================  ================================

References
----------
* Perceptron: F. Rosenblatt, Psychological Review 65(6), 1958.
* PA-I: K. Crammer, O. Dekel, J. Keshet, S. Shalev-Shwartz, Y. Singer. Online
  passive-aggressive algorithms. JMLR 7, 2006, Section 3 (tau of PA-I, eq. 8).
* OAM: P. Zhao, S. C. H. Hoi, R. Jin, T. Yang. Online AUC maximization. ICML 2011,
  Algorithm 1 (OAM), 2 (reservoir UpdateBuffer), 3 (sequential) and the gradient update.
* OL-UBAUC: S. Lyu, Y. Ying. A univariate bound of area under ROC. arXiv:1804.05981, 2018.
  The online algorithm could not be read in full; see :func:`ubauc_pass` for the
  reconstruction used here.
* SOLAM: Y. Ying, L. Wen, S. Lyu. Stochastic online AUC maximization. NeurIPS 2016,
  Algorithm 1 (the saddle function F of eq. (4) and its stochastic gradients).
* AdaOAM: Y. Ding, P. Zhao, S. C. H. Hoi, Y.-S. Ong. An adaptive gradient method for
  online AUC maximization. AAAI 2015 (Algorithm 1: OPAUC's moment gradient, AdaGrad
  diagonal step).
"""

import numpy as np

from ._codes import Loss, OamUpdate, Schedule
from ._linear_ref import welford_update
from ._losses_ref import loss_grad

__all__ = ["perceptron_pass", "pa1_pass", "oam_pass", "oam_pass_csr", "oam_midpoint_score",
           "ubauc_pass", "solam_pass", "adaoam_pass", "splitmix64"]

_MASK = (1 << 64) - 1
_OAM_SEQ = int(OamUpdate.OAM_SEQ)
_STEP_CONSTANT = int(Schedule.STEP_CONSTANT)
_LOSS_S = int(Loss.LOSS_S)


def _finite(row, what, *values):
    """Stop the pass when a score or a norm is not finite (the kernels do the same)."""
    if not all(np.all(np.isfinite(v)) for v in values):
        raise FloatingPointError(
            f"the {what} of row {row} of the batch is not finite: the features are too "
            "large for double precision (scale them)")


def splitmix64(rng):
    """Advance the splitmix64 state ``rng[0]`` (uint64, in place); return the next output.

    The same generator is written in the kernel, so kernel and reference draw the same
    numbers; the state is part of the estimator's pickled state.
    """
    z = (int(rng[0]) + 0x9E3779B97F4A7C15) & _MASK
    rng[0] = z
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def perceptron_pass(X, s, order, w, t0):
    """Rosenblatt's perceptron, no bias: a mistake (s w.x <= 0) adds s x to w."""
    t = t0
    for i in order:
        t += 1
        x, y = X[i], s[i]
        f = w @ x
        _finite(i, "score w.x", f)
        if y * f <= 0.0:                                        # mistake (or on the boundary)
            w += y * x                                          # w <- w + y_t x_t
    return t


def pa1_pass(X, s, order, w, t0, C):
    """PA-I (Crammer et al. 2006): tau = min(C, hinge / ||x||^2), w <- w + tau y x."""
    t = t0
    for i in order:
        t += 1
        x, y = X[i], s[i]
        sq, f = x @ x, w @ x
        _finite(i, "score w.x or norm ||x||^2", sq, f)
        if sq == 0.0:                                           # no direction to move in
            continue
        loss = max(0.0, 1.0 - y * f)                            # hinge loss l_t
        tau = min(C, loss / sq)                                 # PA-I step (eq. 8)
        w += tau * y * x
    return t


def oam_pass(X, s, order, w, B, nB, N, rng, t0, C, update):
    """OAM (Zhao et al. 2011) with reservoir-sampled buffers, ``B[k]`` for class k.

    Round t with label y (own class k, opposite class o):

    * N[k] += 1 and C_t = C max(1, N[o] / budget): the budget instances of the opposite
      buffer stand for all N[o] instances seen, so their hinge losses are weighted by
      the inverse of the buffer's share of its class (Algorithm 1);
    * the classifier is updated against B[o] (Algorithm 3): sequentially, one PA-I-like
      step tau = min(C_t / 2, l / ||d||^2) per buffered x, d = x_t - x, l = hinge of
      y w.d (``update=OamUpdate.OAM_SEQ``); or by one gradient step
      w <- w + (C_t / 2) sum_{x in B[o]: y w_t.d <= 1} y d (``update=OamUpdate.OAM_GRA``);
    * x_t enters B[k] by reservoir sampling (Algorithm 2, "Algorithm R"): appended while
      B[k] is not full, otherwise j = U % N[k] with U from splitmix64 and x_t replaces
      slot j if j < budget (probability budget / N[k], a uniform slot).

    Pairs with d = 0 (a duplicate of a buffered instance) are skipped by the sequential
    update (no direction); the gradient update adds 0 for them anyway.
    """
    budget = B.shape[1]
    t = t0
    for i in order:
        t += 1
        x, y = X[i], s[i]
        k, o = (1, 0) if y > 0 else (0, 1)
        N[k] += 1
        C_t = C * max(1.0, N[o] / budget)                       # weight: 1 / buffer's share
        if update == _OAM_SEQ:
            for j in range(nB[o]):
                d = x - B[o, j]
                sq, wd = d @ d, w @ d
                _finite(i, "pairwise score w.(x_t - x) or norm", sq, wd)
                if sq == 0.0:
                    continue
                loss = max(0.0, 1.0 - y * wd)                   # pairwise hinge loss
                tau = min(C_t / 2.0, loss / sq)                 # sequential step (Alg. 3)
                w += tau * y * d
        else:
            D = x - B[o, :nB[o]]                                # d for every buffered x
            Dw = D @ w
            _finite(i, "pairwise score w.(x_t - x) or norm", Dw)
            active = y * Dw <= 1.0                              # pairs with positive loss
            w += (C_t / 2.0) * y * D[active].sum(axis=0)        # gradient step
        if nB[k] < budget:                                      # reservoir sampling (Alg. 2)
            B[k, nB[k]] = x
            nB[k] += 1
        else:
            j = splitmix64(rng) % int(N[k])
            if j < budget:
                B[k, j] = x
    return t


def _difference(xi, xv, bi, bv):
    """Columns and values of d = x - b for two sparse rows with sorted columns.

    Each value is formed as in the dense round: x_j - b_j where both rows hold column j,
    x_j or -b_j (that is 0 - b_j) where only one does.
    """
    u = np.union1d(xi, bi)                                      # columns of d
    d = np.zeros(u.shape[0])
    d[np.searchsorted(u, xi)] += xv
    d[np.searchsorted(u, bi)] -= bv
    return u, d


def oam_pass_csr(data, indices, indptr, s, order, w, Bi, Bv, Bn, nB, N, rng, t0, C, update):
    """OAM (the round of :func:`oam_pass`) over CSR rows, with sparse buffers.

    Slot q of buffer k holds one row as ``Bn[k, q]`` sorted columns ``Bi[k, q, :Bn[k, q]]``
    and values ``Bv[k, q, :Bn[k, q]]``; the rest of the slot is 0 (a row entering a slot
    clears what the previous occupant left beyond its own length). The capacity
    ``Bi.shape[2]`` must be at least the longest row of the pass. Every difference
    d = x_t - x is formed on the union of the two rows' columns only, so w, the class
    counts, the fill levels and the generator end as in :func:`oam_pass` over the same
    rows given dense, and the buffers hold the same rows.
    """
    budget, cap = Bi.shape[1], Bi.shape[2]
    t = t0
    for i in order:
        lo, hi = indptr[i], indptr[i + 1]
        if hi - lo > cap:
            raise ValueError(f"row {i} has {hi - lo} stored values, more than the buffer "
                             f"capacity {cap}")
        t += 1
        xi, xv, y = indices[lo:hi], data[lo:hi], s[i]
        k, o = (1, 0) if y > 0 else (0, 1)
        N[k] += 1
        C_t = C * max(1.0, N[o] / budget)                       # weight: 1 / buffer's share
        pairs = [_difference(xi, xv, Bi[o, q, :Bn[o, q]], Bv[o, q, :Bn[o, q]])
                 for q in range(nB[o])]                         # d = x_t - x on its columns
        if update == _OAM_SEQ:
            for u, d in pairs:
                sq, wd = d @ d, w[u] @ d
                _finite(i, "pairwise score w.(x_t - x) or norm", sq, wd)
                if sq == 0.0:
                    continue
                loss = max(0.0, 1.0 - y * wd)                   # pairwise hinge loss
                tau = min(C_t / 2.0, loss / sq)                 # sequential step (Alg. 3)
                w[u] += tau * y * d
        elif pairs:
            Dw = np.array([w[u] @ d for u, d in pairs])         # every score at w_t
            _finite(i, "pairwise score w.(x_t - x) or norm", Dw)
            active = y * Dw <= 1.0                              # pairs with positive loss
            g = np.zeros_like(w)
            for (u, d), a in zip(pairs, active):
                if a:
                    g[u] += d                                   # sum of the active d
            w += (C_t / 2.0) * y * g                            # gradient step
        if nB[k] < budget:                                      # reservoir sampling (Alg. 2)
            j = nB[k]
            nB[k] += 1
        else:
            j = splitmix64(rng) % int(N[k])
        if j < budget:                                          # x_t enters slot j
            Bi[k, j], Bv[k, j] = 0, 0.0
            Bi[k, j, :hi - lo], Bv[k, j, :hi - lo], Bn[k, j] = xi, xv, hi - lo
    return t


def oam_midpoint_score(w, Bi, Bv, Bn, nB):
    """w.(mean(B^-) + mean(B^+)) / 2 for sparse buffers (both holding an instance).

    OAM's ``intercept_`` is minus this score, the midpoint of the projected buffer means,
    each formed as the mean of the buffered rows' scores w.x.
    """
    scores = [[w[Bi[k, q, :Bn[k, q]]] @ Bv[k, q, :Bn[k, q]] for q in range(nB[k])]
              for k in range(2)]                                # w.x per buffered x
    return 0.5 * (sum(scores[0]) / nB[0]) + 0.5 * (sum(scores[1]) / nB[1])   # mean per class


def ubauc_pass(X, s, order, w, c, N, t0, lam, schedule, eta):
    """OL-UBAUC as reconstructed here: OGD on a class-balanced univariate hinge bound.

    For any threshold c, a mis-ordered pair (f(x+) <= f(x-)) has f(x+) <= c or
    f(x-) >= c, so 1 - AUC <= P(f <= c | +) + P(f >= c | -): the AUC risk is bounded by
    a sum of univariate (one instance) terms, each class weighted by the inverse of its
    frequency. With the hinge surrogate and the Tikhonov term, round t minimizes

        lam/2 ||w||^2 + omega_t max(0, 1 - y_t (w.x_t - c)),  omega_t = t / (2 N_t^{y_t}),

    (omega_t = 1/(2 p_hat) is the online class-balancing weight) by one subgradient step
    in (w, c) with eta_t = 1/(lam t) (``schedule=STEP_INV_LAM_T``; the step suggested by
    the O(log T) regret bound of strongly convex OGD) or a constant eta
    (``schedule=STEP_CONSTANT``). Lyu & Ying derive a tighter bound
    through the ranks of the predictions; their exact online update could not be
    retrieved, so this is a reconstruction (see the estimator's docstring).
    """
    t = t0
    for i in order:
        t += 1
        x, y = X[i], s[i]
        k = 1 if y > 0 else 0
        N[k] += 1
        omega = t / (2.0 * N[k])                                # 1 / (2 p_hat_{y_t})
        eta_t = eta if schedule == _STEP_CONSTANT else 1.0 / (lam * t)  # step
        f = w @ x
        _finite(i, "score w.x", f)
        margin = y * (f - c[0])                                 # y_t (w.x_t - c)
        g_w = lam * w                                           # gradient of lam/2 ||w||^2
        g_c = 0.0
        if margin < 1.0:
            g_w = g_w - omega * y * x                           # hinge subgradient in w
            g_c = omega * y                                     # ... and in c
        w -= eta_t * g_w
        c[0] -= eta_t * g_c
    return t


def solam_pass(X, s, order, v, v_avg, alpha, step_sum, N, t0, eta, R):
    """SOLAM (Ying, Wen & Lyu 2016, Algorithm 1): stochastic primal-dual steps on F.

    With p = p_hat_t (fraction of positives so far), v = (w, a, b) and f = w.x,
    F(v, alpha; z) = (1-p)(f - a)^2 [y=1] + p (f - b)^2 [y=-1]
                     + 2(1 + alpha)(p f [y=-1] - (1-p) f [y=1]) - p(1-p) alpha^2.
    Descent in v and ascent in alpha with gamma_t = eta / sqrt(t), projections onto
    Omega_1 = {||w|| <= R, |a| <= R, |b| <= R} and Omega_2 = {|alpha| <= 2R} (kappa = 1),
    and the gamma-weighted averages of the iterates v_t, alpha_t used at each round.
    The initial point is v = 0, alpha = 0 (inside both sets; the paper leaves it free).
    """
    p = X.shape[1]
    t = t0
    for i in order:
        t += 1
        x, y = X[i], s[i]
        N[1 if y > 0 else 0] += 1
        ph = N[1] / t                                           # p_hat_t
        gamma = eta / np.sqrt(t)                                # gamma_t = zeta / sqrt(t)
        w, a, b, al = v[:p], v[p], v[p + 1], alpha[0]
        f = w @ x
        _finite(i, "score w.x or norm ||w||", f)
        if y > 0:
            g_w = (2.0 * (1.0 - ph) * (f - a) - 2.0 * (1.0 + al) * (1.0 - ph)) * x   # dF/dw
            g_a = -2.0 * (1.0 - ph) * (f - a)                                          # dF/da
            g_b = 0.0                                                                  # dF/db
            g_al = -2.0 * (1.0 - ph) * f - 2.0 * ph * (1.0 - ph) * al                  # dF/dalpha
        else:
            g_w = (2.0 * ph * (f - b) + 2.0 * (1.0 + al) * ph) * x
            g_a = 0.0
            g_b = -2.0 * ph * (f - b)
            g_al = 2.0 * ph * f - 2.0 * ph * (1.0 - ph) * al
        G = step_sum[0] + gamma                                 # Gamma_t
        v_avg *= step_sum[0] / G                                # vbar_t = (Gamma_{t-1} vbar_{t-1}
        v_avg += (gamma / G) * v                                #          + gamma_t v_t) / Gamma_t
        alpha[1] = (step_sum[0] * alpha[1] + gamma * al) / G    # alpha_bar_t
        step_sum[0] = G
        w_new = w - gamma * g_w                                 # primal descent
        nw = np.sqrt(w_new @ w_new)
        _finite(i, "score w.x or norm ||w||", nw)
        if nw > R:
            w_new *= R / nw                                     # projection onto ||w|| <= R
        v[:p] = w_new
        v[p] = min(R, max(-R, a - gamma * g_a))                 # projection onto |a| <= R
        v[p + 1] = min(R, max(-R, b - gamma * g_b))             # projection onto |b| <= R
        alpha[0] = min(2.0 * R, max(-2.0 * R, al + gamma * g_al))   # dual ascent, |alpha| <= 2R
    return t


def adaoam_pass(X, s, order, w, xbar, Sigma, N, G2, t0, lam, eta, delta):
    """AdaOAM (Ding et al. 2015): OPAUC's moment gradient with AdaGrad diagonal steps.

    With the statistics of the opposite class (mean xbar, covariance Sigma) and
    a = y_t (x_t - xbar), the gradient of lam/2 ||w||^2 + 1/2 [(1 - w.a)^2 + w' Sigma w]
    (the average pairwise square loss against all earlier opposite instances, halved,
    that is psi_S(w.a, w' Sigma w) / 2 with the library's psi_S) is
    g_t = lam w - (1 - w.a) a + Sigma w; it is lam w alone before any opposite instance.
    AdaGrad: G2 += g_t^2, w <- w - eta g_t / (delta + sqrt(G2)) per feature (a feature
    whose denominator is 0 has had only zero gradients and is left unchanged).
    The own class's mean and covariance then take x_t in (Welford form, on the whole
    p x p square; the kernel's ``welford_full`` multiplies by 1/n where
    :func:`welford_update` divides by n, equal up to rounding).
    """
    t = t0
    for i in order:
        t += 1
        x, y = X[i], s[i]
        own, opp = (1, 0) if y > 0 else (0, 1)
        g = lam * w                                             # gradient of lam/2 ||w||^2
        if N[opp] > 0:
            a = y * (x - xbar[opp])                             # a = y_t (x_t - c_t^{opp})
            Sw = Sigma[opp] @ w
            _finite(i, "score w.a or variance w' Sigma w", w @ a, w @ Sw)
            _, d_mu, d_s2 = loss_grad(_LOSS_S, w @ a, w @ Sw)   # psi_S(w.a, w' Sigma w), eq. (3)
            g = g + 0.5 * (d_mu * a + 2.0 * d_s2 * Sw)          # OPAUC gradient (halved psi_S)
        N[own] = welford_update(x, xbar[own], Sigma[own], N[own])   # class statistics
        G2 += g * g                                             # sum of squared gradients
        H = delta + np.sqrt(G2)                                 # diag(H_t) = delta + s_t
        w -= eta * np.divide(g, H, out=np.zeros_like(g), where=H > 0)   # AdaGrad step
    return t
