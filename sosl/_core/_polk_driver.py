"""Driver of the typed POLK pass (:func:`sosl._core._polk.polk_fast_pass`).

The typed pass keeps the inverse Gram matrix G of the dictionary across rounds and
plays a round only when every atom is far enough from the span of the others for its
bordering/downdating formulas to reproduce the rank decision of KOMP; it returns a status
code otherwise. This module is the loop around it: it grows the buffers
(``STATUS_GROW``), rebuilds G by a fresh factorization (``STATUS_REBUILD``, after its
drift check failed) and plays the declined rounds (``STATUS_FALLBACK``) with
:func:`dependent_round`.

Why the declined rounds need another path: when an atom is numerically in the span of the
others (a repeated instance, many points under a wide kernel), the inverse G does not
exist or is too inaccurate to rank the removals, and KOMP must find a numerically
independent subset first (pivoted Cholesky with threshold ``RTOL * max_i K_ii``, the
departure described in :mod:`sosl._core._komp_ref`). :func:`dependent_round` does that with
the typed rank-revealing core :func:`sosl._core._komp.komp_core` (via
:func:`sosl._core._komp_prune.komp_prune`); it costs O(M^3), as the rebuilds do. The NumPy
reference :mod:`sosl._core._polk_ref` is never called here.

Constants
---------
RTOL       rank threshold of the projection (``komp_prune``'s default ``rtol``)
SAFETY     the typed pass plays a round only if every squared distance of an atom to the
           span of the others exceeds ``SAFETY * RTOL * max_i K_ii``
DRIFT_TOL, DRIFT_REL
           G is rebuilt when a column fails max_i |(K G)_ic - delta_ic| <= tol,
           tol = max(DRIFT_TOL, DRIFT_REL * max K_ii * max G_jj) (a fresh inverse reaches
           about 1e-15 * max K_ii * max G_jj)
RETRY      with no usable inverse, G is rebuilt after the rounds t % RETRY == 0

Sparse rows: when ``X`` is a ``scipy.sparse`` matrix the dictionary ``D`` is a CSR
matrix too (canonical: sorted int32 indices). The loop then keeps the atoms in sparse
slots of width L (``Slots``: ``ind`` (cap, L) int32, ``val`` (cap, L), ``nnz`` (cap,)),
L the largest nnz among the atoms and the rows of the call, and runs
:func:`sosl._core._polk.polk_fast_pass_csr`; the declined rounds and the rebuilds take their
kernel rows from the same merges (:func:`sosl._core._polk.polk_sparse_kernel_row`). No
array of length p is made: memory and kernel-row cost depend on the non-zeros only.
"""

from collections import namedtuple

import numpy as np
import scipy.sparse as sp

from . import _polk
from ._komp_prune import inverse_pd, komp_prune, single_thread_blas
from ._kparams import KERNEL_CODES, KERNEL_NAMES, kernel_diag, kernel_matrix, kernel_spec

__all__ = ["polk_run", "polk_spec", "memory_need", "dependent_round", "inverse_if_well_posed",
           "Slots", "RTOL", "SAFETY", "DRIFT_TOL", "DRIFT_REL", "RETRY"]

RTOL = 1e-10
SAFETY = 100.0
DRIFT_TOL = 1e-11
DRIFT_REL = 1e-11
RETRY = 16


def polk_spec(eps_rule, epsilon, parsimony):
    """The ``PolkSpec`` bundle of the typed pass: the KOMP budget of a round (a
    ``PolkBudget`` code, ``epsilon``, ``parsimony``) and this module's tolerances. The
    reference :func:`sosl._core._polk_ref.polk_pass` reads the first three keys."""
    return {"eps_rule": int(eps_rule), "epsilon": float(epsilon),
            "parsimony": float(parsimony), "rtol": RTOL, "safety": SAFETY,
            "drift_tol": DRIFT_TOL, "drift_rel": DRIFT_REL}


#: a dictionary of sparse slots: slot q holds ``nnz[q]`` entries at the increasing positions
#: ``ind[q, :nnz[q]]`` (int32) with values ``val[q, :nnz[q]]``; its rows are its atoms
Slots = namedtuple("Slots", ["ind", "val", "nnz"])


def _slots_row_kernels(D, x, kern):
    """``(k_D(x), k(x, x))`` for sparse slots ``D`` and a sparse row ``x = (indices, values)``."""
    kx = np.empty(D.nnz.shape[0])
    kxx = _polk.polk_sparse_kernel_row(
        D.ind, D.val, D.nnz, D.nnz.shape[0], x[0], x[1],
        kernel_spec(KERNEL_CODES[kern["kernel"]], kern["gamma"], kern["degree"], kern["coef0"]),
        kx)
    return kx, kxx


def _slots_append_take(D, x, kept):
    """The slots of ``[D, x][kept]`` (x a sparse row ``(indices, values)``)."""
    M, L = D.ind.shape
    ind = np.zeros((M + 1, L), dtype=np.int32)
    val = np.zeros((M + 1, L))
    nnz = np.zeros(M + 1, dtype=np.int32)
    ind[:M], val[:M], nnz[:M] = D.ind, D.val, D.nnz
    n = x[0].shape[0]
    ind[M, :n], val[M, :n], nnz[M] = x[0], x[1], n
    return Slots(ind[kept], val[kept], nnz[kept])


def dependent_round(D, w, Kdd, x, y, eta_t, lam, eps_t, loss, kern):
    """One round of Algorithm 2 with the rank-revealing KOMP; ``(D, w, Kdd, error)``.

    Eq. (18): f~ = (1 - eta_t lam) f_t - eta_t l'(f_t(x_t), y_t) k(x_t, .) on [D, x_t],
    then Algorithm 1 on its Gram matrix (typed core, numerical-rank guard included).
    ``D`` is a dense (M, p) array and ``x`` a row of length p, or ``D`` is ``Slots`` and
    ``x`` a sparse row ``(indices, values)``.
    """
    if isinstance(D, Slots):
        kx, kxx = _slots_row_kernels(D, x, kern)
    else:
        kx = kernel_matrix(D, x[None, :], **kern)[:, 0]
        kxx = kernel_diag(x[None, :], **kern)[0]
    if not (np.isfinite(kx).all() and np.isfinite(kxx)):
        raise FloatingPointError(f"POLK: the {kern['kernel']} kernel overflowed (k(x_t, .) is "
                                 "not finite); scale the features. The model was left unchanged.")
    g = _polk.polk_loss_derivative(float(w @ kx), y, loss)
    w_tilde = np.append((1.0 - eta_t * lam) * w, -eta_t * g)
    K_tilde = np.block([[Kdd, kx[:, None]], [kx[None, :], np.array([[kxx]])]])
    kept, w_new, err = komp_prune(K_tilde, w_tilde, eps_t, rtol=RTOL, return_error=True)
    if isinstance(D, Slots):
        return _slots_append_take(D, x, kept), w_new, K_tilde[np.ix_(kept, kept)], err
    D_tilde = np.vstack([D, x[None, :]])
    return D_tilde[kept], w_new, K_tilde[np.ix_(kept, kept)], err


def _gram(D, kern, block=64):
    """kernel_matrix(D, D) by row blocks (bounds the (rows, M, p) temporary); for ``Slots``
    one merged kernel row per atom."""
    if isinstance(D, Slots):
        M = D.nnz.shape[0]
        K = np.empty((M, M))
        for q in range(M):
            n = D.nnz[q]
            K[q] = _slots_row_kernels(D, (D.ind[q, :n], D.val[q, :n]), kern)[0]
        return K
    K = np.empty((D.shape[0], D.shape[0]))
    for a in range(0, D.shape[0], block):
        K[a:a + block] = kernel_matrix(D[a:a + block], D, **kern)
    return K


def inverse_if_well_posed(K):
    """G = K^{-1} if every squared distance 1/G_jj exceeds ``SAFETY * RTOL * max K_ii``.

    Returns None when K is (numerically) too close to singular for the typed pass: the
    reference then plays the rounds until the dictionary is well posed again.
    """
    if K.shape[0] == 0:
        return np.zeros((0, 0))
    scale = float(np.max(np.diag(K)))
    if not scale > 0.0:
        return None
    try:
        G = inverse_pd(K)
    except np.linalg.LinAlgError:
        return None
    d = np.diag(G)
    if not (np.all(np.isfinite(G)) and np.all(d > 0.0)
            and np.all(d * (SAFETY * RTOL * scale) < 1.0)):
        return None
    return G


def memory_need(cap, atom_bytes):
    """Bytes of the buffers of a dictionary of capacity ``cap`` (atoms of ``atom_bytes``
    each; K, G and its second buffer, the weights, scratch), counting the caller's
    transactional copy of the state: the estimate ``max_memory`` is checked against."""
    return 2 * (24 * cap * cap + cap * (atom_bytes + 72))


def polk_run(X, s, order, D, w, Kdd, G, t0, step, polk, kern, max_bytes=None):
    """POLK over ``X[order]`` (see :func:`_run`), with BLAS limited to one thread.

    ``step``, ``polk`` and ``kern`` are the bundles of :func:`sosl._core._kparams.step_spec`,
    :func:`polk_spec` and :func:`sosl._core._kparams.kernel_spec`.

    The rebuilds and the dependent rounds make small dense LAPACK calls; a threaded BLAS
    only adds contention there. ``max_bytes``: the buffers never grow past it (counting
    the caller's transactional copy); ``MemoryError`` is raised before they would.
    """
    with single_thread_blas():
        return _run(X, s, order, D, w, Kdd, G, t0, step, polk, kern, max_bytes)


def _to_slots(D, width):
    """Sparse slots of width ``width`` holding the rows of the canonical CSR matrix ``D``."""
    M = D.shape[0]
    counts = np.diff(D.indptr).astype(np.int32)
    ind = np.zeros((M, width), dtype=np.int32)
    val = np.zeros((M, width))
    filled = np.arange(width)[None, :] < counts[:, None]
    ind[filled], val[filled] = D.indices, D.data          # row by row, in CSR order
    return Slots(ind, val, counts)


def _to_csr(D, p):
    """The atoms of ``Slots`` ``D`` as a canonical CSR matrix with ``p`` columns."""
    indptr = np.zeros(D.nnz.shape[0] + 1, dtype=np.int32)
    np.cumsum(D.nnz, out=indptr[1:])
    filled = np.arange(D.ind.shape[1])[None, :] < D.nnz[:, None]
    return sp.csr_matrix((D.val[filled], D.ind[filled], indptr), shape=(D.nnz.shape[0], p))


def _canonical(A):
    """CSR float64 with sorted, duplicate-free int32 indices."""
    A = sp.csr_matrix(A, dtype=np.float64)
    if not A.has_canonical_format:
        A = A.copy()
        A.sum_duplicates()
    if A.indices.dtype != np.int32 or A.indptr.dtype != np.int32:
        A = sp.csr_matrix((A.data, A.indices.astype(np.int32), A.indptr.astype(np.int32)),
                          shape=A.shape)
    return A


def _head(buf, M):
    """Copy of the first ``M`` atoms of a dictionary buffer (array or ``Slots``)."""
    if isinstance(buf, Slots):
        return Slots(buf.ind[:M].copy(), buf.val[:M].copy(), buf.nnz[:M].copy())
    return buf[:M].copy()


def _run(X, s, order, D, w, Kdd, G, t0, step, polk, kern_spec, max_bytes=None):
    """Same rounds and outputs as :func:`sosl._core._polk_ref.polk_pass`, with the typed pass.

    ``G`` is the inverse Gram matrix of ``D`` kept from the previous pass, or None (no
    usable inverse: the dictionary is too close to singular). The rounds the typed pass
    :func:`sosl._core._polk.polk_fast_pass` declines (an atom numerically in the span of
    the others) are played by :func:`dependent_round` (the rank-revealing typed KOMP core on
    the Gram matrix recomputed from the dictionary); G is then rebuilt by a fresh
    factorization, right away after a declined round, and, while the dictionary stays
    ill-posed, only after rounds t with t % ``RETRY`` == 0 (the decisions depend on the
    state and t only, so ``fit`` and chunked ``partial_fit`` calls play the same rounds).
    The buffers of the typed pass grow by doubling (at most to the largest order possible).
    ``X`` and ``D`` are both dense or both ``scipy.sparse`` (see the module notes).

    Returns
    -------
    D, w, Kdd, G, t, orders, errors, budgets
        As :func:`sosl._core._polk_ref.polk_pass` (``D`` CSR for sparse input), plus the
        inverse G (or None) after ``t``.
    """
    kern = {"kernel": KERNEL_NAMES[kern_spec["kind"]], "gamma": kern_spec["gamma"],
            "degree": int(kern_spec["degree"]), "coef0": kern_spec["coef0"]}
    lam, loss = step["lam"], step["loss"]
    sparse = sp.issparse(X)
    if sparse != sp.issparse(D):
        raise TypeError("polk_run: X and D must be both dense or both scipy.sparse")
    s = np.ascontiguousarray(s, dtype=np.float64)
    order = np.ascontiguousarray(order, dtype=np.intp)
    n_rounds = order.shape[0]
    M, p = D.shape
    if sparse:
        X, D = _canonical(X), _canonical(D)
        width = max(1, int(np.diff(X.indptr)[order].max(initial=0)),
                    int(np.diff(D.indptr).max(initial=0)))
        D = _to_slots(D, width)

        def row(i):
            a, b = X.indptr[i], X.indptr[i + 1]
            return X.indices[a:b], X.data[a:b]

        def typed(r, atoms, wb, Kb, Gb, Gb2, M, work, iwork):
            return _polk.polk_fast_pass_csr(
                X.data, X.indices, X.indptr, s, order, r, atoms.ind, atoms.val, atoms.nnz,
                wb, Kb, Gb, Gb2, M, t0, step, polk, kern_spec, orders, errors, budgets,
                work, iwork)
    else:
        X = np.ascontiguousarray(X, dtype=np.float64)

        def row(i):
            return X[i]

        def typed(r, atoms, wb, Kb, Gb, Gb2, M, work, iwork):
            return _polk.polk_fast_pass(
                X, s, order, r, atoms, wb, Kb, Gb, Gb2, M, t0, step, polk, kern_spec,
                orders, errors, budgets, work, iwork)
    orders = np.empty(n_rounds, dtype=np.int64)
    errors = np.empty(n_rounds)
    budgets = np.empty(n_rounds)
    if G is not None and G.shape != (M, M):
        G = None

    def put(atoms, D):
        """Write the atoms ``D`` into the first slots of the buffer ``atoms``."""
        if sparse:
            m = D.nnz.shape[0]
            atoms.ind[:m], atoms.val[:m], atoms.nnz[:m] = D.ind, D.val, D.nnz
        else:
            atoms[:D.shape[0]] = D

    def allocate(cap):
        atom_bytes = 12 * width if sparse else 8 * p
        need = memory_need(cap, atom_bytes)
        if max_bytes is not None and need > max_bytes:
            raise MemoryError(
                f"POLK: the dictionary would grow to {cap} atoms, about {need / 2**20:.1f} "
                f"MiB with the Gram matrix, its inverse and the transactional copy, more than "
                f"the memory limit ({max_bytes / 2**20:.1f} MiB: max_memory, or half the "
                "available memory). Keep fewer atoms (a larger epsilon or parsimony) or "
                "raise max_memory (bytes).")
        if sparse:
            atoms = Slots(np.zeros((cap, width), dtype=np.int32), np.zeros((cap, width)),
                          np.zeros(cap, dtype=np.int32))
        else:
            atoms = np.zeros((cap, p))
        put(atoms, D)
        wb = np.zeros(cap)
        Kb, Gb = np.zeros((cap, cap)), np.zeros((cap, cap))
        wb[:M], Kb[:M, :M] = w, Kdd
        if G is not None:
            Gb[:M, :M] = G
        return (atoms, wb, Kb, Gb, np.zeros((cap, cap)), np.empty(7 * cap),
                np.empty(cap, dtype=np.intp))

    Db, wb, Kb, Gb, Gb2, work, iwork = allocate(M + max(1, min(n_rounds, max(M, 32))))
    r = 0
    while r < n_rounds:
        if G is not None:
            status, r, M, swapped = typed(r, Db, wb, Kb, Gb, Gb2, M, work, iwork)
            if swapped:
                Gb, Gb2 = Gb2, Gb
            if status == _polk.STATUS_DONE:
                break
            if status == _polk.STATUS_GROW:
                D, w, Kdd, G = _head(Db, M), wb[:M], Kb[:M, :M], Gb[:M, :M]
                Db, wb, Kb, Gb, Gb2, work, iwork = allocate(
                    min(2 * wb.shape[0], M + n_rounds - r))
                continue
            if status == _polk.STATUS_REBUILD:
                G = inverse_if_well_posed(Kb[:M, :M].copy())
                if G is not None:
                    Gb[:M, :M] = G
                continue
            retry = True          # STATUS_FALLBACK or STATUS_NONFINITE: round r declined
        else:
            retry = (t0 + r + 1) % RETRY == 0
        # round r with the rank-revealing KOMP
        D, w = _head(Db, M), wb[:M].copy()
        Kdd = _gram(D, kern)
        t = t0 + r + 1
        eta_t, eps_t = _polk.polk_step_and_budget(t, step, polk)
        i = order[r]
        D, w, Kdd, err = dependent_round(D, w, Kdd, row(i), s[i], eta_t, lam, eps_t, loss, kern)
        M = w.shape[0]
        orders[r], errors[r], budgets[r] = M, err, eps_t
        r += 1
        G = inverse_if_well_posed(Kdd) if retry else None
        if M + 1 > wb.shape[0]:
            Db, wb, Kb, Gb, Gb2, work, iwork = allocate(
                max(M, min(2 * wb.shape[0], M + n_rounds - r)))
        else:
            put(Db, D)
            wb[:M], Kb[:M, :M] = w, Kdd
            if G is not None:
                Gb[:M, :M] = G
    D, w, Kdd = _head(Db, M), wb[:M].copy(), Kb[:M, :M].copy()
    if sparse:
        D = _to_csr(D, p)
    G = Gb[:M, :M].copy() if G is not None else None
    return D, w, Kdd, G, t0 + n_rounds, orders, errors, budgets
