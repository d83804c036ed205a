"""The algorithms of the paper's Tables 2 and 3: factories and hyper-parameter grids.

Each :class:`AlgorithmSpec` maps a paper name (``"OAUC-M"``) to a sosl class, fixed
constructor arguments (``eta=None`` for OAUC-M, buffers of 100 + 100, 10 neighbours for
KOIL) and the names of the hyper-parameters searched on the grid 2^e. Classes are looked
up by name in the ``sosl`` package when an algorithm is used; a registered name that sosl
does not provide is an error (never a silent skip).
"""

import importlib
import re
import zlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import sosl

__all__ = ["ALGORITHMS", "AlgorithmSpec", "GRIDS", "REFERENCES", "check_point",
           "control_class_name", "default_references", "grid_label", "grid_points",
           "grid_restrictions", "resolve_algorithms", "spec_of"]

#: exponent sets of the grids 2^e: the paper's full grid 2^[-10, 10], every second
#: exponent for quick runs, every fourth (for the kernel learners, whose 2-3 searched
#: parameters make even the coarse grid long), three points for smoke tests, and a
#: diagnostic grid 2^[-20, 10] reaching far weaker regularization than the paper's
#: (on shuttle, min-max scaled features need ||w|| beyond what lam >= 2^-10 allows).
GRIDS = {
    "full": tuple(range(-10, 11)),
    "wide": tuple(range(-20, 11)),
    "coarse": tuple(range(-10, 11, 2)),
    "sparse": tuple(range(-8, 9, 4)),
    "quick": (-6, -2, 2),
}


@dataclass(frozen=True)
class AlgorithmSpec:
    """One learner of the comparison.

    Attributes
    ----------
    name : str
        The paper's name (column of Table 2 or 3).
    table : int
        2 (linear) or 3 (kernel).
    cls : str
        Attribute of the ``sosl`` package holding the estimator class, or
        ``"module:Name"`` for a class of another package (the batch references of
        :data:`REFERENCES`, scikit-learn's).
    searched : tuple of str
        Constructor arguments searched over 2^e, e in the chosen grid.
    fixed : dict
        Constructor arguments held fixed.
    kernel : bool
        Kernel learners get training sets subsampled to 10 000 (Section 6.3).
    in_paper : bool
        Whether the paper reports it (extra baselines are run but have no paper column).
    max_dims : int or None
        Search budget as a number of dimensions: at most ``len(exponents) ** max_dims``
        points of the product grid are searched. When the product is larger, a seeded
        uniform subset of that size is searched instead (random search with the budget
        of a ``max_dims``-parameter grid at the same resolution); None searches the whole
        product.
    control : bool
        The paper's proposal, the learner every other one is compared with in the
        many-datasets suite's report (:data:`sosl.experiments.suite_report.CONTROL` is its
        class name); exactly one spec of :data:`ALGORITHMS` sets it.
    capped : bool
        A batch reference run on a stratified subsample of each training part and one
        partition on datasets whose training parts exceed
        :data:`~sosl.experiments.protocol.REFERENCE_MAX_TRAIN` rows (see
        :func:`~sosl.experiments.protocol.train_part`).
    """

    name: str
    table: int
    cls: str
    searched: tuple = ()
    fixed: dict = field(default_factory=dict)
    kernel: bool = False
    in_paper: bool = True
    max_dims: int | None = None
    capped: bool = False
    control: bool = False

    def estimator_class(self):
        """The estimator class ``sosl.<cls>`` (or ``<module>.<Name>`` for ``"module:Name"``).

        Raises
        ------
        LookupError
            When sosl (or the named module) has no such class (a misspelled or removed
            registry entry).
        """
        if ":" in self.cls:
            module, name = self.cls.split(":", 1)
            try:
                cls = getattr(importlib.import_module(module), name, None)
            except ImportError:
                cls = None
            where = f"{module}.{name}"
        else:
            cls, where = getattr(sosl, self.cls, None), f"sosl.{self.cls}"
        if not isinstance(cls, type):
            raise LookupError(f"algorithm {self.name!r} names {where}, which "
                              f"{where.rsplit('.', 1)[0]} does not provide")
        return cls

    def make(self, **params):
        """A new estimator with the fixed and the given parameters."""
        cls = self.estimator_class()
        kw = {**self.fixed, **params}
        if "sigma" in kw:  # the paper's Gaussian width: k = exp(-||x - x'||^2 / sigma^2)
            kw["gamma"] = 1.0 / float(kw.pop("sigma")) ** 2
        return cls(**kw)


_B = {"budget": 100}  # positive and negative buffers of 100 each (Section 6.3)

#: Registry in the column order of Tables 2 and 3, extra baselines last.
ALGORITHMS = {a.name: a for a in [
    # from w = 0 the perceptron's direction does not depend on a step: nothing to search
    AlgorithmSpec("Perceptron", 2, "Perceptron", ()),
    AlgorithmSpec("PA-I", 2, "PAI", ("C",)),
    AlgorithmSpec("OAM", 2, "OAM", ("C",), {"buffer_size": 100, "update": "seq"}),
    # step 1/(lam t), not searched ("except for UBAUC, for computational efficiency")
    AlgorithmSpec("OL-UBAUC", 2, "OLUBAUC", ("lam",), {"eta": None}),
    AlgorithmSpec("OAUC-S", 2, "OAUCS", ("lam", "eta")),
    AlgorithmSpec("OAUC-M_c", 2, "OAUCM", ("lam", "eta")),
    AlgorithmSpec("OAUC-M", 2, "OAUCM", ("lam",), {"eta": None}, control=True),
    AlgorithmSpec("OAM_gra", 2, "OAM", ("C",), {"buffer_size": 100, "update": "gra"},
                  in_paper=False),
    AlgorithmSpec("SOLAM", 2, "SOLAM", ("eta",), {"radius": 10.0}, in_paper=False),
    # later comparators of the library, on the same protocol: FTRL-AUC (Zhou et al., 2020)
    # searches its step gamma; the sketched OAUC-M searches lam, its sketch at its default
    # rank (exact when the rank covers the features)
    AlgorithmSpec("FTRL-AUC", 2, "FTRLAUC", ("gamma",), in_paper=False),
    AlgorithmSpec("SketchedOAUC-M", 2, "SketchedOAUCM", ("lam",), {"eta": None},
                  in_paper=False),
    # NEW LEARNERS OF THIS RELEASE (written on other branches): add their rows here once
    # sosl exports them, e.g. PartialOAUCM (Table 2, lam searched, its FPR budget fixed)
    # and NystroemOAUCM (Table 3, lam and sigma, kernel=True); the many-datasets suite
    # (sosl.experiments.suite) picks them up from sosl.__all__ without an entry
    AlgorithmSpec("KOIL", 3, "KOIL", ("eta", "sigma"), {**_B, "n_neighbors": 10}, kernel=True),
    AlgorithmSpec("OKAUC-M", 3, "OKAUCM", ("lam", "sigma"), {**_B, "eta": None}, kernel=True),
    # three searched parameters: the full product (21^3 = 9261 points x 100 fits per
    # dataset) is out of reach on a small machine, so as many points as OKAUC-M searches
    # on the same grid (21^2 = 441 on the full one) are drawn from it at random;
    # --max-points 0 searches all of it
    AlgorithmSpec("OKAUC-S", 3, "OKAUCS", ("lam", "eta", "sigma"), dict(_B), kernel=True,
                  max_dims=2),
    AlgorithmSpec("POLK", 3, "POLK", ("lam", "sigma"), {"loss": "hinge"}, kernel=True,
                  in_paper=False),
]}


#: Batch references run on the same splits, preprocessing and protocol as the learners of
#: their table (inner-CV selection on the training part, refit, test), to show how far an
#: offline learner gets on the same data: logistic regression for Table 2, the RBF support
#: vector machine and OKAUC-M with unbounded buffers (its exact expansion, O(t^2) per pass;
#: its training parts are subsampled like every kernel learner's) for Table 3. The SVC's
#: kernel width is searched as the kernel learners' is (sigma = 2^e, gamma = 1 / sigma^2),
#: so both see the same widths; C = 2^e on the same exponents. The two Table 3 references
#: are ``capped``: their fits grow with the cube of the training size (28 CPU hours for the
#: unbounded OKAUC-M on magic04 alone), so on datasets whose training parts exceed 4 000
#: rows they train on a stratified 4 000-row subsample of each, over 1 x 5 folds, and their
#: cells are labelled so in the tables.
REFERENCES = {a.name: a for a in [
    AlgorithmSpec("LogReg", 2, "sklearn.linear_model:LogisticRegression", ("C",),
                  {"max_iter": 1000}, in_paper=False),
    AlgorithmSpec("SVC", 3, "sklearn.svm:SVC", ("C", "sigma"), {"kernel": "rbf"},
                  kernel=True, in_paper=False, capped=True),
    AlgorithmSpec("OKAUC-M_inf", 3, "OKAUCM", ("lam", "sigma"), {"budget": None, "eta": None},
                  kernel=True, in_paper=False, capped=True),
]}


def control_class_name():
    """The class name of the learner the suite compares every other one with (the spec of
    :data:`ALGORITHMS` marked ``control``)."""
    (spec,) = [a for a in ALGORITHMS.values() if a.control]
    return spec.cls


def spec_of(name):
    """The spec of a learner or a batch reference, by name (KeyError when neither)."""
    return ALGORITHMS[name] if name in ALGORITHMS else REFERENCES[name]


def default_references(tables):
    """The names of the batch references of the given tables (2 and/or 3), registry order."""
    tables = set(tables)
    return [n for n, s in REFERENCES.items() if s.table in tables]


def _exponents(grid):
    """The exponent tuple of a grid name of :data:`GRIDS`, or of explicit exponents."""
    return GRIDS[grid] if isinstance(grid, str) else tuple(int(e) for e in grid)


_SUFFIX = re.compile(r"(,\s*got\b.*|\.?\s*Got\b.*)$", re.DOTALL)


def _validate(est):
    """Run the estimator's own hyper-parameter checks, those of every ``fit`` call."""
    check = getattr(est, "_check_hyper", None)
    if check is not None:        # a sosl learner: its every-call check (table, cross checks)
        check(False)
    else:                        # a scikit-learn batch reference: its constraint table
        est._validate_params()


def check_point(spec, params):
    """Why the learner rejects ``params``, or None when it accepts them.

    The answer comes from the estimator's own validation (its constraint table and
    cross-parameter checks), run without fitting, so the runner's grids follow each
    learner's domain instead of restating it.

    Returns
    -------
    reason : str or None
        The estimator's message with the offending value stripped (``"eta must be < 1
        (the decay is 1 - eta)"``), so that every value breaking one constraint gives the
        same reason.
    """
    try:
        _validate(spec.make(**params))
    except (ValueError, TypeError) as err:
        return _SUFFIX.sub("", str(err)).strip() or type(err).__name__
    return None


_DOMAIN: dict = {}  # (spec identity, exponents) -> (valid points, restriction messages)


def _spec_key(spec, exps):
    return (spec.name, spec.cls, spec.searched, repr(sorted(spec.fixed.items())), exps)


def _fmt_exps(values):
    return ", ".join(f"2^{int(round(np.log2(v)))}" for v in values)


_NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


def _valid_domain(spec, exps):
    """The product grid cut to the learner's domain, and one message per constraint.

    Every point is checked as a whole (so a constraint tying two parameters is honoured).
    The points rejected for one reason are described by the values of one parameter when
    that is what they are (every point with ``eta`` in those values), and the reasons that
    bound the same parameter make one message; other rejections are counted.
    """
    key = _spec_key(spec, exps)
    if key in _DOMAIN:
        return _DOMAIN[key]
    points: list[dict[str, Any]] = [{}]
    for name in spec.searched:
        points = [{**p, name: 2.0 ** e} for p in points for e in exps]
    groups: dict[Any, Any] = {}  # reason with its numbers masked -> (first reason, rejected points)
    valid = []
    for p in points:
        why = check_point(spec, p)
        if why is None:
            valid.append(p)
        else:
            groups.setdefault(_NUMBER.sub("#", why), (why, []))[1].append(p)
    by_name: dict[Any, Any] = {}
    counted: list[Any] = []  # constraints on one parameter's values are merged
    for why, bad in groups.values():
        for name in spec.searched:
            values = {p[name] for p in bad}
            if sum(p[name] in values for p in points) == len(bad):
                vs, whys = by_name.setdefault(name, (set(), []))
                vs.update(values)
                whys.append(why)
                break
        else:
            counted.append(f"{spec.name}: {len(bad)} of {len(points)} grid points left out: {why}")
    messages = [f"{spec.name}: {name} = {_fmt_exps(sorted(vs))} left out of the grid "
                f"({len(vs)} of {len(exps)} values): {'; '.join(whys)}"
                for name, (vs, whys) in by_name.items()] + counted
    _DOMAIN[key] = (valid, messages)
    return _DOMAIN[key]


def grid_restrictions(spec, grid="full"):
    """Messages naming what :func:`grid_points` leaves out of ``spec``'s grid, one per constraint.

    Empty when every point of the product grid is in the learner's domain. KOIL, for
    example, requires 0 < eta < 1 (its decay factor is 1 - eta), so the exponents e >= 0 of
    eta are left out.
    """
    return list(_valid_domain(spec, _exponents(grid))[1])


def _cap(spec, n_points, n_exps, max_points):
    """The number of points searched of ``n_points`` (``max_points`` None = the spec's cap)."""
    if max_points is None:
        cap = None if spec.max_dims is None else n_exps ** spec.max_dims
    else:
        cap = int(max_points)
    if cap is not None and cap < 0:
        raise ValueError(f"max_points must be >= 0 (0 = no cap), got {max_points!r}")
    return n_points if not cap or cap >= n_points else cap


def grid_points(spec, grid="full", max_points=None):
    """The parameter dicts of ``spec`` searched on the grid 2^e, within the learner's domain.

    Parameters
    ----------
    spec : AlgorithmSpec
    grid : str or sequence of int
        A key of :data:`GRIDS` or the exponents themselves.
    max_points : int or None, default=None
        Cap on the number of points; None uses the spec's own (``len(exponents) **
        spec.max_dims``, or none), 0 means no cap. When the grid has more points than the
        cap, a uniform random subset of that size is returned, drawn with a seed fixed by
        the algorithm's name and the exponent set (so every run, fold and process searches
        the same points).

    Returns
    -------
    points : list of dict
        In a fixed order (first name varies slowest; a subset keeps that order);
        ``[{}]`` when nothing is searched. Points the estimator rejects (see
        :func:`grid_restrictions`) are left out before the cap is applied.
    """
    exps = _exponents(grid)
    points = _valid_domain(spec, exps)[0]
    k = _cap(spec, len(points), len(exps), max_points)
    if k < len(points):
        seed = zlib.crc32(f"{spec.name}|{','.join(map(str, exps))}".encode())
        keep = np.sort(np.random.default_rng(seed).choice(len(points), k, replace=False))
        points = [points[i] for i in keep]
    return [dict(p) for p in points]


def grid_label(spec, grid="full", max_points=None):
    """The grid name recorded with results: ``grid``, or ``grid@k`` for a k-point subset."""
    exps = _exponents(grid)
    n = len(_valid_domain(spec, exps)[0])
    k = _cap(spec, n, len(exps), max_points)
    return str(grid) if k == n else f"{grid}@{k}"


def resolve_algorithms(names=None):
    """The specs of ``names`` (default: every registered algorithm), in the order given.

    A name may also be one of the batch references of :data:`REFERENCES`; the default
    holds none of them.

    Raises
    ------
    ValueError
        For a name that is not registered.
    LookupError
        For a registered name whose class sosl does not provide.
    """
    names = list(ALGORITHMS) if names is None else list(names)
    out = []
    for n in names:
        if n not in ALGORITHMS and n not in REFERENCES:
            raise ValueError(f"unknown algorithm {n!r}; registered: {', '.join(ALGORITHMS)}; "
                             f"batch references: {', '.join(REFERENCES)}")
        spec = spec_of(n)
        spec.estimator_class()
        out.append(spec)
    return out
