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
``"gaussian"``. The codes, the checks and the Gram matrices (``kernel_matrix``,
``kernel_diag``) live in the production module :mod:`sosl._core._kparams` (public in
:mod:`sosl.kernels`); this module re-exports them for the references and the tests and
adds the one-row twins of the typed evaluations.
"""

import math

import numpy as np

from ._kparams import (  # noqa: F401  (re-exported: the references' view of them)
    KERNEL_CODES,
    KERNEL_GAUSSIAN,
    KERNEL_LINEAR,
    KERNEL_NAMES,
    KERNEL_POLY,
    budget_pair,
    gamma_from_sigma,
    kernel_code,
    kernel_diag,
    kernel_matrix,
    sigma_from_gamma,
    validate_kernel_params,
)

__all__ = ["budget_pair", "exp_scaled", "KERNEL_CODES", "KERNEL_NAMES", "kernel_code",
           "kernel_row", "sparse_sq_dist", "sparse_dot", "sparse_kernel_row", "slots_decision",
           "kernel_matrix", "kernel_diag", "validate_kernel_params", "gamma_from_sigma",
           "sigma_from_gamma"]

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


def slots_decision(X_rows, ind, val, nnz, slots, alpha, kind, gamma, degree, coef0):
    """sum_q alpha[q] k(slot slots[q], x) for each sparse row x = (indices, values): the
    arithmetic of ``_kfun.kernel_decision_slots``."""
    rows = [(ind[j, :nnz[j]], val[j, :nnz[j]]) for j in slots]    # slot j: its nnz[j] entries
    return np.array([sparse_kernel_row(rows, x, kind, gamma, degree, coef0) @ alpha
                     for x in X_rows])                             # f(x) = k(SV, x).alpha


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
