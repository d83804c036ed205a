"""Helpers shared by several test files (imported as ``helpers``; see conftest.py)."""

import inspect

import numpy as np
import scipy.sparse as sp
from sklearn.base import ClassifierMixin

import sosl

#: every public learner of sosl
ESTIMATORS = [getattr(sosl, n) for n in sosl.__all__
              if inspect.isclass(getattr(sosl, n)) and issubclass(getattr(sosl, n),
                                                                  ClassifierMixin)]
#: small budgets and ranks, so that a test on every learner stays fast
KW = {"OKAUCM": dict(budget=20), "OKAUCS": dict(budget=20), "KOIL": dict(budget=20),
      "OAM": dict(buffer_size=20), "SketchedOAUCM": dict(rank=4), "POLK": dict(eta=0.3)}


def make(Est, **extra):
    """``Est`` with the small settings of ``KW`` and ``random_state=0`` where it has one."""
    kw = dict(KW.get(Est.__name__, {}))
    if "random_state" in inspect.signature(Est).parameters:
        kw["random_state"] = 0
    kw.update(extra)
    return Est(**kw)


def fitted_state(model):
    """The fitted attributes of ``model`` (public names ending in '_')."""
    return {k: v for k, v in vars(model).items() if k.endswith("_") and not k.startswith("_")}


def same_state(a, b):
    """Whether two ``fitted_state`` dicts are equal byte for byte."""
    if a.keys() != b.keys():
        return False
    for k in a:
        u, v = a[k], b[k]
        if sp.issparse(u) or sp.issparse(v):
            if not (sp.issparse(u) and sp.issparse(v) and u.shape == v.shape
                    and (u != v).nnz == 0):
                return False
        elif isinstance(u, np.ndarray) or isinstance(v, np.ndarray):
            u, v = np.asarray(u), np.asarray(v)
            if u.shape != v.shape or u.dtype != v.dtype or u.tobytes() != v.tobytes():
                return False
        elif isinstance(u, float) and isinstance(v, float):
            if np.float64(u).tobytes() != np.float64(v).tobytes():
                return False
        elif isinstance(u, tuple) and isinstance(v, tuple):
            if not same_state(dict(enumerate(u)), dict(enumerate(v))):
                return False
        elif u != v:
            return False
    return True
