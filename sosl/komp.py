"""Destructive kernel orthogonal matching pursuit (KOMP) with pre-fitting.

A function of a reproducing kernel Hilbert space given by a finite expansion

    f = sum_i alpha_i k(d_i, .)          (dictionary d_1..d_M, weights alpha)

is compressed by removing dictionary elements one at a time. At each stage the element
whose removal costs the least Hilbert-norm error is removed, the error being measured
after re-fitting the remaining weights by least squares in the RKHS (the orthogonal
projection of the *original* f onto the span of the remaining elements). The removals
stop as soon as the next one would make ||f - f_new||_H exceed ``epsilon``. This is
Algorithm 1 of Koppel et al. (POLK), "destructive KOMP with pre-fitting" of Vincent &
Bengio (2002, Section 2.3).

The implementation lives in ``sosl._core``: the checks and the dispatch in
:mod:`sosl._core._komp_prune`, the typed core in :mod:`sosl._core._komp`, the NumPy/LAPACK
reference (with the symbols, the O(M^2) removal costs and the numerical-rank departure
from the paper) in :mod:`sosl._core._komp_ref`. Everything is expressed through the Gram
matrix of the dictionary, so the function does not depend on the kernel or on the data:
it serves POLK (:class:`sosl.POLK`) and any learner that compresses a kernel expansion
(``OKAUCM(budget_policy="komp")``).
"""

from ._core._komp_prune import komp_prune
from ._core._komp_ref import komp_error, komp_prune_bruteforce, single_thread_blas

__all__ = ["komp_prune", "komp_error", "komp_prune_bruteforce", "single_thread_blas"]
