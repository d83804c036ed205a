"""Algorithm 1 replayed in exact arithmetic from the paper's equations (12)-(18).

Statement
---------
Algorithm 1 (OAUC-SOSL) keeps, per class, the count N, the mean xbar and the covariance
Sigma of the instances seen, updated by eqs. (15)/(17) and (16)/(18); at round t it
compares (x_t, y_t) with the other class's moments and takes the step (12),
w_{t+1} = (1 - eta_t lam) w_t - eta_t grad psi, with grad psi_S from eq. (13) or
grad psi_M from eq. (14) (v_t = (1 - mu_t)/sigma_t, Phi_M(v) = (1 + v/sqrt(1 + v^2))/2,
phi_M(v) = 1/(2 sqrt(1 + v^2))), eta_t = 1/(lam t) (OAUC-M) or a constant (OAUC-M_c,
OAUC-S), w_1 = 0.

This module writes those equations out again, independently of the library's
references, in exact arithmetic: sympy ``Rational`` inputs (dyadic, so that their float64
copies are exact), the moments and OAUC-S in rationals, and psi_M's square roots
evaluated to 50 significant digits (sympy ``Float`` arithmetic at 50 digits from there).

The library's documented conventions, followed here
----------------------------------------------------
* The psi_S gradient is the exact derivative 2 x eq. (13) (the library's ``eta`` is the
  paper's step for (1/2) psi_S).
* Rounds before the other class has appeared carry only the regularizer (grad psi = 0).
* Eq. (14) divides by sigma_t = sqrt(w^T Sigma_t w); where sigma_t = 0 (w = 0, or a
  one-point class) its limit is used: Sigma_t w = 0 there and Phi_M(v) -> 1 for
  1 - mu > 0, 0 for 1 - mu < 0 (1/2 at 1 - mu = 0, the library's one-sided derivative).
* The covariance is updated by the paper's uncentred recursions (16)/(18); the library's
  Welford centred form equals them in exact arithmetic, which is what is tested.

Check (thresholds fixed before running)
---------------------------------------
For OAUC-M (eta_t = 1/(lam t)), OAUC-M_c and OAUC-S (constant eta) on a 30-row stream in
p = 3 that starts with three positives: ``sosl.OAUCM`` / ``sosl.OAUCS`` ``fit`` on every
prefix of 1..30 rows; max_t ||coef_ - w_{t+1}||_inf / max(1, ||w_{t+1}||_inf) <= 1e-12
(identity). The exact replay also checks the library's loss functions: at every replayed
round, ``sosl._core._losses_ref.psi`` at (mu_t, sigma_t^2) against the replay's value
(relative 1e-12). Negative controls (each must FAIL the same identity): the replay with
the step 1/(lam (t + 1)), and the replay comparing with the own class's statistics
instead of the other class's.
"""

import numpy as np

from . import _records as R

NAME = "replay"
TITLE = "Algorithm 1 replayed exactly (eqs. 12-18) vs OAUCM / OAUCS"
ORDER = 70

T_STEPS = 30
P = 3
DIGITS = 50
TOL = 1e-12


# --------------------------------------------------------------------------- exact algebra
def _dot(u, v):
    return sum(a * b for a, b in zip(u, v))


def _matvec(M, v):
    return [_dot(row, v) for row in M]


def _outer(u, v):
    return [[a * b for b in v] for a in u]


def _madd(A, B, c=1):
    return [[a + c * b for a, b in zip(ra, rb)] for ra, rb in zip(A, B)]


def _sqrt50(z):
    import sympy as sp
    return sp.sqrt(z).evalf(DIGITS)


def grad_eq13(w, a, Sigma):
    """2 x eq. (13): 2 [(1 - w.a)(-a) + Sigma w] (the library's exact derivative)."""
    b = 1 - _dot(w, a)
    Sw = _matvec(Sigma, w)
    return [2 * (-b * ai + si) for ai, si in zip(a, Sw)]


def grad_eq14(w, a, Sigma):
    """Eq. (14): -Phi_M(v) a + phi_M(v) Sigma w / sigma, its limit where sigma = 0."""
    import sympy as sp
    b = 1 - _dot(w, a)
    Sw = _matvec(Sigma, w)
    s2 = _dot(w, Sw)
    if s2 == 0:
        Phi = 1 if b > 0 else (0 if b < 0 else sp.Rational(1, 2))
        return [-Phi * ai for ai in a]
    sigma = _sqrt50(s2)
    v = b / sigma
    root = _sqrt50(1 + v * v)
    Phi = (1 + v / root) / 2
    phi = 1 / (2 * root)
    return [-Phi * ai + phi * si / sigma for ai, si in zip(a, Sw)]


def psi_exact(loss, mu, s2):
    """psi_M (eq. 8, root at 50 digits) or psi_S (eq. 3) at (mu, s2)."""
    b = 1 - mu
    if loss == "s":
        return b * b + s2
    return (b + _sqrt50(b * b + s2)) / 2


def replay(X, y, lam, eta, loss, *, step_shift=0, own_class=False):
    """w_2, ..., w_{T+1} and the (mu_t, s2_t, psi_t) of each round, from eqs. (12)-(18).

    Parameters
    ----------
    X : list of lists of sympy Rational (T x p); y : list of +-1
    lam : Rational; eta : Rational or None (1/(lam t))
    loss : 'm' or 's'
    step_shift : int
        0 for the algorithm; 1 replays eta_t = 1/(lam (t + 1)) (a negative control).
    own_class : bool
        True compares with the own class's statistics (a negative control).
    """
    import sympy as sp
    p = len(X[0])
    zero_v = [sp.Integer(0)] * p
    stats = {c: {"N": 0, "xbar": list(zero_v), "Sigma": [list(zero_v) for _ in range(p)]}
             for c in (1, -1)}
    w = list(zero_v)
    out, rounds = [], []
    for t, (x, yt) in enumerate(zip(X, y), start=1):
        own = stats[yt]
        # lines 4-7 / 10-12: the own class's moments, eqs. (15)-(18)
        N = own["N"] + 1
        xb0 = own["xbar"]
        xb1 = [a + (xi - a) / N for a, xi in zip(xb0, x)]                      # (15)/(17)
        S0 = own["Sigma"]
        S1 = _madd(_madd(S0, _outer(xb0, xb0)), _outer(xb1, xb1), -1)
        S1 = _madd(S1, [[(xx - s - m) / N for xx, s, m in zip(rx, rs, rm)]     # (16)/(18)
                        for rx, rs, rm in zip(_outer(x, x), S0, _outer(xb0, xb0))])
        own.update(N=N, xbar=xb1, Sigma=S1)
        # line 8 / 13: the comparison set is the other class (own class: negative control)
        ref = own if own_class else stats[-yt]
        eta_t = eta if eta is not None else 1 / (lam * (t + step_shift))
        if ref["N"] > 0:
            a = [yt * (xi - m) for xi, m in zip(x, ref["xbar"])]
            mu = _dot(w, a)
            s2 = _dot(w, _matvec(ref["Sigma"], w))
            g = (grad_eq14 if loss == "m" else grad_eq13)(w, a, ref["Sigma"])
            rounds.append((mu, s2, psi_exact(loss, mu, s2)))
        else:
            g = zero_v
        w = [(1 - eta_t * lam) * wi - eta_t * gi for wi, gi in zip(w, g)]       # (12)
        out.append(w)
    return out, rounds


def stream(seed, T=T_STEPS, p=P):
    """Dyadic rationals k/16 (|k| <= 12) and labels: three positives, then random."""
    import sympy as sp
    rng = np.random.default_rng(seed)
    K = rng.integers(-12, 13, size=(T, p))
    y = [1, 1, 1] + [int(v) for v in np.where(rng.random(T - 3) < 0.45, 1, -1)]
    X = [[sp.Rational(int(k), 16) for k in row] for row in K]
    return X, y, K / 16.0, np.array(y)


def library_prefix_fits(Xf, yf, lam, eta, loss):
    """coef_[0] of ``fit`` on every prefix of 1..T rows (rows 0..k-1), as a (T, p) array."""
    from sosl import OAUCM, OAUCS
    Est = OAUCM if loss == "m" else OAUCS
    out = np.empty_like(Xf)
    for k in range(1, Xf.shape[0] + 1):
        yk = np.where(yf[:k] > 0, 1, 0)
        if yk.min() == yk.max():                     # one class so far: partial_fit with classes
            m = Est(lam=lam, eta=eta).partial_fit(Xf[:k], yk, classes=[0, 1])
        else:
            m = Est(lam=lam, eta=eta).fit(Xf[:k], yk)
        out[k - 1] = m.coef_[0]
    return out


def max_scaled_error(lib, exact):
    E = np.array([[float(v) for v in row] for row in exact])
    err = np.abs(lib - E).max(axis=1) / np.maximum(1.0, np.abs(E).max(axis=1))
    return float(err.max()), float(np.abs(E).max())


VARIANTS = (
    # name, loss, lam, eta (None: 1/(lam t))
    ("OAUC-M, eta_t = 1/(lam t)", "m", (1, 2), None),
    ("OAUC-M_c, eta = 1/16", "m", (1, 64), (1, 16)),
    ("OAUC-S, eta = 1/8", "s", (1, 64), (1, 8)),
)


def run(profile, seed, out_dir):
    import sympy as sp

    from sosl._core import _losses_ref as LR
    from sosl._core._codes import Loss
    recs = []
    X, y, Xf, yf = stream(seed)
    sizes = f"T={T_STEPS} p={P}, sympy Rational, roots at {DIGITS} digits"
    loss_err = 0.0
    n_rounds = 0
    for name, loss, lam_q, eta_q in VARIANTS:
        lam = sp.Rational(*lam_q)
        eta = None if eta_q is None else sp.Rational(*eta_q)
        lam_f, eta_f = float(lam), None if eta is None else float(eta)
        lib = library_prefix_fits(Xf, yf, lam_f, eta_f, loss)
        exact, rounds = replay(X, y, lam, eta, loss)
        err, size = max_scaled_error(lib, exact)
        recs.append(R.emit(R.identity(
            f"Algorithm 1 replay: {name}", f"max_t ||coef_ - w_(t+1)||_inf (scaled) <= {TOL:g}",
            err, 0.0, atol=TOL, sizes=sizes, seed=seed, headline=True,
            note=f"sosl fit on every prefix vs eqs. (12)-(18) in exact arithmetic; "
                 f"max |w| = {size:.3g}")))
        code = int(Loss.LOSS_M) if loss == "m" else int(Loss.LOSS_S)
        for mu, s2, ps in rounds:
            lib_psi = float(np.asarray(LR.psi(code, float(mu), float(s2))))
            loss_err = max(loss_err, abs(lib_psi - float(ps)) / max(1.0, abs(float(ps))))
            n_rounds += 1
        if eta is None:
            shifted, _ = replay(X, y, lam, eta, loss, step_shift=1)
            e_neg, _ = max_scaled_error(lib, shifted)
            recs.append(R.emit(R.identity(
                f"Replay neg. control: {name.split(',')[0]}, 1/(lam (t+1))",
                f"same identity, step shifted (<= {TOL:g})", e_neg, 0.0, atol=TOL,
                sizes=sizes, seed=seed, negative=True)))
        if loss == "s" or eta is None:
            owned, _ = replay(X, y, lam, eta, loss, own_class=True)
            e_own, _ = max_scaled_error(lib, owned)
            recs.append(R.emit(R.identity(
                f"Replay neg. control: {name.split(',')[0]}, own-class statistics",
                f"same identity, own class's moments (<= {TOL:g})", e_own, 0.0, atol=TOL,
                sizes=sizes, seed=seed, negative=True)))
    recs.append(R.emit(R.identity(
        "Replay: library psi at the replayed rounds", f"max relative error <= {TOL:g}",
        loss_err, 0.0, atol=TOL, sizes=f"{n_rounds} rounds, 3 variants", seed=seed,
        note="sosl._core._losses_ref.psi at (mu_t, sigma_t^2) vs the exact value")))
    return recs
