"""Exact AUC (Wilcoxon-Mann-Whitney statistic) with ties counted one half."""

import numpy as np
from scipy.stats import rankdata

__all__ = ["auc"]


def auc(y_true, y_score, pos_label=None):
    """Area under the ROC curve, exactly, in O(n log n).

    AUC = P(score of a positive > score of a negative) + P(tie) / 2, computed from the
    mid-ranks of the scores (Mann-Whitney U / (n+ n-)). Equal to
    ``sklearn.metrics.roc_auc_score`` for binary labels.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary labels.
    y_score : array-like of shape (n,)
        Scores; larger means more positive.
    pos_label : object, default=None
        The positive label; by default the larger of the two labels.

    Returns
    -------
    auc : float

    Raises
    ------
    ValueError
        If the inputs differ in length, hold non-finite scores, or ``y_true`` does not
        hold exactly two classes.

    Examples
    --------
    >>> auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    0.75
    """
    y_true = np.asarray(y_true).ravel()
    y_score = np.asarray(y_score, dtype=np.float64).ravel()
    if y_true.shape[0] != y_score.shape[0]:
        raise ValueError(f"y_true has {y_true.shape[0]} entries but y_score has {y_score.shape[0]}")
    if not np.isfinite(y_score).all():
        raise ValueError("y_score contains NaN or infinity")
    classes = np.unique(y_true)
    if pos_label is None:
        if classes.shape[0] != 2:
            raise ValueError(f"AUC needs exactly two classes in y_true, got {classes.tolist()[:5]}")
        pos_label = classes[1]
    pos = y_true == pos_label
    n_pos = int(pos.sum())
    n_neg = y_true.shape[0] - n_pos
    if n_pos == 0 or n_neg == 0:
        raise ValueError("AUC is undefined when y_true holds only one class")
    ranks = rankdata(y_score)  # mid-ranks: a tie contributes one half
    u = ranks[pos].sum() - n_pos * (n_pos + 1) / 2.0
    return float(u / (n_pos * n_neg))
