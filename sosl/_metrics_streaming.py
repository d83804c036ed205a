"""The streaming ranking metrics of :mod:`sosl.metrics`: exact AUC, partial AUC and
average precision after every ``update(y_true, y_score)``, of every pair seen or of the
last ``window`` pairs, and the constant-memory binned AUC. Imported from
:mod:`sosl.metrics`."""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import TYPE_CHECKING, Any

import numpy as np

from ._core import _auc

if TYPE_CHECKING:
    from collections.abc import Callable

    from numpy.typing import ArrayLike
    from typing_extensions import Self

from ._metrics_batch import _check_max_fpr, two_way_partial_auc

__all__ = ["BinnedAUC", "RollingAUC", "RollingAveragePrecision", "RollingTwoWayPartialAUC",
           "StreamingAUC", "StreamingAveragePrecision"]

_ORDER = "the arguments are update(y_true, y_score), as in river and scikit-learn"


def _check_score(score):
    if isinstance(score, bool) or not isinstance(score, Real):
        raise TypeError(f"y_score must be a real number, got {score!r} of type "
                        f"{type(score).__name__} ({_ORDER})")
    x = float(score)
    if not math.isfinite(x):
        raise ValueError(f"y_score must be finite, got {score!r}")
    return x


def _check_window(window):
    if isinstance(window, bool) or not isinstance(window, Integral):
        raise TypeError(f"window must be an integer, got {window!r} of type "
                        f"{type(window).__name__}")
    if window < 1:
        raise ValueError(f"window must be >= 1, got {window}")
    return int(window)


def _not_a_flag(label):
    return ValueError(
        f"y_true={label!r} is not a class label (True/1 positive, False/0/-1 negative; "
        f"{_ORDER}); pass pos_label= to name another positive class")


class _RankingMetric:
    """Label handling, validation and caching shared by the streaming metrics.

    A subclass sets ``self._core`` (an ``AUCCounter`` or ``RollingAUCCounter``) and
    ``_compute()``, the metric of the held pairs read from the core.
    """

    _rolling = False
    _core: Any
    _value: Any
    pos_label: Any
    _compute: Callable[[], float]

    def _positive(self, label):
        if label is True or label is False:
            return label if self.pos_label is None else label == self.pos_label
        if np.ndim(label) != 0:
            raise TypeError(f"y_true must be a scalar label, got an array of shape "
                            f"{np.shape(label)} ({_ORDER})")
        if self.pos_label is not None:
            if label == self.pos_label:
                return True
            if isinstance(label, (float, np.floating)) and not float(label).is_integer():
                raise _not_a_flag(label)
            return False
        if label == 1:
            return True
        if label == 0 or label == -1:
            return False
        raise _not_a_flag(label)

    def update(self, y_true: Any, y_score: float) -> Self:
        """Add one (label, score) pair.

        Parameters
        ----------
        y_true : object
            With ``pos_label=None``, True/1 for a positive and False/0/-1 for a negative;
            otherwise any label, positive when equal to ``pos_label``. A non-integral float
            is refused: it is a score passed first.
        y_score : float
            Finite score; larger means more positive.

        Returns
        -------
        self : object

        Raises
        ------
        ValueError, TypeError
            On a label or score as described above; the metric is left unchanged.
        """
        if type(y_score) is not float or y_score - y_score != 0.0:  # fast path: a finite float
            y_score = _check_score(y_score)
        positive = self._positive(y_true)
        self._core.add(y_score, positive)
        self._value = None
        return self

    def revert(self, y_true: Any, y_score: float) -> Self:
        """Remove one pair added before (river's ``revert``); expected O(log n).

        Parameters
        ----------
        y_true : object
            The label it was added with.
        y_score : float
            The score it was added with.

        Returns
        -------
        self : object

        Raises
        ------
        ValueError
            If no such pair is held (the metric is left unchanged).
        TypeError
            On a rolling metric, which drops its oldest pair itself.
        """
        if self._rolling:
            raise TypeError(f"{type(self).__name__} drops its oldest pair itself and has no "
                            "revert; use the streaming metric under river.utils.Rolling")
        y_score = _check_score(y_score)
        positive = self._positive(y_true)
        try:
            self._core.remove(y_score, positive)
        except KeyError:
            raise ValueError(f"no pair (y_true={y_true!r}, y_score={y_score!r}) is held to "
                             "revert") from None
        self._value = None
        return self

    def update_many(self, y_true: ArrayLike, y_score: ArrayLike) -> Self:
        """Add the pairs ``(y_true[i], y_score[i])`` in order (one vectorized validation).

        Parameters
        ----------
        y_true : array-like of shape (n,)
        y_score : array-like of shape (n,)

        Returns
        -------
        self : object
        """
        x = np.asarray(y_score)
        if x.dtype.kind not in "iuf":
            raise TypeError(f"y_score must hold real numbers, got an array of dtype {x.dtype} "
                            f"({_ORDER})")
        x = np.ascontiguousarray(x, dtype=np.float64).ravel()
        lab = np.asarray(y_true).ravel()
        if x.shape[0] != lab.shape[0]:
            raise ValueError(f"y_true has {lab.shape[0]} entries but y_score has {x.shape[0]}")
        if not np.isfinite(x).all():
            raise ValueError("y_score contains NaN or infinity")
        if self.pos_label is not None:
            pos = lab == self.pos_label
            if lab.dtype.kind == "f":
                bad = ~pos & (lab != np.round(lab))
                if bad.any():
                    raise _not_a_flag(lab[bad][0])
        else:
            pos = lab == 1
            bad = ~(pos | (lab == 0) | (lab == -1))
            if bad.any():
                raise _not_a_flag(lab[bad][0])
        self._core.add_many(x, np.ascontiguousarray(pos, dtype=np.uint8))
        self._value = None
        return self

    def get(self) -> float:
        """The current value; NaN while it is undefined (see the class notes).

        Returns
        -------
        value : float
        """
        if self._value is None:
            self._value = self._compute()
        return self._value

    @property
    def n_pos(self) -> int:
        """Number of positives held."""
        return self._core.n_pos

    @property
    def n_neg(self) -> int:
        """Number of negatives held."""
        return self._core.n_neg

    def __repr__(self):
        return f"{type(self).__name__}: {self.get():.6f}"


class _AUCFamily(_RankingMetric):
    def _init_auc(self, pos_label, max_fpr):
        self.pos_label = pos_label
        self.max_fpr = None if max_fpr is None else _check_max_fpr(max_fpr)
        self._value = None

    def _compute(self):
        if self.max_fpr is None:
            return self._core.get()
        return self._core.partial_auc(self.max_fpr)


class StreamingAUC(_AUCFamily):
    """Exact AUC (or partial AUC) of every (label, score) pair seen; update O(log n).

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
    max_fpr : float in (0, 1], default=None
        If given, ``get()`` is the McClish-standardized partial AUC up to this
        false-positive rate, equal to ``roc_auc_score(y, s, max_fpr=max_fpr)``
        (see :func:`partial_auc`).

    Attributes
    ----------
    n_pos, n_neg : int
        Positives and negatives seen.

    Notes
    -----
    ``update`` is an expected O(log d) treap walk (d distinct scores held). ``get()`` is
    O(1) for the AUC; with ``max_fpr`` it is one expected O(log d) descent (each treap node
    also keeps the Mann-Whitney statistic of its subtree, which gives the area left of the
    cut), cached until the next update. ``get()`` returns NaN while only one class has been
    seen: the AUC is undefined there (``roc_auc_score`` raises).

    References
    ----------
    N. Tatti. Maintaining AUC and H-measure over time. Machine Learning 110, 2021 (exact
    AUC under insertions and deletions in logarithmic time with a balanced search tree).

    Examples
    --------
    >>> from sosl.metrics import StreamingAUC
    >>> m = StreamingAUC()
    >>> for label, score in [(0, 0.1), (0, 0.4), (1, 0.35), (1, 0.8)]:
    ...     _ = m.update(label, score)
    >>> m.get()
    0.75
    >>> m.update(0.9, 1)  # a score passed first is refused  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: y_true=0.9 is not a class label (...update(y_true, y_score)...
    """

    def __init__(self, pos_label: Any = None, max_fpr: float | None = None) -> None:
        self._init_auc(pos_label, max_fpr)
        self._core = _auc.AUCCounter()


class RollingAUC(_AUCFamily):
    """Exact AUC (or partial AUC) of the last ``window`` (label, score) pairs; update
    O(log window).

    The prequential AUC of Brzezinski and Stefanowski: the AUC over a sliding window of
    the most recent pairs, which follows a classifier through concept drift. Equal to
    ``sklearn.metrics.roc_auc_score`` on every window (ties count one half), and with
    ``max_fpr`` to ``roc_auc_score(max_fpr=max_fpr)``.

    Parameters
    ----------
    window : int
        Number of most recent pairs held (>= 1).
    pos_label : object, default=None
        As in :class:`StreamingAUC`.
    max_fpr : float in (0, 1], default=None
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
    With ``max_fpr``, ``get()`` is one expected O(log window) descent (see
    :class:`StreamingAUC`). ``get()`` returns NaN while the window holds one class only.

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
    >>> for label, score in [(1, 0.9), (0, 0.1), (0, 0.4), (1, 0.35)]:
    ...     _ = m.update(label, score)
    >>> m.get()  # the last three pairs: (0, 0.1), (0, 0.4), (1, 0.35)
    0.5
    """

    _rolling = True

    def __init__(self, window: int, pos_label: Any = None, max_fpr: float | None = None
                 ) -> None:
        self.window = _check_window(window)
        self._init_auc(pos_label, max_fpr)
        self._core = _auc.RollingAUCCounter(self.window)


class StreamingAveragePrecision(_RankingMetric):
    """Exact average precision of every (label, score) pair seen.

    ``AP = sum_k (R_k - R_{k-1}) P_k`` over the distinct scores in decreasing order (recall
    R_k and precision P_k of the rule "score >= the k-th score", tied scores together),
    equal to ``sklearn.metrics.average_precision_score`` on every prefix.

    Parameters
    ----------
    pos_label : object, default=None
        As in :class:`StreamingAUC`.

    Attributes
    ----------
    n_pos, n_neg : int
        Positives and negatives seen.

    Notes
    -----
    The pairs are held in the order-statistics treap of :class:`StreamingAUC`, so
    ``update`` costs an expected O(log d) (d distinct scores). Average precision does not
    decompose into per-element terms (one arrival changes the precision at every lower
    threshold), so ``get()`` walks the d distinct scores once, O(d) in compiled code, and
    caches the value until the next update. ``get()`` is NaN while no positive has been
    seen (scikit-learn warns and returns 0 there), and 1 while only positives have.

    Examples
    --------
    >>> from sosl.metrics import StreamingAveragePrecision
    >>> m = StreamingAveragePrecision()
    >>> for label, score in [(0, 0.1), (0, 0.4), (1, 0.35), (1, 0.8)]:
    ...     _ = m.update(label, score)
    >>> m.get()  # precision 1 at 0.8, 2/3 at 0.35
    0.8333333333333333
    """

    def __init__(self, pos_label: Any = None) -> None:
        self.pos_label = pos_label
        self._value = None
        self._core = _auc.AUCCounter()

    def _compute(self):
        return self._core.average_precision()


class RollingAveragePrecision(StreamingAveragePrecision):
    """Exact average precision of the last ``window`` (label, score) pairs.

    Equal to ``sklearn.metrics.average_precision_score`` on every window. ``update`` is an
    expected O(log window) (insert the new pair, drop the oldest), ``get()`` O(window)
    (cached until the next update); see :class:`StreamingAveragePrecision`.

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

    Examples
    --------
    >>> from sosl.metrics import RollingAveragePrecision
    >>> m = RollingAveragePrecision(window=3)
    >>> for label, score in [(1, 0.9), (0, 0.1), (0, 0.4), (1, 0.35)]:
    ...     _ = m.update(label, score)
    >>> m.get()  # the last three pairs: precision 1/2 at 0.35
    0.5
    """

    _rolling = True

    def __init__(self, window: int, pos_label: Any = None) -> None:
        self.window = _check_window(window)
        super().__init__(pos_label)
        self._core = _auc.RollingAUCCounter(self.window)


class BinnedAUC:
    """AUC and average precision of every (label, score) pair seen, in constant memory.

    Each score goes to one of ``2 * half + 1`` bins of ``asinh(score) * resolution``
    (rounded; the ends take everything beyond), and the bins count positives and negatives.
    The AUC is that of the binned scores, a pair in one bin counting 1/2 (scikit-learn's
    rule for tied scores), so it differs from the exact AUC by at most the share of the
    positive-negative pairs that fall in one bin, halved:

        |binned AUC - exact AUC| <= sum_b p_b q_b / (2 P N),

    which :meth:`error_bound` returns (exact when no two distinct scores share a bin).
    Memory is the two count arrays, whatever the number of pairs; ``update_many`` is O(n)
    and ``get`` O(bins). The average precision is that of the binned scores too (its error
    has no such simple bound; :class:`StreamingAveragePrecision` gives the exact value).

    Parameters
    ----------
    resolution : float, default=1024
        Bins per unit of ``asinh(score)``: near 0 a bin is ``1/resolution`` wide, for large
        scores it spans a relative change of ``1/resolution``.
    half : int, default=2**13
        Bins on each side of 0 (``asinh`` up to ``half / resolution``, i.e. scores up to
        about 1490 in size; larger ones share the end bins, which the bound counts).
    """

    def __init__(self, resolution: float = 1024.0, half: int = 2**13) -> None:
        self.resolution = float(resolution)
        self.half = int(half)
        self.counts = np.zeros((2, 2 * self.half + 1), dtype=np.int64)
        self.n_pos = self.n_neg = 0

    def update_many(self, y_true: ArrayLike, y_score: ArrayLike) -> BinnedAUC:
        """Add the pairs of labels (1 positive, 0 negative) and scores; returns self."""
        y = np.asarray(y_true).astype(np.int64, copy=False).ravel()
        s = np.asarray(y_score, dtype=np.float64).ravel()
        if y.shape != s.shape:
            raise ValueError(f"y_true has {y.shape[0]} entries but y_score has {s.shape[0]}")
        if not np.isin(y, (0, 1)).all():
            raise ValueError("y_true must hold 0 (negative) and 1 (positive)")
        if not np.isfinite(s).all():
            raise ValueError("y_score contains NaN or infinity")
        b = np.clip(np.rint(np.arcsinh(s) * self.resolution), -self.half, self.half)
        b = b.astype(np.intp) + self.half
        np.add.at(self.counts, (y, b), 1)              # O(n), whatever the number of bins
        pos = int(y.sum())
        self.n_pos += pos
        self.n_neg += y.shape[0] - pos
        return self

    def update(self, y_true: Any, y_score: float) -> BinnedAUC:
        return self.update_many([y_true], [y_score])

    def _pq(self):
        q, p = self.counts[0][::-1].astype(np.float64), self.counts[1][::-1].astype(np.float64)
        keep = (p > 0) | (q > 0)
        return p[keep], q[keep]

    def get(self) -> float:
        """The binned AUC (NaN until both classes are seen)."""
        if self.n_pos == 0 or self.n_neg == 0:
            return math.nan
        p, q = self._pq()                          # largest scores first
        neg_below = q.sum() - np.cumsum(q)
        return float((p * (neg_below + 0.5 * q)).sum() / (p.sum() * q.sum()))

    def error_bound(self) -> float:
        """The largest distance between :meth:`get` and the exact AUC of the same pairs."""
        if self.n_pos == 0 or self.n_neg == 0:
            return math.nan
        p, q = self._pq()
        return float((p * q).sum() / (2.0 * p.sum() * q.sum()))

    def average_precision(self) -> float:
        """Average precision of the binned scores (NaN until a positive is seen)."""
        if self.n_pos == 0:
            return math.nan
        p, q = self._pq()
        tp, seen = np.cumsum(p), np.cumsum(p + q)
        has = p > 0
        return float((p[has] * (tp[has] / seen[has])).sum() / p.sum())


class RollingTwoWayPartialAUC(_RankingMetric):
    """:func:`two_way_partial_auc` of the last ``window`` (label, score) pairs, exactly.

    Holds the window (O(window) memory, flat in the stream); ``get()`` recomputes the metric
    of the held pairs in O(window log window), cached until the next update, and returns
    NaN while the window holds one class only. Labels as in :class:`RollingAUC`.

    Parameters
    ----------
    window : int
        Number of most recent pairs held (>= 1).
    min_tpr, max_fpr : float
        As in :func:`two_way_partial_auc`.
    pos_label : object, default=None
        As in :class:`StreamingAUC`.

    Examples
    --------
    >>> from sosl.metrics import RollingTwoWayPartialAUC
    >>> m = RollingTwoWayPartialAUC(window=4, min_tpr=0.0, max_fpr=0.5)
    >>> for label, score in [(1, 0.9), (0, 0.1), (0, 0.4), (1, 0.35), (0, 0.2)]:
    ...     _ = m.update(label, score)
    >>> m.get()  # the last four pairs: top negative 0.4 against both positives 0.9, 0.35
    0.5
    """

    _rolling = True

    def __init__(self, window: int, *, min_tpr: float, max_fpr: float, pos_label: Any = None
                 ) -> None:
        self.window = _check_window(window)
        two_way_partial_auc([0, 1], [0.0, 1.0], min_tpr=min_tpr, max_fpr=max_fpr)  # checks
        self.min_tpr = min_tpr
        self.max_fpr = max_fpr
        self.pos_label = pos_label
        self._labels = np.zeros(self.window, dtype=bool)
        self._scores = np.zeros(self.window)
        self._n = 0              # pairs seen
        self._value = None

    def update(self, y_true: Any, y_score: float) -> Self:
        """Add one (label, score) pair, dropping the oldest once ``window`` are held."""
        if type(y_score) is not float or y_score - y_score != 0.0:
            y_score = _check_score(y_score)
        positive = self._positive(y_true)
        at = self._n % self.window
        self._labels[at] = positive
        self._scores[at] = y_score
        self._n += 1
        self._value = None
        return self

    def get(self) -> float:
        """The metric of the held pairs (NaN while they hold one class only)."""
        if self._value is None:
            held = min(self._n, self.window)
            # oldest first, so that ties at a cut break by arrival as in the batch function
            idx = (np.arange(held) + (self._n - held)) % self.window
            y, s = self._labels[idx], self._scores[idx]
            if y.all() or not y.any():
                self._value = float("nan")
            else:
                self._value = two_way_partial_auc(y, s, min_tpr=self.min_tpr,
                                                  max_fpr=self.max_fpr, pos_label=True)
        return self._value

    def __repr__(self):
        return (f"RollingTwoWayPartialAUC(window={self.window}, min_tpr={self.min_tpr}, "
                f"max_fpr={self.max_fpr}): {self.get():.6f}")


# pickles and the documentation name the public module
for _cls in (BinnedAUC, RollingAUC, RollingAveragePrecision, RollingTwoWayPartialAUC,
             StreamingAUC, StreamingAveragePrecision):
    _cls.__module__ = "sosl.metrics"
del _cls
