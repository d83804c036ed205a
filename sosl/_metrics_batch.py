"""The exact batch ranking metrics of :mod:`sosl.metrics`: AUC, partial AUC, average
precision and two-way partial AUC of a whole sample (scikit-learn's results, ties and
``sample_weight`` handled as it does). Imported from :mod:`sosl.metrics`."""

from __future__ import annotations

import math
from numbers import Real
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:

    from numpy.typing import ArrayLike

__all__ = ["auc", "average_precision", "partial_auc", "two_way_partial_auc"]


def _binary_input(y_true, y_score, sample_weight, pos_label, need_negative=True):
    """Validate a batch; return the positive mask, the scores, the weights (or None)."""
    y_true = np.asarray(y_true).ravel()
    y_score = np.asarray(y_score)
    if y_score.dtype.kind not in "iuf":
        raise TypeError(f"y_score must hold real numbers, got an array of dtype {y_score.dtype}")
    y_score = y_score.astype(np.float64, copy=False).ravel()
    if y_true.shape[0] != y_score.shape[0]:
        raise ValueError(f"y_true has {y_true.shape[0]} entries but y_score has {y_score.shape[0]}")
    if not np.isfinite(y_score).all():
        raise ValueError("y_score contains NaN or infinity")
    w = None
    if sample_weight is not None:
        w = np.asarray(sample_weight)
        if w.dtype.kind not in "biuf":
            raise TypeError(f"sample_weight must hold real numbers, got dtype {w.dtype}")
        w = w.astype(np.float64, copy=False).ravel()
        if w.shape[0] != y_true.shape[0]:
            raise ValueError(f"y_true has {y_true.shape[0]} entries but sample_weight has "
                             f"{w.shape[0]}")
        if not np.isfinite(w).all() or (w < 0).any():
            raise ValueError("sample_weight must be finite and non-negative")
        top = w.max() if w.shape[0] else 0.0
        if top > 0.0:
            # the metrics are ratios of weight sums and of their products: scale the weights
            # by a power of two (exact) so that the largest is in [0.5, 1) and no sum or
            # product of sums overflows
            w = np.ldexp(w, -int(np.frexp(top)[1]))
    if pos_label is None:
        classes = np.unique(y_true)
        if classes.shape[0] != 2:
            raise ValueError(f"y_true must hold exactly two classes (or pass pos_label=), got "
                             f"{classes.tolist()[:5]}")
        pos_label = classes[1]
    pos = y_true == pos_label
    n_pos = pos.sum() if w is None else w[pos].sum()
    n_neg = (~pos).sum() if w is None else w[~pos].sum()
    if n_pos <= 0 or (need_negative and n_neg <= 0):
        what = "positives" if n_pos <= 0 else "negatives"
        raise ValueError(f"the metric is undefined: y_true holds no {what}"
                         + (" of non-zero weight" if w is not None else ""))
    return pos, y_score, w


def _groups(pos, score, w):
    """Weight of the positives (p) and negatives (q) at each distinct score, largest first."""
    order = np.argsort(-score, kind="stable")
    s = score[order]
    wp = pos[order].astype(np.float64)
    if w is not None:
        wp *= w[order]
        wn = w[order] - wp
    else:
        wn = 1.0 - wp
    starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
    return np.add.reduceat(wp, starts), np.add.reduceat(wn, starts)


def _check_max_fpr(max_fpr):
    if isinstance(max_fpr, bool) or not isinstance(max_fpr, Real):
        raise TypeError(f"max_fpr must be a real number in (0, 1], got {max_fpr!r}")
    if not 0.0 < max_fpr <= 1.0:  # type: ignore[operator]  # numbers.Real has no <
        raise ValueError(f"max_fpr must be in (0, 1], got {max_fpr!r}")
    return float(max_fpr)


def auc(y_true: ArrayLike, y_score: ArrayLike, *, pos_label: Any = None,
        sample_weight: ArrayLike | None = None) -> float:
    """Area under the ROC curve, exactly, in O(n log n).

    AUC = P(score of a positive > score of a negative) + P(tie) / 2 over (positive,
    negative) pairs, each pair weighted by the product of its two sample weights: the
    Mann-Whitney U / (n+ n-) without weights. Equal to ``sklearn.metrics.roc_auc_score``
    for binary labels, with or without ``sample_weight``.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary labels.
    y_score : array-like of shape (n,)
        Scores; larger means more positive.
    pos_label : object, default=None
        The positive label; by default the larger of the two labels.
    sample_weight : array-like of shape (n,), default=None
        Non-negative weights; None weighs every pair one.

    Returns
    -------
    auc : float

    Raises
    ------
    ValueError
        If the inputs differ in length, hold non-finite scores or negative weights, or
        ``y_true`` does not hold both classes (with non-zero weight).

    Examples
    --------
    >>> auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    0.75
    >>> auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8], sample_weight=[1, 0, 1, 1])
    1.0
    """
    pos, score, w = _binary_input(y_true, y_score, sample_weight, pos_label)
    p, q = _groups(pos, score, w)
    neg_below = q.sum() - np.cumsum(q)
    u = (p * (neg_below + 0.5 * q)).sum()
    return float(u / (p.sum() * q.sum()))


def partial_auc(y_true: ArrayLike, y_score: ArrayLike, max_fpr: float, *,
                sample_weight: ArrayLike | None = None, pos_label: Any = None) -> float:
    """Standardized area under the ROC curve up to a false-positive rate, in O(n log n).

    The area ``pa`` under the ROC curve (straight segments across tied scores) for
    false-positive rates in [0, ``max_fpr``], rescaled as McClish proposed so that a random
    ranking scores 0.5 and a perfect one 1:
    ``0.5 (1 + (pa - m^2 / 2) / (m - m^2 / 2))`` with m = ``max_fpr``. Equal to
    ``sklearn.metrics.roc_auc_score(y_true, y_score, max_fpr=m)``. Under heavy imbalance
    it scores only the top of the ranking, where the few positives must be found.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary labels.
    y_score : array-like of shape (n,)
        Scores; larger means more positive.
    max_fpr : float in (0, 1]
        The largest false-positive rate kept; 1 gives the AUC.
    sample_weight : array-like of shape (n,), default=None
        Non-negative weights.
    pos_label : object, default=None
        The positive label; by default the larger of the two labels.

    Returns
    -------
    pauc : float

    Raises
    ------
    ValueError
        As :func:`auc`, and if ``max_fpr`` is outside (0, 1].

    References
    ----------
    D. K. McClish. Analyzing a portion of the ROC curve. Medical Decision Making 9, 1989.

    Examples
    --------
    >>> y, s = [0, 0, 0, 0, 1, 1], [0.1, 0.2, 0.3, 0.9, 0.8, 0.4]
    >>> round(partial_auc(y, s, max_fpr=0.25), 6)  # area 0 left of the cut: worse than random
    0.428571
    >>> partial_auc(y, s, max_fpr=1.0) == auc(y, s)
    True
    """
    m = _check_max_fpr(max_fpr)
    pos, score, w = _binary_input(y_true, y_score, sample_weight, pos_label)
    p, q = _groups(pos, score, w)
    n_pos, n_neg = p.sum(), q.sum()
    a = np.cumsum(p) - p                               # positives above each group
    b = np.cumsum(q) - q                               # negatives above each group
    width = np.clip(m * n_neg - b, 0.0, q)             # the group's negatives left of the cut
    has_neg = q > 0
    area2 = (width * (2 * a + p * width / np.where(has_neg, q, 1.0)))[has_neg].sum()
    pa = area2 / (2.0 * n_pos * n_neg)
    return float(0.5 * (1 + (pa - m * m / 2) / (m - m * m / 2)))


def average_precision(y_true: ArrayLike, y_score: ArrayLike, *,
                      sample_weight: ArrayLike | None = None, pos_label: Any = None) -> float:
    """Average precision: the precision at each positive's threshold, averaged, O(n log n).

    ``AP = sum_k (R_k - R_{k-1}) P_k`` over the distinct scores in decreasing order, with
    R_k and P_k the recall and the precision of the rule ``score >= k``-th score (tied
    scores enter together). Equal to ``sklearn.metrics.average_precision_score`` (no
    interpolation), with or without ``sample_weight``. A random ranking scores the
    positive fraction, so AP shows what AUC hides under heavy imbalance.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary labels.
    y_score : array-like of shape (n,)
        Scores; larger means more positive.
    sample_weight : array-like of shape (n,), default=None
        Non-negative weights.
    pos_label : object, default=None
        The positive label; by default the larger of the two labels. When given, ``y_true``
        may hold positives only (AP = 1).

    Returns
    -------
    ap : float

    Raises
    ------
    ValueError
        If the inputs differ in length, hold non-finite scores or negative weights, or
        ``y_true`` holds no positive (of non-zero weight).

    Examples
    --------
    >>> average_precision([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])  # (1/2) 1 + (1/2) 2/3
    0.8333333333333333
    """
    pos, score, w = _binary_input(y_true, y_score, sample_weight, pos_label,
                                  need_negative=False)
    p, q = _groups(pos, score, w)
    tp, seen = np.cumsum(p), np.cumsum(p + q)
    has_pos = p > 0
    return float((p[has_pos] * (tp[has_pos] / seen[has_pos])).sum() / p.sum())


def two_way_partial_auc(y_true: ArrayLike, y_score: ArrayLike, *, min_tpr: float,
                        max_fpr: float, sample_weight: ArrayLike | None = None,
                        pos_label: Any = None) -> float:
    """Two-way partial AUC (TPR >= ``min_tpr``, FPR <= ``max_fpr``), exactly, in O(n log n).

    The mean, over pairs of one of the ``ceil(max_fpr n-)`` highest-scored negatives and one
    of the ``ceil((1 - min_tpr) n+)`` lowest-scored positives, of
    ``1[s+ > s-] + 1/2 1[s+ = s-]`` (Yang et al., ICML 2021; not standardized: a random
    ranking scores about 0.5 only if the two kept parts overlap as the whole classes do,
    a perfect one 1). ``min_tpr=0, max_fpr=1`` gives the AUC.

    Tie rule at the cuts: the kept rows are the first ones in score order, ties broken by
    position in the input (earlier rows first). Without weights the value does not depend
    on that choice (tied rows have the same score); with weights the kept part is the
    shortest run from the top of the negatives (the bottom of the positives) whose weight
    reaches ``max_fpr`` (``1 - min_tpr``) of the class's weight, and the rows of each pair
    weigh by the product of their weights, so ties at a cut are broken by position there.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary labels.
    y_score : array-like of shape (n,)
        Scores; larger means more positive.
    min_tpr : float in [0, 1)
        The lowest true-positive rate kept (alpha).
    max_fpr : float in (0, 1]
        The largest false-positive rate kept (beta).
    sample_weight : array-like of shape (n,), default=None
        Non-negative weights.
    pos_label : object, default=None
        The positive label; by default the larger of the two labels.

    Returns
    -------
    tpauc : float

    Raises
    ------
    ValueError
        As :func:`auc`, and if ``min_tpr`` is outside [0, 1) or ``max_fpr`` outside (0, 1].

    Examples
    --------
    >>> y, s = [0, 0, 0, 0, 1, 1], [0.1, 0.2, 0.3, 0.9, 0.8, 0.4]
    >>> two_way_partial_auc(y, s, min_tpr=0.5, max_fpr=0.25)   # the pair (0.4, 0.9)
    0.0
    >>> two_way_partial_auc(y, s, min_tpr=0.0, max_fpr=1.0) == auc(y, s)
    True
    """
    m = _check_max_fpr(max_fpr)
    if isinstance(min_tpr, bool) or not isinstance(min_tpr, Real):
        raise TypeError(f"min_tpr must be a real number in [0, 1), got {min_tpr!r}")
    if not 0.0 <= min_tpr < 1.0:
        raise ValueError(f"min_tpr must be in [0, 1), got {min_tpr!r}")
    pos, score, w = _binary_input(y_true, y_score, sample_weight, pos_label)
    weight = np.ones(score.shape[0]) if w is None else w
    neg_rows = np.flatnonzero(~pos)
    pos_rows = np.flatnonzero(pos)
    neg_rows = neg_rows[np.argsort(-score[neg_rows], kind="stable")]   # highest first
    pos_rows = pos_rows[np.argsort(score[pos_rows], kind="stable")]    # lowest first
    keep = []
    for rows, share in ((neg_rows, m), (pos_rows, 1.0 - float(min_tpr))):
        wr = weight[rows]
        if w is None:
            k = math.ceil(share * rows.shape[0] - 1e-12 * rows.shape[0])
        else:       # the shortest run whose weight reaches the share (weight before < share)
            before = np.cumsum(wr) - wr
            k = int(np.count_nonzero(before < share * wr.sum() * (1 - 1e-12)))
        keep.append(rows[:max(k, 1)])
    rows = np.concatenate(keep)
    return auc(pos[rows], score[rows], pos_label=True,
               sample_weight=None if w is None else w[rows])
