"""Linear online AUC learners with second-order surrogate losses: OAUC-M, OAUC-M_c, OAUC-S."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from numpy.typing import ArrayLike

if TYPE_CHECKING:
    from typing_extensions import Self

import contextlib
import math
from numbers import Integral, Real

import numpy as np
from scipy.linalg.blas import dnrm2
from sklearn.utils._param_validation import Interval, StrOptions

from . import drift as _drift
from ._base import BaseOnlineAUC, _model_lock
from ._capabilities import UNSCALED, Capabilities, Domain
from ._coef import LinearCoef
from ._core import _linear
from ._core._blas import one_blas_thread
from ._core._codes import Loss, Schedule
from ._core._losses import loss_constants
from ._input import _abs_cache, _max_abs, _no_array  # noqa: F401  (partial imports _max_abs)
from ._typing import Auto, Detector, RandomState
from .exceptions import UnscaledInputWarning

__all__ = ["OAUCM", "OAUCS"]

#: from this dimension on, the kernel uses BLAS (dsymv, batched dsyrk); below it, own loops
BLAS_MIN_P = 32
#: from this dimension on OpenBLAS may thread a p x p dsymv (measured: not at p = 100, at
#: p = 150 on two cores), so a one-row round runs it with one thread (a batch pass always
#: does: the cost of the context is shared by its rows); below, the context would cost
#: more than the round
BLAS_THREADED_P = 128
#: at most this many pending rank-one terms per class before a rank-k update (BLAS path)
KMAX = 64
#: the same below BLAS_MIN_P, where the kernel's own loops apply them four at a time
SMALL_KMAX = 16

#: largest |x| for which the moment updates provably stay finite (see ``_backup_names``)
_SAFE_ABS = 1e50
_NO_CONTEXT = contextlib.nullcontext()

#: max |x| above which the learner warns once that the features are not scaled
_UNSCALED = UNSCALED
#: largest |w.a| (and sqrt(w' Sigma w)) allowed by the no-copy argument of ``_backup_names``
_SAFE_MARGIN = 1e150


def _same_labels(classes, fitted):
    """``classes`` names the two fitted labels, in either order."""
    if type(classes) is list and len(classes) == 2 and type(classes[0]) is int \
            and type(classes[1]) is int:         # the common spelling, classes=[0, 1]
        labels = fitted.tolist()                 # two distinct labels
        return classes == labels or classes == labels[::-1]
    classes = np.asarray(classes)
    return classes.shape == (2,) and set(classes.tolist()) == set(fitted.tolist())


def state_bytes(n_features):
    """Peak bytes of a dense second-order learner: two p x p covariances, plus one copy
    of them while a pass that cannot be shown to stay finite runs."""
    return 2 * (2 * 8 * n_features * n_features) + 64 * n_features


class _LinearSOSL(LinearCoef, BaseOnlineAUC):
    """Shared state and pass of the linear second-order learners (Algorithm 1)."""

    capabilities = Capabilities(
        merge="moments", parallel=("global", "local", "fixed"), fixed_shapes=True,
        domains=(Domain("counts_", "count"), Domain("weights_", "nonneg"),
                 Domain("scales_", "positive"), Domain("scatter_", "psd_upper"),
                 Domain("max_abs_", "nonneg")),
        # sparse rows densified in blocks (the state is p x p anyway); the kernel reports
        # the first non-finite row; a weighted pass; the Platt steps and the identity
        # order inside the pass; validated rows reach the typed decision_rows (no warnings)
        sparse_input="blocks", pass_checks_finite=True, weighted=True, platt_in_pass=True,
        pass_takes_identity=True, decision_warns=False, compiled_round=_linear.learn_row,
        # the finiteness scan of a batch also takes the max |x| _backup_names reads next
        scan_max_abs=True)

    _loss = int(Loss.LOSS_M)
    _state_names = ("w_", "means_", "scatter_", "scales_", "weights_", "counts_", "max_abs_")
    _parameter_constraints = {
        "lam": [Interval(Real, 0, None, closed="left")],
        "eta": [Interval(Real, 0, None, closed="neither"), None],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
        "forgetting": [Interval(Real, 0, 1, closed="right"), StrOptions({"auto"})],
        "detector": "no_validation",          # duck-typed: sosl.drift.check_detector
        "label_delay": [Interval(Integral, 0, None, closed="left")],
        "max_memory": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
    }

    def _check_params(self):
        self._check_step()
        if self.detector is not None and self.forgetting != "auto":
            raise ValueError("detector is used by forgetting='auto' only; got forgetting="
                             f"{self.forgetting!r}")
        _drift.check_label_delay(self)
        _drift.check_detector(self.detector)

    def _check_step(self):
        if self.eta is None and self.lam == 0:
            raise ValueError("lam must be > 0 when eta=None (the step is 1/(lam t))")

    def _lam(self):
        """The numeric lambda the pass uses (a subclass may resolve a named default)."""
        return float(self.lam)

    def _beta(self):
        """The kernel's decay: the fixed factor, or none under "auto" (sosl.drift)."""
        return 1.0 if self.forgetting == "auto" else float(self.forgetting)

    def _layout(self):
        return {"schedule": "1/(lam t)" if self.eta is None else "constant"}

    def _schedule(self):
        return int(Schedule.STEP_INV_LAM_T if self.eta is None else Schedule.STEP_CONSTANT)

    def _init_state(self, n_features):
        self._check_memory(
            state_bytes(n_features),
            f"two dense {n_features} x {n_features} covariance matrices with their "
            "transactional copy",
            "For high-dimensional or sparse data use sosl.SketchedOAUCM (a rank-r sketch of "
            "each covariance, O(r p) memory), reduce the features, or raise max_memory "
            "(bytes).")
        return {
            "w_": np.zeros(n_features),
            "means_": np.zeros((2, n_features)),
            "scatter_": np.zeros((2, n_features, n_features)),
            "scales_": np.ones(2),
            "weights_": np.zeros(2),
            "counts_": np.zeros(2, dtype=np.int64),
            "max_abs_": 0.0,
        }

    def _backup_names(self, X):
        """Copy the covariances only when the pass could make the state non-finite.

        With every |x_j| <= R (all instances so far and this batch), the covariances stay
        below 4 R^2 in magnitude; the kernel's scaled scatter C = Sigma W / scale is at
        most 4 R^2 W 1e150 (scale >= 1e-150, W <= the count), finite for R <= 1e50. The
        kernel forms Sigma w as C (alpha w) with alpha = scale / W, never as alpha (C w),
        so no product it forms exceeds |Sigma_ij w_j| term by term: the unscaled C w,
        up to 1e150 times larger under forgetting, is never computed (it overflowed where
        Sigma w was finite, and NaN weights were committed). The weights obey
        w' = (1 - eta_t lam) w - eta_t g(w), where the loss's gradient splits as
        g(w) = g0 + M w with ||g0|| <= G R sqrt(p) and 0 <= M <= H R^2 p; the loss home
        (``_losses.pxd``, read through ``loss_constants``) states G and H per loss (psi_M:
        G = 3, H = 0; psi_S: G = 4, H = 10). If eta_max (lam + H R^2 p) <= 2 the step
        contracts the linear part and ||w'|| <= ||w|| + eta_t G R sqrt(p). Then, over a
        batch of m rows, ||w|| <= W = ||w_0|| + m eta_max G R sqrt(p), and if
        2 R sqrt(p) W <= 1e150 no intermediate (w.a, w' Sigma w, the gradient) can
        overflow. Under these conditions the covariances are updated in place; the O(p)
        arrays are always copied.
        """
        p = X.shape[1]
        R = max(self.max_abs_, _max_abs(X))
        if R > _SAFE_ABS:
            return self._state_names
        lam = self._lam()
        eta_max = 1.0 / (lam * (self.t_ + 1)) if self.eta is None else float(self.eta)
        _, G_factor, H_factor = loss_constants(self._loss)
        if not eta_max * (lam + H_factor * R * R * p) <= 2.0:    # no contraction
            return self._state_names
        root_p = math.sqrt(p)
        G = G_factor * R * root_p
        # BLAS dnrm2 scales as it sums: no overflow, no floating-point warning
        W = float(dnrm2(self.w_)) + X.shape[0] * eta_max * G
        if not 2.0 * R * root_p * W <= _SAFE_MARGIN:
            return self._state_names
        return ("w_", "means_", "scales_", "weights_", "counts_")

    def _run_pass(self, state, X, s, order, sw=None, pre=None):
        p = X.shape[1]
        stats = np.array([state["max_abs_"], -1.0])     # the pass keeps max |x| up to date

        def play(rows, t0, st=state, beta=None):
            # st, beta: the second candidate of forgetting="auto" (its own state, no Platt)
            kmax = min(KMAX if p >= BLAS_MIN_P else SMALL_KMAX,
                       X.shape[0] if rows is None else rows.shape[0])
            own = st is state
            with one_blas_thread() if p >= BLAS_MIN_P else _NO_CONTEXT:
                t = _linear.linear_pass(
                    X, s, rows, st["w_"], st["means_"], st["scatter_"],
                    st["scales_"], st["weights_"], st["counts_"], t0,
                    float(self.lam), 0.0 if self.eta is None else float(self.eta),
                    self._schedule(), self._loss, self._beta() if beta is None else beta,
                    BLAS_MIN_P, np.empty(3 * p + 2 * kmax * p), stats, sw,
                    pre if own else None,
                    None if pre is None or not own else state["calibration_"],
                )
            if stats[1] >= 0:                            # only a fresh pass sees such rows
                raise ValueError("Input X contains NaN or infinity.")
            return t

        if self.forgetting == "auto":                    # drift detected and answered
            _drift.linear_auto_pass(self, state, X, s, order, pre, play)
        else:
            state["t_"] = play(order, state["t_"])
        state["max_abs_"] = float(stats[0])
        if state["max_abs_"] > _UNSCALED:
            self._warn_unscaled(state["max_abs_"])

    # -- one row at a time: a typed stepper bound to the state arrays ------------------
    def _stepper_on(self, st, beta, calibration):
        """A typed one-row stepper bound to the arrays of the state dict ``st`` with the
        decay ``beta`` (``_new_stepper``; the two candidates of forgetting="auto")."""
        lam = float(self.lam)
        eta = 0.0 if self.eta is None else float(self.eta)
        G_factor = loss_constants(self._loss)[1]  # the stepper checks the contraction
        return _linear.Stepper(st["w_"], st["means_"], st["scatter_"], st["scales_"],
                               st["weights_"], st["counts_"], lam, eta, self._schedule(),
                               self._loss, beta, BLAS_MIN_P, _SAFE_ABS, _SAFE_MARGIN,
                               G_factor, calibration)

    def _new_stepper(self):
        st = self._stepper_on(self.__dict__, self._beta(), self.calibration_)
        # the batch path hands int64 labels to the kernel for these classes (a new
        # stepper is made whenever the state, hence classes_, is replaced)
        st.labels01 = self.classes_.tolist() == [0, 1]
        # learn_one's compiled round (_linear.learn_row) plays what
        # _learn_one_in_place plays, where that is this class's plain round
        st.one_row = (self.forgetting != "auto" and self.n_features_in_ < BLAS_THREADED_P
                      and type(self)._learn_one_in_place
                      is _LinearSOSL._learn_one_in_place)
        return st

    def _learn_one_in_place(self, x, s):
        if type(x) is not np.ndarray:
            return False
        d = self.__dict__
        t = d["t_"] + 1
        st = d.get("_stepper_") or self._stepper()
        if self.forgetting == "auto":                    # drift detected and answered
            if not _drift.linear_one_row(self, st, x, s, one_blas_thread()
                                         if d["n_features_in_"] >= BLAS_THREADED_P
                                         else _NO_CONTEXT):
                return False
            if d["max_abs_"] > _UNSCALED:
                self._warn_unscaled(d["max_abs_"])
            return True
        if d["n_features_in_"] >= BLAS_THREADED_P:     # the round's dsymv, one thread
            with one_blas_thread():
                R = st.step(x, s, t, d["max_abs_"])
        else:
            R = st.step(x, s, t, d["max_abs_"])
        if R < 0.0:
            return False
        d["t_"] = t
        d["n_seen_"] += 1
        d["max_abs_"] = R
        if R > _UNSCALED:
            self._warn_unscaled(R)
        return True

    def _warn_unscaled(self, R):
        self._warn_once("unscaled", UnscaledInputWarning,
                        f"features reach |x| = {R:.3g}: the default lam and eta assume "
                        "features of order 1 (the paper scales them to [-1, 1]); scale them "
                        "(e.g. sklearn.preprocessing.MaxAbsScaler) or tune lam and eta.")

    def partial_fit(self, X: ArrayLike, y: ArrayLike, classes: ArrayLike | None = None,
                    sample_weight: ArrayLike | None = None) -> Self:
        _abs_cache[0] = _no_array
        d = self.__dict__
        if (sample_weight is None and type(X) is np.ndarray and "w_" in d and not self.shuffle
                and d.get("_params_ok")
                and (classes is None or _same_labels(classes, d["classes_"]))):
            if X.ndim == 2 and X.shape[0] == 1:
                # one dense row on a fitted model is a learn_one round: the typed path
                if X.dtype == np.float64 and X.shape[1] == d["n_features_in_"]:
                    y = np.asarray(y)
                    if y.shape == (1,):
                        self.learn_one(X[0], y[0])
                        return self
            elif (type(y) is np.ndarray and y.ndim == 1 and y.shape[0] > 1
                  and y.dtype.kind in "iubUS" and "feature_names_in_" not in d):
                # a dense batch on a fitted model: the typed batch path when its checks
                # hold (the kernel checks the arrays' dtype, layout and shapes)
                lock = d.get("_lock_")
                with lock if lock is not None else _model_lock(d):
                    if d.get("_params_ok") and self._batch_in_place(X, y):
                        return self
        return super().partial_fit(X, y, classes, sample_weight)

    def _batch_in_place(self, X, y):
        """``partial_fit`` of a valid dense batch on the live state (the general path's
        rounds and Platt steps, to the bit), when the stepper's batch checks hold; False,
        with the state as it was, otherwise. Unknown labels raise (once X passed the
        checks the general path makes first), as there."""
        d = self.__dict__
        if self.forgetting == "auto":
            return False
        st: Any = d.get("_stepper_")
        created = st is None
        if created:
            st = self._stepper()
        p = d["n_features_in_"]
        kmax = KMAX if p >= BLAS_MIN_P else SMALL_KMAX
        R = -4.0
        if st.labels01:
            # int64 0/1 labels go to the kernel as they are: it checks X, then makes the
            # signs (-3: another label, -4: y is not C-contiguous int64)
            if p >= BLAS_MIN_P:
                with one_blas_thread():
                    R = st.batch(X, y, d["t_"], d["max_abs_"], kmax, True)
            else:
                R = st.batch(X, y, d["t_"], d["max_abs_"], kmax, True)
        if R <= -3.0:                    # other labels: _signs maps them (or names one)
            if not (X.ndim == 2 and X.dtype == np.float64 and X.flags.c_contiguous
                    and X.shape[0] == y.shape[0] and X.shape[1] == p):
                if created:
                    self._forget_stepper()
                return False             # the general path judges X before the labels
            try:
                s = self._signs(y)
            except BaseException:
                if created:              # the model as it was, stepper included
                    self._forget_stepper()
                raise
            with one_blas_thread() if p >= BLAS_MIN_P else _NO_CONTEXT:
                R = st.batch(X, s, d["t_"], d["max_abs_"], kmax, False)
        if R < 0.0:
            if R == -2.0:
                raise FloatingPointError(
                    f"{type(self).__name__}: the state became non-finite during the pass "
                    "(the step size is probably too large for this data; try a smaller eta "
                    "or a larger lam, or scale the features). The model was left unchanged.")
            if created:                  # a declined call leaves the model as it was
                self._forget_stepper()
            return False
        n = X.shape[0]
        d["t_"] += n
        d["n_seen_"] += n
        d["max_abs_"] = R
        if R > _UNSCALED:
            self._warn_unscaled(R)
        return True

    partial_fit.__doc__ = BaseOnlineAUC.partial_fit.__doc__

    def score_one(self, x: ArrayLike) -> float:
        # the typed read needs no lock while no other thread holds it (sosl._core._lock)
        f = _linear.read_score(self.__dict__, x)
        if f is not None:
            return f
        d = self.__dict__
        with _model_lock(d):
            # finite input gives a finite score here, except for overflow, which the
            # check sees
            if d.get("_params_ok") and "w_" in d and type(x) is np.ndarray:
                f = self._stepper().score(x)
                if f == f and abs(f) != np.inf:
                    return f
            return super().score_one(x)

    score_one.__doc__ = BaseOnlineAUC.score_one.__doc__

    @property
    def covariances_(self):
        """Class covariances Sigma_k, shape (2, p, p) (computed from the kernel's scatter).

        Each access builds a new array: ``scales_[k] * scatter_[k] / weights_[k]`` with the
        upper triangle mirrored (the kernel keeps only that one up to date).
        """
        C = np.triu(self.scatter_)
        C = C + np.transpose(np.triu(self.scatter_, 1), (0, 2, 1))
        W = np.where(self.weights_ > 0, self.weights_, 1.0)
        return C * (self.scales_ / W)[:, None, None]

    @property
    def intercept_(self):
        """Midpoint of the projected class means, -w.(xbar+ + xbar-)/2 (0 until both are
        seen), as an array of shape (1,).

        AUC ignores any offset; this one only serves ``predict``. With both class means
        kept, their projected midpoint is the natural cut between the two classes.
        """
        return np.array([self._intercept()])

    def _intercept(self):
        if self.counts_[0] == 0 or self.counts_[1] == 0:
            return 0.0
        return float(-0.5 * self.w_ @ (self.means_[0] + self.means_[1]))

    def _decision(self, X):
        if type(X) is np.ndarray and X.dtype == np.float64 and X.flags.c_contiguous:
            out = np.empty(X.shape[0])
            _linear.decision_rows(X, self.w_, self.means_, self.counts_, out)
            return out
        with np.errstate(over="ignore", invalid="ignore"):
            return X @ self.w_ + self._intercept()


class OAUCM(_LinearSOSL):
    """OAUC-M: online AUC maximization with the second-order hinge surrogate psi_M.

    At round t the new instance ``(x_t, y_t)`` is compared with all earlier instances of
    the other class through their mean ``xbar_t`` and covariance ``Sigma_t`` only. With
    ``mu = y_t w.(x_t - xbar_t)`` and ``s2 = w' Sigma_t w``, the loss is the worst-case
    average pairwise hinge loss over all sets with those moments,

        L_t(w) = lam/2 ||w||^2 + ((1 - mu) + sqrt((1 - mu)^2 + s2)) / 2,

    minimized by online gradient descent with step ``1/(lam t)`` (OAUC-M, regret
    O(ln T), Theorem 6) or a constant step ``eta`` (the paper's OAUC-M_c). Memory is
    O(p^2) and each round costs O(p^2), whatever the length of the stream.

    Parameters
    ----------
    lam : float, default=1e-2
        Tikhonov weight lambda (> 0; may be 0 only with a constant ``eta``).
    eta : float or None, default=None
        None gives the step eta_t = 1/(lam t) of Theorem 6 (OAUC-M); a positive float a
        constant step (OAUC-M_c).
    forgetting : float in (0, 1] or "auto", default=1.0
        Forgetting factor beta of the class moments, for drifting streams: each new
        instance of a class multiplies the weight of that class's earlier instances by
        beta, so its mean and covariance follow the last ~1/(1 - beta) instances of the
        class. 1.0 (the default) is the paper's learner: all instances count alike.
        "auto": no decay until a change is detected in how far the rows score from their
        class's mean score, then a shorter memory that lengthens again in calm stretches
        (see :mod:`sosl.drift`; the detections are listed in ``drift_.detections``); a
        second copy of the learner with ``forgetting=0.99`` learns the same rows and takes
        the lead while its AUC on the labelled rows is clearly higher, as under a
        continuous drift (:mod:`sosl._drift_select`; ``drift_.selector.switches``). Each
        row then costs two rounds.
    detector : object or None, default=None
        With ``forgetting="auto"``, the change detector: any object with ``update(x)``
        and ``drift_detected`` (river's ``drift.ADWIN()`` fits); None is
        :class:`sosl.drift.Cusum`. Copied (one copy per class) when the model starts.
    label_delay : int, default=0
        With ``forgetting="auto"``, the rows by which labels lag the scores (a label
        arriving d rows after its row was scored: ``prequential(..., delay=d)``). A
        detected change is answered only when the concept it ends lasted more than
        ``2 label_delay`` rounds (:meth:`sosl.drift.MemoryController.due`): a model that
        learns a new concept d rows late gains from it only if it lasts.
    shuffle : bool, default=False
        Visit the rows of each ``fit``/``partial_fit`` batch in a random order. Off by
        default: the pass is online and follows the order given.
    random_state : int, RandomState or None, default=None
        Seed of the shuffling (used only with ``shuffle=True``).
    max_memory : int or "auto", default="auto"
        Largest state, in bytes, the learner may allocate (two p x p covariances plus a
        transactional copy: about 32 p^2 bytes). "auto" is half the memory available when
        the state is created (a state of at most 16 MiB is allowed without reading the
        system's figure). A larger p raises ``MemoryError`` naming the size.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features)
        The weights w_{t+1} after the last round, as scikit-learn's binary linear
        classifiers shape them: a view of ``w_`` (writes go through; assigning an array of
        shape (1, n_features) or (n_features,) replaces the weights).
    w_ : ndarray of shape (n_features,)
        The same weights as the 1-D state array the typed passes update in place (the
        name :mod:`sosl.state` and the merges use).
    intercept_ : ndarray of shape (1,)
        ``-w_ @ (means_[0] + means_[1]) / 2``: puts the decision threshold of
        ``predict`` at the midpoint of the projected class means (AUC ignores it).
    means_ : ndarray of shape (2, n_features)
        Class means of all instances seen (row k for ``classes_[k]``).
    covariances_ : ndarray of shape (2, n_features, n_features)
        Class covariances (normalized by the count, as in the paper); a property computed
        from ``scatter_``, ``scales_`` and ``weights_``.
    scatter_ : ndarray of shape (2, n_features, n_features)
        The kernel's scaled scatter matrices (upper triangles valid), see ``_core._linear``.
    scales_, weights_ : ndarray of shape (2,)
        Their scale factors and the (forgetting-weighted) class weights.
    counts_ : ndarray of shape (2,)
        Number of instances seen per class.
    t_ : int
        Rounds played since the start of ``fit`` (or the first ``partial_fit``).
    n_seen_ : int
        Instances seen (equal to ``t_``).
    classes_ : ndarray of shape (2,)
        The labels; ``classes_[1]`` is the positive class.
    n_features_in_ : int
        Number of features.

    Notes
    -----
    The gradient of eq. (14) is evaluated as -(1 + b/A) a / 2 + Sigma w / (2A) with
    b = 1 - mu and A = sqrt(b^2 + s2), which needs no division by sigma; where A = 0
    (b = 0 and Sigma w = 0) the one-sided derivative -a/2 is used. Rounds before any
    instance of the other class has arrived carry only the regularizer. The covariances
    are updated in Welford's centered form, equal to eqs. (16)/(18) in exact arithmetic.

    Sample weights (``sample_weight`` of ``fit``/``partial_fit``, ``w`` of ``learn_one``)
    are importance weights: a row of weight v counts v times in its class's moments
    (W' = beta W + v, the mean moves by v / W' of the way; an integer v gives the moments
    of v repeated rows when ``forgetting=1``) and its loss term is scaled by v in the
    gradient step (the regularizer is not). The step counter advances by one per row of
    positive weight; a zero weight leaves the row out exactly. The Platt scaling of
    ``predict_proba`` ignores the weights. Class imbalance needs no weights: the loss
    compares each row with the other class's moments, whatever the class sizes.

    References
    ----------
    J. Luo, D. Cheng, B. Zhang. Online AUC Optimization Based on Second-order Surrogate
    Loss. Algorithm 1 and Theorem 6.

    Examples
    --------
    >>> import numpy as np
    >>> from sosl import OAUCM
    >>> from sosl.metrics import auc
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 3)); y = (X[:, 0] + 0.3 * rng.normal(size=500) > 1).astype(int)
    >>> model = OAUCM(lam=0.01).fit(X, y)
    >>> bool(auc(y, model.decision_function(X)) > 0.95)
    True
    """

    _loss = int(Loss.LOSS_M)

    def __init__(self, lam: float = 1e-2, eta: float | None = None,
                 forgetting: float | Auto = 1.0, shuffle: bool = False,
                 random_state: RandomState = None, max_memory: int | Auto = "auto",
                 detector: Detector | None = None, label_delay: int = 0) -> None:
        self.lam = lam
        self.eta = eta
        self.forgetting = forgetting
        self.detector = detector
        self.label_delay = label_delay
        self.shuffle = shuffle
        self.random_state = random_state
        self.max_memory = max_memory


class OAUCS(_LinearSOSL):
    """OAUC-S (= OPAUC): online AUC maximization with the square surrogate psi_S.

    Same moment statistics as :class:`OAUCM`, with the loss

        L_t(w) = lam/2 ||w||^2 + (1 - mu)^2 + s2,

    which equals the average pairwise square loss against all earlier instances of the
    other class exactly (Gao et al., 2016). Online gradient descent with a constant step
    ``eta`` (as in Theorem 5) or ``eta=None`` for 1/(lam t).

    Parameters
    ----------
    lam : float, default=1e-2
        Tikhonov weight lambda (>= 0; > 0 when ``eta=None``).
    eta : float or None, default=1e-2
        Constant step; None gives 1/(lam t). The gradient used is the exact derivative
        2[-(1 - mu) a + Sigma w], twice eq. (13) of the paper (which drops the factor
        2), so ``OAUCS(eta=e)`` takes the steps of the paper's update with step ``2 e``
        (the paper's ``eta`` is twice ours).
    forgetting : float in (0, 1] or "auto", default=1.0
        Forgetting factor of the class moments, as in :class:`OAUCM`.
    detector : object or None, default=None
        The change detector of ``forgetting="auto"``, as in :class:`OAUCM`.
    label_delay : int, default=0
        The label delay of ``forgetting="auto"``, as in :class:`OAUCM`.
    shuffle : bool, default=False
        Visit the rows of each batch in a random order.
    random_state : int, RandomState or None, default=None
        Seed of the shuffling.
    max_memory : int or "auto", default="auto"
        As in :class:`OAUCM`.

    Attributes
    ----------
    coef_, w_, intercept_, means_, covariances_, counts_, t_, n_seen_, classes_, \
n_features_in_
        As in :class:`OAUCM`.

    References
    ----------
    W. Gao, L. Wang, R. Jin, S. Zhu, Z.-H. Zhou. One-pass AUC optimization. Artificial
    Intelligence, 2016. J. Luo, D. Cheng, B. Zhang, eq. (13) and Theorem 5.

    Examples
    --------
    >>> import numpy as np
    >>> from sosl import OAUCS
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3)); y = (X[:, 0] > 0).astype(int)
    >>> OAUCS(lam=0.01, eta=0.01).fit(X, y).coef_.shape
    (1, 3)
    """

    _loss = int(Loss.LOSS_S)

    def __init__(self, lam: float = 1e-2, eta: float | None = 1e-2,
                 forgetting: float | Auto = 1.0, shuffle: bool = False,
                 random_state: RandomState = None, max_memory: int | Auto = "auto",
                 detector: Detector | None = None, label_delay: int = 0) -> None:
        self.lam = lam
        self.eta = eta
        self.forgetting = forgetting
        self.detector = detector
        self.label_delay = label_delay
        self.shuffle = shuffle
        self.random_state = random_state
        self.max_memory = max_memory
