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

__all__ = ["KERNEL_MAX_TRAIN", "cv_score", "error_kind", "outer_splits", "heldout_score",
           "run_seed", "train_part"]

#: training parts of kernel learners are subsampled to this size (Section 6.3)
KERNEL_MAX_TRAIN = 10_000


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


def train_part(y, dataset, run, seed=0, n_repeats=4, n_folds=5, kernel=False):
    """Training and test indices of one outer run (training part subsampled for kernels)."""
    train, test = outer_splits(y, dataset, seed, n_repeats, n_folds)[run]
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


def cv_score(spec, params, X, y, dataset, run, seed=0, n_repeats=4, n_folds=5, inner_folds=5):
    """Mean inner-CV AUC of one grid point on the training part of one run.

    Returns
    -------
    score : float
    error : str
        Empty, or the first failure met (its fold then scores 0).
    """
    train, _ = train_part(y, dataset, run, seed, n_repeats, n_folds, spec.kernel)
    skf = StratifiedKFold(inner_folds, shuffle=True, random_state=run_seed(seed, dataset, run, 2))
    scores, errors = [], []
    for k, (a, b) in enumerate(skf.split(np.zeros(train.shape[0]), y[train])):
        s, e = _fit_auc(spec, params, X, y, train[a], train[b],
                        run_seed(seed, dataset, run, 10 + k))
        scores.append(s)
        if e:
            errors.append(e)
    return float(np.mean(scores)), (errors[0] if errors else "")


def heldout_score(spec, params, X, y, dataset, run, seed=0, n_repeats=4, n_folds=5):
    """Test AUC of ``params`` refit on the whole training part of one run.

    The same call scores the selected point (the result of the run) and every point of
    the grid for the oracle ceiling: the pass order depends on (dataset, run) alone, so
    the oracle's fit of the selected point is the selected fit, bit for bit.
    """
    train, test = train_part(y, dataset, run, seed, n_repeats, n_folds, spec.kernel)
    return _fit_auc(spec, params, X, y, train, test, run_seed(seed, dataset, run, 3))
