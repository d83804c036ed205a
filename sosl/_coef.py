"""``coef_`` of shape (1, n_features) over the 1-D weight vector ``w_`` of a linear learner.

scikit-learn's binary linear classifiers expose ``coef_`` as a (1, n_features) array and
``intercept_`` as a (1,) array. The typed passes of sosl's linear learners update a 1-D
weight vector in place, and the transactions (rollback on failure), :mod:`sosl.state` and
the merges know it as ``w_``. :class:`LinearCoef` joins the two: ``coef_`` is a
(1, n_features) view of ``w_`` (so ``coef_[0]`` holds the very numbers of ``w_``, and a
write into ``coef_`` writes the weights), and assigning ``coef_`` copies an array of shape
(1, n_features) or (n_features,) into ``w_``. SketchedOAUCM, whose weights are computed
from a compact state, defines its own read-only ``coef_``.
"""

import numpy as np
from sklearn.exceptions import NotFittedError

from ._base import _model_lock

__all__ = ["LinearCoef"]


class LinearCoef:
    """Mixin (before :class:`sosl._base.BaseOnlineAUC`): ``coef_`` as a (1, p) view of ``w_``.

    Loading a pickle written before the change (``coef_`` then a 1-D state array, a
    linear baseline's ``intercept_`` a float) moves the arrays into the new layout.
    """

    @property
    def coef_(self):
        """Weights of shape (1, n_features): a view of ``w_`` (writes go through).

        Assigning an array of shape (1, n_features) or (n_features,) of finite numbers
        copies it into the weights the next round starts from (state otherwise as it was);
        any other shape or value raises and leaves the model unchanged.
        """
        w = self.__dict__.get("w_")
        if w is None:
            raise NotFittedError(f"This {type(self).__name__} instance is not fitted yet: "
                                 "coef_ exists after fit, partial_fit or learn_one.")
        return w[None, :]

    @coef_.setter
    def coef_(self, value):
        with _model_lock(self.__dict__):
            w = self.__dict__.get("w_")
            name = type(self).__name__
            if w is None:
                raise NotFittedError(f"This {name} instance is not fitted yet: coef_ can only "
                                     "replace the weights of a fitted model (fit or "
                                     "partial_fit first).")
            v = np.asarray(value)
            p = w.shape[0]
            if v.dtype.kind not in "iuf":
                raise TypeError(f"{name}.coef_ must hold real numbers, got dtype {v.dtype}")
            if v.shape not in ((1, p), (p,)):
                raise ValueError(f"{name}.coef_ must have shape (1, {p}) or ({p},) (the "
                                 f"model has {p} features), got shape {v.shape}")
            v = v.astype(np.float64, copy=False).reshape(p)
            if not np.isfinite(v).all():
                raise ValueError(f"{name}.coef_ must be finite: the value holds NaN or "
                                 "infinity")
            w[...] = v

    def __setstate__(self, state):
        if "coef_" in state:                   # pickled when coef_ was the 1-D state
            state = dict(state)
            state["w_"] = np.ascontiguousarray(state.pop("coef_"), dtype=np.float64).ravel()
            b = state.get("intercept_")
            if isinstance(b, float):          # a linear baseline's stored intercept
                state["intercept_"] = np.array([b])
        super().__setstate__(state)  # type: ignore[misc]  # a mixin: the learner's base class has it
