"""Exact ranking metrics as river metrics: ROC AUC, partial ROC AUC, average precision.

river's own ``metrics.ROCAUC`` approximates the ROC curve with ``n_thresholds`` fixed
cut-offs on the probability (10 by default), which is coarse when the positives are rare and
their probabilities bunch near 0. The classes here are ``river.metrics.base.BinaryMetric``
subclasses over the exact streaming metrics of :mod:`sosl.metrics` (an order-statistics
treap in Cython), so ``river.evaluate.progressive_val_score`` reports the number
scikit-learn would give on the (label, probability) pairs collected along the stream:

* :class:`ExactROCAUC` -- ``roc_auc_score``;
* :class:`ExactPartialROCAUC` -- ``roc_auc_score(max_fpr=...)`` (McClish-standardized);
* :class:`ExactAveragePrecision` -- ``average_precision_score``.

Each takes ``update(y_true, y_pred)`` as river does (``y_pred`` a probability dict, as
``predict_proba_one`` returns, or a number) and ``revert``, so ``river.utils.Rolling``
turns it into an exact metric over a sliding window.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from river import base as river_base
from river.metrics.base import BinaryMetric

from .metrics import StreamingAUC, StreamingAveragePrecision

__all__ = ["ExactAveragePrecision", "ExactPartialROCAUC", "ExactROCAUC"]


class _ExactRankingMetric(BinaryMetric):
    """Shared update/revert of the exact river metrics; the subclass sets ``_make()``."""

    _make: Callable[[], Any]         # the subclass's method: a new sosl metric

    def __init__(self, pos_val: Any = True) -> None:
        # BinaryMetric.__init__ would allocate a confusion matrix these metrics never use
        self.pos_val = pos_val
        self._metric = self._make()

    def _score(self, y_pred):
        if isinstance(y_pred, dict):
            return y_pred.get(self.pos_val, 0.0)
        return float(y_pred)

    def _check_weight(self, w):
        if w != 1.0:
            raise ValueError(f"{type(self).__name__} counts every pair once: sample weights "
                             f"are not supported (got w={w!r})")

    def update(self, y_true: Any, y_pred: dict | float, w: float = 1.0) -> None:
        """Add one pair: the label and the probability (dict) or score predicted for it."""
        self._check_weight(w)
        self._metric.update(y_true == self.pos_val, self._score(y_pred))

    def revert(self, y_true: Any, y_pred: dict | float, w: float = 1.0) -> None:
        """Remove a pair added before; ValueError if it is not held."""
        self._check_weight(w)
        self._metric.revert(y_true == self.pos_val, self._score(y_pred))

    def get(self) -> float:
        """The metric of the pairs held; NaN while it is undefined."""
        return self._metric.get()

    @property
    def requires_labels(self) -> bool:
        return False

    @property
    def works_with_weights(self) -> bool:
        return False

    def works_with(self, model: Any) -> bool:
        return (super().works_with(model) or isinstance(model, river_base.AnomalyDetector)
                or isinstance(model, river_base.AnomalyFilter))


class ExactROCAUC(_ExactRankingMetric):
    """Exact area under the ROC curve of the stream, as a river metric.

    Equal to ``sklearn.metrics.roc_auc_score`` on the pairs seen (ties count one half),
    where river's ``metrics.ROCAUC`` approximates it with a few probability thresholds.
    Built on :class:`sosl.metrics.StreamingAUC`: ``update`` and ``revert`` are expected
    O(log n), ``get`` is O(1).

    Parameters
    ----------
    pos_val : object, default=True
        The label of the positive class (also the key of its probability in ``y_pred``).

    Examples
    --------
    >>> from sosl._river_metrics import ExactROCAUC
    >>> metric = ExactROCAUC()
    >>> for y, p in [(False, 0.1), (False, 0.4), (True, 0.35), (True, 0.8)]:
    ...     metric.update(y, {True: p, False: 1 - p})
    >>> metric.get()
    0.75
    """

    def _make(self):
        return StreamingAUC()


class ExactPartialROCAUC(_ExactRankingMetric):
    """Exact standardized partial ROC AUC up to ``max_fpr``, as a river metric.

    Equal to ``sklearn.metrics.roc_auc_score(y_true, y_score, max_fpr=max_fpr)`` on the
    pairs seen (McClish's standardization: 0.5 for a random ranking, 1 for a perfect one).
    Built on :class:`sosl.metrics.StreamingAUC` with ``max_fpr``: ``update``,
    ``revert`` and ``get`` are expected O(log n).

    Parameters
    ----------
    max_fpr : float in (0, 1]
        The largest false-positive rate kept.
    pos_val : object, default=True
        The label of the positive class.

    Examples
    --------
    >>> from sosl._river_metrics import ExactPartialROCAUC
    >>> metric = ExactPartialROCAUC(max_fpr=0.5)
    >>> for y, p in [(False, 0.1), (False, 0.2), (False, 0.3), (False, 0.9), (True, 0.8)]:
    ...     metric.update(y, p)
    >>> round(metric.get(), 6)  # area 1/4 left of fpr 1/2: (1 + (1/4 - 1/8) / (1/2 - 1/8)) / 2
    0.666667
    """

    def __init__(self, max_fpr: float, pos_val: Any = True) -> None:
        self.max_fpr = max_fpr
        super().__init__(pos_val=pos_val)

    def _make(self):
        return StreamingAUC(max_fpr=self.max_fpr)


class ExactAveragePrecision(_ExactRankingMetric):
    """Exact average precision of the stream, as a river metric.

    Equal to ``sklearn.metrics.average_precision_score`` on the pairs seen. Built on
    :class:`sosl.metrics.StreamingAveragePrecision`: ``update`` and ``revert`` are expected
    O(log d), ``get`` is one O(d) walk over the d distinct scores (cached until the next
    update).

    Parameters
    ----------
    pos_val : object, default=True
        The label of the positive class.

    Examples
    --------
    >>> from sosl._river_metrics import ExactAveragePrecision
    >>> metric = ExactAveragePrecision()
    >>> for y, p in [(False, 0.1), (False, 0.4), (True, 0.35), (True, 0.8)]:
    ...     metric.update(y, {True: p, False: 1 - p})
    >>> metric.get()
    0.8333333333333333
    """

    def _make(self):
        return StreamingAveragePrecision()
