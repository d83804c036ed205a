"""Exact AUC (Wilcoxon-Mann-Whitney statistic) with ties counted one half.

* :func:`auc` -- the AUC of a batch of scores, O(n log n).
* :class:`StreamingAUC` -- the exact AUC of every pair seen, updated in expected O(log n).
* :class:`RollingAUC` -- the exact AUC of the last ``window`` pairs (prequential AUC),
  updated in expected O(log window).
"""

import math
from numbers import Integral, Real

import numpy as np
from scipy.stats import rankdata

from ._core import _auc

__all__ = ["RollingAUC", "StreamingAUC", "auc"]


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


def _check_score(score):
    if isinstance(score, bool) or not isinstance(score, Real):
        raise TypeError(f"score must be a real number, got {score!r} of type "
                        f"{type(score).__name__}")
    x = float(score)
    if not math.isfinite(x):
        raise ValueError(f"score must be finite, got {score!r}")
    return x


class _AUCMetric:
    """Shared label handling and reporting of the streaming AUC metrics."""

    def _positive(self, label):
        if label is True or label is False:
            return label if self.pos_label is None else label == self.pos_label
        if np.ndim(label) != 0:
            raise TypeError(f"label must be a scalar, got an array of shape {np.shape(label)}")
        if self.pos_label is not None:
            return bool(label == self.pos_label)
        if label == 1:
            return True
        if label == 0 or label == -1:
            return False
        raise ValueError(
            f"label {label!r} is not a positive flag (True/1, or False/0/-1 for the negative "
            "class); pass pos_label= to name the positive class"
        )

    def update(self, score, label):
        """Add one (score, label) pair.

        Parameters
        ----------
        score : float
            Finite score; larger means more positive.
        label : object
            With ``pos_label=None``, True/1 for a positive and False/0/-1 for a negative;
            otherwise any label, positive when equal to ``pos_label``.

        Returns
        -------
        self : object
        """
        if type(score) is not float or score - score != 0.0:  # fast path: a finite float
            score = _check_score(score)
        self._core.add(score, self._positive(label))
        return self

    def update_many(self, scores, labels):
        """Add the pairs ``(scores[i], labels[i])`` in order (one vectorized validation).

        Parameters
        ----------
        scores : array-like of shape (n,)
        labels : array-like of shape (n,)

        Returns
        -------
        self : object
        """
        x = np.asarray(scores)
        if x.dtype.kind not in "biuf":
            raise TypeError(f"scores must be real numbers, got an array of dtype {x.dtype}")
        x = np.ascontiguousarray(x, dtype=np.float64).ravel()
        lab = np.asarray(labels).ravel()
        if x.shape[0] != lab.shape[0]:
            raise ValueError(f"scores has {x.shape[0]} entries but labels has {lab.shape[0]}")
        if not np.isfinite(x).all():
            raise ValueError("scores contain NaN or infinity")
        if self.pos_label is not None:
            pos = lab == self.pos_label
        else:
            pos = lab == 1
            bad = ~(pos | (lab == 0) | (lab == -1))
            if bad.any():
                raise ValueError(
                    f"label {lab[bad][0]!r} is not a positive flag (True/1, or False/0/-1 for "
                    "the negative class); pass pos_label= to name the positive class"
                )
        self._core.add_many(x, np.ascontiguousarray(pos, dtype=np.uint8))
        return self

    def get(self):
        """The current AUC; NaN while the held pairs lack one of the two classes.

        Returns
        -------
        auc : float
        """
        return self._core.get()

    @property
    def n_pos(self):
        """Number of positives held."""
        return self._core.n_pos

    @property
    def n_neg(self):
        """Number of negatives held."""
        return self._core.n_neg

    def __repr__(self):
        return f"{type(self).__name__}: {self.get():.6f}"


class StreamingAUC(_AUCMetric):
    """Exact AUC of every (score, label) pair seen, updated in expected O(log n).

    The AUC is the Wilcoxon-Mann-Whitney statistic: the fraction of (positive, negative)
    pairs ranked correctly, a tie counting one half, exactly as
    ``sklearn.metrics.roc_auc_score`` computes it. Each update adds the pairs the new
    element forms with the opposite class held so far, counted in an order-statistics
    treap over the distinct scores (:mod:`sosl._core._auc`); the pair count is an exact
    integer, so ``get()`` equals ``roc_auc_score`` on the prefix up to rounding of one
    division. Memory grows with the number of distinct scores.

    Parameters
    ----------
    pos_label : object, default=None
        The positive class. None takes labels as a positive flag: True/1 positive,
        False/0/-1 negative (any other label raises ValueError). Otherwise a label is
        positive when it equals ``pos_label`` and negative for every other value.

    Attributes
    ----------
    n_pos, n_neg : int
        Positives and negatives seen.

    Notes
    -----
    ``get()`` returns NaN while only one class has been seen: the AUC is undefined there
    (``roc_auc_score`` raises).

    References
    ----------
    N. Tatti. Maintaining AUC and H-measure over time. Machine Learning 110, 2021 (exact
    AUC under insertions and deletions in logarithmic time with a balanced search tree).

    Examples
    --------
    >>> from sosl.metrics import StreamingAUC
    >>> m = StreamingAUC()
    >>> for score, label in [(0.1, 0), (0.4, 0), (0.35, 1), (0.8, 1)]:
    ...     _ = m.update(score, label)
    >>> m.get()
    0.75
    """

    def __init__(self, pos_label=None):
        self.pos_label = pos_label
        self._core = _auc.AUCCounter()


class RollingAUC(_AUCMetric):
    """Exact AUC of the last ``window`` (score, label) pairs, updated in O(log window).

    The prequential AUC of Brzezinski and Stefanowski: the AUC over a sliding window of
    the most recent pairs, which follows a classifier through concept drift. Equal to
    ``sklearn.metrics.roc_auc_score`` on every window (ties count one half).

    Parameters
    ----------
    window : int
        Number of most recent pairs held (>= 1).
    pos_label : object, default=None
        As in :class:`StreamingAUC`.

    Attributes
    ----------
    n_pos, n_neg : int
        Positives and negatives in the window.

    Notes
    -----
    Brzezinski and Stefanowski keep the window's scores in a sorted tree and recompute
    the AUC by one in-order traversal, O(window) per evaluation. Here the number of
    correctly ranked pairs is kept up to date instead: the arriving element adds, and the
    element leaving the window subtracts, its pairs with the opposite class, each counted
    in an expected O(log window) walk of an order-statistics treap, and ``get()`` is O(1).
    ``get()`` returns NaN while the window holds one class only.

    References
    ----------
    D. Brzezinski, J. Stefanowski. Prequential AUC for classifier evaluation and drift
    detection in evolving data streams. New Frontiers in Mining Complex Patterns (NFMCP
    2014), LNCS 8983, 2015. D. Brzezinski, J. Stefanowski. Prequential AUC: properties of
    the area under the ROC curve for data streams with concept drift. Knowledge and
    Information Systems 52, 2017.

    Examples
    --------
    >>> from sosl.metrics import RollingAUC
    >>> m = RollingAUC(window=3)
    >>> for score, label in [(0.9, 1), (0.1, 0), (0.4, 0), (0.35, 1)]:
    ...     _ = m.update(score, label)
    >>> m.get()  # the last three pairs: (0.1, 0), (0.4, 0), (0.35, 1)
    0.5
    """

    def __init__(self, window, pos_label=None):
        if isinstance(window, bool) or not isinstance(window, Integral):
            raise TypeError(f"window must be an integer, got {window!r} of type "
                            f"{type(window).__name__}")
        if window < 1:
            raise ValueError(f"window must be >= 1, got {window}")
        self.window = int(window)
        self.pos_label = pos_label
        self._core = _auc.RollingAUCCounter(self.window)
