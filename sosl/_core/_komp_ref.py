"""NumPy reference of destructive kernel orthogonal matching pursuit (KOMP) with pre-fitting.

A function of a reproducing kernel Hilbert space given by a finite expansion

    f = sum_i alpha_i k(d_i, .)          (dictionary d_1..d_M, weights alpha)

is compressed by removing dictionary elements one at a time. At each stage the element
whose removal costs the least Hilbert-norm error is removed, the error being measured
after re-fitting the remaining weights by least squares in the RKHS (the orthogonal
projection of the *original* f onto the span of the remaining elements). The removals
stop as soon as the next one would make ||f - f_new||_H exceed ``epsilon``. This is
Algorithm 1 of Koppel et al. (POLK), "destructive KOMP with pre-fitting" of Vincent &
Bengio (2002, Section 2.3).

Two implementations with the same steps and tie rules: the typed core
:mod:`sosl._core._komp` (plain loops, the default ``backend="cython"`` of
:func:`sosl._core._komp_prune.komp_prune`) and the NumPy/LAPACK reference named here
(``backend="numpy"``; the code sits in the production module :mod:`sosl._core._komp_np`,
since ``komp_prune`` and :mod:`sosl.komp` run it); they keep the same elements and give
the same function to rounding (tests/_core/test_komp.py::test_cython_core_matches_numpy_reference;
with exactly duplicated points either copy may be kept).

Everything is expressed through the Gram matrix ``K`` of the dictionary, so the function
does not depend on the kernel or on the data: it serves POLK (:class:`sosl.POLK`) and
any learner that wants to compress a kernel expansion (e.g. ``OKAUCM(budget_policy='komp')``).

Symbols
-------
========  ===============================================  ======================
symbol    paper (Koppel et al.)                             here
========  ===============================================  ======================
K         K_{D,D}, Gram matrix of the dictionary             ``K``
alpha     w~, weights of the function to compress f~         ``alpha``
b         K alpha, inner products <k(d_i, .), f~>_H          -
I         index set of the dictionary kept so far            ``kept``
w         least-squares weights on I, K_II^{-1} b_I          ``new_alpha``
G         K_II^{-1}                                          -
gamma_j   error of f~ when d_j is removed and w re-fitted    -
epsilon   epsilon_t, the approximation budget                ``epsilon``
========  ===============================================  ======================

How the costs are computed (O(M^2) per removal, O(M^3) once)
------------------------------------------------------------
With I the current index set, w = G b_I the current fit and e^2 = ||f~ - w.k_I||^2 its
squared error, removing j in I and re-fitting gives the squared error

    gamma_j^2 = e^2 + w_j^2 / G_jj,

because f~ - P_I f~ is orthogonal to span(I) and the extra error is the component of
w_j k(d_j, .) orthogonal to the other elements (1/G_jj is the squared distance of
k(d_j, .) to their span). After removing j the inverse and the fit are downdated by

    G <- G_{-j,-j} - G_{-j,j} G_{j,-j} / G_jj,     w <- w_{-j} - G_{-j,j} w_j / G_jj.

Departure from the paper (numerical rank)
-----------------------------------------
A Gram matrix can be singular or numerically singular (repeated points; many points
under a wide Gaussian). A pivoted Cholesky factorization (LAPACK ``dpstrf``) first finds
a maximal subset whose squared distances to the span of the previously chosen ones
exceed ``rtol * max_i K_ii``; the remaining elements lie (numerically) in the span of that
subset and are removed first, as one group, if the error of the projection onto the
subset is within ``epsilon`` (it is at the level of rounding). That error is computed as
the quadratic form (alpha - beta)' K (alpha - beta), not as ||f||^2 - <f, f_new>, which
cancels to 0 when the diagonal of K spans more than ~16 orders of magnitude (an element
of norm 1 beside one of norm 1e8 is "in the span" at rtol = 1e-10 but carries error 1).
When the elements are truly dependent this is what the greedy search would do in exact
arithmetic (each of these removals costs ~0). If even that
group cannot be removed within ``epsilon`` (``epsilon`` below the numerical resolution,
e.g. ``epsilon = 0``), the dictionary is returned unchanged. The returned weights are
re-solved on the kept set with a fresh Cholesky factorization (not the downdated ones).
"""

from ._komp_np import (  # noqa: F401  (the reference's names; the code is shared)
    as_gram,
    inverse_pd,
    komp_error,
    komp_prune_bruteforce,
    refit,
    removal_costs,
    single_thread_blas,
)
from ._komp_np import komp_core_numpy as komp_core_ref

__all__ = ["komp_core_ref", "komp_error", "komp_prune_bruteforce", "removal_costs", "refit",
           "inverse_pd", "single_thread_blas", "as_gram"]
