"""Data for the verify checks: breast-cancer always, the datasets of ``$SOSL_DATA_DIR`` if set.

Everything comes from :mod:`sosl.datasets`, so verify/ sees exactly the data the library
and the experiments see (same scaling to [-1, 1], same binarization, same unit-ball
projection).
"""

import os

import numpy as np

from sosl.datasets import available_datasets, load_dataset, load_default
from sosl.datasets import to_unit_ball as _to_unit_ball

__all__ = ["load_default", "unit_ball", "data_dir", "datasets"]


def unit_ball(X):
    """Divide by the largest row norm so that every ||x|| <= 1 (C-contiguous result)."""
    return np.ascontiguousarray(_to_unit_ball(X))


def data_dir():
    """The directory named by ``$SOSL_DATA_DIR``, or None."""
    return os.environ.get("SOSL_DATA_DIR") or None


def datasets(include_default=True):
    """Yield ``(name, X, y)``: breast-cancer, then every dataset found in ``$SOSL_DATA_DIR``."""
    if include_default:
        X, y = load_default()
        yield "breast-cancer", X, y
    d = data_dir()
    if d is None:
        return
    for name in available_datasets(d):
        X, y = load_dataset(name, data_dir=d)
        yield name, np.ascontiguousarray(X, dtype=float), np.asarray(y)
