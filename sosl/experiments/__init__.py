"""Reproduce the paper's Section 6: the protocol of Tables 2 and 3, run in parallel.

Run ``python -m sosl.experiments --help``. For example, the coarse grid on every dataset
found in ``$SOSL_DATA_DIR`` for the three proposed linear learners, on two cores::

    SOSL_DATA_DIR=/path/to/data python -m sosl.experiments \\
        --algorithms OAUC-M OAUC-M_c OAUC-S --grid coarse --jobs 2 --out results/coarse

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
resumes; ``<out>/table2_<grid>.md`` / ``.csv`` (linear) and ``table3_<grid>.*`` (kernel)
put the reproduced numbers beside the published ones.

Scaling out
-----------
Every task is an independent joblib call that loads its dataset by name, so the same
run scales from a laptop to a cluster by changing the joblib backend:

* local processes (default): ``--backend loky --jobs 8``; threads: ``--backend threading``
  (the Cython passes release the GIL, but the AUC and CV bookkeeping do not);
* Dask: start a scheduler and workers that can import sosl and see the same data directory
  (``dask scheduler``; ``dask worker tcp://host:8786``), then run with
  ``--backend dask --scheduler tcp://host:8786 --jobs -1``. In Python::

      from dask.distributed import Client
      import joblib
      client = Client("tcp://host:8786")
      with joblib.parallel_config(backend="dask"):
          run_experiment(datasets, backend=None, n_jobs=-1)

* Ray: ``--backend ray`` (runs ``ray.util.joblib.register_ray()``; connect to an existing
  cluster with ``RAY_ADDRESS=...``).

Neither dask nor ray is a dependency of sosl; they are imported only when asked for.
"""

from .algorithms import (ALGORITHMS, GRIDS, AlgorithmSpec, grid_label, grid_points,
                         resolve_algorithms)
from .protocol import cv_score, heldout_score, outer_splits
from .runner import get_data, load_rows, paper_table, report, report_from_cache, run_experiment

__all__ = ["ALGORITHMS", "GRIDS", "AlgorithmSpec", "cv_score", "get_data", "grid_label",
           "grid_points",
           "heldout_score", "load_rows", "outer_splits", "paper_table", "report",
           "report_from_cache", "resolve_algorithms", "run_experiment"]
