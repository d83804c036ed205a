"""Shared machinery of the online pairwise (AUC) learners.

Every estimator in sosl is a binary classifier trained by one online pass over the
samples in the order given. This module holds what they have in common:

* **Hyper-parameters checked on every call.** Each estimator declares a scikit-learn
  constraint table ``_parameter_constraints`` and, for what a table cannot say,
  ``_check_params``. ``fit`` runs both every time; ``partial_fit``, ``decision_function``,
  ``predict`` and the one-row calls run them whenever a hyper-parameter was assigned
  since the last check (``set_params`` or a plain attribute assignment both re-arm it),
  so a value can never reach a pass unchecked, and an unchanged model skips the cost
  of the table.
* **A frozen layout.** ``_layout()`` returns the values that define the shape and meaning
  of the fitted state (budgets in slot order, kernel code, step schedule, ...). They are
  frozen as ``_layout_`` when the state is created; a later call whose hyper-parameters
  would give another layout raises ``ValueError`` instead of reading the new value into
  the old arrays. ``fit`` starts over and freezes again.
* **Labels.** ``classes_[1]`` is the positive class. ``fit`` sorts the labels, as
  scikit-learn does; the first ``partial_fit`` (or ``learn_one``) keeps the order of an
  explicit ``classes=[negative, positive]``, so the positive class can be chosen by name.
  The kernels see ``s = +1`` for ``classes_[1]`` and ``s = -1`` for ``classes_[0]``.
* **Transactional updates.** Bad input is refused before anything is written. A pass runs
  in place on the estimator's arrays except those named by ``_backup_names`` (by default
  all of them), which it runs on copies; the copies replace the attributes only when the
  pass finished with finite values. A learner overrides ``_backup_names`` where it can
  show that the pass cannot produce a non-finite value (see :class:`sosl.OAUCM`), so a
  one-row update need not copy O(p^2) state. A failed call also restores the state of a
  ``random_state`` generator it advanced.
* **One row at a time.** ``learn_one`` looks the label's sign up once and offers the row
  to the learner's ``_learn_one_in_place(x, s)`` hook, which may play the round on the
  live state (saving first what the round can write, restoring it if anything comes out
  non-finite) and must then equal the general path bit for bit; it returns False, with
  the state as it was, whenever the row or the state does not suit it, and the general
  path (a one-row ``partial_fit``) runs. OAUC-M/OAUC-S (a typed stepper), the capped
  SketchedOAUCM, OKAUC-M/OKAUC-S
  (budgeted FIFO buffers, dense rows), FTRL-AUC (CSR rows) and POLK (a typed stepper on
  capacity buffers, dense rows) implement it.
* **The step counter** ``t_``, kept across ``partial_fit`` calls.
* **One caller at a time.** Every public call (``fit``, ``partial_fit``, the one-row
  calls, the scores and probabilities) holds the model's own re-entrant lock, so threads
  sharing a model are served one call after the other: the result is that of some
  serial order of their calls, never a mix of two. Calls on different models run in
  parallel (the typed passes release the GIL). The lock is not pickled.

Subclasses provide ``_state_names`` (the fitted attributes making up the state),
``_init_state(n_features)``, ``_run_pass(state, X, s, order)`` and ``_decision(X)``.
What a learner's pass and scores accept and do (sparse rows, weights, the Platt steps in the
pass, ...) is declared in its :class:`~sosl._capabilities.Capabilities` record, one frozen
record for every trait; e.g. with ``sparse_input=True`` it receives CSR matrices (float64,
sorted int32 indices) in ``_run_pass`` and ``_decision``, and with the default (False)
sparse input raises ``TypeError``. A typed one-row helper is built by the learner's
``_new_stepper`` and cached by the base (``_stepper()``, ``_forget_stepper()``).
"""

from __future__ import annotations

import copy
import functools
import os
import warnings
from numbers import Real
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from ._capabilities import UNSCALED, Capabilities, register
from ._capabilities import model_lock as _model_lock
from ._capabilities import same as _same
from ._core._numeric import sigmoid, sigmoid_one
from ._input import (
    _check_binary,
    _finite_array,
    _max_abs,
    _one_row,
    _two_numbers,
)
from ._passes import _IN_SAMPLE_ROWS, _ONE_ROW, _blocks, _PassPlumbing  # noqa: F401
from ._validation import _Validation
from ._version import __version__
from .exceptions import InconsistentVersionWarning

if TYPE_CHECKING:                        # typing.Self is Python >= 3.11
    from collections.abc import Sequence

    from typing_extensions import Self

    from .state import LearnerState
else:
    Self = "BaseOnlineAUC"

__all__ = ["BaseOnlineAUC"]


#: with ``max_memory="auto"``, a need of at most this many bytes is allowed without reading
#: the available memory (reading ``/proc/meminfo`` is a fixed cost on every call that a
#: fast fit would notice); a machine without 32 MiB to spare fails the
#: allocation itself, with a MemoryError
_AUTO_MEMORY_FLOOR = 16 * 2**20


def available_memory():
    """Bytes of memory available to this process now (MemAvailable), or None if unknown."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _size(n):
    """A byte count for a message: GiB with one decimal, MiB below 0.1 GiB."""
    return f"{n / 2**30:.1f} GiB" if n >= 0.1 * 2**30 else f"{n / 2**20:.1f} MiB"


def _locked(method):
    """Run a public method under the model's lock (see the module docstring)."""
    @functools.wraps(method)
    def call(self, *args, **kwargs):
        with _model_lock(self.__dict__):
            return method(self, *args, **kwargs)
    return call






class BaseOnlineAUC(_Validation, _PassPlumbing, ClassifierMixin, BaseEstimator):
    """Base class: validation, labels, frozen layout, transactional online passes.

    Not meant to be instantiated. See :class:`sosl.OAUCM` for a concrete learner.
    """

    #: what the learner can do (merge rule, parallel modes, value domains of its state):
    #: see :mod:`sosl._capabilities`; a subclass declares its own or inherits the domains
    capabilities: ClassVar[Capabilities] = Capabilities()
    #: scikit-learn constraint table of the hyper-parameters (checked on every call)
    _parameter_constraints: dict = {}
    #: names of the fitted attributes that make up the learner's state
    _state_names: tuple[str, ...] = ()

    if TYPE_CHECKING:
        # a learner's own, called only when its record sets ``one_row_score``
        def _one_row_score(self, x: Any) -> float | None: ...

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        register(cls)

    # -- hooks for subclasses ----------------------------------------------------------
    def _check_params(self) -> None:
        """Cross-parameter checks the constraint table cannot express (raise ValueError)."""

    def _layout(self) -> dict:
        """Values that define the fitted state's layout, frozen as ``_layout_``."""
        return {}

    def _init_state(self, n_features: int) -> dict:  # pragma: no cover - overridden
        """Return a dict of fresh state arrays for ``n_features`` features."""
        raise NotImplementedError

    def _run_pass(self, state, X, s, order) -> None:  # pragma: no cover - overridden
        """Update ``state`` (a dict of arrays, modified in place) by one pass."""
        raise NotImplementedError

    def _decision(self, X) -> np.ndarray:  # pragma: no cover - overridden
        """Scores of validated rows ``X`` (larger means more positive)."""
        raise NotImplementedError

    def _first_batch(self, X) -> None:
        """Read what a new fit takes from its first batch (validated rows ``X``), before the
        state is created and the layout frozen (e.g. a row scale, the storage of the
        support vectors); a mixin that defines it calls ``super()._first_batch(X)``."""

    def _finite_X(self, X) -> bool:
        """Whether the dense float64 C-contiguous batch ``X`` of a fitted model is finite
        (``partial_fit``'s fast path); with ``capabilities.scan_max_abs`` the same scan
        takes max |X|, remembered for the pass (``sosl._input._max_abs``)."""
        if self.capabilities.scan_max_abs:
            R = _max_abs(X)
            return R == R                       # NaN unless every entry is finite
        return bool(np.isfinite(X).all())

    def _backup_names(self, X) -> tuple | dict:
        """State arrays the pass over ``X`` must run on copies of (default: all).

        A learner may return a dict instead: ``name -> index array`` for an array the pass
        changes only at those entries (they are saved and written back if the call fails;
        the array itself is updated in place), ``name -> None`` for a full copy.
        """
        return self._state_names

    def _memory_limit(self, need: int | None = None) -> tuple:
        """``(bytes or None, what the limit is)`` from ``max_memory`` (see ``_check_memory``)."""
        max_memory = getattr(self, "max_memory", "auto")
        if max_memory == "auto":
            if need is not None and need <= _AUTO_MEMORY_FLOOR:
                return None, ""                 # too small to ask the system about
            avail = available_memory()
            return (None, "") if avail is None else (avail // 2, "half the available memory")
        return int(max_memory), "max_memory"

    def _warn_once(self, key: str, category, message: str) -> None:
        """``warnings.warn(message, category)`` the first time ``key`` comes up for this
        model (remembered in ``_warned``, pickled with it; a new ``fit`` forgets it)."""
        warned = self.__dict__.get("_warned", ())
        if key not in warned:
            self.__dict__["_warned"] = warned + (key,)
            warnings.warn(f"{type(self).__name__}: {message}", category, stacklevel=4)

    def _check_memory(self, need: int, what: str, advice: str) -> None:
        """Raise ``MemoryError`` before allocating ``need`` bytes (``what`` says for what)
        when that is more than ``max_memory`` allows: a number of bytes, or "auto" (the
        default, also for a learner without the parameter), half the memory available (a
        need of at most ``_AUTO_MEMORY_FLOOR``, 16 MiB, is allowed without asking)."""
        limit, source = self._memory_limit(need)
        if limit is not None and need > limit:
            raise MemoryError(
                f"{type(self).__name__} would need {what}: about {_size(need)}, more than "
                f"{source} ({_size(limit)}). {advice}"
            )

    # -- hyper-parameters ----------------------------------------------------------------
    def __setattr__(self, name, value):
        # any change of a public attribute (a hyper-parameter) re-arms the full check of
        # the one-row calls; fitted attributes end in '_' and private ones start with it.
        # A fitted attribute assigned (a load, a state set by hand) drops the typed
        # one-row helper, which is bound to the arrays it was built from
        if not name.startswith("_"):
            if name.endswith("_"):
                self.__dict__.pop("_stepper_", None)
            else:
                self.__dict__["_params_ok"] = False
        object.__setattr__(self, name, value)

    def _sparse_mode(self) -> bool | str:
        """How sparse input is taken: ``capabilities.sparse_input``, with "storage" read
        from the frozen layout (True for CSR slots, "blocks" otherwise)."""
        mode = self.capabilities.sparse_input
        if mode == "storage":
            lay = self.__dict__.get("_layout_")
            return True if lay is not None and lay.get("storage") == "csr" else "blocks"
        return mode

    # -- the typed one-row helper: one cache, two hooks of the base ----------------------
    def _new_stepper(self) -> Any:
        """A learner's typed one-row helper bound to the current state (or None when the
        state has none); called by :meth:`_stepper` when the cache is empty or stale."""
        return None

    def _stepper(self) -> Any:
        """The cached typed one-row helper (``_stepper_``), built by ``_new_stepper`` on
        first use. It is bound to the state arrays it was built on, so every path that
        replaces one drops it: a commit of a pass, a fresh state, the round on copies, a
        fitted attribute assigned (``__setattr__``), a hyper-parameter changed."""
        d = self.__dict__
        st = d.get("_stepper_")
        if st is not None:
            return st
        st = self._new_stepper()
        d["_stepper_"] = st
        return st

    def _forget_stepper(self) -> None:
        """Drop the cached helper: the state or the hyper-parameters it holds changed."""
        self.__dict__.pop("_stepper_", None)

    def _check_hyper(self, fitted: bool) -> None:
        """Constraint table, cross checks and (when fitted) the frozen layout."""
        self._validate_params()
        self._check_numbers()
        self._check_params()
        if fitted:
            self._check_layout()
        self.__dict__["_params_ok"] = True

    def _recheck_hyper(self) -> None:
        """The full check of a fitted model, unless no hyper-parameter was assigned since
        the last one (every assignment, by ``set_params`` or directly, re-arms it)."""
        if not self.__dict__.get("_params_ok", False):
            self._check_hyper(fitted=True)
            self._forget_stepper()                   # may hold the old hyper-parameters

    def _check_numbers(self) -> None:
        """Numeric hyper-parameters are finite and not booleans (a table cannot say so)."""
        for name, constraints in self._parameter_constraints.items():
            if not any(isinstance(c, Interval) for c in constraints):
                continue
            value = getattr(self, name)
            if isinstance(value, (bool, np.bool_)) and "boolean" not in constraints:
                raise TypeError(f"The '{name}' parameter of {type(self).__name__} must be a "
                                f"number, got {value!r} (a boolean)")
            if isinstance(value, Real) and not np.isfinite(value):  # type: ignore[call-overload]
                raise ValueError(f"The '{name}' parameter of {type(self).__name__} must be "
                                 f"finite, got {value!r}")

    def _check_layout(self) -> None:
        frozen = getattr(self, "_layout_", None)
        if frozen is None:
            return
        now = self._layout()
        for key, old in frozen.items():
            new = now.get(key)
            if not _same(old, new):
                raise ValueError(
                    f"{type(self).__name__}: {key} changed from {old!r} to {new!r} since the "
                    "model was fitted; the fitted state was built for the old value. Set it "
                    "back, or call fit() to start over with the new one."
                )

    # -- public API ----------------------------------------------------------------------
    @_locked
    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Self:
        """Reset the model and learn from ``(X, y)`` in one online pass.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training instances, processed in the given row order (or in a seeded
            random order if ``shuffle=True``).
        y : array-like of shape (n_samples,)
            Labels; exactly two distinct values. ``classes_[1]`` (the larger one in
            sorted order) is the positive class.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative importance weights of the rows. A zero weight leaves the row out
            exactly (it does not advance ``t_``); other weights need a learner with a
            weighted form (OAUCM, OAUCS: see their notes), the others refuse them.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        return self._transaction(self._fit, X, y, sample_weight)

    @_locked
    def partial_fit(self, X: ArrayLike, y: ArrayLike, classes: ArrayLike | None = None,
                    sample_weight: ArrayLike | None = None) -> Self:
        """Continue the online pass with the samples ``(X, y)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            New instances, processed in the given row order.
        y : array-like of shape (n_samples,)
            Their labels, a subset of ``classes_``.
        classes : array-like of shape (2,), default=None
            Both labels, ``[negative, positive]``: on the first call the order given is
            kept, so ``classes_[1] = classes[1]`` is the positive class. Required on the
            first call unless ``y`` already holds two distinct labels (then they are
            sorted, as in ``fit``); if given later it must hold the same two labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative importance weights of the rows, as in :meth:`fit`.

        Returns
        -------
        self : object
            The updated estimator.
        """
        return self._transaction(self._partial_fit, X, y, classes, sample_weight)

    @_locked
    def decision_function(self, X: ArrayLike) -> np.ndarray:
        """Score of each row: larger means more likely positive (``classes_[1]``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,)
        """
        if "classes_" not in self.__dict__:      # the cheap test first (one-row calls)
            check_is_fitted(self, "classes_")
        self._recheck_hyper()
        X = self._validate_X(X, reset=False)
        return self._finite_scores(self._raw_scores(X))

    @_locked
    def predict(self, X: ArrayLike) -> np.ndarray:
        """Predicted labels: ``classes_[1]`` where the decision function is positive.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        scores = self.decision_function(X)
        return self.classes_[(scores > 0).astype(np.intp)]

    # -- one row at a time ---------------------------------------------------------------
    def learn_one(self, x: ArrayLike, y: Any, classes: ArrayLike | None = None,
                  w: float = 1.0) -> None:
        """Update the model with one instance, in place; returns nothing.

        Equal, bit for bit, to ``partial_fit(x[None, :], [y])``. The hyper-parameters are
        checked in full on the first call and again whenever one of them was assigned
        since the last check (``set_params`` or attribute assignment).

        Parameters
        ----------
        x : array-like of shape (n_features,)
            One instance.
        y : label
            Its label, one of ``classes_``.
        classes : array-like of shape (2,), default=None
            ``[negative, positive]``; required on the first call of a fresh model.
        w : float, default=1.0
            Importance weight of the instance (river's name), as ``sample_weight`` of
            :meth:`partial_fit`: 0 leaves the model unchanged (the row is still checked).
        """
        if classes is None and w == 1.0:
            fast = self.capabilities.compiled_round
            if fast is not None:
                R = fast(self.__dict__, x, y)
                if R is not None:
                    if R > UNSCALED:
                        self._warn_unscaled(R)
                    return
        d = self.__dict__
        lock = d.get("_lock_")
        with lock if lock is not None else _model_lock(d):
            if w != 1.0:
                return self._learn_one_weighted(x, y, classes, w)
            signs = d.get("_signs_")
            if signs is not None and classes is None and d.get("_params_ok"):
                try:
                    s = signs.get(y)
                except TypeError:                # unhashable label: the general path says so
                    s = None
                if s is not None and self._learn_one_in_place(x, s):
                    return
            self._learn_one_general(x, y, classes)

    def _learn_one_weighted(self, x, y, classes, w):
        """learn_one with a weight other than 1: a one-row partial_fit with that weight."""
        if not hasattr(self, "classes_"):
            if classes is None:
                raise ValueError("classes=[negative_label, positive_label] must be passed on "
                                 "the first call to learn_one")
        self.partial_fit(_one_row(x), np.asarray([y]), classes=classes, sample_weight=[w])

    def _learn_one_general(self, x, y, classes):
        if not hasattr(self, "classes_"):
            if classes is None:
                raise ValueError("classes=[negative_label, positive_label] must be passed on "
                                 "the first call to learn_one")
            self.partial_fit(_one_row(x), np.asarray([y]), classes=classes)
            return
        if classes is not None:
            self._check_same_classes(classes)
        self._recheck_hyper()
        x = self._validate_row(x)
        s = self._sign_of(y)
        self._transaction(self._learn_validated, x.reshape(1, -1), np.array([s]))

    def _learn_one_in_place(self, x, s: float) -> bool:
        """Play the round of ``x`` (label sign ``s``) on the live state of a fitted model,
        bit for bit as the general path would; return False, with the state as it was,
        when ``x`` or the state does not suit it, or the round would fail: the general
        path then runs (and reports whatever is wrong). Default: the round on copies of
        the state (``_learn_one_by_copy``) for learners with ``capabilities.one_row_by_copy``,
        otherwise never."""
        return self.capabilities.one_row_by_copy and self._learn_one_by_copy(x, s)

    def score_one(self, x: ArrayLike) -> float:
        """Decision value of one instance: ``decision_function`` on one row (up to the order
        in which a learner's typed path sums the products)."""
        with _model_lock(self.__dict__):
            if "classes_" not in self.__dict__:  # the cheap test first (one-row calls)
                check_is_fitted(self, "classes_")
            self._recheck_hyper()
            x = self._validate_row(x)
            return float(self._finite_scores(self._raw_scores(
                x.reshape(1, -1)))[0])  # type: ignore[union-attr]  # x is the validated row

    @_locked
    def predict_one(self, x: ArrayLike) -> Any:
        """Predicted label of one instance."""
        return self.classes_[int(self.score_one(x) > 0)]

    # -- internals ---------------------------------------------------------------------------
    def _fit(self, X, y, sample_weight=None):
        if not self.__dict__.get("_params_ok", False):
            # checked by the last fit or partial_fit, and no hyper-parameter assigned since
            # (every assignment re-arms the check: ``__setattr__``)
            self._check_hyper(fitted=False)
        X, y = self._validate_Xy(X, y, reset=True)
        self._first_batch(X)
        sw = self._check_weights(sample_weight, X.shape[0], fresh=True)
        pair = _two_numbers(y)
        if pair is not None:                # the common case, without sorting y
            classes, s = pair               # s: +1 for classes[1], -1 for classes[0]
        else:
            classes = np.unique(y)
            if classes.shape[0] != 2:
                _check_binary(y, classes)
                raise ValueError(
                    f"{type(self).__name__} is a binary (AUC) learner and needs exactly two "
                    f"classes in y; got {classes.shape[0]} class(es): {classes.tolist()[:5]}"
                )
            s = None
        self._start(X.shape[1], classes)
        self._learn(X, self._signs(y, known=True) if s is None else s, fresh=True, sw=sw,
                    final=True)

    def _partial_fit(self, X, y, classes, sample_weight=None):
        first = not hasattr(self, "classes_")
        if first:
            self._check_hyper(fitted=False)
        else:
            self._recheck_hyper()
        X, y = self._validate_Xy(X, y, reset=first)
        if first:
            self._first_batch(X)
        sw = self._check_weights(sample_weight, X.shape[0], fresh=first)
        if first:
            if classes is None:
                classes = np.unique(y)
                _check_binary(y, classes)
                if classes.shape[0] != 2:
                    raise ValueError(
                        "classes=[negative_label, positive_label] must be passed on the first "
                        "call to partial_fit unless y holds both classes; y holds "
                        f"{classes.tolist()}"
                    )
            classes = np.asarray(classes)
            if classes.ndim != 1 or classes.shape[0] != 2 or classes[0] == classes[1]:
                raise ValueError("classes must hold exactly two distinct labels "
                                 f"[negative, positive], got {classes.tolist()}")
            self._check_known(y, classes)
            self._start(X.shape[1], classes)
        elif classes is not None:
            self._check_same_classes(classes)
        self._learn(X, self._signs(y, known=first), fresh=first, sw=sw)

    def _start(self, n_features, classes):
        """Fresh state, frozen layout and labels (committed by the caller's transaction)."""
        self.__dict__.pop("_warned", None)
        state = self._init_state(n_features)
        state["t_"] = 0
        state["n_seen_"] = 0
        state["calibration_"] = np.array([1.0, 1.0])     # [A, H] of the Platt scaling
        self._forget_stepper()
        for name, value in state.items():
            setattr(self, name, value)
        self.classes_ = classes
        self._layout_ = self._layout()
        self._signs_ = {classes[0].item() if hasattr(classes[0], "item") else classes[0]: -1.0,
                        classes[1].item() if hasattr(classes[1], "item") else classes[1]: 1.0}

    @_locked
    def predict_proba(self, X: ArrayLike) -> np.ndarray:
        """Probability of each class, from an online Platt scaling of the score.

        ``P(classes_[1] | x) = sigmoid(A f(x))`` with f the decision function and A > 0 a
        slope learned prequentially: every ``partial_fit``/``learn_one`` call first scores
        its rows with the model as it was, then takes one Newton step per row on their
        logistic loss (a quadratic prior of the accumulated curvature keeps the steps
        small as evidence grows, see ``sosl._core._calibration``). ``fit`` (and the first
        ``partial_fit``) have no earlier model, so they learn A from the scores of the
        model after the pass on the last (at most 10,000) rows of the pass. The scaling has
        no offset of its own, so the most probable class is always the one ``predict``
        gives.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, 2)
            Columns in the order of ``classes_``.
        """
        f = self.decision_function(X)
        p1 = sigmoid(self.calibration_[0] * f)
        return np.column_stack([1.0 - p1, p1])

    @_locked
    def predict_log_proba(self, X: ArrayLike) -> np.ndarray:
        """Logarithm of :meth:`predict_proba` (computed without underflow)."""
        f = self.decision_function(X)
        u = self.calibration_[0] * f
        return np.column_stack([-np.logaddexp(0.0, u), -np.logaddexp(0.0, -u)])

    def predict_proba_one(self, x: ArrayLike) -> dict:
        """``{label: probability}`` of one instance (river's convention)."""
        d = self.__dict__
        lock = d.get("_lock_")
        # one hold for the score and the slope, so both are of the same model; a learner
        # whose record says so scores here without re-entering the lock (score_one does)
        with lock if lock is not None else _model_lock(d):
            f = self._one_row_score(x) if self.capabilities.one_row_score else None
            if f is None:
                f = self.score_one(x)
            # the math module's sigmoid of one float (NumPy's costs far more on a scalar)
            p1 = sigmoid_one(float(d["calibration_"][0]) * f)
            signs = d.get("_signs_")                # the labels in classes_ order, as
            if signs is None:                       # Python scalars (a pickle without them)
                signs = [v.item() if hasattr(v, "item") else v for v in d["classes_"]]
            negative, positive = signs
            return {negative: 1.0 - p1, positive: p1}

    def _finite_scores(self, scores):
        if not _finite_array(scores):
            raise FloatingPointError(
                f"{type(self).__name__}: some scores are not finite (the input is too large "
                "for this model's weights; scale the features)."
            )
        return scores

    # -- state for merging and moving models (see sosl.state) ------------------------------
    def get_state(self) -> LearnerState:
        """The fitted state as a versioned, picklable :class:`sosl.state.LearnerState`."""
        from .state import get_state
        return get_state(self)                  # under the model's lock

    @classmethod
    def from_state(cls, state: LearnerState) -> Self:
        """A fitted estimator of this class holding ``state`` (see :mod:`sosl.state`)."""
        from .state import from_state
        return from_state(state, cls=cls)

    @classmethod
    def merge(cls, models: Sequence[BaseOnlineAUC | LearnerState],
              weights: ArrayLike | None = None) -> Self:
        """One fitted model from ``models`` (fitted estimators or their states) trained on
        shards of one stream: exact merges of the class moments and the t-weighted
        weights (see :func:`sosl.state.merge`, which names the learners that merge and
        why the others cannot)."""
        from .state import LearnerState, from_state, get_state, merge
        states = [m if isinstance(m, LearnerState) else get_state(m) for m in models]
        return from_state(merge(states, weights=weights), cls=cls)

    # -- snapshots: each route reads the whole state under the model's lock --------------
    def __getstate__(self):
        with _model_lock(self.__dict__):
            state = dict(super().__getstate__())     # object's may be the live __dict__
            state.pop("_stepper_", None)             # typed helpers are rebuilt on demand
            state.pop("_lock_", None)                # a lock is per process and per object
            for name in self.capabilities.scratch:   # work buffers, rebuilt on demand
                state.pop(name, None)
            # pickle serializes the returned dict after the lock is released: the arrays a
            # later call updates in place are copied now (an array held twice, once)
            copies: dict = {}
            for k, v in state.items():
                if isinstance(v, np.ndarray):
                    if id(v) not in copies:
                        copies[id(v)] = v.copy()
                    state[k] = copies[id(v)]
        state["_sosl_version"] = __version__
        return state

    def __deepcopy__(self, memo):
        with _model_lock(self.__dict__):
            state = self.__getstate__()              # arrays copied under the lock
            for v in state.values():
                if isinstance(v, np.ndarray):        # fresh already: not copied twice
                    memo[id(v)] = v
            state = copy.deepcopy(state, memo)
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        new.__setstate__(state)
        return new

    def __sklearn_clone__(self):
        with _model_lock(self.__dict__):             # the parameters, read as one
            return super().__sklearn_clone__()

    def __setstate__(self, state):
        state = dict(state)
        version = state.pop("_sosl_version", "before 0.2.0")
        if version != __version__:
            warnings.warn(InconsistentVersionWarning(estimator_name=type(self).__name__,
                                                     original_version=version,
                                                     current_version=__version__),
                          stacklevel=2)
        super().__setstate__(state)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.sparse = bool(self._sparse_mode())
        return tags
