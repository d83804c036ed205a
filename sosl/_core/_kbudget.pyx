# cython: language_level=3
"""Typed pass of OKAUC-M with ``budget_policy="komp"`` (comparison buffers + KOMP).

Same rounds, same order of operations and the same compressions as the NumPy reference
:func:`sosl._core._kbudget_ref.komp_policy_pass` (see it for the symbols and the round).
The rounds run in a ``nogil`` loop on pool arrays allocated with room for the rounds of a
chunk (the pool grows by one vector per round); after each round t = 0 mod ``period`` the
loop returns and the compression runs with the typed KOMP core
(:func:`sosl._core._kbudget_ref.komp_step`, O(M^3) for M weighted pool vectors, which is
NumPy indexing around :func:`sosl._core._komp.komp_core`). Cost per round O(M p + M |S_t|).
"""

import numpy as np

from sosl._core._codes cimport LOSS_S
from sosl._core._kfun cimport kernel_eval, kernel_rows
from sosl._core._losses cimport loss_grad
from sosl._core._moments cimport round_prologue

from sosl._core._kbudget_ref import komp_step

#: rounds per allocation of the pool arrays (each chunk copies the pool once)
CHUNK = 256


cdef Py_ssize_t play(const double[:, ::1] X, const double[::1] s, const Py_ssize_t[::1] order,
                     Py_ssize_t r, Py_ssize_t r_end, double[:, ::1] Z, double[:, ::1] G,
                     double[::1] beta, double[::1] f, long long[::1] buf, long long[::1] lab,
                     long long[::1] age, Py_ssize_t* n_io, const long long[::1] cap,
                     long long* t_io, double* acc_io, double lam, int schedule, double eta,
                     int loss, int kind, double gamma, double degree, double coef0,
                     double epsilon, long long period, double* kx, double* d) noexcept nogil:
    """Rounds ``order[r:r_end]``, stopping after a round t = 0 mod period; returns the next r."""
    cdef Py_ssize_t n = n_io[0]
    cdef Py_ssize_t p = X.shape[1]
    cdef Py_ssize_t i, q, l, oldest
    cdef long long t = t_io[0]
    cdef long long n_own
    cdef int own, opp
    cdef const double* x
    cdef double y, eta_t, kxx, fx, decay, mu, s2, b, d_mu, d_s2, a_new, acc, N
    cdef double scale = 0.5 if loss == LOSS_S else 1.0
    while r < r_end:
        i = order[r]
        r += 1
        t += 1
        x = &X[i, 0]
        y = s[i]
        eta_t = round_prologue(y, t, schedule, eta, lam, &own, &opp)
        fx = 0.0
        if n > 0:
            kernel_rows(&Z[0, 0], n, x, p, kind, gamma, degree, coef0, kx)
        for q in range(n):
            fx += beta[q] * kx[q]
        kxx = kernel_eval(x, x, p, kind, gamma, degree, coef0)
        decay = 1.0 - lam * eta_t
        a_new = 0.0
        N = 0.0
        mu = 0.0
        for q in range(n):
            d[q] = 0.0
            if buf[q] == opp:
                N += 1.0
                mu += f[q]
        if N > 0:
            mu /= N
            s2 = 0.0
            for q in range(n):
                if buf[q] == opp:
                    s2 += (f[q] - mu) * (f[q] - mu)
            s2 /= N
            b = 1.0 - y * (fx - mu)
            loss_grad(loss, 1.0 - b, s2, &d_mu, &d_s2)
            d_mu = scale * d_mu
            d_s2 = scale * d_s2
            a_new = -eta_t * y * d_mu
            for q in range(n):
                if buf[q] == opp:
                    d[q] = (eta_t / N) * (y * d_mu - 2.0 * d_s2 * (f[q] - mu))
        # eq. (22) on the pool and at x_t (G symmetric: row l holds G[q, l])
        for l in range(n):
            acc = 0.0
            for q in range(n):
                if buf[q] == opp:
                    acc += d[q] * G[l, q]
            f[l] = decay * f[l] + acc + a_new * kx[l]
        acc = 0.0
        for q in range(n):
            if buf[q] == opp:
                acc += d[q] * kx[q]
        fx = decay * fx + acc + a_new * kxx
        for q in range(n):
            beta[q] = decay * beta[q]
            if buf[q] == opp:
                beta[q] += d[q]
        # x_t joins the pool and its comparison buffer
        for l in range(p):
            Z[n, l] = x[l]
        for l in range(n):
            G[n, l] = kx[l]
            G[l, n] = kx[l]
        G[n, n] = kxx
        beta[n] = a_new
        f[n] = fx
        buf[n] = own
        lab[n] = own
        age[n] = t
        n += 1
        n_own = 0
        oldest = -1
        for q in range(n):
            if buf[q] == own:
                n_own += 1
                if oldest < 0 or age[q] < age[oldest]:
                    oldest = q
        if n_own > cap[own]:
            buf[oldest] = -1
        acc_io[0] += epsilon * eta_t
        if t % period == 0:
            break
    n_io[0] = n
    t_io[0] = t
    return r


def komp_policy_pass(const double[:, ::1] X, const double[::1] s, const Py_ssize_t[::1] order,
                     Z, G, beta, f, buf, lab, age, const long long[::1] cap, long long t0,
                     double acc, double lam, int schedule, double eta, int loss, int kind,
                     double gamma, double degree, double coef0, double epsilon,
                     long long period):
    """Run the pass over ``X[order]``; returns ``(Z, G, beta, f, buf, lab, age, t, acc)``.

    Same parameters as :func:`sosl._core._kbudget_ref.komp_policy_pass`; the pool arrays
    passed in are not modified (new arrays are returned).
    """
    cdef Py_ssize_t m = order.shape[0]
    cdef Py_ssize_t p = X.shape[1]
    cdef Py_ssize_t r = 0
    cdef Py_ssize_t r_end, n, P
    cdef long long t = t0
    cdef double[:, ::1] Zm, Gm
    cdef double[::1] bm, fm, work
    cdef long long[::1] bufm, labm, agem
    cdef double a = acc
    while r < m:
        n = Z.shape[0]
        r_end = min(m, r + CHUNK)
        P = n + (r_end - r)
        Zb = np.zeros((P, p))
        Gb = np.zeros((P, P))
        bb = np.zeros(P)
        fb = np.zeros(P)
        bufb = np.zeros(P, dtype=np.int64)
        labb = np.zeros(P, dtype=np.int64)
        ageb = np.zeros(P, dtype=np.int64)
        Zb[:n] = Z
        Gb[:n, :n] = G
        bb[:n] = beta
        fb[:n] = f
        bufb[:n] = buf
        labb[:n] = lab
        ageb[:n] = age
        Zm, Gm, bm, fm, bufm, labm, agem = Zb, Gb, bb, fb, bufb, labb, ageb
        work = np.zeros(2 * P + 2)
        while r < r_end:
            with nogil:
                r = play(X, s, order, r, r_end, Zm, Gm, bm, fm, bufm, labm, agem, &n, cap, &t,
                         &a, lam, schedule, eta, loss, kind, gamma, degree, coef0, epsilon,
                         period, &work[0], &work[P + 1])
            Z, G, beta, f = Zb[:n], Gb[:n, :n], bb[:n], fb[:n]
            buf, lab, age = bufb[:n], labb[:n], ageb[:n]
            if t % period == 0:
                Z, G, beta, f, buf, lab, age, a = komp_step(
                    np.ascontiguousarray(Z), np.ascontiguousarray(G), beta.copy(), f.copy(),
                    buf.copy(), lab.copy(), age.copy(), a)
                break
        Z, G, beta, f = (np.ascontiguousarray(Z), np.ascontiguousarray(G),
                         np.ascontiguousarray(beta), np.ascontiguousarray(f))
        buf, lab, age = (np.ascontiguousarray(buf), np.ascontiguousarray(lab),
                         np.ascontiguousarray(age))
    return Z, G, beta, f, buf, lab, age, t, a
