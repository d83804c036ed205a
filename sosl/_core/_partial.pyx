# cython: language_level=3
"""Typed pass of PartialOAUCM: one-pass partial-AUC learning on the class moments.

The state is OAUC-M's, in the linear kernel's layout (``_linear.pyx``): weights ``w``,
class means ``xbar`` (row 0 negative), scaled scatters ``C`` (upper triangles, row-major)
with ``Sigma_k = scale[k] C[k] / W[k]``, the (forgetting-) weights ``W`` and counts ``N``;
a model fitted here reads and merges as an OAUC-M one. The loss is ``_losses.pxd``'s
``cvar_grad`` (psi_beta), the round prologue ``_moments.pxd``'s. The NumPy reference, one
line per equation, is :mod:`sosl._core._partial_ref` (symbols and conventions there); the
two agree to ~1e-12 on the same sample order.

Why a pass of its own: the linear kernel's loss is a function of (mu, s2) and a code only,
called through a pointer by its inlined loops; psi_beta takes a level per class and the
round a selection within the row's own class (a second symmetric product, with the own
class's matrix), which that pass has no place for. This one is the plain form: BLAS
``dsymv`` for each product, one rank-one update per row.

Per round t on row x of sign y and weight v (own class k, other class o):

* against the other class: ``a = y (x - xbar_o)``, ``mu = w.a``, ``Sw = Sigma_o w``,
  ``s2 = w.Sw``, ``psi_{frac[o]}(mu, s2)`` and its two derivatives;
* selection in the own class (only when ``frac[k] < 1`` and class k has rows): the row's
  hardness ``u = -y w.(x - xbar_k) / sqrt(w' Sigma_k w)`` (its standardized score, higher for
  a high negative or a low positive) is ranked against the ring ``H[k]`` of the last hardness
  values of its class; the row counts, with weight ``1 / frac[k]``, when fewer than
  ``frac[k] (m + 1)`` of the m kept values are above it (an empirical quantile: the share
  selected is frac[k] whatever the law of the scores), else its partial term is constant;
  ``u`` then enters the ring;
* the loss mixes the partial term with the full-AUC one, weight ``rho`` on psi_M:
  ``(1 - rho) sel psi_{frac[o]} + rho psi_M``;
* the own class's moments take the row (decay ``beta``, weight v), then the step
  ``w <- w - eta_t (lam w + v ((1 - rho) sel (d_mu a + 2 d_s2 Sw) + rho (m_mu a + 2 m_s2 Sw)))``;
* if asked, the t-weighted average of the iterates, ``wbar <- wbar + 2/(t+1) (w - wbar)``
  (``wbar_t = sum_s s w_s / sum_s s``, the average for a ``1/(lam t)`` step); the rounds
  themselves read only ``w``.
"""

cimport numpy as cnp
from libc.math cimport NAN, fabs, sqrt
from scipy.linalg.cython_blas cimport ddot, dsymv

from sosl._core._losses cimport cvar_grad
from sosl._core._moments cimport round_prologue

cnp.import_array()

cdef double RESCALE_BELOW = 1e-150


def cvar_value_grad(double frac, double mu, double s2):
    """(psi_beta, d psi/d mu, d psi/d s2) of ``_losses.pxd``'s ``cvar_grad`` (tests, verify)."""
    cdef double d_mu = 0.0, d_s2 = 0.0
    cdef double value = cvar_grad(frac, mu, s2, &d_mu, &d_s2)
    return value, d_mu, d_s2


cdef inline double sym_quad(double* C, double alpha, const double* w, double* u, double* Sw,
                            int p) noexcept nogil:
    """Sw = C (alpha w) from the upper triangle of C; returns w.Sw (= w' Sigma w)."""
    cdef char uplo = b'L'           # the row-major upper triangle is BLAS's lower one
    cdef int one_i = 1
    cdef double one = 1.0, zero = 0.0
    cdef Py_ssize_t j
    for j in range(p):
        u[j] = alpha * w[j]
    dsymv(&uplo, &p, &one, C, &p, u, &one_i, &zero, Sw, &one_i)
    return ddot(&p, <double*> w, &one_i, Sw, &one_i)


def partial_pass(const double[:, ::1] X, const double[::1] s, const Py_ssize_t[::1] order,
                 double[::1] w, double[:, ::1] xbar, double[:, :, ::1] C, double[::1] scale,
                 double[::1] W, long long[::1] N, long long t0, double lam, double eta,
                 int schedule, double beta, const double[::1] frac, double rho,
                 double[:, ::1] H, long long[::1] Hn, long long[::1] Hf,
                 double[::1] work, double[::1] stats=None, const double[::1] sw=None,
                 double[::1] w_avg=None):
    """Rounds of PartialOAUCM over ``X[order]``; ``w, xbar, C, scale, W, N`` in place.

    ``order=None`` visits every row in order. ``frac[k]`` is the share of class k kept
    (``frac[0]`` = max_fpr, ``frac[1]`` = 1 - min_tpr or 1), ``rho`` in [0, 1] the weight of
    the full-AUC loss psi_M; ``H`` (2, m) are the selection rings of the classes' hardness
    values, ``Hn`` and ``Hf`` (2,) their next slots and filled counts (in place); ``work``
    holds at least ``4 p`` values. ``stats`` (length 2), if given: ``stats[0]`` is raised to
    the largest ``|x|`` visited and a row with a NaN or an infinity stops the pass after its
    round with ``stats[1]`` set to its position. ``sw``: the rows' importance weights.
    ``w_avg`` (p,), if given: the t-weighted average of the iterates, updated in place after
    each round's step (round t: ``w_avg += 2/(t+1) (w - w_avg)``).
    Returns the round counter after the pass.
    """
    cdef bint every = order is None
    cdef Py_ssize_t r, i, j, l, n = X.shape[0] if every else order.shape[0]
    cdef Py_ssize_t m = H.shape[1], above
    cdef int p = <int> w.shape[0]
    cdef int own, opp
    cdef long long t = t0
    cdef double y, v, eta_t, mu, s2, so2, d_mu, d_s2, sel, dev, W_new, c, f, R, R_max = 0.0
    cdef double g_a, g_c, m_mu, m_s2, hard
    cdef bint seen, track = stats is not None, weighted = sw is not None
    cdef bint averaging = w_avg is not None
    cdef const double* x
    cdef double* a
    cdef double* Sw
    cdef double* u
    cdef double* d
    cdef double* Ck
    cdef double* xk
    if X.shape[1] != p or xbar.shape[0] != 2 or xbar.shape[1] != p or C.shape[0] != 2 \
            or C.shape[1] != p or C.shape[2] != p or scale.shape[0] != 2 \
            or W.shape[0] != 2 or N.shape[0] != 2 or frac.shape[0] != 2 \
            or H.shape[0] != 2 or m < 1 or Hn.shape[0] != 2 or Hf.shape[0] != 2:
        raise ValueError("partial_pass: inconsistent shapes")
    for j in range(2):
        if not (0 <= Hn[j] < m and 0 <= Hf[j] <= m):
            raise ValueError("partial_pass: a selection ring's next slot or count is out of "
                             "range")
    if not 0.0 <= rho <= 1.0:
        raise ValueError("partial_pass: rho must be in [0, 1]")
    if every and s.shape[0] < n:
        raise ValueError("partial_pass: s must hold one sign per row of X")
    if work.shape[0] < 4 * p:
        raise ValueError("partial_pass: work must hold at least 4 p values")
    if weighted and sw.shape[0] != X.shape[0]:
        raise ValueError("partial_pass: sw must hold one weight per row of X")
    if averaging and w_avg.shape[0] != p:
        raise ValueError("partial_pass: w_avg must hold one value per feature")
    if track and stats.shape[0] != 2:
        raise ValueError("partial_pass: stats must hold [max |x|, position of a bad row]")
    if p == 0:
        return t0 + n
    if track:
        R_max = stats[0]
    a = &work[0]
    Sw = &work[p]
    u = &work[2 * p]
    d = &work[3 * p]
    with nogil:
        for r in range(n):
            i = r if every else order[r]
            x = &X[i, 0]
            y = s[i]
            v = sw[i] if weighted else 1.0
            t += 1
            eta_t = round_prologue(y, t, schedule, eta, lam, &own, &opp)
            seen = N[opp] > 0
            g_a = 0.0
            g_c = 0.0
            if seen:
                mu = 0.0
                for j in range(p):
                    a[j] = y * (x[j] - xbar[opp, j])
                    mu += w[j] * a[j]
                s2 = sym_quad(&C[opp, 0, 0], scale[opp] / W[opp], &w[0], u, Sw, p)
                cvar_grad(frac[opp], mu, s2, &d_mu, &d_s2)
                sel = 1.0
                if frac[own] < 1.0 and N[own] > 0:
                    so2 = sym_quad(&C[own, 0, 0], scale[own] / W[own], &w[0], u, d, p)
                    so2 = sqrt(so2 if so2 > 0.0 else 0.0)
                    sel = 1.0 / frac[own]
                    if so2 > 0.0:
                        # the row's hardness in its class, ranked against the class's ring
                        dev = 0.0
                        for j in range(p):
                            dev += w[j] * (x[j] - xbar[own, j])
                        hard = -y * dev / so2
                        above = 0
                        for j in range(Hf[own]):
                            above += H[own, j] > hard
                        if not above < frac[own] * <double> (Hf[own] + 1):
                            sel = 0.0
                        H[own, Hn[own]] = hard
                        Hn[own] = (Hn[own] + 1) % m
                        if Hf[own] < m:
                            Hf[own] += 1
                g_a = (1.0 - rho) * sel * d_mu
                g_c = (1.0 - rho) * sel * 2.0 * d_s2
                if rho > 0.0:
                    # the full-AUC term: psi_M of the same (mu, s2)
                    cvar_grad(1.0, mu, s2, &m_mu, &m_s2)
                    g_a = g_a + rho * m_mu
                    g_c = g_c + rho * 2.0 * m_s2
                g_a = v * g_a
                g_c = v * g_c
            # own class: decayed weight, mean and scaled scatter (the linear kernel's update)
            W_new = beta * W[own] + v
            c = v * beta * W[own] / W_new
            Ck = &C[own, 0, 0]
            if c > 0.0:
                scale[own] *= beta
                if scale[own] < RESCALE_BELOW:
                    f = scale[own]
                    for j in range(p * p):
                        Ck[j] *= f
                    scale[own] = 1.0
            xk = &xbar[own, 0]
            R = 0.0
            for j in range(p):
                d[j] = x[j] - xk[j]
                xk[j] += (v / W_new) * d[j]
                if x[j] - x[j] != 0.0:          # NaN or an infinity: report NaN
                    R = NAN
                elif fabs(x[j]) > R:
                    R = fabs(x[j])
            if c > 0.0:
                f = c / scale[own]
                for j in range(p):
                    for l in range(j, p):
                        Ck[j * p + l] += f * d[j] * d[l]
            W[own] = W_new
            N[own] += 1
            # eq. (12) with the partial loss: w <- w - eta_t (lam w + g_a a + g_c Sigma w)
            if seen:
                for j in range(p):
                    w[j] -= eta_t * (lam * w[j] + g_a * a[j] + g_c * Sw[j])
            else:
                for j in range(p):
                    w[j] -= eta_t * lam * w[j]
            if averaging:
                # the t-weighted average of the iterates: sum_s s w_s / sum_s s
                f = 2.0 / <double> (t + 1)
                for j in range(p):
                    w_avg[j] += f * (w[j] - w_avg[j])
            if R > R_max:
                R_max = R
            elif R != R:
                if track:
                    stats[1] = <double> r
                    break
    if track:
        stats[0] = R_max
    return t
