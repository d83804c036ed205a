"""Preprocessing: the paper's feature scaling, the unit-ball projection, binarization rules."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ._errors import IntegrityError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["scale_features", "to_unit_ball", "positive_label"]


def scale_features(X: ArrayLike, feature_range: tuple[float, float] = (-1.0, 1.0)) -> np.ndarray:
    """Min-max scale every column to ``feature_range`` (the paper's preprocessing).

    Parameters
    ----------
    X : array-like of shape (n, p)
    feature_range : tuple (low, high), default=(-1, 1)

    Returns
    -------
    Xs : ndarray of shape (n, p), float64
        Scaled copy. A constant column has no range to scale and becomes 0 (the middle of
        the default range), so it carries no information into a linear score.
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D, got shape {X.shape}")
    low, high = map(float, feature_range)
    if not low < high:
        raise ValueError(f"feature_range must satisfy low < high, got {feature_range}")
    lo, hi = X.min(axis=0), X.max(axis=0)
    span = hi - lo
    const = span == 0
    Xs = low + (X - lo) * ((high - low) / np.where(const, 1.0, span))
    Xs[:, const] = 0.0
    return np.ascontiguousarray(Xs)


def to_unit_ball(X: ArrayLike) -> np.ndarray:
    """Divide every row by the largest row norm, so that all ``||x|| <= 1``.

    One common factor keeps the geometry (ratios of distances, linear separability) and is
    what the regret analysis (Theorem 6 assumes ||x|| <= 1) needs; per-row normalization
    would change the problem. An all-zero X is returned unchanged.

    Parameters
    ----------
    X : array-like of shape (n, p)

    Returns
    -------
    Xb : ndarray of shape (n, p), float64
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D, got shape {X.shape}")
    r = float(np.sqrt((X * X).sum(axis=1)).max()) if X.shape[0] else 0.0
    return np.ascontiguousarray(X / r if r > 0 else X.copy())


def positive_label(info: Any, labels: np.ndarray, counts: np.ndarray) -> float:
    """The original label that a registry rule makes positive.

    Parameters
    ----------
    info : DatasetInfo
        Its ``binarize`` rule: ``label=<v>``, ``count=<k>`` or ``min-label``.
    labels, counts : ndarray
        The distinct labels of the file (sorted) and their counts (``np.unique``).

    Raises
    ------
    IntegrityError
        (a ValueError) if a ``count=<k>`` rule matches no class or several.
    """
    kind, _, value = info.binarize.partition("=")
    if kind == "label":
        return float(value)
    if kind == "min-label":
        return float(labels.min())
    if kind == "count":
        hits = labels[counts == int(value)]
        if hits.shape[0] != 1:
            raise IntegrityError(
                f"dataset {info.name!r}: rule {info.binarize!r} matches {hits.shape[0]} classes "
                f"(label counts {dict(zip(labels.tolist(), counts.tolist()))})")
        return float(hits[0])
    raise ValueError(f"dataset {info.name!r}: unknown binarization rule {info.binarize!r}")
