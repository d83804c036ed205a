"""Lemma 2 and Theorem 1: the worst-case average hinge under two moment constraints.

Statement (Lemma 2)
-------------------
For n >= 1, mu real and sigma > 0, let C be the set of c in R^n with mean mu and (population)
variance sigma^2. Then every c in C has average hinge
ell(c) = (1/n) sum_i max(0, 1 - c_i) <= psi_M(mu, sigma^2)
= ((1 - mu) + sqrt((1 - mu)^2 + sigma^2))/2,
equivalently (eq. 9) psi_M = Phi_M(v)(1 - mu) + phi_M(v) sigma with v = (1 - mu)/sigma.
The proof reduces the problem to two-point vectors (k entries at
q1 = mu - sqrt((n-k)/k) sigma, n-k at q2 = mu + sqrt(k/(n-k)) sigma), whose hinge is
g(k) = (k(1 - mu) + sqrt(k(n-k)) sigma)/n, and maximizes g over a real k.

Statement (Theorem 1)
---------------------
For any w, any instance (x, y) and the set {x_i} of opposite-class instances with mean xbar and
covariance Sigma: (1/n) sum_i 1[y w.(x - x_i) < 0] <= (1/n) sum_i max(0, 1 - y w.(x - x_i))
<= psi_M(y w.(x - xbar), w^T Sigma w). (Lemma 2 applied to c_i = y w.(x - x_i).)

Checks (thresholds fixed before running)
----------------------------------------
* sympy: with b = 1 - mu = sigma sinh(u) (a bijection onto R, so both signs of 1 - mu are
  covered without case splits), g'(k*) == 0 and g(k*) - psi_M == 0 for
  k* = (n/2)(1 + v/sqrt(1 + v^2)); the two roots of the squared stationarity equation are
  k* and n - k*; identity (9) and v Phi_M'(v) + phi_M'(v) == 0 simplify to 0. Symbolic,
  threshold exactly 0. Negative control: eq. (9) with phi_M doubled must not simplify to 0.
* The library's psi_M (``sosl._core._losses_ref``, used by every numeric check below)
  against the symbolic form evaluated at 50 digits, value and both partial derivatives
  (scaled error <= 1e-13, see :mod:`verify._losscheck`). Negative control: the same
  comparison against psi_S.
* Numeric worst case: for n from 2 to 200 and mu on both sides of 1, maximize ell over C with
  SLSQP (explicit constraints, n <= 50) and L-BFGS on the exactly feasible reparametrization
  c = mu + sigma sqrt(n) Pz/||Pz|| (P removes the mean), from many random starts, plus every
  two-point vector. Every candidate is projected exactly onto C before it is scored.
  Upper bound: max ell/psi_M <= 1 + 1e-9. Tightness: when k* is an integer the two-point
  vector reaches psi_M, |ratio - 1| <= 1e-6. Finite-n worst case: the optimizer never beats
  the best two-point vector by more than 1e-9 (relative), and the relative gap
  1 - (finite-n max)/psi_M over the grid is reported against n (figure).
  Negative control: the hinge of the mean, max(0, 1 - mu), taken as the bound (variance
  ignored) is exceeded.
* Theorem 1 on data: breast-cancer and every dataset of $SOSL_DATA_DIR; random w (two
  scales) and w learned by OAUCM; every instance against all instances of the other class;
  number of violations of either inequality (tolerance 1e-9 relative for rounding) must be 0;
  the mean slack psi_M - hinge is reported. Negative control: the same with sigma set to 0
  (bound max(0, 1 - mu)) has violations.
"""

import math

import numpy as np

from sosl._core._losses_ref import psi_m

from . import _records as R
from ._data import datasets
from ._losscheck import agreement_records

NAME = "lemma2"
TITLE = "Lemma 2 / Theorem 1: worst-case hinge bound psi_M"
ORDER = 20

TOL_BOUND = 1e-9        # relative excess over psi_M allowed (rounding)
TOL_TIGHT = 1e-6        # |ratio - 1| at integer k*


def avg_hinge(c):
    return float(np.mean(np.maximum(0.0, 1.0 - np.asarray(c))))


def project_to_C(c, mu, sigma):
    """The point of C with the same shape as c (recentered, rescaled)."""
    d = np.asarray(c, float) - np.mean(c)
    sd = math.sqrt(float(np.mean(d * d)))
    if sd == 0.0:
        d = np.zeros_like(d)
        d[0], d[-1] = 1.0, -1.0
        sd = math.sqrt(float(np.mean(d * d)))
    return mu + sigma * d / sd


def two_point(n, k, mu, sigma):
    """k entries at q1 = mu - sqrt((n-k)/k) sigma, n-k at q2 = mu + sqrt(k/(n-k)) sigma."""
    c = np.empty(n)
    c[:k] = mu - math.sqrt((n - k) / k) * sigma
    c[k:] = mu + math.sqrt(k / (n - k)) * sigma
    return c


def finite_n_worst(n, mu, sigma):
    """max over k = 1..n-1 of the average hinge of the two-point vector, and the best k."""
    best, kb = -np.inf, 0
    for k in range(1, n):
        h = avg_hinge(two_point(n, k, mu, sigma))
        if h > best:
            best, kb = h, k
    return best, kb


def k_star(n, mu, sigma):
    v = (1.0 - mu) / sigma
    return 0.5 * n * (1.0 + v / math.sqrt(1.0 + v * v))


# --------------------------------------------------------------------------- optimizers
def _opt_reparam(n, mu, sigma, rng, starts):
    """L-BFGS on z -> c(z) = mu + sigma sqrt(n) Pz/||Pz||, feasible for every z."""
    from scipy.optimize import minimize
    s = sigma * math.sqrt(n)

    def f(z):
        d = z - z.mean()
        r = math.sqrt(float(d @ d)) + 1e-300
        u = d / r
        c = mu + s * u
        act = (c < 1.0).astype(float)
        val = -float(np.sum(np.maximum(0.0, 1.0 - c))) / n
        gc = act / n                                   # d(-ell)/dc
        gu = s * gc
        gd = (gu - u * (u @ gu)) / r
        return val, gd - gd.mean()

    best = -np.inf
    for _ in range(starts):
        z0 = rng.normal(size=n) * rng.choice([0.3, 1.0, 3.0])
        if rng.random() < 0.5:                         # skewed start, near a two-point vector
            z0 += np.where(rng.random(n) < rng.random(), -3.0, 1.0)
        res = minimize(f, z0, jac=True, method="L-BFGS-B", options={"maxiter": 300})
        best = max(best, avg_hinge(project_to_C(res.x, mu, sigma)))
    return best


def _opt_slsqp(n, mu, sigma, rng, starts):
    """SLSQP on c with the two constraints of C written out."""
    from scipy.optimize import minimize
    cons = [{"type": "eq", "fun": lambda c: np.mean(c) - mu,
             "jac": lambda c: np.full(n, 1.0 / n)},
            {"type": "eq", "fun": lambda c: np.mean((c - mu) ** 2) - sigma ** 2,
             "jac": lambda c: 2.0 * (c - mu) / n}]

    def f(c):
        act = (c < 1.0).astype(float)
        return -float(np.sum(np.maximum(0.0, 1.0 - c))) / n, act / n

    best = -np.inf
    for _ in range(starts):
        c0 = project_to_C(rng.normal(size=n), mu, sigma)
        res = minimize(f, c0, jac=True, method="SLSQP", constraints=cons,
                       options={"maxiter": 200, "ftol": 1e-12})
        if np.all(np.isfinite(res.x)):
            best = max(best, avg_hinge(project_to_C(res.x, mu, sigma)))
    return best


# --------------------------------------------------------------------------- sympy
def _sympy_checks(seed):
    import sympy as sp
    n, sig = sp.symbols("n sigma", positive=True)
    k = sp.symbols("k", positive=True)
    u, v = sp.symbols("u v", real=True)
    b = sig * sp.sinh(u)                               # b = 1 - mu, any real value
    g = (k * b + sp.sqrt(k * (n - k)) * sig) / n
    vv = b / sig
    ks = n / 2 * (1 + vv / sp.sqrt(1 + vv ** 2))
    psi = (b + sp.sqrt(b ** 2 + sig ** 2)) / 2
    out = {}
    out["g'(k*) = 0"] = sp.simplify(sp.diff(g, k).subs(k, ks))
    out["g(k*) = psi_M"] = sp.simplify(g.subs(k, ks) - psi)
    # the squared stationarity equation 4(1+v^2)k^2 - 4n(1+v^2)k + n^2 = 0 has roots k*, n-k*
    roots = sp.solve(4 * (1 + v ** 2) * k ** 2 - 4 * n * (1 + v ** 2) * k + n ** 2, k)
    kv = n / 2 * (1 + v / sp.sqrt(1 + v ** 2))
    out["k* root of squared eq."] = min((sp.simplify(r - kv) for r in roots),
                                        key=lambda e: 0 if e == 0 else 1)
    Phi = lambda t: (1 + t / sp.sqrt(1 + t ** 2)) / 2       # noqa: E731
    phi = lambda t: sp.sqrt(1 / (1 + t ** 2)) / 2           # noqa: E731
    out["eq. (9)"] = sp.simplify(Phi(vv) * b + phi(vv) * sig - psi)
    out["v Phi' + phi' = 0"] = sp.simplify(v * sp.diff(Phi(v), v) + sp.diff(phi(v), v))
    mutant = sp.simplify(Phi(vv) * b + 2 * phi(vv) * sig - psi)
    # size of the residuals at random points (0 when simplify returned 0)
    rng = np.random.default_rng(seed)

    def size(e):
        if e == 0:
            return 0.0
        f = sp.lambdify((n, sig, u, v, k), e, "numpy")
        vals = [abs(complex(f(rng.uniform(2, 50), rng.uniform(0.1, 3), rng.uniform(-3, 3),
                             rng.uniform(-3, 3), rng.uniform(1, 2)))) for _ in range(20)]
        return max(max(vals), 1e-300)

    return {k_: (e == 0, size(e)) for k_, e in out.items()}, (mutant == 0, size(mutant))


def run(profile, seed, out_dir):
    import matplotlib.pyplot as plt
    quick = profile == "quick"
    rng = np.random.default_rng(seed)
    recs = []

    # ---- symbolic
    res, (mut_zero, mut_size) = _sympy_checks(seed)
    for label, (is_zero, sz) in res.items():
        recs.append(R.emit(R.identity(
            f"Lemma 2 sympy: {label}", f"simplify(lhs - rhs) == 0 ({label})",
            sz, 0.0, atol=0.0, seed=seed, sizes="symbolic", evidence="derivation",
            note="symbolic proof, b = 1 - mu = sigma sinh(u)" if is_zero else
            "simplify did not return 0; measured = max residual at random points")))
    recs.append(R.emit(R.identity(
        "Lemma 2 sympy: mutant eq. (9), 2 phi_M", "mutated identity must not simplify to 0",
        mut_size, 0.0, atol=0.0, seed=seed, sizes="symbolic", negative=True,
        evidence="derivation",
        note="eq. (9) with phi_M doubled; measured = max |residual| at random points")))
    # the symbolic psi_M above is an independent form: compare it with the library's
    recs.extend(agreement_records("Lemma 2", "m", seed, 60 if quick else 400))

    # ---- numeric worst case
    ns = ([2, 3, 5, 10, 40, 200] if quick
          else [2, 3, 4, 5, 7, 10, 15, 20, 30, 50, 75, 100, 150, 200])
    mus = ([-1.0, 0.5, 0.9, 1.0, 1.1, 1.5, 3.0] if quick
           else [-1.0, 0.0, 0.5, 0.9, 1.0, 1.1, 1.5, 3.0])
    sigmas = [0.2, 1.0] if quick else [0.1, 0.5, 1.0, 2.0]
    starts = 2 if quick else 6
    max_ratio, max_opt_over_two, worst_case = 0.0, 0.0, None
    neg_ratio = 0.0
    cases = [(n, mu, s) for n in ns for mu in mus for s in sigmas]
    for i, (n, mu, s) in enumerate(cases):
        R.progress("Lemma 2 worst case over C", i, len(cases))
        psi = psi_m(mu, s * s)
        two, kb = finite_n_worst(n, mu, s)
        opt = _opt_reparam(n, mu, s, rng, starts)
        if n <= 50:
            opt = max(opt, _opt_slsqp(n, mu, s, rng, max(1, starts // 2)))
        best = max(opt, two)
        r = best / psi
        if r > max_ratio:
            max_ratio, worst_case = r, (n, mu, s, kb)
        max_opt_over_two = max(max_opt_over_two, (opt - two) / max(two, psi))
        hm = max(0.0, 1.0 - mu)
        neg_ratio = max(neg_ratio, best / hm if hm > 0 else (np.inf if best > 0 else 0.0))
    sizes = f"{len(cases)} (n,mu,sigma), n={ns[0]}..{ns[-1]}, {starts} starts"
    recs.append(R.emit(R.upper_bound(
        "Lemma 2 max ell(c)/psi_M over C", "max ell/psi_M <= 1 + 1e-9", max_ratio,
        1.0 + TOL_BOUND, sizes=sizes, seed=seed, headline=True,
        note=f"largest ratio {max_ratio:.12f} at (n, mu, sigma, best k) = {worst_case}; "
             "optimizers: L-BFGS on a feasible reparametrization (all n) + SLSQP (n <= 50), "
             "plus all two-point vectors")))
    recs.append(R.emit(R.upper_bound(
        "Lemma 2 optimizer vs best two-point vector",
        "(optimizer - best two-point)/max(two-point, psi_M) <= 1e-9",
        max_opt_over_two, TOL_BOUND, sizes=sizes, seed=seed,
        note="confirms that the finite-n worst case is the best two-point vector")))
    recs.append(R.emit(R.upper_bound(
        "Lemma 2 neg. control: bound max(0,1-mu)", "ell <= max(0, 1 - mu) (variance dropped)",
        neg_ratio, 1.0, sizes=sizes, seed=seed, negative=True,
        note="the hinge of the mean is only a lower bound (Jensen): it must be exceeded")))

    # ---- tightness at integer k*
    worst_dev = 0.0
    for n in ns:
        for k in sorted({1, n // 3, n // 2, (2 * n) // 3, n - 1} - {0, n}):
            uu = 2.0 * k / n - 1.0
            v = uu / math.sqrt(1.0 - uu * uu)
            for s in sigmas:
                mu = 1.0 - v * s
                assert abs(k_star(n, mu, s) - k) < 1e-9 * n
                r_k = avg_hinge(two_point(n, k, mu, s)) / psi_m(mu, s * s)
                worst_dev = max(worst_dev, abs(r_k - 1.0))
    recs.append(R.emit(R.identity(
        "Lemma 2 tight when k* is an integer", "two-point vector at k* reaches psi_M: max|ratio-1|",
        worst_dev, 0.0, atol=TOL_TIGHT, sizes=f"n={ns[0]}..{ns[-1]}", seed=seed, headline=True,
        note="mu chosen so that k* = (n/2)(1 + v/sqrt(1+v^2)) is an integer")))
    # negative control: a bound 1% below psi_M is beaten at integer k*
    n, k, s = 10, 7, 1.0
    uu = 2.0 * k / n - 1.0
    mu = 1.0 - uu / math.sqrt(1.0 - uu * uu) * s
    recs.append(R.emit(R.upper_bound(
        "Lemma 2 neg. control: bound 0.99 psi_M", "ell <= 0.99 psi_M (wrong constant)",
        avg_hinge(two_point(n, k, mu, s)), 0.99 * psi_m(mu, s * s), sizes="n=10 k*=7",
        seed=seed, negative=True)))

    # ---- finite-n gap figure
    n_grid = np.unique(np.round(np.geomspace(2, 200, 25 if quick else 60)).astype(int))
    fig, ax = plt.subplots(1, 2, figsize=(10, 3.8))
    gaps_at_max = []
    for mu, s in [(0.0, 2.0), (0.5, 0.5), (1.5, 1.0), (0.9, 2.0)]:
        psi = psi_m(mu, s * s)
        rat = np.array([finite_n_worst(int(n), mu, s)[0] / psi for n in n_grid])
        ax[0].plot(n_grid, rat, "o-", ms=3, label=f"mu={mu}, sigma={s}")
        ax[1].loglog(n_grid, np.maximum(1.0 - rat, 1e-17), "o-", ms=3)
        gaps_at_max.append(1.0 - rat[-1])
    ax[0].axhline(1.0, color="k", lw=0.8)
    ax[0].set(xscale="log", xlabel="n", ylabel="finite-n max ell / psi_M",
              title="Lemma 2: worst-case ratio vs n")
    ax[0].legend(fontsize=8)
    ax[1].set(xlabel="n", ylabel="1 - ratio", title="relative gap to psi_M")
    fig_name = R.save_figure(
        fig, out_dir, "lemma2_worst_case_ratio",
        caption="Left: the largest mean pairwise hinge loss over comparison sets of n "
                "margins with mean mu and standard deviation sigma (finite-n worst case, "
                "computed by finite_n_worst), divided by psi_M(mu, sigma^2), against n for "
                "four (mu, sigma); the black line is 1, the value psi_M itself. Right: the "
                "relative gap 1 - ratio on log axes (gaps below 1e-17 drawn at 1e-17).")
    recs.append(R.emit(R.upper_bound(
        "Lemma 2 finite-n relative gap at n=200", "max relative gap 1 - max_C ell/psi_M <= 1e-3",
        max(gaps_at_max), 1e-3, sizes="n=200, 4 (mu,sigma)", seed=seed, figures=[fig_name],
        note="the bound becomes tight as n grows (k* rounds to an integer)")))

    # ---- Theorem 1 on data
    recs.extend(_theorem1_on_data(quick, seed))
    return recs


def _pairwise_stats(z, y):
    """Per instance: (0-1 average, hinge average, mu_c, sigma_c^2) against the other class.

    O(n log n) with sorted opposite-class scores and prefix sums (no n^2 matrix).
    """
    zp, zn = np.sort(z[y == 1]), np.sort(z[y == 0])
    out = np.empty((z.shape[0], 4))
    for cls, zo in ((1, zn), (0, zp)):
        m = zo.shape[0]
        pre = np.concatenate([[0.0], np.cumsum(zo)])
        sel = np.flatnonzero(y == cls)
        zz = z[sel]
        mean, var = zo.mean(), zo.var()
        if cls == 1:          # c_i = z - z_i; hinge > 0 iff z_i > z - 1; 0-1 iff z_i > z
            idx = np.searchsorted(zo, zz - 1.0, side="right")
            hinge = ((m - idx) * (1.0 - zz) + (pre[m] - pre[idx])) / m
            zo1 = (m - np.searchsorted(zo, zz, side="right")) / m
            mu = zz - mean
        else:                 # c_i = z_i - z; hinge > 0 iff z_i < z + 1; 0-1 iff z_i < z
            idx = np.searchsorted(zo, zz + 1.0, side="left")
            hinge = (idx * (1.0 + zz) - pre[idx]) / m
            zo1 = np.searchsorted(zo, zz, side="left") / m
            mu = mean - zz
        out[sel, 0], out[sel, 1], out[sel, 2], out[sel, 3] = zo1, hinge, mu, var
    return out


def _theorem1_on_data(quick, seed):
    from sosl import OAUCM
    rng = np.random.default_rng(seed + 1)
    viol, neg_viol, total, slack_sum, rel_slack_sum, worst = 0, 0, 0, 0.0, 0.0, 0.0
    names = []
    for name, X, y in datasets():
        if quick and name != "breast-cancer":
            continue
        names.append(name)
        ws = []
        for scale in (1.0, 5.0):
            g = rng.normal(size=X.shape[1])
            ws.append(("random", scale * g / np.linalg.norm(g)))
        Xf, yf = X, y
        if X.shape[0] > 20000:                  # learn w on a subsample; test on all rows
            idx = rng.choice(X.shape[0], 20000, replace=False)
            Xf, yf = X[idx], y[idx]
        ws.append(("OAUCM", OAUCM().fit(Xf, yf).coef_[0]))
        for _, w in ws:
            st = _pairwise_stats(X @ w, y)
            zo1, hinge, mu, s2 = st.T
            psi = psi_m(mu, s2)
            tol = TOL_BOUND * np.maximum(psi, 1.0)
            viol += int(np.sum(zo1 > hinge + tol)) + int(np.sum(hinge > psi + tol))
            neg_viol += int(np.sum(hinge > np.maximum(0.0, 1.0 - mu) + tol))
            total += X.shape[0]
            slack_sum += float(np.sum(psi - hinge))
            rel_slack_sum += float(np.sum((psi - hinge) / psi))
            worst = max(worst, float(np.max(hinge / psi)))
    sizes = f"{len(names)} dataset(s), 3 w each, {total} instance tests"
    note = (f"datasets: {', '.join(names)}; mean slack psi_M - hinge = {slack_sum / total:.4g} "
            f"(mean relative slack {rel_slack_sum / total:.3f}); largest hinge/psi_M = {worst:.6f}")
    return [R.emit(R.upper_bound(
                "Theorem 1 on data: violations of (6)", "0-1 <= hinge <= psi_M for every instance",
                viol, 0, sizes=sizes, seed=seed, note=note, headline=True)),
            R.emit(R.upper_bound(
                "Theorem 1 neg. control: sigma := 0", "hinge <= max(0, 1 - mu) for every instance",
                neg_viol, 0, sizes=sizes, seed=seed, negative=True,
                note="dropping the variance term breaks the bound"))]
