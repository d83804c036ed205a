"""NumPy reference of destructive kernel orthogonal matching pursuit (KOMP) with pre-fitting.

A function of a reproducing kernel Hilbert space given by a finite expansion

    f = sum_i alpha_i k(d_i, .)          (dictionary d_1..d_M, weights alpha)

is compressed by removing dictionary elements one at a time. At each stage the element
whose removal costs the least Hilbert-norm error is removed, the error being measured
after re-fitting the remaining weights by least squares in the RKHS (the orthogonal
projection of the *original* f onto the span of the remaining elements). The removals
stop as soon as the next one would make ||f - f_new||_H exceed ``epsilon``. This is
Algorithm 1 of Koppel et al. (POLK), "destructive KOMP with pre-fitting" of Vincent &
Bengio (2002, Section 2.3).

Two implementations with the same steps and tie rules: the typed core
:mod:`sosl._core._komp` (plain loops, the default ``backend="cython"`` of
:func:`sosl._core._komp_prune.komp_prune`) and the NumPy/LAPACK reference in this module
(``backend="numpy"``); they keep the same elements and give the same function to rounding
(tests/test_komp.py::test_cython_core_matches_numpy_reference; with exactly duplicated
points either copy may be kept).

Everything is expressed through the Gram matrix ``K`` of the dictionary, so the function
does not depend on the kernel or on the data: it serves POLK (:class:`sosl.POLK`) and
any learner that wants to compress a kernel expansion (e.g. ``OKAUCM(budget_policy='komp')``).

Symbols
-------
========  ===============================================  ======================
symbol    paper (Koppel et al.)                             here
========  ===============================================  ======================
K         K_{D,D}, Gram matrix of the dictionary             ``K``
alpha     w~, weights of the function to compress f~         ``alpha``
b         K alpha, inner products <k(d_i, .), f~>_H          -
I         index set of the dictionary kept so far            ``kept``
w         least-squares weights on I, K_II^{-1} b_I          ``new_alpha``
G         K_II^{-1}                                          -
gamma_j   error of f~ when d_j is removed and w re-fitted    -
epsilon   epsilon_t, the approximation budget                ``epsilon``
========  ===============================================  ======================

How the costs are computed (O(M^2) per removal, O(M^3) once)
------------------------------------------------------------
With I the current index set, w = G b_I the current fit and e^2 = ||f~ - w.k_I||^2 its
squared error, removing j in I and re-fitting gives the squared error

    gamma_j^2 = e^2 + w_j^2 / G_jj,

because f~ - P_I f~ is orthogonal to span(I) and the extra error is the component of
w_j k(d_j, .) orthogonal to the other elements (1/G_jj is the squared distance of
k(d_j, .) to their span). After removing j the inverse and the fit are downdated by

    G <- G_{-j,-j} - G_{-j,j} G_{j,-j} / G_jj,     w <- w_{-j} - G_{-j,j} w_j / G_jj.

Departure from the paper (numerical rank)
-----------------------------------------
A Gram matrix can be singular or numerically singular (repeated points; many points
under a wide Gaussian). A pivoted Cholesky factorization (LAPACK ``dpstrf``) first finds
a maximal subset whose squared distances to the span of the previously chosen ones
exceed ``rtol * max_i K_ii``; the remaining elements lie (numerically) in the span of that
subset and are removed first, as one group, if the error of the projection onto the
subset is within ``epsilon`` (it is at the level of rounding). That error is computed as
the quadratic form (alpha - beta)' K (alpha - beta), not as ||f||^2 - <f, f_new>, which
cancels to 0 when the diagonal of K spans more than ~16 orders of magnitude (an element
of norm 1 beside one of norm 1e8 is "in the span" at rtol = 1e-10 but carries error 1).
When the elements are truly dependent this is what the greedy search would do in exact
arithmetic (each of these removals costs ~0). If even that
group cannot be removed within ``epsilon`` (``epsilon`` below the numerical resolution,
e.g. ``epsilon = 0``), the dictionary is returned unchanged. The returned weights are
re-solved on the kept set with a fresh Cholesky factorization (not the downdated ones).
"""

import numpy as np
from scipy.linalg import cho_factor, cho_solve
from scipy.linalg.lapack import dpotrf, dpotri, dpstrf

from ._blas import one_blas_thread

__all__ = ["komp_core_ref", "komp_error", "komp_prune_bruteforce", "removal_costs", "refit",
           "inverse_pd", "single_thread_blas", "as_gram"]


def single_thread_blas():
    """Context manager limiting BLAS to one thread (:class:`sosl._core._blas.one_blas_thread`).

    KOMP makes small dense LAPACK calls; on a loaded machine a threaded BLAS makes them
    10-100x slower (threads spinning for cores that are busy), so they run single-threaded.
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


def komp_core_ref(K, alpha, eps2, rtol):
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
