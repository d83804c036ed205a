"""Input canonicalization for the learners of :mod:`sosl._base`: rows as canonical CSR or
float64, one-row inputs, the refusal of complex, non-finite or structurally invalid
sparse input, and the two binary labels of a numeric ``y`` read in one pass.
"""

from __future__ import annotations

import math
import weakref
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils.multiclass import type_of_target

from ._core._linear import binary_signs, finite_max_abs


def _refuse_complex(x):
    if np.iscomplexobj(x) or (sp.issparse(x) and np.iscomplexobj(x.data)):
        raise ValueError("Complex data not supported: x has a complex dtype; pass the real "
                         "part (x.real) if that is what is meant.")


def _one_row(x):
    """One instance as a one-row batch for ``partial_fit``: a 1-D array (not complex) or a
    sparse matrix of one row; anything else is refused naming its shape."""
    if sp.issparse(x):
        _refuse_complex(x)
        if x.shape[0] != 1:
            raise ValueError(f"x has shape {x.shape}; expected one row (1, n_features)")
        return x
    x = np.asarray(x)
    _refuse_complex(x)
    if x.ndim != 1:
        raise ValueError(f"x has shape {x.shape}; expected a 1-D array (n_features,): one "
                         "instance")
    return x.astype(np.float64, copy=False).reshape(1, -1)


def _check_binary(y, classes):
    """Refuse multiclass targets with scikit-learn's standard message (plus the labels)."""
    y_type = type_of_target(y, input_name="y", raise_unknown=True)
    if y_type != "binary":
        raise ValueError(
            "Only binary classification is supported. The type of the target is "
            f"{y_type}; labels found: {classes.tolist()[:6]}. For several classes, wrap the "
            "learner in sklearn.multiclass.OneVsRestClassifier (one AUC learner per class)."
        )


#: most columns a CSR input may have (its column indices are read as int32)
_MAX_CSR_COLUMNS = int(np.iinfo(np.int32).max)


def _canonical_csr(X):
    """CSR float64, canonical (sorted int32 indices, duplicates summed), copied only when
    needed; dense input is converted. No check of the values (see ``_as_csr``)."""
    if not sp.issparse(X):
        X = sp.csr_matrix(np.atleast_2d(np.asarray(X, dtype=np.float64)))
    if X.shape[1] > _MAX_CSR_COLUMNS:
        raise ValueError(
            f"sparse input with {X.shape[1]} columns: the typed passes index the columns of "
            f"CSR rows with 32-bit integers, so at most {_MAX_CSR_COLUMNS} (2**31 - 1) "
            "features are supported. Hash the features into fewer columns (for example "
            "sklearn's HashingVectorizer or FeatureHasher with n_features=2**20)."
        )
    _check_compressed_structure(X)
    X = X.tocsr() if X.format != "csr" else X
    if X.dtype != np.float64:
        X = X.astype(np.float64)
    if not X.has_canonical_format:         # sorted indices, no duplicate entries
        X = X.copy()
        X.sum_duplicates()
    if X.indices.dtype != np.int32 or X.indptr.dtype != np.int32:
        if X.nnz >= np.iinfo(np.int32).max:
            raise ValueError(f"sparse input with {X.nnz} stored values is too large "
                             "(at most 2**31 - 1 non-zeros per call)")
        X = sp.csr_matrix((X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)),
                          shape=X.shape)
    return X


def _check_compressed_structure(X):
    """Refuse a CSR/CSC matrix whose index arrays do not describe its shape.

    scipy builds ``csr_matrix((data, indices, indptr), shape)`` without checking that the
    indices lie inside the shape or that ``indptr`` never decreases; the typed passes (and
    scipy's own conversions) would then read and write out of bounds. O(nnz), vectorized."""
    if X.format not in ("csr", "csc"):
        return                                  # coo/lil/dok... check their own indices
    n_minor = X.shape[1] if X.format == "csr" else X.shape[0]
    indptr = X.indptr
    if indptr.shape[0] != (X.shape[0] if X.format == "csr" else X.shape[1]) + 1 \
            or indptr[0] != 0 or (indptr.shape[0] > 1 and np.any(np.diff(indptr) < 0)) \
            or indptr[-1] > X.indices.shape[0]:
        raise ValueError("sparse input with an invalid index pointer (indptr): it must start "
                         "at 0, never decrease and end at most at the number of stored values")
    nnz = int(indptr[-1])
    if nnz:
        idx = X.indices[:nnz]
        lo, hi = int(idx.min()), int(idx.max())
        if lo < 0 or hi >= n_minor:
            raise ValueError(
                f"sparse input with a stored {'column' if X.format == 'csr' else 'row'} index "
                f"{hi if hi >= n_minor else lo} outside its shape {X.shape}: the index arrays "
                "do not match the matrix (scipy does not check this when a matrix is built "
                "from (data, indices, indptr))")


def _canonical_layout(x, p):
    """Whether ``x`` is one row of ``p`` columns as a canonical CSR matrix (float64, int32
    indices, sorted without duplicates, its first and last index inside the row: scipy does
    not check that when a matrix is built from its arrays); its values are not looked at."""
    return (sp.issparse(x) and x.format == "csr" and x.shape == (1, p)
            and x.data.dtype == np.float64 and x.indices.dtype == np.int32
            and x.indptr.dtype == np.int32 and x.has_canonical_format
            and (x.nnz == 0 or (x.indices[0] >= 0 and x.indices[x.nnz - 1] < p)))


def _canonical_row(x, p):
    """Whether ``x`` is one finite row of ``p`` columns as a canonical CSR matrix
    (:func:`_canonical_layout`): what the typed one-row paths take as is."""
    return _canonical_layout(x, p) and _finite_array(x.data)


class _DenseRow:
    """One dense float64 row as the CSR arrays a typed one-row path reads (``data``,
    ``indices`` as int32, ``indptr``, ``nnz``): its non-zero entries in column order, the
    entries ``_canonical_csr`` keeps of it (-0.0 is left out as 0.0 is)."""

    __slots__ = ("data", "indices", "indptr", "nnz")

    def __init__(self, x):
        idx = np.flatnonzero(x)
        self.data = x[idx]
        self.indices = idx.astype(np.int32)
        self.nnz = idx.shape[0]
        self.indptr = np.array([0, self.nnz], dtype=np.int32)


def _as_csr(X):
    """``_canonical_csr`` of input rows, refusing non-finite values."""
    X = _canonical_csr(X)
    if X.nnz and not np.isfinite(X.data).all():
        raise ValueError("Input X contains NaN or infinity.")
    return X


def _two_numbers(y):
    """``(classes, s)`` when the numeric ``y`` holds exactly two distinct values (classes
    sorted, as ``np.unique`` gives them; ``s`` the float64 signs, +1 where y is
    ``classes[1]``, -1 elsewhere), else None: a min, a max and one comparison instead of a
    sort. C-contiguous int64 and float64 labels take the typed ``binary_signs`` (no NumPy
    temporaries); every other array takes
    :func:`_two_numbers_np` (the typed form tested against it:
    tests/_core/test_linear_symv.py::test_binary_signs_agree_with_the_numpy_reference)."""
    if type(y) is np.ndarray and y.dtype in (np.int64, np.float64) and y.flags.c_contiguous:
        typed = binary_signs(y)
        if typed is None:
            return None
        lo, hi, s = typed
        return np.array([lo, hi], dtype=y.dtype), s
    return _two_numbers_np(y)


def _two_numbers_np(y):
    """:func:`_two_numbers` in NumPy, for any numeric array. Integer labels whose max is
    their min plus one hold no third value, so they need no count; other labels are
    counted (a third value between the two returns None)."""
    if y.dtype.kind not in "iubf" or y.ndim != 1 or y.shape[0] == 0:
        return None
    lo, hi = y.min(), y.max()
    if not lo < hi:
        return None
    pos = y == hi
    adjacent = y.dtype.kind == "b" or (y.dtype.kind in "iu" and int(hi) - int(lo) == 1)
    if not adjacent and np.count_nonzero(pos) + np.count_nonzero(y == lo) != y.shape[0]:
        return None
    # not np.where(pos, 1.0, -1.0): three in-place steps allocate one array, not three
    s = pos.astype(np.float64)
    s *= 2.0
    s -= 1.0
    return np.array([lo, hi], dtype=y.dtype), s


def _no_array():
    return None


_abs_cache: list[Any] = [_no_array, 0.0]


def _max_abs(X):
    """max |X| in one pass without a temporary copy, NaN if X is not finite; remembered
    (weakly) for the last array asked, within one ``partial_fit`` call (each call forgets
    it first: the caller may have changed the array in place since)."""
    if _abs_cache[0]() is not X:
        if (type(X) is np.ndarray and X.dtype == np.float64 and X.ndim == 2
                and X.flags.c_contiguous):
            _abs_cache[1] = finite_max_abs(X)
        else:                                   # sparse input, validated finite already
            _abs_cache[1] = float(max(X.max(), -X.min())) if X.size else 0.0
        _abs_cache[0] = weakref.ref(X)
    return _abs_cache[1]


def _finite_array(a) -> bool:
    """Whether every entry of the float array ``a`` is finite: one typed pass for a
    C-contiguous float64 array (no temporary), ``np.isfinite`` otherwise."""
    if a.dtype == np.float64 and a.flags.c_contiguous:
        R = finite_max_abs(a.reshape(1, -1))
        return R == R
    return bool(np.isfinite(a).all())


def _all_finite(value) -> bool:
    if isinstance(value, float):                # np.float64 included
        return math.isfinite(value)
    if isinstance(value, np.ndarray):
        return value.dtype.kind != "f" or _finite_array(value)
    return True
