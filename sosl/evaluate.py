"""Prequential (test-then-train) evaluation of an online learner over a stream.

:func:`prequential` walks the rows of ``X`` in order; each row is first scored by the model
as it stands, the score and the row's label update every metric, and only then does the
model learn the row. The metric values recorded every ``every`` rows form the curves of
:class:`PrequentialResult`. With :class:`sosl.metrics.RollingAUC` this is the prequential
AUC of Brzezinski and Stefanowski; with :class:`sosl.metrics.StreamingAUC` the AUC of all
predictions made so far.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from numbers import Integral
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from sklearn.utils import check_array, check_consistent_length

from .metrics import StreamingAUC

__all__ = ["PrequentialResult", "prequential", "recovery"]


@dataclass
class PrequentialResult:
    """Metric curves of a test-then-train run.

    Attributes
    ----------
    steps : ndarray of shape (n_records,), int
        Rows processed (scored, if the model could score them, then learned) when each
        value was recorded: ``every, 2 every, ...`` and the last row.
    values : dict of str to ndarray of shape (n_records,)
        ``values[name][k]`` is ``metric.get()`` after ``steps[k]`` rows (NaN while the
        metric is undefined, e.g. one class seen so far).
    scores : ndarray of shape (n_samples,)
        The score each row received before the model learned it; NaN for the rows met
        before the model was fitted (it cannot score them).
    positive : object
        The label counted as positive (``classes_[1]`` of the model).
    cpu_seconds : float
        Process CPU time of the whole run (scoring, learning and metrics).
    """

    steps: np.ndarray
    values: dict
    scores: np.ndarray
    positive: object = None
    cpu_seconds: float = 0.0

    def __getitem__(self, name):
        """The curve of one metric, ``values[name]``."""
        return self.values[name]

    @property
    def n_scored(self) -> int:
        """Number of rows that were scored before being learned."""
        return int(np.isfinite(self.scores).sum())

    def final(self) -> dict[str, float]:
        """The last recorded value of every metric, as a dict."""
        return {name: float(v[-1]) if v.shape[0] else float("nan")
                for name, v in self.values.items()}


def _metric_name(metric):
    window = getattr(metric, "window", None)
    name = type(metric).__name__
    return f"{name}({window})" if window is not None else name


def _check_metrics(metrics):
    if metrics is None:
        return {"auc": StreamingAUC()}
    if isinstance(metrics, dict):
        named = dict(metrics)
    elif isinstance(metrics, (list, tuple)):
        named = {}
        for m in metrics:
            name = _metric_name(m)
            if name in named:
                raise ValueError(f"two metrics share the name {name!r}; pass a dict "
                                 "{name: metric} to name them")
            named[name] = m
    else:
        raise TypeError("metrics must be a dict {name: metric}, a list of metrics or None, "
                        f"got {type(metrics).__name__}")
    if not named:
        raise ValueError("metrics is empty: give at least one metric")
    for name, m in named.items():
        if not isinstance(name, str):
            raise TypeError(f"metric names must be strings, got {name!r}")
        if not (callable(getattr(m, "update", None)) and callable(getattr(m, "get", None))):
            raise TypeError(f"metric {name!r} ({type(m).__name__}) has no "
                            "update(y_true, y_score) and get() methods; use e.g. "
                            "sosl.metrics.StreamingAUC()")
    return named


def _accepts_sparse(model):
    try:
        return bool(model.__sklearn_tags__().input_tags.sparse)
    except AttributeError:
        return False


def _due(i, d):
    """The row after whose scoring row ``i`` (label delay ``d``) is learned."""
    return i + d


def _check_delay(delay):
    """``delay`` as an int >= 0, or the callable given (checked row by row)."""
    if callable(delay):
        return delay
    if isinstance(delay, bool) or not isinstance(delay, Integral):
        raise TypeError(f"delay must be an int number of rows or a callable giving row i's "
                        f"delay, got {delay!r} of type {type(delay).__name__}")
    if delay < 0:
        raise ValueError(f"delay must be >= 0 rows, got {delay}")
    return int(delay)


def _row_delay(delay, i):
    d = delay(i)
    if isinstance(d, bool) or not isinstance(d, Integral) or d < 0:
        raise ValueError(f"delay({i}) must return an int >= 0 (rows), got {d!r}")
    return int(d)


def prequential(model: Any, X: ArrayLike, y: ArrayLike,
                metrics: Mapping[str, Any] | Sequence[Any] | None = None, every: int = 1,
                classes: ArrayLike | None = None, delay: int | Callable[[int], int] = 0
                ) -> PrequentialResult:
    """Test-then-train evaluation: score each row with the model, then let it learn the row.

    Parameters
    ----------
    model : estimator
        An online binary classifier, updated in place. It learns through
        ``learn_one(x, y, classes=...)`` when it has one (sosl's one-row path), else
        through ``partial_fit(X[i:i+1], y[i:i+1], classes=...)``; it scores through
        ``score_one(x)`` when it has one, else ``decision_function`` (or, lacking that,
        the positive column of ``predict_proba``). A model fitted already keeps learning
        (its ``classes_`` must then hold the same labels as ``classes``).
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The stream, in row order. Sparse rows go to the model as one-row CSR matrices if
        its scikit-learn tags say it accepts sparse input, and are densified one row at a
        time otherwise.
    y : array-like of shape (n_samples,)
        The labels.
    metrics : dict of str to metric, list of metrics, or None, default=None
        Objects with ``update(y_true, y_score)`` and ``get()``, such as
        :class:`sosl.metrics.StreamingAUC` and :class:`sosl.metrics.RollingAUC`, updated
        in place with the label passed as a positive flag (True for ``classes_[1]``). A
        list is named by class (``"RollingAUC(500)"``). None gives
        ``{"auc": StreamingAUC()}``.
    every : int, default=1
        Record the metric values after every ``every`` rows (and after the last one).
    classes : array-like of shape (2,), default=None
        ``[negative, positive]``, passed to the model's first update (the order is kept by
        sosl learners). None takes the two labels of ``y``, sorted.
    delay : int >= 0 or callable, default=0
        Label delay in rows. Row i is scored when it arrives, as always, but its label
        reaches the model only after row ``i + d`` has been scored (``d = delay``, or
        ``d = delay(i)`` for a callable giving each row's delay as an int >= 0): the model
        learns row i right after scoring row ``i + d``, so ``delay=0`` is plain
        test-then-train. Rows whose labels arrive after the same row are learned in row
        order; labels still pending after the last row are learned at the end (they
        change the model returned, not the metrics). The metrics and ``steps`` count
        rows scored, as without delay.

    Returns
    -------
    result : PrequentialResult
        The curves (``result.steps``, ``result[name]``) and the prequential scores.

    Raises
    ------
    TypeError
        If the model cannot learn or score one row, or a metric lacks update/get.
    ValueError
        If ``X`` and ``y`` differ in length or hold non-finite values, ``y`` holds labels
        outside ``classes`` or not two classes, ``every`` is not a positive integer, or
        ``delay`` is negative. Nothing has been learned when these are raised (a callable
        delay is asked row by row: a bad value it returns is raised when met).

    Examples
    --------
    >>> from sosl import OAUCM
    >>> from sosl.datasets import make_imbalanced_stream
    >>> from sosl.evaluate import prequential
    >>> from sosl.metrics import RollingAUC, StreamingAUC
    >>> X, y = make_imbalanced_stream(600, 5, imbalance_ratio=4, class_sep=2, random_state=0)
    >>> res = prequential(OAUCM(), X, y, metrics={"auc": StreamingAUC(),
    ...                                           "rolling": RollingAUC(200)}, every=100)
    >>> res.steps.tolist()
    [100, 200, 300, 400, 500, 600]
    >>> bool(res["rolling"][-1] > 0.8)
    True
    """
    named = _check_metrics(metrics)
    delay = _check_delay(delay)
    if isinstance(every, bool) or not isinstance(every, Integral):
        raise TypeError(f"every must be an integer, got {every!r} of type {type(every).__name__}")
    if every < 1:
        raise ValueError(f"every must be >= 1, got {every}")
    learn_one = getattr(model, "learn_one", None)
    score_one = getattr(model, "score_one", None)
    if learn_one is None and not callable(getattr(model, "partial_fit", None)):
        raise TypeError(f"{type(model).__name__} has neither learn_one nor partial_fit: it "
                        "cannot learn one row at a time")
    if score_one is None and not (callable(getattr(model, "decision_function", None))
                                  or callable(getattr(model, "predict_proba", None))):
        raise TypeError(f"{type(model).__name__} has neither score_one, decision_function nor "
                        "predict_proba: it cannot score a row")

    sparse = sp.issparse(X)
    X = check_array(X, accept_sparse="csr", dtype=np.float64, order="C", ensure_min_samples=1)
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D, got shape {y.shape}")
    check_consistent_length(X, y)
    if classes is None:
        classes = np.unique(y)
        if classes.shape[0] != 2:
            raise ValueError("y must hold exactly two labels when classes is not given, got "
                             f"{classes.tolist()[:5]}; pass classes=[negative, positive]")
    classes = np.asarray(classes)
    if classes.shape != (2,) or classes[0] == classes[1]:
        raise ValueError(f"classes must hold two distinct labels [negative, positive], got "
                         f"{classes.tolist()}")
    unknown = np.setdiff1d(np.unique(y), classes)
    if unknown.size:
        raise ValueError(f"y holds label(s) {unknown.tolist()[:5]} not in classes "
                         f"{classes.tolist()}")
    if hasattr(model, "classes_") and set(np.asarray(model.classes_).tolist()) != set(
            classes.tolist()):
        raise ValueError(f"the model is fitted on classes_={np.asarray(model.classes_).tolist()}"
                         f" but the stream has classes {classes.tolist()}")

    keep_sparse = sparse and _accepts_sparse(model)
    n = X.shape[0]
    scores = np.full(n, np.nan)
    steps, curves = [], {name: [] for name in named}
    metric_items = list(named.items())
    fitted = hasattr(model, "classes_")
    positive = model.classes_[1] if fitted else None
    fixed = not callable(delay)
    pending = {}                      # scored row -> the rows whose labels arrive after it

    def row_of(i):
        if keep_sparse:
            return X[i:i + 1]
        if sparse:
            return X[i].toarray().ravel()
        return X[i]

    def learn(i, row):
        nonlocal fitted, positive
        first = None if fitted else classes
        if learn_one is not None:
            learn_one(row, y[i], classes=first)
        else:
            model.partial_fit(row.reshape(1, -1) if row.ndim == 1 else row, y[i:i + 1],
                              classes=first)
        if not fitted:
            fitted = True
            positive = model.classes_[1]

    start = time.process_time()
    for i in range(n):
        row = row_of(i)
        if fitted:
            if score_one is not None:
                score = score_one(row)
            else:
                score = _batch_score(model, row)
            scores[i] = score
            flag = bool(y[i] == positive)
            for _, m in metric_items:
                m.update(flag, score)
        d = delay if fixed else _row_delay(delay, i)
        if d == 0 and not pending:
            learn(i, row)
        else:                         # the rows whose label arrives once row i is scored
            pending.setdefault(_due(i, d), []).append(i)
            for j in pending.pop(i, ()):
                learn(j, row if j == i else row_of(j))
        if (i + 1) % every == 0 or i == n - 1:
            steps.append(i + 1)
            for name, m in metric_items:
                curves[name].append(m.get())
    # labels still in flight when the stream ends, in order of arrival, then of row
    for due in sorted(pending):
        for j in pending[due]:
            learn(j, row_of(j))
    cpu = time.process_time() - start
    return PrequentialResult(
        steps=np.asarray(steps, dtype=np.int64),
        values={name: np.asarray(v, dtype=np.float64) for name, v in curves.items()},
        scores=scores, positive=positive, cpu_seconds=cpu,
    )


def _batch_score(model, row):
    X1 = row.reshape(1, -1) if row.ndim == 1 else row
    if callable(getattr(model, "decision_function", None)):
        return float(np.ravel(model.decision_function(X1))[0])
    return float(model.predict_proba(X1)[0, 1])


def recovery(steps: ArrayLike, curve: ArrayLike, at: int, until: int | None = None,
             tol: float = 0.01) -> tuple[float, float, float]:
    """Depth of the dip of a metric curve after a drift at row ``at``, and its recovery time.

    The pre-drift level is the curve's last value recorded at or before row ``at``; the
    dip is that level minus the curve's minimum over the records in ``(at, until]``; the
    recovery time is the number of rows from ``at`` to the first record after that
    minimum at which the curve is back within ``tol`` of the level: 0 if the dip is at
    most ``tol``, NaN if it does not come back by ``until``. With a rolling metric
    the time includes the window's own lag (the window must fill with rows of the new
    concept).

    Parameters
    ----------
    steps : array-like of int
        Rows processed at each record (``PrequentialResult.steps``).
    curve : array-like of float
        The metric at each record (e.g. ``result["rolling"]``); NaN records are skipped.
    at : int
        The drift row.
    until : int or None, default=None
        The last row considered (the next drift); None: the end of the curve.
    tol : float, default=0.01

    Returns
    -------
    level, depth, rows : float, float, float
        The pre-drift level, the depth of the dip, and the recovery time in rows.

    Examples
    --------
    >>> level, depth, rows = recovery([100, 200, 300, 400, 500], [0.9, 0.9, 0.7, 0.85, 0.895],
    ...                               at=200)
    >>> level, round(depth, 6), rows
    (0.9, 0.2, 300.0)
    """
    steps_a = np.asarray(steps, dtype=np.int64)
    curve_a = np.asarray(curve, dtype=np.float64)
    ok = np.isfinite(curve_a)
    steps_a, curve_a = steps_a[ok], curve_a[ok]
    before = np.flatnonzero(steps_a <= at)
    if before.size == 0:
        raise ValueError(f"no finite record at or before the drift row {at}")
    level = float(curve_a[before[-1]])
    last = steps_a[-1] if until is None else until
    after = np.flatnonzero((steps_a > at) & (steps_a <= last))
    if after.size == 0:
        return level, float("nan"), float("nan")
    lowest = after[np.argmin(curve_a[after])]
    depth = level - float(curve_a[lowest])
    if depth <= tol:
        return level, depth, 0.0
    back = after[(after > lowest) & (curve_a[after] >= level - tol)]
    rows = float(steps_a[back[0]] - at) if back.size else float("nan")
    return level, depth, rows
