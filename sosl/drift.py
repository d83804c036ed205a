"""Drift detection and an answer to it: the machinery behind ``forgetting="auto"``.

A learner built with ``forgetting="auto"`` runs its plain pass (no decay, ``forgetting=1``)
and hands every row to a :class:`MemoryController`, which

1. turns the row's score under the model as it stood before the row (the prequential
   score) into a *signal*: how far the row scores from its own class's mean score, towards
   the other class, in units of that distance's running root mean square
   (:class:`ClassScoreShift`);
2. feeds the signal of each class to its own change detector: any object with
   ``update(x)`` and a ``drift_detected`` attribute (river's ``drift.ADWIN``,
   ``drift.PageHinkley``, ... fit; river is never imported here), by default
   :class:`Cusum`, one copy per class;
3. answers a detected change by *shortening the memory* of the learner: each class's
   moments keep the weight of at most its share of ``memory`` rows (their means and
   covariances stay, but the next instances move them as if only that many had been
   seen), and the step schedule restarts from ``memory`` rounds (a ``1/(lam t)`` step
   becomes large again, so the weights turn towards the new concept). In calm stretches
   nothing is forgotten: the memory grows by one row per row, back to the paper's
   learner, which is what a stationary stream calls for. With labels ``label_delay``
   rows late, a change is answered only after a concept that lasted more than twice
   the delay (:meth:`MemoryController.due`).

The moment learners (OAUCM, OAUCS, PartialOAUCM) also keep a second candidate, the same
learner with the fixed factor 0.99, learning the same rows, and lead with whichever of the
two has the clearly higher AUC on the labelled rows (:mod:`sosl._drift_select`): a change
detector has nothing to answer when the concept turns a little every row.

Why this signal
---------------
The class means are what the moment learners keep already (the score of a class mean
under the current weights is ``w.xbar_k``, O(p) per row; the sketch reads it from its
slots and untracked sums; FTRL-AUC, which keeps only running means of the scores its
rows got on arrival, gets the class sums of :class:`ClassMeanScores`). A row of class k
scores, on a stationary stream, around its class's mean
score with a mean offset of zero (the mean is over earlier rows of the same
distribution): the reference of the test is known, zero, so the test needs no running
mean that a change soon after a restart would contaminate. A concept drift moves a class
towards the other one (negatives scoring higher, positives lower) before the weights can
follow. Each class has its own test, on its own rows, so a change of the positive rate alone (a
prior shift, which leaves the class moments and so the model unmoved) does not move the
signal, and the majority class, many rows a second, finds a change that moves it within
tens of rows while the rare class is still being counted. Dividing by the running root
mean square of the offset makes the signal about unit-variance whatever the scale of the
features or of the weights, so one threshold fits every stream.

Why CUSUM
---------
Page's one-sided CUSUM ``S = max(0, S + z - delta)``, alarm at ``S > threshold``, is the
optimal test for a shift of the mean from a known reference (here each class's baseline:
its mean signal over the last half of the quiet rows after the model's start or its last
answer, near zero on a stationary stream), costs O(1) per row, and its false-alarm rate is
set by ``delta * threshold``. The defaults (delta 0.15, threshold 40) find a shift of one
root mean square in about 50 rows of the class and a slow one of 0.3 in a few hundred (a
gradual drift needs that); for a unit-variance Gaussian signal Siegmund's approximation
of the mean run length between false alarms, ``(exp(2 k b) - 2 k b - 1) / (2 k^2)`` with
``k = delta`` and ``b = threshold + 1.166``, is about five million rows. The rate measured
on stationary streams is in ``docs/user_guide/drift.md`` (``benchmarks/bench_drift.py``
measures it). Page-Hinkley (running mean as the reference) or ADWIN (river's, a change of
the mean either way, O(log n) per row) can be passed as ``detector=``.

Cost per row (on top of the learner's round): the reference scores of the class means,
O(p) (a moment learner; O(nnz) for FTRL-AUC's sums), and O(1) for the signal and CUSUM; river's
ADWIN, O(log n) amortised. A batch (``fit``, ``partial_fit``) is scored in chunks of
:data:`CHUNK` rows before their rounds.
"""

from __future__ import annotations

import copy
import math
from numbers import Real

import numpy as np

from ._drift_select import SHORT, MemorySelector, candidate, new_selector, select_evidence
from ._typing import Detector

__all__ = ["Cusum", "ClassScoreShift", "ClassMeanScores", "MemoryController", "CHUNK",
           "check_detector", "check_label_delay"]

#: rows of a batch scored together before their rounds (``fit``/``partial_fit`` with
#: ``forgetting="auto"``): a row's signal uses the model as it stood at its chunk's start
CHUNK = 64


class Cusum:
    """Page's one-sided CUSUM test for an increase of the mean above zero.

    ``S_n = max(0, S_{n-1} + x_n - delta)``; a change is declared when ``S_n > threshold``,
    and the statistic restarts.

    Parameters
    ----------
    delta : float, default=0.15
        Half the shift to detect, in the signal's units (the drift allowance k).
    threshold : float, default=40.0
        Decision threshold (h).

    Attributes
    ----------
    drift_detected : bool
        True right after the ``update`` that detected a change.
    n_detections : int
        Changes detected so far.

    Examples
    --------
    >>> c = Cusum(delta=0.5, threshold=5.0)
    >>> hits = []
    >>> for i in range(200):
    ...     c.update(0.0 if i < 100 else 1.5)
    ...     if c.drift_detected:
    ...         hits.append(i)
    >>> hits[:2]
    [105, 111]
    """

    delta: float
    threshold: float
    n_detections: int
    drift_detected: bool
    _sum: float

    def __init__(self, delta: float = 0.15, threshold: float = 40.0) -> None:
        if not (isinstance(delta, Real) and math.isfinite(delta) and delta >= 0):
            raise ValueError(f"delta must be a finite number >= 0, got {delta!r}")
        if not (isinstance(threshold, Real) and math.isfinite(threshold) and threshold > 0):
            raise ValueError(f"threshold must be a finite number > 0, got {threshold!r}")
        self.delta = float(delta)
        self.threshold = float(threshold)
        self.n_detections = 0
        self.drift_detected = False
        self._sum = 0.0

    def __deepcopy__(self, memo):
        # flat numbers only: a shallow copy is a deep one (a controller copies its
        # detectors on every batch call)
        return copy.copy(self)

    def update(self, x: float) -> None:
        """Take one value; sets ``drift_detected``."""
        s = self._sum + x - self.delta
        self._sum = s if s > 0.0 else 0.0
        self.drift_detected = self._sum > self.threshold
        if self.drift_detected:
            self.n_detections += 1
            self._sum = 0.0


class ClassScoreShift:
    """A row's offset from its class's mean score, towards the other class, standardized.

    ``update(score, positive, ref_neg, ref_pos)`` with ``ref_k`` the score of class k's
    mean under the same model returns ``z = (score - ref_neg) / r_0`` for a negative row
    and ``(ref_pos - score) / r_1`` for a positive one, ``r_k`` the root mean square of the
    class's earlier offsets (over its last ``span`` rows, exponentially weighted), clipped
    to ``[-clip, clip]``; NaN while the class has fewer than ``warmup`` rows.

    Examples
    --------
    >>> sig = ClassScoreShift(warmup=2)
    >>> [round(sig.update(f, False, 0.0, 1.0), 3) for f in (0.1, -0.1, 0.1, 0.3)]
    [nan, nan, 1.0, 3.0]
    """

    def __init__(self, span: int = 500, warmup: int = 20, clip: float = 5.0) -> None:
        self.span = int(span)
        self.warmup = int(warmup)
        self.clip = float(clip)
        self._n = [0, 0]
        self._ms = [0.0, 0.0]

    def update(self, score: float, positive: bool, ref_neg: float, ref_pos: float) -> float:
        k = 1 if positive else 0
        d = ref_pos - score if positive else score - ref_neg
        n = self._n[k]
        ms = self._ms[k]
        z = math.nan
        if n >= self.warmup and ms > 0.0:
            z = min(self.clip, max(-self.clip, d / math.sqrt(ms)))
        self._n[k] = n + 1
        self._ms[k] = ms + (d * d - ms) / min(n + 1, self.span)
        return z


def _has_detector_api(obj):
    return callable(getattr(obj, "update", None)) and hasattr(obj, "drift_detected")


def check_detector(detector: Detector | None) -> Detector | None:
    """``detector`` if it has ``update`` and ``drift_detected`` (or is None), else TypeError."""
    if detector is None or _has_detector_api(detector):
        return detector
    raise TypeError(f"detector must have an update(x) method and a drift_detected attribute "
                    f"(e.g. sosl.drift.Cusum() or river.drift.ADWIN()), got "
                    f"{type(detector).__name__}")


class ClassMeanScores:
    """The score of each class's mean row under the current weights, for a learner that
    keeps no class means (FTRL-AUC keeps the running means of the scores its rows got on
    arrival, which lag the weights: as they grow while the learner converges, a row's
    offset from them trends, and a CUSUM against a fixed baseline fires on that trend).

    Keeps per class the (weighted) sum of its rows ``S_k``, its weight ``n_k`` and the
    product ``S_k . w`` with the learner's weights, brought up to date after each played
    block from the weights of the columns the block touched (a round of FTRL-AUC changes
    only its row's columns): O(nnz) per row. :meth:`scale` (an answer to a change) and
    ``resync`` (weights changed everywhere) cost O(p).
    """

    def __init__(self, p: int) -> None:
        self.sums = np.zeros((2, p))
        self.weight = np.zeros(2)
        self.dot = np.zeros(2)

    def __deepcopy__(self, memo):
        new = copy.copy(self)
        new.sums, new.weight, new.dot = self.sums.copy(), self.weight.copy(), self.dot.copy()
        return new

    def refs(self) -> tuple[float, float]:
        """``(w.xbar_neg, w.xbar_pos)`` (NaN for a class not seen)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            r = self.dot / self.weight
        return float(r[0]), float(r[1])

    def touched(self, X, rows, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The columns the rows of CSR ``X`` hold and their weights before the rows'
        rounds (to give :meth:`add` after them)."""
        cols = np.unique(np.concatenate([X.indices[X.indptr[i]:X.indptr[i + 1]]
                                         for i in rows]))
        return cols, w[cols]

    def add(self, X, rows, positive, w: np.ndarray, cols: np.ndarray,
            w_before: np.ndarray) -> None:
        """After the rounds of ``rows`` (labels ``positive[i]``): the weights' change on
        ``cols`` into the products, then the rows into their class's sum."""
        self.dot += self.sums[:, cols] @ (w[cols] - w_before)
        data, indices, indptr = X.data, X.indices, X.indptr
        for i in rows:
            k = 1 if positive[i] else 0
            a, b = indptr[i], indptr[i + 1]
            idx, v = indices[a:b], data[a:b]
            self.sums[k, idx] += v
            self.dot[k] += v @ w[idx]
            self.weight[k] += 1.0

    def scale(self, g: np.ndarray) -> None:
        """Each class's sum and weight times ``g[k]`` (its mean unchanged)."""
        self.sums *= g[:, None]
        self.weight *= g

    def resync(self, w: np.ndarray) -> None:
        self.dot = self.sums @ w


def check_label_delay(model) -> None:
    """ValueError if a learner's ``label_delay`` is set without ``forgetting="auto"``."""
    if model.label_delay != 0 and model.forgetting != "auto":
        raise ValueError(f"label_delay is used by forgetting='auto' only; got forgetting="
                         f"{model.forgetting!r} with label_delay={model.label_delay!r}")


class MemoryController:
    """The state of ``forgetting="auto"``: signal, detectors, and the memory they set.

    Parameters
    ----------
    detector : object or None
        A change detector (``update(x)``, ``drift_detected``), used as a template: each
        class gets a deep copy, renewed after every detected change. None is
        ``Cusum()``.
    memory : int, default=1000
        Rows kept after a detected change (more when the rare class needs them, see
        ``min_class``): each class keeps the weight of at most its share of those rows,
        and the step counter of the schedule restarts from their number; the detectors
        then stay quiet for as many rows while the model turns (and for the first
        ``2 memory`` rows of a new model); the mean signal of each class over the last
        half of the quiet rows is the baseline the detector then tests against.
    min_class : int, default=20
        Instances of the rarer class the rows kept must hold at its rate so far (at a
        0.1% positive rate, 20 positives are 20,000 rows).
    label_delay : int, default=0
        Rows between a row's scoring and the arrival of its label (the learner's
        ``label_delay``). A change is answered only if the concept it ends lasted more
        than ``2 label_delay`` rounds (see :meth:`due`).

    Attributes
    ----------
    t : int
        The step counter the schedule uses: the rounds played since the last change plus
        ``memory`` (all rounds before the first change).
    detections : list of int
        The learner's round count (``t_``) at each detected change.
    unanswered : list of int
        Those of ``detections`` the label delay rule left unanswered.
    means : ClassMeanScores or None
        The class means the references are read from, for a learner that keeps none
        (FTRL-AUC).
    """

    #: rows of a class its baseline holds before its detector runs: the offset of the
    #: rows of a rare class shrinks as the model sees more of them (the weights fit the
    #: class's first rows better than its next ones), and a mean over fewer rows has a
    #: standard error (1 / sqrt(n) in the signal's units) not well below ``Cusum.delta``
    min_base = 100
    # defaults for controllers pickled before these attributes existed
    label_delay: int = 0
    _last: int = 0
    means: ClassMeanScores | None = None
    #: the two memories of a moment learner (:mod:`sosl._drift_select`), None for others
    selector: MemorySelector | None = None

    def __init__(self, detector: Detector | None = None, memory: int = 1000,
                 min_class: int = 20, label_delay: int = 0) -> None:
        self.template = Cusum() if detector is None else copy.deepcopy(detector)
        self.detectors = [copy.deepcopy(self.template), copy.deepcopy(self.template)]
        self.memory = int(memory)
        self.min_class = int(min_class)
        self.label_delay = int(label_delay)
        self.unanswered: list[int] = []
        self.means: ClassMeanScores | None = None
        self._last = 0                      # round of the last detection (or the start)
        self.signal = ClassScoreShift()
        self.t = 0
        self.quiet = self._quiet_rows = 2 * self.memory    # a young model has no concept
        self._base = [0.0, 0.0]             # mean signal per class over the quiet rows
        self._base_n = [0, 0]
        self.detections: list[int] = []

    def observe(self, score: float, positive: bool, ref_neg: float, ref_pos: float) -> bool:
        """Feed one row's prequential score and the class means' scores (same model);
        True if the row's class detector fired."""
        if not (math.isfinite(score) and ref_pos > ref_neg):
            return False
        z = self.signal.update(score, positive, ref_neg, ref_pos)
        if z != z:
            return False
        k = 1 if positive else 0
        if self.quiet > 0:                  # the model is turning after an answer:
            self.quiet -= 1                 # the level it settles at (the last half of
            if 2 * self.quiet < self._quiet_rows:       # the quiet rows) is the baseline
                self._base_n[k] += 1
                self._base[k] += (z - self._base[k]) / self._base_n[k]
            return False
        n = self._base_n[k]
        if n < self.min_base:               # a rare class: its baseline takes its rows
            self._base_n[k] = n + 1         # until it holds min_base of them
            self._base[k] += (z - self._base[k]) / (n + 1)
            return False
        det = self.detectors[k]             # a baseline of few rows shrunk towards zero
        det.update(z - self._base[k] * n / (n + 100))
        if det.drift_detected:
            self.detectors = [copy.deepcopy(self.template), copy.deepcopy(self.template)]
            return True
        return False

    def __deepcopy__(self, memo):
        # the copy a batch call works on (its failure leaves the committed controller):
        # the template is never changed, so it is shared; the rest is copied member by
        # member, which is much cheaper than the generic deep copy on one-row calls
        new = copy.copy(self)
        new.detectors = [copy.deepcopy(d) for d in self.detectors]
        sig = copy.copy(self.signal)
        sig._n, sig._ms = list(self.signal._n), list(self.signal._ms)
        new.signal = sig
        new._base, new._base_n = list(self._base), list(self._base_n)
        new.detections = list(self.detections)
        if "unanswered" in self.__dict__:
            new.unanswered = list(self.unanswered)
        if self.means is not None:
            new.means = copy.deepcopy(self.means)
        if self.selector is not None:
            new.selector = copy.deepcopy(self.selector)
        return new

    def due(self, t_round: int) -> bool:
        """Record a detection at the learner's round ``t_round``; True if it is to be
        answered.

        With labels ``d = label_delay`` rows late, a model answering a change at round t
        scores with the new concept from row ``t + d`` on: it is right for ``L - d`` rows
        if the new concept lasts L rows, and wrong for the ``d`` rows after the next
        change (until that change's labels arrive), where a long memory, which has seen
        the concepts before, does better when they recur. Taking L to be the length of
        the concept that just ended (the rounds since the previous detection or the
        start), the answer pays off when ``L - d > d``. With ``d = 0`` every detection is
        answered.
        """
        t_round = int(t_round)
        lasted = t_round - self._last
        self._last = t_round
        self.detections.append(t_round)
        if lasted > 2 * self.label_delay:
            return True
        self.__dict__.setdefault("unanswered", []).append(t_round)
        return False

    def rows_kept(self, counts: np.ndarray) -> int:
        """The memory after a change, in rows: ``memory``, or enough rows for
        ``min_class`` instances of the rarer class at its rate so far."""
        total = int(counts[0]) + int(counts[1])
        rare = min(int(counts[0]), int(counts[1]))
        if rare == 0:
            return self.memory
        return max(self.memory, int(math.ceil(self.min_class * total / rare)))

    def keep_factors(self, weights: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """Per class, the factor (<= 1) that leaves at most its share of the rows kept
        (``rows_kept``) as weight: what a detected change keeps of the moments."""
        total = max(1, int(counts[0]) + int(counts[1]))
        rows = self.rows_kept(counts)
        out = np.ones(2)
        for k in range(2):
            keep = rows * int(counts[k]) / total
            if weights[k] > keep:
                out[k] = keep / weights[k]
        return out

    def restart(self, t_round: int, counts: np.ndarray) -> None:
        """The schedule after a change: the step counter back to at most the rows kept,
        and the detectors quiet for as many rows while the model turns."""
        rows = self.rows_kept(counts)
        self.t = min(self.t, rows)
        self.quiet = self._quiet_rows = rows
        self._base = [0.0, 0.0]
        self._base_n = [0, 0]


def controller_for(model, state):
    """The learner's controller for a pass on ``state``: a copy of the committed one (so
    that a failed call leaves it as it was), or a new one for a fresh state."""
    old = model.__dict__.get("drift_")
    if old is None or state["t_"] == 0:
        ctl = MemoryController(getattr(model, "detector", None),
                               label_delay=getattr(model, "label_delay", 0))
        ctl.t = ctl._last = state["t_"]
        return ctl
    return copy.deepcopy(old)


def _linear_scores(state, X, rows):
    """The decision values of rows of X under a moment learner's state (its
    ``decision_function``: w.x minus the projected midpoint of the class means), and the
    same for the two class means."""
    w = state["w_"]
    f = X[rows] @ w
    ref = state["means_"] @ w
    if state["counts_"][0] > 0 and state["counts_"][1] > 0:
        mid = 0.5 * (ref[0] + ref[1])
        f -= mid
        ref = ref - mid
    return f, ref


def linear_one_row(model, st, x, s, safe_p):
    """One dense row of ``forgetting="auto"`` on a fitted moment learner's live state,
    through typed steppers bound to its arrays and to the shadow's (``st``, the learner's
    own stepper, is built with no decay and is not used here): the row's score under
    both candidates, the leader's round (False, with nothing changed, when it declines
    the row: the general path then plays it, or reports it), the other's (a candidate
    not leading that diverges restarts as a copy of the leader), then the row's signal
    and, on a detected change, the shorter memory of the detector's candidate (in place,
    where the steppers read it), and the evidence. ``safe_p``: the BLAS context the
    learner's round needs at this width (a context manager)."""
    d = model.__dict__
    ctl = d.get("drift_")
    if ctl is None or ctl.selector is None:     # the general path makes the selector
        return False
    sel = ctl.selector
    names = model._state_names
    lead, other = sel.steppers(model, names)
    leads = sel.detector_leads
    det, fix = (d, sel.shadow) if leads else (sel.shadow, d)
    det_st, fix_st = (lead, other) if leads else (other, lead)
    f = det_st.score(x)
    if f != f:
        return False
    f_fix = fix_st.score(x)
    w = det["w_"]
    counts = det["counts_"]
    ref = det["means_"] @ w
    if counts[0] > 0 and counts[1] > 0:
        ref = ref - 0.5 * (ref[0] + ref[1])
    then: tuple[float, float] | None = (f, f_fix)
    if sel.delay:
        old = sel.scoring_weights(d["t_"], (*candidate(det), *candidate(fix)))
        then = None if old is None else (float(x @ old[0]) - old[1],
                                          float(x @ old[2]) - old[3])
    t_det, t_fix = ctl.t + 1, d["t_"] + 1
    with safe_p:
        R = lead.step(x, s, t_det if leads else t_fix, d["max_abs_"])
    if R < 0.0:
        return False
    with safe_p:
        if other.step(x, s, t_fix if leads else t_det, d["max_abs_"]) < 0.0:
            sel.restart_shadow(d, names)
    ctl.t = t_det
    d["t_"] += 1
    d["n_seen_"] += 1
    d["max_abs_"] = R
    if ctl.observe(f, s > 0, float(ref[0]), float(ref[1])):
        sel.detected(d["t_"])
        if ctl.due(d["t_"]):
            g = ctl.keep_factors(det["weights_"], counts)
            det["weights_"] *= g                # in place: the steppers read these arrays
            det["scales_"] *= g
            ctl.restart(d["t_"], counts)
    if then is not None and sel.observe(then, s > 0) and sel.may_switch(d["t_"]):
        sel.swap(d, names, d["t_"])
        model._forget_stepper()                 # bound to the arrays that left
    return True


def _row_scores(X, rows, w):
    """w.x of the given rows of canonical CSR arrays (``data``, ``indices``, ``indptr``)."""
    data, indices, indptr = X.data, X.indices, X.indptr
    f = np.empty(rows.shape[0])
    for r, i in enumerate(rows):
        a, b = indptr[i], indptr[i + 1]
        f[r] = data[a:b] @ w[indices[a:b]]
    return f


def ftrl_auto_play(model, state, X, s, order, wzn, play, ftrl_weights):
    """``forgetting="auto"`` for FTRL-AUC: the rows in chunks, as
    :func:`linear_auto_pass`, with the scores of the class means under the current
    weights as the references (:class:`ClassMeanScores`, kept by the controller).

    ``play(rows)`` runs the plain pass over ``rows`` and returns the position of a row that
    made the state non-finite (-1 if none), after which the state of that call is as
    before. The answer to a change treats the past as ``rows_kept`` rounds: the FTRL sums
    ``z`` and ``n`` (sums over the past gradients) are scaled by ``rows_kept / t`` (the
    weights are recomputed from them: ``ftrl_weights``, eq. F5) and each class's count of
    the running mean scores (and the weight of its mean row) is capped at its share of the
    rows kept (so those means, and the positive fraction, follow the new rows). Returns
    the position in ``order`` of a bad row, or -1; the counts and mean scores are fresh
    copies in ``state`` (the passes of earlier chunks are not undone by a later failure,
    the caller's copies are).
    """
    if (order.shape[0] == 1 and state is model.__dict__ and "drift_" in state
            and state["drift_"].means is not None):
        return _ftrl_one_row(state, X, s, order, wzn, play, ftrl_weights)
    ctl = controller_for(model, state)
    w = wzn[:, 0]
    if ctl.means is None:
        ctl.means = ClassMeanScores(wzn.shape[0])
    means = ctl.means
    state["counts_"] = counts = state["counts_"].copy()
    state["mean_scores_"] = state["mean_scores_"].copy()
    labels = s > 0
    start, n = 0, order.shape[0]
    while start < n:
        chunk = order[start:start + CHUNK]
        f = _row_scores(X, chunk, w)
        lo, hi = means.refs()
        both = counts[0] > 0 and counts[1] > 0
        cut, fired = chunk.shape[0], False
        for r in range(chunk.shape[0]):
            if both and ctl.observe(float(f[r]), labels[chunk[r]], lo, hi):
                cut, fired = r + 1, True
                break
        played = np.ascontiguousarray(chunk[:cut])
        cols, before = means.touched(X, played, w)
        bad = play(played)
        if bad >= 0:
            return start + bad
        means.add(X, played, labels, w, cols, before)
        ctl.t += cut
        if fired and ctl.due(state["t_"]):
            _ftrl_answer(ctl, state["t_"], wzn, counts, ftrl_weights)
        start += cut
    state["drift_"] = ctl
    return -1


def _ftrl_answer(ctl, t_round, wzn, counts, ftrl_weights):
    rows = ctl.rows_kept(counts)
    if ctl.t > rows:
        r = rows / ctl.t
        wzn[:, 1] *= r
        wzn[:, 2] *= r
        wzn[:, 0] = ftrl_weights(wzn[:, 1], wzn[:, 2])
    g = ctl.keep_factors(counts.astype(np.float64), counts)
    counts[:] = np.maximum(1, np.round(counts * g)).astype(np.int64)
    ctl.means.scale(g)
    ctl.means.resync(wzn[:, 0])
    ctl.restart(t_round, counts)


def _ftrl_one_row(d, X, s, order, wzn, play, ftrl_weights):
    """One row on the live state of a fitted FTRL-AUC (its typed one-row path): the
    score, the round (guarded by the kernel's undo log), then the signal and the answer,
    so that a row the kernel refuses leaves the controller untouched too."""
    ctl = d["drift_"]
    means = ctl.means
    i = order[0]
    a, b = X.indptr[i], X.indptr[i + 1]
    idx = X.indices[a:b]
    w = wzn[:, 0]
    before = w[idx]
    f = float(X.data[a:b] @ before)
    lo, hi = means.refs()
    counts = d["counts_"]
    both = counts[0] > 0 and counts[1] > 0
    bad = play(order)
    if bad >= 0:
        return bad
    means.add(X, order, s > 0, w, idx, before)
    ctl.t += 1
    if both and ctl.observe(f, s[i] > 0, lo, hi) and ctl.due(d["t_"]):
        _ftrl_answer(ctl, d["t_"], wzn, counts, ftrl_weights)
    return -1


def linear_auto_pass(model, state, X, s, order, pre, play):
    """``forgetting="auto"`` for the moment learners (OAUCM, OAUCS, PartialOAUCM): the
    rows in chunks, each played by two candidates (:mod:`sosl._drift_select`).

    ``play(rows, t0, st, beta)`` runs the kernel's pass over the rows ``rows`` of X on the
    state dict ``st`` with the step counter ``t0`` and the decay ``beta`` and returns the
    new counter (raising as the plain pass does). Each chunk of :data:`CHUNK` rows is
    scored first under the detector's candidate (the first chunk by ``pre``, the scores
    before the call, when that candidate leads); its rows feed the controller in order,
    and at a detection the rows up to it are played, the detector's candidate's memory
    is shortened, and the rest of the chunk waits for the next one. The same rows are
    played by the fixed factor's candidate (decay :data:`SHORT`, step counter the
    round count) and their scores at scoring time feed the selector; when it asks, the
    candidates trade places after the chunk (the learner's arrays hold the leader).
    """
    ctl = controller_for(model, state)
    if ctl.selector is None:
        ctl.selector = new_selector(state, model._state_names, ctl.label_delay)
    sel = ctl.selector
    avg = "w_avg_" in state and bool(getattr(model, "average", False))  # what it scores with
    rows = np.arange(X.shape[0], dtype=np.intp) if order is None else np.asarray(order)
    labels = s > 0
    start, n = 0, rows.shape[0]
    while start < n:
        chunk = rows[start:start + CHUNK]
        det, fix = (state, sel.shadow) if sel.detector_leads else (sel.shadow, state)
        f, ref = _linear_scores(det, X, chunk)
        if start == 0 and pre is not None and sel.detector_leads:
            f = pre[chunk]                   # the same model; the scores made for Platt
        lo, hi = float(ref[0]), float(ref[1])
        cut, fired = chunk.shape[0], False
        for r in range(chunk.shape[0]):
            if ctl.observe(float(f[r]), labels[chunk[r]], lo, hi):
                cut, fired = r + 1, True
                break
        played = np.ascontiguousarray(chunk[:cut])
        switch = select_evidence(sel, X, played, labels, state["t_"], det, fix, avg)
        t0 = ctl.t
        t1 = play(played, t0, det, 1.0)
        play(played, state["t_"], fix, SHORT)
        ctl.t = t1
        state["t_"] += t1 - t0
        if not np.isfinite(sel.shadow["w_"]).all():     # the candidate not leading diverged
            sel.restart_shadow(state, model._state_names)
        if fired:
            sel.detected(state["t_"])
        if fired and ctl.due(state["t_"]):
            g = ctl.keep_factors(det["weights_"], det["counts_"])
            det["weights_"] = det["weights_"] * g
            det["scales_"] = det["scales_"] * g           # Sigma = scale C / W unchanged
            if "w_avg_" in det:         # an average of iterates restarts with the new concept
                det["w_avg_"] = det["w_"].copy()
            ctl.restart(state["t_"], det["counts_"])
        if switch and sel.may_switch(state["t_"]):
            sel.swap(state, model._state_names, state["t_"])
        start += cut
    state["drift_"] = ctl


def _sketch_scores(state, X, rows):
    """w.x of the given rows of canonical CSR ``X`` under a sketched learner's compact
    state (columns not seen yet count 0)."""
    from ._core import _sketch
    from ._input import _canonical_csr

    whole = rows.shape[0] == X.shape[0] and (rows.shape[0] == 1 and rows[0] == 0 or bool(
        (rows == np.arange(rows.shape[0])).all()))
    Xc = X if whole else _canonical_csr(X[rows])
    f = np.empty(rows.shape[0])
    _sketch.row_scores(Xc.data, Xc.indices, Xc.indptr, state["column_map_"],
                       state["column_slots_"], state["weights_"], state["untracked_weights_"],
                       state["untracked_epochs_"], state["untracked_sums_"],
                       state["untracked_scale_"], state["untracked_epoch_"], f)
    return f


def _sketch_refs(state):
    """``(w.xbar_0, w.xbar_1)`` of a sketched learner's compact state: the tracked slots
    directly, the untracked columns through ``P_c = R h.Pv_c = N_c w.xbar_c`` there
    (eq. (C3) of :mod:`sosl._core._sketch_ref`)."""
    kt = int(state["n_slots_"])
    N = state["counts_"]
    if N[0] == 0 or N[1] == 0:
        return math.nan, math.nan
    tracked = state["compact_means_"][:, :kt] @ state["weights_"][:kt]
    RH, Pv = state["untracked_scale_"], state["untracked_lin_"]
    P = RH[0] * (Pv[:, 0] + Pv[:, 1] * RH[1] + Pv[:, 2] * RH[2])
    return float(tracked[0] + P[0] / N[0]), float(tracked[1] + P[1] / N[1])


def sketch_answer(state, g, a):
    """A sketched learner's answer to a change, on its compact state (new arrays in
    ``state``: a failed call leaves the live ones as they were).

    ``g[c] = N'_c / N_c`` (N' an integer count) shortens the memory of class c with its
    mean, covariance estimate and the weights unchanged: the sketch ``B`` (whose
    ``B'B / N`` is the covariance) times ``sqrt(g)``; the exact diagonals and the shrink
    sum (sums over the rows) times ``g``; an untracked column's raw sums ``S1, S2`` times
    ``g`` (its mean ``S1 / N`` kept) with the drift accumulator ``H_c`` divided by ``g``
    (its weight ``R (W + S1_0 H_0 + S1_1 H_1)`` kept), and the sums over those columns
    ``Pv = sum u S1_c``, ``Qm_T = sum u u' T`` (``u = (W, S1_0, S1_1)``) in step.
    ``a = T' / T`` restarts the step counter of the ``1/(lam t)`` schedule from T to T':
    the lazy scale is ``R = 1/t``, so ``R`` becomes ``1 / T'`` and ``W`` and ``H`` (and
    the W-parts of Pv, Qm) are multiplied by ``a``, which keeps every weight.
    """
    g = np.asarray(g, dtype=np.float64)
    r = np.sqrt(g)
    state["counts_"] = np.round(state["counts_"] * g).astype(np.int64)
    state["sketches_"] = state["sketches_"] * r[:, None, None]
    for name in ("scatter_diag_", "sketch_diag_"):
        state[name] = state[name] * g[:, None]
    state["shrinkage_"] = state["shrinkage_"] * g
    state["untracked_sums_"] = state["untracked_sums_"] * g[None, :, None]
    D = np.array([a, g[0], g[1]])                 # u -> D u
    RH = state["untracked_scale_"].copy()
    if a != 1.0:
        RH[0] = RH[0] / a
        state["untracked_weights_"] = state["untracked_weights_"] * a
    RH[1:] = RH[1:] * a / g                       # h -> h / D, as u -> D u
    state["untracked_scale_"] = RH
    state["untracked_lin_"] = state["untracked_lin_"] * (g[:, None] * D[None, :])
    T = np.array([g[0], g[1], g[0] ** 2, g[1] ** 2])        # S2_0, S2_1, S1_0^2, S1_1^2
    state["untracked_quad_"] = state["untracked_quad_"] * (
        T[:, None, None] * D[None, :, None] * D[None, None, :])


def sketch_auto_pass(model, state, X, s, order, play, inverse_schedule):
    """``forgetting="auto"`` for SketchedOAUCM: the rows (canonical CSR ``X``) in chunks,
    as :func:`linear_auto_pass`; the scores from the compact state
    (``model._chunk_scores``), the references from :func:`_sketch_refs`, the answer
    :func:`sketch_answer`. ``play(rows)`` runs the plain pass on ``rows`` with the
    step counter in ``state["t_"]``; this sets it to the controller's counter for the
    call and restores the learner's round count after."""
    ctl = controller_for(model, state)
    rows = np.arange(X.shape[0], dtype=np.intp) if order is None else np.asarray(order)
    labels = s > 0
    start, n = 0, rows.shape[0]
    while start < n:
        chunk = rows[start:start + CHUNK]
        f = _sketch_scores(state, X, chunk)
        lo, hi = _sketch_refs(state)
        cut, fired = chunk.shape[0], False
        for r in range(chunk.shape[0]):
            if ctl.observe(float(f[r]), labels[chunk[r]], lo, hi):
                cut, fired = r + 1, True
                break
        t_round = state["t_"]
        state["t_"] = ctl.t
        try:
            play(np.ascontiguousarray(chunk[:cut]))
        finally:
            played = state["t_"] - ctl.t
            ctl.t = state["t_"]
            state["t_"] = t_round + played
        if fired and ctl.due(state["t_"]):
            counts = state["counts_"]
            g = ctl.keep_factors(counts.astype(np.float64), counts)
            kept = np.maximum(1, np.round(counts * g))
            g = np.where(counts > 0, kept / np.maximum(counts, 1), 1.0)
            t_new = min(ctl.t, ctl.rows_kept(counts))
            sketch_answer(state, g, t_new / ctl.t if inverse_schedule and ctl.t > 0 else 1.0)
            ctl.restart(state["t_"], state["counts_"])
        start += cut
    state["drift_"] = ctl
