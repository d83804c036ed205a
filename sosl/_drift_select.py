"""The choice of memory behind ``forgetting="auto"`` of the moment learners.

A change detector answers changes; a concept that turns a little every row (a rotating
hyperplane) has no change point, and what it needs is a short memory all the time. So
``forgetting="auto"`` of OAUC-M, OAUC-S and PartialOAUCM keeps two candidates in lockstep
on the same rows: the learner whose memory the detector sets (:mod:`sosl.drift`), and
the same learner with the fixed factor :data:`SHORT`. The model's arrays hold the
candidate that leads; the other one is ``selector.shadow``. Both learn every row, so the
one not leading is ready when the evidence turns.

Evidence. Each labelled row is scored by both candidates as they stood when the row was
scored: ``label_delay`` rounds earlier (weight snapshots, one every ``stride`` rounds),
or before its round with no delay. A positive row's evidence for a candidate is the
fraction of the last :data:`RING` negative rows (their scores under the same candidate,
also taken at scoring time) it outscores; a negative row's, the fraction of the last
``RING // 10`` positive rows that outscore it: each an estimate of the candidate's AUC.
Per class, an exponentially weighted mean over the class's share of ``horizon`` rows
estimates each candidate's AUC and the gain of one over the other, with its variance.

Rule. The other candidate takes the lead when its estimated AUC (the mean of the two
classes' estimates) exceeds the leader's by more than :data:`MARGIN` and by more than
:data:`Z` standard errors of the gain, only once ``start`` rows have given evidence, and
(from the detector's candidate to the short memory) not within ``2 d`` rounds after a
change the detector saw, answered or not. The horizon and the start grow with the delay
(``max(5000, 6 d)`` and ``max(5000, d)`` rows): evidence that arrives ``d`` rows late
describes the stream of ``d`` rows ago, and a concept that recurs within a few delays
would otherwise have the short memory lead in the phase where it pays least (it scores
every recurrence with the concept that just ended, for the ``d`` rows before its labels
arrive); a detection says such a change happened.

Cost per row: a second round of the learner (the candidate not leading), two scores and
two comparisons with rings of :data:`RING` and ``RING // 10`` scores (O(p + RING)).
"""

from __future__ import annotations

import copy
import math
from typing import Any

import numpy as np

#: the fixed forgetting factor of the second candidate (a memory of about 100 rows)
SHORT = 0.99
#: negative rows a positive row's evidence compares with (a tenth of it for the negatives)
RING = 500
#: state of the stream, not of a candidate: kept by the learner, never swapped (the
#: largest |x| seen bounds every row both candidates played)
SHARED = ("max_abs_",)
#: the lead changes at a gain of more than this (AUC units) ...
MARGIN = 0.002
#: ... and of more than this many standard errors
Z = 4.0


class MemorySelector:
    """The two candidates of ``forgetting="auto"`` and the evidence between them.

    Parameters
    ----------
    shadow : dict of str to array
        The state arrays of the candidate not leading (at the start, copies of the
        learner's own).
    label_delay : int
        Rounds between a row's scoring and its label (the learner's ``label_delay``).

    Attributes
    ----------
    detector_leads : bool
        True while the learner's arrays hold the detector's candidate (``shadow`` then
        holds the fixed factor's), False after an odd number of switches.
    switches : list of int
        The learner's round count (``t_``) at each change of the lead.
    """

    def __init__(self, shadow: dict, label_delay: int = 0) -> None:
        d = int(label_delay)
        self.shadow = shadow
        self.delay = d
        self.horizon = max(5000, 6 * d)
        self.start = max(5000, d)
        self.stride = max(1, d // 16)
        self.detector_leads = True
        self.hold_until = 0                  # no lead to the short memory before this round
        self.switches: list[int] = []
        self.rings = [np.full((2, RING), np.nan), np.full((2, RING // 10), np.nan)]
        self.filled = [0, 0]
        self.auc = [[0.0, 0.0], [0.0, 0.0]]  # [class][candidate]: the AUC estimates
        self.gain = [0.0, 0.0]               # [class]: candidate 1 minus candidate 0
        self.gain2 = [0.0, 0.0]
        self.n = [0.0, 0.0]                  # rows of each class that gave evidence
        self.seen = 0
        self.snaps: list[tuple[int, np.ndarray, float, np.ndarray, float]] = []
        self._steppers: tuple | None = None

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_steppers"] = None             # typed helpers bound to arrays: rebuilt
        return state

    def __deepcopy__(self, memo):
        new = copy.copy(self)
        new._steppers = None
        new.shadow = {k: (v.copy() if isinstance(v, np.ndarray) else v)
                      for k, v in self.shadow.items()}
        new.switches = list(self.switches)
        new.rings = [r.copy() for r in self.rings]
        new.filled = list(self.filled)
        new.auc = [list(self.auc[0]), list(self.auc[1])]
        new.gain, new.gain2, new.n = list(self.gain), list(self.gain2), list(self.n)
        new.snaps = list(self.snaps)          # entries are never written after creation
        return new

    # -- the candidates' scores at the rows' scoring time ------------------------------
    def scoring_weights(self, t_round: int, cand: tuple) -> tuple | None:
        """``(w_0, mid_0, w_1, mid_1)`` of the two candidates (0: the detector's, 1: the
        fixed factor's) as they stood ``label_delay`` rounds before round ``t_round``,
        or None when no snapshot is that old; ``cand`` holds them now (a snapshot is
        taken every ``stride`` rounds)."""
        if self.delay == 0:
            return cand
        if not self.snaps or t_round - self.snaps[-1][0] >= self.stride:
            self.snaps.append((t_round, cand[0].copy(), cand[1], cand[2].copy(), cand[3]))
        target = t_round - self.delay
        keep = 0
        for i, snap in enumerate(self.snaps):  # the newest snapshot no later than target
            if snap[0] <= target:
                keep = i
        if self.snaps[0][0] > target:
            return None
        del self.snaps[:keep]                  # older ones are never needed again
        _, w0, m0, w1, m1 = self.snaps[0]
        return w0, m0, w1, m1

    # -- evidence and the rule -----------------------------------------------------------
    def observe(self, scores, positive: bool) -> bool:
        """One labelled row's scores under the two candidates at its scoring time (a
        pair of floats); True if the candidate not leading should now lead."""
        s0, s1 = float(scores[0]), float(scores[1])
        if not (math.isfinite(s0) and math.isfinite(s1)):
            return False
        k = 1 if positive else 0
        other = self.rings[1 - k]
        m = min(self.filled[1 - k], other.shape[1])
        n = self.n
        if m >= 5:
            # sum of sign(s - o) = (rows below s) - (rows above s): the fraction of the
            # other class's rows ranked correctly against this row, ties counting half,
            # is 1/2 + that / 2m for a positive row and 1/2 - that / 2m for a negative one
            net = np.sign(np.array([[s0], [s1]]) - other[:, :m]).sum(axis=1)
            half = 0.5 / m if positive else -0.5 / m
            win0, win1 = 0.5 + half * float(net[0]), 0.5 + half * float(net[1])
            h = max(1.0, self.horizon * (n[k] + 1.0) / (n[0] + n[1] + 1.0))
            a = 1.0 / min(n[k] + 1.0, h)
            n[k] += 1.0
            auc = self.auc[k]
            auc[0] += a * (win0 - auc[0])
            auc[1] += a * (win1 - auc[1])
            e = win1 - win0
            self.gain[k] += a * (e - self.gain[k])
            self.gain2[k] += a * (e * e - self.gain2[k])
        ring = self.rings[k]
        col = self.filled[k] % ring.shape[1]
        ring[0, col] = s0
        ring[1, col] = s1
        self.filled[k] += 1
        self.seen += 1
        if self.seen < self.start or n[0] <= 50 or n[1] <= 5:
            return False
        gain = 0.5 * (self.auc[0][1] + self.auc[1][1] - self.auc[0][0] - self.auc[1][0])
        if not self.detector_leads:
            gain = -gain
        if gain <= MARGIN:
            return False
        total = n[0] + n[1]
        var = 0.0
        for c in range(2):
            n_eff = min(n[c], max(1.0, self.horizon * n[c] / total))
            var += max(0.0, self.gain2[c] - self.gain[c] ** 2) / n_eff
        return gain > Z * math.sqrt(0.25 * var)

    def steppers(self, model: Any, names: tuple) -> tuple:
        """Typed one-row steppers ``(lead, other)`` bound to the learner's arrays and to
        the shadow's, each with its candidate's decay (the learner's calibration goes to
        the leader's, a scratch one to the other's); rebuilt when an array was replaced."""
        d = model.__dict__
        sh = self.shadow
        # every path that replaces the state arrays replaces w_ (and the scatter, the
        # weights) with them: those identify the arrays a stepper is bound to
        arrays = (d["w_"], d["scatter_"], d["weights_"], sh["w_"], sh["scatter_"],
                  sh["weights_"], d["calibration_"])
        c = self._steppers
        if c is not None and c[0] == self.detector_leads and len(c[1]) == len(arrays) \
                and all(a is b for a, b in zip(c[1], arrays)):
            return c[2], c[3]
        beta = (1.0, SHORT) if self.detector_leads else (SHORT, 1.0)
        lead = model._stepper_on(d, beta[0], d["calibration_"])
        other = model._stepper_on(self.shadow, beta[1], np.array([0.0, 0.0]))
        self._steppers = (self.detector_leads, arrays, lead, other)
        return lead, other

    def restart_shadow(self, state: dict, names: tuple) -> None:
        """The candidate not leading diverged (non-finite weights): it restarts as a copy
        of the leader."""
        for n in names:
            v = state[n]
            self.shadow[n] = v.copy() if isinstance(v, np.ndarray) else v

    def detected(self, t_round: int) -> None:
        """The detector saw a change at round ``t_round`` (answered or not): the
        evidence of the next ``2 label_delay`` rounds straddles it (rows scored before
        the change, labelled after), so the short memory may not take the lead from the
        detector's candidate until then."""
        self.hold_until = max(self.hold_until, int(t_round) + 2 * self.delay)

    def may_switch(self, t_round: int) -> bool:
        """Whether the lead may change at round ``t_round`` (see :meth:`detected`)."""
        return not self.detector_leads or t_round >= self.hold_until

    def swap(self, state: dict, names: tuple, t_round: int) -> None:
        """The other candidate leads: its arrays into ``state`` (the learner's), the
        learner's into ``shadow``."""
        for name in names:
            if name not in SHARED:
                state[name], self.shadow[name] = self.shadow[name], state[name]
        self.detector_leads = not self.detector_leads
        self.switches.append(int(t_round))


def new_selector(state: dict, names: tuple, label_delay: int) -> MemorySelector:
    """A selector whose second candidate starts as a copy of ``state``."""
    shadow = {n: (state[n].copy() if isinstance(state[n], np.ndarray) else state[n])
              for n in names}
    return MemorySelector(shadow, label_delay)


def candidate(st: dict, avg: bool = False) -> tuple[np.ndarray, float]:
    """The weights a moment learner's state scores with (the averaged iterates when
    ``avg``) and the midpoint its scores subtract."""
    w = st["w_avg_"] if avg else st["w_"]
    if st["counts_"][0] > 0 and st["counts_"][1] > 0:
        return w, float(0.5 * (st["means_"][0] @ w + st["means_"][1] @ w))
    return w, 0.0


def select_evidence(sel: MemorySelector, X, rows: np.ndarray, labels: np.ndarray,
                    t_round: int, det: dict, fix: dict, avg: bool) -> bool:
    """Feed the selector the rows' scores under both candidates at their scoring time
    (the chunk's start, or ``label_delay`` rounds earlier); True if the lead changes."""
    w0, m0 = candidate(det, avg)
    w1, m1 = candidate(fix, avg)
    then = sel.scoring_weights(t_round, (w0, m0, w1, m1))
    if then is None:
        return False
    w0, m0, w1, m1 = then
    Xr = X[rows]
    f = np.empty((rows.shape[0], 2))
    f[:, 0] = Xr @ w0 - m0
    f[:, 1] = Xr @ w1 - m1
    switch = False
    for r in range(rows.shape[0]):
        if sel.observe(f[r], bool(labels[rows[r]])):
            switch = True
    return switch
