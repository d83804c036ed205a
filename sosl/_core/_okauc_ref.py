"""NumPy reference of the kernel second-order learners (OKAUC-M, OKAUC-S).

One line per equation of Luo, Cheng & Zhang, "Online AUC Optimization Based on
Second-order Surrogate Loss" (Section 5, Algorithms 2-4, eqs. 20-28). Same signature and
the same sample order as the Cython kernel :func:`sosl._core._okauc.kernel_pass`, so the
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

Sparse slots (:func:`kernel_pass_csr`, for CSR rows): ``SV`` is replaced by ``sv_ind``
(M, L) int32, ``sv_val`` (M, L) and ``sv_nnz`` (M,) int32; slot i holds ``sv_nnz[i]``
entries at the increasing positions ``sv_ind[i, :sv_nnz[i]]`` with values
``sv_val[i, :sv_nnz[i]]``, the other coordinates zero. The equations are those of
:func:`kernel_pass` (the kernel does not depend on how the vectors are stored); the typed
pass evaluates it from merges of the sorted index lists (``_kfun_ref.sparse_sq_dist`` and
``sparse_dot`` are their NumPy twins).

Conventions
-----------
* ``loss`` is a ``Loss`` code: ``LOSS_M`` is psi_M (OKAUC-M, eq. 26), ``LOSS_S`` psi_S
  (OKAUC-S, eq. 27). Both come from the shared :mod:`sosl._core._losses_ref` (the typed
  kernel from ``_losses.pxd``); the kernel learners minimize psi_M and psi_S / 2, the
  halved square loss of Section 5.2 that eq. (27) differentiates, so the shared loss and
  its partials are multiplied by ``LOSS_SCALE[loss]`` (1 or 1/2).
* ``schedule`` is a ``Schedule`` code: ``STEP_INV_LAM_T`` gives eta_t = 1/(lam t),
  ``STEP_CONSTANT`` the constant step ``eta``.
* ``kind`` is a ``Kernel`` code, ``transfer`` a ``Transfer`` code (:mod:`sosl._core._codes`).
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

from ._codes import Loss, Schedule, Transfer
from ._kfun_ref import kernel_row
from ._losses_ref import loss_grad, loss_scale, psi

__all__ = ["LOSS_M", "LOSS_S", "LOSS_SCALE", "TRANSFER_OPTIMAL", "TRANSFER_MIN_ABS",
           "STEP_INV_LAM_T", "STEP_CONSTANT", "kernel_row", "loss_coefficients",
           "choose_transfer", "kernel_pass", "kernel_pass_csr", "psi_value"]

LOSS_M = int(Loss.LOSS_M)
LOSS_S = int(Loss.LOSS_S)
TRANSFER_OPTIMAL = int(Transfer.TRANSFER_OPTIMAL)
TRANSFER_MIN_ABS = int(Transfer.TRANSFER_MIN_ABS)
STEP_INV_LAM_T = int(Schedule.STEP_INV_LAM_T)
STEP_CONSTANT = int(Schedule.STEP_CONSTANT)
#: factor on the shared loss: OKAUC-S minimizes psi_S / 2 (Section 5.2, eq. 27)
LOSS_SCALE = {int(code): loss_scale(int(code)) for code in Loss}


def psi_value(loss, b, s2):
    """psi_M = (b + sqrt(b^2 + s2)) / 2 (eq. 24) or psi_S / 2 = (b^2 + s2) / 2 (Section 5.2)."""
    return LOSS_SCALE[loss] * psi(loss, 1.0 - b, s2)


def loss_coefficients(loss, y, eta_t, b, s2, fO, mu):
    """New weight of x_t and the increments of the weights of S_t, eqs. (23)-(27).

    Returns ``(a_new, d)`` with ``alpha'_{t+1} = a_new`` for x_t and
    ``alpha'_{i,t+1} = (1 - lam eta_t) alpha_{i,t} + d_i`` for i in I_t.
    """
    N = fO.shape[0]
    _, d_mu, d_s2 = loss_grad(loss, 1.0 - b, s2)          # eqs. (23)-(24): partials at mu = 1 - b
    d_mu, d_s2 = LOSS_SCALE[loss] * d_mu, LOSS_SCALE[loss] * d_s2
    a_new = -eta_t * y * d_mu                                            # eq. (26)/(27), i = t+1
    d = (eta_t / N) * (y * d_mu - 2.0 * d_s2 * (fO - mu))                # eq. (26)/(27), i in I_t
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


def kernel_pass(X, s, order, SV, alpha, G, fb, cap, count, head, t0, step, kern, transfer,
                work, trace):
    """Run Algorithm 2 (with Algorithms 3 and 4) over ``X[order]``, in place.

    Parameters
    ----------
    X : ndarray (n, p)
    s : ndarray (n,), labels in {-1, +1}
    order : ndarray (m,) of intp, the rows visited
    SV, alpha, G, fb : ndarrays (M, p), (M,), (M, M), (M,), updated in place
    cap, count, head : int64 ndarrays (2,), row 0 the negative buffer; count, head updated
    t0 : int, rounds played before
    step : dict (``_kparams.step_spec``) with ``lam``; ``schedule``, a ``Schedule`` code;
        ``eta``, the constant step (``STEP_CONSTANT``); ``loss``, a ``Loss`` code, LOSS_M
        psi_M, LOSS_S psi_S / 2
    kern : dict (``_kparams.kernel_spec``): ``kind``, a ``Kernel`` code, and ``gamma``,
        ``degree``, ``coef0``
    transfer : ``Transfer`` code, TRANSFER_OPTIMAL optimal r, TRANSFER_MIN_ABS argmin |k(x_r, x_j)|
    work : ndarray of length >= 3 M, scratch space (unused by the reference; kept for the signature)
    trace : ndarray (m, 2) or (0, 2), per-round diagnostics (see module docstring)

    Returns
    -------
    t : int, rounds played after the pass
    """
    lam, schedule, eta, loss = step["lam"], step["schedule"], step["eta"], step["loss"]
    kind, gamma, degree, coef0 = kern["kind"], kern["gamma"], kern["degree"], kern["coef0"]
    t = t0
    start = (0, int(cap[0]))
    record = trace.shape[0] == order.shape[0] and trace.shape[0] > 0
    for r_ in range(order.shape[0]):
        i = order[r_]
        t += 1
        x, y = X[i], s[i]
        own = 1 if y > 0 else 0
        opp = 1 - own
        eta_t = eta if schedule == STEP_CONSTANT else 1.0 / (lam * t)    # round prologue
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


def kernel_pass_csr(data, indices, indptr, s, order, sv_ind, sv_val, sv_nnz, alpha, G, fb, cap,
                    count, head, t0, step, kern, transfer, work, trace):
    """:func:`kernel_pass` on CSR rows with sparse slots (the signature of the typed
    ``kernel_pass_csr``), in place.

    The rows are ``(data, indices, indptr)`` of a CSR matrix with sorted indices; slot q of
    the store holds ``sv_nnz[q]`` entries at ``sv_ind[q, :sv_nnz[q]]`` with values
    ``sv_val[q, :sv_nnz[q]]``. Each round densifies x_t and the slots and plays it through
    :func:`kernel_pass` (the equations are there), then copies the stored entries of x_t
    into the slot that pass wrote (the round's insertion slot of Algorithm 4).
    """
    p = 1 + int(max(indices.max(initial=0), sv_ind.max(initial=0)))    # covers every index
    M = alpha.shape[0]
    t = t0
    for r_ in range(order.shape[0]):
        i = order[r_]
        a, z = indptr[i], indptr[i + 1]
        x = np.zeros((1, p))
        x[0, indices[a:z]] = data[a:z]                                   # x_t densified
        SV = np.zeros((M, p))
        for q in range(M):
            SV[q, sv_ind[q, :sv_nnz[q]]] = sv_val[q, :sv_nnz[q]]         # slots densified
        own = 1 if s[i] > 0 else 0
        start = 0 if own == 0 else int(cap[0])
        slot = start + (count[own] if count[own] < cap[own] else head[own])
        tr = trace[r_:r_ + 1] if trace.shape[0] == order.shape[0] else trace
        t = kernel_pass(x, s[i:i + 1], np.zeros(1, dtype=np.intp), SV, alpha, G, fb, cap,
                        count, head, t, step, kern, transfer, work, tr)
        sv_nnz[slot] = z - a                                             # store x_t sparsely
        sv_ind[slot, :z - a] = indices[a:z]
        sv_val[slot, :z - a] = data[a:z]
    return t
