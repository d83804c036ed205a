"""Input checks and labels of :class:`sosl._base.BaseOnlineAUC`: the validation of a batch,
of a row and of the labels, with the cheap paths for float64 C-contiguous arrays of a fitted
model, and the label signs (+1 for ``classes_[1]``, -1 for ``classes_[0]``).

A mixin of the base class (``_base`` keeps the contract); the learners override none of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from ._capabilities import Capabilities
from ._input import _as_csr, _check_compressed_structure, _finite_array, _refuse_complex

__all__: list[str] = []


class _Validation:
    """Mixin of :class:`sosl._base.BaseOnlineAUC` (module docstring)."""

    if TYPE_CHECKING:        # provided by BaseOnlineAUC and the learner
        capabilities: ClassVar[Capabilities]
        classes_: np.ndarray
        _signs_: dict

        def _sparse_mode(self) -> bool | str: ...
        def _finite_X(self, X) -> bool: ...

    def _check_same_classes(self, classes):
        classes = np.asarray(classes)
        if classes.shape != (2,) or set(classes.tolist()) != set(self.classes_.tolist()):
            raise ValueError(f"classes={classes.tolist()} differs from classes_="
                             f"{self.classes_.tolist()} of the earlier calls")

    def _validate_X(self, X, reset):
        if sp.issparse(X):
            _check_compressed_structure(X)          # before anything reads the indices
            if not self._sparse_mode():
                raise TypeError(
                    f"{type(self).__name__} does not accept sparse input: it keeps dense "
                    "state per feature. Densify X (X.toarray()) if it fits in memory, or use "
                    "a learner that accepts CSR rows."
                )
            X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=reset)
            return _as_csr(X)
        if (not reset and type(X) is np.ndarray and X.dtype == np.float64 and X.ndim == 2
                and X.flags.c_contiguous and X.shape[0] > 0
                and X.shape[1] == self.n_features_in_
                and "feature_names_in_" not in self.__dict__):   # else: the names warning
            if not self._finite_X(X):
                raise ValueError("Input X contains NaN or infinity.")
            return X
        return validate_data(self, X, dtype=np.float64, order="C", reset=reset)

    def _validate_Xy(self, X, y, reset):
        """Validate a batch; cheap path for float64 C-contiguous arrays after the first call."""
        if (not reset and not sp.issparse(X) and type(y) is np.ndarray and y.ndim == 1
                and type(X) is np.ndarray and X.ndim == 2 and y.shape[0] == X.shape[0]):
            X = self._validate_X(X, reset=False)
            return X, y
        if (reset and self.capabilities.pass_checks_finite and type(X) is np.ndarray
                and type(y) is np.ndarray and X.dtype == np.float64 and X.ndim == 2
                and X.flags.c_contiguous and X.shape[0] > 0 and X.shape[1] > 0
                and y.ndim == 1 and y.shape[0] == X.shape[0] and y.dtype.kind in "iub"):
            # what validate_data would do to these arrays, without its generic checks (a
            # visible share of a fast fit's time): nothing to
            # convert, integer labels need no finiteness or target-type check, and the
            # fresh pass reports a non-finite X itself
            self.__dict__.pop("feature_names_in_", None)   # a plain array has no names
            self.n_features_in_ = X.shape[1]
            return X, y
        if sp.issparse(X):
            _check_compressed_structure(X)          # before anything reads the indices
            if not self._sparse_mode():
                self._validate_X(X, reset)          # raises the TypeError
            X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64,
                                 reset=reset, ensure_min_samples=1)
            X = _as_csr(X)
        else:
            # a learner whose fresh pass checks every row itself skips the separate scan
            # (reset: the state is created by this call and dropped if the pass raises)
            X, y = validate_data(self, X, y, dtype=np.float64, order="C", reset=reset,
                                 ensure_min_samples=1,
                                 ensure_all_finite=not (
                                     reset and self.capabilities.pass_checks_finite))
        if y.dtype.kind not in "iubUS":         # floats and objects: continuous or mixed?
            check_classification_targets(y)
        return X, y

    def _validate_row(self, x) -> Any:
        if not (type(x) is np.ndarray and x.dtype == np.float64):
            _refuse_complex(x if sp.issparse(x) else np.asarray(x))
        if sp.issparse(x):
            _check_compressed_structure(x)          # before anything reads the indices
            if not self._sparse_mode():
                self._validate_X(x, reset=False)    # raises the TypeError
            x = _as_csr(x)
            if x.shape != (1, self.n_features_in_):
                raise ValueError(f"x has shape {x.shape}; expected one row of "
                                 f"{self.n_features_in_} features")
            return x
        if not (type(x) is np.ndarray and x.dtype == np.float64):
            x = np.asarray(x, dtype=np.float64)
        if x.ndim != 1 or x.shape[0] != self.n_features_in_:
            raise ValueError(f"x has shape {x.shape}; expected ({self.n_features_in_},) "
                             f"(one instance of {self.n_features_in_} features)")
        if not _finite_array(x):
            raise ValueError("Input x contains NaN or infinity.")
        if not x.flags.c_contiguous:
            x = np.ascontiguousarray(x)
        return x

    def _sign_of(self, y):
        key = y.item() if hasattr(y, "item") else y
        try:
            return self._signs_[key]
        except (KeyError, TypeError):
            raise ValueError(f"label {y!r} is not one of classes_ "
                             f"{self.classes_.tolist()}") from None

    def _signs(self, y, known=False):
        """+1 for ``classes_[1]``, -1 for ``classes_[0]``; unknown labels raise."""
        c0, c1 = self.classes_
        if y.shape[0] == 1:
            if y[0] == c1:
                return np.ones(1)
            if y[0] == c0:
                return -np.ones(1)
        if (y.dtype.kind in "iu" and c0 == 0 and c1 == 1 and y.ndim == 1
                and y.shape[0] > 0 and y.min() >= 0 and y.max() <= 1):
            s = y.astype(np.float64)                 # the common 0/1 labels: 2 y - 1
            s *= 2.0
            s -= 1.0
            return s
        pos = y == c1
        if not known:
            self._check_known(y, self.classes_, pos)
        return np.where(pos, 1.0, -1.0)

    @staticmethod
    def _check_known(y, classes, pos=None):
        c0, c1 = classes
        ok = (y == c1 if pos is None else pos) | (y == c0)
        if not np.all(ok):
            unknown = np.unique(np.asarray(y)[~np.asarray(ok, dtype=bool)])
            raise ValueError(f"y holds label(s) {unknown.tolist()[:5]} not in classes "
                             f"{np.asarray(classes).tolist()}")
