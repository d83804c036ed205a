"""Kernel functions of the kernel learners (public view of :mod:`sosl._core._kparams`).

Three kernels, named and parameterized as in scikit-learn's ``pairwise_kernels``:
``"linear"`` x . x', ``"gaussian"`` (alias ``"rbf"``) exp(-gamma ||x - x'||^2) and ``"poly"``
(gamma x . x' + coef0)^degree. The paper writes the Gaussian kernel
exp(-||x - x'||^2 / sigma^2), so ``gamma = 1 / sigma^2`` (:func:`gamma_from_sigma`).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from numbers import Integral, Real
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from sklearn.utils._param_validation import Interval, StrOptions

from ._core import _kfun
from ._core._kparams import (
    KERNEL_CODES,
    budget_pair,
    gamma_from_sigma,
    kernel_code,
    kernel_diag,
    kernel_matrix,
    kernel_spec,
    sigma_from_gamma,
    validate_kernel_params,
)
from ._input import _canonical_csr
from ._typing import KernelName

__all__ = ["budget_pair", "KERNEL_CODES", "KERNEL_CONSTRAINTS", "kernel_code", "kernel_matrix",
           "kernel_expansion", "layout_expansion", "kernel_diag", "validate_kernel_params",
           "gamma_from_sigma", "sigma_from_gamma"]

#: the constraint-table entries of the kernel hyper-parameters every kernel learner shares
KERNEL_CONSTRAINTS = {
    "kernel": [StrOptions(set(KERNEL_CODES))],
    "gamma": [Interval(Real, 0, None, closed="neither"), StrOptions({"scale"})],
    "degree": [Interval(Integral, 1, None, closed="left")],
    "coef0": [Interval(Real, None, None, closed="neither")],
}


def _gamma_scale(X):
    """``1 / (n_features * X.var())`` over every entry of the first batch (1.0 for a
    constant batch), scikit-learn's ``gamma="scale"``; sparse rows without densifying."""
    if sp.issparse(X):
        n = X.shape[0] * X.shape[1]
        data = np.asarray(X.data, dtype=np.float64)
        mean = data.sum() / n
        var = max(float(np.dot(data, data)) / n - mean * mean, 0.0)
    else:
        var = float(np.var(np.asarray(X, dtype=np.float64)))
    if not (var > 0.0 and np.isfinite(var)):
        return 1.0
    return 1.0 / (X.shape[1] * var)


#: the layout keys every kernel learner has
_LAYOUT_COMMON = ("kernel", "gamma", "gamma_scale", "degree", "coef0", "storage")


def _frozen(self, *args, **kwargs):
    raise TypeError("a frozen layout cannot be changed (build a new one)")


@dataclass(frozen=True, eq=False)
class _KernelLayout(dict):
    """The frozen layout of a kernel learner (``_layout()`` / ``_layout_``).

    The kernel and its parameters (they define the cached Gram matrices), the storage of
    the support vectors, and the optional keys one learner uses (``extras`` names them):
    ``budgets`` (N-, N+) in slot order (OKAUC-M/S: None for unbounded buffers; KOIL),
    ``policy`` (KOIL's ``KoilPolicy`` code), ``budget_policy`` (OKAUC-M/S: "fifo" or
    "komp"), ``schedule`` (the step-schedule code of OKAUC-M/S and POLK). Its fields are
    also its read-only dict items (the common keys and the ``extras``): the base's layout
    check, :mod:`sosl.state` and the one-row paths read it as they read the layouts of the
    other learners and those of older pickles (plain dicts), at the cost of a dict lookup,
    and two layouts compare equal when their items are. Built by
    :meth:`_SparseStorage._kernel_layout`.
    """

    kernel: int
    gamma: float
    gamma_scale: bool
    degree: float
    coef0: float
    storage: str
    budgets: tuple | None = None
    policy: int | None = None
    budget_policy: str | None = None
    schedule: int | None = None
    extras: tuple = ()

    def __post_init__(self):
        dict.update(self, {k: getattr(self, k) for k in _LAYOUT_COMMON + self.extras})
        object.__setattr__(self, "kernel_spec",
                           kernel_spec(self.kernel, self.gamma, self.degree, self.coef0))

    __setitem__ = __delitem__ = update = pop = popitem = clear = setdefault = _frozen
    __ior__ = _frozen

    def __reduce__(self):
        return (type(self), tuple(getattr(self, f.name) for f in fields(self)))

    def __repr__(self):
        return dict.__repr__(self)


class _SparseStorage:
    """Mixin of the kernel learners: the first call of a fit picks the support-vector storage.

    When the first ``fit`` / ``partial_fit`` call of a fit receives a ``scipy.sparse``
    matrix and ``_sparse_storage_ok()`` holds, the frozen layout gets ``storage="csr"``:
    the base then hands CSR rows to ``_run_pass`` and ``_decision`` (dense rows are
    converted there); otherwise ``storage="dense"`` and sparse rows are densified a block
    at a time. ``_storage_names`` lists the state arrays of every storage, dropped when a
    new fit starts (a failing call gets them back from its transaction).
    """

    _storage_names: tuple[str, ...] = ()
    if TYPE_CHECKING:        # the learner's hyper-parameters
        kernel: str
        gamma: Any
        degree: float
        coef0: float

    def _sparse_storage_ok(self):
        return True

    def _layout_inputs(self, layout):
        """Set what the first call of a fit reads from its data for the layout (the
        storage, and the width of ``gamma="scale"``) from a stored ``layout``, so that a
        model rebuilt from its state (:func:`sosl.state.from_state`) freezes the same
        layout; the checks of that layout against the parameters stay the caller's."""
        self.__dict__["_sparse_fit"] = layout.get("storage") == "csr"
        if layout.get("gamma_scale"):
            self.__dict__["_gamma_scale"] = float(layout["gamma"])

    def _storage(self):
        """The value of ``storage`` in ``_layout()``."""
        sparse = self.__dict__.get("_sparse_fit", False) and self._sparse_storage_ok()
        return "csr" if sparse else "dense"

    def _first_batch(self, X):
        super()._first_batch(X)  # type: ignore[misc]  # a mixin: the learner's base class has it
        self._new_storage(X)

    def _kernel_layout(self, **extras):
        """The :class:`_KernelLayout` of the current hyper-parameters: the kernel (code,
        numeric gamma, degree, coef0), the storage and the learner's ``extras``."""
        return _KernelLayout(kernel=KERNEL_CODES[self.kernel], gamma=self._gamma(),
                            gamma_scale=self.gamma == "scale", degree=float(self.degree),
                            coef0=float(self.coef0), storage=self._storage(),
                            extras=tuple(extras), **extras)

    def _gamma(self):
        """The numeric kernel width: ``gamma``, or for ``gamma="scale"`` the value frozen in
        the layout (fitted) or computed from the first batch (``_new_storage``)."""
        if isinstance(self.gamma, str):
            lay = self.__dict__.get("_layout_")
            if lay is not None and lay.get("gamma_scale"):
                return lay["gamma"]
            return self.__dict__.get("_gamma_scale", 1.0)
        return float(self.gamma)

    def _new_storage(self, X):
        self.__dict__["_sparse_fit"] = sp.issparse(X)
        if isinstance(self.gamma, str):             # "scale": 1 / (p Var(X)), as SVC's
            self.__dict__["_gamma_scale"] = _gamma_scale(X)
            self.__dict__.pop("_layout_", None)     # a new fit freezes its own width
        for name in self._storage_names:
            self.__dict__.pop(name, None)


def _widen_slots(ind, val, rows):
    """Sparse slots ``(ind, val)`` at least as wide as the longest of the CSR ``rows``."""
    width = int(np.diff(rows.indptr).max(initial=1))
    L = ind.shape[1]
    if width <= L:
        return ind, val
    new_ind = np.zeros((ind.shape[0], width), dtype=ind.dtype)
    new_val = np.zeros((val.shape[0], width))
    new_ind[:, :L] = ind
    new_val[:, :L] = val
    return new_ind, new_val


def _slots_to_csr(ind, val, nnz, slots, n_features):
    """The given sparse slots as the rows of a canonical CSR matrix."""
    counts = nnz[slots]
    indptr = np.zeros(slots.shape[0] + 1, dtype=np.int32)
    np.cumsum(counts, out=indptr[1:])
    keep = np.arange(ind.shape[1])[None, :] < counts[:, None]
    return sp.csr_matrix((val[slots][keep], ind[slots][keep], indptr),
                         shape=(slots.shape[0], n_features))


def kernel_expansion(X: ArrayLike, support_vectors: ArrayLike, dual_coef: ArrayLike,
                     kernel: KernelName = "gaussian", gamma: float = 1.0, degree: int = 3,
                     coef0: float = 1.0) -> np.ndarray:
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
    code, gamma, degree, coef0 = validate_kernel_params(  # type: ignore[assignment]
        kernel, gamma, degree, coef0)                    # degree: int -> float
    return _expansion(X, support_vectors, dual_coef, code, gamma, degree, coef0)


def layout_expansion(X: ArrayLike, support_vectors: ArrayLike, dual_coef: ArrayLike,
                     layout: Mapping[str, Any]) -> np.ndarray:
    """:func:`kernel_expansion` with the kernel of a learner's frozen ``_layout_`` (its
    ``kernel`` code, ``gamma``, ``degree`` and ``coef0``, validated when it was frozen)."""
    return _expansion(X, support_vectors, dual_coef, int(layout["kernel"]),
                      float(layout["gamma"]), float(int(layout["degree"])),
                      float(layout["coef0"]))


def _slots_expansion(X, ind, val, nnz, slots, dual_coef, layout):
    """:func:`layout_expansion` of canonical CSR rows X (the callers make or check that)
    against the sparse slots ``slots`` of a learner's storage (slot j: ``ind[j, :nnz[j]]``,
    ``val[j, :nnz[j]]``), read in place: the value of ``layout_expansion(X,
    _slots_to_csr(ind, val, nnz, slots, p), dual_coef, layout)`` to the bit, without
    building that matrix (``_kfun.kernel_decision_slots``)."""
    slots = np.ascontiguousarray(slots, dtype=np.intp)
    coef = np.ascontiguousarray(dual_coef, dtype=np.float64)
    out = np.empty(X.shape[0])
    _kfun.kernel_decision_slots(X.data, X.indices, X.indptr, ind, val, nnz, slots, coef,
                                kernel_spec(int(layout["kernel"]), float(layout["gamma"]),
                                            float(int(layout["degree"])),
                                            float(layout["coef0"])),
                                out, np.empty(slots.shape[0]))
    return out


def _expansion(X, support_vectors, dual_coef, code, gamma, degree, coef0):
    """:func:`kernel_expansion` with the kernel already validated (``code`` a ``Kernel``
    code, the parameters floats): the learners' decision functions, whose layout was
    checked when it was frozen, call it directly."""
    coef = np.ascontiguousarray(dual_coef, dtype=np.float64)
    if sp.issparse(X) or sp.issparse(support_vectors):
        X, sv = _canonical_csr(X), _canonical_csr(support_vectors)
        if X.shape[1] != sv.shape[1] or coef.shape != sv.shape[:1]:
            raise ValueError(f"kernel_expansion: X {X.shape}, support_vectors {sv.shape} and "
                             f"dual_coef {coef.shape} do not fit together")
        out = np.empty(X.shape[0])
        _kfun.kernel_decision_csr(X.data, X.indices, X.indptr, sv.data, sv.indices, sv.indptr,
                                  coef, kernel_spec(code, gamma, degree, coef0), out,
                                  np.empty(sv.shape[0]))
        return out
    X = np.ascontiguousarray(X, dtype=np.float64)
    sv = np.ascontiguousarray(support_vectors, dtype=np.float64)
    if X.ndim != 2 or sv.ndim != 2 or X.shape[1] != sv.shape[1] or coef.shape != sv.shape[:1]:
        raise ValueError(f"kernel_expansion: X {X.shape}, support_vectors {sv.shape} and "
                         f"dual_coef {coef.shape} do not fit together")
    out = np.empty(X.shape[0])
    _kfun.kernel_decision(X, sv, coef, kernel_spec(code, gamma, degree, coef0), out,
                          np.empty(sv.shape[0]))
    return out
