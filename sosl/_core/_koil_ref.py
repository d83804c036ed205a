"""NumPy reference of KOIL (kernelized online imbalanced learning with fixed budgets).

One line per step of Hu, Yang, King, Lyu & So, "Kernelized Online Imbalanced Learning
with Fixed Budgets" (AAAI 2015; TNNLS 2018): Algorithm 1 (KOIL), the update of the weights
against the k nearest violating opposite support vectors, and the budget maintenance
RS++ / FIFO++ with weight compensation. Same signature and same sample order (and the
same pre-drawn uniforms) as the Cython pass :func:`sosl._core._koil.koil_pass`, so the two
agree to ~1e-12.

Symbols
-------
=========  ================================================  =========================
symbol     KOIL paper                                        public name
=========  ================================================  =========================
buf        B+ and B-, the two support-vector buffers          ``buffer_``
alpha      alpha_i, weights: f = sum_i alpha_i k(x_i, .)      ``alpha_``
gram       Gram matrix of the buffer slots (cache)            ``gram_``
f          f_t(x_i) at every filled slot (kept up to date)    ``buffer_scores_``
n_buf      |B-|, |B+| (row 0 negative, row 1 positive)        ``n_buffer_``
n_seen     N_t^-, N_t^+: instances of each class seen         ``n_class_seen_``
head       oldest slot of each buffer (FIFO++)                ``fifo_head_``
budgets    N-, N+ (budget of each buffer)                     ``budget``
s          y_t in {-1, +1}                                    ``classes_[1]`` -> +1
eta        eta, step size                                     ``eta``
C          C, weight of the pairwise hinge losses             ``C``
k_nn       k, number of nearest opposite SVs updated          ``n_neighbors``
U          pre-drawn uniforms (u0: admit?, u1: which slot)    ``random_state``
=========  ================================================  =========================

Layout
------
Slots ``[0, N-)`` hold the negative buffer, ``[N-, N- + N+)`` the positive buffer;
buffer c uses its first ``n_buf[c]`` slots. ``gram`` is valid on filled slots only.

Round t (x_t, s = y_t, own class c, opposite class o)
----------------------------------------------------
1. n_seen[c] += 1; k_t = k(x_t, buf) on all filled slots; f_t(x_t) = alpha . k_t.
2. For every filled opposite slot i: f_t(x_i) = f[i] (cached) and the pairwise hinge
   loss l_i = 1 - s (f_t(x_t) - f_t(x_i)); V = {i : l_i > 0} (violators).
3. S = the min(k, |V|) violators nearest to x_t in the kernel-induced distance
   d_i^2 = k(x_t, x_t) + k(x_i, x_i) - 2 k(x_t, x_i) (ties: lower slot first).
4. Gradient step on lam/2 ||f||^2 + C sum_{i in S} l_i, with lam = 1:
   alpha <- (1 - eta) alpha; alpha_i <- alpha_i - eta C s for i in S;
   a_t = eta C s |S|. If the opposite buffer is empty, or the own buffer is empty and
   V is empty, a_t = eta C s (so that the first instances of each class enter).
5. If a_t != 0, x_t enters buffer c: appended while |B_c| < N_c; otherwise
   RS++: with probability N_c / n_seen[c] (u0 < N_c / n_seen[c]) it replaces the slot
   floor(u1 N_c) and the removed weight is added to the SV of buffer c nearest
   (kernel distance) to the removed one, searched after the replacement (so possibly
   x_t itself); if not admitted, a_t itself is added to the SV of buffer c nearest to x_t;
   FIFO++: it replaces the oldest slot and the removed weight is added to the SV of
   buffer c nearest to the removed one (possibly x_t itself).

Cost: a change delta of one weight alpha_j changes f on the buffer by delta * gram[:, j]
(O(B)), so f on the buffer is kept up to date in O(B p + k B) per round instead of being
recomputed as gram @ alpha (O(B_o B)). The two agree up to rounding; f is recomputed from
scratch when t % REFRESH == 0 (the same rounds whatever the chunking of ``partial_fit``).
"""

import numpy as np

from ._codes import KoilPolicy
from ._kfun_ref import KERNEL_NAMES, kernel_matrix
from ._kparams import KOIL_REFRESH

__all__ = ["POLICY_RS", "POLICY_FIFO", "KERNEL_NAMES", "REFRESH", "koil_pass", "nearest_slot"]

POLICY_RS = int(KoilPolicy.POLICY_RS)
POLICY_FIFO = int(KoilPolicy.POLICY_FIFO)
REFRESH = KOIL_REFRESH   # f on the buffer is recomputed from the Gram cache when t % REFRESH == 0


def _kern(spec):
    """The ``kernel_matrix`` arguments of a ``kernel_spec`` dict."""
    return {"kernel": KERNEL_NAMES[spec["kind"]], "gamma": spec["gamma"],
            "degree": int(spec["degree"]), "coef0": spec["coef0"]}


def nearest_slot(d2, slots):
    """Slot with the smallest squared distance (ties: the lowest slot)."""
    return slots[int(np.argmin(d2))]


def koil_pass(X, s, order, U, buf, alpha, gram, f, n_buf, n_seen, head, budgets, t0,
              eta, C, k_nn, policy, kern, work):
    """Run KOIL over ``X[order]``; update the buffers in place; return the round counter.

    ``f`` holds f_t at every filled slot (kept up to date, refreshed from the Gram cache
    every ``REFRESH`` rounds). Raises FloatingPointError at the first row whose k(x_t, x_t)
    or f_t(x_t) is not finite. ``U`` has shape (len(order), 2): the uniforms of each round
    (RS++ only). ``kern`` is the kernel (``_kparams.kernel_spec``). ``work`` is unused here
    (scratch space of the Cython pass).
    """
    kern = _kern(kern)
    off = np.array([0, budgets[0]])
    t = t0
    for r in range(order.shape[0]):
        i = order[r]
        t += 1
        x = X[i]
        y = s[i]
        c = 1 if y > 0 else 0
        o = 1 - c
        n_seen[c] += 1
        filled = _filled(off, n_buf)
        opp = np.arange(off[o], off[o] + n_buf[o])
        own = np.arange(off[c], off[c] + n_buf[c])
        kx = np.zeros(alpha.shape[0])
        kx[filled] = kernel_matrix(buf[filled], x[None, :], **kern)[:, 0]    # k(x_t, x_j)
        kxx = kernel_matrix(x[None, :], x[None, :], **kern)[0, 0]             # k(x_t, x_t)
        f_x = alpha[filled] @ kx[filled]                                      # f_t(x_t)
        if not (np.isfinite(f_x) and np.isfinite(kxx)):                      # overflowed kernel
            raise FloatingPointError(f"koil_pass: k(x, x) or f(x) is not finite at row {i} "
                                     "(the kernel overflowed)")
        loss = 1.0 - y * (f_x - f[opp])                                       # pairwise hinge l_i
        V = opp[loss > 0.0]                                                   # violators
        d2 = kxx + np.diag(gram)[V] - 2.0 * kx[V]                             # kernel distance^2
        S = V[np.argsort(d2, kind="stable")[:k_nn]]                           # k nearest violators
        alpha[filled] *= 1.0 - eta                                            # (1 - eta) alpha
        f[filled] *= 1.0 - eta
        g = eta * C * y
        if n_buf[o] == 0 or (n_buf[c] == 0 and V.shape[0] == 0):
            a_t = g                                                           # first instances
        else:
            for l in S:
                alpha[l] -= g                                                 # opposite SVs in S
                f[filled] -= g * gram[filled, l]
            a_t = g * S.shape[0]                                              # weight of x_t
        if a_t != 0.0:
            _budget_step(buf, alpha, gram, f, n_buf, n_seen, head, budgets, off, U[r], x,
                         kx, kxx, a_t, c, own, filled, policy)
        if t % REFRESH == 0:                                                  # bound the drift of f
            filled = _filled(off, n_buf)
            f[filled] = gram[np.ix_(filled, filled)] @ alpha[filled]
    return t


def _filled(off, n_buf):
    return np.concatenate([np.arange(off[0], off[0] + n_buf[0]),
                           np.arange(off[1], off[1] + n_buf[1])])


def _budget_step(buf, alpha, gram, f, n_buf, n_seen, head, budgets, off, u, x, kx, kxx, a_t,
                 c, own, filled, policy):
    """Step 5: x_t enters buffer c (append, RS++ or FIFO++ with compensation)."""
    if n_buf[c] < budgets[c]:                                                 # room left: append
        j = off[c] + n_buf[c]
        f[filled] += a_t * kx[filled]
        _put(buf, alpha, gram, kx, kxx, j, x, a_t, filled)
        n_buf[c] += 1
        filled = _filled(off, n_buf)
        f[j] = gram[j, filled] @ alpha[filled]
        return
    if policy == POLICY_RS:
        if u[0] < budgets[c] / n_seen[c]:                                     # w.p. N_c / n_c
            j = off[c] + int(u[1] * budgets[c])
        else:                                                                 # not admitted
            d2 = kxx + np.diag(gram)[own] - 2.0 * kx[own]
            cstar = nearest_slot(d2, own)
            alpha[cstar] += a_t                                               # RS++ compensation
            f[filled] += a_t * gram[filled, cstar]
            return
    else:
        j = off[c] + head[c]                                                  # oldest SV
        head[c] = (head[c] + 1) % budgets[c]
    a_old = alpha[j]
    f[filled] -= a_old * gram[filled, j]                                      # x_old leaves f
    k_old = gram[j, own].copy()                                               # k(x_old, x_l)
    k_old[own == j] = kx[j]                                                   # slot j now holds x_t
    d2 = gram[j, j] + np.where(own == j, kxx, np.diag(gram)[own]) - 2.0 * k_old
    _put(buf, alpha, gram, kx, kxx, j, x, a_t, filled)
    others = filled[filled != j]
    f[others] += a_t * gram[others, j]                                        # x_t enters f
    f[j] = gram[j, filled] @ alpha[filled]
    cstar = nearest_slot(d2, own)
    alpha[cstar] += a_old                                                     # compensation
    f[filled] += a_old * gram[filled, cstar]


def _put(buf, alpha, gram, kx, kxx, j, x, a_t, filled):
    """Store x_t with weight a_t in slot j and refresh row/column j of the Gram cache."""
    buf[j] = x
    alpha[j] = a_t
    gram[j, filled] = kx[filled]
    gram[filled, j] = kx[filled]
    gram[j, j] = kxx
