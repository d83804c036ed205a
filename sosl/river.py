"""The sosl learners as river classifiers: dict rows, ``learn_one``, ``predict_proba_one``.

Each public learner of sosl has a twin here with the same name and hyper-parameters
(``sosl.river.FTRLAUC(gamma=0.5)``, ``sosl.river.OAUCM(lam=0.01)``, ...), a
``river.base.Classifier`` for river pipelines and ``river.evaluate.progressive_val_score``::

    from river import evaluate, feature_extraction, metrics
    import sosl.river

    model = feature_extraction.BagOfWords() | sosl.river.FTRLAUC()
    evaluate.progressive_val_score(dataset, model, metrics.ROCAUC())

The adapter does three things around the wrapped sosl estimator (``estimator_``):

* **Dict rows to the learner's row type.** A learner that reads CSR rows in its typed
  pass (FTRLAUC, SketchedOAUCM, every linear baseline except AdaOAM, and the kernel
  learners, which then keep their support vectors sparse) receives each row as a one-row
  canonical ``scipy.sparse.csr_matrix`` (sorted unique int32 indices, float64 values),
  built directly from the dict: O(keys) work, never a p-long vector. OAUCM, OAUCS and
  AdaOAM keep p x p matrices and take dense rows in their fast one-row path; they
  receive a dense vector of their small dimension. A ``predict_proba_one`` followed by
  the ``learn_one`` of an equal dict (river's progressive validation predicts a row, then
  learns it) makes the row once, when it was hashed from ``str`` keys.
* **Keys to columns, any new key accepted** (as river's own linear models accept them).
  The column of a key comes from, in this order:

  - a declared ``features`` list (column j is ``features[j]``; a key outside it follows
    ``unknown``);
  - **feature hashing** into ``n_hash`` columns when ``n_hash`` is an integer: column
    ``abs(h) % n_hash`` and, with ``alternate_sign=True``, sign ``+1`` if ``h >= 0``
    else ``-1``, for h the signed 32-bit murmurhash3 (seed 0) of the UTF-8 key, and the
    values of keys sharing a column are added: for ``str`` keys the very row
    ``sklearn.feature_extraction.FeatureHasher(n_hash, input_type="dict")`` makes. A key
    of another type is hashed by ``"<type name>:<repr>"`` (so ``1`` and ``"1"`` differ;
    use keys whose ``repr`` is stable: numbers, strings, tuples of them). Stateless, any
    number of keys, collisions possible;
  - a **growing index** when ``n_hash=None``: each key gets the next free column the
    first time a row learned holds it (the new keys of one row in sorted order, so the
    columns do not depend on the order of a dict's keys), up to ``max_features`` keys;
    a key beyond that follows ``unknown``. Exact (no collisions), an index of the keys.

  ``unknown="raise"`` (default) refuses a row with a key that finds no column, naming
  it; ``"ignore"`` drops the key. In prediction a key without a column is dropped (the
  model has learned nothing about it). Absent keys and zero values are zeros, as river's
  sparse dicts mean.

  The defaults follow each learner's cost per row. The learners whose one-row call does
  no O(p) work (FTRLAUC, Perceptron, PA-I, OAM, SketchedOAUCM and the kernel learners;
  their state is O(p) at most) hash into 2**20 columns. OL-UBAUC and SOLAM hash into
  2**16: their one-row call still does O(p) work (a copy of the weights), which 2**20
  columns would make slow. OAUCM, OAUCS and AdaOAM keep p x p matrices (16 p^2
  bytes; O(p^2) per row), so a large p is out of the question: they use the growing
  index with ``max_features=128`` and refuse a 129th key
  with a message. For text and other open vocabularies use
  ``sosl.river.SketchedOAUCM`` (the second-order learner on a frequent-directions
  sketch, O(r p) memory) or FTRLAUC; or pass ``n_hash`` to hash into a small dimension.
* **Labels and probabilities.** With ``classes=None`` the labels are a positive flag
  (True/1 positive, False/0 negative; river's binary convention) and probabilities are
  keyed by False/True; ``classes=(negative, positive)`` names the two labels. The
  probabilities are the estimator's own: ``predict_proba_one`` returns
  ``estimator_.predict_proba_one`` of the row (the learner's online Platt scaling
  ``sigmoid(A f(x))``, learned prequentially inside ``learn_one``; see
  :meth:`sosl.OAUCM.predict_proba`), relabelled. Before the first ``learn_one`` it is
  1/2 for each label.

The learners' ``random_state`` is called ``seed`` here, as river names it (its checks
seed a model through that name). The adapter's own parameters (``features``, ``n_hash``,
``max_features``, ``alternate_sign``, ``unknown``, ``classes``) are checked when the
adapter is made and at the first ``learn_one``, and frozen with the model then; a later
change raises ``ValueError`` (``clone()`` starts over with the new values).

river is an optional dependency (``pip install sosl[river]``); without it the classes
raise ImportError when used.
"""
from __future__ import annotations

import inspect
from numbers import Integral
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils import murmurhash3_32

import sosl as _sosl

try:
    from river import base as _river_base
except ImportError:  # pragma: no cover - exercised only without river
    _river_base = None  # type: ignore[assignment]

__all__ = ["SOSLClassifier", "ExactAveragePrecision", "ExactPartialROCAUC", "ExactROCAUC"]

# river metrics (exact ROC AUC, partial AUC, average precision), next to the classifiers
if _river_base is not None:
    from ._river_metrics import ExactAveragePrecision, ExactPartialROCAUC, ExactROCAUC

_Base = _river_base.Classifier if _river_base is not None else object
_ADAPTER_PARAMS = ("features", "n_hash", "max_features", "alternate_sign", "unknown",
                   "classes")
#: the adapter parameters' annotations in the generated signatures (strings, as the
#: learners' own under ``from __future__ import annotations``)
_ADAPTER_TYPES = {"features": "Sequence[Hashable] | None", "n_hash": "int | None",
                  "max_features": "int | None", "alternate_sign": "bool",
                  "unknown": 'Literal["raise", "ignore"]', "classes": "tuple[Any, Any] | None"}

#: the river name of an estimator's parameter (river seeds its checks through ``seed``)
_RENAMED = {"random_state": "seed"}
_ESTIMATOR_NAME = {v: k for k, v in _RENAMED.items()}
#: str keys whose hashed column the adapter remembers (about 3 MB of short keys)
_SLOT_CACHE = 2**14
#: default dimension of the growing index of the learners with p x p state
_DENSE_MAX_FEATURES = 128


# -- one-row CSR matrices ----------------------------------------------------------------
def _csr_by_constructor(data, indices, p):
    return sp.csr_matrix((data, indices, np.array([0, data.shape[0]], dtype=np.int32)),
                         shape=(1, p))


def _empty_attrs(p):
    """The attributes of an empty canonical one-row CSR matrix of width ``p``."""
    empty = _csr_by_constructor(np.zeros(0), np.zeros(0, dtype=np.int32), p)
    empty.has_canonical_format = True
    return dict(empty.__dict__)


def _copied(attrs, data, indices):
    """A one-row CSR matrix with the attributes ``attrs`` and the given arrays."""
    x = object.__new__(sp.csr_matrix)
    x.__dict__.update(attrs)
    x.data = data
    x.indices = indices
    x.indptr = np.array([0, data.shape[0]], dtype=np.int32)
    return x


class _CSRRows:
    """Makes one-row canonical CSR matrices of width ``p`` from sorted unique indices.

    scipy's constructor spends most of a one-row call checking its arguments; a row made
    here from arrays known to be canonical skips that: a copy of the attributes of an
    empty row made once by the constructor (shape, flags set to canonical), with the new
    arrays put in.
    Whether that gives the constructor's matrix is checked once per process on a test
    row; if it does not (another scipy), every row goes through the constructor.
    """

    _fast = None

    def __init__(self, p):
        self.p = p
        self._attrs = _empty_attrs(p)
        if _CSRRows._fast is None:
            _CSRRows._fast = _copies_work()

    def __call__(self, data, indices):
        if _CSRRows._fast:
            return _copied(self._attrs, data, indices)
        x = _csr_by_constructor(data, indices, self.p)
        x.has_canonical_format = True
        return x

    def __reduce__(self):
        return (_CSRRows, (self.p,))


def _copies_work():
    """Whether ``_copied`` gives the constructor's matrix (on a test row)."""
    try:
        p = 1000
        data, indices = np.array([1.5, -2.0, 3.0]), np.array([3, 17, 999], dtype=np.int32)
        want = _csr_by_constructor(data, indices, p)
        got = _copied(_empty_attrs(p), data.copy(), indices.copy())
        v = np.arange(p, dtype=np.float64)
        return bool(type(got) is type(want) and got.format == "csr" and got.shape == (1, p)
                    and got.nnz == 3 and got.has_canonical_format
                    and (got != want).nnz == 0 and np.array_equal(got @ v, want @ v)
                    and np.array_equal(got.toarray(), want.toarray())
                    and np.array_equal(got.indptr, want.indptr))
    except Exception:  # pragma: no cover - another scipy: use the constructor
        return False


# -- keys and values ---------------------------------------------------------------------
def _key_text(k):
    """The text a key is hashed by."""
    return k if type(k) is str else f"{type(k).__name__}:{k!r}"


def _sortable(keys):
    try:
        return sorted(keys)
    except TypeError:                      # keys of mixed types: a total order by text
        return sorted(keys, key=lambda k: (type(k).__name__, repr(k)))


def _number(owner, k, v):
    """A feature value as a float (bool and numpy numbers included); str, bytes, None and
    other objects refused."""
    if not isinstance(v, (str, bytes)) and v is not None:
        try:
            return float(v)
        except (TypeError, ValueError):
            pass
    raise TypeError(f"{owner}: feature {k!r} has the value {v!r}; the learners need numbers "
                    "(encode it first, e.g. river's preprocessing.OneHotEncoder)")


class SOSLClassifier(_Base):  # type: ignore[misc,valid-type]
    """Shared adapter of a sosl learner to river's ``Classifier`` (see the module text).

    Not instantiated directly: use the per-learner classes (``sosl.river.FTRLAUC``, ...),
    which take the learner's hyper-parameters plus the adapter's below.

    Parameters
    ----------
    features : sequence of hashable or None, default=None
        Declared feature keys, in column order: the dimension is their number.
        ``n_hash`` and ``max_features`` are then unused.
    n_hash : int or None, default=2**20
        Hash every key into this many columns (see the module text); None uses the
        growing index. Default 2**16 for OLUBAUC and SOLAM, None for
        OAUCM, OAUCS and AdaOAM.
    max_features : int, default=2**20
        Capacity (hence dimension) of the growing index; unused when hashing. Default
        2**16 for OLUBAUC and SOLAM, 128 for OAUCM, OAUCS and AdaOAM.
    alternate_sign : bool, default=True
        With hashing, flip the sign of the value of a key whose hash is negative (so the
        collisions tend to cancel in inner products, as sklearn's FeatureHasher does).
    unknown : {"raise", "ignore"}, default="raise"
        What a key learned that finds no column (outside ``features``, or beyond
        ``max_features``) does. Unused when hashing.
    classes : tuple (negative, positive) or None, default=None
        The two labels; None takes the labels as a positive flag.

    Attributes
    ----------
    estimator_ : sosl estimator or None
        The wrapped learner (None before the first ``learn_one``).
    features_ : list or None
        The keys of the columns, in column order (None when hashing).
    n_features : int
        The dimension the learner sees.
    calibration_ : ndarray of shape (2,) or None
        The estimator's ``calibration_`` ([A, H]: ``P(positive) = sigmoid(A f(x))``).
    """

    _estimator_class: Any = None
    _estimator_params: tuple[str, ...] = ()
    _sparse_rows = True
    # set in __init__ (declared here for the type checker)
    estimator_: Any
    features: Any
    classes: Any
    _index: dict
    _layout: Any
    _last: Any
    _rows: Any
    _slots: dict

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if _river_base is None:
            raise ImportError("sosl.river needs the river package: pip install 'sosl[river]'")
        if self._estimator_class is None:
            raise TypeError("SOSLClassifier is the shared adapter; use a learner's class, "
                            "e.g. sosl.river.FTRLAUC(...)")
        bound = self._signature().bind(self, *args, **kwargs)
        bound.apply_defaults()
        for name, value in list(bound.arguments.items())[1:]:
            setattr(self, name, value)
        self._check_adapter_params()
        self._index = {} if self.features is None else {k: j for j, k in enumerate(self.features)}
        self._layout = None
        self._rows = None
        self._last = None                  # (copy of the dict predicted last, its row)
        self._slots = {}                   # str key -> column (~column: negative sign)
        self.estimator_ = None

    @classmethod
    def _signature(cls):
        return inspect.signature(cls.__init__)

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"n_hash": 16}

    # -- checks ------------------------------------------------------------------------
    def _check_adapter_params(self):
        name = type(self).__name__
        if self.features is not None:
            if isinstance(self.features, (str, bytes, dict)) or not hasattr(self.features,
                                                                            "__iter__"):
                raise TypeError(f"{name}: features must be a sequence of feature keys, got "
                                f"{type(self.features).__name__}")
            self.features = tuple(self.features)
            if len(self.features) == 0:
                raise ValueError(f"{name}: features is empty")
            if len(set(self.features)) != len(self.features):
                raise ValueError(f"{name}: features holds a key twice")
        for param, allow_none in (("n_hash", True), ("max_features", False)):
            value = getattr(self, param)
            if value is None and allow_none:
                continue
            if isinstance(value, bool) or not isinstance(value, Integral):
                raise TypeError(f"{name}: {param} must be an integer"
                                f"{' or None' if allow_none else ''}, got {value!r}")
            if not 1 <= int(value) <= np.iinfo(np.int32).max:
                raise ValueError(f"{name}: {param} must be in [1, 2**31 - 1], got {value}")
        if not isinstance(self.alternate_sign, (bool, np.bool_)):
            raise TypeError(f"{name}: alternate_sign must be True or False, got "
                            f"{self.alternate_sign!r}")
        if self.unknown not in ("raise", "ignore"):
            raise ValueError(f"{name}: unknown must be 'raise' or 'ignore', got {self.unknown!r}")
        if self.classes is not None:
            if isinstance(self.classes, (str, bytes)) or len(self.classes) != 2 \
                    or self.classes[0] == self.classes[1]:
                raise ValueError(f"{name}: classes must be two distinct labels (negative, "
                                 f"positive), got {self.classes!r}")
            self.classes = tuple(self.classes)

    def _current_layout(self):
        return (self.features, self.n_hash, self.max_features, bool(self.alternate_sign),
                self.unknown, self.classes)

    def _check_layout(self):
        if self._layout is not None and self._current_layout() != self._layout:
            raise ValueError(
                f"{type(self).__name__}: features, n_hash, max_features, alternate_sign, "
                f"unknown or classes changed since the model started (from {self._layout!r} to "
                f"{self._current_layout()!r}); the columns were built for the old values. "
                "Set them back, or clone() the adapter to start over.")

    def _target(self, y):
        """1 for the positive label, 0 for the negative one."""
        if self.classes is None:
            if y is True or y is False or isinstance(y, (np.bool_, Integral)):
                if y == 1:
                    return 1
                if y == 0:
                    return 0
            raise ValueError(f"{type(self).__name__}: label {y!r} is not a positive flag "
                             "(True/1 or False/0); pass classes=(negative, positive) to name "
                             "the labels")
        if y == self.classes[1]:
            return 1
        if y == self.classes[0]:
            return 0
        raise ValueError(f"{type(self).__name__}: label {y!r} is not one of classes="
                         f"{self.classes!r}")

    # -- dict rows to the learner's rows -----------------------------------------------------
    @property
    def n_features(self) -> int:
        """The dimension the learner sees."""
        if self.features is not None:
            return len(self.features)
        return self.n_hash if self.n_hash is not None else self.max_features

    @property
    def features_(self) -> list | None:
        return None if self.features is None and self.n_hash is not None else list(self._index)

    def _hashed(self, x):
        """Column -> value of a row by feature hashing (FeatureHasher's columns and signs),
        and whether every key is a ``str`` (then equal dicts give the same row)."""
        slots = self._slots
        out: dict[Any, Any] = {}
        plain = True
        for k, v in x.items():
            tv = type(v)
            if tv is not float:
                v = float(v) if tv is int else _number(type(self).__name__, k, v)
            if v == 0.0:
                continue
            if type(k) is str:
                s = slots.get(k)
                if s is None:
                    s = self._str_slot(k)
            else:
                plain = False
                s = self._slot(_key_text(k))
            if s < 0:                      # a negative sign is stored as ~column
                s, v = ~s, -v
            if s in out:
                out[s] += v
            else:
                out[s] = v
        return out, plain

    def _slot(self, text):
        """The column of a key's text, as ``~column`` when its sign is negative."""
        h = murmurhash3_32(text, 0)
        j = abs(h) % self.n_hash
        return ~j if h < 0 and self.alternate_sign else j

    def _str_slot(self, k):
        """``_slot`` of a ``str`` key, remembered for the next rows (at most
        ``_SLOT_CACHE`` keys: the memory is forgotten when full; the columns are a function
        of the key, so this changes no result)."""
        slots = self._slots
        if len(slots) >= _SLOT_CACHE:
            slots.clear()
        s = slots[k] = self._slot(k)
        return s

    def _indexed(self, x, learn):
        """Column -> value of a row by the key index, and the new keys a learned row adds."""
        index = self._index
        out, new = {}, None
        for k, v in x.items():
            tv = type(v)
            if tv is not float:
                v = float(v) if tv is int else _number(type(self).__name__, k, v)
            if v == 0.0:
                continue
            j = index.get(k)
            if j is not None:
                out[j] = v
            elif learn:
                if new is None:
                    new = {}
                new[k] = v
        if not new:
            return out, None
        room = (len(self.features) if self.features is not None else self.max_features) \
            - len(index)
        keys = _sortable(new)
        if len(keys) > room and self.unknown == "raise":
            extra = keys[room:]
            if self.features is not None:
                why = ("not among the declared features; declare every key in features=[...], "
                       "pass unknown='ignore' to drop new keys, or leave features=None to "
                       "hash (n_hash=...) or index the keys as they come")
            else:
                why = (f"beyond max_features={self.max_features} keys (the index is full). "
                       + self._full_hint())
            raise ValueError(f"{type(self).__name__}: feature(s) {extra[:5]!r} {why}")
        keys = keys[:max(room, 0)]
        base = len(index)
        for i, k in enumerate(keys):
            out[base + i] = new[k]
        return out, keys

    def _full_hint(self):
        if not self._sparse_rows:
            return (f"{self._estimator_class.__name__} keeps p x p matrices (16 p^2 bytes, "
                    "O(p^2) per row), so its dimension stays small: raise max_features, "
                    "hash with n_hash=..., pass unknown='ignore' to drop new keys, or use "
                    "sosl.river.SketchedOAUCM (a sketched second-order learner, O(r p)) or "
                    "sosl.river.FTRLAUC for open vocabularies such as text")
        return ("Raise max_features, hash with n_hash=... (the default of this learner), or "
                "pass unknown='ignore' to drop new keys")

    def _row(self, x, learn):
        """The learner's row for ``x``, the keys it adds to the index (or None), and
        whether an equal dict is sure to give the same row (hashing, ``str`` keys)."""
        if not isinstance(x, dict):
            raise TypeError(f"{type(self).__name__}: x must be a dict of features, got "
                            f"{type(x).__name__}")
        if self.n_hash is not None and self.features is None:
            cols, reusable = self._hashed(x)
            new = None
        else:
            (cols, new), reusable = self._indexed(x, learn), False
        p = self.n_features
        if not self._sparse_rows:
            v = np.zeros(p)
            for j, val in cols.items():
                v[j] = val
            return v, new, reusable
        k = len(cols)
        indices = np.fromiter(cols, np.int32, k)
        data = np.fromiter(cols.values(), np.float64, k)
        if k > 1:                          # sorted columns (they are unique)
            order = indices.argsort()
            indices, data = indices[order], data[order]
        if self._rows is None:
            self._rows = _CSRRows(p)
        return self._rows(data, indices), new, reusable

    def _commit_keys(self, keys):
        if keys:
            base = len(self._index)
            for i, k in enumerate(keys):
                self._index[k] = base + i

    # -- learning and prediction -------------------------------------------------------------
    def _new_estimator(self):
        params = {_ESTIMATOR_NAME.get(name, name): getattr(self, name)
                  for name in self._estimator_params}
        return self._estimator_class(**params)

    def learn_one(self, x: dict, y: Any) -> None:
        """Learn one row: the wrapped learner's ``learn_one`` on the row made from ``x``.

        A refused row or label (``ValueError``/``TypeError`` naming the problem) leaves the
        adapter, its index and its learner as they were.

        Parameters
        ----------
        x : dict
            Feature key to number.
        y : label
            A positive flag, or one of ``classes``.
        """
        if self._layout is None:               # the first update: check what an assignment
            self._check_adapter_params()       # may have changed since __init__
        else:
            self._check_layout()
        t = self._target(y)
        last, self._last = self._last, None
        if last is not None and last[0] == x:      # predicted just before: the same row
            row, new = last[1], None
        else:
            row, new, _ = self._row(x, learn=True)
        est = self.estimator_
        if est is None:
            est = self._new_estimator()
            est.learn_one(row, t, classes=[0, 1])
            self.estimator_ = est
            self._layout = self._current_layout()
        else:
            est.learn_one(row, t)
        self._commit_keys(new)

    def score_one(self, x: dict) -> float:
        """The learner's raw score of one row (0.0 before the first ``learn_one``)."""
        self._check_layout()
        if self.estimator_ is None:
            return 0.0
        return self.estimator_.score_one(self._row(x, learn=False)[0])

    def predict_proba_one(self, x: dict, **kwargs: Any) -> dict:
        """The wrapped learner's probabilities of the two labels (its Platt scaling).

        Parameters
        ----------
        x : dict

        Returns
        -------
        proba : dict
            ``{negative: 1 - p, positive: p}`` (keys False/True with ``classes=None``),
            ``p = estimator_.predict_proba_one(row)[1]``; 1/2 before the first
            ``learn_one``.
        """
        self._check_layout()
        neg, pos = (False, True) if self.classes is None else self.classes
        if self.estimator_ is None:
            return {neg: 0.5, pos: 0.5}
        row, _, reusable = self._row(x, learn=False)
        proba = self.estimator_.predict_proba_one(row)
        # river predicts a row and then learns it (progressive validation): keep the row
        # for a learn_one of an equal dict, which then skips making it again
        self._last = (dict(x), row) if reusable else None
        return {neg: proba[0], pos: proba[1]}

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_last"] = None
        state["_slots"] = {}
        return state

    @property
    def calibration_(self):
        return None if self.estimator_ is None else self.estimator_.calibration_

    @property
    def _multiclass(self):
        return False


def _adapter(est_class):
    """The river twin of one sosl learner: its hyper-parameters plus the adapter's."""
    P = inspect.Parameter
    own = [p.replace(name=_RENAMED.get(name, name))
           for name, p in inspect.signature(est_class.__init__).parameters.items()
           if name not in ("self", "shuffle")]
    clash = {p.name for p in own} & set(_ADAPTER_PARAMS)
    if clash:  # pragma: no cover - guards the table below against a new learner
        raise RuntimeError(f"{est_class.__name__} has parameters {clash} named like the adapter's")
    name = est_class.__name__
    sparse = _takes_csr_rows(est_class)
    if not sparse:
        n_hash, max_features = None, _DENSE_MAX_FEATURES
    else:
        # a learner whose one-row call does O(p) work (a copy of the weights) declares it
        # (capabilities.per_call_o_p): a smaller hashing dimension by default
        n_hash = max_features = 2**16 if est_class.capabilities.per_call_o_p else 2**20
    defaults = {"features": None, "n_hash": n_hash, "max_features": max_features,
                "alternate_sign": True, "unknown": "raise", "classes": None}
    params = ([P("self", P.POSITIONAL_OR_KEYWORD)]
              + [p.replace(kind=P.POSITIONAL_OR_KEYWORD) for p in own]
              + [P(arg, P.KEYWORD_ONLY, default=defaults[arg], annotation=_ADAPTER_TYPES[arg])
                 for arg in _ADAPTER_PARAMS])
    signature = inspect.Signature(params, return_annotation="None")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        SOSLClassifier.__init__(self, *args, **kwargs)

    __init__.__signature__ = signature  # type: ignore[attr-defined]  # what inspect reads
    if sparse:
        rows = (f"one-row CSR matrices; keys hashed into n_hash={n_hash} columns by default")
    else:
        rows = (f"dense rows; keys indexed as they come, at most max_features={max_features} "
                "(its state is p x p)")
    doc = (f"sosl's :class:`sosl.{name}` as a river classifier ({rows}).\n\n"
           f"Takes the hyper-parameters of :class:`sosl.{name}` (except ``shuffle``: rows "
           "arrive one at a time; ``random_state`` is called ``seed``, as in river) and the "
           "adapter's ``features``, ``n_hash``, ``max_features``, ``alternate_sign``, "
           "``unknown`` and ``classes`` (see :class:`SOSLClassifier` and the module text).\n")
    return type(name, (SOSLClassifier,), {
        "__init__": __init__, "__doc__": doc, "__module__": __name__, "__qualname__": name,
        "_estimator_class": est_class, "_estimator_params": tuple(p.name for p in own),
        "_sparse_rows": sparse,
    })


def _takes_csr_rows(est_class):
    """Whether the learner's typed pass reads CSR rows: its record's ``sparse_input`` is
    True, or "storage" (the kernel learners: the storage follows the type of the first
    rows)."""
    return est_class.capabilities.sparse_input in (True, "storage")


_LEARNERS = [n for n in _sosl.__all__ if n != "__version__"]
for _name in _LEARNERS:
    globals()[_name] = _adapter(getattr(_sosl, _name))
    __all__.append(_name)
del _name
