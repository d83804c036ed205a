"""Entry point of destructive KOMP with pre-fitting: checks, then the typed core.

:func:`komp_prune` validates its arguments and runs the typed core
:func:`sosl._core._komp.komp_core` (or, on request, the NumPy/LAPACK core
:func:`sosl._core._komp_np.komp_core_numpy`). :func:`komp_step` is the compression of
``OKAUCM(budget_policy="komp")`` after its rounds t = 0 mod period. The algorithm, the
symbols and the departure from the paper (numerical rank) are described in
:mod:`sosl._core._komp_ref`; the public module :mod:`sosl.komp` re-exports ``komp_prune``.
"""

from numbers import Real

import numpy as np

from . import _komp
from ._komp_np import as_gram, inverse_pd, komp_core_numpy, komp_error, single_thread_blas

__all__ = ["komp_prune", "komp_step", "komp_typed", "inverse_pd", "single_thread_blas"]

#: the recomputed error may exceed epsilon by rounding, at most _SLACK * ||f||_H; beyond
#: that komp_prune returns f unchanged (a last-resort guard: the removal costs are accurate)
_SLACK = 1e-9


def komp_prune(K, alpha, epsilon, *, rtol=1e-10, return_error=False, backend="cython"):
    """Compress f = sum_i alpha_i k(d_i, .) by destructive KOMP with pre-fitting.

    Repeatedly removes the dictionary element whose removal, with the remaining weights
    re-fitted by least squares in the RKHS, gives the smallest error ||f - f_new||_H,
    as long as that error stays <= ``epsilon`` (Algorithm 1 of Koppel et al.). The error
    is always measured against the original f, so it does not accumulate beyond
    ``epsilon``. The last element may be removed too (f_new = 0) if ||f||_H <= epsilon.

    Parameters
    ----------
    K : array-like of shape (M, M)
        Gram matrix of the dictionary, ``K[i, j] = k(d_i, d_j)`` (symmetric PSD).
    alpha : array-like of shape (M,)
        Weights of f.
    epsilon : float
        Approximation budget (epsilon_t in the paper), finite and >= 0. The returned
        f_new satisfies ||f - f_new||_H <= epsilon up to rounding, recomputed from the
        final weights: should it exceed epsilon by more than 1e-9 ||f||_H, f is returned
        unchanged.
    rtol : float, default=1e-10
        Relative threshold, in [0, 1), on squared feature-space distances below which an
        element is treated as lying in the span of the others (see
        :mod:`sosl._core._komp_ref`).
    return_error : bool, default=False
        Also return ||f - f_new||_H, recomputed from the final weights.
    backend : {"cython", "numpy"}, default="cython"
        The typed core (:mod:`sosl._core._komp`, plain loops) or the NumPy/LAPACK
        reference :mod:`sosl._core._komp_ref`; they agree to rounding
        (tests/_core/test_komp.py::test_cython_core_matches_numpy_reference).

    Raises
    ------
    TypeError, ValueError
        Naming the problem: a non-number or out-of-range ``epsilon``/``rtol``, shapes,
        non-finite entries, a K that is not positive semi-definite (negative diagonal, an
        entry above the Cauchy-Schwarz bound, or weights that blow up in the solve), or an
        f whose squared norm overflows.

    Returns
    -------
    kept : ndarray of int of shape (m,)
        Indices of the kept elements, in increasing order (dictionary order preserved).
    new_alpha : ndarray of shape (m,)
        Least-squares weights of f_new on the kept elements.
    error : float
        Only if ``return_error``: ||f - f_new||_H.

    Examples
    --------
    >>> import numpy as np
    >>> K = np.array([[1.0, 0.999], [0.999, 1.0]])     # two nearly identical elements
    >>> kept, w = komp_prune(K, np.array([1.0, 2.0]), 0.1)
    >>> kept.tolist(), np.round(w, 3).tolist()
    ([1], [2.999])
    """
    K, alpha = as_gram(K, alpha)
    epsilon = _check_real(epsilon, "epsilon", 0.0, np.inf, "a finite number >= 0")
    rtol = _check_real(rtol, "rtol", 0.0, 1.0, "a number in [0, 1)", high_open=True)
    if backend not in ("cython", "numpy"):
        raise ValueError(f"backend must be 'cython' or 'numpy', got {backend!r}")
    _check_gram(K, alpha)
    eps2 = epsilon ** 2
    if backend == "cython":
        kept, new_alpha = komp_typed(K, alpha, eps2, rtol)
    else:
        with single_thread_blas():
            kept, new_alpha = komp_core_numpy(K, alpha, eps2, rtol)
    if not np.isfinite(new_alpha).all():
        raise ValueError("komp_prune: the re-fitted weights are not finite; K is numerically "
                         "not positive semi-definite (not a Gram matrix of a kernel)")
    error = komp_error(K, alpha, kept, new_alpha)
    if not error <= epsilon + _SLACK * np.sqrt(max(float(alpha @ K @ alpha), 0.0)):
        # the removal costs overstepped the budget beyond rounding: keep f (error 0)
        kept, new_alpha, error = np.arange(K.shape[0]), alpha.copy(), 0.0
    if return_error:
        return kept, new_alpha, error
    return kept, new_alpha


def _check_real(value, name, low, high, what, high_open=False):
    """A real, finite hyper-parameter of komp_prune in [low, high] (or [low, high))."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (Real, np.floating)):
        raise TypeError(f"komp_prune: {name} must be {what}, got {value!r}")
    value = float(value)
    if not (np.isfinite(value) and low <= value and (value < high if high_open
                                                     else value <= high)):
        raise ValueError(f"komp_prune: {name} must be {what}, got {value!r}")
    return value


def _check_gram(K, alpha):
    """Refuse what cannot be a Gram matrix, or an f whose norm overflows.

    Necessary conditions of positive semi-definiteness, O(M^2): K_ii >= 0 and
    K_ij^2 <= K_ii K_jj (Cauchy-Schwarz), the latter up to a relative 1e-8 for rounding;
    and ||f||_H^2 = alpha' K alpha finite.
    """
    if K.shape[0] == 0:
        return
    d = np.diag(K)
    if np.any(d < 0):
        i = int(np.argmin(d))
        raise ValueError(f"komp_prune: K must be positive semi-definite (a Gram matrix); "
                         f"K[{i}, {i}] = {float(d[i])!r} < 0")
    with np.errstate(over="ignore", invalid="ignore"):
        bad = K * K > np.outer(d, d) * (1.0 + 1e-8)
        if np.any(bad):
            i, j = (int(v) for v in np.argwhere(bad)[0])
            raise ValueError("komp_prune: K must be positive semi-definite (a Gram matrix); "
                             f"K[{i}, {j}]^2 > K[{i}, {i}] K[{j}, {j}]")
        fn2 = alpha @ (K @ alpha)
    if not np.isfinite(fn2):
        raise ValueError("komp_prune: ||f||_H^2 = alpha' K alpha overflows; scale alpha or K")


def komp_typed(K, alpha, eps2, rtol):
    """The typed core on a validated, symmetric, C-contiguous ``K``; ``(kept, new_alpha)``."""
    n = K.shape[0]
    kept = np.empty(n, dtype=np.intp)
    w = np.empty(n)
    m = _komp.komp_core(np.ascontiguousarray(K), alpha, eps2, float(rtol), kept, w,
                        np.empty(2 * n * n + 4 * n), np.empty(3 * n, dtype=np.intp))
    return kept[:m].copy(), w[:m].copy()


def komp_step(Z, G, beta, f, buf, lab, age, acc):
    """The compression after a round t = 0 mod period; returns the new pool and acc = 0.

    ``Z`` is the pool's (M, p) array, or a tuple of arrays with one row per pool vector
    (the sparse slots of the typed CSR pass); only its rows are selected here.
    """
    D = np.flatnonzero(beta != 0.0)
    if D.size:
        kept, w = komp_prune(G[np.ix_(D, D)], beta[D], acc)                # Algorithm 1
        if kept.size < D.size:
            beta = beta.copy()
            beta[D] = 0.0
            beta[D[kept]] = w
            f = G[:, D[kept]] @ w                                          # eq. (20) on the pool
    live = (buf >= 0) | (beta != 0.0)
    if not live.all():
        Z = tuple(z[live] for z in Z) if isinstance(Z, tuple) else Z[live]  # sparse slots too
        G, beta, f = G[np.ix_(live, live)], beta[live], f[live]
        buf, lab, age = buf[live], lab[live], age[live]
    return Z, G, beta, f, buf, lab, age, 0.0
