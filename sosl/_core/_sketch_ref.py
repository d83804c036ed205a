"""NumPy reference of the sketched second-order learner (OAUC-M / OAUC-S with sketched covariances).

One line per equation. The exact learner (Luo, Cheng & Zhang, Algorithm 1; reference
:mod:`sosl._core._linear_ref`) keeps, per class, a mean and a p x p covariance. Here each
class keeps its mean, its count and a frequent-directions sketch ``B`` of at most ``2 r``
rows (Liberty 2013; Ghashami et al. 2016) of the rows

    z_N = sqrt((N - 1) / N) (x - xbar_{N-1})                                   (S1)

whose outer products add up to the centered scatter exactly,
``sum_N z_N z_N' = N Sigma_N`` (Welford), so the sketch is the only approximation:

    Sigma ~ B' B / N                                                           (S2)

When the sketch holds ``2 r`` rows it is shrunk to ``r`` through the eigen-decomposition of
its ``2r x 2r`` Gram matrix ``B B' = U diag(lam_i) U'`` (descending ``lam_i``):

    delta = lam_r                                  (the (r+1)-th largest)     (S3)
    B <- diag(sqrt(max(lam_i - delta, 0) / lam_i)) U' B,  i < r               (S4)

Each shrink lowers ``B'B`` by at most ``delta`` in spectral norm and its Frobenius norm by at
least ``(r + 1) delta``, which gives the frequent-directions guarantee
``||A'A - B'B||_2 <= sum(delta) <= ||A - A_k||_F^2 / (r + 1 - k)`` for every ``k <= r``
(``A`` stacks the rows S1). The running sum of ``delta`` is kept per class.

Two sketch families (``family`` code):

* ``FAMILY_FD`` (0): Sigma ~ B'B / N (S2).
* ``FAMILY_FD_DIAG`` (1): frequent directions plus the exact diagonal of the residual,
  Sigma ~ (B'B + diag(dA - dB)) / N with ``dA = diag(A'A)`` (kept exactly, O(m) per row) and
  ``dB = diag(B'B)``. The residual ``A'A - B'B`` is positive semi-definite, so its diagonal is
  >= 0 and the estimate keeps every feature's own variance exact (S5).

The round itself is eqs. (12)-(14) of the paper with the sketched moments:

    a = y (x - xbar_opp),  mu = w.a                                            (eq. 14)
    Sw = Sigma_opp w (from S2 or S5),  s2 = w' Sw
    g = lam w + d_mu a + 2 d_s2 Sw                                             (eq. 12-14)
    w <- w - eta_t g,   eta_t = 1/(lam t) or eta                               (eq. 12)

Symbols
-------
=========  ==========================================  ==============================
symbol     paper / sketch                              public name
=========  ==========================================  ==============================
w          w_t, the weight vector                      ``coef_``
xbar       xbar_t^{+/-}, class means (eqs. 15, 17)     ``means_``
B          frequent-directions sketch of the rows S1   ``sketches_``
nrows      rows of B in use (<= 2 r)                   -
N          N_t^{+/-}, class counts                     ``counts_``
dA, dB     diag(A'A), diag(B'B) (FAMILY_FD_DIAG)       -
delta      running sum of the shrinks (S3)             ``shrinkage_``
r          sketch rank (2 r rows before a shrink)      ``rank``
K          tracked columns (slots) at most             ``max_columns``
cnt        rows holding a value, per column            ``column_counts_``
uw, ut     lazy weight of an untracked column and      ``untracked_weights_``,
           the round it was last brought up to date    ``untracked_rounds_``
S          raw sums sum x, sum x^2 per class of an     ``untracked_sums_``
           untracked column
PQ         sum w S1, sum w^2 S2, sum w^2 S1^2 per      ``untracked_moments_``
           class over the untracked columns
=========  ==========================================  ==============================

Bounded sketch (``max_columns = K``)
------------------------------------
:func:`capped_pass` keeps the sketch on at most K *tracked* columns, the frequent ones; every
other column seen is *untracked* and has an exact diagonal variance only, so that
Sigma ~ blockdiag(sketch on the tracked set, diag on the rest) and a round costs
O(r K + nnz) instead of O(r m). The tracked arrays (``w, xbar, B, dA, dB``) are indexed by
slot (``col[k]`` is the column in slot k); an untracked column j keeps its raw sums
``S1 = sum x_j``, ``S2 = sum x_j^2`` per class (so that xbar_j = S1/N and its scatter
S2 - S1^2/N need no update on the rounds where x_j = 0) and a lazy weight.

    cnt_j += 1 for every stored x_j                                             (C1)
    j untracked, a slot free            -> j takes the next slot
    j untracked, cnt_j > PROMOTE cnt_min -> j takes the slot of the least-counted
                                           tracked column (the first such slot)

Leaving a slot, a column keeps its mean and its exact scatter (S1 = N xbar,
S2 = dA + N xbar^2) and its weight, and loses its sketch coordinates (its column of every
class's B is set to 0, which only drops rows and columns of B'B: the residual
A'A - B'B restricted to the other columns is unchanged). Entering a slot it starts with
zero sketch coordinates, xbar = S1/N and dA = S2 - S1^2/N: its variance is still exact
(through the diagonal term of ``fd_diag``) and its covariances with the others are learnt
from then on. The round, with U the untracked columns of x:

    mu = w_T.a_T + y (v_U.x_U - P_opp / N_opp)                                  (C2)
    s2 = w_T' Sigma_T w_T + (Q2_opp - Q1_opp / N_opp) / N_opp                   (C3)
    g_j = lam v_j + d_mu y (x_j - S1_j/N) + 2 d_s2 D_j v_j,  j in U,
          D_j = (S2_j - S1_j^2/N) / N  (the opposite class)                     (C4)

where ``v_j = uw_j prod_{s=ut_j+1}^{t-1} (1 - eta_s lam)`` is the untracked weight brought up
to date (:func:`decay`). An untracked weight moves by its full gradient (C4) on the rounds
where x_j is stored and only by the shrink ``1 - eta_t lam`` on the others: the terms
``-d_mu y xbar_j`` and ``2 d_s2 D_j w_j`` of the rounds where x_j = 0 are dropped. That, and
the block-diagonal covariance, are the approximations of the cap; with K at least the
number of columns seen every column is tracked, U is empty, P = Q = 0, and
:func:`capped_pass` is :func:`sketch_pass`.
"""

import numpy as np

from ._codes import Loss, Schedule, SketchFamily
from ._losses_ref import loss_grad
from ._moments_ref import round_prologue

__all__ = ["FAMILY_FD", "FAMILY_FD_DIAG", "PROMOTE", "shrink", "add_row", "sketch_moments",
           "sketch_pass", "decay", "capped_state", "capped_pass"]

FAMILY_FD = int(SketchFamily.FAMILY_FD)
FAMILY_FD_DIAG = int(SketchFamily.FAMILY_FD_DIAG)
LOSS_M = int(Loss.LOSS_M)
LOSS_S = int(Loss.LOSS_S)
STEP_CONSTANT = int(Schedule.STEP_CONSTANT)
#: an untracked column displaces the least-counted tracked one once its count exceeds
#: PROMOTE times that count (hysteresis: a column that just left needs twice the count
#: of the new minimum to come back, so the set does not churn at its boundary)
PROMOTE = 2


def shrink(B, r):
    """Shrink a full sketch ``B`` (2r x p) to r rows in place; return delta (S3-S4)."""
    lam, U = np.linalg.eigh(B @ B.T)                              # B B' = U diag(lam) U'
    lam, U = lam[::-1], U[:, ::-1]                                 # descending
    delta = max(lam[r], 0.0)                                       # (S3)
    keep = lam[:r] > delta
    f = np.zeros(r)
    f[keep] = np.sqrt((lam[:r][keep] - delta) / lam[:r][keep])
    B[:r] = (f[:, None] * U[:, :r].T) @ B                          # (S4)
    B[r:] = 0.0
    return delta


def add_row(x, c, xbar, B, nrows, N, dA, dB, delta, r):
    """Add instance x to class c: Welford mean, sketch row S1, shrink when full (S3-S4)."""
    N[c] += 1
    n = float(N[c])
    z = np.sqrt((n - 1.0) / n) * (x - xbar[c])                     # (S1)
    xbar[c] += (x - xbar[c]) / n                                   # eq. (15)/(17)
    if n == 1.0:
        return                                                     # z = 0: nothing to sketch
    dA[c] += z * z                                                 # diag(A'A), exact
    B[c, nrows[c]] = z
    dB[c] += z * z                                                 # diag(B'B)
    nrows[c] += 1
    if nrows[c] == 2 * r:
        delta[c] += shrink(B[c], r)                                # (S3)-(S4)
        nrows[c] = r
        dB[c] = np.einsum("ij,ij->j", B[c, :r], B[c, :r])          # diag(B'B) after the shrink


def sketch_moments(w, c, B, nrows, N, dA, dB, family):
    """(Sigma_c w, w' Sigma_c w) from the sketch of class c: (S2) or (S5)."""
    Bc = B[c, :nrows[c]]
    Bw = Bc @ w
    Sw = Bc.T @ Bw / N[c]                                          # (S2): B'B w / N
    if family == FAMILY_FD_DIAG:
        Sw = Sw + np.maximum(dA[c] - dB[c], 0.0) * w / N[c]        # (S5): + diag residual
    return Sw, float(w @ Sw)


def sketch_pass(X, s, order, w, xbar, B, nrows, N, dA, dB, delta, t0, lam, eta, schedule,
                loss, family, r):
    """One online pass of the sketched learner over ``X[order]`` (state updated in place).

    Parameters
    ----------
    X : ndarray (n, p), dense rows
    s : ndarray (n,) of +-1.0
    order : ndarray (m,) of intp, the rows to visit, in order
    w : ndarray (p,), the weights (updated)
    xbar : ndarray (2, p), class means, row 0 negative, row 1 positive (updated)
    B : ndarray (2, 2 r, p), the sketches (updated)
    nrows : ndarray (2,) of int64, rows of each sketch in use (updated)
    N : ndarray (2,) of int64, class counts (updated)
    dA, dB : ndarray (2, p), diag(A'A) and diag(B'B) per class (updated)
    delta : ndarray (2,), accumulated shrinkage per class (updated)
    t0 : int, rounds already played
    lam, eta : float, regularization and constant step
    schedule : int, ``Schedule`` code (STEP_INV_LAM_T: 1/(lam t); STEP_CONSTANT: eta)
    loss : int, ``Loss`` code
    family : int, FAMILY_FD or FAMILY_FD_DIAG
    r : int, sketch rank

    Returns
    -------
    t : int, rounds played after the pass
    """
    t = t0
    for i in order:
        t += 1
        x, y = X[i], s[i]
        own, opp, eta_t = round_prologue(y, t, schedule, eta, lam)     # eq. (12) step
        g = lam * w                                                     # d/dw lam/2 ||w||^2
        if N[opp] > 0:
            a = y * (x - xbar[opp])                                     # a = y (x - xbar)
            Sw, s2 = sketch_moments(w, opp, B, nrows, N, dA, dB, family)
            _, d_mu, d_s2 = loss_grad(loss, float(w @ a), s2)           # eq. (13)/(14)
            g = g + d_mu * a + 2.0 * d_s2 * Sw                          # chain rule
        add_row(x, own, xbar, B, nrows, N, dA, dB, delta, r)            # (S1)-(S4)
        w -= eta_t * g                                                  # eq. (12)
    return t


def decay(a, b, schedule, eta, lam):
    """prod_{s=a+1}^{b} (1 - eta_s lam): the shrink of rounds a+1..b (lazy weights)."""
    if b == a:
        return 1.0
    if schedule == STEP_CONSTANT:
        return (1.0 - eta * lam) ** (b - a)                       # constant step
    return a / b                                                   # prod (1 - 1/s) telescopes


def capped_state(p, r, K):
    """Fresh state of :func:`capped_pass` for p columns, rank r and K slots."""
    return dict(w=np.zeros(K), xbar=np.zeros((2, K)), B=np.zeros((2, 2 * r, K)),
                nrows=np.zeros(2, dtype=np.int64), N=np.zeros(2, dtype=np.int64),
                dA=np.zeros((2, K)), dB=np.zeros((2, K)), delta=np.zeros(2),
                col=np.full(K, -1, dtype=np.int64), kt=np.zeros(1, dtype=np.int64),
                cnt=np.zeros(p, dtype=np.int64), slot=np.full(p, -1, dtype=np.int64),
                uw=np.zeros(p), ut=np.zeros(p, dtype=np.int64), S=np.zeros((2, 2, p)),
                PQ=np.zeros((3, 2)))


def _untrack(k, t, st):
    """Column col[k] leaves slot k after round t: keeps mean, scatter and weight (lazy)."""
    j, N = st["col"][k], st["N"]
    st["uw"][j], st["ut"][j] = st["w"][k], t
    st["S"][0, :, j] = N * st["xbar"][:, k]                        # S1 = N xbar
    st["S"][1, :, j] = st["dA"][:, k] + N * st["xbar"][:, k] ** 2   # S2 = scatter + N xbar^2
    v, S1, S2 = st["uw"][j], st["S"][0, :, j], st["S"][1, :, j]
    st["PQ"] += np.array([v * S1, v * v * S2, v * v * S1 * S1])
    st["slot"][j], st["col"][k] = -1, -1
    for name in ("w", "xbar", "dA", "dB"):
        st[name][..., k] = 0.0
    st["B"][:, :, k] = 0.0                                         # sketch coordinates dropped


def _track(j, k, t, st, schedule, eta, lam):
    """Column j enters slot k after round t, with zero sketch coordinates."""
    N, S1, S2 = st["N"], st["S"][0, :, j], st["S"][1, :, j]
    v = st["uw"][j] * decay(st["ut"][j], t, schedule, eta, lam)
    st["PQ"] -= np.array([v * S1, v * v * S2, v * v * S1 * S1])
    st["w"][k] = v
    for c in (0, 1):
        if N[c] > 0:
            st["xbar"][c, k] = S1[c] / N[c]                         # xbar = S1 / N
            st["dA"][c, k] = max(S2[c] - S1[c] * S1[c] / N[c], 0.0)  # exact scatter
    st["col"][k], st["slot"][j] = j, k
    st["S"][:, :, j] = 0.0
    st["uw"][j], st["ut"][j] = 0.0, 0


def capped_pass(X, s, order, st, t0, lam, eta, schedule, loss, family, r, K):
    """One online pass of the sketched learner bounded to K tracked columns (state ``st``
    of :func:`capped_state` updated in place); returns the round counter after the pass.

    Same parameters as :func:`sketch_pass` (dense rows ``X`` in original coordinates),
    the state in one dict, and ``K`` the number of slots.
    """
    t = t0
    for i in order:
        x, y = X[i], s[i]
        nz = np.flatnonzero(x)
        for j in nz:                                                            # (C1)
            st["cnt"][j] += 1
            if st["slot"][j] >= 0:
                continue
            kt = int(st["kt"][0])
            if kt < K:
                _track(j, kt, t, st, schedule, eta, lam)
                st["kt"][0] += 1
                continue
            k = int(np.argmin(st["cnt"][st["col"][:kt]]))
            if st["cnt"][j] > PROMOTE * st["cnt"][st["col"][k]]:
                _untrack(k, t, st)
                _track(j, k, t, st, schedule, eta, lam)
        t += 1
        own, opp, eta_t = round_prologue(y, t, schedule, eta, lam)             # eq. (12) step
        rho = 1.0 - eta_t * lam
        kt = int(st["kt"][0])
        xs = x[st["col"][:kt]]                                                  # tracked x
        U = nz[st["slot"][nz] < 0]                                              # untracked
        v = st["uw"][U] * np.array([decay(a, t - 1, schedule, eta, lam) for a in st["ut"][U]])
        w, xbar = st["w"][:kt], st["xbar"][:, :kt]
        B, dA, dB = st["B"][:, :, :kt], st["dA"][:, :kt], st["dB"][:, :kt]
        g = lam * w
        gU = lam * v
        if st["N"][opp] > 0:
            n = float(st["N"][opp])
            S1, S2 = st["S"][0, opp, U], st["S"][1, opp, U]
            P, Q2, Q1 = st["PQ"][:, opp]
            a = y * (xs - xbar[opp])                                            # a = y (x - xbar)
            Sw, s2 = sketch_moments(w, opp, B, st["nrows"], st["N"], dA, dB, family)
            mu = float(w @ a) + y * (float(v @ x[U]) - P / n)                   # (C2)
            s2 = s2 + max(Q2 - Q1 / n, 0.0) / n                                 # (C3)
            _, d_mu, d_s2 = loss_grad(loss, mu, s2)                             # eq. (13)/(14)
            g = g + d_mu * a + 2.0 * d_s2 * Sw                                  # chain rule
            D = np.maximum(S2 - S1 * S1 / n, 0.0) / n
            gU = gU + d_mu * y * (x[U] - S1 / n) + 2.0 * d_s2 * D * v           # (C4)
        add_row(xs, own, xbar, B, st["nrows"], st["N"], dA, dB, st["delta"], r)  # (S1)-(S4)
        S_old = st["S"][:, :, U].copy()
        st["S"][0, own, U] += x[U]                                              # raw sums
        st["S"][1, own, U] += x[U] ** 2
        w -= eta_t * g                                                          # eq. (12)
        v_new = v - eta_t * gU                                                  # eq. (12), U
        S_new = st["S"][:, :, U]
        st["PQ"][0] = rho * st["PQ"][0] + S_new[0] @ v_new - rho * (S_old[0] @ v)
        st["PQ"][1] = rho * rho * st["PQ"][1] + S_new[1] @ v_new ** 2 \
            - rho * rho * (S_old[1] @ v ** 2)
        st["PQ"][2] = rho * rho * st["PQ"][2] + (S_new[0] ** 2) @ v_new ** 2 \
            - rho * rho * ((S_old[0] ** 2) @ v ** 2)
        st["uw"][U], st["ut"][U] = v_new, t
    return t
