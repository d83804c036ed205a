"""Sketched second-order online AUC learner for sparse, high-dimensional data: SketchedOAUCM."""
from __future__ import annotations

from numbers import Integral, Real
from typing import Literal

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from sklearn.utils._param_validation import Interval, Options, StrOptions
from sklearn.utils.validation import check_is_fitted

from . import drift as _drift
from ._autoscale import RowScaleMixin
from ._base import BaseOnlineAUC, _model_lock
from ._capabilities import Capabilities, Domain
from ._core import _sketch
from ._core._blas import one_blas_thread
from ._core._codes import Loss, Schedule, SketchFamily
from ._input import _canonical_csr
from ._typing import Auto, Detector, RandomState

__all__ = ["SketchedOAUCM"]

#: whether the one-row path saves the sketch parts it may write (False: the tests' mutant)
_ONE_ROW_SAVES_SKETCH = [True]
#: whether its Platt step takes the score before the round (False: the tests' mutant)
_ONE_ROW_SCORES_FIRST = [True]


_LOSSES = {"m": int(Loss.LOSS_M), "s": int(Loss.LOSS_S)}
_FAMILIES = {"fd": int(SketchFamily.FAMILY_FD), "fd_diag": int(SketchFamily.FAMILY_FD_DIAG)}
#: the slot count of the kernel when ``max_columns=None`` (never reached: every column fits)
_UNCAPPED = 2 ** 62
#: lambda of ``lam="auto"`` on rows of unit row scale (multiplied by s^2)
AUTO_LAM = 1e-3
#: the column arrays (one entry per distinct column seen) and the slot arrays (one per
#: tracked column), each grown along its last axis
_COLUMN_ARRAYS = ("column_counts_", "column_slots_", "untracked_weights_", "untracked_epochs_",
                  "untracked_sums_")
_SLOT_ARRAYS = ("weights_", "compact_means_", "sketches_", "scatter_diag_", "sketch_diag_",
                "slot_columns_")


def _bundle(state, nslots, epoch):
    """The state arrays of ``state`` (an estimator's ``__dict__`` or a pass's copy) as the
    kernel's ``SketchState`` bundle, with the one-value arrays ``nslots`` and ``epoch``."""
    return _sketch.SketchState(
        state["weights_"], state["compact_means_"], state["sketches_"], state["sketch_rows_"],
        state["counts_"], state["scatter_diag_"], state["sketch_diag_"], state["shrinkage_"],
        state["slot_columns_"], nslots, state["column_counts_"], state["column_slots_"],
        state["untracked_weights_"], state["untracked_epochs_"], state["untracked_sums_"],
        state["untracked_lin_"], state["untracked_quad_"], state["untracked_scale_"], epoch)


class SketchedOAUCM(RowScaleMixin, BaseOnlineAUC):
    """OAUC-M (or OAUC-S) with frequent-directions sketches of the class covariances.

    The round of :class:`sosl.OAUCM`, with each class covariance replaced by a rank-r
    sketch over at most K tracked columns (the most frequent; ``max_columns``) and an
    exact diagonal elsewhere, so that memory is O(r K + m) and a round costs O(r K + nnz)
    amortised for m distinct features seen so far, instead of O(p^2). With
    ``mu = y_t w.(x_t - xbar_t)`` and ``s2 = w' Sigma_t w``, the loss of round t is

        L_t(w) = lam/2 ||w||^2 + psi(mu, s2),   Sigma_t ~ B'B / N  (+ a diagonal),

    with psi_M (``loss="m"``, eq. 8) or psi_S (``loss="s"``, eq. 3), minimized by online
    gradient descent with step ``1/(lam t)`` or a constant ``eta``. Each class keeps its
    exact mean and count and a frequent-directions sketch ``B`` of the rows
    ``sqrt((N-1)/N) (x - xbar_old)`` (their outer products add up to the centered scatter
    exactly, so the sketch is the only approximation); ``B`` holds up to ``2 rank`` rows
    and is shrunk to ``rank`` when full, which guarantees
    ``||N Sigma - B'B||_2 <= ||A - A_k||_F^2 / (rank + 1 - k)`` for every ``k <= rank``.

    Parameters
    ----------
    lam : float or "auto", default="auto"
        Tikhonov weight lambda (> 0 with ``eta=None``; >= 0 with a constant step).
        ``"auto"``: ``lam = 1e-3 s^2`` for s the l2 norm (floored at 1) of the first
        non-zero row of a fit (see :mod:`sosl._autoscale`): the loss is a function of the scores
        ``w.x`` and lambda weighs ``||w||^2``, so with the step ``1/(lam t)`` multiplying
        every feature by c divides the weights by c and changes no score. An explicit
        number is used as given.
    eta : float or None, default=None
        None: the step 1/(lam t) of Theorem 6; a positive float: a constant step.
    rank : int, default=32
        Sketch rank r (the sketch holds up to 2r rows per class). Once r is at least the
        number of instances seen no shrink has happened and the learner equals
        :class:`sosl.OAUCM` (``loss="m"``) or :class:`sosl.OAUCS` (``loss="s"``).
    loss : {"m", "s"}, default="m"
        psi_M (second-order hinge, eq. 8) or psi_S (square, eq. 3).
    sketch : {"fd_diag", "fd"}, default="fd_diag"
        ``"fd"``: Sigma ~ B'B / N. ``"fd_diag"``: frequent directions plus the exact
        diagonal of the residual, Sigma ~ (B'B + diag(diag(A'A) - diag(B'B))) / N, which
        keeps every feature's own variance exact. Measured at rank 32 in
        ``benchmarks/bench_highdim.py`` (5 folds) the two are within 0.002 AUC on all four
        data sets (fd_diag ahead by 0.002 on w8a, fd ahead by less than 0.001 on the text
        and Dorothea data, all within one fold standard deviation); fd_diag is the default
        for its exact per-feature variances at the same cost.
    max_columns : int, "auto" or None, default="auto"
        K, the most columns the sketch covers (its *tracked* set: the columns stored in the
        most rows, with hysteresis, see Notes). The other columns seen keep their exact
        variance only (a diagonal covariance) and cost O(1) on the rounds where they hold
        a value, so a round costs O(r K + nnz) amortised instead of O(r m). ``"auto"``:
        ``8 * rank``. A round's sketch work is about ``7 r K`` flops (two products with
        the up to 2r sketch rows, and the shrink's ``4 r^2 K`` every r rows) on top of a
        fixed ``~72 r^2`` (the ``2r x 2r`` eigenproblem every r rows); at ``K = 8 r`` the two
        are of one order, so a smaller K saves little time while a larger one costs in
        proportion (timings in the performance page of the documentation). None: no cap
        (every column is tracked, cost O(r m)). With K at least the number of distinct
        columns seen the learner is the uncapped one, operation for operation.
    shuffle : bool, default=False
        Visit the rows of each batch in a random order.
    random_state : int, RandomState or None, default=None
        Seed of the shuffling.
    forgetting : 1.0 or "auto", default=1.0
        1.0: every instance counts alike. "auto": a change detected in how far the rows
        score from their class's mean score shortens the memory, as in
        :class:`sosl.OAUCM` (:mod:`sosl.drift`): each class's count is cut to its share
        of the rows kept, with the sketch, the exact diagonals and the untracked
        columns' sums scaled so that means, covariance estimate and weights stay, and
        the ``1/(lam t)`` schedule restarts from that count (the lazy scale of the
        untracked weights rescaled to match). ``learn_one`` then takes the general path.
    detector, label_delay
        With ``forgetting="auto"``, as in :class:`sosl.OAUCM`.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features)
        The weights, shaped as in scikit-learn's binary linear classifiers (computed on
        access from the compact state, so read-only: the learner keeps no p-long weight
        vector to write into).
    intercept_ : ndarray of shape (1,)
        ``-coef_[0] @ (means_[0] + means_[1]) / 2`` once both classes are seen (else 0).
    means_ : ndarray of shape (2, n_features)
        Class means (computed on access).
    counts_ : ndarray of shape (2,)
        Instances seen per class.
    sketches_ : ndarray of shape (2, 2 rank, capacity)
        The sketches ``B`` over the tracked columns, in slot order (rows
        ``sketch_rows_[c]`` and slots ``n_slots_`` in use; ``slot_columns_[k]`` is the
        compact column held by slot k).
    shrinkage_ : ndarray of shape (2,)
        Sum of the shrinks per class, an upper bound on ``||N Sigma - B'B||_2``.
    row_scale_ : float or None
        s, the row scale of ``lam="auto"`` (None with a number).
    column_map_ : ndarray of shape (n_features,)
        Compact index of each original column (-1 if it never held a stored value).
    n_active_ : int
        Number of distinct columns seen (m).
    n_slots_ : int
        Number of tracked columns (<= ``max_columns``).
    column_counts_ : ndarray of shape (capacity,)
        Rows holding a value, per compact column (the tracked set's criterion).
    slot_columns_, column_slots_ : ndarray
        Compact column of each slot (-1: free), slot of each compact column (-1:
        untracked).
    untracked_weights_, untracked_epochs_, untracked_sums_, untracked_scale_, \
untracked_lin_, untracked_quad_, untracked_epoch_
        The untracked columns' lazy weights ``w = R (W + S1_0 H_0 + S1_1 H_1)`` (W, its
        epoch; ``untracked_scale_ = (R, H_0, H_1)``), their raw sums ``S`` (sum x, sum x^2
        per class) and the sums over them that give ``P`` and ``Q`` (eqs. (C2)-(C5) of
        :mod:`sosl._core._sketch_ref`).
    t_, n_seen_, classes_, n_features_in_
        As in :class:`sosl.OAUCM`.

    Notes
    -----
    Columns are renumbered by first appearance and the state lives in compact coordinates;
    this is exact (a column never seen keeps mean, sketch column and weight at 0).

    *The cap* (``max_columns = K``). Columns take free slots in order of first appearance;
    once the K slots are full, an untracked column whose row count exceeds twice the
    smallest count in the tracked set takes that column's slot (the first such slot on a
    tie). The exact counts cost one integer per column seen, which the learner keeps
    anyway (weights, raw sums), so no approximate heavy-hitter summary is needed; the
    factor 2 keeps the set from churning at its boundary. A column leaving its slot keeps
    its mean, its exact scatter and its weight and loses its sketch coordinates (its column
    of ``B`` is zeroed); one entering a slot starts with zero sketch coordinates and its
    exact scatter in the diagonal term, so every column's own variance stays exact
    (``fd_diag``) and covariances are learnt only between tracked columns, from their entry
    on. An untracked column takes its full gradient step on the rounds where it holds a
    value; on the others its weight moves by the ``lam`` shrink and the centering term
    ``eta_t d_mu y xbar_j`` (applied exactly and lazily, through a global scale and two
    drift sums), and only the term ``2 eta_t d_s2 Sigma_jj w_j`` of those rounds (its own
    variance, small for a rare column) is dropped. Its contributions to ``mu`` and ``s2``
    are exact, through running sums (see :mod:`sosl._core._sketch_ref`, (C1)-(C6)). The
    cost of the cap in AUC is measured in ``benchmarks/bench_sketch_vocab.py`` (within
    0.002 of the uncapped sketch, or above it, on SMS spam and the Davidson tweets). A
    shrink eigen-decomposes the ``2r x 2r`` Gram matrix ``B B'`` (LAPACK ``dsyevd``); at
    r = 32 it runs every 32 rows of a class, costs the same whatever K is, and is the
    floor of the cost of a round. A one-row call (``learn_one``) of a capped model
    plays the round in the typed core on the live state, through a helper bound once to
    the state arrays (no per-call binding, its scratch space kept), saving first only what
    the round can write (O(r K + nnz): the slot arrays, the sketch rows it appends or
    shrinks, or the whole sketches when the row may promote a column, the touched column
    entries), so its cost is that of the round plus a copy of the same order (compared
    with a batch ``fit`` in ``benchmarks/bench_streaming.py``); an uncapped model saves the
    sketch rows at stake and copies its O(m) arrays. ``score_one`` is typed too (no
    validation pass and no BLAS call). The
    sketch departs from the paper, which keeps the p x p covariances; where the data's
    rank is at most ``rank`` the two coincide.

    References
    ----------
    J. Luo, D. Cheng, B. Zhang. Online AUC Optimization Based on Second-order Surrogate
    Loss. E. Liberty. Simple and deterministic matrix sketching. KDD 2013. M. Ghashami,
    E. Liberty, J. M. Phillips, D. P. Woodruff. Frequent Directions: simple and
    deterministic matrix sketching. SIAM J. Comput. 2016.

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> from sosl.sketch import SketchedOAUCM
    >>> from sosl.metrics import auc
    >>> rng = np.random.default_rng(0)
    >>> X = sp.random(400, 1000, density=0.01, random_state=0, format="csr")
    >>> y = (X[:, :50].sum(axis=1).A1 > 0).astype(int)
    >>> model = SketchedOAUCM(lam=1e-3, rank=8).fit(X, y)
    >>> bool(auc(y, model.decision_function(X)) > 0.9)
    True
    """

    capabilities = Capabilities(
        merge="sketch", merge_layout=(("max_columns", None),), parallel=("local",),
        growable=frozenset({"weights_", "compact_means_", "sketches_", "scatter_diag_",
                            "sketch_diag_"}),
        domains=(Domain("counts_", "count"), Domain("sketch_rows_", "nonneg"),
                 Domain("shrinkage_", "nonneg"), Domain("scatter_diag_", "nonneg"),
                 Domain("sketch_diag_", "nonneg"), Domain("column_counts_", "nonneg"),
                 Domain("column_map_", "index"), Domain("slot_columns_", "index"),
                 Domain("column_slots_", "index"), Domain("n_active_", "nonneg"),
                 Domain("n_slots_", "nonneg")),
        sparse_input=True)

    _parameter_constraints = {
        "lam": [Interval(Real, 0, None, closed="left"), StrOptions({"auto"})],
        "eta": [Interval(Real, 0, None, closed="neither"), None],
        "rank": [Interval(Integral, 1, None, closed="left")],
        "loss": [StrOptions(set(_LOSSES))],
        "sketch": [StrOptions({"fd", "fd_diag"})],
        "max_columns": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"}),
                        None],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
        "forgetting": [Options(Real, {1.0}), StrOptions({"auto"})],
        "detector": "no_validation",          # duck-typed: sosl.drift.check_detector
        "label_delay": [Interval(Integral, 0, None, closed="left")],
    }
    _state_names = ("weights_", "compact_means_", "sketches_", "sketch_rows_", "counts_",
                    "scatter_diag_", "sketch_diag_", "shrinkage_", "column_map_", "n_active_",
                    "slot_columns_", "n_slots_") + _COLUMN_ARRAYS + (
                    "untracked_lin_", "untracked_quad_", "untracked_scale_", "untracked_epoch_")

    def __init__(self, lam: float | Auto = "auto", eta: float | None = None, rank: int = 32,
                 loss: Literal["m", "s"] = "m", sketch: Literal["fd", "fd_diag"] = "fd_diag",
                 max_columns: int | Auto | None = "auto", shuffle: bool = False,
                 random_state: RandomState = None, forgetting: float | Auto = 1.0,
                 detector: Detector | None = None, label_delay: int = 0) -> None:
        self.lam = lam
        self.eta = eta
        self.rank = rank
        self.loss = loss
        self.sketch = sketch
        self.max_columns = max_columns
        self.shuffle = shuffle
        self.random_state = random_state
        self.forgetting = forgetting
        self.detector = detector
        self.label_delay = label_delay

    def _check_params(self):
        if self.eta is None and not isinstance(self.lam, str) and self.lam == 0:
            raise ValueError(f"{type(self).__name__}: lam must be > 0 when eta=None "
                             "(the step is 1/(lam t)); give lam > 0 or a constant eta")
        if self.detector is not None and self.forgetting != "auto":
            raise ValueError("detector is used by forgetting='auto' only; got forgetting="
                             f"{self.forgetting!r}")
        _drift.check_label_delay(self)
        _drift.check_detector(self.detector)

    def _auto_scaled(self):
        return isinstance(self.lam, str)

    def _lam(self):
        """The numeric lambda: ``lam``, or ``AUTO_LAM s^2`` under ``lam="auto"``."""
        if isinstance(self.lam, str):
            s = self._row_scale()
            return AUTO_LAM * (s * s)
        return float(self.lam)

    def _layout(self):
        return {**self._scale_layout(), "rank": int(self.rank), "loss": _LOSSES[self.loss],
                "sketch": _FAMILIES[self.sketch],
                "max_columns": self._max_columns(),
                "schedule": int(Schedule.STEP_INV_LAM_T if self.eta is None
                                else Schedule.STEP_CONSTANT)}

    def _max_columns(self):
        """K as an int (``"auto"``: 8 rank), or None for no cap."""
        if self.max_columns is None:
            return None
        return 8 * int(self.rank) if self.max_columns == "auto" else int(self.max_columns)

    def _init_state(self, n_features):
        r = int(self.rank)
        cap = max(1, min(n_features, 64))
        K = self._max_columns()
        kcap = cap if K is None else min(cap, K)
        return {
            "weights_": np.zeros(kcap),
            "compact_means_": np.zeros((2, kcap)),
            "sketches_": np.zeros((2, 2 * r, kcap)),
            "sketch_rows_": np.zeros(2, dtype=np.int64),
            "counts_": np.zeros(2, dtype=np.int64),
            "scatter_diag_": np.zeros((2, kcap)),
            "sketch_diag_": np.zeros((2, kcap)),
            "shrinkage_": np.zeros(2),
            "column_map_": np.full(n_features, -1, dtype=np.int64),
            "n_active_": 0,
            "slot_columns_": np.full(kcap, -1, dtype=np.int64),
            "n_slots_": 0,
            "column_counts_": np.zeros(cap, dtype=np.int64),
            "column_slots_": np.full(cap, -1, dtype=np.int64),
            "untracked_weights_": np.zeros(cap),
            "untracked_epochs_": np.zeros(cap, dtype=np.int64),
            "untracked_sums_": np.zeros((2, 2, cap)),
            "untracked_lin_": np.zeros((2, 3)),
            "untracked_quad_": np.zeros((4, 3, 3)),
            "untracked_scale_": np.array([1.0, 0.0, 0.0]),
            "untracked_epoch_": 0,
        }

    @staticmethod
    def _grow_arrays(state, names, m, limit):
        """Enlarge the arrays ``names`` (last axis) to hold m entries, doubling the capacity
        up to ``limit``; new entries are 0 (-1 for the slot/column maps)."""
        cap = state[names[0]].shape[-1]
        if m <= cap:
            return
        new = min(max(m, 2 * cap), limit)
        for name in names:
            old = state[name]
            grown = np.full(old.shape[:-1] + (new,), -1 if name in (
                "slot_columns_", "column_slots_") else 0, dtype=old.dtype)
            grown[..., :cap] = old
            state[name] = grown

    def _grow(self, state, m):
        p = state["column_map_"].shape[0]
        self._grow_arrays(state, _COLUMN_ARRAYS, m, p)
        k = m if self._layout_["max_columns"] is None else min(m, self._layout_["max_columns"])
        self._grow_arrays(state, _SLOT_ARRAYS, k, p)

    def _run_pass(self, state, X, s, order):
        if self.forgetting == "auto":                # drift detected and answered
            Xc = _canonical_csr(X)
            _drift.sketch_auto_pass(
                self, state, Xc, s, order, lambda rows: self._plain_pass(state, Xc, s, rows),
                self._layout_["schedule"] == int(Schedule.STEP_INV_LAM_T))
        else:
            self._plain_pass(state, X, s, order)

    def _plain_pass(self, state, X, s, order):
        X = _canonical_csr(X)
        m = _sketch.assign_columns(X.indptr, X.indices, order, state["column_map_"],
                                   state["n_active_"])
        self._grow(state, m)
        state["n_active_"] = int(m)
        nslots = np.array([state["n_slots_"]], dtype=np.int64)
        epoch = np.array([state["untracked_epoch_"]], dtype=np.int64)
        # the sketch products are skinny (K x 2r) matrix-vector products, for which
        # OpenBLAS threads cost more than they save (several times slower on two cores)
        with one_blas_thread():
            state["t_"] = _sketch.sketch_pass(
                X.data, X.indices, X.indptr, s, order, state["column_map_"], m,
                _bundle(state, nslots, epoch), state["t_"], self._spec())
        state["n_slots_"] = int(nslots[0])
        state["untracked_epoch_"] = int(epoch[0])

    def _spec(self):
        """The hyper-parameters of a pass (``_sketch.SketchSpec``), built per call."""
        layout = self._layout_
        K = layout["max_columns"]
        return {"lam": self._lam(), "eta": 0.0 if self.eta is None else float(self.eta),
                "schedule": layout["schedule"], "loss": layout["loss"],
                "family": layout["sketch"], "r": layout["rank"],
                "K": _UNCAPPED if K is None else K}

    def _backup_names(self, X):
        # A fresh state (fit, first partial_fit) needs no copies: a failed call discards
        # it and the transaction restores the previous attributes. The one p-long array,
        # column_map_, changes only at the columns CSR rows touch: save just those. The
        # other compact arrays are O(m) per class and copied, except the sketches
        # (O(r m)) in a one-row call, which saves only the sketch rows that call can
        # change (see _sketch_rows_at_stake).
        # A capped model whose slots are all taken may also zero slot columns of the
        # sketches (a promotion), which no row list covers: it copies them (O(r K), the
        # order of the round's own cost).
        if self.t_ == 0:
            return ()
        backup = dict.fromkeys(self._state_names)
        if sp.issparse(X):
            backup["column_map_"] = np.unique(X.indices)
        K = self._layout_["max_columns"]
        if X.shape[0] == 1 and (K is None or self.n_slots_ < K):
            backup["sketches_"] = self._sketch_rows_at_stake()
        return backup

    def _new_stepper(self):
        """The typed one-row helper (:class:`sosl._core._sketch.Stepper`) bound to the
        current state arrays (cached by the base, dropped whenever they are replaced)."""
        d = self.__dict__
        # the stepper's own one-value arrays for the slots in use and the epoch: each call
        # sets them from the estimator's values and returns the new ones
        st = _sketch.Stepper(d["column_map_"],
                             _bundle(d, np.zeros(1, dtype=np.int64),
                                     np.zeros(1, dtype=np.int64)),
                             d["calibration_"], self._spec())
        return st

    def _learn_one_in_place(self, x, s):
        """One canonical finite CSR row, or one finite dense float64 row (its non-zero
        entries, as the general path's CSR conversion keeps them, with the general path's
        dense pre-score), of a capped model on the live state, O(r K + nnz).

        The typed :meth:`sosl._core._sketch.Stepper.learn_dense` (``learn_csr``) checks the
        row, takes the pre-score for the Platt scaling, and plays the round by
        :func:`sosl._core._sketch.one_row`, which saves what the round can write (the slot
        arrays, O(r K); of the sketches the rows the round appends or shrinks, or all of
        them when the row may promote a column; the column arrays at the row's columns, and
        at the tracked ones when one may leave its slot; the counts and small sums) and
        restores everything if a written value is not finite; False is then returned so
        that the general path reports the problem on the unchanged model. A row that is not
        finite or not canonical, one that needs more capacity, a round that would fold the
        lazy scale into every weight (O(m), rare) and an uncapped model (whose state is
        O(r m) anyway) take the general path too. The pre-score, the pass and the checks
        are those of the general path: the result equals ``partial_fit`` on the row bit for
        bit.
        """
        d = self.__dict__
        if d["_layout_"]["max_columns"] is None or self.forgetting == "auto":
            return False
        st = d.get("_stepper_") or self._stepper()
        try:
            if type(x) is np.ndarray:
                with one_blas_thread():
                    res = st.learn_dense(x, s, d["n_active_"], d["t_"], d["n_slots_"],
                                         d["untracked_epoch_"], _ONE_ROW_SAVES_SKETCH[0],
                                         _ONE_ROW_SCORES_FIRST[0])
            elif sp.issparse(x) and x.format == "csr" and x.shape == (1, d["n_features_in_"]):
                with one_blas_thread():
                    res = st.learn_csr(x.data, x.indices, x.indptr, s, d["n_active_"],
                                       d["t_"], d["n_slots_"], d["untracked_epoch_"],
                                       _ONE_ROW_SAVES_SKETCH[0], _ONE_ROW_SCORES_FIRST[0])
            else:
                return False
        except (ValueError, TypeError):        # another dtype, shape or layout
            return False
        if res is None:
            return False
        d["t_"], d["n_active_"], d["n_slots_"], d["untracked_epoch_"] = res
        d["n_seen_"] += 1
        return True

    def score_one(self, x: ArrayLike) -> float:
        # a dense row's typed read needs no lock while no other thread holds it
        # (sosl._core._lock)
        f = _sketch.read_score(self.__dict__, x)
        if f is not None:
            return f
        d = self.__dict__
        lock = d.get("_lock_")
        with lock if lock is not None else _model_lock(d):
            f = None
            if d.get("_params_ok") and "weights_" in d:
                # no BLAS call: no thread switch
                st = d.get("_stepper_") or self._stepper()
                try:
                    if type(x) is np.ndarray:
                        f = st.score_dense(x, d["n_slots_"], d["untracked_epoch_"])
                    elif (sp.issparse(x) and x.format == "csr"  # type: ignore[union-attr]
                            and x.shape == (1, d["n_features_in_"])):  # type: ignore[union-attr]
                        # x is a scipy CSR matrix here (issparse does not narrow the type)
                        f = st.score_csr(x.data, x.indices, x.indptr,  # type: ignore[union-attr]
                                         d["n_slots_"], d["untracked_epoch_"])
                except (ValueError, TypeError):
                    f = None
            return super().score_one(x) if f is None else f

    score_one.__doc__ = BaseOnlineAUC.score_one.__doc__

    def _sketch_rows_at_stake(self):
        """(class, row) indices of ``sketches_`` one round may write, whatever its label:
        the row it appends to each class's sketch, or every row of a class whose sketch
        that row fills (the shrink rewrites them all; every ``rank`` rows of a class)."""
        n2 = 2 * self._layout_["rank"]
        cls, rows = [], []
        for c in range(2):
            nr = int(self.sketch_rows_[c])
            at_stake = np.arange(n2) if nr + 1 >= n2 else np.array([nr])
            cls.append(np.full(at_stake.shape[0], c))
            rows.append(at_stake)
        return np.concatenate(cls), np.concatenate(rows)

    def _weights_of(self, c):
        """Current weights of the compact columns ``c`` (tracked: the slot's weight;
        untracked: the lazy weight brought up to round ``t_``)."""
        out = np.empty(c.shape[0])
        _sketch.current_weights(np.ascontiguousarray(c, dtype=np.int64), self.column_slots_,
                                self.weights_, self.untracked_weights_,
                                self.untracked_epochs_, self.untracked_sums_,
                                self.untracked_scale_, self.untracked_epoch_, out)
        return out

    def _compact(self, tracked, untracked):
        """A compact-coordinate vector (last axis m) from its slot and untracked parts."""
        m = self.n_active_
        out = np.array(untracked[..., :m], dtype=float)
        k = self.n_slots_
        out[..., self.slot_columns_[:k]] = tracked[..., :k]
        return out

    def _scatter(self, v):
        """Original-coordinate copy of a compact vector (zeros for unseen columns)."""
        cmap = self.column_map_
        seen = cmap >= 0
        out = np.zeros(v.shape[:-1] + (cmap.shape[0],))
        out[..., seen] = v[..., cmap[seen]]
        return out

    @property
    def coef_(self):
        """Weights in the original feature coordinates, shape (1, n_features) (computed on
        each access: read-only)."""
        check_is_fitted(self, "weights_")
        return self._scatter(self._weights_of(np.arange(self.n_active_)))[None, :]

    @property
    def means_(self):
        """Class means in the original feature coordinates (row k for ``classes_[k]``)."""
        check_is_fitted(self, "compact_means_")
        n = np.maximum(self.counts_, 1)[:, None]
        return self._scatter(self._compact(self.compact_means_, self.untracked_sums_[0] / n))

    @property
    def intercept_(self):
        """Midpoint of the projected class means, -w.(xbar+ + xbar-)/2 (0 until both seen),
        as an array of shape (1,)."""
        return np.array([self._intercept()])

    def _intercept(self):
        if self.counts_[0] == 0 or self.counts_[1] == 0:
            return 0.0
        return _sketch.intercept(self.weights_, self.compact_means_, self.n_slots_,
                                 self.untracked_lin_, self.untracked_scale_, self.counts_)

    def _decision(self, X):
        # in the compact coordinates: O(nnz) on CSR rows, no p-long weight vector
        if sp.issparse(X):
            return self._csr_decision(_canonical_csr(X))
        X = np.asarray(X, dtype=np.float64)
        f = np.empty(X.shape[0])
        _sketch.dense_scores(X, self.column_map_, self.column_slots_, self.weights_,
                             self.untracked_weights_, self.untracked_epochs_,
                             self.untracked_sums_, self.untracked_scale_,
                             self.untracked_epoch_, f)
        return f + self._intercept()

    def _csr_decision(self, X):
        """Scores of canonical CSR rows (O(nnz), typed)."""
        f = np.empty(X.shape[0])
        _sketch.row_scores(X.data, X.indices, X.indptr, self.column_map_, self.column_slots_,
                           self.weights_, self.untracked_weights_, self.untracked_epochs_,
                           self.untracked_sums_, self.untracked_scale_, self.untracked_epoch_,
                           f)
        return f + self._intercept()
