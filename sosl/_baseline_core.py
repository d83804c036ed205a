"""What the linear baselines of :mod:`sosl.baselines` share: the state of a weight vector
and an intercept, scoring (dense and CSR rows), the pass on copies, and the round in place
on a row's columns of the row-local learners (Perceptron, PA-I)."""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np
from numpy.typing import ArrayLike
from sklearn.utils._param_validation import Interval

from ._base import _ONE_ROW, BaseOnlineAUC, _model_lock
from ._capabilities import Capabilities, Domain
from ._coef import LinearCoef
from ._core._calibration import platt_steps
from ._input import _all_finite, _canonical_row, _finite_array

__all__: list[str] = []

_POSITIVE = Interval(Real, 0, None, closed="neither")
_NON_NEGATIVE = Interval(Real, 0, None, closed="left")
_COMMON = {"shuffle": ["boolean"], "random_state": ["random_state"]}
_MAX_MEMORY = Interval(Integral, 1, None, closed="left")


class _LinearBaseline(LinearCoef, BaseOnlineAUC):
    """Scores ``X @ w_ + intercept_``; subclasses define the state and ``_pass``.

    The learners with ``_sparse_input = True`` receive CSR matrices in ``_pass`` and run
    the ``*_pass_csr`` kernels on them.
    """

    capabilities = Capabilities(
        domains=(Domain("counts_", "count"), Domain("buffer_fill_", "nonneg"),
                 Domain("step_sum_", "nonneg"), Domain("grad_sq_", "nonneg"),
                 Domain("covariances_", "psd")),
        # learn_one: the pass on copies, without the general path; its work row is a cache
        one_row_by_copy=True, scratch=("_one_row_work",))

    _parameter_constraints: dict = dict(_COMMON)
    #: state arrays the pass writes in place (the others are replaced after the pass)
    _in_place_names: tuple | None = None

    def _pass(self, state, X, s, order):  # pragma: no cover - overridden
        raise NotImplementedError

    def _backup_names(self, X):
        # t_ == 0 only for a state created by the current call (every committed state has
        # seen a row): if the pass fails, the call's transaction discards it whole
        if self.t_ == 0:
            return ()
        return self._state_names if self._in_place_names is None else self._in_place_names

    def _run_pass(self, state, X, s, order):
        try:
            self._pass(state, X, s, order)
        except FloatingPointError as err:
            raise FloatingPointError(f"{type(self).__name__}: {err}. The model was left "
                                     "unchanged.") from None

    @property
    def intercept_(self):
        """Offset of the scores, an array of shape (1,) (as scikit-learn's binary linear
        classifiers have it).

        Assigning a real number or an array of shape (1,) stores it as a new array of
        shape (1,) (the next rounds start from it); anything else raises and leaves the
        model as it was.
        """
        b = self.__dict__.get("intercept_")
        if b is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute "
                                 "'intercept_' (it exists after fit, partial_fit or "
                                 "learn_one)")
        return b

    @intercept_.setter
    def intercept_(self, value):
        name = type(self).__name__
        v = np.asarray(value)
        if v.dtype.kind not in "iuf":
            raise TypeError(f"{name}.intercept_ must be a real number, got dtype {v.dtype}")
        if v.shape not in ((), (1,)):
            raise ValueError(f"{name}.intercept_ must be a number or an array of shape "
                             f"(1,), got shape {v.shape}")
        if not np.isfinite(v).all():
            raise ValueError(f"{name}.intercept_ must be finite, got {v.item()!r}")
        if not (type(value) is np.ndarray and value.dtype == np.float64
                and value.shape == (1,)):
            value = v.astype(np.float64).reshape(1)         # a new array: no caller alias
        self.__dict__["intercept_"] = value

    def _decision(self, X):
        return X @ self.w_ + self.intercept_[0]      # under the base's errstate (_raw_scores)

    # -- one dense row: a typed round on the live state (OAM, SOLAM, AdaOAM) ---------------
    def _typed_row(self, x):
        """Whether ``x`` suits a typed one-row round: a finite float64 1-D C-contiguous
        row of ``n_features_in_`` values (anything else takes the round on copies)."""
        return (type(x) is np.ndarray and x.dtype == np.float64 and x.ndim == 1
                and x.shape[0] == self.__dict__["n_features_in_"] and x.flags.c_contiguous
                and _finite_array(x))

    def _one_row_scratch(self, n):
        """Scratch of ``n`` doubles for the typed one-row round, kept across calls (not
        pickled)."""
        work = self.__dict__.get("_one_row_work")
        if work is None or work.shape[0] != n:
            work = np.empty(n)
            self.__dict__["_one_row_work"] = work
        return work

    def _csr_round_in_place(self, x, s, cols, copied=()):
        """The round of a canonical one-row CSR matrix ``x`` on the live ``w_``, for a pass
        that writes ``w_`` only at the columns ``cols`` (with repeats, in any order) and the
        state arrays ``copied``, which it gets as copies: those entries of ``w_`` are saved
        first, so a call costs O(len(cols)) and the copies, not the O(p) copy and
        finiteness scan of the round on copies (at p = 2^18 that copy was most of a
        hashed-text row's cost). The pre-score, the pass and the Platt step are the general
        path's, bit for bit; if the pass fails or leaves a written value non-finite, the
        saved entries go back, the copies are dropped and False is returned (the general
        path then reports it)."""
        d = self.__dict__
        w = d["w_"]
        saved = w[cols]                               # a copy of the entries the pass writes
        state = {name: d[name].copy() for name in copied}
        state["w_"] = w
        state["t_"] = d["t_"]
        sign = np.array([s])
        pre = self._raw_scores(x)
        try:
            self._run_pass(state, x, sign, _ONE_ROW)
        except (FloatingPointError, ValueError, ArithmeticError):
            w[cols] = saved
            return False
        if not (_finite_array(w[cols]) and all(
                _all_finite(v) for k, v in state.items() if k != "w_")):
            w[cols] = saved
            return False
        t = state.pop("t_")
        d.update(state)
        self._commit_one_row(pre, s, t)
        return True

    def _commit_one_row(self, pre, s, t=None):
        """The end of a typed one-row round: the counters and the Platt step on the
        pre-round score (as the general path)."""
        d = self.__dict__
        d["t_"] = d["t_"] + 1 if t is None else t
        d["n_seen_"] += 1
        if math.isfinite(pre[0]):
            platt_steps(pre, np.array([s]), d["calibration_"])

    def score_one(self, x: ArrayLike) -> float:
        d = self.__dict__
        with _model_lock(d):
            if (d.get("_params_ok") and "w_" in d and type(x) is np.ndarray
                    and x.ndim == 1 and x.dtype == np.float64
                    and x.shape[0] == d["n_features_in_"]):
                # a NaN or inf in x (or an overflow) makes f non-finite: the general path
                # then raises the error that names it
                f = float(np.dot(x, d["w_"])) + float(d["intercept_"][0])
                if math.isfinite(f):
                    return f
            elif d.get("_params_ok") and "w_" in d and _canonical_row(x, d["n_features_in_"]):
                # a canonical one-row CSR matrix: the products of its non-zero entries only
                # x is a CSR matrix here (_canonical_row does not narrow the type)
                f = (float(np.dot(x.data, d["w_"][x.indices]))  # type: ignore[union-attr]
                     + float(d["intercept_"][0]))
                if math.isfinite(f):
                    return f
            return super().score_one(x)

    score_one.__doc__ = BaseOnlineAUC.score_one.__doc__


class _RowLocalBaseline(_LinearBaseline):
    """A baseline whose round on a row writes ``w_`` at that row's columns only (Perceptron,
    PA-I): ``learn_one`` on a canonical one-row CSR matrix plays the pass on the live ``w_``
    after saving just those entries (``_csr_round_in_place``), O(nnz) a call."""

    def _learn_one_in_place(self, x, s):
        if type(x) is np.ndarray or not _canonical_row(x, self.__dict__.get("n_features_in_")):
            return super()._learn_one_in_place(x, s)
        return self._csr_round_in_place(x, s, x.indices)
