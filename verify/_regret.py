"""Regret of OGD on the per-round losses of Algorithm 1: comparator, learner, curves.

The library behind the Theorem 5 and Theorem 6 checks and ``plots/regret.py``.

Symbols
-------
=======  ==================================================  ==============
symbol   paper                                               public name
=======  ==================================================  ==============
w        w_t, the iterate before round t                     ``coef_[0]``
s        y_t in {-1, +1}                                     -
lam      lambda                                              ``lam``
eta      eta_t: 1/(lam t) (Theorem 6) or constant            ``eta``
L_t      (lam/2)||w||^2 + c psi(mu_t(w), s2_t(w))            -
F_T      sum_{t<=T} L_t(w), the comparator's objective       -
C        gradient bound of psi (Lemma 4: 3, sharpened 2)     -
=======  ==================================================  ==============

The per-round loss is (lam/2)||w||^2 alone while the opposite class is empty (the
library's convention). The comparator and the losses use the library's psi
(``sosl._core._losses_ref``); the learner is the public estimator (``OAUCM``/``OAUCS``,
one ``partial_fit`` row at a time) for the 1/(lam t) and constant steps.

Comparator
----------
The moments seen by round t do not depend on the learner, so F_T(w) = sum_{t<=T} L_t(w)
is a fixed, (T lam)-strongly convex function. For a given w, every mu_t and sigma_t^2
follow in O(T p) from running sums of z_i = w.x_i and z_i^2 per class (X is centered
first, which leaves every x_t - xbar_t and Sigma_t unchanged and avoids cancellation),
and the gradient from reverse cumulative sums of the per-round coefficients; no
covariance matrix is formed. Rounds whose opposite class is one point (Sigma_t = 0) make
F_T a hinge, not smooth, so L-BFGS minimizes the smoothed F^delta_T
(psi_M(mu, s2 + delta^2), delta = 1e-6; by Lemma 3 F_T <= F^delta_T <= F_T + T delta/2),
warm-started along the T grid. Strong convexity gives
min F_T >= F^delta_T(w_hat) - ||grad F^delta_T(w_hat)||^2/(2 T lam) - T delta/2; the
regret is measured against that lower bound, so the reported regret is an UPPER estimate
of the true one.
"""

import numpy as np

from sosl._core import _losses_ref as LR
from sosl._core._codes import Loss

__all__ = ["C_PAPER", "C_SHARP", "bound_const", "Comparator", "learner_losses",
           "learner_iterates", "psi_gradients", "regret_curve", "growth_fits",
           "adversarial_stream", "labels", "derivs_vs_library"]

C_PAPER, C_SHARP = 3.0, 2.0
TOL = 1e-8
DELTA = 1e-6


def bound_const(C):
    """Theorem 6's constant: Regret_T <= bound_const(C) (1 + ln T)/lam, i.e. 2 C^2.

    Derived (and checked symbolically against this function) in
    :mod:`verify.theorem6_constant`.
    """
    return 2.0 * C * C


# --------------------------------------------------------------------------- losses
def _psi_and_derivs(mu, s2, loss):
    """psi, d psi/d mu, d psi/d s2 (vectorized); loss 'm' (psi_M, eq. 8) or 's' (psi_S, eq. 3).

    The value is the library's (``sosl._core._losses_ref.psi_m`` / ``psi_s``); the partials
    are a vectorized twin of ``_losses_ref.loss_grad`` (the comparator evaluates them at
    every round of every L-BFGS step), compared with it by :func:`derivs_vs_library`.
    """
    mu = np.asarray(mu, float)
    s2 = np.asarray(s2, float)
    b = 1.0 - mu
    if loss == "s":
        return LR.psi_s(mu, s2), -2.0 * b, np.ones_like(s2)
    A = np.sqrt(b * b + np.maximum(s2, 0.0))
    safe = np.where(A > 0, A, 1.0)
    dmu = np.where(A > 0, -0.5 * (1.0 + b / safe), -0.5)
    ds2 = np.where(A > 0, 0.25 / safe, 0.0)          # A = 0 only where Sigma_t w = 0
    return LR.psi_m(mu, s2), dmu, ds2


def derivs_vs_library(rng, n=500):
    """Max |twin - loss_grad| over random (mu, s2), both losses, scaled by max(1, |value|)."""
    mu = np.concatenate([rng.uniform(-4, 6, n), [1.0]])
    s2 = np.concatenate([np.exp(rng.uniform(-14, 2, n)), [0.0]])
    err = 0.0
    for loss, code in (("m", int(Loss.LOSS_M)), ("s", int(Loss.LOSS_S))):
        tw = _psi_and_derivs(mu, s2, loss)
        for i in range(mu.size):
            lib = LR.loss_grad(code, float(mu[i]), float(s2[i]))
            err = max(err, max(abs(float(tw[k][i]) - lib[k]) / max(1.0, abs(lib[k]))
                               for k in range(3)))
    return err


class Comparator:
    """F_T(w) = sum_{t<=T} [(lam/2)||w||^2 + c psi(mu_t(w), s2_t(w))] in O(T p) per evaluation.

    Parameters
    ----------
    X : (n, p) stream, s : (n,) labels in {-1, +1}, lam : float, loss : 'm' or 's',
    c : float, weight of psi (1 for Theorem 6, 1/2 for Theorem 5's normalisation).
    """

    def __init__(self, X, s, lam, loss="m", c=1.0, delta=0.0):
        self.delta2 = float(delta) ** 2 if loss == "m" else 0.0
        self.X = np.ascontiguousarray(X - X.mean(axis=0))       # shift-invariant problem
        self.s = np.asarray(s, float)
        self.own = (self.s > 0).astype(int)                    # 1 = positive
        self.lam, self.loss, self.c = float(lam), loss, float(c)

    def _moments(self, z, T):
        own = self.own[:T]
        cnt = np.zeros((2, T))
        s1 = np.zeros((2, T))
        s2 = np.zeros((2, T))
        for k in (0, 1):
            m = own == k
            cnt[k] = np.concatenate([[0], np.cumsum(m)[:-1]])          # before t
            s1[k] = np.concatenate([[0.0], np.cumsum(np.where(m, z, 0.0))[:-1]])
            s2[k] = np.concatenate([[0.0], np.cumsum(np.where(m, z * z, 0.0))[:-1]])
        opp = 1 - own
        idx = np.arange(T)
        N = cnt[opp, idx]
        has = N > 0
        Nn = np.where(has, N, 1.0)
        m1 = s1[opp, idx] / Nn
        var = np.maximum(s2[opp, idx] / Nn - m1 * m1, 0.0)
        return N, has, Nn, m1, var

    def value_grad(self, w, T):
        X, s = self.X[:T], self.s[:T]
        z = X @ w
        N, has, Nn, m1, var = self._moments(z, T)
        mu = s * (z - m1)
        psi, dmu, ds2 = _psi_and_derivs(mu, var + self.delta2, self.loss)
        psi, dmu, ds2 = [np.where(has, q, 0.0) * self.c for q in (psi, dmu, ds2)]
        val = 0.5 * self.lam * T * (w @ w) + psi.sum()
        # grad = sum_t dmu_t s_t (x_t - xbar_t) + ds2_t 2 (Sigma_t w)
        #      = X^T (dmu s) - sum_i x_i R1_i + sum_i z_i x_i R2_i - sum_i x_i R3_i
        v1 = dmu * s / Nn
        v2 = 2.0 * ds2 / Nn
        v3 = 2.0 * ds2 * m1 / Nn
        own = self.own[:T]
        coef = dmu * s
        for k in (0, 1):
            m_i = own == k
            mask_t = own != k                           # rounds that see class k as opposite
            for v, sign, mult in ((v1, -1.0, None), (v2, 1.0, z), (v3, -1.0, None)):
                vt = np.where(mask_t, v, 0.0)
                rc = np.concatenate([np.cumsum(vt[::-1])[::-1][1:], [0.0]])   # sum over t > i
                term = rc if mult is None else rc * mult
                coef = coef + sign * np.where(m_i, term, 0.0)
        grad = self.lam * T * w + X.T @ coef
        return val, grad

    def losses_at(self, w, T):
        """Per-round losses L_t(w), t < T (for tests)."""
        X, s = self.X[:T], self.s[:T]
        z = X @ w
        N, has, Nn, m1, var = self._moments(z, T)
        psi, _, _ = _psi_and_derivs(s * (z - m1), var, self.loss)
        return 0.5 * self.lam * (w @ w) + self.c * np.where(has, psi, 0.0)

    def solve(self, T, w0=None, tol=TOL):
        """argmin F_T (smoothed by delta): returns (w, F_T(w), ||grad F_T(w)||).

        Continuation: solved first with a larger smoothing (delta in 1e-2, 1e-4, ...) and
        warm-started down to the target ``delta``.
        """
        from scipy.optimize import minimize
        p = self.X.shape[1]
        w = np.zeros(p) if w0 is None else np.array(w0, float)
        target = self.delta2
        steps = [d * d for d in (1e-2, 1e-4) if d * d > target] + [target]
        if w0 is not None:
            steps = [target]
        for d2 in steps:
            self.delta2 = d2
            f = lambda u: tuple(q / T for q in self.value_grad(u, T))    # noqa: E731
            for _ in range(3):
                res = minimize(f, w, jac=True, method="L-BFGS-B",
                               options={"maxiter": 3000, "gtol": tol, "ftol": 1e-300,
                                        "maxcor": 30})
                w = res.x
                val, g = self.value_grad(w, T)
                if np.linalg.norm(g) <= tol * T:
                    break
        self.delta2 = target
        return w, val, float(np.linalg.norm(g))


# --------------------------------------------------------------------------- learner
def _opp_moments_loss(X, s, lam, W, loss, c):
    """L_t(w_t) for the iterates ``W[t]`` (w_t before round t), moments tracked here.

    The moments of the opposite class seen before round t do not depend on the learner;
    they are kept by a Welford update of their own, so the losses do not rely on the
    learner's state.
    """
    T, p = X.shape
    xbar = np.zeros((2, p))
    Sig = np.zeros((2, p, p))
    N = np.zeros(2, dtype=np.int64)
    out = np.empty(T)
    for t in range(T):
        x, y, w = X[t], s[t], W[t]
        own, opp = (1, 0) if y > 0 else (0, 1)
        L = 0.5 * lam * (w @ w)
        if N[opp] > 0:
            mu = y * (w @ (x - xbar[opp]))
            s2 = max(float(w @ Sig[opp] @ w), 0.0)
            L += c * float(LR.psi_m(mu, s2) if loss == "m" else LR.psi_s(mu, s2))
        out[t] = L
        N[own] += 1
        d_old = x - xbar[own]
        xbar[own] += d_old / N[own]
        Sig[own] += (np.outer(d_old, x - xbar[own]) - Sig[own]) / N[own]
    return out


def _iterates_estimator(X, s, lam, eta, loss, c):
    """w_1..w_T and w_{T+1} from the public estimator, one ``partial_fit`` row at a time."""
    from sosl import OAUCM, OAUCS
    T, p = X.shape
    Est = OAUCM if loss == "m" else OAUCS
    # c psi with step eta is the estimator's update with lam' = lam/c, eta' = c eta
    # (1/(lam' t) = c/(lam t) for the decreasing step)
    model = Est(lam=lam / c, eta=None if eta is None else c * float(eta))
    W = np.zeros((T + 1, p))
    classes = np.array([-1.0, 1.0])
    for t in range(T):
        model.partial_fit(X[t:t + 1], s[t:t + 1], classes=classes)
        W[t + 1] = model.coef_[0]
    return W


def _iterates_numpy(X, s, lam, eta_fn, loss, c):
    """w_1..w_{T+1} of OGD, eq. (12), with step ``eta_fn(t)``, t = 1, 2, ... (own loop).

    Used for step schedules the estimators do not offer (the negative controls); the
    gradient is the library's ``grad_w``.
    """
    T, p = X.shape
    code = int(Loss.LOSS_M) if loss == "m" else int(Loss.LOSS_S)
    xbar = np.zeros((2, p))
    Sig = np.zeros((2, p, p))
    N = np.zeros(2, dtype=np.int64)
    W = np.zeros((T + 1, p))
    w = np.zeros(p)
    for t in range(T):
        x, y = X[t], s[t]
        own, opp = (1, 0) if y > 0 else (0, 1)
        g = lam * w
        if N[opp] > 0:
            g = g + c * LR.grad_w(code, w, y * (x - xbar[opp]), Sig[opp])
        N[own] += 1
        d_old = x - xbar[own]
        xbar[own] += d_old / N[own]
        Sig[own] += (np.outer(d_old, x - xbar[own]) - Sig[own]) / N[own]
        w = w - float(eta_fn(t + 1)) * g
        W[t + 1] = w
    return W


def learner_iterates(X, s, lam, eta=None, loss="m", c=1.0):
    """The iterates w_1, ..., w_{T+1} (rows) of the learner of :func:`learner_losses`."""
    X = np.ascontiguousarray(X, float)
    s = np.ascontiguousarray(s, float)
    if callable(eta):
        return _iterates_numpy(X, s, lam, eta, loss, c)
    return _iterates_estimator(X, s, lam, eta, loss, c)


def psi_gradients(X, s, W, loss="m"):
    """g_t = grad psi_t(w_t) (the library's ``grad_w``; 0 while the other class is empty).

    ``W`` holds w_1..w_T (or more) as rows; returns a (T, p) array.
    """
    T, p = X.shape
    code = int(Loss.LOSS_M) if loss == "m" else int(Loss.LOSS_S)
    xbar = np.zeros((2, p))
    Sig = np.zeros((2, p, p))
    N = np.zeros(2, dtype=np.int64)
    G = np.zeros((T, p))
    for t in range(T):
        x, y = X[t], s[t]
        own, opp = (1, 0) if y > 0 else (0, 1)
        if N[opp] > 0:
            G[t] = LR.grad_w(code, W[t], y * (x - xbar[opp]), Sig[opp])
        N[own] += 1
        d_old = x - xbar[own]
        xbar[own] += d_old / N[own]
        Sig[own] += (np.outer(d_old, x - xbar[own]) - Sig[own]) / N[own]
    return G


def learner_losses(X, s, lam, eta=None, loss="m", c=1.0):
    """Per-round losses L_t(w_t) of OGD on L_t = (lam/2)||w||^2 + c psi, and the final w.

    Parameters
    ----------
    X : ndarray (T, p); s : ndarray (T,) of +-1.0
    lam : float
    eta : None, float or callable
        None: eta_t = 1/(lam t), run by ``sosl.OAUCM`` / ``sosl.OAUCS`` (eta=None);
        float: a constant step, run by the same estimators; callable ``eta(t)``: any
        other schedule, run by :func:`_iterates_numpy` (verify's own loop).
    loss : 'm' or 's'; c : float, weight of psi.

    Returns
    -------
    (L, w) : L[t] = L_t(w_t) with w_t the iterate BEFORE round t; w the final iterate.
    """
    X = np.ascontiguousarray(X, float)
    s = np.ascontiguousarray(s, float)
    W = learner_iterates(X, s, lam, eta, loss, c)
    return _opp_moments_loss(X, s, lam, W[:-1], loss, c), W[-1]


def labels(y):
    """Labels in {-1, +1}: the larger of the two values is the positive class."""
    y = np.asarray(y)
    u = np.unique(y)
    if u.size != 2:
        raise ValueError(f"need two classes, got labels {u}")
    return np.where(y == u[1], 1.0, -1.0)


def regret_curve(X, y, lam, T_grid=None, *, eta=None, tol=TOL, loss="m", c=1.0,
                 delta=DELTA):
    """Regret of OGD on the stream (X, y) at every T of a grid, with the comparator solved.

    Parameters
    ----------
    X : ndarray (n, p)
        The stream in its order; every ||x_t|| <= 1 is required (use
        ``sosl.datasets.to_unit_ball``), else ValueError.
    y : ndarray (n,)
        Two labels; the larger one is the positive class.
    lam : float
        lambda > 0.
    T_grid : sequence of int, optional
        Horizons (default: 25 log-spaced values from 10 to n).
    eta : None, float or callable
        None: eta_t = 1/(lam t) (OAUC-M, Theorem 6); float: constant step; callable:
        ``eta(t)`` for t = 1, 2, ... (e.g. ``lambda t: 1/np.sqrt(t)``).
    tol : float
        The comparator is solved until ||grad F^delta_T|| <= tol * T.
    delta : float
        psi_M terms are smoothed as psi_M(mu, s2 + delta^2), which lies between psi_M and
        psi_M + delta/2 (Lemma 3), so min F_T >= min F^delta_T - c T delta/2.
    loss : 'm' or 's'; c : float
        The loss is (lam/2)||w||^2 + c psi (psi_M or psi_S); Theorem 6 uses 'm', 1.

    Returns
    -------
    dict with arrays over the grid:
        ``T``; ``regret`` (upper estimate of the true regret: learner loss - F^delta_T(w_hat)
        + err); ``regret_raw`` (learner loss - F_T(w_hat), a lower estimate); ``err`` =
        ||grad F^delta_T(w_hat)||^2/(2 T lam) + c T delta/2 (comparator error bound);
        ``err_smooth`` = c T delta/2 (its smoothing part);
        ``grad_norm``; ``learner_loss``; ``comparator_loss``; ``w_norm`` (||w_hat||);
        ``bound18`` = 18(1 + ln T)/lam; ``bound8`` = 8(1 + ln T)/lam (sharpened constant,
        confirmed by the Lemma 4 check); and scalars ``lam``, ``n``, ``p``.
    """
    X = np.ascontiguousarray(X, float)
    norms = np.sqrt((X * X).sum(axis=1))
    if norms.max() > 1.0 + 1e-12:
        raise ValueError(f"||x_t|| <= 1 is required, max norm is {norms.max():.6g}")
    if not lam > 0:
        raise ValueError(f"lam must be > 0, got {lam}")
    s = labels(y)
    n = X.shape[0]
    if T_grid is None:
        T_grid = np.unique(np.round(np.geomspace(10, n, 25)).astype(int))
    T_grid = np.asarray(sorted(set(int(t) for t in T_grid)), dtype=int)
    if T_grid[0] < 1 or T_grid[-1] > n:
        raise ValueError(f"T_grid must lie in [1, {n}]")
    Tmax = int(T_grid[-1])
    L, _ = learner_losses(X[:Tmax], s[:Tmax], lam, eta, loss, c)
    cum = np.cumsum(L)
    comp = Comparator(X[:Tmax], s[:Tmax], lam, loss, c, delta)
    exact = Comparator(X[:Tmax], s[:Tmax], lam, loss, c, 0.0)
    w = None
    out = {k: [] for k in ("regret", "regret_raw", "err", "err_smooth", "grad_norm",
                           "learner_loss", "comparator_loss", "w_norm")}
    for T in T_grid:
        w, Fd, g = comp.solve(int(T), w, tol)
        F = exact.value_grad(w, int(T))[0]
        smooth = c * T * delta / 2.0 if loss == "m" else 0.0
        err = g * g / (2.0 * T * lam) + smooth
        out["regret_raw"].append(cum[T - 1] - F)
        out["regret"].append(cum[T - 1] - Fd + err)
        out["err"].append(err)
        out["err_smooth"].append(smooth)
        out["grad_norm"].append(g)
        out["learner_loss"].append(cum[T - 1])
        out["comparator_loss"].append(F)
        out["w_norm"].append(float(np.linalg.norm(w)))
    res = {k: np.array(v) for k, v in out.items()}
    Tf = T_grid.astype(float)
    res.update(T=T_grid, bound18=bound_const(C_PAPER) * (1 + np.log(Tf)) / lam,
               bound8=bound_const(C_SHARP) * (1 + np.log(Tf)) / lam, lam=lam, n=n, p=X.shape[1])
    return res


# --------------------------------------------------------------------------- growth
def growth_fits(T, R, T_min=100):
    """Growth of R(T) over T >= T_min.

    Returns (alpha, r2_log, r2_sqrt, b, c): alpha the least-squares slope of ln R against
    ln T (regrets <= 0 are left out; 0 if fewer than two remain), r2_log / r2_sqrt the R^2
    of R ~ a + b ln T and of R ~ c sqrt(T), b and c their slopes.
    """
    T = np.asarray(T, float)
    R = np.asarray(R, float)
    m = T >= T_min
    T, R = T[m], R[m]
    sst = float(np.sum((R - R.mean()) ** 2)) or 1e-300
    A = np.column_stack([np.ones_like(T), np.log(T)])
    coef_log, *_ = np.linalg.lstsq(A, R, rcond=None)
    r2_log = 1.0 - float(np.sum((R - A @ coef_log) ** 2)) / sst
    q = np.sqrt(T)
    cq = float(q @ R / (q @ q))
    r2_sqrt = 1.0 - float(np.sum((R - cq * q) ** 2)) / sst
    pos = R > 0
    alpha = float(np.polyfit(np.log(T[pos]), np.log(R[pos]), 1)[0]) if pos.sum() >= 2 else 0.0
    return alpha, r2_log, r2_sqrt, float(coef_log[1]), cq


def adversarial_stream(n, rng):
    """One negative at the origin, then positives uniform on the unit circle (see docstring)."""
    ang = rng.uniform(0, 2 * np.pi, n)
    X = np.column_stack([np.cos(ang), np.sin(ang)])
    X[0] = 0.0
    y = np.ones(n, dtype=int)
    y[0] = 0
    return X, y


