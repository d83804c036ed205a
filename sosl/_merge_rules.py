"""The merge rules of SketchedOAUCM (frequent directions) and FTRL-AUC, on the arrays of
their states (see :mod:`sosl.state` for the rules and :func:`sosl.state.merge`, which
builds the merged state around them). Imports nothing of sosl above ``_core``."""

from __future__ import annotations

import math

import numpy as np

from ._core._numeric import ftrl_weights

__all__ = ["fd_shrink", "merge_sketches", "sketch_arrays", "ftrl_arrays"]


# -- frequent-directions sketches (SketchedOAUCM) --------------------------------------------
def fd_shrink(C, r):
    """Shrink the rows of C (n x m, n > r) to r rows (S3-S4 of ``_sketch_ref``); return
    (B, delta) with delta the (r+1)-th largest eigenvalue of C C'."""
    lam, U = np.linalg.eigh(C @ C.T)
    lam, U = lam[::-1], U[:, ::-1]
    delta = max(float(lam[r]), 0.0)
    keep = lam[:r] > delta
    f = np.zeros(r)
    f[keep] = np.sqrt((lam[:r][keep] - delta) / lam[:r][keep])
    return (f[:, None] * U[:, :r].T) @ C, delta


def merge_sketches(Ba: np.ndarray, Bb: np.ndarray, z: np.ndarray | None,
                   r: int) -> tuple[np.ndarray, float]:
    """Frequent-directions merge of two class sketches: stack ``Ba``, ``Bb`` and the mean
    correction row ``z``, then shrink to ``r`` rows if the stack holds ``2 r`` or more.

    Returns (B, delta), ``delta`` the shrink applied (0 if none).

    Error bound. Let ``A_a``, ``A_b`` be the rows the two sketches summarize, with
    ``A_a'A_a - Ba'Ba`` PSD of spectral norm at most ``D_a`` (their accumulated shrinkage),
    likewise ``D_b``, and ``||A_a||_F^2 - ||Ba||_F^2 >= (r + 1) D_a`` (true of every FD
    sketch: each shrink by ``delta`` removes at least ``(r + 1) delta`` of squared
    Frobenius mass, since at least r + 1 eigenvalues of the Gram are >= delta). Chan's
    update says the merged centered scatter is ``A'A = A_a'A_a + A_b'A_b + z z'``, ``z =
    sqrt(W_a W_b / W) (xbar_a - xbar_b)``. Stacking ``C = [Ba; Bb; z]`` gives
    ``C'C = Ba'Ba + Bb'Bb + z z'``; the shrink of C to B removes a PSD matrix of spectral
    norm ``<= delta`` and at least ``(r + 1) delta`` of Frobenius mass. Hence, with
    ``D = D_a + D_b + delta``: ``0 <= A'A - B'B`` (a sum of three PSD terms),
    ``||A'A - B'B||_2 <= D`` (triangle inequality) and ``||A||_F^2 - ||B||_F^2 >= (r + 1)
    D``. For any k <= r and the top-k right singular vectors v_i of A,
    ``||B||_F^2 >= sum_i ||B v_i||^2 >= sum_i (||A v_i||^2 - D) = ||A_k||_F^2 - k D``, so
    ``(r + 1) D <= ||A||_F^2 - ||A_k||_F^2 + k D``, i.e.

        ||A'A - B'B||_2 <= D <= ||A - A_k||_F^2 / (r + 1 - k),

    the guarantee of one sketch over all the rows, at the same size: FD is a mergeable
    summary (Agarwal et al., 2012; Ghashami et al., 2016). The merged state's
    ``shrinkage_`` is D.
    """
    rows = [Ba, Bb] + ([z[None, :]] if z is not None else [])
    C = np.vstack(rows)
    if C.shape[0] < 2 * r:
        return C, 0.0
    return fd_shrink(C, r)


def sketch_arrays(states, mix):
    # a sketch capped to max_columns is refused by its capabilities' merge_layout: each
    # shard tracks its own column set, and the untracked columns' lazy weights have no
    # common scale
    first = states[0]
    r = int(first.layout["rank"])
    p = first.n_features
    # a common compact numbering: columns in order of first appearance across the states
    cmap = np.full(p, -1, dtype=np.int64)
    m = 0
    locs = []
    for st in states:
        c = st.arrays["column_map_"]
        seen = np.flatnonzero(c >= 0)
        seen = seen[np.argsort(c[seen], kind="stable")]     # the state's own order
        new = seen[cmap[seen] < 0]
        cmap[new] = np.arange(m, m + new.shape[0])
        m += new.shape[0]
        locs.append((seen, c[seen]))

    def expand(st, name, idx):
        seen, local = idx
        v = st.arrays[name]
        out = np.zeros(v.shape[:-1] + (m,))
        out[..., cmap[seen]] = v[..., local]
        return out

    cap = max(1, m)
    w_all = [expand(st, "weights_", lc)[:m] for st, lc in zip(states, locs)]
    coef = mix(w_all)
    counts = np.zeros(2, dtype=np.int64)
    means = np.zeros((2, m))
    dA = np.zeros((2, m))
    shrink = np.zeros(2)
    Bs = [np.zeros((0, m)), np.zeros((0, m))]
    for st, lc in zip(states, locs):
        mu_b = expand(st, "compact_means_", lc)
        dA_b = expand(st, "scatter_diag_", lc)
        Sk = expand(st, "sketches_", lc)
        for k in range(2):
            nb = int(st.arrays["counts_"][k])
            if nb == 0:
                continue
            Bb = Sk[k, :int(st.arrays["sketch_rows_"][k])]
            na = int(counts[k])
            if na == 0:
                Bs[k], means[k], dA[k] = Bb.copy(), mu_b[k], dA_b[k]
                shrink[k] = float(st.arrays["shrinkage_"][k])
                counts[k] = nb
                continue
            n = na + nb
            delta = mu_b[k] - means[k]
            z = math.sqrt(na * nb / n) * delta
            Bs[k], d = merge_sketches(Bs[k], Bb, z, r)
            shrink[k] += float(st.arrays["shrinkage_"][k]) + d
            dA[k] = dA[k] + dA_b[k] + z * z
            means[k] = means[k] + (nb / n) * delta
            counts[k] = n
    sketches = np.zeros((2, 2 * r, cap))
    dB = np.zeros((2, cap))
    rows = np.zeros(2, dtype=np.int64)
    for k in range(2):
        nr = Bs[k].shape[0]
        sketches[k, :nr, :m] = Bs[k]
        rows[k] = nr
        dB[k, :m] = np.einsum("ij,ij->j", Bs[k], Bs[k])

    def pad(v):
        out = np.zeros(v.shape[:-1] + (cap,))
        out[..., :m] = v
        return out

    arrays = {"weights_": pad(coef), "compact_means_": pad(means), "sketches_": sketches,
              "sketch_rows_": rows, "counts_": counts, "scatter_diag_": pad(dA),
              "sketch_diag_": dB, "shrinkage_": shrink, "column_map_": cmap, "n_active_": int(m)}
    if "slot_columns_" in first.arrays:
        # uncapped slots: every column tracked, slot k holding compact column k; the column
        # counts add up; nothing is untracked
        col_counts = np.zeros(cap, dtype=np.int64)
        for st, (seen, local) in zip(states, locs):
            col_counts[cmap[seen]] += st.arrays["column_counts_"][local]
        slots = np.full(cap, -1, dtype=np.int64)
        slots[:m] = np.arange(m)
        arrays.update({
            "slot_columns_": slots, "n_slots_": int(m), "column_counts_": col_counts,
            "column_slots_": slots.copy(), "untracked_weights_": np.zeros(cap),
            "untracked_epochs_": np.zeros(cap, dtype=np.int64),
            "untracked_sums_": np.zeros((2, 2, cap)),
            "untracked_lin_": np.zeros((2, 3)), "untracked_quad_": np.zeros((4, 3, 3)),
            "untracked_scale_": np.array([1.0, 0.0, 0.0]), "untracked_epoch_": 0})
    return arrays


# -- FTRL-AUC ----------------------------------------------------------------------------------
def ftrl_arrays(states, params):
    """The merged FTRL-AUC arrays; ``params`` = (gamma, beta, l1, l2) the pass runs with."""
    gamma, beta, l1, l2 = params
    nsq = np.sum([st.arrays["sq_grad_"] for st in states], axis=0)
    roots = np.array([np.sqrt(st.arrays["sq_grad_"]) for st in states])
    total = roots.sum(axis=0)
    W = np.array([st.arrays["w_"] for st in states])
    safe = np.where(total > 0, total, 1.0)
    w = np.where(total > 0, (roots * W).sum(axis=0) / safe, 0.0)
    D = (beta + np.sqrt(nsq)) / gamma + l2
    z = np.where(w != 0, -(w * D) - np.sign(w) * l1,
                 np.clip(np.sum([st.arrays["z_"] for st in states], axis=0), -l1, l1))
    counts = np.sum([st.arrays["counts_"] for st in states], axis=0).astype(np.int64)
    scores = np.zeros(2)
    for k in range(2):
        if counts[k]:
            scores[k] = sum(float(st.arrays["counts_"][k]) * st.arrays["mean_scores_"][k]
                            for st in states) / float(counts[k])
    return {"w_": ftrl_weights(z, nsq, l1, l2, beta, gamma), "z_": z, "sq_grad_": nsq,
            "counts_": counts, "mean_scores_": scores}
