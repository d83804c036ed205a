"""The NumPy/LAPACK side of destructive KOMP with pre-fitting (production code).

``komp_prune(backend="numpy")`` and the public :mod:`sosl.komp` run these functions, and
the typed passes use the helpers (``as_gram``, ``komp_error``, ``inverse_pd``,
``single_thread_blas``); the method, the symbols, the O(M^2) removal costs and the
numerical-rank departure from the paper are described in :mod:`sosl._core._komp_ref`,
which names :func:`komp_core_numpy` (as ``komp_core_ref``) as the reference of the typed core
:func:`sosl._core._komp.komp_core` (an independent implementation: LAPACK and NumPy
indexing against plain loops) and :func:`komp_prune_bruteforce` as the slow oracle.
"""

import numpy as np
from scipy.linalg import cho_factor, cho_solve
from scipy.linalg.lapack import dpotrf, dpotri, dpstrf

from ._blas import one_blas_thread

__all__ = ["komp_core_numpy", "komp_error", "komp_prune_bruteforce", "removal_costs", "refit",
           "inverse_pd", "single_thread_blas", "as_gram"]


def single_thread_blas():
    """Context manager limiting BLAS to one thread (:class:`sosl._core._blas.one_blas_thread`).

    KOMP makes small dense LAPACK calls; on a loaded machine a threaded BLAS makes them
    much slower (threads spinning for cores that are busy), so they run single-threaded.
    """
    return one_blas_thread()


def as_gram(K, alpha):
    """``(K, alpha)`` as float64, shapes and finiteness checked; K symmetrized."""
    K = np.asarray(K, dtype=np.float64)
    alpha = np.asarray(alpha, dtype=np.float64)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"K must be a square matrix, got shape {K.shape}")
    if alpha.ndim != 1 or alpha.shape[0] != K.shape[0]:
        raise ValueError(f"alpha must have shape ({K.shape[0]},), got {alpha.shape}")
    if not (np.isfinite(K).all() and np.isfinite(alpha).all()):
        raise ValueError("K and alpha must be finite")
    return 0.5 * (K + K.T), alpha


def komp_error(K, alpha, kept, new_alpha):
    """Hilbert-norm distance ||f - f_new||_H between two expansions on one dictionary.

    Parameters
    ----------
    K : ndarray of shape (M, M)
        Gram matrix of the full dictionary.
    alpha : ndarray of shape (M,)
        Weights of f.
    kept : ndarray of int of shape (m,)
        Indices (into the dictionary) of the elements used by f_new.
    new_alpha : ndarray of shape (m,)
        Weights of f_new on those elements.

    Returns
    -------
    error : float
        sqrt((alpha - beta)' K (alpha - beta)) with beta = new_alpha embedded at ``kept``.
    """
    K = np.asarray(K, dtype=np.float64)
    diff = np.array(alpha, dtype=np.float64)
    diff[np.asarray(kept, dtype=np.intp)] -= np.asarray(new_alpha, dtype=np.float64)
    return float(np.sqrt(max(diff @ K @ diff, 0.0)))


def refit(K, b, kept):
    """w = K_II^{-1} b_I by Cholesky (I numerically independent)."""
    if kept.shape[0] == 0:
        return np.zeros(0)
    return cho_solve(cho_factor(K[np.ix_(kept, kept)], lower=True), b[kept])


def inverse_pd(A):
    """Inverse of a positive definite matrix by Cholesky (LAPACK dpotrf + dpotri)."""
    L, info = dpotrf(A, lower=1, clean=1)
    if info != 0:
        raise np.linalg.LinAlgError("KOMP: the Gram matrix of the kept set is not positive "
                                    f"definite (info={info})")
    G, info = dpotri(L, lower=1)
    G = np.tril(G)
    return G + np.tril(G, -1).T


def removal_costs(e2, w, G):
    """Squared errors gamma_j^2 = e^2 + w_j^2 / G_jj of removing each j and re-fitting."""
    return e2 + w * w / np.diag(G)


def komp_core_numpy(K, alpha, eps2, rtol):
    """Destructive KOMP on a validated Gram matrix; returns ``(kept, new_alpha)``.

    ``eps2`` is epsilon^2; the steps are those of the module notes (and of the typed
    :func:`sosl._core._komp.komp_core`).
    """
    if K.shape[0] == 0:
        return np.arange(0), alpha.copy()
    M = K.shape[0]
    b = K @ alpha                                              # <k(d_i, .), f~>_H
    fn2 = float(alpha @ b)                                     # ||f~||_H^2
    scale = float(np.max(np.diag(K)))
    if scale <= 0.0:                                           # every element is the zero function
        return np.arange(0), np.zeros(0)
    c, piv, rank, info = dpstrf(K, tol=rtol * scale, lower=1)
    if rank < M:
        I = np.sort(piv[:rank] - 1).astype(np.intp)            # numerically independent subset
        w = refit(K, b, I)
        diff = alpha.copy()
        diff[I] -= w
        e2 = max(float(diff @ K @ diff), 0.0)                  # error of projecting onto span(I)
        if e2 > eps2:
            return np.arange(M), alpha.copy()                  # epsilon below numerical resolution
    else:
        I = np.arange(M)
        w = alpha.copy()
        e2 = 0.0
    if I.shape[0]:
        G = inverse_pd(K[np.ix_(I, I)])
    removed_any = I.shape[0] < M
    while I.shape[0]:
        if I.shape[0] == 1:
            gamma2 = np.array([fn2])                           # removing the last leaves f_new = 0
        else:
            gamma2 = removal_costs(e2, w, G)
        j = int(np.argmin(gamma2))                             # j* = argmin_j gamma_j
        if gamma2[j] > eps2:
            break
        e2 = float(gamma2[j])
        removed_any = True
        g = G[:, j]
        keep = np.arange(I.shape[0]) != j
        w = w[keep] - g[keep] * (w[j] / g[j])                  # re-fitted weights on I \ {j}
        G = G[np.ix_(keep, keep)] - np.outer(g[keep], g[keep]) / g[j]
        I = I[keep]
    if not removed_any:
        return I, alpha.copy()
    return I, refit(K, b, I)


def komp_prune_bruteforce(K, alpha, epsilon):
    """Slow reference of :func:`sosl.komp.komp_prune`: every cost by an explicit least-squares fit.

    At each stage, for every j the weights on the remaining elements minimize
    ||f - f_new||_H (normal equations solved with ``lstsq``) and the error is recomputed
    from scratch. O(M^5) in total; for tests on small dictionaries only.

    Returns
    -------
    kept, new_alpha : as :func:`sosl.komp.komp_prune`
    """
    K, alpha = as_gram(K, alpha)
    b = K @ alpha
    fn2 = float(alpha @ b)
    I = list(range(K.shape[0]))
    w = alpha.copy()
    while I:
        costs = []
        fits = []
        for j in I:
            rest = [i for i in I if i != j]
            if rest:
                wj = np.linalg.lstsq(K[np.ix_(rest, rest)], b[rest], rcond=None)[0]
                costs.append(komp_error(K, alpha, rest, wj))
            else:
                wj = np.zeros(0)
                costs.append(np.sqrt(max(fn2, 0.0)))
            fits.append((rest, wj))
        j = int(np.argmin(costs))
        if costs[j] > epsilon:
            break
        I, w = fits[j]
    return np.asarray(I, dtype=np.intp), np.asarray(w, dtype=np.float64)
