"""Forgetting (``OAUCM(forgetting=beta)``): discounted moments and step, computed directly.

Statement
---------
With a forgetting factor beta in (0, 1] each new instance of a class multiplies the
weight of that class's earlier instances by beta. After the instances x_1, ..., x_n of
a class (in stream order) the instance x_i therefore weighs beta^(n - i), and the class
moments the learner compares with are the discounted ones, in closed form:

    W     = sum_i beta^(n - i)                              (the class weight, ``weights_``)
    xbar  = sum_i beta^(n - i) x_i / W                      (``means_``)
    Sigma = sum_i beta^(n - i) (x_i - xbar)(x_i - xbar)' / W  (``covariances_``).

Round t is the step (12) of Algorithm 1 with these moments of the other class before
round t: w_{t+1} = (1 - eta_t lam) w_t - eta_t grad psi(mu_t, sigma_t^2) with
a = y_t (x_t - xbar), grad psi_M from eq. (14), grad psi_S the exact derivative 2 x eq. (13)
(the library's convention), eta_t = 1/(lam t) or a constant. beta = 1 is the paper's
learner: every weight is 1, W = N and the moments are those of eqs. (15)-(18).

This module computes the moments from the closed form above on every prefix (never by
a recursion), in exact arithmetic (sympy ``Rational``; dyadic inputs and beta = 3/4, so
that the float64 copies are exact), and the step with the eq. (14)/(13) gradients of
:mod:`verify.algorithm1_replay` (square roots at 50 digits).

Check (thresholds fixed before running)
---------------------------------------
On the 30-row, p = 3 stream of :mod:`verify.algorithm1_replay`, ``sosl.OAUCM(lam=1/2,
forgetting=3/4)`` and ``sosl.OAUCS(lam=1/64, eta=1/8, forgetting=3/4)`` ``fit`` on every
prefix of 1..30 rows:

* moments (identity): max over prefixes and classes of the error of ``weights_``,
  ``means_`` and ``covariances_`` against the closed form, each scaled by
  max(1, its largest entry), <= 1e-12;
* step (identity): max_t ||coef_ - w_{t+1}||_inf / max(1, ||w_{t+1}||_inf) <= 1e-12;
* the one-row path (identity, OAUC-M): one model fed by ``partial_fit`` one row at a time
  (the typed stepper of ``learn_one``), moments and step after every row, 1e-12;
* beta = 1: ``OAUCM(forgetting=1.0)`` against the same direct computation at beta = 1
  (weights, moments and step; identity, 1e-12); and (derivation) the closed form at
  beta = 1 against the paper's recursions (15)-(18) run on the same prefixes in exact
  arithmetic: the difference must be exactly 0.

Negative controls (must FAIL the identities against the library at beta = 3/4): the
direct computation without forgetting (beta := 1), and with the forgetting applied twice
to the covariance (Sigma's weights beta^(2 (n - i)), the mean's left as they are).
"""

import numpy as np

from . import _records as R
from .algorithm1_replay import _outer, grad_eq13, grad_eq14, stream

NAME = "forgetting"
TITLE = "Forgetting: discounted moments and step vs a direct computation"
ORDER = 72

T_STEPS = 30
TOL = 1e-12
BETA = (3, 4)


def discounted_moments(xs, beta, *, cov_power=1):
    """(W, xbar, Sigma) of the rows ``xs`` (oldest first) with weights beta^(n - i).

    ``cov_power=2`` weighs the covariance by beta^(2 (n - i)) (a negative control:
    forgetting applied twice to Sigma).
    """
    import sympy as sp
    n, p = len(xs), len(xs[0])
    wts = [beta ** (n - 1 - i) for i in range(n)]
    W = sum(wts)
    xbar = [sum(wi * x[j] for wi, x in zip(wts, xs)) / W for j in range(p)]
    cw = [wi ** cov_power for wi in wts]
    Wc = sum(cw)
    Sigma = [[sp.Integer(0)] * p for _ in range(p)]
    for wi, x in zip(cw, xs):
        d = [a - m for a, m in zip(x, xbar)]
        Sigma = [[s + wi * o for s, o in zip(rs, ro)] for rs, ro in zip(Sigma, _outer(d, d))]
    Sigma = [[s / Wc for s in row] for row in Sigma]
    return W, xbar, Sigma


def direct(X, y, lam, eta, loss, beta, *, cov_power=1):
    """Per prefix: w_{t+1} and each class's (W, xbar, Sigma) after round t (None if unseen)."""
    import sympy as sp
    p = len(X[0])
    w = [sp.Integer(0)] * p
    seen = {1: [], -1: []}
    out = []
    for t, (x, yt) in enumerate(zip(X, y), start=1):
        eta_t = eta if eta is not None else 1 / (lam * t)
        other = seen[-yt]
        g = [sp.Integer(0)] * p
        if other:
            _, xbar, Sigma = discounted_moments(other, beta, cov_power=cov_power)
            a = [yt * (xi - m) for xi, m in zip(x, xbar)]
            g = (grad_eq14 if loss == "m" else grad_eq13)(w, a, Sigma)
        w = [(1 - eta_t * lam) * wi - eta_t * gi for wi, gi in zip(w, g)]      # eq. (12)
        seen[yt].append(x)
        moments = {c: (discounted_moments(seen[c], beta, cov_power=cov_power)
                       if seen[c] else None) for c in (-1, 1)}
        out.append((w, moments))
    return out


def paper_recursions(X, y):
    """Per prefix, each class's (N, xbar, Sigma) from eqs. (15)-(18) (no forgetting)."""
    import sympy as sp
    p = len(X[0])
    st = {c: (0, [sp.Integer(0)] * p, [[sp.Integer(0)] * p for _ in range(p)]) for c in (1, -1)}
    out = []
    for x, yt in zip(X, y):
        N, xb0, S0 = st[yt]
        N += 1
        xb1 = [a + (xi - a) / N for a, xi in zip(xb0, x)]                    # (15)/(17)
        o0, o1, ox = _outer(xb0, xb0), _outer(xb1, xb1), _outer(x, x)
        S1 = [[S0[i][j] + o0[i][j] - o1[i][j] + (ox[i][j] - S0[i][j] - o0[i][j]) / N
               for j in range(p)] for i in range(p)]                            # (16)/(18)
        st[yt] = (N, xb1, S1)
        out.append({c: (st[c] if st[c][0] else None) for c in (-1, 1)})
    return out


def library_prefixes(Xf, yf, lam, eta, loss, beta, one_row=False):
    """(coef_[0], weights_, means_, covariances_, counts_) of ``fit`` on every prefix, or, with
    ``one_row``, after each ``partial_fit`` of one row on one model (the one-row path)."""
    from sosl import OAUCM, OAUCS
    Est = OAUCM if loss == "m" else OAUCS
    out = []
    if one_row:
        m = Est(lam=lam, eta=eta, forgetting=beta)
        yy = np.where(yf > 0, 1, 0)
        for k in range(Xf.shape[0]):
            m.partial_fit(Xf[k:k + 1], yy[k:k + 1], classes=[0, 1])
            out.append((m.coef_[0].copy(), m.weights_.copy(), m.means_.copy(),
                        m.covariances_.copy(), m.counts_.copy()))
        return out
    for k in range(1, Xf.shape[0] + 1):
        yk = np.where(yf[:k] > 0, 1, 0)
        m = Est(lam=lam, eta=eta, forgetting=beta)
        if yk.min() == yk.max():
            m.partial_fit(Xf[:k], yk, classes=[0, 1])
        else:
            m.fit(Xf[:k], yk)
        out.append((m.coef_[0].copy(), m.weights_.copy(), m.means_.copy(), m.covariances_.copy(),
                    m.counts_.copy()))
    return out


def _f(v):
    return np.array(v, dtype=float) if not isinstance(v, list) else np.array(
        [[float(e) for e in row] for row in v] if isinstance(v[0], list) else
        [float(e) for e in v])


def _scaled(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.abs(a - b).max() / max(1.0, np.abs(b).max()))


def errors(lib, dct):
    """(moment error, step error) of the library's prefixes against the direct computation."""
    e_mom = e_w = 0.0
    for (coef, W, means, covs, counts), (w, moments) in zip(lib, dct, strict=True):
        e_w = max(e_w, _scaled(coef, _f(w)))
        for k, c in ((0, -1), (1, 1)):
            if moments[c] is None:
                if counts[k] != 0:
                    return np.inf, e_w
                continue
            Wd, xb, S = moments[c]
            e_mom = max(e_mom, _scaled(W[k], float(Wd)), _scaled(means[k], _f(xb)),
                        _scaled(covs[k], _f(S)))
    return e_mom, e_w


VARIANTS = (
    # name, loss, lam, eta
    ("OAUC-M, eta_t = 1/(lam t)", "m", (1, 2), None),
    ("OAUC-S, eta = 1/8", "s", (1, 64), (1, 8)),
)


def run(profile, seed, out_dir):
    import sympy as sp
    X, y, Xf, yf = stream(seed, T=T_STEPS)
    beta = sp.Rational(*BETA)
    bf = float(beta)
    sizes = f"T={T_STEPS} p=3, beta={BETA[0]}/{BETA[1]}, sympy Rational, roots at 50 digits"
    recs = []
    for name, loss, lam_q, eta_q in VARIANTS:
        lam = sp.Rational(*lam_q)
        eta = None if eta_q is None else sp.Rational(*eta_q)
        lam_f, eta_f = float(lam), None if eta is None else float(eta)
        lib = library_prefixes(Xf, yf, lam_f, eta_f, loss, bf)
        dct = direct(X, y, lam, eta, loss, beta)
        e_mom, e_w = errors(lib, dct)
        recs.append(R.emit(R.identity(
            f"Forgetting: discounted moments [{name.split(',')[0]}]",
            f"weights_, means_, covariances_ == closed form with weights beta^(n-i) "
            f"(scaled, <= {TOL:g})", e_mom, 0.0, atol=TOL, sizes=sizes, seed=seed,
            note="sosl fit on every prefix vs the closed-form discounted moments")))
        recs.append(R.emit(R.identity(
            f"Forgetting: step [{name}]",
            f"max_t ||coef_ - w_(t+1)||_inf (scaled) <= {TOL:g}, moments discounted", e_w, 0.0,
            atol=TOL, sizes=sizes, seed=seed, headline=loss == "m")))
        if loss != "m":
            continue
        one = library_prefixes(Xf, yf, lam_f, eta_f, loss, bf, one_row=True)
        e_one = max(errors(one, dct))
        recs.append(R.emit(R.identity(
            f"Forgetting: one-row path [{name.split(',')[0]}]",
            f"partial_fit one row at a time: moments and step (scaled) <= {TOL:g}", e_one, 0.0,
            atol=TOL, sizes=sizes, seed=seed,
            note="the typed one-row stepper (learn_one), not the batch pass")))
        for label, b_neg, power in (("no forgetting (beta := 1)", sp.Integer(1), 1),
                                    ("forgetting applied twice to Sigma", beta, 2)):
            e_mom_n, e_w_n = errors(lib, direct(X, y, lam, eta, loss, b_neg, cov_power=power))
            recs.append(R.emit(R.identity(
                f"Forgetting neg. control: {label}",
                f"moments and step identities against the library at beta = "
                f"{BETA[0]}/{BETA[1]} (<= {TOL:g})", max(e_mom_n, e_w_n), 0.0, atol=TOL,
                sizes=sizes, seed=seed, negative=True,
                note=f"moment error {e_mom_n:.3g}, step error {e_w_n:.3g}")))
    # beta = 1 is no forgetting
    name, loss, lam_q, eta_q = VARIANTS[0]
    lam = sp.Rational(*lam_q)
    one = sp.Integer(1)
    lib1 = library_prefixes(Xf, yf, float(lam), None, loss, 1.0)
    d1 = direct(X, y, lam, None, loss, one)
    e_mom1, e_w1 = errors(lib1, d1)
    recs.append(R.emit(R.identity(
        "Forgetting beta = 1: library == direct computation",
        f"OAUCM(forgetting=1.0) moments and step against the closed form at beta = 1 "
        f"(<= {TOL:g})", max(e_mom1, e_w1), 0.0, atol=TOL,
        sizes=f"T={T_STEPS} p=3, beta=1, sympy Rational, roots at 50 digits", seed=seed,
        note=f"moment error {e_mom1:.3g}, step error {e_w1:.3g}")))
    diff = 0
    for (_, mom), rec in zip(d1, paper_recursions(X, y), strict=True):
        for c in (-1, 1):
            if mom[c] is None or rec[c] is None:
                diff = diff if (mom[c] is None) == (rec[c] is None) else np.inf
                continue
            (W, xb, S), (N, xb2, S2) = mom[c], rec[c]
            diff = max([diff, abs(W - N)] + [abs(a - b) for a, b in zip(xb, xb2)]
                       + [abs(a - b) for ra, rb in zip(S, S2) for a, b in zip(ra, rb)])
    recs.append(R.emit(R.identity(
        "Forgetting beta = 1: closed form == eqs. (15)-(18)",
        "exact arithmetic: discounted moments at beta = 1 minus the paper's recursions == 0",
        float(diff), 0.0, atol=0.0, sizes=f"T={T_STEPS} p=3, sympy Rational", seed=seed,
        evidence="derivation")))
    return recs
