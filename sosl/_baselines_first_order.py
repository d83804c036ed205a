"""The accuracy-oriented baselines of :mod:`sosl.baselines`: the perceptron and PA-I."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._baseline_core import _COMMON, _POSITIVE, _RowLocalBaseline
from ._capabilities import changes
from ._core import _baselines
from ._typing import RandomState

__all__ = ["Perceptron", "PAI"]

class Perceptron(_RowLocalBaseline):
    """Rosenblatt's perceptron, no bias: one online pass of mistake-driven updates.

    A round with ``s_t w.x_t <= 0`` (a mistake, or a point on the boundary) adds
    ``s_t x_t`` to ``w``; other rounds leave ``w`` unchanged. It minimizes no AUC loss;
    the paper uses it as an accuracy-oriented baseline. Starting from ``w = 0`` the
    learned direction is invariant to a step size, so there is no hyper-parameter.

    Parameters
    ----------
    shuffle : bool, default=False
        Visit the rows of each batch in a seeded random order.
    random_state : int, RandomState or None, default=None
        Seed of the shuffling (used only with ``shuffle=True``).

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features)
        The weights w after the last round, shaped as in scikit-learn's binary linear
        classifiers: a view of ``w_`` (writes go through; assigning an array of shape
        (1, n_features) or (n_features,) replaces the weights).
    w_ : ndarray of shape (n_features,)
        The same weights, the 1-D state array the typed pass updates in place.
    intercept_ : ndarray of shape (1,)
        Always 0 (the perceptron of the paper has no bias).
    t_, n_seen_ : int
        Rounds played (instances seen) since ``fit`` or the first ``partial_fit``.
    classes_ : ndarray of shape (2,)
        The labels; ``classes_[1]`` is the positive class.
    n_features_in_ : int
        Number of features.

    Notes
    -----
    Equal to ``sklearn.linear_model.Perceptron(fit_intercept=False, shuffle=False,
    max_iter=1, tol=None)`` on the same rows
    (tests/test_baselines.py::test_perceptron_equals_sklearn). Cost per round O(p), memory O(p);
    O(nnz(x_t)) per round on sparse rows.

    References
    ----------
    F. Rosenblatt. The perceptron: a probabilistic model for information storage and
    organization in the brain. Psychological Review, 65(6):386-408, 1958.

    Examples
    --------
    >>> import numpy as np
    >>> from sosl import Perceptron
    >>> X = np.array([[1.0, 0.5], [-1.0, -0.2], [0.8, 0.1], [-0.6, -0.9]])
    >>> Perceptron().fit(X, [1, 0, 1, 0]).coef_
    array([[1. , 0.5]])
    """

    _state_names = ("w_", "intercept_")
    _parameter_constraints: dict = dict(_COMMON)
    capabilities = changes(sparse_input=True)

    def __init__(self, shuffle: bool = False, random_state: RandomState = None) -> None:
        self.shuffle = shuffle
        self.random_state = random_state

    def _init_state(self, n_features):
        return {"w_": np.zeros(n_features), "intercept_": np.zeros(1)}

    def _pass(self, state, X, s, order):
        if sp.issparse(X):
            state["t_"] = _baselines.perceptron_pass_csr(X.data, X.indices, X.indptr, s, order,
                                                         state["w_"], state["t_"])
        else:
            state["t_"] = _baselines.perceptron_pass(X, s, order, state["w_"], state["t_"])


class PAI(_RowLocalBaseline):
    """PA-I, the passive-aggressive online classifier with aggressiveness C.

    Round t solves min_w 1/2 ||w - w_t||^2 + C xi subject to
    ``1 - s_t w.x_t <= xi, xi >= 0``, whose solution is

        w_{t+1} = w_t + tau_t s_t x_t,  tau_t = min(C, max(0, 1 - s_t w_t.x_t) / ||x_t||^2).

    Parameters
    ----------
    C : float, default=1.0
        Aggressiveness C > 0 (the largest step tau_t).
    shuffle : bool, default=False
        Visit the rows of each batch in a seeded random order.
    random_state : int, RandomState or None, default=None
        Seed of the shuffling (used only with ``shuffle=True``).

    Attributes
    ----------
    coef_, w_ : ndarray of shape (1, n_features), (n_features,)
        The weights w after the last round (``coef_`` a view of ``w_``, as in
        :class:`Perceptron`).
    intercept_ : ndarray of shape (1,)
        Always 0 (no bias, as in the paper's baseline).
    t_, n_seen_, classes_, n_features_in_
        As in :class:`Perceptron`.

    Notes
    -----
    A row with ``x_t = 0`` gives no direction and is skipped (as scikit-learn does).
    Equal to scikit-learn's PA-I (``SGDClassifier(loss='hinge', penalty=None,
    learning_rate='pa1', eta0=C, fit_intercept=False, shuffle=False, max_iter=1)``) on
    the same rows (tests/test_baselines.py::test_pai_equals_sklearn_pa1). Cost per round
    O(p), memory O(p); O(nnz(x_t)) per round on
    sparse rows.

    References
    ----------
    K. Crammer, O. Dekel, J. Keshet, S. Shalev-Shwartz, Y. Singer. Online
    passive-aggressive algorithms. JMLR, 7:551-585, 2006.

    Examples
    --------
    >>> import numpy as np
    >>> from sosl import PAI
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> PAI(C=0.5).fit(X, [1, 0]).coef_
    array([[ 0.5, -0.5]])
    """

    _state_names = ("w_", "intercept_")
    _parameter_constraints: dict = {**_COMMON, "C": [_POSITIVE]}
    capabilities = changes(sparse_input=True)

    def __init__(self, C: float = 1.0, shuffle: bool = False,
                 random_state: RandomState = None) -> None:
        self.C = C
        self.shuffle = shuffle
        self.random_state = random_state

    def _init_state(self, n_features):
        return {"w_": np.zeros(n_features), "intercept_": np.zeros(1)}

    def _pass(self, state, X, s, order):
        if sp.issparse(X):
            state["t_"] = _baselines.pa1_pass_csr(X.data, X.indices, X.indptr, s, order,
                                                  state["w_"], state["t_"], float(self.C))
        else:
            state["t_"] = _baselines.pa1_pass(X, s, order, state["w_"], state["t_"],
                                              float(self.C))


# pickles and the documentation name the public module
for _cls in (Perceptron, PAI):
    _cls.__module__ = "sosl.baselines"
del _cls
