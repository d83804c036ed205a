"""Data for the verify checks: breast-cancer always, the datasets of ``$SOSL_DATA_DIR`` if set.

Uses :mod:`sosl.datasets` (``load_default``, ``load_dataset``, ``available_datasets``,
``to_unit_ball``); falls back to a private loader (scikit-learn's breast-cancer, scaled
to [-1, 1]) if that module is missing, so verify/ never depends on it being importable.
"""

import os

import numpy as np


def _scale(X):
    lo, hi = X.min(axis=0), X.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    return np.ascontiguousarray(2.0 * (X - lo) / span - 1.0)


def unit_ball(X):
    """Divide by the largest row norm so that every ||x|| <= 1 (one common factor)."""
    r = float(np.sqrt((X * X).sum(axis=1)).max())
    return np.ascontiguousarray(X / r if r > 0 else X)


def load_default():
    """Breast-cancer: X scaled to [-1, 1], y in {0, 1} with malignant = 1."""
    try:
        from sosl.datasets import load_default as ld
        return ld()
    except ImportError:
        from sklearn.datasets import load_breast_cancer
        d = load_breast_cancer()
        return _scale(np.asarray(d.data, float)), (d.target == 0).astype(np.int64)


def data_dir():
    d = os.environ.get("SOSL_DATA_DIR")
    return d if d else None


def datasets(include_default=True):
    """Yield ``(name, X, y)``: breast-cancer, then every dataset found in ``$SOSL_DATA_DIR``."""
    if include_default:
        X, y = load_default()
        yield "breast-cancer", X, y
    d = data_dir()
    if d is None:
        return
    try:
        from sosl.datasets import available_datasets, load_dataset
    except ImportError:
        return
    for name in available_datasets(d):
        X, y = load_dataset(name, data_dir=d)
        yield name, np.ascontiguousarray(X, dtype=float), np.asarray(y)
