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
w          w_t, the weight vector                      ``coef_[0]``
xbar       xbar_t^{+/-}, class means (eqs. 15, 17)     ``means_``
B          frequent-directions sketch of the rows S1   ``sketches_``
nrows      rows of B in use (<= 2 r)                   -
N          N_t^{+/-}, class counts                     ``counts_``
dA, dB     diag(A'A), diag(B'B) (FAMILY_FD_DIAG)       -
delta      running sum of the shrinks (S3)             ``shrinkage_``
r          sketch rank (2 r rows before a shrink)      ``rank``
K          tracked columns (slots) at most             ``max_columns``
cnt        rows holding a value, per column            ``column_counts_``
W, ep      lazy weight base of an untracked column,    ``untracked_weights_``,
           and the epoch it belongs to                 ``untracked_epochs_``
S          raw sums sum x, sum x^2 per class of an     ``untracked_sums_``
           untracked column
R, H       scale and drift accumulators of the lazy    ``untracked_scale_``
           weights: w_j = R (W_j + S1_0j H_0 + S1_1j H_1)
Pv, Qm     sums over the untracked columns of u S1_c   ``untracked_lin_``,
           and u u' T (u = (W, S1_0, S1_1))            ``untracked_quad_``
=========  ==========================================  ==============================

Bounded sketch (``max_columns = K``)
------------------------------------
:func:`capped_pass` keeps the sketch on at most K *tracked* columns, the frequent ones; every
other column seen is *untracked* and has an exact diagonal variance only, so that
Sigma ~ blockdiag(sketch on the tracked set, diag on the rest) and a round costs
O(r K + nnz) instead of O(r m). The tracked arrays (``w, xbar, B, dA, dB``) are indexed by
slot (``col[k]`` is the column in slot k); an untracked column j keeps its raw sums
``S1 = sum x_j``, ``S2 = sum x_j^2`` per class (xbar_j = S1/N and its scatter S2 - S1^2/N
need no update on the rounds where x_j = 0) and a lazy weight.

    cnt_j += 1 for every stored x_j                                             (C1)
    j untracked, a slot free            -> j takes the next slot
    j untracked, cnt_j > PROMOTE cnt_min -> j takes the slot of the least-counted
                                           tracked column (the first such slot)

Leaving a slot, a column keeps its mean and exact scatter (S1 = N xbar, S2 = dA + N xbar^2)
and its weight, and loses its sketch coordinates (its column of every class's B is set to
0, which only drops a row and a column of B'B). Entering a slot it starts with zero
sketch coordinates, xbar = S1/N and dA = S2 - S1^2/N: its variance stays exact (through
the diagonal term of ``fd_diag``) and its covariances with the other tracked columns are
learnt from then on.

On a round where x_j = 0 the gradient step of an untracked weight is

    w_j <- rho_t w_j + eta_t d_mu y S1_opp,j / N_opp - 2 eta_t d_s2 D_j w_j
    (rho_t = 1 - eta_t lam)

The first two terms are applied exactly and lazily: with a scale R (R_t = 1/t for the step
1/(lam t), R_t = R_{t-1} rho_t for a constant step) and drift accumulators
H_c += eta_t d_mu y / (N_c R_t) (c the opposite class), ``w_j = R (W_j + S1_0j H_0 + S1_1j
H_1)`` holds between the rounds where x_j is stored, since S1 is constant there        (C2)
The third (the column's own variance, times 2 d_s2 eta_t, small for a rare column) is
applied only on the rounds where x_j is stored: that, and the block-diagonal covariance,
are the approximations of the cap. With u_j = (W_j, S1_0j, S1_1j), h = (1, H_0, H_1):

    P_c = sum_U w_j S1_cj = R h.Pv_c,          Pv_c = sum_U u_j S1_cj           (C3)
    Q_T = sum_U w_j^2 T_j = R^2 h' Qm_T h,     Qm_T = sum_U u_j u_j' T_j
    mu = w_T.a_T + y (v_X.x_X - P_opp / N_opp)                                 (C4)
    s2 = w_T' Sigma_T w_T + (Q_{S2,opp} - Q_{S1^2,opp} / N_opp) / N_opp          (C5)
    g_j = lam v_j + d_mu y (x_j - S1_opp,j / N) + 2 d_s2 D_j v_j, j stored      (C6)

with T in (S2_0, S2_1, S1_0^2, S1_1^2) and D_j = (S2 - S1^2/N)/N of the opposite class;
Pv and Qm change only where a column is stored, enters or leaves. A round where R would
become 0 (rho_t = 0) starts a new *epoch*: every W counts as 0 from then on (columns carry
the epoch of their W), R = 1, H = 0, and the W-parts of Pv, Qm are cleared; a scale outside
[1e-100, 1e100] is folded into the W's (O(m), once in many rounds). With K at least the
number of columns seen every column is tracked, U is empty, Pv = Qm = 0, and
:func:`capped_pass` is :func:`sketch_pass`.
"""

import numpy as np

from ._codes import Loss, Schedule, SketchFamily
from ._losses_ref import loss_grad
from ._moments_ref import round_prologue

__all__ = ["FAMILY_FD", "FAMILY_FD_DIAG", "PROMOTE", "shrink", "add_row", "sketch_moments",
           "sketch_pass", "RESCALE", "capped_state", "weight_of", "capped_pass"]

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


#: a scale of the lazy weights outside [1 / RESCALE, RESCALE] is folded into them
RESCALE = 1e100


def capped_state(p, r, K):
    """Fresh state of :func:`capped_pass` for p columns, rank r and K slots."""
    return dict(w=np.zeros(K), xbar=np.zeros((2, K)), B=np.zeros((2, 2 * r, K)),
                nrows=np.zeros(2, dtype=np.int64), N=np.zeros(2, dtype=np.int64),
                dA=np.zeros((2, K)), dB=np.zeros((2, K)), delta=np.zeros(2),
                col=np.full(K, -1, dtype=np.int64), kt=np.zeros(1, dtype=np.int64),
                cnt=np.zeros(p, dtype=np.int64), slot=np.full(p, -1, dtype=np.int64),
                W=np.zeros(p), ep=np.zeros(p, dtype=np.int64), S=np.zeros((2, 2, p)),
                Pv=np.zeros((2, 3)), Qm=np.zeros((4, 3, 3)), RH=np.array([1.0, 0.0, 0.0]),
                epoch=np.zeros(1, dtype=np.int64))


def _u(j, st):
    """u_j = (W_j, S1_0j, S1_1j), W_j counted as 0 outside the current epoch."""
    W = st["W"][j] if st["ep"][j] == st["epoch"][0] else 0.0
    return np.array([W, st["S"][0, 0, j], st["S"][0, 1, j]])


def _moments(j, st, sign):
    """Add (sign=1) or remove (-1) column j's terms of Pv and Qm (C3)."""
    u, S1, S2 = _u(j, st), st["S"][0, :, j], st["S"][1, :, j]
    T = np.r_[S2, S1 * S1]                                         # S2_0, S2_1, S1_0^2, S1_1^2
    st["Pv"] += sign * S1[:, None] * u
    st["Qm"] += sign * T[:, None, None] * np.outer(u, u)


def weight_of(j, st):
    """Current weight of untracked column j: R (W_j + S1_0j H_0 + S1_1j H_1) (C2)."""
    R, h = st["RH"][0], np.r_[1.0, st["RH"][1:]]
    return R * float(_u(j, st) @ h)


def _set_weight(j, v, st):
    """Store weight v of untracked column j (after its sums S are final)."""
    R, H = st["RH"][0], st["RH"][1:]
    st["W"][j] = v / R - st["S"][0, :, j] @ H
    st["ep"][j] = st["epoch"][0]


def _untrack(k, st):
    """Column col[k] leaves slot k: keeps mean, scatter and weight (lazy)."""
    j, N = st["col"][k], st["N"]
    st["S"][0, :, j] = N * st["xbar"][:, k]                        # S1 = N xbar
    st["S"][1, :, j] = st["dA"][:, k] + N * st["xbar"][:, k] ** 2   # S2 = scatter + N xbar^2
    _set_weight(j, st["w"][k], st)
    _moments(j, st, 1.0)
    st["slot"][j], st["col"][k] = -1, -1
    for name in ("w", "xbar", "dA", "dB"):
        st[name][..., k] = 0.0
    st["B"][:, :, k] = 0.0                                         # sketch coordinates dropped


def _track(j, k, st):
    """Column j enters slot k, with zero sketch coordinates."""
    N, S1, S2 = st["N"], st["S"][0, :, j], st["S"][1, :, j]
    st["w"][k] = weight_of(j, st)
    _moments(j, st, -1.0)
    for c in (0, 1):
        if N[c] > 0:
            st["xbar"][c, k] = S1[c] / N[c]                         # xbar = S1 / N
            st["dA"][c, k] = max(S2[c] - S1[c] * S1[c] / N[c], 0.0)  # exact scatter
    st["col"][k], st["slot"][j] = j, k
    st["S"][:, :, j] = 0.0
    st["W"][j] = 0.0


def _rescale(st, m):
    """Fold the scale and drift into the W's of the untracked columns < m: R = 1, H = 0."""
    U = [j for j in range(m) if st["slot"][j] < 0]
    v = [weight_of(j, st) for j in U]
    st["RH"][:] = (1.0, 0.0, 0.0)
    st["Pv"][:], st["Qm"][:] = 0.0, 0.0
    for j, vj in zip(U, v):
        st["W"][j], st["ep"][j] = vj, st["epoch"][0]
        _moments(j, st, 1.0)


def capped_pass(X, s, order, st, t0, lam, eta, schedule, loss, family, r, K):
    """One online pass of the sketched learner bounded to K tracked columns (state ``st``
    of :func:`capped_state` updated in place); returns the round counter after the pass.

    Same parameters as :func:`sketch_pass` (dense rows ``X`` in original coordinates),
    the state in one dict, and ``K`` the number of slots.
    """
    t = t0
    p = X.shape[1]
    for i in order:
        x, y = X[i], s[i]
        if not 1.0 / RESCALE <= abs(st["RH"][0]) <= RESCALE:
            _rescale(st, p)
        nz = np.flatnonzero(x)
        for j in nz:                                                            # (C1)
            st["cnt"][j] += 1
            if st["slot"][j] >= 0:
                continue
            kt = int(st["kt"][0])
            if kt < K:
                _track(j, kt, st)
                st["kt"][0] += 1
                continue
            k = int(np.argmin(st["cnt"][st["col"][:kt]]))
            if st["cnt"][j] > PROMOTE * st["cnt"][st["col"][k]]:
                _untrack(k, st)
                _track(j, k, st)
        t += 1
        own, opp, eta_t = round_prologue(y, t, schedule, eta, lam)             # eq. (12) step
        rho = 1.0 - eta_t * lam
        kt = int(st["kt"][0])
        xs = x[st["col"][:kt]]                                                  # tracked x
        U = nz[st["slot"][nz] < 0]                                              # untracked
        v = np.array([weight_of(j, st) for j in U])
        w, xbar = st["w"][:kt], st["xbar"][:, :kt]
        B, dA, dB = st["B"][:, :, :kt], st["dA"][:, :kt], st["dB"][:, :kt]
        g = lam * w
        gU = lam * v
        has_opp = st["N"][opp] > 0
        if has_opp:
            n = float(st["N"][opp])
            R, h = st["RH"][0], np.r_[1.0, st["RH"][1:]]
            P = R * float(st["Pv"][opp] @ h)                                    # (C3)
            Q2 = R * R * float(h @ st["Qm"][opp] @ h)
            Q1 = R * R * float(h @ st["Qm"][2 + opp] @ h)
            a = y * (xs - xbar[opp])                                            # a = y (x - xbar)
            Sw, s2 = sketch_moments(w, opp, B, st["nrows"], st["N"], dA, dB, family)
            mu = float(w @ a) + y * (float(v @ x[U]) - P / n)                   # (C4)
            s2 = s2 + max(Q2 - Q1 / n, 0.0) / n                                 # (C5)
            _, d_mu, d_s2 = loss_grad(loss, mu, s2)                             # eq. (13)/(14)
            g = g + d_mu * a + 2.0 * d_s2 * Sw                                  # chain rule
            S1, S2 = st["S"][0, opp, U], st["S"][1, opp, U]
            D = np.maximum(S2 - S1 * S1 / n, 0.0) / n
            gU = gU + d_mu * y * (x[U] - S1 / n) + 2.0 * d_s2 * D * v           # (C6)
        for j in U:
            _moments(j, st, -1.0)
        add_row(xs, own, xbar, B, st["nrows"], st["N"], dA, dB, st["delta"], r)  # (S1)-(S4)
        w -= eta_t * g                                                          # eq. (12)
        R = 1.0 / t if schedule != STEP_CONSTANT else st["RH"][0] * rho         # (C2) scale
        if R == 0.0:                                                            # a new epoch
            st["epoch"][0] += 1
            st["Pv"][:, 0] = 0.0
            st["Qm"][:, 0, :], st["Qm"][:, :, 0] = 0.0, 0.0
            st["RH"][1:] = 0.0
            R = 1.0
        st["RH"][0] = R
        if has_opp:
            st["RH"][1 + opp] += eta_t * d_mu * y / (n * R)                     # (C2) drift
        st["S"][0, own, U] += x[U]                                              # raw sums
        st["S"][1, own, U] += x[U] ** 2
        for j, vj in zip(U, v - eta_t * gU):                                    # eq. (12), U
            _set_weight(j, vj, st)
            _moments(j, st, 1.0)
    return t
