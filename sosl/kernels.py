"""Kernel functions of the kernel learners (public view of :mod:`sosl._core._kfun_ref`).

Three kernels, named and parameterized as in scikit-learn's ``pairwise_kernels``:
``"linear"`` x . x', ``"gaussian"`` (alias ``"rbf"``) exp(-gamma ||x - x'||^2) and ``"poly"``
(gamma x . x' + coef0)^degree. The paper writes the Gaussian kernel
exp(-||x - x'||^2 / sigma^2), so ``gamma = 1 / sigma^2`` (:func:`gamma_from_sigma`).
"""

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, StrOptions

from ._core import _kfun
from ._core._kfun_ref import (
    KERNEL_CODES,
    budget_pair,
    gamma_from_sigma,
    kernel_code,
    kernel_diag,
    kernel_matrix,
    sigma_from_gamma,
    validate_kernel_params,
)

__all__ = ["budget_pair", "KERNEL_CODES", "KERNEL_CONSTRAINTS", "kernel_code", "kernel_matrix",
           "kernel_expansion", "kernel_diag", "validate_kernel_params", "gamma_from_sigma",
           "sigma_from_gamma"]

#: the constraint-table entries of the kernel hyper-parameters every kernel learner shares
KERNEL_CONSTRAINTS = {
    "kernel": [StrOptions(set(KERNEL_CODES))],
    "gamma": [Interval(Real, 0, None, closed="neither")],
    "degree": [Interval(Integral, 1, None, closed="left")],
    "coef0": [Interval(Real, None, None, closed="neither")],
}


def _canonical_csr(A):
    """CSR float64 with sorted, duplicate-free int32 indices (what the typed merges need)."""
    A = sp.csr_matrix(A, dtype=np.float64)
    if not A.has_canonical_format:
        A = A.copy()
        A.sum_duplicates()
    if A.indices.dtype != np.int32 or A.indptr.dtype != np.int32:
        if A.nnz >= np.iinfo(np.int32).max:
            raise ValueError(f"kernel_expansion: {A.nnz} stored values are too many "
                             "(at most 2**31 - 1)")
        A = sp.csr_matrix((A.data, A.indices.astype(np.int32), A.indptr.astype(np.int32)),
                          shape=A.shape)
    return A


def kernel_expansion(X, support_vectors, dual_coef, kernel="gaussian", gamma=1.0, degree=3,
                     coef0=1.0):
    """``f(x_i) = sum_q dual_coef[q] k(support_vectors[q], x_i)`` for every row of ``X``.

    The typed loops of :mod:`sosl._core._kfun` (the same value as
    ``kernel_matrix(X, support_vectors, ...) @ dual_coef``, without the (n, M) block);
    the kernel learners' ``decision_function`` uses it.

    ``X`` and ``support_vectors`` may be dense arrays or ``scipy.sparse`` matrices. When
    either is sparse both are taken as canonical CSR (the dense one converted) and every
    kernel value comes from a merge of the two sorted index lists
    (``_kfun.kernel_decision_csr``): the cost is O(n M (nnz per row)) whatever the number
    of features, the squared distances are summed as differences over the union of the
    supports, and nothing of size (n, p) or (M, p) is densified.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [1.0, 1.0]])
    >>> float(kernel_expansion(X[:1], X, np.array([1.0, 2.0]), gamma=0.5)[0])  # 1 + 2 e^-1
    1.7357588823428847
    """
    code, gamma, degree, coef0 = validate_kernel_params(kernel, gamma, degree, coef0)
    coef = np.ascontiguousarray(dual_coef, dtype=np.float64)
    if sp.issparse(X) or sp.issparse(support_vectors):
        X = _canonical_csr(X if sp.issparse(X) else np.atleast_2d(np.asarray(X, np.float64)))
        sv = support_vectors
        sv = _canonical_csr(sv if sp.issparse(sv) else np.atleast_2d(np.asarray(sv, np.float64)))
        if X.shape[1] != sv.shape[1] or coef.shape != sv.shape[:1]:
            raise ValueError(f"kernel_expansion: X {X.shape}, support_vectors {sv.shape} and "
                             f"dual_coef {coef.shape} do not fit together")
        out = np.empty(X.shape[0])
        _kfun.kernel_decision_csr(X.data, X.indices, X.indptr, sv.data, sv.indices, sv.indptr,
                                  coef, int(code), float(gamma), float(degree), float(coef0),
                                  out, np.empty(sv.shape[0]))
        return out
    X = np.ascontiguousarray(X, dtype=np.float64)
    sv = np.ascontiguousarray(support_vectors, dtype=np.float64)
    if X.ndim != 2 or sv.ndim != 2 or X.shape[1] != sv.shape[1] or coef.shape != sv.shape[:1]:
        raise ValueError(f"kernel_expansion: X {X.shape}, support_vectors {sv.shape} and "
                         f"dual_coef {coef.shape} do not fit together")
    out = np.empty(X.shape[0])
    _kfun.kernel_decision(X, sv, coef, int(code), float(gamma), float(degree), float(coef0),
                          out, np.empty(sv.shape[0]))
    return out
