"""Destructive kernel orthogonal matching pursuit (KOMP) with pre-fitting.

Compresses a finite kernel expansion f = sum_i alpha_i k(d_i, .) by removing dictionary
elements while ||f - f_new||_H <= ``epsilon`` (Algorithm 1 of Koppel et al.; the method is
described in full in :mod:`sosl._core._komp_ref`).

The implementation lives in ``sosl._core``: the checks and the dispatch in
:mod:`sosl._core._komp_prune`, the typed core in :mod:`sosl._core._komp`, the NumPy/LAPACK
reference (with the symbols, the O(M^2) removal costs and the numerical-rank departure
from the paper) in :mod:`sosl._core._komp_ref`. Everything is expressed through the Gram
matrix of the dictionary, so the function does not depend on the kernel or on the data:
it serves POLK (:class:`sosl.POLK`) and any learner that compresses a kernel expansion
(``OKAUCM(budget_policy="komp")``).
"""

from ._core._komp_np import komp_error, komp_prune_bruteforce, single_thread_blas
from ._core._komp_prune import komp_prune

__all__ = ["komp_prune", "komp_error", "komp_prune_bruteforce", "single_thread_blas"]
