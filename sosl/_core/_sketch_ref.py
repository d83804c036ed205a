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
=========  ==========================================  ==============================
"""

import numpy as np

from ._codes import Loss, SketchFamily
from ._losses_ref import loss_grad
from ._moments_ref import round_prologue

__all__ = ["FAMILY_FD", "FAMILY_FD_DIAG", "shrink", "add_row", "sketch_moments", "sketch_pass"]

FAMILY_FD = int(SketchFamily.FAMILY_FD)
FAMILY_FD_DIAG = int(SketchFamily.FAMILY_FD_DIAG)
LOSS_M = int(Loss.LOSS_M)
LOSS_S = int(Loss.LOSS_S)


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
