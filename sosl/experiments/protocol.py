"""The cross-validated protocol of the paper's Section 6.3, one run at a time.

* Outer loop: ``n_repeats`` independent ``n_folds``-fold partitions (4 x 5 = 20 runs); run
  ``r * n_folds + f`` trains on the other folds of partition ``r`` and tests on fold ``f``.
* Inner loop: on each training part, ``inner_folds``-fold CV scores every grid point by the
  mean AUC over the inner validation folds; the best point (first on ties; a diverged or
  failed fit, including a model whose scores are not finite, counts as AUC 0) is refit on
  the whole training part.
* Each fit is one online pass in a random order (seeded by dataset, run and fold, the same
  for every algorithm); the test AUC of the final model is the result. A learner with
  randomness of its own (the reservoir buffers of OAM and KOIL, for example) gets the same
  seed as its ``random_state``, so every fit, and every task, is reproducible wherever it
  runs.
* Kernel learners get training parts larger than 10 000 rows subsampled uniformly without
  replacement (same seed rule).
* Capped batch references (the SVC and the unbounded OKAUC-M, whose fits grow with the cube
  of the training size): on a dataset whose training parts exceed 4 000 rows they are run on
  the first partition only (1 x ``n_folds`` runs), each training part replaced by a
  stratified subsample of 4 000 of its rows, drawn with a seed fixed by (dataset, run), so
  every grid point, the inner CV, the refit and the oracle see the same rows; the test fold
  is the run's whole test fold. Such rows are recorded under their own protocol,
  ``1x5/5@4000`` (:func:`capped_protocol`), so they never mix with full-protocol rows.

Departures where the paper is silent: the folds are stratified (every fold keeps the
class ratio, so the 132 positives of shuttle reach every test fold), the features are
scaled once on the whole dataset before splitting (as the paper's "all features are
scaled to [-1, 1]" suggests), and the pass order is a fresh permutation of the training
part rather than the file order (magic04's file is grouped by class).
"""

import warnings
import zlib

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import StratifiedKFold

from ..metrics import auc
from .algorithms import check_point

__all__ = ["KERNEL_MAX_TRAIN", "REFERENCE_MAX_TRAIN", "capped_protocol", "cv_score",
           "error_kind", "needs_cap", "outer_splits", "heldout_score", "parse_protocol",
           "run_seed", "stratified_subsample", "train_part"]

#: training parts of kernel learners are subsampled to this size (Section 6.3)
KERNEL_MAX_TRAIN = 10_000

#: training parts of the capped batch references are subsampled to this size, stratified,
#: on datasets whose training parts exceed it (issue 25's decision: references, not protocol)
REFERENCE_MAX_TRAIN = 4_000


def capped_protocol(n_folds, inner_folds, max_train):
    """The protocol recorded by a capped reference: ``"1x<folds>/<inner>@<max_train>"``."""
    return f"1x{int(n_folds)}/{int(inner_folds)}@{int(max_train)}"


def parse_protocol(protocol):
    """``(repeats, folds, inner folds, max_train or None)`` of a recorded protocol string.

    ``"4x5/5"`` gives ``(4, 5, 5, None)``, ``"1x5/5@4000"`` gives ``(1, 5, 5, 4000)``.

    Raises
    ------
    ValueError
        For a string of neither form.
    """
    head, at, cap = str(protocol).partition("@")
    try:
        reps, rest = head.split("x")
        folds, inner = rest.split("/")
        return int(reps), int(folds), int(inner), (int(cap) if at else None)
    except ValueError:
        raise ValueError(f"a protocol is '<repeats>x<folds>/<inner folds>[@<rows>]', got "
                         f"{protocol!r}") from None


def needs_cap(y, dataset, seed=0, n_repeats=4, n_folds=5, max_train=REFERENCE_MAX_TRAIN):
    """Whether a training part of the outer loop exceeds ``max_train`` rows (None: never)."""
    if max_train is None:
        return False
    splits = outer_splits(y, dataset, seed, n_repeats, n_folds)
    return max(train.shape[0] for train, _ in splits) > int(max_train)


def stratified_subsample(train, y, size, seed):
    """``size`` indices of ``train``, sorted, with each class in proportion to its count.

    Each class gets its share ``size * n_c / n`` rounded down, the rows left over go to
    the largest remainders (ties to the smaller label), and a class present in ``train``
    keeps at least one row; within a class the rows are drawn uniformly without
    replacement from ``np.random.default_rng(seed)``. ``train`` itself is returned when it
    has at most ``size`` rows.
    """
    train = np.asarray(train)
    size = int(size)
    if train.shape[0] <= size:
        return train
    labels, counts = np.unique(np.asarray(y)[train], return_counts=True)
    share = size * counts / counts.sum()
    take = np.floor(share).astype(int)
    for i in np.argsort(-(share - take), kind="stable")[:size - take.sum()]:
        take[i] += 1
    for i in np.flatnonzero(take == 0):   # a rare class keeps a row, taken from the largest
        take[i] = 1
        take[np.argmax(take)] -= 1
    rng = np.random.default_rng(seed)
    lab = np.asarray(y)[train]
    parts = [rng.choice(train[lab == c], k, replace=False) for c, k in zip(labels, take)]
    return np.sort(np.concatenate(parts))


def run_seed(seed, dataset, run, stage):
    """A 32-bit seed determined by (seed, dataset name, run, stage) alone."""
    ss = np.random.SeedSequence([int(seed), zlib.crc32(dataset.encode()), int(run), int(stage)])
    return int(ss.generate_state(1)[0])


def outer_splits(y, dataset, seed=0, n_repeats=4, n_folds=5):
    """The ``n_repeats * n_folds`` (train, test) index pairs of the outer loop, run order."""
    y = np.asarray(y)
    key = (dataset, int(seed), int(n_repeats), int(n_folds), y.shape[0], hash(y.tobytes()))
    splits = _SPLITS.get(key)
    if splits is None:
        splits = _outer_splits(y, dataset, seed, n_repeats, n_folds)
        if len(_SPLITS) > 16:
            _SPLITS.clear()
        _SPLITS[key] = splits
    return splits


# per-process cache: the splits are recomputed by every task otherwise (read once per call,
# so a worker thread clearing it cannot pull a value from under another)
_SPLITS: dict = {}


def _outer_splits(y, dataset, seed, n_repeats, n_folds):
    out = []
    for r in range(n_repeats):
        skf = StratifiedKFold(n_folds, shuffle=True, random_state=run_seed(seed, dataset, r, 0))
        out.extend(skf.split(np.zeros(len(y)), y))
    return out


def train_part(y, dataset, run, seed=0, n_repeats=4, n_folds=5, kernel=False, max_train=None):
    """Training and test indices of one outer run (training part subsampled for kernels).

    With ``max_train`` (a capped reference), a training part larger than that is replaced
    by its :func:`stratified_subsample` of ``max_train`` rows (seed stage 4 of the run),
    instead of the kernel learners' uniform one.
    """
    train, test = outer_splits(y, dataset, seed, n_repeats, n_folds)[run]
    if max_train is not None:
        return stratified_subsample(train, y, max_train, run_seed(seed, dataset, run, 4)), test
    if kernel and train.shape[0] > KERNEL_MAX_TRAIN:
        rng = np.random.default_rng(run_seed(seed, dataset, run, 1))
        train = np.sort(rng.choice(train, KERNEL_MAX_TRAIN, replace=False))
    return train, test


#: prefixes of the ``error`` recorded with a score of 0 (see :func:`error_kind`)
DIVERGED, INVALID, FAILED = "diverged", "invalid", "failed"


def error_kind(error):
    """Classify a recorded error: ``"diverged"``, ``"invalid"``, ``"failed"`` or ``""`` (none).

    Rows written before the prefixes existed are classified by their exception name: a
    ``FloatingPointError`` (the estimators' finiteness guard) or a NaN/infinite score is a
    divergence, anything else a failure.
    """
    if not error:
        return ""
    head = error.split(":", 1)[0]
    if head in (DIVERGED, INVALID, FAILED):
        return head
    if head in ("FloatingPointError", "OverflowError") or "NaN or infinity" in error:
        return DIVERGED
    return FAILED


def _fit_auc(spec, params, X, y, train, test, order_seed):
    """Fit on ``train`` in a seeded random order, return the AUC on ``test`` and an error.

    A fit that fails scores 0 and returns a message prefixed by its kind:

    * ``diverged``: the estimator's finiteness guard refused the pass (the state became
      non-finite), an arithmetic error, or a model whose test scores are not all finite
      (a finite state can still overflow in the score);
    * ``invalid``: the estimator rejects the hyper-parameters (the runner's grids leave
      such points out, so this marks a grid or registry mistake);
    * ``failed``: any other ValueError/TypeError/ArithmeticError of the fit.
    """
    why = check_point(spec, params)
    if why is not None:
        return 0.0, f"{INVALID}: {why}"[:200]
    order = train[np.random.default_rng(order_seed).permutation(train.shape[0])]
    try:
        est = spec.make(**params)
        if "random_state" in est.get_params(deep=False):
            est.set_params(random_state=int(order_seed))
        with warnings.catch_warnings():  # a batch reference's solver stopped at max_iter:
            warnings.simplefilter("ignore", ConvergenceWarning)  # its model is still scored
            est.fit(X[order], y[order])
        scores = np.asarray(est.decision_function(X[test]), dtype=float)
    except (FloatingPointError, OverflowError, ZeroDivisionError) as err:
        return 0.0, f"{DIVERGED}: {type(err).__name__}: {err}"[:200]
    except (ValueError, TypeError, ArithmeticError) as err:
        return 0.0, f"{FAILED}: {type(err).__name__}: {err}"[:200]
    bad = int(np.count_nonzero(~np.isfinite(scores)))
    if bad:
        return 0.0, f"{DIVERGED}: {bad} of {scores.shape[0]} test scores are not finite"
    return auc(y[test], scores), ""


def cv_score(spec, params, X, y, dataset, run, seed=0, n_repeats=4, n_folds=5, inner_folds=5,
             max_train=None):
    """Mean inner-CV AUC of one grid point on the training part of one run.

    ``max_train``: the capped references' subsample size (see
    :func:`sosl.experiments.protocol.train_part`).

    Returns
    -------
    score : float
    error : str
        Empty, or the first failure met (its fold then scores 0).
    """
    train, _ = train_part(y, dataset, run, seed, n_repeats, n_folds, spec.kernel, max_train)
    skf = StratifiedKFold(inner_folds, shuffle=True, random_state=run_seed(seed, dataset, run, 2))
    scores, errors = [], []
    for k, (a, b) in enumerate(skf.split(np.zeros(train.shape[0]), y[train])):
        s, e = _fit_auc(spec, params, X, y, train[a], train[b],
                        run_seed(seed, dataset, run, 10 + k))
        scores.append(s)
        if e:
            errors.append(e)
    return float(np.mean(scores)), (errors[0] if errors else "")


def heldout_score(spec, params, X, y, dataset, run, seed=0, n_repeats=4, n_folds=5,
                  max_train=None):
    """Test AUC of ``params`` refit on the whole training part of one run.

    The same call scores the selected point (the result of the run) and every point of
    the grid for the oracle ceiling: the pass order depends on (dataset, run) alone, so
    the oracle's fit of the selected point is the selected fit, bit for bit.
    """
    train, test = train_part(y, dataset, run, seed, n_repeats, n_folds, spec.kernel, max_train)
    return _fit_auc(spec, params, X, y, train, test, run_seed(seed, dataset, run, 3))
