"""The pass plumbing of :class:`sosl._base.BaseOnlineAUC`: the transaction around a call,
the validated weights, one pass over validated rows on copies of what it may spoil (with
the prequential Platt steps), the one-row round on copies, and the scores of validated rows.

A mixin of the base class, so that ``_base`` keeps the contract (hooks, public API,
hyper-parameters, snapshots) and this module the mechanics every call runs through; the
learners override none of it but the hooks the base documents.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state

from ._capabilities import Capabilities
from ._core._calibration import platt_steps
from ._input import _all_finite, _canonical_row, _finite_array, _refuse_complex

__all__: list[str] = []

#: the sample order of a one-row pass
_ONE_ROW = np.zeros(1, dtype=np.intp)
_ONE_ROW.flags.writeable = False

#: rows of the batch (the last ones of the pass) a fresh model's Platt scaling learns from
_IN_SAMPLE_ROWS = 10_000


def _rng_snapshot(random_state):
    """The internal state of a generator instance (None for seeds and None)."""
    if isinstance(random_state, np.random.RandomState):
        return random_state.get_state()
    if isinstance(random_state, np.random.Generator):
        return random_state.bit_generator.state
    return None


def _rng_restore(random_state, snapshot):
    if snapshot is None:
        return
    if isinstance(random_state, np.random.RandomState):
        random_state.set_state(snapshot)
    else:
        random_state.bit_generator.state = snapshot


def _blocks(order, n_features, max_values=1 << 21):
    """Consecutive pieces of ``order`` of at most ~16 MB once densified."""
    step = max(1, max_values // max(n_features, 1))
    for a in range(0, order.shape[0], step):
        yield order[a:a + step]


class _PassPlumbing:
    """Mixin of :class:`sosl._base.BaseOnlineAUC` (module docstring); reads the learner's
    hooks and ``capabilities`` record."""

    if TYPE_CHECKING:        # provided by BaseOnlineAUC and the learner
        capabilities: ClassVar[Capabilities]
        calibration_: np.ndarray

        @property
        def _state_names(self) -> tuple[str, ...]: ...

        def _run_pass(self, state, X, s, order, *args, **kwargs) -> None: ...
        def _decision(self, X) -> np.ndarray: ...
        def _backup_names(self, X) -> tuple | dict: ...
        def _sparse_mode(self) -> bool | str: ...
        def _forget_stepper(self) -> None: ...

    def _learn_one_by_copy(self, x, s):
        """The general path's round on one row, with only the work a valid row needs: the
        pre-score, the pass on copies of every state array, the finiteness check, the
        commit and the Platt step, in the general path's order (so the same bits)."""
        d = self.__dict__
        p = d.get("n_features_in_")
        if type(x) is np.ndarray:
            if not (x.dtype == np.float64 and x.ndim == 1 and x.shape[0] == p
                    and x.flags.c_contiguous and _finite_array(x)):
                return False
            X = x.reshape(1, p)
        elif self._sparse_mode() is True and _canonical_row(x, p):
            X = x
        else:
            return False
        state = {}
        for name in self._state_names:
            value = d[name]
            state[name] = value.copy() if isinstance(value, np.ndarray) else value
        state["t_"] = d["t_"]
        state["n_seen_"] = d["n_seen_"] + 1
        state["calibration_"] = d["calibration_"].copy()
        sign = np.array([s])
        pre = self._raw_scores(X)
        try:
            self._run_pass(state, X, sign, _ONE_ROW)
        except (FloatingPointError, ValueError, ArithmeticError):
            return False                         # the general path reports it
        for value in state.values():
            if not _all_finite(value):
                return False
        d.pop("_stepper_", None)                 # bound to the old arrays
        d.update(state)
        if math.isfinite(pre[0]):
            platt_steps(pre, sign, d["calibration_"])
        return True

    def _transaction(self, fn, *args):
        """Run ``fn``; on any exception restore the attributes and the generator. Either
        way the record's ``call_scratch`` attributes are dropped when it ends."""
        saved = dict(self.__dict__)
        snapshot = _rng_snapshot(getattr(self, "random_state", None))
        try:
            fn(*args)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(saved)
            _rng_restore(getattr(self, "random_state", None), snapshot)
            raise
        finally:
            for name in self.capabilities.call_scratch:
                self.__dict__.pop(name, None)
        return self

    def _order(self, n):
        if getattr(self, "shuffle", False):
            rng = check_random_state(getattr(self, "random_state", None))
            return rng.permutation(n).astype(np.intp)
        return np.arange(n, dtype=np.intp)

    def _check_weights(self, sample_weight, n, fresh=False):
        """The validated weights as a float64 array, or None when they are all 1 (the
        unweighted pass, bit for bit). Refuses negative or non-finite weights, a wrong
        length, all-zero weights on a call that starts a model (``fresh``: nothing to
        learn from; a fitted model takes them as a no-op), and, for a learner without a
        weighted form, weights other than 0 and 1."""
        if sample_weight is None:
            return None
        if np.isscalar(sample_weight) and not isinstance(sample_weight, (str, bytes)):
            sw = np.full(n, sample_weight, dtype=np.float64)
        else:
            sw = np.asarray(sample_weight)
            _refuse_complex(sw)
            if sw.dtype.kind not in "biuf":
                raise TypeError(f"sample_weight must hold real numbers, got dtype {sw.dtype}")
            sw = sw.astype(np.float64).ravel()
            if np.asarray(sample_weight).ndim > 1 or sw.shape[0] != n:
                raise ValueError(f"sample_weight has shape {np.shape(sample_weight)}; "
                                 f"expected ({n},), one weight per row")
        if not (np.isfinite(sw).all() and (sw >= 0).all()):
            raise ValueError("sample_weight must be finite and non-negative")
        if fresh and not (sw > 0).any():
            raise ValueError("Sample weights must contain at least one non-zero number: a "
                             "model cannot start from rows that are all left out.")
        if (sw == 1.0).all():
            return None
        if not self.capabilities.weighted and not ((sw == 0.0) | (sw == 1.0)).all():
            raise ValueError(
                f"{type(self).__name__} has no weighted form of its update: sample_weight may "
                "only hold 0 (leave the row out) and 1. The second-order learners (OAUCM, "
                "OAUCS) take any non-negative weight.")
        return sw

    def _learn(self, X, s, fresh=False, sw=None, final=False):
        order = self._order(X.shape[0]) if getattr(self, "shuffle", False) else None
        if sw is not None:
            if order is None:
                order = np.arange(X.shape[0], dtype=np.intp)
            order = order[sw[order] > 0]             # a zero weight: the row left out
            if not self.capabilities.weighted or (sw[order] == 1.0).all():
                sw = None
            if order.shape[0] == 0:
                return
        self._learn_validated(X, s, order, fresh, sw, final)

    def _learn_validated(self, X, s, order=None, fresh=False, sw=None, final=False):
        """One pass over validated rows; copies only what ``_backup_names`` names.

        ``fresh``: the state was created in this call, so the old one is restored by the
        transaction on failure and nothing needs copying. The Platt scaling of
        ``predict_proba`` learns from the scores of the model *before* this call
        (prequential); a fresh model has none, so it learns from the scores of the model
        after the pass (in-sample). ``final``: the rows of a ``fit``, all there will be (a
        learner with ``capabilities.final_fit_pass`` is told so on its last pass call).
        """
        identity = order is None                  # rows in their given order
        if not identity and order.shape[0] < X.shape[0]:    # rows left out by a zero weight
            X, s = X[order], s[order]
            sw = None if sw is None else sw[order]
            identity = True
        if identity:
            # a learner whose pass reads None as "every row, in order" is spared the index
            # array (n values of fresh memory, page-faulted in on every call)
            order = None if self.capabilities.pass_takes_identity and not sp.issparse(X) \
                else np.arange(X.shape[0], dtype=np.intp)
        pre = None if fresh else self._raw_scores(X)
        backup = () if fresh else (self._state_names if sw is not None
                                   else self._backup_names(X))
        state, partial, saved = self._pass_state(backup)
        copied = set(backup)
        in_pass = pre is not None and self.capabilities.platt_in_pass and not sp.issparse(X)
        try:
            self._play_pass(state, X, s, order, sw, pre if in_pass else None,
                            final and self.capabilities.final_fit_pass)
            state["n_seen_"] += X.shape[0]
            self._check_finite_state(state, partial, copied, fresh)
        except BaseException:
            for name, idx in partial.items():
                getattr(self, name)[idx] = saved[name]
            raise
        self._forget_stepper()                   # bound to the old arrays
        self.__dict__.update(state)              # fitted attributes only: no re-arming needed
        if not in_pass:
            self._platt_after_pass(X, s, order, identity, pre)

    def _pass_state(self, backup):
        """The state the pass runs on: copies of the arrays ``backup`` names (and of the
        calibration), the live arrays otherwise; a dict ``backup`` names arrays the pass
        changes only at the given entries (saved, restored on failure: returned as
        ``partial`` and ``saved``), every other name of it runs on a copy."""
        partial = {k: v for k, v in backup.items() if v is not None} \
            if isinstance(backup, dict) else {}
        copied = set(backup)
        state: dict[str, Any] = {}
        for name in self._state_names + ("t_", "n_seen_", "calibration_"):
            value = getattr(self, name)
            if isinstance(value, np.ndarray) and name not in partial and (
                    name in copied or name == "calibration_"):
                value = value.copy()
            state[name] = value
        saved = {name: value[idx].copy() for name, idx in partial.items()
                 for value in (state[name],)}
        return state, partial, saved

    def _play_pass(self, state, X, s, order, sw, pre, final=False):
        """``_run_pass`` over the rows (with the Platt steps inside when ``pre`` is given;
        a "blocks" learner's sparse rows densified a block at a time; ``final=True`` to
        the last call when ``final``)."""
        extra = () if sw is None else (sw,)
        last = {"final": True} if final else {}
        if pre is not None:
            self._run_pass(state, X, s, order, *extra, pre=pre)
        elif self._sparse_mode() == "blocks" and sp.issparse(X):
            pieces = list(_blocks(order, X.shape[1]))
            for i, rows in enumerate(pieces):
                self._run_pass(state, X[rows].toarray(), np.ascontiguousarray(s[rows]),
                               np.arange(rows.shape[0], dtype=np.intp),
                               *(() if sw is None else (np.ascontiguousarray(sw[rows]),)),
                               **(last if i == len(pieces) - 1 else {}))
        else:
            self._run_pass(state, X, s, order, *extra, **last)

    def _check_finite_state(self, state, partial, backup, fresh):
        """FloatingPointError naming the first state value the pass made non-finite (of
        the copies, the written entries of ``partial`` arrays, and the scalars)."""
        for name, value in state.items():
            if name in partial and value is getattr(self, name):
                value = value[partial[name]]
            if (name in backup or fresh or not isinstance(value, np.ndarray)) \
                    and not _all_finite(value):
                raise FloatingPointError(
                    f"{type(self).__name__}: the state '{name}' became non-finite during "
                    "the pass (the step size is probably too large for this data; try a "
                    "smaller eta or a larger lam, or scale the features). The model was "
                    "left unchanged."
                )

    def _platt_after_pass(self, X, s, order, identity, pre):
        """The Platt steps of the rows' scores before the call (``pre``) or, for a fresh
        model, after it (in-sample, on the last rows of the pass), in pass order."""
        if pre is None and X.shape[0] > _IN_SAMPLE_ROWS:
            # in-sample scaling of a fresh model: its last rows suffice (the curvature
            # prior has settled long before); scoring them all would cost a second pass
            if identity:                          # views, not copies
                X, s = X[-_IN_SAMPLE_ROWS:], s[-_IN_SAMPLE_ROWS:]
            else:
                order = order[-_IN_SAMPLE_ROWS:]
                X, s = X[order], s[order]
            identity = True
        f = self._raw_scores(X) if pre is None else pre
        if f.shape[0] > 1:
            if not identity:
                f, s = f[order], s[order]
            keep = np.isfinite(f)
            if not keep.all():
                f, s = f[keep], s[keep]
            f, s = np.ascontiguousarray(f), np.ascontiguousarray(s)
        elif not np.isfinite(f[0]):
            return
        platt_steps(f, s, self.calibration_)

    def _raw_scores(self, X):
        """Scores, non-finite where they overflow (without a floating-point warning)."""
        if not self.capabilities.decision_warns:
            return self._scores(X)
        with np.errstate(over="ignore", invalid="ignore"):
            return self._scores(X)

    def _scores(self, X):
        """``_decision`` on validated rows, densified block by block for "blocks" learners."""
        if self._sparse_mode() == "blocks" and sp.issparse(X):
            out = np.empty(X.shape[0])
            for rows in _blocks(np.arange(X.shape[0], dtype=np.intp), X.shape[1]):
                out[rows] = self._decision(X[rows].toarray())
            return out
        return np.asarray(self._decision(X), dtype=np.float64).ravel()
