"""The linear online baselines of the paper's Table 2, plus SOLAM.

* :class:`Perceptron` and :class:`PAI` -- accuracy-oriented online classifiers;
* :class:`OAM` -- online AUC maximization with reservoir-sampled buffers
  (``update='seq'`` is OAM_seq, ``update='gra'`` is OAM_gra);
* :class:`OLUBAUC` -- online learning on a univariate bound of the AUC risk
  (a reconstruction, see its docstring);
* :class:`SOLAM` -- stochastic online AUC maximization, O(p) time and memory per round;
* :class:`AdaOAM` -- one-pass square-loss AUC gradient with AdaGrad steps, O(p^2).

All share the API of :class:`sosl.OAUCM`: one online pass per ``fit``/``partial_fit``
in the order given, ``classes_[1]`` positive, transactional state, pickling mid-stream.
Each runs a typed kernel of :mod:`sosl._core._baselines` beside its NumPy reference in
:mod:`sosl._core._baselines_ref`.

Sparse input: Perceptron, PA-I, OL-UBAUC, SOLAM and OAM accept scipy.sparse matrices in
``fit``, ``partial_fit``, ``decision_function`` and ``learn_one`` (converted once to CSR)
and learn the same model as from the same rows given dense (up to rounding, tested at
rtol 1e-12: tests/test_baselines.py::test_sparse_input_equals_dense). Perceptron, PA-I,
OL-UBAUC and SOLAM then cost O(nnz(x_t)) per row instead
of O(p): their weights are held as a scale times a vector during a pass, so the shrinkage
of OL-UBAUC and the projection of SOLAM multiply one number, and SOLAM's average of the
iterates is updated only on the row's columns. A call still does O(p) work once (copying
the state so that a failed call leaves the model unchanged, and forming ``w_``). OAM,
first called on sparse rows, keeps its buffers as sparse rows and costs
O(buffer_size x nnz) per row and no O(p) work per call (see its Notes). AdaOAM (O(p^2)
state) accepts sparse input a densified block at a time.

Rows so large that a score w.x, a squared norm or a scalar of the state is not finite in
double precision raise ``FloatingPointError`` (in training and in scoring) and leave the
model as it was.

``learn_one`` on a fitted model plays the row without the general path's re-validation:
OAM (dense buffers), SOLAM and AdaOAM run a typed round on the live state
(``oam_one``, ``solam_one``, ``adaoam_one`` of :mod:`sosl._core._baselines`: the pass's
round on one row, saving the O(p) values it writes and restoring them if one comes out
non-finite; AdaOAM's O(p^2) covariance update is made last, once it cannot overflow, so
nothing O(p^2) is copied); the other learners, and CSR rows, play the round on copies of
the state. Either way the result equals ``partial_fit`` on the row bit for bit.
"""
from __future__ import annotations

import dataclasses
import math
from numbers import Integral, Real
from typing import Literal

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ._base import _ONE_ROW, BaseOnlineAUC, _blocks, _model_lock
from ._capabilities import Capabilities, Domain
from ._coef import LinearCoef
from ._core import _baselines
from ._core._calibration import platt_steps
from ._core._codes import OamUpdate, Schedule
from ._input import _all_finite, _canonical_csr, _canonical_row, _finite_array
from ._typing import Auto, RandomState

__all__ = ["Perceptron", "PAI", "OAM", "OLUBAUC", "SOLAM", "AdaOAM"]

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
                 Domain("covariances_", "psd")))

    _one_row_by_copy = True       # learn_one: the pass on copies, without the general path

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

    def __getstate__(self):
        state = super().__getstate__()
        state.pop("_one_row_work", None)
        return state

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


class Perceptron(_RowLocalBaseline):
    """Rosenblatt's perceptron, no bias: one online pass of mistake-driven updates.

    A round with ``s_t w.x_t <= 0`` (a mistake, or a point on the boundary) adds
    ``s_t x_t`` to ``w``; other rounds leave ``w`` unchanged. It minimizes no AUC loss;
    the paper uses it as an accuracy-oriented baseline. Starting from ``w = 0`` the
    learned direction is invariant to a step size, so there is no hyper-parameter.

    Parameters
    ----------
    shuffle : bool, default=False
        Visit the rows of each batch in a seeded random order.
    random_state : int, RandomState or None, default=None
        Seed of the shuffling (used only with ``shuffle=True``).

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features)
        The weights w after the last round, shaped as in scikit-learn's binary linear
        classifiers: a view of ``w_`` (writes go through; assigning an array of shape
        (1, n_features) or (n_features,) replaces the weights).
    w_ : ndarray of shape (n_features,)
        The same weights, the 1-D state array the typed pass updates in place.
    intercept_ : ndarray of shape (1,)
        Always 0 (the perceptron of the paper has no bias).
    t_, n_seen_ : int
        Rounds played (instances seen) since ``fit`` or the first ``partial_fit``.
    classes_ : ndarray of shape (2,)
        The labels; ``classes_[1]`` is the positive class.
    n_features_in_ : int
        Number of features.

    Notes
    -----
    Equal to ``sklearn.linear_model.Perceptron(fit_intercept=False, shuffle=False,
    max_iter=1, tol=None)`` on the same rows
    (tests/test_baselines.py::test_perceptron_equals_sklearn). Cost per round O(p), memory O(p);
    O(nnz(x_t)) per round on sparse rows.

    References
    ----------
    F. Rosenblatt. The perceptron: a probabilistic model for information storage and
    organization in the brain. Psychological Review, 65(6):386-408, 1958.

    Examples
    --------
    >>> import numpy as np
    >>> from sosl import Perceptron
    >>> X = np.array([[1.0, 0.5], [-1.0, -0.2], [0.8, 0.1], [-0.6, -0.9]])
    >>> Perceptron().fit(X, [1, 0, 1, 0]).coef_
    array([[1. , 0.5]])
    """

    _state_names = ("w_", "intercept_")
    _parameter_constraints: dict = dict(_COMMON)
    _sparse_input = True

    def __init__(self, shuffle: bool = False, random_state: RandomState = None) -> None:
        self.shuffle = shuffle
        self.random_state = random_state

    def _init_state(self, n_features):
        return {"w_": np.zeros(n_features), "intercept_": np.zeros(1)}

    def _pass(self, state, X, s, order):
        if sp.issparse(X):
            state["t_"] = _baselines.perceptron_pass_csr(X.data, X.indices, X.indptr, s, order,
                                                         state["w_"], state["t_"])
        else:
            state["t_"] = _baselines.perceptron_pass(X, s, order, state["w_"], state["t_"])


class PAI(_RowLocalBaseline):
    """PA-I, the passive-aggressive online classifier with aggressiveness C.

    Round t solves min_w 1/2 ||w - w_t||^2 + C xi subject to
    ``1 - s_t w.x_t <= xi, xi >= 0``, whose solution is

        w_{t+1} = w_t + tau_t s_t x_t,  tau_t = min(C, max(0, 1 - s_t w_t.x_t) / ||x_t||^2).

    Parameters
    ----------
    C : float, default=1.0
        Aggressiveness C > 0 (the largest step tau_t).
    shuffle : bool, default=False
        Visit the rows of each batch in a seeded random order.
    random_state : int, RandomState or None, default=None
        Seed of the shuffling (used only with ``shuffle=True``).

    Attributes
    ----------
    coef_, w_ : ndarray of shape (1, n_features), (n_features,)
        The weights w after the last round (``coef_`` a view of ``w_``, as in
        :class:`Perceptron`).
    intercept_ : ndarray of shape (1,)
        Always 0 (no bias, as in the paper's baseline).
    t_, n_seen_, classes_, n_features_in_
        As in :class:`Perceptron`.

    Notes
    -----
    A row with ``x_t = 0`` gives no direction and is skipped (as scikit-learn does).
    Equal to scikit-learn's PA-I (``SGDClassifier(loss='hinge', penalty=None,
    learning_rate='pa1', eta0=C, fit_intercept=False, shuffle=False, max_iter=1)``) on
    the same rows (tests/test_baselines.py::test_pai_equals_sklearn_pa1). Cost per round
    O(p), memory O(p); O(nnz(x_t)) per round on
    sparse rows.

    References
    ----------
    K. Crammer, O. Dekel, J. Keshet, S. Shalev-Shwartz, Y. Singer. Online
    passive-aggressive algorithms. JMLR, 7:551-585, 2006.

    Examples
    --------
    >>> import numpy as np
    >>> from sosl import PAI
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> PAI(C=0.5).fit(X, [1, 0]).coef_
    array([[ 0.5, -0.5]])
    """

    _state_names = ("w_", "intercept_")
    _parameter_constraints: dict = {**_COMMON, "C": [_POSITIVE]}
    _sparse_input = True

    def __init__(self, C: float = 1.0, shuffle: bool = False,
                 random_state: RandomState = None) -> None:
        self.C = C
        self.shuffle = shuffle
        self.random_state = random_state

    def _init_state(self, n_features):
        return {"w_": np.zeros(n_features), "intercept_": np.zeros(1)}

    def _pass(self, state, X, s, order):
        if sp.issparse(X):
            state["t_"] = _baselines.pa1_pass_csr(X.data, X.indices, X.indptr, s, order,
                                                  state["w_"], state["t_"], float(self.C))
        else:
            state["t_"] = _baselines.pa1_pass(X, s, order, state["w_"], state["t_"],
                                              float(self.C))


_OAM_UPDATES = {"seq": int(OamUpdate.OAM_SEQ), "gra": int(OamUpdate.OAM_GRA)}


class OAM(_LinearBaseline):
    """OAM: online AUC maximization with two reservoir-sampled buffers (OAM_seq, OAM_gra).

    Round t compares ``x_t`` with the buffered instances of the other class through the
    pairwise hinge loss ``max(0, 1 - s_t w.(x_t - x))`` and minimizes, approximately,

        1/2 ||w - w_t||^2 + C_t sum_{x in B^{other}} max(0, 1 - s_t w.(x_t - x)),
        C_t = C max(1, N_t^{other} / buffer_size),

    where the weight C_t makes the buffer stand for all N_t^{other} instances of its
    class seen so far. ``update='seq'`` takes one PA-style step per buffered instance,
    ``tau = min(C_t/2, loss / ||x_t - x||^2)``; ``update='gra'`` one gradient step
    ``w += (C_t/2) s_t sum_{active x} (x_t - x)`` evaluated at ``w_t``. Then ``x_t``
    enters its own class's buffer by reservoir sampling, so each buffer is a uniform
    sample of its class.

    Parameters
    ----------
    C : float, default=1.0
        Penalty C > 0 of the pairwise losses.
    update : {'seq', 'gra'}, default='seq'
        Sequential (OAM_seq) or gradient (OAM_gra) update of the classifier.
    buffer_size : int, default=100
        Capacity of each buffer (N_+ = N_-; 100 in the paper).
    shuffle : bool, default=False
        Visit the rows of each batch in a seeded random order.
    random_state : int, RandomState or None, default=None
        Seeds the reservoir sampling (and the shuffling with ``shuffle=True``). The
        generator state is kept in ``rng_state_``, so a pickled model continues the same
        random stream.
    max_memory : int or "auto", default="auto"
        Largest size, in bytes, of the sparse buffer slots (checked before they widen for
        a longer row, counting the transactional copy). "auto" is half the memory
        available at the time. Past it ``MemoryError`` names the size.

    Attributes
    ----------
    coef_, w_ : ndarray of shape (1, n_features), (n_features,)
        The weights w after the last round (``coef_`` a view of ``w_``, as in
        :class:`Perceptron`).
    intercept_ : ndarray of shape (1,)
        ``-w_ @ (mean(B^-) + mean(B^+)) / 2`` (0 until both buffers hold an
        instance): puts the ``predict`` threshold midway between the projected buffer
        means. AUC ignores it.
    buffers_ : ndarray of shape (2, buffer_size, n_features), or tuple of two sparse matrices
        The buffers, element k for ``classes_[k]``. A model whose first call
        (``fit`` or the first ``partial_fit``) received dense rows stores them dense:
        an array whose first ``buffer_fill_[k]`` rows of ``buffers_[k]`` are in use (the
        stored array itself, ``buffer_rows_``). A model whose first call received a
        scipy.sparse matrix stores them sparse, and ``buffers_`` is then a tuple of two
        ``scipy.sparse.csr_matrix`` of shapes ``(buffer_fill_[k], n_features)``, built on
        each access from the slots below (O(buffer_size x row length), never a dense
        array).
    buffer_rows_ : ndarray of shape (2, buffer_size, n_features) or None
        The dense buffers (None in a model with sparse buffers).
    buffer_indices_, buffer_values_ : ndarray of shape (2, buffer_size, capacity) or None
        The sparse buffers (None in a model with dense buffers): slot q of buffer k holds
        ``buffer_nnz_[k, q]`` sorted column indices (int32) and their values, followed by
        zeros. The capacity is the smallest power of two at least the longest row seen,
        so it grows by doubling and does not depend on how the rows were split into
        calls.
    buffer_nnz_ : ndarray of shape (2, buffer_size) or None
        Number of stored values of the row in each slot (sparse buffers).
    buffer_fill_ : ndarray of shape (2,)
        Number of instances in each buffer.
    counts_ : ndarray of shape (2,)
        Instances seen per class (N_t^-, N_t^+).
    rng_state_ : ndarray of shape (1,), uint64
        State of the splitmix64 generator of the reservoir sampling.
    t_, n_seen_, classes_, n_features_in_
        As in :class:`Perceptron`.

    Notes
    -----
    Reservoir sampling follows "Algorithm R": the k-th instance of a class (k >
    buffer_size) draws j uniform in {0, ..., k-1} and replaces slot j if j < buffer_size.
    The random numbers come from a splitmix64 generator seeded from ``random_state``
    (written identically in the kernel and the NumPy reference). A pair whose difference
    ``x_t - x`` is 0 (a duplicate) is skipped by the sequential update. Cost per round
    O(buffer_size p), memory O(buffer_size p) on dense rows.

    Sparse rows: the buffers keep the rows sparse and every difference ``x_t - x`` is
    formed on the union of the two rows' columns, so a round costs
    O(sum over the opposite buffer of nnz(x_t) + nnz(x)) and the buffers take
    O(buffer_size x longest row) memory, independent of p; only ``w_`` is p long. The
    model equals the one learned from the same rows given dense (up to the order of the
    sums, tested at rtol 1e-12: tests/test_baselines.py::test_sparse_input_equals_dense).
    A call on such a model saves, for the case it fails, the
    buffers and the entries of ``w_`` the call can change (the columns of its rows
    and of the buffered rows), so ``learn_one`` does no O(p) work either.

    The storage is chosen by the first call and kept: later calls may mix dense and
    sparse rows, which are converted to the model's storage (dense rows to CSR for
    sparse buffers, O(p) per row as a dense row costs anyway; sparse rows densified a
    block at a time for dense buffers), with the same result as the unconverted rows.

    References
    ----------
    P. Zhao, S. C. H. Hoi, R. Jin, T. Yang. Online AUC maximization. ICML 2011.

    Examples
    --------
    >>> import numpy as np
    >>> from sosl import OAM
    >>> from sosl.metrics import auc
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 3)); y = (X[:, 0] + 0.3 * rng.normal(size=400) > 1).astype(int)
    >>> model = OAM(C=0.1, random_state=0).fit(X, y)
    >>> bool(auc(y, model.decision_function(X)) > 0.9)
    True
    """

    _COMMON_STATE = ("w_", "intercept_", "buffer_fill_", "counts_", "rng_state_")
    _DENSE_STORE = ("buffer_rows_",)
    _SPARSE_STORE = ("buffer_indices_", "buffer_values_", "buffer_nnz_")
    _parameter_constraints: dict = {
        **_COMMON, "C": [_POSITIVE], "update": [StrOptions(set(_OAM_UPDATES))],
        "buffer_size": [Interval(Integral, 1, None, closed="left")],
        "max_memory": [_MAX_MEMORY, StrOptions({"auto"})]}
    _sparse_input = True

    def __init__(self, C: float = 1.0, update: Literal["seq", "gra"] = "seq",
                 buffer_size: int = 100, shuffle: bool = False, random_state: RandomState = None,
                 max_memory: int | Auto = "auto") -> None:
        self.max_memory = max_memory
        self.C = C
        self.update = update
        self.buffer_size = buffer_size
        self.shuffle = shuffle
        self.random_state = random_state

    @property
    def _state_names(self):
        # the buffer storage exists from the end of the first pass, which chose it
        if self.__dict__.get("buffer_values_") is not None:
            return self._COMMON_STATE + self._SPARSE_STORE
        if self.__dict__.get("buffer_rows_") is not None:
            return self._COMMON_STATE + self._DENSE_STORE
        return self._COMMON_STATE

    def _layout(self):
        return {"buffer_size": int(self.buffer_size), "update": _OAM_UPDATES[self.update]}

    def _init_state(self, n_features):
        seed = check_random_state(self.random_state).randint(0, np.iinfo(np.int64).max,
                                                             dtype=np.int64)
        state = {
            "w_": np.zeros(n_features),
            "intercept_": np.zeros(1),
            "buffer_fill_": np.zeros(2, dtype=np.int64),
            "counts_": np.zeros(2, dtype=np.int64),
            "rng_state_": np.array([seed], dtype=np.uint64),
        }
        # the storage is created by the first pass, dense or sparse as its rows
        state.update(dict.fromkeys(self._DENSE_STORE + self._SPARSE_STORE))
        return state

    @property
    def buffers_(self):
        """The buffers: a dense (2, buffer_size, n_features) array, or a tuple of two CSR
        matrices (one row per buffered instance) for a model with sparse buffers."""
        check_is_fitted(self, "classes_")
        if self.__dict__.get("buffer_values_") is None:
            return self.buffer_rows_
        p = self.w_.shape[0]
        out = []
        for k in range(2):
            fill = int(self.buffer_fill_[k])
            nnz = self.buffer_nnz_[k, :fill]
            used = np.arange(self.buffer_indices_.shape[2]) < nnz[:, None]
            indptr = np.concatenate([[0], np.cumsum(nnz)]).astype(np.int64)
            out.append(sp.csr_matrix((self.buffer_values_[k, :fill][used],
                                      self.buffer_indices_[k, :fill][used], indptr),
                                     shape=(fill, p)))
        return tuple(out)

    def _backup_names(self, X):
        if self.t_ == 0 or self.__dict__.get("buffer_values_") is None:
            return super()._backup_names(X)
        backup = dict.fromkeys(self._state_names)
        if sp.issparse(X):
            # w changes only on the columns of the call's rows and of the buffered rows
            Bi, Bn = self.buffer_indices_, self.buffer_nnz_
            used = np.arange(Bi.shape[2]) < Bn[..., None]
            backup["w_"] = np.concatenate([X.indices, Bi[used]])
        return backup

    def _pass(self, state, X, s, order):
        budget = self._layout_["buffer_size"]
        p = state["w_"].shape[0]
        if state.get("buffer_rows_") is None and state.get("buffer_values_") is None:
            if sp.issparse(X):
                state["buffer_indices_"] = np.zeros((2, budget, 1), dtype=np.int32)
                state["buffer_values_"] = np.zeros((2, budget, 1))
                state["buffer_nnz_"] = np.zeros((2, budget), dtype=np.int64)
            else:
                state["buffer_rows_"] = np.zeros((2, budget, p))
        common = (state["buffer_fill_"], state["counts_"], state["rng_state_"], state["t_"],
                  float(self.C), self._layout_["update"])
        if state.get("buffer_values_") is not None:
            X = _canonical_csr(X)
            self._reserve(state, int(X.indptr[1] - X.indptr[0]) if X.shape[0] == 1
                          else int(np.diff(X.indptr).max()))
            gradient = self._layout_["update"] == _OAM_UPDATES["gra"]
            state["t_"] = _baselines.oam_pass_csr(
                X.data, X.indices, X.indptr, s, order, state["w_"],
                state["buffer_indices_"], state["buffer_values_"], state["buffer_nnz_"],
                *common, self._scratch(p) if gradient else np.zeros(0),
                np.zeros(budget, dtype=np.uint8))
        elif sp.issparse(X):
            for rows in _blocks(order, p):
                common = common[:3] + (state["t_"],) + common[4:]
                state["t_"] = _baselines.oam_pass(
                    X[rows].toarray(), np.ascontiguousarray(s[rows]),
                    np.arange(rows.shape[0], dtype=np.intp), state["w_"],
                    state["buffer_rows_"], *common, np.zeros(2 * p))
        else:
            state["t_"] = _baselines.oam_pass(X, s, order, state["w_"],
                                              state["buffer_rows_"], *common, np.zeros(2 * p))
        state["intercept_"] = np.array([self._threshold(state)])

    def _learn_one_in_place(self, x, s):
        """A dense row on a model with dense buffers: the typed round
        (:func:`sosl._core._baselines.oam_one`) on the live state, which saves w and the
        counts, and the slot the row replaces as it writes it, and restores them if a weight
        or the intercept is not finite (False is then returned: the general path reports
        it). The pre-score, the round and the intercept are the general path's, bit for
        bit. Other rows (sparse buffers, CSR rows) take the round on copies."""
        d = self.__dict__
        B = d.get("buffer_rows_")
        if B is None or not self._typed_row(x):
            if (d.get("buffer_values_") is not None and type(x) is not np.ndarray
                    and _canonical_row(x, d.get("n_features_in_"))):
                return self._learn_one_csr(x, s)
            return super()._learn_one_in_place(x, s)
        p = x.shape[0]
        pre = self._raw_scores(x.reshape(1, p))
        act = d.get("_one_row_act")
        if act is None or act.shape[0] != B.shape[1]:
            act = d["_one_row_act"] = np.zeros(B.shape[1], dtype=np.uint8)
        icpt = _baselines.oam_one(x, s, d["w_"], B, d["buffer_fill_"], d["counts_"],
                                  d["rng_state_"], float(self.C), d["_layout_"]["update"],
                                  self._one_row_scratch(4 * p), act)
        if icpt != icpt:
            return False
        d["intercept_"] = np.array([icpt])
        self._commit_one_row(pre, s)
        return True

    def _learn_one_csr(self, x, s):
        """A canonical one-row CSR matrix on a model with sparse buffers: the pass on the
        live ``w_`` (``_csr_round_in_place``), which it writes at the columns of the row and
        of the buffered rows (as ``_backup_names`` says), and on copies of the rest of the
        state (buffers, counts, generator: O(buffer_size x width), not O(p))."""
        d = self.__dict__
        Bi, Bn = d["buffer_indices_"], d["buffer_nnz_"]
        cols = np.concatenate([x.indices, Bi[np.arange(Bi.shape[2]) < Bn[..., None]]])
        return self._csr_round_in_place(x, s, cols,
                                        [n for n in self._state_names if n != "w_"])

    def _reserve(self, state, longest):
        """Grow the sparse slots to a power-of-two capacity of at least ``longest`` (every
        slot gets that width: one very long row widens them all, so the size is checked
        against ``max_memory`` first)."""
        cap = state["buffer_indices_"].shape[2]
        if longest <= cap:
            return
        new = 1 << (longest - 1).bit_length()
        slots = state["buffer_indices_"].shape[0] * state["buffer_indices_"].shape[1]
        self._check_memory(
            2 * 12 * slots * new,
            f"{slots} sparse buffer slots of width {new} (the longest row has {longest} "
            "non-zeros), with their transactional copy",
            "Use fewer or shorter rows (e.g. hash the features), a smaller buffer_size, or "
            "raise max_memory (bytes).")
        for name in ("buffer_indices_", "buffer_values_"):
            old = state[name]
            grown = np.zeros(old.shape[:2] + (new,), dtype=old.dtype)
            grown[:, :, :cap] = old
            state[name] = grown

    def _scratch(self, p):
        """The gradient update's p-long sum, all zero again when the pass returns: kept
        across calls, as a fresh array per call would fault its pages in again at large p
        (not pickled)."""
        work = self.__dict__.get("_oam_work")
        if work is None or work.shape[0] != p:
            work = np.zeros(p)
            self.__dict__["_oam_work"] = work
        return work

    def __getstate__(self):
        state = super().__getstate__()
        state.pop("_oam_work", None)
        state.pop("_one_row_act", None)
        return state

    @staticmethod
    def _threshold(state):
        # minus the midpoint of the buffers' mean scores, each the mean of the buffered
        # rows' scores w.x (O(buffered values) on sparse buffers, no p-long mean)
        fill = state["buffer_fill_"]
        if np.any(fill == 0):
            return 0.0
        w = state["w_"]
        with np.errstate(over="ignore", invalid="ignore"):   # checked by _run_pass
            if state.get("buffer_values_") is None:
                return -_baselines.oam_midpoint_dense(w, state["buffer_rows_"], fill)
            return -_baselines.oam_midpoint_score(
                w, state["buffer_indices_"], state["buffer_values_"], state["buffer_nnz_"],
                fill)


class OLUBAUC(_LinearBaseline):
    """OL-UBAUC: online learning on a univariate (one-instance) bound of the AUC risk.

    Reconstruction (the online algorithm of Lyu & Ying could not be read in full; see
    Notes). For any threshold c, a mis-ranked pair has ``f(x+) <= c`` or
    ``f(x-) >= c``, so ``1 - AUC <= P(f <= c | +) + P(f >= c | -)``: a bound with one
    instance per term and each class weighted by the inverse of its frequency. Round t
    takes one subgradient step in ``(w, c)`` on

        lam/2 ||w||^2 + omega_t max(0, 1 - s_t (w.x_t - c)),  omega_t = t / (2 N_t^{s_t}),

    with eta_t = 1/(lam t) (``eta=None``; the step of the O(log T) regret bound for
    strongly convex losses, hence untuned as in the paper) or a constant ``eta``.

    Parameters
    ----------
    lam : float, default=1e-2
        Tikhonov weight lambda (> 0; may be 0 only with a constant ``eta``).
    eta : float or None, default=None
        None gives eta_t = 1/(lam t); a positive float a constant step.
    shuffle : bool, default=False
        Visit the rows of each batch in a seeded random order.
    random_state : int, RandomState or None, default=None
        Seed of the shuffling (used only with ``shuffle=True``).

    Attributes
    ----------
    coef_, w_ : ndarray of shape (1, n_features), (n_features,)
        The weights w after the last round (``coef_`` a view of ``w_``, as in
        :class:`Perceptron`).
    intercept_ : ndarray of shape (1,)
        ``-c``, minus the learned threshold (AUC ignores it).
    threshold_ : ndarray of shape (1,)
        The threshold c.
    counts_ : ndarray of shape (2,)
        Instances seen per class.
    t_, n_seen_, classes_, n_features_in_
        As in :class:`Perceptron`.

    Notes
    -----
    Lyu & Ying (2018) bound the AUC risk through the ranks of the predictions and show
    the ranking can be avoided, giving a univariate objective learned in O(p) time and
    memory per round. Their exact online update was not available to us; the
    class-balanced univariate hinge bound above has the same properties (one instance
    per term, linear cost, a threshold learned with w) and is the version implemented.
    Its AUC figures are therefore not those of the paper's OL-UBAUC column.

    On sparse rows the shrinkage ``w <- (1 - eta_t lam) w`` is applied lazily through a
    scale factor (``w = a u``, folded back into u when |a| < 1e-9), so a round costs
    O(nnz(x_t)); the threshold c is a scalar and the class counts are all the class
    statistics the learner keeps.

    References
    ----------
    S. Lyu, Y. Ying. A univariate bound of area under ROC. arXiv:1804.05981, 2018.

    Examples
    --------
    >>> import numpy as np
    >>> from sosl import OLUBAUC
    >>> from sosl.metrics import auc
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 3)); y = (X[:, 0] + 0.3 * rng.normal(size=400) > 1).astype(int)
    >>> model = OLUBAUC(lam=0.01).fit(X, y)
    >>> bool(auc(y, model.decision_function(X)) > 0.9)
    True
    """

    capabilities = dataclasses.replace(_LinearBaseline.capabilities, per_call_o_p=True)

    _state_names = ("w_", "intercept_", "threshold_", "counts_")
    _parameter_constraints: dict = {**_COMMON, "lam": [_NON_NEGATIVE], "eta": [_POSITIVE, None]}
    _sparse_input = True

    def __init__(self, lam: float = 1e-2, eta: float | None = None, shuffle: bool = False,
                 random_state: RandomState = None) -> None:
        self.lam = lam
        self.eta = eta
        self.shuffle = shuffle
        self.random_state = random_state

    def _check_params(self):
        if self.eta is None and self.lam == 0:
            raise ValueError(f"{type(self).__name__}: lam must be > 0 when eta is None "
                             "(the step is 1/(lam t))")

    def _layout(self):
        return {"schedule": int(Schedule.STEP_INV_LAM_T if self.eta is None
                                else Schedule.STEP_CONSTANT)}

    def _init_state(self, n_features):
        return {"w_": np.zeros(n_features), "intercept_": np.zeros(1),
                "threshold_": np.zeros(1), "counts_": np.zeros(2, dtype=np.int64)}

    def _pass(self, state, X, s, order):
        eta = 0.0 if self.eta is None else float(self.eta)
        args = (state["w_"], state["threshold_"], state["counts_"], state["t_"],
                float(self.lam), self._layout_["schedule"], eta)
        if sp.issparse(X):
            state["t_"] = _baselines.ubauc_pass_csr(X.data, X.indices, X.indptr, s, order,
                                                    *args)
        else:
            state["t_"] = _baselines.ubauc_pass(X, s, order, *args)
        state["intercept_"] = -state["threshold_"]


class SOLAM(_LinearBaseline):
    """SOLAM: stochastic online AUC maximization by a saddle-point formulation.

    The expected pairwise square loss, p(1-p) E[(1 - w.(x - x'))^2 | y = 1, y' = -1],
    equals ``min_{a,b} max_alpha E[F(w, a, b, alpha; x, y)]`` (Theorem 1 of the paper) with

        F = (1-p)(w.x - a)^2 [y=1] + p (w.x - b)^2 [y=-1]
            + 2(1 + alpha)(p w.x [y=-1] - (1-p) w.x [y=1]) - p(1-p) alpha^2,

    p the fraction of positives. Each round takes one projected stochastic gradient
    step, descent in v = (w, a, b) and ascent in alpha, with gamma_t = eta / sqrt(t)
    and the running estimate of p; the model is the gamma-weighted average of the
    iterates. O(p) time and memory per round; O(nnz(x_t)) time per round on sparse rows
    (see Notes).

    Parameters
    ----------
    eta : float, default=1.0
        Step constant zeta > 0 of gamma_t = zeta / sqrt(t).
    radius : float, default=10.0
        Radius R > 0 of the domain ``||w|| <= R, |a|, |b| <= R, |alpha| <= 2R``.
    shuffle : bool, default=False
        Visit the rows of each batch in a seeded random order.
    random_state : int, RandomState or None, default=None
        Seed of the shuffling (used only with ``shuffle=True``).

    Attributes
    ----------
    coef_, w_ : ndarray of shape (1, n_features), (n_features,)
        The averaged weights wbar (``v_avg_[:n_features]``) used to score (``coef_`` a
        view of ``w_``, as in :class:`Perceptron`; the next round recomputes them from
        ``v_avg_``).
    intercept_ : ndarray of shape (1,)
        ``-(abar + bbar) / 2``, the midpoint of the averaged class score means a and b
        (AUC ignores it).
    v_ : ndarray of shape (n_features + 2,)
        The current iterate (w, a, b).
    v_avg_ : ndarray of shape (n_features + 2,)
        Its gamma-weighted average (wbar, abar, bbar).
    alpha_ : ndarray of shape (2,)
        The dual iterate alpha and its weighted average.
    step_sum_ : ndarray of shape (1,)
        Sum of the steps gamma_1 + ... + gamma_t.
    counts_ : ndarray of shape (2,)
        Instances seen per class; p_hat = counts_[1] / t_.
    t_, n_seen_, classes_, n_features_in_
        As in :class:`Perceptron`.

    Notes
    -----
    The domain uses kappa = 1 (kappa = sup ||x|| in the paper; the features are assumed
    scaled) and the initial point is v = 0, alpha = 0, which the paper leaves free.
    p is estimated by the fraction of positives seen so far, including the current one.

    On sparse rows the pass keeps ``w = a u`` and the gamma-weighted sum of the iterates
    as ``c u - Q`` (scalars a, c; vectors u, Q changed only on the row's columns), so
    neither the average nor the projection onto ``||w|| <= R`` touches all p weights; the
    model is the same as on dense rows up to rounding. SOLAM keeps no per-feature class
    statistics (its class statistics a, b are the mean scores), so nothing else in a
    round depends on p.

    References
    ----------
    Y. Ying, L. Wen, S. Lyu. Stochastic online AUC maximization. NeurIPS 29, 2016.

    Examples
    --------
    >>> import numpy as np
    >>> from sosl import SOLAM
    >>> from sosl.metrics import auc
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 3)); y = (X[:, 0] + 0.3 * rng.normal(size=400) > 1).astype(int)
    >>> model = SOLAM(eta=0.5, radius=10.0).fit(X, y)
    >>> bool(auc(y, model.decision_function(X)) > 0.9)
    True
    """

    capabilities = dataclasses.replace(_LinearBaseline.capabilities, per_call_o_p=True)

    _state_names = ("w_", "intercept_", "v_", "v_avg_", "alpha_", "step_sum_", "counts_")
    _in_place_names = ("v_", "v_avg_", "alpha_", "step_sum_", "counts_")
    _parameter_constraints: dict = {**_COMMON, "eta": [_POSITIVE], "radius": [_POSITIVE]}
    _sparse_input = True

    def __init__(self, eta: float = 1.0, radius: float = 10.0, shuffle: bool = False,
                 random_state: RandomState = None) -> None:
        self.eta = eta
        self.radius = radius
        self.shuffle = shuffle
        self.random_state = random_state

    def _init_state(self, n_features):
        return {"w_": np.zeros(n_features), "intercept_": np.zeros(1),
                "v_": np.zeros(n_features + 2), "v_avg_": np.zeros(n_features + 2),
                "alpha_": np.zeros(2), "step_sum_": np.zeros(1),
                "counts_": np.zeros(2, dtype=np.int64)}

    def _pass(self, state, X, s, order):
        p = X.shape[1]
        args = (state["v_"], state["v_avg_"], state["alpha_"], state["step_sum_"],
                state["counts_"], state["t_"], float(self.eta), float(self.radius))
        if sp.issparse(X):
            state["t_"] = _baselines.solam_pass_csr(X.data, X.indices, X.indptr, s, order,
                                                    *args, np.empty(2 * p))
        else:
            state["t_"] = _baselines.solam_pass(X, s, order, *args)
        state["w_"] = state["v_avg_"][:p].copy()
        state["intercept_"] = np.array([-0.5 * (state["v_avg_"][p] + state["v_avg_"][p + 1])])

    def _learn_one_in_place(self, x, s):
        """A dense row: the typed round (:func:`sosl._core._baselines.solam_one`, the pass's
        body on one row) on the live state, which saves what it writes (O(p)) and restores
        it if a value is not finite (False is then returned: the general path reports it);
        ``w_`` is then updated in place. Bit for bit the general path's round. CSR rows
        take the round on copies."""
        if not self._typed_row(x):
            return super()._learn_one_in_place(x, s)
        d = self.__dict__
        p = x.shape[0]
        pre = self._raw_scores(x.reshape(1, p))
        v_avg = d["v_avg_"]
        t = _baselines.solam_one(x, s, d["v_"], v_avg, d["alpha_"], d["step_sum_"],
                                 d["counts_"], d["t_"], float(self.eta), float(self.radius),
                                 self._one_row_scratch(4 * p + 7))
        if t < 0:
            return False
        d["w_"][:] = v_avg[:p]
        d["intercept_"] = np.array([-0.5 * (v_avg[p] + v_avg[p + 1])])
        self._commit_one_row(pre, s, t)
        return True


class AdaOAM(_LinearBaseline):
    """AdaOAM: OPAUC's one-pass square-loss gradient with AdaGrad per-feature steps.

    Round t compares ``x_t`` with all earlier instances of the other class through their
    mean c and covariance S only: with ``a = s_t (x_t - c)`` the loss

        lam/2 ||w||^2 + 1/2 [(1 - w.a)^2 + w' S w]

    is the average pairwise square loss against them (halved), and its gradient g_t is
    applied with the diagonal AdaGrad scaling ``w_i -= eta g_ti / (delta + sqrt(sum_tau
    g_taui^2))``, which adapts each feature's step to the gradients seen so far.

    Parameters
    ----------
    lam : float, default=1e-2
        Tikhonov weight lambda >= 0.
    eta : float, default=0.1
        AdaGrad step eta > 0.
    delta : float, default=1e-8
        AdaGrad smoothing delta >= 0 added to the root of the summed squared gradients.
    shuffle : bool, default=False
        Visit the rows of each batch in a seeded random order.
    random_state : int, RandomState or None, default=None
        Seed of the shuffling (used only with ``shuffle=True``).
    max_memory : int or "auto", default="auto"
        Largest state, in bytes, the learner may allocate (two p x p covariances plus a
        transactional copy: about 32 p^2 bytes). "auto" is half the memory available when
        the state is created. A larger p raises ``MemoryError`` naming the size.

    Attributes
    ----------
    coef_, w_ : ndarray of shape (1, n_features), (n_features,)
        The weights w after the last round (``coef_`` a view of ``w_``, as in
        :class:`Perceptron`).
    intercept_ : ndarray of shape (1,)
        ``-w_ @ (means_[0] + means_[1]) / 2`` (0 until both classes are seen); AUC
        ignores it.
    means_ : ndarray of shape (2, n_features)
        Class means (row k for ``classes_[k]``).
    covariances_ : ndarray of shape (2, n_features, n_features)
        Class covariances (normalized by the count), updated in Welford's form.
    counts_ : ndarray of shape (2,)
        Instances seen per class.
    grad_sq_ : ndarray of shape (n_features,)
        Per-feature sum of the squared gradients.
    t_, n_seen_, classes_, n_features_in_
        As in :class:`Perceptron`.

    Notes
    -----
    The moment statistics make a round cost O(p^2) time and the model O(p^2) memory, like
    :class:`sosl.OAUCS`, whose loss is twice this one's. A feature whose gradients have
    all been 0 (with ``delta=0``) is not moved (0/0 guard).

    References
    ----------
    Y. Ding, P. Zhao, S. C. H. Hoi, Y.-S. Ong. An adaptive gradient method for online
    AUC maximization. AAAI 2015. W. Gao, L. Wang, R. Jin, S. Zhu, Z.-H. Zhou. One-pass
    AUC optimization. Artificial Intelligence, 2016.

    Examples
    --------
    >>> import numpy as np
    >>> from sosl import AdaOAM
    >>> from sosl.metrics import auc
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 3)); y = (X[:, 0] + 0.3 * rng.normal(size=400) > 1).astype(int)
    >>> model = AdaOAM(lam=0.01, eta=0.1).fit(X, y)
    >>> bool(auc(y, model.decision_function(X)) > 0.9)
    True
    """

    _state_names = ("w_", "intercept_", "means_", "covariances_", "counts_", "grad_sq_")
    _parameter_constraints: dict = {**_COMMON, "lam": [_NON_NEGATIVE], "eta": [_POSITIVE],
                                    "delta": [_NON_NEGATIVE],
                                    "max_memory": [_MAX_MEMORY, StrOptions({"auto"})]}
    #: sparse rows are densified a block at a time: the p x p state is dense anyway
    _sparse_input = "blocks"

    def __init__(self, lam: float = 1e-2, eta: float = 0.1, delta: float = 1e-8,
                 shuffle: bool = False, random_state: RandomState = None,
                 max_memory: int | Auto = "auto") -> None:
        self.lam = lam
        self.eta = eta
        self.delta = delta
        self.shuffle = shuffle
        self.random_state = random_state
        self.max_memory = max_memory

    def _init_state(self, n_features):
        # two p x p covariances, and a copy of them while a pass runs (the transaction)
        self._check_memory(
            32 * n_features * n_features + 64 * n_features,
            f"two dense {n_features} x {n_features} covariance matrices with their "
            "transactional copy",
            "Reduce the features, use a learner with O(p) state (sosl.SketchedOAUCM, "
            "sosl.FTRLAUC, sosl.SOLAM), or raise max_memory (bytes).")
        return {"w_": np.zeros(n_features), "intercept_": np.zeros(1),
                "means_": np.zeros((2, n_features)),
                "covariances_": np.zeros((2, n_features, n_features)),
                "counts_": np.zeros(2, dtype=np.int64), "grad_sq_": np.zeros(n_features)}

    def _pass(self, state, X, s, order):
        p = X.shape[1]
        state["t_"] = _baselines.adaoam_pass(
            X, s, order, state["w_"], state["means_"], state["covariances_"],
            state["counts_"], state["grad_sq_"], state["t_"], float(self.lam),
            float(self.eta), float(self.delta), np.zeros(4 * p))
        if np.any(state["counts_"] == 0):
            state["intercept_"] = np.zeros(1)
        else:                                    # non-finite: refused by the general path
            state["intercept_"] = np.array([_baselines.adaoam_intercept(state["w_"],
                                                                    state["means_"])])

    def _learn_one_in_place(self, x, s):
        """A dense row: the typed round (:func:`sosl._core._baselines.adaoam_one`) on the
        live state. It saves w, the squared gradients and the own class's mean (O(p)) and
        makes the O(p^2) covariance update last, once every value of the round is finite
        and the update cannot overflow, so nothing O(p^2) is copied; otherwise it restores
        what it wrote and False is returned (the general path then reports the problem or
        plays the round). Bit for bit the general path's round."""
        if not self._typed_row(x):
            return super()._learn_one_in_place(x, s)
        d = self.__dict__
        p = x.shape[0]
        pre = self._raw_scores(x.reshape(1, p))
        icpt = _baselines.adaoam_one(x, s, d["w_"], d["means_"], d["covariances_"],
                                     d["counts_"], d["grad_sq_"], float(self.lam),
                                     float(self.eta), float(self.delta),
                                     self._one_row_scratch(7 * p))
        if icpt != icpt:
            return False
        d["intercept_"] = np.array([icpt])
        self._commit_one_row(pre, s)
        return True
