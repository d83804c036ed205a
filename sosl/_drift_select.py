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
:data:`Z` standard errors of the gain, and only once ``start`` rows have given evidence.
The horizon and the start grow with the delay (``max(5000, 6 d)`` and
``max(5000, 2 d)`` rows): evidence that arrives ``d`` rows late describes the stream of
``d`` rows ago, and a concept that recurs within a few delays would otherwise have the
short memory lead in the phase where it pays least (it scores every recurrence with the
concept that just ended, for the ``d`` rows before its labels arrive).

Cost per row: a second round of the learner (the candidate not leading), two scores and
two comparisons with rings of :data:`RING` and ``RING // 10`` scores (O(p + RING)).
"""

from __future__ import annotations

import copy
import math

import numpy as np

#: the fixed forgetting factor of the second candidate (a memory of about 100 rows)
SHORT = 0.99
#: negative rows a positive row's evidence compares with (a tenth of it for the negatives)
RING = 500
#: the lead changes at a gain of more than this (AUC units) ...
MARGIN = 0.002
#: ... and of more than this many standard errors
Z = 3.0


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
        self.start = max(5000, 2 * d)
        self.stride = max(1, d // 16)
        self.detector_leads = True
        self.switches: list[int] = []
        self.rings = [np.full((2, RING), np.nan), np.full((2, RING // 10), np.nan)]
        self.filled = [0, 0]
        self.auc = np.zeros((2, 2))          # [class, candidate]: the AUC estimates
        self.gain = np.zeros(2)              # [class]: candidate 1 minus candidate 0
        self.gain2 = np.zeros(2)
        self.n = np.zeros(2)                 # rows of each class that gave evidence
        self.seen = 0
        self.snaps: list[tuple[int, np.ndarray, float, np.ndarray, float]] = []

    def __deepcopy__(self, memo):
        new = copy.copy(self)
        new.shadow = {k: (v.copy() if isinstance(v, np.ndarray) else v)
                      for k, v in self.shadow.items()}
        new.switches = list(self.switches)
        new.rings = [r.copy() for r in self.rings]
        new.filled = list(self.filled)
        new.auc, new.gain, new.gain2, new.n = (self.auc.copy(), self.gain.copy(),
                                               self.gain2.copy(), self.n.copy())
        new.snaps = list(self.snaps)          # entries are never written after creation
        return new

    # -- the candidates' scores at the rows' scoring time ------------------------------
    def scoring_weights(self, t_round: int, cand: tuple) -> tuple:
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
    def observe(self, scores: np.ndarray, positive: bool) -> bool:
        """One labelled row's scores under the two candidates at its scoring time;
        True if the candidate not leading should now lead."""
        if not (math.isfinite(scores[0]) and math.isfinite(scores[1])):
            return False
        k = 1 if positive else 0
        other = self.rings[1 - k]
        m = min(self.filled[1 - k], other.shape[1])
        if m >= 5:
            o = other[:, :m]
            s = scores[:, None]
            win = ((s > o) if positive else (s < o)).mean(axis=1) + 0.5 * (s == o).mean(axis=1)
            total = self.n[0] + self.n[1] + 1.0
            h = max(1.0, self.horizon * (self.n[k] + 1.0) / total)
            a = 1.0 / min(self.n[k] + 1.0, h)
            self.n[k] += 1.0
            self.auc[k] += a * (win - self.auc[k])
            e = win[1] - win[0]
            self.gain[k] += a * (e - self.gain[k])
            self.gain2[k] += a * (e * e - self.gain2[k])
        ring = self.rings[k]
        ring[:, self.filled[k] % ring.shape[1]] = scores
        self.filled[k] += 1
        self.seen += 1
        if self.seen < self.start or self.n[0] <= 50 or self.n[1] <= 5:
            return False
        est = 0.5 * (self.auc[0] + self.auc[1])
        lead = 0 if self.detector_leads else 1
        gain = float(est[1 - lead] - est[lead])
        if gain <= MARGIN:
            return False
        total = self.n[0] + self.n[1]
        var = 0.0
        for c in range(2):
            n_eff = min(self.n[c], max(1.0, self.horizon * self.n[c] / total))
            var += max(0.0, self.gain2[c] - self.gain[c] ** 2) / n_eff
        return gain > Z * math.sqrt(0.25 * var)

    def swap(self, state: dict, names: tuple, t_round: int) -> None:
        """The other candidate leads: its arrays into ``state`` (the learner's), the
        learner's into ``shadow``."""
        for name in names:
            state[name], self.shadow[name] = self.shadow[name], state[name]
        self.detector_leads = not self.detector_leads
        self.switches.append(int(t_round))


def new_selector(state: dict, names: tuple, label_delay: int) -> MemorySelector:
    """A selector whose second candidate starts as a copy of ``state``."""
    shadow = {n: (state[n].copy() if isinstance(state[n], np.ndarray) else state[n])
              for n in names}
    return MemorySelector(shadow, label_delay)
