"""Reproduce the paper's Section 6: the protocol of Tables 2 and 3, run in parallel.

Run ``python -m sosl.experiments --help``. For example, the coarse grid on every dataset
found in ``$SOSL_DATA_DIR`` for the three proposed linear learners, on two cores::

    SOSL_DATA_DIR=/path/to/data python -m sosl.experiments \\
        --algorithms OAUC-M OAUC-M_c OAUC-S --grid coarse --jobs 2 --out results

The protocol (:mod:`sosl.experiments.protocol`): 4 independent 5-fold partitions give 20
runs per dataset; on each training part a 5-fold CV picks the hyper-parameters on the
grid 2^[-10, 10] (``--grid full``, the default), every second exponent
(``--grid coarse``) or every fourth, 2^{-8, -4, 0, 4, 8} (``--grid sparse``, meant for the
kernel learners, whose 2-3 searched parameters make even the coarse grid long). OKAUC-S,
the one learner with three searched parameters, searches a seeded random subset of its
product grid as large as a two-parameter grid at the same resolution (441 of the 9261
full-grid points, the budget of OKAUC-M's 21 x 21 grid; ``--max-points 0`` searches the
whole product, ``--max-points k`` sets any cap).
The chosen model is trained by one pass and scored by the exact AUC
(:func:`sosl.metrics.auc`) on the held-out fold. Results are cached one row per
(dataset, algorithm, run, hyper-parameters) in ``<out>/rows.csv``, so an interrupted run
resumes (:mod:`sosl.experiments.cache`: a row torn by a kill is cut off and computed again,
a line that is not a row is named by its line number); ``<out>/table2_<grid>.md`` /
``.csv`` (linear) and ``table3_<grid>.*`` (kernel) put the reproduced numbers beside the
published ones.

A dataset file whose checksum the registry does not know (or that differs from it) is
refused unless ``--no-verify`` is given, which uses it with a warning giving its sha256.
``--positive-class DATASET=LABEL`` runs another one-vs-rest task of a multi-class dataset
(e.g. ``vowel=3``; the registry takes vowel's class 2), recorded as ``vowel:pos=3``.

Scaling out
-----------
Size a run before starting it: ``--estimate [K]`` counts the tasks the cache lacks and
times K real fits per learner at the run's training sizes
(:mod:`sosl.experiments.estimate`), printing the CPU seconds it would take.

Every task is an independent call that loads its dataset by name and seeds all its
randomness from its arguments, so every backend (:mod:`sosl.experiments.backends`) yields
the same rows, bit for bit; only the order and the timing columns differ:

* local processes (default): ``--backend loky --jobs 8``; threads: ``--backend threading``
  (the Cython passes release the GIL, but the AUC and CV bookkeeping do not);
* Dask: ``--backend dask --jobs 2`` starts a local cluster of 2 single-threaded worker
  processes bound to 127.0.0.1 for the run. For a cluster of your own, start a scheduler
  and workers that can import sosl and see the same data directory (``dask scheduler``;
  ``dask worker tcp://host:8786``), then run with
  ``--backend dask --scheduler tcp://host:8786``. The tasks go through
  ``distributed.Client.submit`` in small batches, not through joblib's dask backend;
* Ray: ``--backend ray --jobs 2`` starts a local ray instance of 2 CPUs for the run;
  ``--scheduler ADDRESS`` (or ``$RAY_ADDRESS``) connects to a running cluster instead. The
  tasks are ray remote functions.

Neither dask nor ray is a dependency of sosl (``pip install 'sosl[dask]'`` or
``'sosl[ray]'``); they are imported only when asked for.

After every run the runner prints a summary (:func:`run_summary`, also written to
``<out>/summary_<grid>.md``): per dataset and algorithm the grid points left out as
outside the learner's domain, the inner-CV tasks that diverged, were invalid or failed,
and how often the selected value sat on an edge of the grid, with a warning line for each.

Ceilings
--------
``--ceilings`` adds, for every cell, the *oracle*: on each of the same runs, every grid
point fitted on the whole training part and the best test AUC taken (a selection made on
the test fold, so an upper bound of any selection on that grid); its mean over the runs is
the cell's ceiling. A paper value above the ceiling by more than the paper's std is marked
``^``: this protocol cannot reach it on this data. The flag also runs batch references on
the same splits, preprocessing and protocol (:data:`REFERENCES`: logistic regression for
Table 2, the RBF ``SVC`` and OKAUC-M with unbounded buffers for Table 3; ``--references``
picks them). The two Table 3 references are capped: on a dataset whose training parts
exceed 4 000 rows they run on a stratified 4 000-row subsample of each training part over
1 x 5 folds (``--reference-max-train``), and their cells are marked in every table.
``--report-only`` shows whatever ceilings and references are cached.

The code: :mod:`~sosl.experiments.runner` computes and caches the rows,
:mod:`~sosl.experiments.summary` reduces them and :mod:`~sosl.experiments.tables` writes
the tables and the result record.
"""

from .algorithms import (
    ALGORITHMS,
    GRIDS,
    REFERENCES,
    AlgorithmSpec,
    check_point,
    default_references,
    grid_label,
    grid_points,
    grid_restrictions,
    resolve_algorithms,
    spec_of,
)
from .backends import BACKENDS, executor, run_tasks
from .protocol import cv_score, error_kind, heldout_score, outer_splits
from .runner import (
    cached_grids,
    get_data,
    load_rows,
    oracle_ceilings,
    paper_table,
    report,
    report_from_cache,
    run_experiment,
    run_summary,
)

__all__ = ["ALGORITHMS", "BACKENDS", "GRIDS", "REFERENCES", "AlgorithmSpec", "cached_grids",
           "check_point", "cv_score", "default_references", "error_kind", "executor",
           "get_data", "grid_label", "grid_points", "grid_restrictions", "heldout_score",
           "load_rows", "oracle_ceilings", "outer_splits", "paper_table", "report",
           "report_from_cache", "resolve_algorithms", "run_experiment", "run_summary",
           "run_tasks", "spec_of"]
