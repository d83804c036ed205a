"""Kernel functions in NumPy: the twin of ``_kfun.pxd`` and the evaluation behind predictions.

Three kernels, named and parameterized as in scikit-learn's ``pairwise_kernels``:

=============  ===============  ===================================  ============================
name           ``Kernel`` code  k(x, x')                             paper notation
=============  ===============  ===================================  ============================
``linear``     KERNEL_LINEAR    x . x'
``gaussian``   KERNEL_GAUSSIAN  exp(-gamma ||x - x'||^2)              exp(-||x - x'||^2 / sigma^2)
``poly``       KERNEL_POLY      (gamma x . x' + coef0)^degree
=============  ===============  ===================================  ============================

The Gaussian width: the paper (Luo, Cheng & Zhang, Section 5/6) writes
k(x, x') = exp(-||x - x'||^2 / sigma^2), with sigma^2 (not 2 sigma^2) in the denominator, so
``gamma = 1 / sigma^2`` and ``sigma = 1 / sqrt(gamma)``. ``"rbf"`` is accepted as an alias of
``"gaussian"``. The public module :mod:`sosl.kernels` re-exports these functions; the
references and the estimators of the kernel learners use them from here (``_core`` imports
nothing above it).
"""

import math
from numbers import Integral, Real

import numpy as np

from ._codes import Kernel

__all__ = ["budget_pair", "exp_scaled", "KERNEL_CODES", "KERNEL_NAMES", "kernel_code",
           "kernel_row", "sparse_sq_dist", "sparse_dot", "sparse_kernel_row",
           "kernel_matrix", "kernel_diag", "validate_kernel_params", "gamma_from_sigma",
           "sigma_from_gamma"]

KERNEL_LINEAR = int(Kernel.KERNEL_LINEAR)
KERNEL_GAUSSIAN = int(Kernel.KERNEL_GAUSSIAN)
KERNEL_POLY = int(Kernel.KERNEL_POLY)
#: kernel name -> ``Kernel`` code understood by the typed passes (``_kfun.pxd``)
KERNEL_CODES = {"linear": KERNEL_LINEAR, "gaussian": KERNEL_GAUSSIAN, "rbf": KERNEL_GAUSSIAN,
                "poly": KERNEL_POLY}
#: ``Kernel`` code -> canonical name
KERNEL_NAMES = {KERNEL_LINEAR: "linear", KERNEL_GAUSSIAN: "gaussian", KERNEL_POLY: "poly"}


def kernel_row(SV, x, kind, gamma, degree, coef0):
    """k(SV[i], x) for every row, by ``Kernel`` code; the arithmetic of ``_kfun.kernel_eval``."""
    if kind == KERNEL_GAUSSIAN:
        D = SV - x
        return np.exp(-gamma * np.einsum("ij,ij->i", D, D))
    G = SV @ x
    if kind == KERNEL_POLY:
        return (gamma * G + coef0) ** degree
    return G


def sparse_sq_dist(ai, av, bi, bv):
    """||a - b||^2 of sparse vectors (sorted indices ``ai``, ``bi``, values ``av``, ``bv``):
    the sum over the union of the supports, the arithmetic of ``_kfun.sparse_sq_dist``."""
    u = np.union1d(ai, bi)                                        # union of the supports
    a = np.zeros(u.shape[0])
    a[np.searchsorted(u, ai)] = av                                # a on the union
    b = np.zeros(u.shape[0])
    b[np.searchsorted(u, bi)] = bv                                # b on the union
    return float(np.sum((a - b) ** 2))                            # difference form


def sparse_dot(ai, av, bi, bv):
    """a.b of sparse vectors: the sum over the intersection of the supports."""
    _, ia, ib = np.intersect1d(ai, bi, assume_unique=True, return_indices=True)
    return float(np.sum(np.asarray(av)[ia] * np.asarray(bv)[ib]))


def sparse_kernel_row(rows, x, kind, gamma, degree, coef0):
    """k(rows[q], x) for sparse vectors given as ``(indices, values)`` pairs; the arithmetic
    of ``_kfun.kernel_rows_slots`` / ``kernel_rows_csr`` (libm's exp)."""
    xi, xv = x
    if kind == KERNEL_GAUSSIAN:
        return np.exp(-gamma * np.array([sparse_sq_dist(xi, xv, i, v) for i, v in rows]))
    G = np.array([sparse_dot(xi, xv, i, v) for i, v in rows])
    if kind == KERNEL_POLY:
        return (gamma * G + coef0) ** degree
    return G


#: the constants of ``_vexp.h``
LN2_HI = 6.93147180369123816490e-01          # ln 2 rounded so that k * LN2_HI is exact
LN2_LO = 1.90821492927058770002e-10          # ln 2 - LN2_HI
EXP_FLOOR = -708.0                           # below: 0 (libm: a subnormal, < 3.1e-308)
EXP_DEGREE = 13                              # Taylor degree for |r| <= ln(2) / 2


def exp_scaled(v, c, degree=EXP_DEGREE):
    """exp(c v) for c v <= 0 by the arithmetic of ``_vexp.h`` (one line per step).

    The typed loop (``sosl._core._kfun.exp_scaled``) computes the same formula; it differs
    from this twin only where it contracts a multiply-add into one FMA.
    """
    x = c * np.asarray(v, dtype=np.float64)
    xc = np.minimum(np.maximum(x, EXP_FLOOR), 0.0)                # clamp to [floor, 0]
    k = np.rint(xc / np.log(2.0))                                  # k = round(x / ln 2)
    r = (xc - k * LN2_HI) - k * LN2_LO                             # |r| <= ln(2) / 2
    q = np.full_like(r, 1.0 / math.factorial(degree))
    for j in range(degree - 1, -1, -1):                            # Horner, exp(r)
        q = q * r + 1.0 / math.factorial(j)
    out = np.ldexp(q, k.astype(np.int64))                          # 2^k exp(r)
    out[x < EXP_FLOOR] = 0.0
    return np.where(np.isnan(x), x, out)


def kernel_code(kernel):
    """Integer code of a kernel name; raise ValueError naming the accepted ones."""
    if not isinstance(kernel, str) or kernel not in KERNEL_CODES:
        raise ValueError(f"kernel must be one of {sorted(KERNEL_CODES)}, got {kernel!r}")
    return KERNEL_CODES[kernel]


def validate_kernel_params(kernel, gamma, degree, coef0):
    """Check the kernel hyper-parameters; return ``(code, gamma, degree, coef0)`` as numbers.

    Raises
    ------
    ValueError, TypeError
        Naming the bad parameter: unknown kernel, ``gamma <= 0``, ``degree`` not a
        positive integer, non-finite values.
    """
    code = kernel_code(kernel)
    for name, value in (("gamma", gamma), ("coef0", coef0)):
        if isinstance(value, bool) or not isinstance(value, Real):
            raise TypeError(f"{name} must be a real number, got {value!r}")
        if not np.isfinite(value):
            raise ValueError(f"{name} must be finite, got {value!r}")
    if gamma <= 0:
        raise ValueError(f"gamma must be > 0, got {gamma!r}")
    if isinstance(degree, bool) or not isinstance(degree, Integral):
        raise TypeError(f"degree must be an integer, got {degree!r}")
    if degree < 1:
        raise ValueError(f"degree must be >= 1, got {degree!r}")
    return code, float(gamma), float(degree), float(coef0)


def gamma_from_sigma(sigma):
    """``gamma = 1 / sigma^2``: the paper's Gaussian width sigma as scikit-learn's gamma."""
    return 1.0 / float(sigma) ** 2


def sigma_from_gamma(gamma):
    """``sigma = 1 / sqrt(gamma)``: inverse of :func:`gamma_from_sigma`."""
    return 1.0 / np.sqrt(float(gamma))


def kernel_matrix(A, B, kernel="gaussian", gamma=1.0, degree=3, coef0=1.0):
    """Gram matrix ``K[i, j] = k(A[i], B[j])``.

    Parameters
    ----------
    A : array-like of shape (n, p)
    B : array-like of shape (m, p)
    kernel : {"gaussian", "rbf", "linear", "poly"}, default="gaussian"
    gamma : float, default=1.0
        Gaussian: 1/sigma^2 of the paper; poly: scale of the inner product.
    degree : int, default=3
        Degree of the polynomial kernel.
    coef0 : float, default=1.0
        Constant of the polynomial kernel.

    Returns
    -------
    K : ndarray of shape (n, m)

    Examples
    --------
    >>> import numpy as np
    >>> kernel_matrix(np.zeros((1, 2)), np.ones((1, 2)), gamma=0.5)
    array([[0.36787944]])
    """
    code, gamma, degree, coef0 = validate_kernel_params(kernel, gamma, degree, coef0)
    A = np.atleast_2d(np.asarray(A, dtype=np.float64))
    B = np.atleast_2d(np.asarray(B, dtype=np.float64))
    if A.shape[1] != B.shape[1]:
        raise ValueError(f"A has {A.shape[1]} features but B has {B.shape[1]}")
    if code == KERNEL_GAUSSIAN:
        # direct differences (not the |a|^2 + |b|^2 - 2ab expansion) so that the result
        # matches the typed twin to rounding, also for nearby points
        D = A[:, None, :] - B[None, :, :]
        return np.exp(-gamma * np.einsum("ijk,ijk->ij", D, D))
    G = A @ B.T
    if code == KERNEL_POLY:
        return (gamma * G + coef0) ** degree
    return G


def kernel_diag(A, kernel="gaussian", gamma=1.0, degree=3, coef0=1.0):
    """``k(A[i], A[i])`` for each row, without forming the Gram matrix."""
    code, gamma, degree, coef0 = validate_kernel_params(kernel, gamma, degree, coef0)
    A = np.atleast_2d(np.asarray(A, dtype=np.float64))
    if code == KERNEL_GAUSSIAN:
        return np.ones(A.shape[0])
    sq = np.einsum("ij,ij->i", A, A)
    if code == KERNEL_POLY:
        return (gamma * sq + coef0) ** degree
    return sq


def budget_pair(budget, *, allow_none=False):
    """Per-class buffer budgets ``(N-, N+)`` from ``budget``; raise naming the problem.

    Parameters
    ----------
    budget : int, pair (N+, N-) or None
        One budget for both buffers, or the positive and the negative budget (the
        paper's order N+, N-). None means unbounded buffers where ``allow_none``.
    allow_none : bool, default=False
        Whether None is accepted (then None is returned).

    Returns
    -------
    budgets : tuple (N-, N+) of int, or None
        In slot order: the negative buffer (``classes_[0]``) first.
    """
    if budget is None and allow_none:
        return None
    if isinstance(budget, (tuple, list, np.ndarray)):
        if len(budget) != 2:
            raise ValueError(f"budget must be an int or a pair (N+, N-), got {budget!r}")
        values = list(budget)
    else:
        values = [budget, budget]
    for v in values:
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, Integral):
            raise TypeError(f"budget must hold integers, got {budget!r}")
        if v < 1:
            raise ValueError(f"budget must be >= 1, got {budget!r}")
    return int(values[1]), int(values[0])
