"""The sosl learners as river classifiers: dict rows, ``learn_one``, ``predict_proba_one``.

Each public learner of sosl has a twin here with the same name and hyper-parameters
(``sosl.river.OAUCM(lam=0.01)``, ..., ``sosl.river.POLK(...)``), a
``river.base.Classifier`` that works in river pipelines and in
``river.evaluate.progressive_val_score``::

    from river import evaluate, metrics, preprocessing
    import sosl.river

    model = preprocessing.StandardScaler() | sosl.river.OAUCM(lam=0.01)
    evaluate.progressive_val_score(dataset, model, metrics.ROCAUC())

The adapter does three things around the wrapped sosl estimator:

* **Dict rows to a fixed vector.** The second-order learners keep p x p class covariances,
  so the dimension p is fixed when the model starts. It comes from, in this order: a
  declared ``features`` list (column j is ``features[j]``); ``n_hash`` (signed feature
  hashing into ``n_hash`` columns, any key accepted, collisions possible; memory O(n_hash^2)
  for OAUC-M/OAUC-S); or, when neither is given, the keys of the first row learned,
  frozen from then on. A key outside a declared or frozen list raises ``ValueError``
  naming it (``unknown="ignore"`` drops it instead). Absent keys count as 0, as river's
  sparse dicts mean.
* **Labels.** With ``classes=None`` the labels are a positive flag (True/1 positive,
  False/0 negative; river's binary convention) and probabilities are keyed by
  False/True. ``classes=(negative, positive)`` names the two labels.
* **Probabilities.** The learners output a score w.x, not a probability. The adapter maps
  it through an online Platt scaling fitted prequentially: p = sigmoid(a z + b) with z the
  score standardized by its running mean and standard deviation (exponentially weighted,
  factor 0.995, a memory of about 200 rows, so z follows a score scale that changes as the
  learner's weights grow or shrink), and before each update
  one stochastic gradient step on the logistic loss of (a z + b) against the row's label,
  with step ``calibration_lr``. The slope ``a`` is kept >= 1e-6, so p is increasing in the
  score and the ranking (hence the AUC) is the learner's own.

river is an optional dependency (``pip install sosl[river]``); without it the classes
raise ImportError when used.
"""

import inspect
import math
from numbers import Integral, Real

import numpy as np
from sklearn.utils import murmurhash3_32

import sosl as _sosl

try:
    from river import base as _river_base
except ImportError:  # pragma: no cover - exercised only without river
    _river_base = None

__all__ = ["SOSLClassifier"]

_Base = _river_base.Classifier if _river_base is not None else object
_MIN_SLOPE = 1e-6
_SCORE_DECAY = 0.995  # forgetting factor of the score's running mean and variance
_ADAPTER_PARAMS = ("features", "n_hash", "unknown", "classes", "calibration_lr")


def _sigmoid(z):
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


class SOSLClassifier(_Base):
    """Shared adapter of a sosl learner to river's ``Classifier`` (see the module text).

    Not instantiated directly: use the per-learner classes (``sosl.river.OAUCM``, ...),
    which take the learner's hyper-parameters plus the adapter's below.

    Parameters
    ----------
    features : sequence of hashable or None, default=None
        The feature keys, in column order. Fixes the dimension from the start.
    n_hash : int or None, default=None
        Hash every key (signed murmurhash3 of its ``repr``) into this many columns.
        Exclusive with ``features``.
    unknown : {"raise", "ignore"}, default="raise"
        What a key outside ``features`` (or outside the frozen first row) does.
        Unused with ``n_hash``.
    classes : tuple (negative, positive) or None, default=None
        The two labels; None takes the labels as a positive flag.
    calibration_lr : float, default=0.05
        Step of the online Platt scaling (> 0).

    Attributes
    ----------
    estimator_ : sosl estimator or None
        The wrapped learner (None before the first ``learn_one``).
    features_ : list or None
        The column keys (declared or frozen), None with ``n_hash`` or before freezing.
    calibration_ : tuple of float
        ``(a, b, mean, std)`` of the Platt scaling: p = sigmoid(a (s - mean) / std + b).
    """

    _estimator_class = None
    _estimator_params = ()

    def __init__(self, *args, **kwargs):
        if _river_base is None:
            raise ImportError("sosl.river needs the river package: pip install 'sosl[river]'")
        if self._estimator_class is None:
            raise TypeError("SOSLClassifier is the shared adapter; use a learner's class, "
                            "e.g. sosl.river.OAUCM(...)")
        bound = self._signature().bind(self, *args, **kwargs)
        bound.apply_defaults()
        for name, value in list(bound.arguments.items())[1:]:
            setattr(self, name, value)
        self._check_adapter_params()
        self._index = {} if self.features is None else {k: j for j, k in enumerate(self.features)}
        self._frozen = self.features is not None
        self._hash_cache = {}
        self.estimator_ = None
        # Platt scaling: slope, offset, running mean / sum of squares / count of the scores
        self._a, self._b = 1.0, 0.0
        self._m, self._ss, self._k = 0.0, 0.0, 0.0

    @classmethod
    def _signature(cls):
        return inspect.signature(cls.__init__)

    @classmethod
    def _unit_test_params(cls):
        yield {"n_hash": 16}
        yield {}

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
            if self.n_hash is not None:
                raise ValueError(f"{name}: give features or n_hash, not both")
        if self.n_hash is not None:
            if isinstance(self.n_hash, bool) or not isinstance(self.n_hash, Integral):
                raise TypeError(f"{name}: n_hash must be an integer, got {self.n_hash!r}")
            if self.n_hash < 1:
                raise ValueError(f"{name}: n_hash must be >= 1, got {self.n_hash}")
        if self.unknown not in ("raise", "ignore"):
            raise ValueError(f"{name}: unknown must be 'raise' or 'ignore', got {self.unknown!r}")
        if self.classes is not None:
            if isinstance(self.classes, (str, bytes)) or len(self.classes) != 2 \
                    or self.classes[0] == self.classes[1]:
                raise ValueError(f"{name}: classes must be two distinct labels (negative, "
                                 f"positive), got {self.classes!r}")
            self.classes = tuple(self.classes)
        lr = self.calibration_lr
        if isinstance(lr, bool) or not isinstance(lr, Real) or not (0 < lr < math.inf):
            raise ValueError(f"{name}: calibration_lr must be a finite number > 0, got {lr!r}")

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

    # -- dict rows to vectors --------------------------------------------------------------
    @property
    def n_features(self):
        """The fixed dimension (None while it is not yet frozen)."""
        if self.n_hash is not None:
            return self.n_hash
        return len(self._index) if self._frozen else None

    @property
    def features_(self):
        return list(self._index) if self._frozen else None

    def _freeze_keys(self, x):
        try:
            keys = sorted(x)
        except TypeError:
            keys = list(x)
        if not keys:
            raise ValueError(f"{type(self).__name__}: the first row learned has no features; "
                             "declare features=[...] or n_hash=...")
        return {k: j for j, k in enumerate(keys)}

    def _vector(self, x, index):
        if not isinstance(x, dict):
            raise TypeError(f"{type(self).__name__}: x must be a dict of features, got "
                            f"{type(x).__name__}")
        if self.n_hash is not None:
            return self._hashed(x)
        v = np.zeros(len(index))
        if not (x.keys() <= index.keys()):
            if self.unknown == "raise":
                extra = [k for k in x if k not in index]
                origin = "features" if self.features is not None else \
                    "the keys of the first row learned (frozen then)"
                raise ValueError(
                    f"{type(self).__name__}: feature(s) {extra[:5]!r} not among {origin}. The "
                    "learners keep a fixed dimension (p x p covariances for OAUC-M/OAUC-S): "
                    "declare every key in features=[...], use n_hash=... (feature hashing), "
                    "or unknown='ignore' to drop new keys"
                )
            x = {k: val for k, val in x.items() if k in index}
        for k, val in x.items():
            try:
                v[index[k]] = val
            except (TypeError, ValueError):
                raise TypeError(f"{type(self).__name__}: feature {k!r} has the value {val!r}; "
                                "the learners need numbers (encode it first, e.g. river's "
                                "preprocessing.OneHotEncoder)") from None
        return v

    def _hashed(self, x):
        v = np.zeros(self.n_hash)
        cache = self._hash_cache
        for k, val in x.items():
            slot = cache.get(k)
            if slot is None:
                h = murmurhash3_32(repr(k), seed=0)
                slot = cache[k] = (abs(h) % self.n_hash, 1.0 if h >= 0 else -1.0)
            try:
                v[slot[0]] += slot[1] * val
            except (TypeError, ValueError):
                raise TypeError(f"{type(self).__name__}: feature {k!r} has the value {val!r}; "
                                "the learners need numbers (encode it first, e.g. river's "
                                "preprocessing.OneHotEncoder)") from None
        return v

    # -- the learner and its calibration -------------------------------------------------
    def _new_estimator(self):
        params = {name: getattr(self, name) for name in self._estimator_params}
        return self._estimator_class(**params)

    def _sd(self):
        return math.sqrt(self._ss / self._k) if self._k > 1 else 0.0

    def _z(self, s):
        sd = self._sd()
        return (s - self._m) / sd if sd > 0 else s - self._m

    def _calibrated(self, s):
        return _sigmoid(self._a * self._z(s) + self._b)

    def learn_one(self, x, y):
        """Learn one row: a Platt step on the current score, then the learner's update.

        Parameters
        ----------
        x : dict
            Feature key to number.
        y : label
            A positive flag, or one of ``classes``.
        """
        t = self._target(y)
        index = self._index
        freeze = self.n_hash is None and not self._frozen
        if freeze:
            index = self._freeze_keys(x)
        v = self._vector(x, index)
        est = self.estimator_ if self.estimator_ is not None else self._new_estimator()
        fitted = hasattr(est, "classes_")
        if fitted:
            s = est.score_one(v)
            z = self._z(s)
            g = _sigmoid(self._a * z + self._b) - t
            a = max(self._a - self.calibration_lr * g * z, _MIN_SLOPE)
            b = self._b - self.calibration_lr * g
            k = _SCORE_DECAY * self._k + 1.0
            d = s - self._m
            m = self._m + d / k
            ss = _SCORE_DECAY * self._ss + d * (s - m)
            est.learn_one(v, t)
            self._a, self._b, self._m, self._ss, self._k = a, b, m, ss, k
        else:
            est.learn_one(v, t, classes=[0, 1])
        # commit only now: a refused row leaves the adapter as it was
        self.estimator_ = est
        if freeze:
            self._index, self._frozen = index, True

    def score_one(self, x):
        """The learner's raw score of one row (0.0 before the first ``learn_one``)."""
        if self.estimator_ is None or not hasattr(self.estimator_, "classes_"):
            return 0.0
        return self.estimator_.score_one(self._vector(x, self._index))

    def predict_proba_one(self, x, **kwargs):
        """Calibrated probabilities of the two labels.

        Parameters
        ----------
        x : dict

        Returns
        -------
        proba : dict
            ``{negative: 1 - p, positive: p}`` (keys False/True with ``classes=None``).
        """
        if self.estimator_ is None:
            p = _sigmoid(self._b)
        else:
            p = self._calibrated(self.score_one(x))
        neg, pos = (False, True) if self.classes is None else self.classes
        return {neg: 1.0 - p, pos: p}

    @property
    def calibration_(self):
        return (self._a, self._b, self._m, self._sd())

    @property
    def _multiclass(self):
        return False


def _adapter(est_class):
    """The river twin of one sosl learner: its hyper-parameters plus the adapter's."""
    P = inspect.Parameter
    own = [p for name, p in inspect.signature(est_class.__init__).parameters.items()
           if name not in ("self", "shuffle")]
    clash = {p.name for p in own} & set(_ADAPTER_PARAMS)
    if clash:  # pragma: no cover - guards the table below against a new learner
        raise RuntimeError(f"{est_class.__name__} has parameters {clash} named like the adapter's")
    defaults = {"features": None, "n_hash": None, "unknown": "raise", "classes": None,
                "calibration_lr": 0.05}
    params = ([P("self", P.POSITIONAL_OR_KEYWORD)]
              + [p.replace(kind=P.POSITIONAL_OR_KEYWORD) for p in own]
              + [P(name, P.KEYWORD_ONLY, default=defaults[name]) for name in _ADAPTER_PARAMS])
    signature = inspect.Signature(params)

    def __init__(self, *args, **kwargs):
        SOSLClassifier.__init__(self, *args, **kwargs)

    __init__.__signature__ = signature
    name = est_class.__name__
    doc = (f"sosl's :class:`sosl.{name}` as a river classifier.\n\n"
           f"Takes the hyper-parameters of :class:`sosl.{name}` (except ``shuffle``: rows "
           "arrive one at a time) and the adapter's ``features``, ``n_hash``, ``unknown``, "
           "``classes`` and ``calibration_lr`` (see :class:`SOSLClassifier` and the module "
           "text).\n")
    return type(name, (SOSLClassifier,), {
        "__init__": __init__, "__doc__": doc, "__module__": __name__, "__qualname__": name,
        "_estimator_class": est_class, "_estimator_params": tuple(p.name for p in own),
    })


_LEARNERS = [n for n in _sosl.__all__ if n != "__version__"]
for _name in _LEARNERS:
    globals()[_name] = _adapter(getattr(_sosl, _name))
    __all__.append(_name)
del _name
