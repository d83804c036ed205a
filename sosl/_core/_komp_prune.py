"""Entry point of destructive KOMP with pre-fitting: checks, then the typed core.

:func:`komp_prune` validates its arguments and runs the typed core
:func:`sosl._core._komp.komp_core` (or, on request, the NumPy reference
:func:`sosl._core._komp_ref.komp_core_ref`). The algorithm, the symbols and the departure
from the paper (numerical rank) are described in :mod:`sosl._core._komp_ref`; the public
module :mod:`sosl.komp` re-exports this function.
"""

import numpy as np

from . import _komp
from ._komp_ref import as_gram, komp_core_ref, komp_error, single_thread_blas

__all__ = ["komp_prune", "komp_typed"]


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
        Approximation budget (epsilon_t in the paper), >= 0.
    rtol : float, default=1e-10
        Relative threshold on squared feature-space distances below which an element is
        treated as lying in the span of the others (see the module notes).
    return_error : bool, default=False
        Also return ||f - f_new||_H, recomputed from the final weights.
    backend : {"cython", "numpy"}, default="cython"
        The typed core (:mod:`sosl._core._komp`, plain loops) or the NumPy/LAPACK
        reference :mod:`sosl._core._komp_ref`; they agree to rounding (tested).

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
    if isinstance(epsilon, bool) or not np.isfinite(epsilon) or epsilon < 0:
        raise ValueError(f"epsilon must be a finite number >= 0, got {epsilon!r}")
    eps2 = float(epsilon) ** 2
    if backend == "cython":
        kept, new_alpha = komp_typed(K, alpha, eps2, rtol)
    elif backend == "numpy":
        with single_thread_blas():
            kept, new_alpha = komp_core_ref(K, alpha, eps2, rtol)
    else:
        raise ValueError(f"backend must be 'cython' or 'numpy', got {backend!r}")
    if return_error:
        return kept, new_alpha, komp_error(K, alpha, kept, new_alpha)
    return kept, new_alpha


def komp_typed(K, alpha, eps2, rtol):
    """The typed core on a validated, symmetric, C-contiguous ``K``; ``(kept, new_alpha)``."""
    n = K.shape[0]
    kept = np.empty(n, dtype=np.intp)
    w = np.empty(n)
    m = _komp.komp_core(np.ascontiguousarray(K), alpha, eps2, float(rtol), kept, w,
                        np.empty(2 * n * n + 4 * n), np.empty(3 * n, dtype=np.intp))
    return kept[:m].copy(), w[:m].copy()


