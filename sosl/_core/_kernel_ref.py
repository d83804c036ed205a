"""NumPy reference of the kernel second-order learners (OKAUC-M, OKAUC-S).

One line per equation of Luo, Cheng & Zhang, "Online AUC Optimization Based on
Second-order Surrogate Loss" (Section 5, Algorithms 2-4, eqs. 20-28). Same signature and
the same sample order as the Cython kernel :func:`sosl._core._kernel.kernel_pass`, so the
two can be compared to ~1e-12; verify/ uses these functions too.

Symbols
-------
=========  ===============================================  =========================
symbol     paper                                            public name
=========  ===============================================  =========================
SV         support vectors x_i of K_t^- and K_t^+            ``support_vectors_``
alpha      alpha_{i,t}, weights of f_t (eq. 20)              ``dual_coef_``
G          Gram matrix k(x_i, x_j) of the buffers            -
fb         f_t(x_i) on the buffers (kept up to date)         -
cap        N^-, N^+ (budgets) or allocated capacity          ``budget``
count      |K_t^-|, |K_t^+|                                  -
head       position of the oldest vector (FIFO, Alg. 4)      -
s          y_t in {-1, +1}                                   ``classes_[1]`` -> +1
O          I_t, occupied slots of the opposite buffer S_t    -
mu, s2     mu_t, sigma_t^2 of f_t over S_t (eq. 21)           -
b, A       b_t, A_t (eq. 23)                                 -
Psi        Psi_t (eq. 24)                                    -
g, h       Psi_t / sqrt(A_t) and 1 / (2 sqrt(A_t))           -
lam        lambda                                            ``lam``
eta        eta_t (constant) or 1/(lam t)                     ``eta``
=========  ===============================================  =========================

Storage
-------
Slot ``i`` of the arrays ``SV, alpha, G, fb`` belongs to the negative buffer when
``i < cap[0]`` and to the positive buffer otherwise (block ``c`` starts at
``start[c] = 0, cap[0]``). Block ``c`` holds its ``count[c]`` vectors in slots
``start[c] .. start[c] + count[c] - 1``; once full it is a ring whose oldest vector is at
``start[c] + head[c]``. Entries of unoccupied slots are never read. The pass never grows
the arrays: the infinite-buffer mode (``budget=None``) is the caller allocating enough
capacity for the batch, so that no removal happens.

Conventions
-----------
* ``loss=0`` is psi_M (OKAUC-M, eq. 26), ``loss=1`` is psi_S (OKAUC-S, eq. 27).
* ``eta <= 0`` selects eta_t = 1/(lam t); ``eta > 0`` a constant step.
* Rounds with an empty opposite buffer carry only the regularizer (psi is undefined);
  x_t still enters its buffer, with weight 0.
* psi_M at A_t = 0 (b_t = 0, sigma_t = 0): the one-sided derivative, g = 1/2, h = 0.
* ``transfer=0`` (default) picks r maximizing k(x_r, x_j)^2 / k(x_r, x_r), the minimizer
  of the objective stated above eq. (28); ``transfer=1`` the literal text of eq. (28),
  r = argmin |k(x_r, x_j)|. Candidates are the other vectors of the same buffer in slot
  order, then x_t itself; ties go to the first; candidates with k(x_r, x_r) = 0 are skipped.
* ``trace`` (shape (m, 2) or (0, 2)) receives, when it has m rows, psi at f_t (column 0,
  0 on rounds without comparison set) and ||f_t||_H^2 = alpha' G alpha (column 1, before
  the update of round t).
"""

import numpy as np

__all__ = ["LOSS_M", "LOSS_S", "TRANSFER_OPTIMAL", "TRANSFER_MIN_ABS", "kernel_row",
           "loss_coefficients", "choose_transfer", "kernel_pass", "psi_value"]

LOSS_M = 0
LOSS_S = 1
TRANSFER_OPTIMAL = 0
TRANSFER_MIN_ABS = 1


def kernel_row(SV, x, kind, gamma, degree, coef0):
    """k(SV[i], x) for every row; same arithmetic as ``_kfun.kernel_eval``."""
    if kind == 1:
        D = SV - x
        return np.exp(-gamma * np.einsum("ij,ij->i", D, D))
    G = SV @ x
    if kind == 2:
        return (gamma * G + coef0) ** degree
    return G


def psi_value(loss, b, s2):
    """psi_M = (b + sqrt(b^2 + s2)) / 2 (eq. 24) or psi_S = (b^2 + s2) / 2 (Section 5.2)."""
    if loss == LOSS_M:
        return 0.5 * (b + np.sqrt(b * b + s2))
    return 0.5 * (b * b + s2)


def loss_coefficients(loss, y, eta_t, b, s2, fO, mu):
    """New weight of x_t and the increments of the weights of S_t, eqs. (23)-(27).

    Returns ``(a_new, d)`` with ``alpha'_{t+1} = a_new`` for x_t and
    ``alpha'_{i,t+1} = (1 - lam eta_t) alpha_{i,t} + d_i`` for i in I_t.
    """
    N = fO.shape[0]
    if loss == LOSS_M:
        A = b * b + s2                                                   # eq. (23)
        Psi = 0.5 * (b + np.sqrt(A))                                     # eq. (24)
        g = Psi / np.sqrt(A) if A > 0 else 0.5
        h = 1.0 / (2.0 * np.sqrt(A)) if A > 0 else 0.0
        a_new = eta_t * y * g                                            # eq. (26), i = t+1
        d = -(eta_t / N) * (y * g + h * (fO - mu))                       # eq. (26), i in I_t
    else:
        a_new = eta_t * y * b                                            # eq. (27), i = t+1
        d = -(eta_t / N) * (y * b + fO - mu)                             # eq. (27), i in I_t
    return a_new, d


def choose_transfer(transfer, k_rj, k_rr):
    """Index of r among the candidates and its weight factor Delta / alpha_j, eq. (28).

    ``k_rj[c] = k(x_r, x_j)``, ``k_rr[c] = k(x_r, x_r)`` for candidate c. Returns
    ``(-1, 0.0)`` when no candidate has k(x_r, x_r) > 0.
    """
    best, best_score = -1, -np.inf
    for c in range(k_rj.shape[0]):
        if k_rr[c] <= 0:
            continue
        if transfer == TRANSFER_OPTIMAL:
            score = k_rj[c] * k_rj[c] / k_rr[c]                          # objective above (28)
        else:
            score = -abs(k_rj[c])                                        # eq. (28) as printed
        if score > best_score:
            best, best_score = c, score
    if best < 0:
        return -1, 0.0
    return best, k_rj[best] / k_rr[best]                                 # eq. (28), Delta


def kernel_pass(X, s, order, SV, alpha, G, fb, cap, count, head, t0, lam, eta, loss,
                kind, gamma, degree, coef0, transfer, work, trace):
    """Run Algorithm 2 (with Algorithms 3 and 4) over ``X[order]``, in place.

    Parameters
    ----------
    X : ndarray (n, p)
    s : ndarray (n,), labels in {-1, +1}
    order : ndarray (m,) of intp, the rows visited
    SV, alpha, G, fb : ndarrays (M, p), (M,), (M, M), (M,), updated in place
    cap, count, head : int64 ndarrays (2,), row 0 the negative buffer; count, head updated
    t0 : int, rounds played before
    lam, eta : float, eta <= 0 gives 1/(lam t)
    loss : 0 psi_M, 1 psi_S
    kind, gamma, degree, coef0 : kernel code and parameters (``sosl.kernels``)
    transfer : 0 optimal r, 1 argmin |k(x_r, x_j)|
    work : ndarray of length >= 3 M, scratch space (unused by the reference; kept for the signature)
    trace : ndarray (m, 2) or (0, 2), per-round diagnostics (see module docstring)

    Returns
    -------
    t : int, rounds played after the pass
    """
    t = t0
    start = (0, int(cap[0]))
    record = trace.shape[0] == order.shape[0] and trace.shape[0] > 0
    for r_ in range(order.shape[0]):
        i = order[r_]
        t += 1
        x, y = X[i], s[i]
        own = 1 if y > 0 else 0
        opp = 1 - own
        eta_t = eta if eta > 0 else 1.0 / (lam * t)
        occ = np.r_[start[0]:start[0] + count[0], start[1]:start[1] + count[1]]
        O = np.arange(start[opp], start[opp] + count[opp])
        if record:
            trace[r_, 1] = alpha[occ] @ G[np.ix_(occ, occ)] @ alpha[occ]
        kx = kernel_row(SV[occ], x, kind, gamma, degree, coef0)          # k(x_i, x_t)
        kxx = kernel_row(x[None, :], x, kind, gamma, degree, coef0)[0]
        fx = alpha[occ] @ kx                                             # eq. (20), f_t(x_t)
        decay = 1.0 - lam * eta_t                                        # eq. (22)
        a_new, d = 0.0, np.zeros(0)
        if O.size:
            mu = fb[O].mean()                                            # eq. (21), mu_t
            s2 = ((fb[O] - mu) ** 2).mean()                              # eq. (21), sigma_t^2
            b = 1.0 - y * (fx - mu)                                      # eq. (23), b_t
            if record:
                trace[r_, 0] = psi_value(loss, b, s2)
            a_new, d = loss_coefficients(loss, y, eta_t, b, s2, fb[O], mu)
        elif record:
            trace[r_, 0] = 0.0
        posO = O - start[opp] + (count[0] if opp == 1 else 0)            # positions of O in occ
        GO = G[np.ix_(O, occ)]
        fb[occ] = decay * fb[occ] + d @ GO + a_new * kx                  # eq. (22) on the buffers
        fx = decay * fx + d @ kx[posO] + a_new * kxx                     # eq. (22) at x_t
        alpha[occ] = decay * alpha[occ]                                  # eq. (26)/(27), others
        alpha[O] += d                                                    # eq. (26)/(27), i in I_t
        # Algorithm 4: insert x_t into its own buffer, FIFO removal + eq. (28) when full
        if count[own] < cap[own]:
            slot = start[own] + count[own]
        else:
            slot = start[own] + head[own]
            head[own] = (head[own] + 1) % cap[own]
            j = slot
            aj = alpha[j]
            cand = np.array([q for q in range(start[own], start[own] + count[own]) if q != j],
                            dtype=np.intp)
            k_rj = np.r_[G[cand, j], kx[occ == j]] if cand.size else kx[occ == j]
            k_rr = np.r_[G[cand, cand], kxx]
            c, ratio = choose_transfer(transfer, k_rj, k_rr)
            delta = aj * ratio                                           # eq. (28), Delta alpha_r
            fb[occ] += -aj * G[j, occ]                                   # remove alpha_j k(., x_j)
            fx += -aj * kx[occ == j][0]
            if 0 <= c < cand.size:
                rs = cand[c]
                fb[occ] += delta * G[rs, occ]                            # add Delta k(., x_r)
                fx += delta * kx[occ == rs][0]
                alpha[rs] += delta                                       # Alg. 4 step 8, i = r*
            elif c == cand.size:
                fb[occ] += delta * kx
                fx += delta * kxx
                a_new += delta
        if count[own] < cap[own]:
            count[own] += 1
        occ_new = np.r_[start[0]:start[0] + count[0], start[1]:start[1] + count[1]]
        others = occ_new[occ_new != slot]
        SV[slot] = x
        kx_full = np.zeros(G.shape[0])
        kx_full[occ] = kx
        G[slot, others] = kx_full[others]
        G[others, slot] = kx_full[others]
        G[slot, slot] = kxx
        alpha[slot] = a_new
        fb[slot] = fx
    return t
