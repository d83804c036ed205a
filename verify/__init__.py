"""Empirical verification of the lemmas and theorems of the sosl paper.

``python -m verify [--quick] [--only NAMES] [--out DIR] [--seed N]`` runs one module per
statement (discovered automatically, see :mod:`verify._harness` for how to add one), prints
one line per check and writes ``report.md``, ``results.json`` and PNG figures.
"""

import os as _os

# The checks are small dense problems: one BLAS thread is fastest on a shared 2-core machine
# (several threads per process oversubscribe the cores). Users can override the variables.
for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    _os.environ.setdefault(_v, "1")

from ._harness import run_checks  # noqa: E402
from ._records import Record, write_report  # noqa: E402

__all__ = ["Record", "run_checks", "write_report"]
