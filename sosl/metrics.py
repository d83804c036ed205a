"""Exact ranking metrics for binary scores: AUC, partial AUC, average precision.

Batch functions, equal to scikit-learn's (ties handled as it does, ``sample_weight`` too):

* :func:`auc` -- ``roc_auc_score``, O(n log n).
* :func:`partial_auc` -- ``roc_auc_score(max_fpr=...)`` (McClish-standardized), O(n log n).
* :func:`average_precision` -- ``average_precision_score``, O(n log n).
* :func:`two_way_partial_auc` -- two-way partial AUC (TPR >= min_tpr, FPR <= max_fpr),
  O(n log n); :class:`RollingTwoWayPartialAUC` the same over the last ``window`` pairs.

Streaming metrics, exact after every ``update(y_true, y_score)`` (the argument order of
river and scikit-learn):

* :class:`StreamingAUC` -- AUC (or partial AUC with ``max_fpr=``) of every pair seen;
  update in expected O(log n).
* :class:`RollingAUC` -- the same over the last ``window`` pairs (prequential AUC).
* :class:`StreamingAveragePrecision`, :class:`RollingAveragePrecision` -- average precision
  of every pair seen / of the last ``window`` pairs.
"""

from ._metrics_batch import (
    auc,
    average_precision,
    partial_auc,
    two_way_partial_auc,
)
from ._metrics_streaming import (
    BinnedAUC,
    RollingAUC,
    RollingAveragePrecision,
    RollingTwoWayPartialAUC,
    StreamingAUC,
    StreamingAveragePrecision,
)

__all__ = ["BinnedAUC", "RollingAUC", "RollingAveragePrecision", "RollingTwoWayPartialAUC",
           "StreamingAUC", "StreamingAveragePrecision", "auc", "average_precision",
           "partial_auc", "two_way_partial_auc"]
