"""FTRL-AUC's numbers and state arrays, without scikit-learn.

The estimator :class:`sosl.FTRLAUC` (:mod:`sosl.ftrl`) and the command line's engine
(:mod:`sosl._engine`) both build their state, derive the numbers the typed pass runs with
and score rows through the functions here, so that there is one implementation of each:
the estimator adds scikit-learn's validation, transactions and API around them; the
engine runs them on the rows of a stream without importing scikit-learn or SciPy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

import sosl as _sosl

from ._core import _ftrl

__all__ = ["NAME", "AUTO_GAMMA", "DEFAULTS", "STATE_NAMES", "effective_params", "init_state",
           "wzn_of", "intercept"]

#: the class name of the estimator (what a model file names as its learner), read from the
#: package's lazy name map (the public name whose home is this learner's module)
NAME = next(name for name, home in _sosl._HOME.items() if home == "ftrl")
#: gamma of ``gamma="auto"`` on rows of unit row scale (see ``effective_params``)
AUTO_GAMMA = 0.5
#: the estimator's hyper-parameters and their defaults (``FTRLAUC().get_params()``)
DEFAULTS: dict[str, Any] = {
    "gamma": "auto", "beta": 1.0, "l1": 0.0, "l2": 0.0, "shuffle": False,
    "random_state": None, "forgetting": 1.0, "detector": None, "label_delay": 0,
}
#: the fitted attributes that make up the state
STATE_NAMES = ("w_", "z_", "sq_grad_", "counts_", "mean_scores_")


def effective_params(params: Mapping[str, Any], layout: Mapping[str, Any]
                     ) -> tuple[float, float, float, float]:
    """``(gamma, beta, l1, l2)`` the pass runs with, from the hyper-parameters
    ``params`` (a dict) and the frozen ``layout``: the numbers as given, or under
    ``gamma="auto"`` ``(0.5 / s, beta s, l1 s, l2 s^2)`` for the row scale s."""
    gamma, beta = params["gamma"], float(params["beta"])
    l1, l2 = float(params["l1"]), float(params["l2"])
    if not isinstance(gamma, str):
        return float(gamma), beta, l1, l2
    s = float(layout["row_scale"])
    return AUTO_GAMMA / s, beta * s, l1 * s, l2 * (s * s)


def init_state(n_features: int) -> dict[str, np.ndarray]:
    """A fresh state: w, z and the squared-gradient sums as the three columns of one
    (n_features, 3) array (one cache line per coordinate), class counts and mean scores."""
    wzn = np.zeros((n_features, 3))
    return {
        "w_": wzn[:, 0],
        "z_": wzn[:, 1],
        "sq_grad_": wzn[:, 2],
        "counts_": np.zeros(2, dtype=np.int64),
        "mean_scores_": np.zeros(2),
    }


def wzn_of(state: Mapping[str, Any]) -> np.ndarray | None:
    """The (p, 3) array whose columns are the state's w_, z_, sq_grad_, or None."""
    w = state["w_"]
    wzn = w.base
    return wzn if _ftrl.columns_of(wzn, w, state["z_"], state["sq_grad_"]) else None


def intercept(counts: np.ndarray, mean_scores: np.ndarray) -> float:
    """``-(a + b) / 2`` for the classes' mean scores once both classes are seen, else 0."""
    if counts[0] == 0 or counts[1] == 0:
        return 0.0
    return float(-0.5 * (mean_scores[0] + mean_scores[1]))
