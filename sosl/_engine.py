"""The command line's engine: the default learner (FTRL-AUC) on a stream, without scikit-learn.

Design. ``sosl learn`` spends its time in two places it cannot avoid -- the reader and the
typed pass -- and, through the estimator classes, in one it can: importing scikit-learn and
SciPy (most of a short run's CPU time and most of its memory). The engine holds FTRL-AUC's
state arrays itself and plays the rows through the same typed pass the estimator calls
(:func:`sosl._core._ftrl.ftrl_pass`, with ``pre=`` for progressive validation), with the
numbers, the fresh state, the intercept and the row scale of ``gamma="auto"`` taken from
the functions the estimator uses (:mod:`sosl._ftrl_state`, :mod:`sosl._autoscale`) and the
Platt steps from :mod:`sosl._core._calibration`. So there is one implementation of the
learner; what the engine leaves out is the estimator's API around it (validation of
arbitrary input, transactions, locks). It writes :class:`sosl.state.LearnerState` to
``sosl.io``'s format, so a model file written by the engine loads with :func:`sosl.io.load`
as the same fitted :class:`sosl.FTRLAUC` the estimator path gives (the command line's
tests check both paths give the same predictions, report and state bit for bit).

The engine is an accelerator, not a second front door: it declines (``accepts`` and
``from_state`` return False / None) whatever it does not cover -- parameters other than
``gamma``, ``beta``, ``l1``, ``l2``, values the estimator would refuse, model states it
cannot check cheaply -- and the command line then runs the estimator, whose validation
gives the error message. The width of indexed LIBSVM input may grow as rows arrive: the
state arrays grow with it (capacity doubled, the unused columns zero, as a column that
no row has touched), so no pre-scan of the file is needed.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._autoscale import csr_row_scale
from ._capabilities import check_calibration
from ._core import _ftrl
from ._core._calibration import platt_steps
from ._ftrl_state import DEFAULTS, NAME, STATE_NAMES, effective_params, intercept

__all__ = ["FTRLEngine", "NAME", "signs"]

_NUMERIC = ("gamma", "beta", "l1", "l2")


def _number_ok(name: str, value: Any) -> bool:
    if name == "gamma" and value == "auto":
        return True
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if not math.isfinite(value):
        return False
    return value > 0 if name == "gamma" else value >= 0


class FTRLEngine:
    """FTRL-AUC's state and pass over CSR rows given as arrays (labels 0/1)."""

    def __init__(self, params: dict) -> None:
        self.params = {**DEFAULTS, **params}
        self.fitted = False
        self.p = 0
        self.wzn = np.zeros((0, 3))
        self.counts = np.zeros(2, dtype=np.int64)
        self.means = np.zeros(2)
        self.t = 0
        self.n_seen = 0
        self.calibration = np.array([1.0, 1.0])
        self.layout: dict = {}
        self.numbers = (0.0, 0.0, 0.0, 0.0)

    # -- what the engine covers ------------------------------------------------------------
    @staticmethod
    def accepts(params: dict) -> bool:
        """Whether the engine runs a model with these ``--param`` values (others, and
        values the estimator refuses, go to the estimator)."""
        return all(k in _NUMERIC and _number_ok(k, v) for k, v in params.items())

    @classmethod
    def from_state(cls, state: Any) -> FTRLEngine | None:
        """The engine holding a saved FTRL-AUC state, or None when the state is not one
        it covers or does not pass its checks (the estimator's ``from_state`` then reports
        what is wrong)."""
        if state.learner != NAME or set(state.params) != set(DEFAULTS):
            return None
        params = dict(state.params)
        if any(params[k] != DEFAULTS[k] for k in DEFAULTS if k not in _NUMERIC) \
                or not all(_number_ok(k, params[k]) for k in _NUMERIC):
            return None
        p = int(state.n_features)
        classes = np.asarray(state.classes)
        if p < 1 or classes.dtype.kind not in "iu" or classes.tolist() != [0, 1]:
            return None
        arrays = state.arrays
        if set(arrays) != set(STATE_NAMES):
            return None
        for name in STATE_NAMES:
            a = arrays[name]
            want = (p,) if name in ("w_", "z_", "sq_grad_") else (2,)
            kind = "i" if name == "counts_" else "f"
            if not (isinstance(a, np.ndarray) and a.shape == want and a.dtype.kind == kind
                    and a.dtype.itemsize == 8 and np.isfinite(a).all()):
                return None
        if (arrays["counts_"] < 0).any() or (arrays["sq_grad_"] < 0).any():
            return None
        auto = isinstance(params["gamma"], str)
        if set(state.layout) != ({"row_scale"} if auto else set()):
            return None
        try:
            calibration = check_calibration(state.calibration, "the state")
        except ValueError:
            return None
        if int(state.t) < 0 or int(state.n_seen) < 0 or state.feature_names is not None:
            return None
        if auto:
            s = state.layout["row_scale"]
            if isinstance(s, bool) or not isinstance(s, (int, float)) \
                    or not (math.isfinite(s) and s >= 1.0):
                return None
        eng = cls(params)
        eng.layout = {"row_scale": float(state.layout["row_scale"])} if auto else {}
        eng.numbers = effective_params(eng.params, eng.layout)
        eng.p = p
        eng.wzn = np.column_stack([arrays["w_"], arrays["z_"], arrays["sq_grad_"]])
        eng.counts = arrays["counts_"].astype(np.int64)
        eng.means = arrays["mean_scores_"].astype(np.float64)
        eng.t, eng.n_seen = int(state.t), int(state.n_seen)
        eng.calibration = calibration
        eng.fitted = True
        return eng

    # -- width -------------------------------------------------------------------------------
    def reserve(self, p: int) -> None:
        """Make the model ``p`` columns wide (a model only grows): new columns start at
        zero, as columns no row has touched."""
        if p <= self.p:
            return
        if p > self.wzn.shape[0]:
            wzn = np.zeros((max(p, 2 * self.wzn.shape[0]), 3))
            wzn[:self.wzn.shape[0]] = self.wzn
            self.wzn = wzn
        self.p = p

    # -- the pass ------------------------------------------------------------------------------
    def first(self, data, indices, indptr, s) -> None:
        """Start the model with row 0 of the CSR arrays (``s``: the rows' label signs,
        :func:`signs`): the row scale, the fresh state, the row's round, and the Platt
        step on its score after the round (a fresh model has no earlier score), as the
        estimator's first ``learn_one``."""
        auto = isinstance(self.params["gamma"], str)
        one = indptr[:2]
        self.layout = {"row_scale": csr_row_scale(data, one)} if auto else {}
        self.numbers = effective_params(self.params, self.layout)
        self._pass(data, indices, indptr, s, np.zeros(1, dtype=np.intp), None)
        self.n_seen += 1
        self.fitted = True
        f = self.scores(data, indices, one, check=False)
        if math.isfinite(f[0]):
            platt_steps(f, s[:1], self.calibration)

    def prequential(self, data, indices, indptr, s, lo: int, hi: int) -> np.ndarray:
        """Rows ``lo:hi``, each scored by the model just before its own round, then
        learned; returns the scores (``FTRLAUC._learn_block_prequential``)."""
        pre = np.empty(hi - lo)
        self._pass(data, indices, indptr, s, np.arange(lo, hi, dtype=np.intp), pre)
        self.n_seen += hi - lo
        platt_steps(pre, s[lo:hi], self.calibration)
        return pre

    def learn(self, data, indices, indptr, s, pre) -> None:
        """All rows learned in one pass, ``pre`` their scores before it (``partial_fit``
        after ``decision_function``)."""
        self._pass(data, indices, indptr, s, np.arange(s.shape[0], dtype=np.intp), None)
        self.n_seen += s.shape[0]
        platt_steps(np.ascontiguousarray(pre), s, self.calibration)

    def scores(self, data, indices, indptr, check=True) -> np.ndarray:
        """The decision values of the CSR rows."""
        f = _ftrl.ftrl_scores(data, indices, indptr, self.wzn,
                              intercept(self.counts, self.means))
        if check and not np.isfinite(f).all():
            raise FloatingPointError(
                f"{NAME}: some scores are not finite (the input is too large for this "
                "model's weights; scale the features).")
        return f

    def _pass(self, data, indices, indptr, s, order, pre):
        gamma, beta, l1, l2 = self.numbers
        t, bad = _ftrl.ftrl_pass(data, indices, indptr, s, order, self.wzn, self.counts,
                                 self.means, self.t, l1, l2, beta, gamma, None, pre)
        if bad >= 0:
            raise FloatingPointError(
                f"{NAME}: the state became non-finite during the pass, at row "
                f"{int(order[bad])} of the batch (the step size is probably too large for "
                "this data; try a smaller gamma, or scale the features).")
        self.t = t

    # -- the model file --------------------------------------------------------------------
    def state(self) -> Any:
        """The model as a :class:`sosl.state.LearnerState` of :class:`sosl.FTRLAUC`."""
        from .state import LearnerState

        p = self.p
        return LearnerState(
            learner=NAME, params=dict(self.params), classes=np.array([0, 1]), n_features=p,
            layout=dict(self.layout),
            arrays={"w_": self.wzn[:p, 0].copy(), "z_": self.wzn[:p, 1].copy(),
                    "sq_grad_": self.wzn[:p, 2].copy(), "counts_": self.counts.copy(),
                    "mean_scores_": self.means.copy()},
            t=self.t, n_seen=self.n_seen, calibration=self.calibration.copy())


def signs(y):
    """+1.0 for the label 1, -1.0 for 0 (the estimator's signs of ``classes_ = [0, 1]``)."""
    s = y.astype(np.float64)
    s *= 2.0
    s -= 1.0
    return s
