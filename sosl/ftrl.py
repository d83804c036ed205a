"""FTRL-AUC: first-order online AUC maximization in O(k) per round on sparse rows."""
from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from sklearn.exceptions import NotFittedError
from sklearn.utils._param_validation import Interval, Options, StrOptions

from . import drift as _drift
from ._autoscale import RowScaleMixin
from ._base import BaseOnlineAUC, _model_lock
from ._capabilities import Capabilities, Domain
from ._coef import LinearCoef
from ._core import _ftrl
from ._core._calibration import platt_steps
from ._core._numeric import ftrl_weights
from ._ftrl_state import STATE_NAMES, effective_params, init_state, intercept, wzn_of
from ._input import _canonical_csr, _canonical_layout, _canonical_row, _DenseRow, _finite_array
from ._typing import Auto, Detector, RandomState

__all__ = ["FTRLAUC"]

_ONE_ROW = np.zeros(1, dtype=np.intp)       # the pass order of a one-row call
_NO_ENTRY = np.zeros(0, dtype=np.intp)      # see FTRLAUC._backup_names


class FTRLAUC(RowScaleMixin, LinearCoef, BaseOnlineAUC):
    """FTRL-AUC: the square-loss AUC saddle point solved by FTRL-Proximal, O(k) per round.

    The pairwise square loss of AUC, written as a saddle point in (w, a, b, alpha) whose
    per-instance term has, for fixed (a, b, alpha), a gradient in w along the instance,

        c_t x_t,  c_t = 2 (1 - p) (w.x_t - b - 1) for positives,
                  c_t = 2 p (w.x_t - a + 1) for negatives,

    with p the fraction of positives and a, b the mean scores of the two classes. The
    weights follow FTRL-Proximal per coordinate (per-coordinate learning rates
    ``gamma / (beta + sqrt(n_i))``, optional L1 and L2), so a round touches only the k
    stored entries of its row and the memory is O(p).

    Parameters
    ----------
    gamma : float or "auto", default="auto"
        FTRL learning rate (> 0). ``"auto"``: a step that does not depend on the scale of
        the features. With s the l2 norm of the first non-zero row of a fit, floored at
        1 (see :mod:`sosl._autoscale`), the learner runs with ``gamma = 0.5 / s`` and
        ``beta``, ``l1``, ``l2`` multiplied by s, s and s^2: exactly the pass of these
        numbers, and the pass of ``gamma=0.5`` on the rows divided by s (weights divided
        by s), so multiplying every feature by c changes no score's order (for rows of
        norm at least 1). An explicit
        number is used as given (the algorithm of the paper with that rate).
    beta : float, default=1.0
        FTRL stabilizer added to the root of the squared-gradient sum (>= 0); in units
        of the rows scaled to s = 1 under ``gamma="auto"``.
    l1 : float, default=0.0
        L1 weight (>= 0); larger values give sparser weights (scaled as ``beta``).
    l2 : float, default=0.0
        L2 weight (>= 0) (multiplied by s^2 under ``gamma="auto"``).
    shuffle : bool, default=False
        Visit the rows of each batch in a random order.
    random_state : int, RandomState or None, default=None
        Seed of the shuffling.
    forgetting : 1.0 or "auto", default=1.0
        1.0: the learner as published. "auto": a change detected in the rows' scores
        against the classes' mean scores (:mod:`sosl.drift`) shortens the memory: the
        FTRL sums are scaled as if fewer rounds had been played and the classes' mean
        scores (and ``counts_``, their counts) keep only the recent rows' weight; the
        detections are listed in ``drift_.detections``.
    detector : object or None, default=None
        With ``forgetting="auto"``, the change detector (``update(x)``,
        ``drift_detected``; river's ``drift.ADWIN()`` fits); None is
        :class:`sosl.drift.Cusum`.
    label_delay : int, default=0
        With ``forgetting="auto"``, the rows by which labels lag the scores, as in
        :class:`sosl.OAUCM`.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features)
        The FTRL-Proximal weights after the last round, shaped as in scikit-learn's binary
        linear classifiers: a view of ``w_`` (writes go through, and an assigned array of
        shape (1, n_features) or (n_features,) is copied in; a round recomputes each
        coordinate it touches from ``z_`` and ``sq_grad_``).
    w_ : ndarray of shape (n_features,)
        The same weights, the 1-D state array the typed pass updates in place.
    intercept_ : ndarray of shape (1,)
        ``-(mean_scores_[0] + mean_scores_[1]) / 2`` once both classes are seen (else 0):
        the midpoint of the mean scores the two classes received online; serves
        ``predict`` only (AUC ignores it). No per-class feature sums are kept, so the
        state is three arrays of n_features.
    z_, sq_grad_ : ndarray of shape (n_features,)
        FTRL state: accumulated linear term and sum of squared gradients. ``w_``,
        ``z_`` and ``sq_grad_`` are the three columns of one (n_features, 3) array (strided
        views), so that a round reads and writes one cache line per stored entry.
    mean_scores_ : ndarray of shape (2,)
        Running mean of the scores each class received on arrival (b, a).
    counts_ : ndarray of shape (2,)
        Instances seen per class.
    row_scale_ : float or None
        s, the row scale of ``gamma="auto"`` (None with a number).
    t_, n_seen_, classes_, n_features_in_
        As in :class:`sosl.OAUCM`.

    Notes
    -----
    The mean scores a and b are running averages of the scores instances received on
    arrival (the lazy estimate that keeps the round O(k)), and the score of a round uses
    the weights left by the previous one. See :mod:`sosl._core._ftrl_ref`.

    A call on a fitted model updates the arrays in place and copies nothing of size
    n_features: the typed pass checks every value it writes and keeps an undo log of the
    entries it overwrites (O(k) per row), so a batch that overflows is rolled back and
    reported with the model unchanged. A batch with more stored entries than there are
    features runs on one copy of the state instead (the log would be the larger).

    References
    ----------
    B. Zhou, Y. Ying, S. Skiena. Online AUC Optimization for Sparse High-Dimensional
    Datasets. ICDM 2020. H. B. McMahan et al. Ad click prediction: a view from the
    trenches. KDD 2013. Y. Ying, L. Wen, S. Lyu. Stochastic online AUC maximization.
    NeurIPS 2016.

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> from sosl.ftrl import FTRLAUC
    >>> from sosl.metrics import auc
    >>> X = sp.random(400, 1000, density=0.01, random_state=0, format="csr")
    >>> y = (X[:, :50].sum(axis=1).A1 > 0).astype(int)
    >>> model = FTRLAUC(gamma=0.5).fit(X, y)
    >>> bool(auc(y, model.decision_function(X)) > 0.9)
    True
    """

    capabilities = Capabilities(
        merge="ftrl", merge_weights=False, parallel=("local",), fixed_shapes=True,
        domains=(Domain("counts_", "count"), Domain("sq_grad_", "nonneg")),
        # CSR rows; _one_row_score serves predict_proba_one under the base's one hold
        sparse_input=True, one_row_score=True)

    _parameter_constraints = {
        "gamma": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "beta": [Interval(Real, 0, None, closed="left")],
        "l1": [Interval(Real, 0, None, closed="left")],
        "l2": [Interval(Real, 0, None, closed="left")],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
        "forgetting": [Options(Real, {1.0}), StrOptions({"auto"})],
        "detector": "no_validation",          # duck-typed: sosl.drift.check_detector
        "label_delay": [Interval(Integral, 0, None, closed="left")],
    }
    _state_names = STATE_NAMES

    def __init__(self, gamma: float | Auto = "auto", beta: float = 1.0, l1: float = 0.0,
                 l2: float = 0.0, shuffle: bool = False, random_state: RandomState = None,
                 forgetting: float | Auto = 1.0, detector: Detector | None = None,
                 label_delay: int = 0) -> None:
        self.gamma = gamma
        self.beta = beta
        self.l1 = l1
        self.l2 = l2
        self.shuffle = shuffle
        self.random_state = random_state
        self.forgetting = forgetting
        self.detector = detector
        self.label_delay = label_delay

    def _check_params(self):
        if self.detector is not None and self.forgetting != "auto":
            raise ValueError("detector is used by forgetting='auto' only; got forgetting="
                             f"{self.forgetting!r}")
        _drift.check_label_delay(self)
        _drift.check_detector(self.detector)

    def _auto_scaled(self):
        return isinstance(self.gamma, str)

    def _layout(self):
        return self._scale_layout()

    effective_params = staticmethod(effective_params)

    def _params(self):
        return self.effective_params(
            {"gamma": self.gamma, "beta": self.beta, "l1": self.l1, "l2": self.l2},
            self._scale_layout())

    def _init_state(self, n_features):
        return init_state(n_features)

    def _backup_names(self, X):
        # A fresh state (fit, first partial_fit) needs no copies: a failed call discards
        # it and the transaction restores the previous attributes. Otherwise the pass runs
        # on the live arrays and guards them itself (see _play: an undo log of the entries
        # it writes, O(k) per row, or a pass on a new copy when the batch holds more
        # entries than there are columns). So the base has no entry of the p-vectors to
        # save, hence the empty index arrays: no np.unique of the columns, no gather.
        if self.t_ == 0:
            return ()
        return {"w_": _NO_ENTRY, "z_": _NO_ENTRY, "sq_grad_": _NO_ENTRY}

    _wzn = staticmethod(wzn_of)

    def _play(self, state, X, s, order, pre=None):
        """The kernel on canonical CSR rows; returns the position in ``order`` of the row
        that made the state non-finite (-1 if none), after which the state is as before.

        On a fitted model the pass keeps an undo log of the entries it writes (at most as
        many as there are columns, so the log is never larger than the state); a longer
        batch, or a state whose three p-vectors are not the columns of one array (after a
        copy or unpickling), runs on a new (p, 3) copy, which replaces them in ``state``
        only: the arrays it came from are not written. The kernel itself puts the class
        counts and the mean scores back. ``pre``: None, or an array receiving each played
        row's decision value before its own round (the kernel's ``pre``; not with
        ``forgetting="auto"``).
        """
        wzn = self._wzn(state)
        fitted = state["t_"] > 0
        auto = self.forgetting == "auto"
        undo = None
        # "auto" plays a batch in chunks (sosl.drift): a failed chunk cannot undo the ones
        # before it, so the batch runs on a copy
        if wzn is None or (fitted and (X.nnz > wzn.shape[0] or auto and order.shape[0] > 1)):
            wzn = np.column_stack((state["w_"], state["z_"], state["sq_grad_"]))
            state["w_"], state["z_"], state["sq_grad_"] = wzn[:, 0], wzn[:, 1], wzn[:, 2]
        elif fitted:
            undo = np.empty((X.nnz, 3))
        gamma, beta, l1, l2 = self._params()

        def play(rows):
            state["t_"], bad = _ftrl.ftrl_pass(
                X.data, X.indices, X.indptr, s, rows, wzn, state["counts_"],
                state["mean_scores_"], state["t_"], l1, l2, beta, gamma, undo, pre)
            return bad

        if auto:                                  # drift detected and answered
            return _drift.ftrl_auto_play(
                self, state, X, s, order, wzn, play,
                lambda z, n: ftrl_weights(z, n, l1, l2, beta, gamma))
        return play(order)

    # -- progressive validation over a block: the row-by-row result in one typed pass -----
    def _learn_block_prequential(self, X, y):
        """Score each row of ``(X, y)`` with the model as it stands just before the row,
        then learn it; return the scores, an array of shape (n_samples,).

        The same as ``decision_function`` on each row, then ``learn_one`` on it, row after
        row: the same model at the end (weights, class counts and means, Platt state), the
        same scores (bit for bit on CSR rows, whose scores the kernel sums as
        ``decision_function`` does; dense rows are scored by the kernel over their non-zero
        entries, which may differ from the dense product in the last bits). The rows are
        taken in their given order whatever ``shuffle`` says, as ``learn_one`` takes them.
        Needs a fitted model (the first row of a stream has no model to score it). The
        validation and the transaction are those of ``partial_fit``; a row that makes the
        state non-finite leaves the whole model as before the call (FloatingPointError).
        Under ``forgetting="auto"`` the rows run one at a time through those two calls.
        """
        d = self.__dict__
        lock = d.get("_lock_")
        with lock if lock is not None else _model_lock(d):
            if "classes_" not in d:
                raise NotFittedError(f"This {type(self).__name__} instance is not fitted yet: "
                                     "the first row of a stream is learned by learn_one or "
                                     "partial_fit, without a score.")
            if self.forgetting == "auto":        # the drift answer plays its own chunks
                return self._prequential_rows(X, y)
            out: list[np.ndarray] = []
            self._transaction(self._block_prequential, X, y, out)
            return out[0]

    def _prequential_rows(self, X, y):
        X, y = self._validate_Xy(X, y, reset=False)
        dense = isinstance(X, np.ndarray)
        pre = np.empty(X.shape[0])
        for i in range(X.shape[0]):
            pre[i] = self.decision_function(X[i:i + 1])[0]
            self.learn_one(X[i] if dense else X[i:i + 1], y[i])
        return pre

    def _block_prequential(self, X, y, out):
        self._recheck_hyper()
        X, y = self._validate_Xy(X, y, reset=False)
        s = self._signs(y)
        n = X.shape[0]
        X = _canonical_csr(X)
        pre = np.empty(n)
        state = {name: getattr(self, name) for name in self._state_names + ("t_", "n_seen_")}
        state["calibration_"] = self.calibration_.copy()
        self._run_pass(state, X, s, np.arange(n, dtype=np.intp), pre=pre)
        state["n_seen_"] += n
        d = self.__dict__
        self._forget_stepper()
        d.update(state)
        platt_steps(pre, s, d["calibration_"])   # finite: a non-finite score stops the pass
        out.append(pre)

    def _run_pass(self, state, X, s, order, pre=None):
        X = _canonical_csr(X)
        bad = self._play(state, X, s, order) if pre is None else \
            self._play(state, X, s, order, pre)
        if bad >= 0:
            raise FloatingPointError(
                f"{type(self).__name__}: the state became non-finite during the pass, at "
                f"row {int(order[bad])} of the batch (the step size is probably too large "
                "for this data; try a smaller gamma, or scale the features). The model was "
                "left unchanged.")

    # -- one CSR row at a time: the pass in place on the live state --------------------------
    def _learn_one_in_place(self, x, s):
        """One canonical CSR row, or one dense float64 row, on the live state, O(k) for its
        k stored (non-zero) entries.

        The kernel guards the round itself (its undo log restores the row's columns, the
        class counts and the mean scores if anything came out non-finite); False is then
        returned so that the general path reports the problem on the unchanged model. The
        pre-score for the Platt scaling and the pass are those of the general path (for a
        dense row: its dense score, then the pass on its non-zero entries, as
        ``_canonical_csr`` gives them): the result equals ``partial_fit`` on the row bit
        for bit. A dense row that is not finite has a non-finite score (a NaN or an
        infinity times any weight, 0 included, is not finite, nor is a sum holding one) and
        is left to the general path, which refuses it.
        """
        p = self.n_features_in_
        if type(x) is np.ndarray:
            if not (x.dtype == np.float64 and x.ndim == 1 and x.shape[0] == p
                    and x.flags.c_contiguous):
                return False
            X = x.reshape(1, p)
        elif _canonical_row(x, p):
            X = x
        else:
            return False
        with np.errstate(over="ignore", invalid="ignore"):
            f = self._decision(X)
        if not _finite_array(f):
            return False
        d = self.__dict__
        if self._wzn(d) is None:                 # _play would replace the arrays: not here
            return False
        sign = np.array([s])
        if self._play(d, _DenseRow(x) if X is not x else x, sign, _ONE_ROW) >= 0:
            return False
        d["n_seen_"] += 1
        platt_steps(f, sign, d["calibration_"])
        return True

    # -- one row scored: decision_function's expression on the live state, no re-validation
    def _one_row_score(self, x):
        """The score of one row by the general path's expression, or None when the model
        or the row does not suit this path (the general path then runs and says why).

        Taken only by a fitted model whose hyper-parameters are checked (``_params_ok``),
        for a dense float64 C-contiguous 1-D row of the model's width (``decision_function``'s
        dense product on it as a one-row matrix), or a one-row CSR matrix of float64 values
        and int32 indices in canonical format (sorted, no duplicates), of the model's width
        with its first and last index inside it (scipy does not check that when a matrix is
        built from its arrays), while the state is one (p, 3) array (the kernel of
        ``decision_function`` on that row): the same bits either way. The values are not
        checked here: a NaN or an infinity among them makes the score non-finite (the sum
        of the products then holds it), and a non-finite score returns None, as does an
        overflow.
        """
        d = self.__dict__
        if not (d.get("_params_ok") and "w_" in d):
            return None
        p = d["n_features_in_"]
        if type(x) is np.ndarray:
            if not (x.dtype == np.float64 and x.ndim == 1 and x.shape[0] == p
                    and x.flags.c_contiguous):
                return None
            with np.errstate(over="ignore", invalid="ignore"):
                f = float((x.reshape(1, p) @ d["w_"])[0]) + self._intercept()
            return f if math.isfinite(f) else None
        if not _canonical_layout(x, p):
            return None
        wzn = self._wzn(d)
        if wzn is None:
            return None
        f = float(_ftrl.ftrl_scores(x.data, x.indices, x.indptr, wzn, self._intercept())[0])
        return f if math.isfinite(f) else None

    def score_one(self, x: ArrayLike) -> float:
        d = self.__dict__
        lock = d.get("_lock_")
        with lock if lock is not None else _model_lock(d):
            f = self._one_row_score(x)
            return super().score_one(x) if f is None else f

    score_one.__doc__ = BaseOnlineAUC.score_one.__doc__

    def __setstate__(self, state):
        # pickling stores w_, z_ and sq_grad_ as three arrays: put them back into one
        # (p, 3) array at load time (O(p), as the load itself), not in the first call
        super().__setstate__(state)
        d = self.__dict__
        if "z_" in d and self._wzn(d) is None:
            wzn = np.column_stack((d["w_"], d["z_"], d["sq_grad_"]))
            d["w_"], d["z_"], d["sq_grad_"] = wzn[:, 0], wzn[:, 1], wzn[:, 2]

    @property
    def intercept_(self):
        """Midpoint of the classes' online mean scores (0 until both classes are seen), as
        an array of shape (1,)."""
        return np.array([self._intercept()])

    def _intercept(self):
        return intercept(self.counts_, self.mean_scores_)

    def _decision(self, X):
        if (sp.issparse(X) and X.format == "csr" and X.indices.dtype == np.int32
                and X.indptr.dtype == np.int32):
            wzn = self._wzn(self.__dict__)
            if wzn is not None:                  # typed, O(nnz): the weights are strided
                return _ftrl.ftrl_scores(X.data, X.indices, X.indptr, wzn, self._intercept())
        return np.asarray(X @ self.w_).ravel() + self._intercept()
