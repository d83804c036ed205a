"""Kernel codes, parameter checks, Gram matrices and the parameter bundles of the kernel passes.

Production helpers of the kernel learners (``sosl.okauc``, ``koil``, ``polk``) and of
:mod:`sosl.kernels`; the NumPy references import them from here, never the other way
round (a ``*_ref`` module is an oracle only).

* ``KERNEL_CODES`` / ``KERNEL_NAMES``: kernel name <-> ``Kernel`` code of ``_codes.pxd``.
* :func:`validate_kernel_params`, :func:`kernel_code`, :func:`budget_pair`: the checks.
* :func:`kernel_matrix`, :func:`kernel_diag`: Gram matrices in NumPy (public in
  :mod:`sosl.kernels`; the POLK driver builds its Gram matrices with them).
* :func:`kernel_spec` and :func:`step_spec`: the dicts that the typed passes receive as the
  C structs ``KernelSpec`` and ``StepSpec`` of ``_kfun.pxd`` (Cython converts a dict with
  exactly these keys at the call), and that the references read by key.
"""
from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from numpy.typing import ArrayLike

from ._codes import Kernel

__all__ = ["budget_pair", "KERNEL_CODES", "KERNEL_NAMES", "KOIL_REFRESH", "kernel_code",
           "kernel_spec", "step_spec", "layout_kernel_spec", "kernel_matrix", "kernel_diag",
           "validate_kernel_params", "gamma_from_sigma", "sigma_from_gamma"]

KERNEL_LINEAR = int(Kernel.KERNEL_LINEAR)
KERNEL_GAUSSIAN = int(Kernel.KERNEL_GAUSSIAN)
KERNEL_POLY = int(Kernel.KERNEL_POLY)
#: kernel name -> ``Kernel`` code understood by the typed passes (``_kfun.pxd``)
KERNEL_CODES = {"linear": KERNEL_LINEAR, "gaussian": KERNEL_GAUSSIAN, "rbf": KERNEL_GAUSSIAN,
                "poly": KERNEL_POLY}
#: ``Kernel`` code -> canonical name
KERNEL_NAMES = {KERNEL_LINEAR: "linear", KERNEL_GAUSSIAN: "gaussian", KERNEL_POLY: "poly"}
#: KOIL recomputes f on its buffer from the Gram cache when t % KOIL_REFRESH == 0 (the one
#: source of the typed pass ``_koil.pyx`` and of its reference ``_koil_ref``)
KOIL_REFRESH = 1024


def kernel_spec(kind, gamma, degree, coef0):
    """The ``KernelSpec`` bundle of a pass: ``{"kind", "gamma", "degree", "coef0"}``.

    ``kind`` is a ``Kernel`` code (already validated, e.g. from a frozen layout); the
    parameters become floats.
    """
    return {"kind": int(kind), "gamma": float(gamma), "degree": float(degree),
            "coef0": float(coef0)}


def layout_kernel_spec(layout):
    """:func:`kernel_spec` of a frozen layout (its ``kernel``, ``gamma``, ``degree``,
    ``coef0``): the one a ``sosl.kernels._KernelLayout`` built when it was frozen, or, for
    the plain dict of an older pickle, a new one."""
    spec = getattr(layout, "kernel_spec", None)
    if spec is not None:
        return spec
    return kernel_spec(layout["kernel"], layout["gamma"], layout["degree"], layout["coef0"])


def step_spec(eta, lam, schedule, loss):
    """The ``StepSpec`` bundle of a pass: ``{"eta", "lam", "schedule", "loss"}``.

    ``eta`` is the constant step (0.0 when the schedule is 1/(lam t)), ``schedule`` a
    ``Schedule`` (or ``PolkSchedule``) code and ``loss`` a ``Loss`` (or ``PolkLoss``) code.
    """
    return {"eta": float(eta), "lam": float(lam), "schedule": int(schedule),
            "loss": int(loss)}


def kernel_code(kernel: str) -> int:
    """Integer code of a kernel name; raise ValueError naming the accepted ones."""
    if not isinstance(kernel, str) or kernel not in KERNEL_CODES:
        raise ValueError(f"kernel must be one of {sorted(KERNEL_CODES)}, got {kernel!r}")
    return KERNEL_CODES[kernel]


def validate_kernel_params(kernel: str, gamma: float, degree: int, coef0: float
                           ) -> tuple[int, float, float, float]:
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


def gamma_from_sigma(sigma: float) -> float:
    """``gamma = 1 / sigma^2``: the paper's Gaussian width sigma as scikit-learn's gamma."""
    return 1.0 / float(sigma) ** 2


def sigma_from_gamma(gamma: float) -> float:
    """``sigma = 1 / sqrt(gamma)``: inverse of :func:`gamma_from_sigma`."""
    return 1.0 / np.sqrt(float(gamma))


def budget_pair(budget: int | tuple[int, int] | list[int] | np.ndarray | None, *,
                allow_none: bool = False) -> tuple[int, int] | None:
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


def kernel_matrix(A: ArrayLike, B: ArrayLike, kernel: str = "gaussian", gamma: float = 1.0,
                  degree: int = 3, coef0: float = 1.0) -> np.ndarray:
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
    code, gamma, degree, coef0 = validate_kernel_params(  # type: ignore[assignment]
        kernel, gamma, degree, coef0)                    # degree: int -> float
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


def kernel_diag(A: ArrayLike, kernel: str = "gaussian", gamma: float = 1.0, degree: int = 3,
                coef0: float = 1.0) -> np.ndarray:
    """``k(A[i], A[i])`` for each row, without forming the Gram matrix."""
    code, gamma, degree, coef0 = validate_kernel_params(  # type: ignore[assignment]
        kernel, gamma, degree, coef0)                    # degree: int -> float
    A = np.atleast_2d(np.asarray(A, dtype=np.float64))
    if code == KERNEL_GAUSSIAN:
        return np.ones(A.shape[0])
    sq = np.einsum("ij,ij->i", A, A)
    if code == KERNEL_POLY:
        return (gamma * sq + coef0) ** degree
    return sq
