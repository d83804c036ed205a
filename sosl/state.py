"""Mergeable learner state: a versioned snapshot of a fitted learner, and exact merges.

A fitted sosl learner is its hyper-parameters plus a handful of arrays. This module takes
them out (:func:`get_state`), puts them back into a normal fitted estimator
(:func:`from_state`: it scores, pickles and keeps learning with ``partial_fit`` exactly as
the original would) and combines the states of models trained on different shards of the
data (:func:`merge`), so that training can be spread over machines (see :mod:`sosl.dask`).

What merges, and by which rule
------------------------------
================  ==========================================================================
learner           merge
================  ==========================================================================
OAUCM, OAUCS      Class moments: exact (Chan et al.'s parallel update of count, mean and
                  scatter; with ``forgetting < 1`` the weighted moments, in the order the
                  states are given). Weights: the t-weighted average (below).
SketchedOAUCM     Class means and counts exact; each class's frequent-directions sketch by
                  stack and shrink (see :func:`merge_sketches` for the error bound);
                  weights t-weighted.
FTRLAUC           Squared-gradient sums added; weights averaged per coordinate with the
                  FTRL curvature ``sqrt(n_i)`` as weight (see :func:`merge` Notes).
others            Not mergeable: the kernel learners (OKAUCM, OKAUCS, KOIL, POLK) keep a
                  budgeted buffer of support vectors whose merge is a budget policy, not an
                  identity; the first-order baselines (Perceptron, PAI, OAM, OLUBAUC, SOLAM,
                  AdaOAM) keep buffers or step schedules with no summed-gradient identity.
                  :func:`get_state`/:func:`from_state` work for every learner.
================  ==========================================================================

**Why the t-weighted average.** With the step ``eta_t = 1/(lam t)`` of OAUC-M (Theorem 6),
the update ``w_{t+1} = w_t - eta_t (lam w_t + g_t)`` gives ``t w_{t+1} = (t - 1) w_t - g_t /
lam``, hence after T rounds

    lam T w_{T+1} = -(g_1 + ... + g_T),

whatever the starting point (the first round's factor ``t - 1 = 0`` erases it). A model whose
gradient sum is the sum of the shards' gradient sums, trained for ``T = sum_k T_k`` rounds, is
therefore ``w = sum_k T_k w_k / sum_k T_k``: the t-weighted average, not the plain one (which
differs as soon as the shards differ in size). With a constant step (OAUC-M_c, OAUC-S by
default) there is no such identity; the same t-weighted average is then the parameter-mixing
rule of Zinkevich et al. (2010), a heuristic, not an identity.

**The merged model** has ``t_ = sum_k t_k``, so a ``partial_fit`` after the merge continues
with the step ``1/(lam (T + 1))`` of a model that played all T rounds. Its Platt scaling
``[A, H]`` is the combination of the shards' Laplace approximations around a shared prior
``A = 1, H = 1`` counted once: ``H = sum_k H_k - (K - 1)``,
``A = (sum_k H_k A_k - (K - 1)) / H``.

Merging one state returns it unchanged (bit for bit).

**Files.** Store a state or a model with :func:`sosl.io.save`: plain arrays and JSON,
read back by :func:`sosl.io.load` without running code. A pickled state or model runs
whatever code the pickle holds when it is read: unpickle only what you wrote yourself.

The state size of OAUC-M/OAUC-S at p features is ``2 p^2 + 3 p + 3`` numbers that matter
(two scatters, two means, w, two counts, t); :func:`state_nbytes` counts the bytes.
"""

from __future__ import annotations

import copy
import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import numpy as np

from ._capabilities import REGISTRY, check_calibration, check_domains, model_lock, same
from ._merge_rules import ftrl_arrays, merge_sketches, sketch_arrays

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["LearnerState", "STATE_VERSION", "get_state", "from_state", "merge",
           "Moments", "linear_moments", "moments_of_rows", "merge_moments", "empty_moments",
           "merge_sketches", "state_nbytes"]

T = TypeVar("T")

#: version of the :class:`LearnerState` layout; :func:`from_state` refuses other versions
#: (2: the weights are the array ``"w_"``, formerly ``"coef_"``, and a linear baseline's
#: ``"intercept_"`` is an array of shape (1,), formerly a float)
STATE_VERSION = 2

#: hyper-parameters that do not change the meaning of a fitted state (ignored by ``merge``)
_FREE_PARAMS = frozenset({"shuffle", "random_state", "max_memory"})


@dataclass(frozen=True, eq=False)
class LearnerState:
    """A fitted learner's state, detached from the estimator (picklable, versioned).

    Attributes
    ----------
    learner : str
        Class name of the learner (one of sosl's public estimators).
    params : dict
        Its hyper-parameters (``get_params(deep=False)``).
    classes : ndarray of shape (2,)
        ``classes_``; ``classes[1]`` is the positive class.
    n_features : int
        ``n_features_in_``.
    layout : dict
        The frozen layout (``_layout_``) the arrays were built for.
    arrays : dict
        The learner's state arrays by attribute name (its ``_state_names``), in the
        learner's own representation (e.g. the scaled scatter of OAUC-M), copied.
    t : int
        Rounds played (``t_``).
    n_seen : int
        Instances seen (``n_seen_``).
    calibration : ndarray of shape (2,)
        The Platt scaling state ``[A, H]``.
    feature_names : ndarray or None
        ``feature_names_in_`` when the model was fitted on a DataFrame.
    version : int
        :data:`STATE_VERSION` of the writer.
    """

    learner: str
    params: dict
    classes: np.ndarray
    n_features: int
    layout: dict
    arrays: dict
    t: int
    n_seen: int
    calibration: np.ndarray
    feature_names: Any = None
    version: int = field(default=STATE_VERSION)


def _learner(name: Any) -> Any:
    """The public sosl learner class called ``name`` (its module imported on first use),
    or None: only classes sosl itself registered are ever looked up."""
    import sosl
    if not isinstance(name, str) or name not in sosl.__all__:
        return None
    if name not in REGISTRY:
        getattr(sosl, name)                 # imports the learner's module, which registers
    return REGISTRY.get(name)


def _copy(value):
    if isinstance(value, np.ndarray):
        return value.copy()
    return copy.deepcopy(value)


def get_state(est: Any) -> LearnerState:
    """The state of a fitted sosl learner, copied into a :class:`LearnerState`.

    Parameters
    ----------
    est : fitted sosl estimator

    Returns
    -------
    state : LearnerState
    """
    name = type(est).__name__
    if not hasattr(type(est), "capabilities") or not hasattr(est, "_state_names"):
        raise TypeError(f"get_state takes a sosl learner, got {name}")
    if _learner(name) is not type(est):
        raise TypeError(f"{name} is not one of sosl's public learners; its state cannot be "
                        "restored by name")
    with model_lock(est.__dict__):          # one state, never a mix of two calls
        if "classes_" not in est.__dict__:
            raise ValueError(f"this {name} is not fitted yet: nothing to export")
        return _snapshot(est, name)


def _snapshot(est: Any, name: str) -> LearnerState:
    d = est.__dict__
    return LearnerState(
        learner=name,
        params=copy.deepcopy(est.get_params(deep=False)),
        classes=np.asarray(d["classes_"]).copy(),
        n_features=int(d["n_features_in_"]),
        layout=copy.deepcopy(d["_layout_"]),
        arrays={n: _copy(getattr(est, n)) for n in est._state_names},
        t=int(d["t_"]),
        n_seen=int(d["n_seen_"]),
        calibration=np.array(d["calibration_"], dtype=np.float64),
        feature_names=_copy(d.get("feature_names_in_")),
    )


def _checked_value(name, fresh, value, later, caps, growable):
    """A copy of the state's ``value`` of ``name``, checked against the fresh state's
    ``fresh`` (dtype, dimensions, shape as the record allows, finite); ValueError naming
    what is wrong. ``later``: a storage the first pass creates (None when fresh)."""
    if fresh is None and later:
        if not isinstance(value, np.ndarray) or value.dtype.kind not in "biuf":
            raise ValueError(f"state array {name!r} must be a numeric array")
        fresh = value
    if isinstance(fresh, np.ndarray):
        if not isinstance(value, np.ndarray):
            shape_ok = False
        elif name in growable:
            shape_ok = value.shape[:-1] == fresh.shape[:-1]
        elif caps.fixed_shapes:
            shape_ok = value.shape == fresh.shape
        else:                          # buffers that grow: the learner checks them
            shape_ok = True
        if not isinstance(value, np.ndarray) or value.dtype != fresh.dtype \
                or value.ndim != fresh.ndim or not shape_ok:
            raise ValueError(
                f"state array {name!r}: expected {fresh.dtype} of shape {fresh.shape}, "
                f"got {getattr(value, 'dtype', type(value).__name__)} of shape "
                f"{getattr(value, 'shape', None)}")
        if value.dtype.kind == "f" and not np.isfinite(value).all():
            raise ValueError(f"state array {name!r} contains NaN or infinity")
        return np.ascontiguousarray(value).copy()
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"state value {name!r} is not finite")
    return _copy(value)


def from_state(state: LearnerState, cls: type | None = None) -> Any:
    """A fitted estimator holding ``state`` (arrays copied), ready to score and learn.

    Parameters
    ----------
    state : LearnerState
    cls : class, optional
        If given, the state must be of this learner (``OAUCM.from_state`` passes itself).

    Returns
    -------
    est : fitted sosl estimator, equal to the one ``state`` was taken from: the same
        scores, and ``partial_fit`` continues bit for bit as the original would.
    """
    if not isinstance(state, LearnerState):
        raise TypeError(f"from_state takes a LearnerState, got {type(state).__name__}")
    if state.version != STATE_VERSION:
        raise ValueError(f"state version {state.version} is not supported by this sosl "
                         f"(it reads version {STATE_VERSION})")
    klass = _learner(state.learner)
    if klass is None:
        raise ValueError(f"unknown learner {state.learner!r} in the state")
    caps = klass.capabilities
    if cls is not None and klass is not cls:
        raise TypeError(f"the state is of {state.learner}, not {cls.__name__}")
    est = klass(**copy.deepcopy(state.params))
    est._check_hyper(fitted=False)
    p = int(state.n_features)
    classes = np.asarray(state.classes)
    if p < 1 or classes.shape != (2,) or classes[0] == classes[1]:
        raise ValueError("the state needs n_features >= 1 and two distinct classes")
    if hasattr(est, "_layout_inputs"):     # a kernel learner: what its first fit read
        est._layout_inputs(state.layout)
    est._start(p, classes.copy())
    if not all(same(v, est._layout_.get(k)) for k, v in state.layout.items()) \
            or set(state.layout) != set(est._layout_):
        raise ValueError(f"the state's layout {state.layout} does not match its parameters "
                         f"(which give {est._layout_})")
    growable = caps.growable
    values = {}
    # a storage the first pass creates (None in a fresh state) is restored when present
    later = [n for n in state.arrays if n not in est._state_names
             and n in est.__dict__ and est.__dict__[n] is None]
    for name in (*est._state_names, *later):
        if name not in state.arrays:
            raise ValueError(f"the state of {state.learner} lacks the array {name!r}")
        values[name] = _checked_value(name, getattr(est, name), state.arrays[name],
                                      name in later, caps, growable)
    calib = check_calibration(state.calibration, "from_state")
    if int(state.t) < 0 or int(state.n_seen) < 0:
        raise ValueError("the state's t and n_seen must be >= 0")
    check_domains(caps.domains, values, f"the {state.learner} state")
    for name, value in values.items():
        setattr(est, name, value)
    est.t_ = int(state.t)
    est.n_seen_ = int(state.n_seen)
    est.calibration_ = calib
    est.n_features_in_ = p
    if state.feature_names is not None:
        est.feature_names_in_ = np.asarray(state.feature_names, dtype=object).copy()
    return est


def state_nbytes(state: LearnerState) -> int:
    """Bytes of the arrays of a state (what a merge sends, less pickling overhead)."""
    return int(sum(v.nbytes if isinstance(v, np.ndarray) else 8 for v in state.arrays.values())
               + state.calibration.nbytes + 16)


# -- class moments (OAUC-M / OAUC-S) -------------------------------------------------------
class Moments(NamedTuple):
    """Exact class moments: per class k, the count, the (forgetting-) weight, the mean and
    the scatter ``M_k = W_k Sigma_k`` (full symmetric), and the largest |x| seen."""

    counts: np.ndarray      # (2,) int64
    weights: np.ndarray     # (2,) float
    means: np.ndarray       # (2, p)
    scatter: np.ndarray     # (2, p, p)
    max_abs: float


def empty_moments(p: int) -> Moments:
    """The moments of no rows."""
    return Moments(np.zeros(2, dtype=np.int64), np.zeros(2), np.zeros((2, p)),
                   np.zeros((2, p, p)), 0.0)


def linear_moments(state: LearnerState) -> Moments:
    """The moments held by an OAUC-M/OAUC-S state (from the kernel's scaled scatter:
    ``M_k = scales[k] * C_k``, upper triangle mirrored)."""
    a = state.arrays
    C = a["scatter_"]
    M = np.triu(C) + np.transpose(np.triu(C, 1), (0, 2, 1))
    M *= np.asarray(a["scales_"])[:, None, None]
    return Moments(a["counts_"].copy(), a["weights_"].copy(), a["means_"].copy(), M,
                   float(a["max_abs_"]))


def moments_of_rows(X: Any, s: np.ndarray, forgetting: float = 1.0) -> Moments:
    """Exact class moments of rows ``X`` (dense or CSR) with label signs ``s``, in row order.

    With forgetting ``beta < 1`` the i-th of the n rows of a class has weight
    ``beta^(n - 1 - i)`` (the last has weight 1), as in the learners' moment update.
    ``max_abs`` is NaN when X holds a non-finite value.

    One read of X, in chunks of rows that stay in cache (CSR densified chunk by chunk):
    per class k, the rows ``D = x - c_k`` shifted by a provisional centre ``c_k`` (the
    mean of the class's rows in the first chunk that has any) give ``S_k = sum w D'D``
    (BLAS dsyrk) and ``u_k = sum w D``; then, with ``d = u_k / W_k``,

        xbar_k = c_k + d,    M_k = S_k - W_k d d'

    exactly (expand ``x - xbar = (x - c) - d``). With ``c_k`` near the mean, ``d`` is
    small and the correction cancels nothing (an unshifted one-read ``sum x x' - W xbar
    xbar'`` loses the digits of ``|xbar|^2 / var``); the result agrees with the two-read
    centered sums to ~1e-15 (tests/test_state.py::test_shifted_moments_equal_the_two_read_sums).
    """
    p = X.shape[1]
    return _shifted_moments(X, s, forgetting, max(_CHUNK_ROWS, _CHUNK_BYTES // (8 * max(p, 1))))


#: rows per chunk of :func:`moments_of_rows`: 1 MB of rows (2,621 at p = 50: measured
#: best at 2,000-5,000 there), and at least 512 rows, so that at large p each dsyrk's
#: rank-k update is worth a read and write of the p x p scatter
_CHUNK_BYTES = 1 << 20
_CHUNK_ROWS = 512


def _shifted_moments(X: Any, s: np.ndarray, forgetting: float, step: int,
                     centres: np.ndarray | None = None) -> Moments:
    """:func:`moments_of_rows` with ``step`` rows per chunk; ``centres`` (2, p), if given,
    replaces the provisional centres ``c_k`` (tests: any centre is exact in exact
    arithmetic, and the first chunk's means keep it exact in floating point)."""
    import scipy.sparse as sp
    from scipy.linalg.blas import dsyrk

    from ._core._linear import finite_max_abs
    n_rows, p = X.shape
    out = empty_moments(p)
    sparse = sp.issparse(X)
    R, finite = 0.0, True
    if sparse:
        if X.nnz:
            R = float(np.abs(X.data).max())
            finite = R == R and R != np.inf
    else:
        X = np.ascontiguousarray(X, dtype=np.float64)
    s = np.asarray(s)
    masks, wts, Ws = [], [], []
    for sign in (-1.0, 1.0):
        mask = s == sign
        n = int(np.count_nonzero(mask))
        wt = None
        if forgetting != 1.0 and n:
            wt = np.zeros(mask.shape[0])
            wt[mask] = np.sqrt(forgetting) ** np.arange(n - 1, -1, -1, dtype=np.float64)
        masks.append(mask)
        wts.append(wt)                                  # sqrt of the row weights
        Ws.append(float(n) if wt is None else float(wt @ wt))
    shift: list[np.ndarray | None] = [None, None] if centres is None else [
        np.array(c, dtype=np.float64) for c in centres]
    seen = [False, False]
    Ss = [np.zeros((p, p), order="F") for _ in range(2)]
    us = [np.zeros(p) for _ in range(2)]
    buf = np.empty((min(step, n_rows), p))
    ones = np.ones(buf.shape[0])
    dense = np.zeros(buf.shape if sparse else (0, p))
    for a in range(0, n_rows, step):
        chunk = X[a:a + step]
        if sparse:                                      # densified into a kept buffer
            out_rows = dense[:chunk.shape[0]]
            out_rows.fill(0.0)
            chunk = chunk.toarray(out=out_rows)
        else:
            r = float(finite_max_abs(chunk))            # NaN: a value is not finite
            finite = finite and r == r
            R = max(R, r) if r == r else R
        for k in range(2):
            rows = masks[k][a:a + step]
            m = int(np.count_nonzero(rows))
            if m == 0:
                continue
            # the class's rows, copied into the kept buffer (aligned, in cache). Not
            # np.compress: its take(mode="raise") into out= allocates a temporary copy,
            # and in a dask worker (MALLOC_TRIM_THRESHOLD_ set, which pins glibc's mmap
            # threshold at 128 KB) each such temporary is a fresh mmap whose pages fault
            # on first touch, which can cost more than the rest of the moments task
            D = np.take(chunk, np.flatnonzero(rows), axis=0, out=buf[:m], mode="clip")
            seen[k] = True
            c = shift[k]
            if c is None:
                c = shift[k] = D.mean(axis=0)
            D -= c
            if wts[k] is None:
                us[k] += ones[:m] @ D                   # BLAS dgemv: 3x D.sum(axis=0)
            else:
                sw = np.asarray(wts[k])[a:a + step][rows]
                D *= sw[:, None]
                us[k] += sw @ D
            # D'D through BLAS dsyrk on D' (the F-ordered view of the C-ordered D): the
            # upper triangle only, half the work of a product
            Ss[k] = dsyrk(1.0, D.T, beta=1.0, c=Ss[k], trans=0, lower=0, overwrite_c=1)
    for k in range(2):
        c = shift[k]
        if not seen[k] or c is None:                    # no row of this class
            continue
        d = us[k] / Ws[k]
        U = np.triu(Ss[k])
        M = U + np.triu(U, 1).T
        M -= Ws[k] * np.outer(d, d)
        out.counts[k] = int(np.count_nonzero(masks[k]))
        out.weights[k] = Ws[k]
        out.means[k] = c + d
        out.scatter[k] = M
    return out._replace(max_abs=R if finite else float("nan"))


def merge_moments(a: Moments, b: Moments, forgetting: float = 1.0) -> Moments:
    """Moments of the rows of ``a`` followed by those of ``b`` (Chan et al.'s update).

    Per class, with ``d = beta^(n_b)`` the decay the rows of b apply to those of a:
    ``W = d W_a + W_b``, ``xbar = xbar_a + (W_b / W)(xbar_b - xbar_a)``,
    ``M = d M_a + M_b + (d W_a W_b / W)(xbar_b - xbar_a)(xbar_b - xbar_a)'``. Exact in exact
    arithmetic (with ``beta = 1`` the order does not matter); a side without rows of a class
    gives the other side's moments of that class unchanged (bit for bit).
    """
    counts = a.counts + b.counts
    weights = np.empty(2)
    means = np.empty_like(a.means)
    scatter = np.empty_like(a.scatter)
    for k in range(2):
        d = 1.0 if forgetting == 1.0 else forgetting ** int(b.counts[k])
        Wa, Wb = d * a.weights[k], b.weights[k]
        if b.counts[k] == 0:
            weights[k], means[k], scatter[k] = a.weights[k], a.means[k], a.scatter[k]
        elif a.counts[k] == 0 or Wa == 0.0:
            weights[k], means[k], scatter[k] = Wb, b.means[k], b.scatter[k]
        else:
            W = Wa + Wb
            delta = b.means[k] - a.means[k]
            weights[k] = W
            means[k] = a.means[k] + (Wb / W) * delta
            scatter[k] = (a.scatter[k] if d == 1.0 else d * a.scatter[k]) + b.scatter[k] \
                + (Wa * Wb / W) * np.outer(delta, delta)
    return Moments(counts, weights, means, scatter, max(a.max_abs, b.max_abs))


def tree_reduce(items: Sequence[T], op: Callable[[T, T], T]) -> T:
    """Combine ``items`` pairwise, adjacent pairs first (a fixed balanced tree): the same
    tree, hence the same rounding, whoever evaluates it. ``op(left, right)``."""
    items = list(items)
    while len(items) > 1:
        nxt = [op(items[i], items[i + 1]) for i in range(0, len(items) - 1, 2)]
        if len(items) % 2:
            nxt.append(items[-1])
        items = nxt
    return items[0]


def tree_exclusive(items, op, empty):
    """For each item, the combination of all the *other* items in order (those on its left,
    then those on its right), by an up-sweep of :func:`tree_reduce`'s tree and a down-sweep
    that hands each node the combination of what lies to its left and to its right:
    ``O(K)`` applications of ``op`` in ``O(log K)`` depth, and ``op`` is never applied to
    the neutral element ``empty`` (which an item with no others receives as it is).

    Returns (total, [others_0, ..., others_{K-1}]).
    """
    levels = [list(items)]
    while len(levels[-1]) > 1:
        cur = levels[-1]
        nxt = [op(cur[i], cur[i + 1]) for i in range(0, len(cur) - 1, 2)]
        if len(cur) % 2:
            nxt.append(cur[-1])
        levels.append(nxt)

    def join(a, b):                                   # None: nothing on that side
        return b if a is None else (a if b is None else op(a, b))

    left, right = [None], [None]                      # what lies left/right of each node
    for depth in range(len(levels) - 2, -1, -1):
        cur = levels[depth]
        nl: list[Any] = []
        nr: list[Any] = []
        for i in range(len(cur)):
            pl, pr = left[i // 2], right[i // 2]
            if i % 2 == 0 and i + 1 < len(cur):       # a left child: its sibling is right
                nl.append(pl)
                nr.append(join(cur[i + 1], pr))
            elif i % 2 == 1:                          # a right child: its sibling is left
                nl.append(join(pl, cur[i - 1]))
                nr.append(pr)
            else:                                     # an unpaired last node
                nl.append(pl)
                nr.append(pr)
        left, right = nl, nr
    others = [join(a, b) for a, b in zip(left, right)]
    return levels[-1][0], [empty if o is None else o for o in others]


def linear_state(template: LearnerState, moments: Moments, coef: ArrayLike, t: int, n_seen: int,
                 calibration: ArrayLike) -> LearnerState:
    """An OAUC-M/OAUC-S state with the given moments (scale 1, full scatter), weights and
    counters, and the rest (parameters, classes, layout) of ``template``."""
    arrays = {
        "w_": np.array(coef, dtype=np.float64),
        "means_": moments.means.copy(),
        "scatter_": moments.scatter.copy(),
        "scales_": np.ones(2),
        "weights_": moments.weights.copy(),
        "counts_": moments.counts.astype(np.int64),
        "max_abs_": float(moments.max_abs),
    }
    return LearnerState(template.learner, copy.deepcopy(template.params),
                        template.classes.copy(), template.n_features,
                        copy.deepcopy(template.layout), arrays, int(t), int(n_seen),
                        np.array(calibration, dtype=np.float64), _copy(template.feature_names))


def merge_calibration(calibrations: Sequence[np.ndarray]) -> np.ndarray:
    """``[A, H]`` of independent shard posteriors around the shared prior [1, 1] (counted
    once): ``H = sum H_k - (K - 1)``, ``A = (sum H_k A_k - (K - 1)) / H`` (A >= 1e-12)."""
    c = np.asarray(calibrations, dtype=np.float64).reshape(-1, 2)
    if c.shape[0] == 1:
        return c[0].copy()
    K = c.shape[0]
    H = float(c[:, 1].sum()) - (K - 1)
    A = (float(c[:, 1] @ c[:, 0]) - (K - 1)) / H
    return np.array([max(A, 1e-12), H])


def _mix_weights(ws, weights):
    """``sum_k weights_k ws_k / sum_k weights_k`` (uniform when every weight is 0)."""
    weights = np.asarray(weights, dtype=np.float64)
    total = float(weights.sum())
    if total == 0.0:
        weights, total = np.ones_like(weights), float(weights.shape[0])
    acc = np.zeros_like(ws[0])
    for wk, ck in zip(ws, weights):
        acc += ck * wk
    return acc / total


def _check_compatible(states):
    if not states:
        raise ValueError("merge needs at least one state")
    for i, st in enumerate(states):
        if not isinstance(st, LearnerState):
            raise TypeError(f"states[{i}] is a {type(st).__name__}, not a LearnerState")
        if st.version != STATE_VERSION:
            raise ValueError(f"states[{i}] has version {st.version}; this sosl merges "
                             f"version {STATE_VERSION}")
    first = states[0]
    key = {k: v for k, v in first.params.items() if k not in _FREE_PARAMS}
    for i, st in enumerate(states[1:], 1):
        if st.learner != first.learner:
            raise ValueError(f"states[{i}] is of {st.learner}, states[0] of {first.learner}: "
                             "only states of one learner merge")
        if st.n_features != first.n_features:
            raise ValueError(f"states[{i}] has {st.n_features} features, states[0] "
                             f"{first.n_features}")
        if st.classes.tolist() != first.classes.tolist():
            raise ValueError(f"states[{i}] has classes {st.classes.tolist()}, states[0] "
                             f"{first.classes.tolist()} (same labels in the same order needed)")
        other = {k: v for k, v in st.params.items() if k not in _FREE_PARAMS}
        if other != key:
            diff = sorted(k for k in set(key) | set(other) if key.get(k) != other.get(k))
            raise ValueError(f"states[{i}] differs from states[0] in {diff}: only states of "
                             "the same hyper-parameters merge")
    scales = sorted({float(st.layout["row_scale"]) for st in states if "row_scale" in st.layout})
    if len(scales) > 1:
        warnings.warn(
            f"the states read different row scales under \"auto\" ({scales[0]:g} to "
            f"{scales[-1]:g}); the merged model runs with states[0]'s. Give the step or "
            "regularization as a number to merge shards of one scale.", UserWarning,
            stacklevel=3)
    domains = _caps(first.learner).domains
    for i, st in enumerate(states):
        for name, v in st.arrays.items():
            if (isinstance(v, np.ndarray) and v.dtype.kind == "f" and not np.isfinite(v).all()) \
                    or (isinstance(v, float) and not math.isfinite(v)):
                raise ValueError(f"states[{i}].arrays[{name!r}] contains NaN or infinity")
        check_domains(domains, st.arrays, f"merge: states[{i}]")
        check_calibration(st.calibration, f"merge: states[{i}]")


def merge(states: Sequence[LearnerState], weights: ArrayLike | None = None) -> LearnerState:
    """Merge the states of models trained on shards into the state of one model.

    Parameters
    ----------
    states : sequence of LearnerState
        States of one learner with the same hyper-parameters (``shuffle``,
        ``random_state`` and ``max_memory`` aside), classes and number of features. Their
        order is the order of the shards' rows (it matters only with ``forgetting < 1``).
    weights : array-like of shape (K,), optional
        Mixing weights of the weight vectors. Default: the round counts ``t`` of the
        states, the exact summed-gradient rule of the ``1/(lam t)`` step (module
        docstring); other weights depart from it. The moments are always merged exactly.

    Returns
    -------
    state : LearnerState
        Turn it into an estimator with :func:`from_state`. The inputs are not modified;
        a ValueError/TypeError (incompatible or non-finite states) leaves nothing behind.

    Notes
    -----
    **FTRL-AUC** keeps per coordinate i the FTRL-Proximal sums ``z_i`` and ``n_i`` (squared
    gradients) and ``w_i = F5(z_i, n_i)``. The merge adds the squared-gradient sums (the
    per-coordinate learning rate then continues as if one learner had seen every gradient)
    and averages the weights per coordinate with weights ``sqrt(n_{k,i})``, the curvature
    ``sigma_{1:t} = sqrt(n_i)/gamma`` FTRL-Proximal itself gives its estimate of
    coordinate i: a coordinate seen by one shard only keeps that shard's weight, and K
    identical states merge into that state's weights (adding the z's instead would scale
    shared coordinates by up to sqrt(K) against rare ones). z is then set so that (F5)
    returns the merged weight (inverted exactly where w != 0; clipped into [-l1, l1] where
    w = 0). The class mean scores are merged as count-weighted means.
    """
    states = list(states)
    _check_compatible(states)
    if weights is not None:
        weights = np.asarray(weights, dtype=np.float64)
        if weights.shape != (len(states),) or not np.isfinite(weights).all() \
                or (weights < 0).any():
            raise ValueError(f"weights must be {len(states)} finite numbers >= 0, got "
                             f"{weights.tolist()}")
    if len(states) == 1:
        st = states[0]
        return LearnerState(st.learner, copy.deepcopy(st.params), st.classes.copy(),
                            st.n_features, copy.deepcopy(st.layout),
                            {k: _copy(v) for k, v in st.arrays.items()}, st.t, st.n_seen,
                            st.calibration.copy(), _copy(st.feature_names))
    name = states[0].learner
    caps = _caps(name)
    for st in states:
        why = caps.merge_refusal(st.layout)
        if why is not None:
            raise TypeError(f"{name} {why}: see sosl.state for the learners that merge and "
                            "why the others cannot")
    if not caps.merge_weights and weights is not None:
        raise ValueError(f"{name} merges its weights by its own rule (see Notes); weights= "
                         "does not apply to it")
    if weights is None:
        weights = np.array([st.t for st in states], dtype=np.float64)
    beta = states[0].params.get("forgetting", 1.0)
    if isinstance(beta, str):
        raise ValueError(f"states of forgetting={beta!r} do not merge: the detector follows "
                         "one stream in its order; fit the shards with a number")
    return _MERGE_RULES[caps.merge](states, weights)


def _caps(name):
    klass = _learner(name)
    if klass is None:
        raise ValueError(f"unknown learner {name!r} in the state")
    return klass.capabilities


def _merge_linear(states, weights):
    beta = float(states[0].params.get("forgetting", 1.0))
    moments = tree_reduce([linear_moments(st) for st in states],
                          lambda a, b: merge_moments(a, b, beta))
    coef = _mix_weights([st.arrays["w_"] for st in states], weights)
    return linear_state(states[0], moments, coef, sum(st.t for st in states),
                        sum(st.n_seen for st in states),
                        merge_calibration([st.calibration for st in states]))


# -- SketchedOAUCM and FTRL-AUC: the rules on their arrays live in sosl._merge_rules ------
def _merged(states, arrays):
    first = states[0]
    return LearnerState(first.learner, copy.deepcopy(first.params), first.classes.copy(),
                        first.n_features, copy.deepcopy(first.layout), arrays,
                        sum(st.t for st in states), sum(st.n_seen for st in states),
                        merge_calibration([st.calibration for st in states]),
                        _copy(first.feature_names))


def _merge_sketched(states, weights):
    # a sketch capped to max_columns is refused by its capabilities' merge_layout: each
    # shard tracks its own column set, and the untracked columns' lazy weights have no
    # common scale
    return _merged(states, sketch_arrays(states, lambda ws: _mix_weights(ws, weights)))


def _merge_ftrl(states, weights=None):
    first = states[0]
    # the learner maps its hyper-parameters to the pass's numbers (gamma="auto" resolves
    # against the frozen row scale)
    params = REGISTRY[first.learner].effective_params(first.params, first.layout)
    return _merged(states, ftrl_arrays(states, params))


#: the merge rule a learner's ``capabilities.merge`` names
_MERGE_RULES: dict[str, Callable] = {"moments": _merge_linear, "sketch": _merge_sketched,
                                     "ftrl": _merge_ftrl}
