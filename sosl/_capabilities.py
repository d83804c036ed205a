"""What each learner can do, declared on its class, and the registry of learners.

Every learner class carries one frozen :class:`Capabilities` record (``cls.capabilities``)
saying how its state merges, which modes :class:`sosl.dask.Parallel` can run it in, the
value domain of each state field, and what the adapters need to know. Shared modules
(:mod:`sosl.state`, :mod:`sosl.dask`, :mod:`sosl.river`) read the record instead of lists
of learner names, so a new learner declares itself in one place.

The record also holds the learner's *pass traits*: what its typed pass and scores accept
and do (sparse rows, weights, a finiteness check or the Platt steps inside the pass, the
one-row round on copies, NumPy warnings of its scores, caches left out of pickles or kept
for one call). :class:`sosl._base.BaseOnlineAUC` reads them instead
of one class attribute per trait, so the base class has one member a learner declares for
all of them.

A subclass that changes none of the state hooks (:data:`STATE_HOOKS`) inherits its
parent's record whole. One that defines any of them in its own class body (new state, a
new update or objective) keeps only the parent's value domains, adapter hints and pass
traits (:attr:`Capabilities.INHERITED`): its parent's merge rule and parallel modes would
otherwise apply to it, silently wrong. It declares ``capabilities = ...`` in its class
body to say what it can do (one line, e.g. ``dataclasses.replace(Parent.capabilities,
parallel=())``), or ``capabilities = changes(weighted=True)``: the record it would get
without a declaration, with those fields changed.

This module imports nothing of sosl above ``_core``, so both :mod:`sosl._base` and :mod:`sosl.state`
can use it (the model lock and layout comparison live here for that reason).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ._core._blas import one_blas_thread
from ._core._lock import ModelLock

__all__ = ["Capabilities", "Domain", "REGISTRY", "UNSCALED", "changes", "register",
           "check_domains", "model_lock", "same"]


def model_lock(d: dict) -> Any:
    """The re-entrant lock of the model whose ``__dict__`` is ``d`` (made on first use;
    ``setdefault`` is atomic, so two threads racing here get the same lock).

    A :class:`sosl._core._lock.ModelLock`: ``threading.RLock``'s interface, and its holder
    visible to compiled code. Every call that changes the model holds it; the typed
    ``score_one`` readers read without taking it while nobody else holds it, which is safe
    because their check and their read run under the GIL with no Python code between
    them and every writer holds the lock for the whole of its write, GIL released or not
    (the argument in full: the docstring of :mod:`sosl._core._lock`). A reader that finds
    the lock held by another thread takes it like any other call."""
    lock = d.get("_lock_")
    return lock if lock is not None else d.setdefault("_lock_", ModelLock())


def same(a: Any, b: Any) -> bool:
    """Whether two layout values are equal (arrays compared by value)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a), np.asarray(b))
    return bool(a == b)


# -- value domains -------------------------------------------------------------------------
#: the rules a :class:`Domain` may name, and what each requires of every entry
RULES = {
    "nonneg": "finite numbers >= 0",
    "positive": "finite numbers > 0",
    "psd_upper": "a stack of symmetric positive semi-definite matrices (upper triangles "
                 "stored; rounding tolerated)",
    "psd": "a stack of symmetric positive semi-definite matrices (rounding tolerated)",
    "count": "integer counts >= 0",
    "index": "integers >= -1",
}

#: relative rounding tolerated by the PSD and symmetry checks
_PSD_RTOL = 1e-8


@dataclass(frozen=True)
class Domain:
    """``field`` (a state array or value) must satisfy ``rule`` (a key of :data:`RULES`)."""

    field: str
    rule: str

    def __post_init__(self):
        if self.rule not in RULES:
            raise ValueError(f"unknown domain rule {self.rule!r}")


def _numeric(value: Any) -> np.ndarray | None:
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, (int, float, np.integer, np.floating)):
        return np.asarray(value)
    if isinstance(value, np.ndarray) and value.dtype.kind in "iuf":
        return value
    return None


def _psd_stack(M: np.ndarray, upper: bool) -> str | None:
    if M.ndim < 2 or M.shape[-1] != M.shape[-2]:
        return "is not a stack of square matrices"
    M = M.reshape((-1,) + M.shape[-2:]).astype(np.float64)
    for S in M:
        if upper:
            S = np.triu(S) + np.triu(S, 1).T
        scale = float(np.max(np.abs(S))) if S.size else 0.0
        if scale == 0.0:
            continue
        if not upper and np.max(np.abs(S - S.T)) > _PSD_RTOL * scale:
            return "is not symmetric"
        # PSD within rounding: a Cholesky factor exists once the diagonal is raised by the
        # tolerance (one O(p^3 / 3) factorization, no eigenvalues)
        try:
            with one_blas_thread():             # small factorizations: threads cost more
                np.linalg.cholesky(S + (_PSD_RTOL * scale * S.shape[0]) * np.eye(S.shape[0]))
        except np.linalg.LinAlgError:
            return "is not positive semi-definite"
    return None


def _violation(rule: str, value: Any) -> str | None:
    """What is wrong with ``value`` under ``rule`` (None if nothing)."""
    a = _numeric(value)
    if a is None:
        return f"is a {type(value).__name__}, not a number or numeric array"
    if a.dtype.kind == "f" and not np.isfinite(a).all():
        return "holds NaN or infinity"
    if rule == "nonneg" and (a < 0).any():
        return "holds a negative value"
    if rule == "positive" and (a <= 0).any():
        return "holds a value <= 0"
    if rule in ("psd", "psd_upper"):
        return _psd_stack(a, rule == "psd_upper")
    if rule == "count":
        # not bounded by t: sosl.dask gives a block's model the moments of every block (its
        # prior) while its step counter counts only the rounds it played
        if a.dtype.kind not in "iu" and not np.array_equal(a, np.round(a)):
            return "holds a count that is not an integer"
        if (a < 0).any():
            return "holds a negative count"
    if rule == "index" and (a < -1).any():
        return "holds an index below -1"
    return None


def check_domains(domains: tuple[Domain, ...], arrays: dict, where: str) -> None:
    """Raise ValueError naming the first field of ``arrays`` outside its domain."""
    for d in domains:
        if d.field not in arrays:
            continue
        why = _violation(d.rule, arrays[d.field])
        if why is not None:
            raise ValueError(f"{where}: state field {d.field!r} {why} (it must hold "
                             f"{RULES[d.rule]})")


def check_calibration(calibration: Any, where: str) -> np.ndarray:
    """The Platt state ``[A, H]`` as a float array; ValueError unless A > 0 and H > 0
    (the learners keep A >= 1e-12, a positive slope, and H, a curvature, > 0)."""
    try:
        c = np.array(calibration, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: the calibration must be two numbers [A, H]") from None
    if c.shape != (2,) or not np.isfinite(c).all() or c[0] <= 0 or c[1] <= 0:
        raise ValueError(f"{where}: the calibration must be a finite [A, H] with A > 0 and "
                         f"H > 0, got {c.tolist()}")
    return c


#: the largest |x| a learner that rescales nothing accepts without a warning
UNSCALED = 1e4


# -- the record ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Capabilities:
    """What a learner class can do (read by sosl.state, sosl.dask and the adapters).

    Attributes
    ----------
    merge : {"moments", "sketch", "ftrl"} or None
        The exact merge rule :func:`sosl.state.merge` applies (None: not mergeable).
    merge_weights : bool
        Whether ``merge(weights=)`` applies (FTRL-AUC mixes per coordinate instead).
    merge_layout : tuple of (str, object)
        Layout values a state needs to merge (``(("max_columns", None),)``: a sketch
        capped to a column budget cannot merge).
    parallel : tuple of str
        The ``moments=`` modes of :class:`sosl.dask.Parallel` it runs in, the default one
        first (empty: not at all).
    fixed_shapes : bool
        Its state arrays have a fresh state's shapes, whatever it saw.
    growable : frozenset of str
        Arrays whose last axis is a capacity that may differ between states.
    domains : tuple of Domain
        The value domain of each state field, checked by ``from_state`` and ``merge``.
    per_call_o_p : bool
        A one-row call does O(p) work (a copy of the weights): the river adapter picks a
        smaller hashing dimension by default.

    The pass traits (read by :class:`sosl._base.BaseOnlineAUC`):

    sparse_input : {False, True, "blocks", "storage"}
        Sparse input: True, ``_run_pass`` and ``_decision`` read CSR rows (float64,
        sorted int32 indices); "blocks", accepted and densified a block of rows at a
        time (a state dense per feature anyway); "storage", True once the frozen layout
        says ``storage="csr"`` and "blocks" before (the kernel learners, whose first call
        of a fit picks the storage); False, refused with TypeError.
    pass_checks_finite : bool
        ``_run_pass`` raises ``ValueError("Input X contains NaN or infinity.")`` on a
        non-finite dense row before the pass ends: a fresh ``fit`` skips the separate
        finiteness scan of X (the transaction discards the partial state).
    platt_in_pass : bool
        ``_run_pass`` takes ``pre=`` (the rows' scores before the call) and plays the
        prequential Platt step of each row on ``state["calibration_"]`` inside the pass,
        in row order, skipping non-finite scores: the steps ``platt_steps`` would take
        after the pass, overlapped with the rounds (dense input only).
    pass_takes_identity : bool
        ``_run_pass`` takes ``order=None`` for every row in the given order (dense X).
    one_row_by_copy : bool
        ``learn_one`` on a fitted model plays a finite float64 row (dense, or a canonical
        one-row CSR matrix when ``sparse_input`` is True) through ``_run_pass`` on copies
        of the state, without the general path's re-validation and whole-object
        transaction (for learners whose state is small or copied anyway).
    weighted : bool
        ``_run_pass`` takes the row weights as a fifth argument (its weighted form is
        documented by the learner); otherwise only weights 0 and 1 are accepted (rows
        of weight 0 are left out before the pass).
    scan_max_abs : bool
        The finiteness scan of a fitted model's dense batch (``partial_fit``'s fast path)
        also takes max |x| (``sosl._input._max_abs``, remembered for the array), which
        ``_backup_names`` or the pass reads next (OAUC-M's bound): one scan, not two.
    final_fit_pass : bool
        ``_run_pass`` takes ``final=True`` on the last pass call of ``fit`` (never of
        ``partial_fit``, whose stream goes on), so it may close what a stream keeps open:
        NystroemOAUCM builds its map from a fit shorter than its warm-up.
    one_row_score : bool
        The learner has ``_one_row_score(x)``: the score of one row on the live state, by
        ``decision_function``'s expression, or None when the row or the model does not
        suit it (the general path then runs and says why), called with the model's lock
        held. The base's ``predict_proba_one`` scores with it inside its one hold of the
        lock, not through ``score_one``, which would take the lock a second time.
    decision_warns : bool
        ``_decision`` on validated rows may emit NumPy's floating-point warnings (False
        for a typed kernel: the scores skip the ``errstate`` context).
    scratch : tuple of str
        Instance attributes that are caches derived from the state (work buffers): left
        out of pickles and deep copies, rebuilt on demand.
    call_scratch : tuple of str
        Instance attributes valid within one call only (e.g. rows the pass mapped, kept
        for the scores that follow it): dropped when the call ends, failed or not.
    compiled_round : callable or None
        ``f(model.__dict__, x, y)``: ``learn_one``'s round of a fitted model played in
        compiled code with the model's lock taken there (weight 1, no ``classes``).
        It returns the largest ``|x|`` seen so far once the round is played (the base
        then warns through ``_warn_unscaled`` above :data:`UNSCALED`), or None with
        nothing changed, and the base's path plays the round (the lock held elsewhere, a
        row or a state the compiled round does not cover).
    """

    merge: str | None = None
    merge_weights: bool = True
    merge_layout: tuple = ()
    parallel: tuple[str, ...] = ()
    fixed_shapes: bool = False
    growable: frozenset = frozenset()
    domains: tuple[Domain, ...] = ()
    per_call_o_p: bool = False
    sparse_input: bool | str = False
    pass_checks_finite: bool = False
    platt_in_pass: bool = False
    pass_takes_identity: bool = False
    one_row_by_copy: bool = False
    weighted: bool = False
    scan_max_abs: bool = False
    final_fit_pass: bool = False
    one_row_score: bool = False
    decision_warns: bool = True
    scratch: tuple[str, ...] = ()
    call_scratch: tuple[str, ...] = ()
    compiled_round: Any = None

    #: the fields a subclass inherits without declaring its own record: the value domains,
    #: the adapter hint and the pass traits (a subclass changing its pass says so)
    INHERITED = ("domains", "per_call_o_p", "sparse_input", "pass_checks_finite",
                 "platt_in_pass", "pass_takes_identity", "one_row_by_copy", "weighted",
                 "scan_max_abs", "final_fit_pass", "one_row_score", "decision_warns",
                 "scratch", "call_scratch", "compiled_round")

    def __post_init__(self):
        if self.sparse_input not in (False, True, "blocks", "storage"):
            raise ValueError(f"sparse_input must be False, True, 'blocks' or 'storage', got "
                             f"{self.sparse_input!r}")

    def merge_refusal(self, layout: dict) -> str | None:
        """Why a state of this layout cannot merge (None if it can)."""
        if self.merge is None:
            return "is not mergeable (it has no merge rule)"
        for key, value in self.merge_layout:
            if not same(layout.get(key), value):
                return (f"is not mergeable with {key}={layout.get(key)!r}: it merges only "
                        f"with {key}={value!r}")
        return None


class _Changes:
    """A class body's ``capabilities = changes(...)``, resolved by :func:`register`."""

    def __init__(self, fields: dict):
        unknown = set(fields) - set(Capabilities.__dataclass_fields__)
        if unknown:
            raise TypeError(f"unknown capability field(s) {sorted(unknown)}")
        self.fields = fields


def changes(**fields: Any) -> Capabilities:
    """``capabilities = changes(weighted=True)`` in a class body: the record the class would
    get without a declaration (module docstring), with these fields changed."""
    return _Changes(fields)  # type: ignore[return-value]  # resolved by register()


#: every learner class defined in sosl, by class name (filled by ``__init_subclass__``)
REGISTRY: dict[str, Any] = {}


#: the hooks whose override makes a subclass's state or update its own
STATE_HOOKS = ("_state_names", "_init_state", "_run_pass", "_layout")


def register(cls: type) -> None:
    """Record ``cls`` and give it a :class:`Capabilities` record: its own if its class
    body declares one, its parent's if it overrides no state hook, else the parent's
    inherited fields only (module docstring)."""
    own = cls.__dict__.get("capabilities")
    if own is None or isinstance(own, _Changes):
        parent = next((c.__dict__["capabilities"] for c in cls.__mro__[1:]
                       if isinstance(c.__dict__.get("capabilities"), Capabilities)),
                      Capabilities())
        record = parent
        if any(h in cls.__dict__ for h in STATE_HOOKS):
            record = Capabilities(**{f: getattr(parent, f) for f in Capabilities.INHERITED})
        if own is not None:
            record = replace(record, **own.fields)
        if record is not parent:
            cls.capabilities = record  # type: ignore[attr-defined]
    elif not isinstance(own, Capabilities):
        raise TypeError(f"{cls.__name__}.capabilities must be a Capabilities record")
    if cls.__module__.startswith("sosl.") and not cls.__name__.startswith("_"):
        REGISTRY[cls.__name__] = cls
