"""Kernel functions of the kernel learners (public view of :mod:`sosl._core._kfun_ref`).

Three kernels, named and parameterized as in scikit-learn's ``pairwise_kernels``:
``"linear"`` x . x', ``"gaussian"`` (alias ``"rbf"``) exp(-gamma ||x - x'||^2) and ``"poly"``
(gamma x . x' + coef0)^degree. The paper writes the Gaussian kernel
exp(-||x - x'||^2 / sigma^2), so ``gamma = 1 / sigma^2`` (:func:`gamma_from_sigma`).
"""

from numbers import Integral, Real

from sklearn.utils._param_validation import Interval, StrOptions

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
           "kernel_diag", "validate_kernel_params", "gamma_from_sigma", "sigma_from_gamma"]

#: the constraint-table entries of the kernel hyper-parameters every kernel learner shares
KERNEL_CONSTRAINTS = {
    "kernel": [StrOptions(set(KERNEL_CODES))],
    "gamma": [Interval(Real, 0, None, closed="neither")],
    "degree": [Interval(Integral, 1, None, closed="left")],
    "coef0": [Interval(Real, None, None, closed="neither")],
}
