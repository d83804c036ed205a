"""Shared machinery of the online pairwise (AUC) learners.

Every estimator in sosl is a binary classifier trained by one online pass over the
samples in the order given. This module holds what they have in common:

* input validation with scikit-learn's utilities (plus a cheap path for the common
  streaming case of a float64 C-contiguous batch, so that ``partial_fit`` called with
  one row at a time is not dominated by validation overhead);
* the label convention: ``classes_[1]`` is the positive class, as in scikit-learn, and
  the kernels see ``s = +1`` for it and ``s = -1`` for ``classes_[0]``;
* transactional state updates: a pass runs on copies of the fitted state, and the
  copies replace the estimator's attributes only when the pass finished with finite
  values, so a bad batch (or a diverging step size) leaves a fitted model unchanged;
* the step counter ``t_``, kept across ``partial_fit`` calls.

Subclasses provide ``_state_names`` (the fitted attributes making up the state),
``_init_state(n_features)``, ``_run_pass(state, X, s, order)`` and ``_decision(X)``.
"""

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

__all__ = ["BaseOnlineAUC", "check_scalar_param"]


def check_scalar_param(value, name, *, low=None, high=None, allow_none=False,
                       include_low=False, integer=False):
    """Validate one hyper-parameter and raise a clear error naming it.

    Parameters
    ----------
    value : object
        The value to check.
    name : str
        Parameter name used in the message.
    low, high : float or None
        Bounds; ``low`` is exclusive unless ``include_low`` and ``high`` inclusive.
    allow_none : bool
        Whether ``None`` is an accepted value.
    include_low : bool
        Whether ``value == low`` is accepted.
    integer : bool
        Whether the value must be an integer.

    Returns
    -------
    value : float, int or None
    """
    if value is None:
        if allow_none:
            return None
        raise TypeError(f"{name} must be a number, got None")
    kind = Integral if integer else Real
    if isinstance(value, bool) or not isinstance(value, kind):
        what = "an integer" if integer else "a real number"
        raise TypeError(f"{name} must be {what}, got {value!r} of type {type(value).__name__}")
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if low is not None and (value < low or (value == low and not include_low)):
        op = ">=" if include_low else ">"
        raise ValueError(f"{name} must be {op} {low}, got {value!r}")
    if high is not None and value > high:
        raise ValueError(f"{name} must be <= {high}, got {value!r}")
    return int(value) if integer else float(value)


def _check_binary(y, classes):
    """Refuse multiclass targets with scikit-learn's standard message (plus the labels)."""
    y_type = type_of_target(y, input_name="y", raise_unknown=True)
    if y_type != "binary":
        raise ValueError(
            "Only binary classification is supported. The type of the target is "
            f"{y_type}; labels found: {classes.tolist()[:6]}"
        )


class BaseOnlineAUC(ClassifierMixin, BaseEstimator):
    """Base class: validation, labels, transactional online passes.

    Not meant to be instantiated. See :class:`sosl.OAUCM` for a concrete learner.
    """

    #: names of the fitted attributes that make up the learner's state
    _state_names = ()

    # -- hooks for subclasses ----------------------------------------------------------
    def _validate_params_(self):  # pragma: no cover - overridden
        """Check hyper-parameters; raise TypeError/ValueError naming the bad one."""

    def _init_state(self, n_features):  # pragma: no cover - overridden
        """Return a dict of fresh state arrays for ``n_features`` features."""
        raise NotImplementedError

    def _run_pass(self, state, X, s, order):  # pragma: no cover - overridden
        """Update ``state`` (a dict of arrays, modified in place) by one pass."""
        raise NotImplementedError

    def _decision(self, X):  # pragma: no cover - overridden
        """Scores of validated rows ``X`` (larger means more positive)."""
        raise NotImplementedError

    # -- public API ----------------------------------------------------------------------
    def fit(self, X, y):
        """Reset the model and learn from ``(X, y)`` in one online pass.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training instances, processed in the given row order (or in a seeded
            random order if ``shuffle=True``).
        y : array-like of shape (n_samples,)
            Labels; exactly two distinct values. ``classes_[1]`` (the larger one in
            sorted order) is the positive class.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        saved = dict(self.__dict__)
        try:
            self._fit(X, y)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(saved)
            raise
        return self

    def _fit(self, X, y):
        self._validate_params_()
        X, y = validate_data(self, X, y, dtype=np.float64, order="C", reset=True,
                             ensure_min_samples=1)
        check_classification_targets(y)
        classes = np.unique(y)
        _check_binary(y, classes)
        if classes.shape[0] != 2:
            raise ValueError(
                f"{type(self).__name__} is a binary (AUC) learner and needs exactly two "
                f"classes in y; got {classes.shape[0]} class(es): {classes.tolist()[:5]}"
            )
        state = self._init_state(X.shape[1])
        state["t_"] = 0
        state["n_seen_"] = 0
        self._learn(state, X, y, classes=classes)

    def partial_fit(self, X, y, classes=None):
        """Continue the online pass with the samples ``(X, y)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            New instances, processed in the given row order.
        y : array-like of shape (n_samples,)
            Their labels, a subset of ``classes_``.
        classes : array-like of shape (2,), default=None
            Both labels. Required on the first call unless ``y`` already holds two
            distinct labels; if given later it must equal ``classes_``.

        Returns
        -------
        self : object
            The updated estimator.
        """
        saved = dict(self.__dict__)
        try:
            self._partial_fit(X, y, classes)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(saved)
            raise
        return self

    def _partial_fit(self, X, y, classes):
        first = not hasattr(self, "classes_")
        if first:
            self._validate_params_()
        X, y = self._validate_batch(X, y, reset=first)
        if first:
            if classes is None:
                classes = np.unique(y)
                _check_binary(y, classes)
                if classes.shape[0] != 2:
                    raise ValueError(
                        "classes=[negative_label, positive_label] must be passed on the first "
                        f"call to partial_fit unless y holds both classes; y holds {classes.tolist()}"
                    )
            classes = np.unique(np.asarray(classes))
            if classes.shape[0] != 2:
                raise ValueError(f"classes must hold exactly two labels, got {classes.tolist()}")
            self._check_known(y, classes)
            state = self._init_state(X.shape[1])
            state["t_"] = 0
            state["n_seen_"] = 0
            self._learn(state, X, y, classes=classes)
            return
        if classes is not None and not np.array_equal(np.unique(np.asarray(classes)), self.classes_):
            raise ValueError(f"classes={list(classes)} differs from classes_={self.classes_.tolist()} "
                             "of the earlier partial_fit calls")
        self._learn(self._copy_state(), X, y)

    def decision_function(self, X):
        """Score of each row: larger means more likely positive (``classes_[1]``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,)
        """
        check_is_fitted(self, "classes_")
        X = validate_data(self, X, dtype=np.float64, order="C", reset=False)
        return self._decision(X)

    def predict(self, X):
        """Predicted labels: ``classes_[1]`` where the decision function is positive.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        scores = self.decision_function(X)
        return self.classes_[(scores > 0).astype(np.intp)]

    # -- internals ---------------------------------------------------------------------------
    def _validate_batch(self, X, y, reset):
        """Validate a batch; cheap path for float64 C-contiguous arrays after the first call."""
        if (not reset and type(X) is np.ndarray and X.dtype == np.float64 and X.ndim == 2
                and X.flags.c_contiguous and X.shape[0] > 0
                and X.shape[1] == self.n_features_in_
                and type(y) is np.ndarray and y.ndim == 1 and y.shape[0] == X.shape[0]):
            if not np.isfinite(X).all():
                raise ValueError("Input X contains NaN or infinity.")
            return X, y
        X, y = validate_data(self, X, y, dtype=np.float64, order="C", reset=reset,
                             ensure_min_samples=1)
        check_classification_targets(y)
        return X, y

    @staticmethod
    def _check_known(y, classes):
        unknown = np.setdiff1d(np.unique(y), classes)
        if unknown.size:
            raise ValueError(f"y holds label(s) {unknown.tolist()[:5]} not in classes "
                             f"{np.asarray(classes).tolist()}")

    def _copy_state(self):
        state = {}
        for name in self._state_names + ("t_", "n_seen_"):
            value = getattr(self, name)
            state[name] = value.copy() if isinstance(value, np.ndarray) else value
        return state

    def _order(self, n):
        if getattr(self, "shuffle", False):
            rng = check_random_state(getattr(self, "random_state", None))
            return rng.permutation(n).astype(np.intp)
        return np.arange(n, dtype=np.intp)

    def _learn(self, state, X, y, classes=None):
        """Run one pass on ``state`` and commit it to ``self`` if it stays finite."""
        classes = self.classes_ if classes is None else classes
        if y.shape[0] == 1:
            if y[0] == classes[1]:
                s = np.ones(1)
            elif y[0] == classes[0]:
                s = -np.ones(1)
            else:
                self._check_known(y, classes)
        else:
            self._check_known(y, classes)
            s = np.where(y == classes[1], 1.0, -1.0)
        self._run_pass(state, X, s, self._order(X.shape[0]))
        state["n_seen_"] += X.shape[0]
        for name, value in state.items():
            if isinstance(value, np.ndarray) and value.dtype.kind == "f" and not np.isfinite(value).all():
                raise FloatingPointError(
                    f"{type(self).__name__}: the state '{name}' became non-finite during the pass "
                    "(the step size is probably too large for this data; try a smaller eta or a "
                    "larger lam, or scale the features). The model was left unchanged."
                )
        self.classes_ = classes
        for name, value in state.items():
            setattr(self, name, value)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags
