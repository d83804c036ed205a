"""The library's losses against an independent symbolic form (shared by the loss checks).

The lemmas check the library's own loss functions (:mod:`sosl._core._losses_ref`). Where a
module keeps an independent symbolic form of psi on purpose (sympy), this helper compares
the two: psi and its partial derivatives d/dmu and d/ds2 from sympy, evaluated with mpmath
at 50 digits, against ``psi(loss, mu, s2)`` and ``loss_grad(loss, mu, s2)`` in float64.

Tolerance
---------
Float64 evaluation of ((1 - mu) + sqrt((1 - mu)^2 + s2))/2 loses digits by cancellation
when 1 - mu < 0, so the error is measured relative to the size of the summands,
``|1 - mu| + sqrt((1 - mu)^2 + s2) + 1`` for values and to
``max(1, |1 - mu|, 1/sqrt((1 - mu)^2 + s2))`` for derivatives (d psi_M/d s2 = 1/(4A)), and
must be <= 1e-13 (a few hundred ulps of that size).
"""

import numpy as np

from . import _records as R

__all__ = ["sympy_forms", "library_agreement", "agreement_records"]

TOL = 1e-13
DIGITS = 50


def sympy_forms(loss):
    """(mu, s2, psi, d psi/d mu, d psi/d s2) as sympy expressions; loss 'm' or 's'."""
    import sympy as sp
    mu, s2 = sp.symbols("mu s2", real=True)
    b = 1 - mu
    psi = (b + sp.sqrt(b ** 2 + s2)) / 2 if loss == "m" else b ** 2 + s2
    return mu, s2, psi, sp.diff(psi, mu), sp.diff(psi, s2)


def _points(rng, n):
    mu = np.concatenate([rng.uniform(-4.0, 6.0, n), [1.0, 0.0, 3.0]])
    s2 = np.concatenate([np.exp(rng.uniform(np.log(1e-6), np.log(10.0), n)), [0.5, 0.0, 2.0]])
    return mu, s2


def library_agreement(loss, rng, n=200, against=None):
    """Max scaled error of the library's (psi, d_mu, d_s2) against sympy at 50 digits.

    Parameters
    ----------
    loss : 'm' or 's'
        The library loss to test (``Loss.LOSS_M`` or ``Loss.LOSS_S``).
    rng : numpy Generator
    n : int
        Random points (mu in [-4, 6], s2 log-uniform in [1e-6, 10], plus fixed ones).
    against : 'm', 's' or None
        The symbolic form to compare with (default: the same loss; the other one serves
        as a negative control).

    Returns
    -------
    (err_value, err_grad) : the max scaled errors of psi and of (d_mu, d_s2).
    """
    import mpmath
    import sympy as sp

    from sosl._core import _losses_ref as LR
    from sosl._core._codes import Loss
    code = int(Loss.LOSS_M) if loss == "m" else int(Loss.LOSS_S)
    mu_s, s2_s, psi, dmu, ds2 = sympy_forms(against or loss)
    fns = [sp.lambdify((mu_s, s2_s), e, "mpmath") for e in (psi, dmu, ds2)]
    mus, s2s = _points(rng, n)
    err_v = err_g = 0.0
    with mpmath.workdps(DIGITS):
        for m, v in zip(mus, s2s):
            if v == 0.0 and (against or loss) == "m":
                continue                          # psi_M's kink: derivative one-sided there
            exact = [fn(mpmath.mpf(float(m)), mpmath.mpf(float(v))) for fn in fns]
            val, d_mu, d_s2 = LR.loss_grad(code, float(m), float(v))
            lib_v = float(np.asarray(LR.psi(code, float(m), float(v))))
            b = 1.0 - m
            A = float(np.sqrt(b * b + v))
            size = abs(b) + A + 1.0
            err_v = max(err_v, abs(lib_v - float(exact[0])) / size,
                        abs(val - float(exact[0])) / size)
            gsize = max(1.0, abs(b), 1.0 / max(A, 1e-300))
            err_g = max(err_g, abs(d_mu - float(exact[1])) / gsize,
                        abs(d_s2 - float(exact[2])) / gsize)
    return err_v, err_g


def agreement_records(label, loss, seed, n=200):
    """Two identity records (value, derivatives) and one negative control (other loss)."""
    rng = np.random.default_rng(seed)
    ev, eg = library_agreement(loss, rng, n)
    name = "psi_M" if loss == "m" else "psi_S"
    other = "s" if loss == "m" else "m"
    en, _ = library_agreement(loss, np.random.default_rng(seed), n, against=other)
    sizes = f"{n + 3} points, sympy at {DIGITS} digits"
    return [
        R.emit(R.identity(
            f"{label} library {name} vs sympy", f"max scaled |psi_lib - psi_sympy| <= {TOL:g}",
            ev, 0.0, atol=TOL, sizes=sizes, seed=seed,
            note="sosl._core._losses_ref.psi and loss_grad value against the symbolic form")),
        R.emit(R.identity(
            f"{label} library d{name} vs sympy", f"max scaled derivative error <= {TOL:g}",
            eg, 0.0, atol=TOL, sizes=sizes, seed=seed,
            note="loss_grad's d/dmu and d/ds2 against sympy.diff of the symbolic form")),
        R.emit(R.identity(
            f"{label} neg. control: library {name} vs other loss",
            f"max scaled |psi_lib - psi_other| <= {TOL:g}", en, 0.0, atol=TOL, sizes=sizes,
            seed=seed, negative=True,
            note="the same comparison against the other surrogate must fail")),
    ]
