"""Theorem 6's constant: derived symbolically, a sharper bound proved, and how tight it is.

Statement (Theorem 6, as checked by :mod:`verify.theorem6_regret`)
------------------------------------------------------------------
With ||x_t|| <= 1, L_t(w) = (lam/2)||w||^2 + psi_M(...) and OGD with eta_t = 1/(lam t),
Regret_T <= 2 C^2 (1 + ln T)/lam, C the gradient bound of psi_M (Lemma 4: C = 3 gives
the paper's 18; the sharpened C = 2 gives 8).

Derivation of the constant (checked in sympy, step by step)
-----------------------------------------------------------
Let grad_t = grad L_t(w_t), D_t = ||w_t - w*||. Strong convexity gives
L_t(w_t) - L_t(w*) <= grad_t.(w_t - w*) - (lam/2) D_t^2, and the update gives
grad_t.(w_t - w*) = (D_t^2 - D_{t+1}^2)/(2 eta_t) + eta_t ||grad_t||^2/2. Summed, the
coefficient of D_t^2 is 1/(2 eta_t) - 1/(2 eta_{t-1}) - lam/2 (1/eta_0 = 0), which is 0
for eta_t = 1/(lam t), so Regret_T <= sum_t ||grad_t||^2/(2 lam t) <= G^2 H_T/(2 lam)
with H_T = sum_{t<=T} 1/t <= 1 + ln T. The iterates stay in ||w|| <= C/lam (the fixed
point of B = (1 - 1/t) B + C/(lam t)), so G = lam C/lam + C = 2C and the constant is
G^2/2 = 2 C^2: 18 for C = 3, 8 for C = 2. The code's constants
(:func:`verify._regret.bound_const` at ``C_PAPER``/``C_SHARP``, the bound columns the
regret check divides by, and Lemma 4's constants) must equal these exactly.

A sharper bound (proved here, checked numerically)
--------------------------------------------------
Let g_t = grad psi_t(w_t) (g_t = 0 while the other class is empty, in particular
g_1 = 0) and gbar_t = (1/t) sum_{s<=t} g_s. Multiplying the update
w_{t+1} = (1 - 1/t) w_t - g_t/(lam t) by lam t and summing gives lam w_{t+1} = -gbar_t, so
grad_t = lam w_t + g_t = g_t - gbar_{t-1} =: d_t. With Phi_t = t ||gbar_t||^2 and
gbar_t = gbar_{t-1} + d_t/t one has the identity
    ||d_t||^2 (t - 1)/t = ||g_t||^2 + Phi_{t-1} - Phi_t,
hence, for t >= 2, ||d_t||^2/t <= (C^2 + Phi_{t-1} - Phi_t)/(t - 1), and by summation by
parts sum_{t=2}^T (Phi_{t-1} - Phi_t)/(t - 1) = Phi_1 - Phi_T/(T-1)
- sum_{t=2}^{T-1} Phi_t/(t(t-1)) <= Phi_1 = ||g_1||^2 = 0. With d_1 = g_1 = 0:

    Regret_T <= (1/(2 lam)) sum_t ||d_t||^2/t <= C^2 H_{T-1}/(2 lam) <= (C^2/2)(1 + ln T)/lam.

For C = 2 the constant is 2, a quarter of 8: no stream can reach more than 25% of the
sharpened bound 8(1 + ln T)/lam (the target "25% of the 8-bound" is out of reach by this
proof). Everything else of Theorem 6's assumptions is used unchanged.

Checks (thresholds fixed before running)
----------------------------------------
* Symbolic (sympy): the telescoping coefficient is 0 (t >= 2 and t = 1), the iterate
  bound is C/lam, G = 2C, G^2/2 = 2 C^2, the Phi identity above, and summation by parts at
  T = 7 (symbolic Phi's) all simplify to 0; H_T <= 1 + ln T on T = 1..10^6 (numeric).
  Identities with tolerance 0: the code's 18 and 8 (and the bound columns of
  :func:`verify._regret.regret_curve`, and Lemma 4's C = 3, 2) against the derivation, and
  this module's sharper constant against C^2/2. Negative control: the derivation without
  the regularizer's share of the gradient (G = C, constant C^2/2 = 4.5 for C = 3) against
  the code's 18 must FAIL.
* Proof steps on data: on every searched stream, with the iterates of ``sosl.OAUCM``
  (``partial_fit`` row by row) and g_t from the library's ``grad_w``:
  max_t ||lam w_t + gbar_{t-1}|| <= 1e-12 (identity), max ||g_t|| <= 2 + 1e-12, and
  2 lam Regret_T <= sum ||d_t||^2/t (1 + 1e-9) with the comparator's lower estimate of the
  regret (learner loss - F_T(w_hat)): the two sides are equal for linear losses, so the
  upper estimate, which carries the comparator's error, cannot be used for this step.
  Identities of code constants hold to 1e-12 relative (the bound columns are divided by
  (1 + ln T)/lam in floating point).
* Tightness (search): a greedy adversary picks each round (label, point on a 16-point grid
  of the unit circle) to maximize ||d_t||^2 = ||g_t - gbar_{t-1}||^2, the round's term of
  the bound; for lam in {2} (quick) or {0.5, 2, 8} the regret (upper estimate, certified
  comparator) is measured on a grid of horizons. Reported: the largest
  Regret_T/(8(1 + ln T)/lam) (upper bound <= 1, expected well below 0.25 by the proof)
  and the largest Regret_T/(2 H_{T-1}/lam), which must be >= 0.25 (lower bound: the
  sharper bound is reached within 4x), and <= 1 (upper bound: the sharper bound holds).
  Negative control: the sharper constant divided by 4 (0.5 H_{T-1}/lam) must FAIL.
"""

import numpy as np

from sosl._core import _losses_ref as LR

from . import _records as R
from . import _regret as RG

NAME = "theorem6c"
TITLE = "Theorem 6 constant: symbolic derivation, sharper bound, tightness"
ORDER = 61

SHARPER = 2.0          # Regret_T <= SHARPER H_{T-1}/lam (C = 2): C^2/2
TOL_STEP = 1e-12       # lam w_t + gbar_{t-1} = 0 up to rounding
TIGHT_MIN = 0.25       # the search must reach the sharper bound within 4x


# --------------------------------------------------------------------------- symbolic
def derive():
    """The derivation in sympy: {step: residual expression}, and the derived constants."""
    import sympy as sp
    t, lam, C, B = sp.symbols("t lambda C B", positive=True)
    eta = lambda k: 1 / (lam * k)                     # noqa: E731
    res = {}
    res["telescoping coefficient, t >= 2"] = sp.simplify(
        1 / (2 * eta(t)) - 1 / (2 * eta(t - 1)) - lam / 2)
    res["telescoping coefficient, t = 1"] = sp.simplify(1 / (2 * eta(1)) - lam / 2)
    Bsol = sp.solve(sp.Eq(B, (1 - 1 / t) * B + C / (lam * t)), B)
    res["iterate bound B = C/lam"] = sp.simplify(Bsol[0] - C / lam) if len(Bsol) == 1 else 1
    G = lam * Bsol[0] + C
    res["G = 2C"] = sp.simplify(G - 2 * C)
    const = sp.simplify(G ** 2 / 2)
    res["constant G^2/2 = 2 C^2"] = sp.simplify(const - 2 * C ** 2)
    # the Phi identity, in two dimensions (coordinates symbolic)
    g1, g2, d1, d2 = sp.symbols("gb1 gb2 d1 d2", real=True)
    gb = sp.Matrix([g1, g2])
    d = sp.Matrix([d1, d2])
    n2 = lambda v: (v.T * v)[0]                       # noqa: E731
    Phi_t = t * n2(gb + d / t)
    Phi_prev = (t - 1) * n2(gb)
    res["Phi identity"] = sp.simplify(
        n2(d) * (t - 1) / t - (n2(gb + d) + Phi_prev - Phi_t))
    # summation by parts at T = 7 with free Phi_1..Phi_7
    T = 7
    P = sp.symbols(f"P1:{T + 1}")
    lhs = sum((P[k - 2] - P[k - 1]) / (k - 1) for k in range(2, T + 1))
    rhs = P[0] - P[T - 1] / (T - 1) - sum(P[k - 1] / (k * (k - 1)) for k in range(2, T))
    res["summation by parts (T = 7)"] = sp.simplify(lhs - rhs)
    consts = {"paper": float(const.subs(C, 3)), "sharpened": float(const.subs(C, 2)),
              "sharper": float((C ** 2 / 2).subs(C, 2)),
              "no regularizer share (G = C)": float((C ** 2 / 2).subs(C, 3))}
    return res, consts


def harmonic_log_gap(n_max=10 ** 6):
    """max over T <= n_max of H_T - (1 + ln T) (must be <= 0)."""
    T = np.arange(1, n_max + 1, dtype=float)
    return float(np.max(np.cumsum(1.0 / T) - (1.0 + np.log(T))))


def code_constants():
    """The constants the code uses, by where they are used."""
    from . import lemma4_gradient as L4
    lam = 0.7
    rng = np.random.default_rng(0)
    X, y = RG.adversarial_stream(12, rng)
    rc = RG.regret_curve(X, y, lam, [5, 12])
    unit = (1.0 + np.log(rc["T"].astype(float))) / lam
    return {
        "paper": [RG.bound_const(RG.C_PAPER), *(rc["bound18"] / unit),
                  RG.bound_const(L4.C_PAPER)],
        "sharpened": [RG.bound_const(RG.C_SHARP), *(rc["bound8"] / unit),
                      RG.bound_const(L4.C_SHARP)],
        "sharper": [SHARPER],
    }


# --------------------------------------------------------------------------- search
def greedy_stream(T, lam, K=16):
    """Greedy adversary: each round the (label, grid point) maximizing ||g_t - gbar_{t-1}||^2.

    The adversary simulates OGD with step 1/(lam t) itself (library ``grad_w``); round 1
    is a negative at (1, 0). Returns (X, y) with y in {0, 1}.
    """
    ang = np.linspace(0.0, 2.0 * np.pi, K, endpoint=False)
    cand = np.column_stack([np.cos(ang), np.sin(ang)])
    p = 2
    code = int(LR.LOSS_M)
    xbar = np.zeros((2, p))
    Sig = np.zeros((2, p, p))
    N = np.zeros(2, dtype=np.int64)
    w = np.zeros(p)
    gsum = np.zeros(p)
    X = np.zeros((T, p))
    s = np.zeros(T)
    for t in range(T):
        gbar = gsum / t if t else gsum
        best, pick = -1.0, None
        for y in ((-1.0,) if t == 0 else (1.0, -1.0)):
            opp = 0 if y > 0 else 1
            for x in (cand[:1] if t == 0 else cand):
                g = (LR.grad_w(code, w, y * (x - xbar[opp]), Sig[opp]) if N[opp] > 0
                     else np.zeros(p))
                score = float((g - gbar) @ (g - gbar))
                if score > best + 1e-12:
                    best, pick = score, (x, y, g)
        x, y, g = pick
        X[t], s[t] = x, y
        own = 1 if y > 0 else 0
        N[own] += 1
        d_old = x - xbar[own]
        xbar[own] += d_old / N[own]
        Sig[own] += (np.outer(d_old, x - xbar[own]) - Sig[own]) / N[own]
        w = w - (lam * w + g) / (lam * (t + 1))
        gsum += g
    return X, (s > 0).astype(int)


def proof_terms(X, y, lam):
    """(max ||lam w_t + gbar_{t-1}||, max ||g_t||, cumulative sum ||d_t||^2/t) on a stream.

    Uses the iterates of ``sosl.OAUCM(lam)`` and the library's ``grad_w``.
    """
    s = RG.labels(y)
    W = RG.learner_iterates(X, s, lam)
    T = X.shape[0]
    G = RG.psi_gradients(X, s, W[:T])
    gbar_prev = np.vstack([np.zeros(X.shape[1]), np.cumsum(G, axis=0)[:-1]
                           / np.arange(1, T)[:, None]])
    step_err = float(np.max(np.linalg.norm(lam * W[:T] + gbar_prev, axis=1)))
    d = G - gbar_prev
    bound_sum = np.cumsum((d * d).sum(axis=1) / np.arange(1, T + 1))
    return step_err, float(np.max(np.linalg.norm(G, axis=1))), bound_sum


def harmonic(n):
    """H_n = sum_{k<=n} 1/k (H_0 = 0)."""
    return float(np.sum(1.0 / np.arange(1, n + 1))) if n > 0 else 0.0


def run(profile, seed, out_dir):
    import matplotlib.pyplot as plt
    quick = profile == "quick"
    recs = []

    # ---- symbolic derivation and the code's constants
    steps, derived = derive()
    nonzero = [k for k, e in steps.items() if e != 0]
    recs.append(R.emit(R.identity(
        "Theorem 6 sympy: derivation steps", "number of steps not simplifying to 0 == 0",
        len(nonzero), 0, atol=0.0, sizes=f"{len(steps)} steps", seed=seed,
        evidence="derivation",
        note="steps: " + "; ".join(steps) + (f"; NOT ZERO: {nonzero}" if nonzero else ""))))
    gap = harmonic_log_gap(10 ** 4 if quick else 10 ** 6)
    recs.append(R.emit(R.upper_bound(
        "Theorem 6: H_T <= 1 + ln T", "max_T H_T - (1 + ln T) <= 0", gap, 0.0,
        sizes=f"T = 1..{10 ** 4 if quick else 10 ** 6}", seed=seed, evidence="derivation")))
    code = code_constants()
    for key, label in (("paper", "18"), ("sharpened", "8"), ("sharper", "2 (C^2/2)")):
        vals = code[key]
        err = max(abs(v - derived[key]) for v in vals)
        recs.append(R.emit(R.identity(
            f"Theorem 6 code constant {label} vs derivation",
            "max |code constant - derived| <= 1e-12 derived (bound_const, bound columns, "
            "Lemma 4's C)" if key != "sharper" else "SHARPER == C^2/2 at C = 2",
            derived[key] + err, derived[key], rtol=1e-12, sizes=f"{len(vals)} uses",
            seed=seed, headline=key != "sharper", evidence="derivation",
            note=f"code values {sorted(set(round(v, 15) for v in vals))}")))
    recs.append(R.emit(R.identity(
        "Theorem 6 neg. control: derivation with G = C", "code's 18 == C^2/2 at C = 3",
        code["paper"][0], derived["no regularizer share (G = C)"], atol=0.0, seed=seed,
        negative=True, evidence="derivation",
        note="forgetting the regularizer's part lam ||w|| <= C of the gradient")))

    # ---- tightness search, proof steps on the found streams
    lams = [2.0] if quick else [0.5, 2.0, 8.0]
    T = 120 if quick else 1000
    best8 = best_sh = 0.0
    worst_bound = 0.0
    max_step = max_g = 0.0
    max_proof = 0.0
    where = ""
    curves = []
    for lam in lams:
        R.progress(f"Theorem 6 tightness: greedy stream, lam={lam}")
        X, y = greedy_stream(T, lam)
        grid = np.unique(np.round(np.geomspace(3, T, 10 if quick else 16)).astype(int))
        rc = RG.regret_curve(X, y, lam, grid)
        Hm1 = np.array([harmonic(int(t) - 1) for t in rc["T"]])
        r8 = rc["regret"] / rc["bound8"]
        rsh = rc["regret"] * lam / (SHARPER * Hm1)
        step_err, g_max, bsum = proof_terms(X, y, lam)
        max_step, max_g = max(max_step, step_err), max(max_g, g_max)
        # first inequality of the proof: 2 lam Regret_T <= sum_{t<=T} ||d_t||^2/t
        # (checked with the lower estimate of the regret: a necessary condition, since the
        # upper estimate carries the comparator's error and the two sides are equal for
        # linear losses)
        max_proof = max(max_proof,
                        float(np.max(2 * lam * rc["regret_raw"] / bsum[rc["T"] - 1])))
        worst_bound = max(worst_bound, float(np.max(rsh)))
        if float(np.max(rsh)) > best_sh:
            i = int(np.argmax(rsh))
            best_sh, where = float(rsh[i]), f"lam={lam}, T={rc['T'][i]}"
        best8 = max(best8, float(np.max(r8)))
        curves.append((lam, rc["T"], r8, rsh))
    sizes = f"greedy streams, T <= {T}, lam in {lams}"
    recs.append(R.emit(R.upper_bound(
        "Theorem 6 tightness: regret / 8-bound", "max Regret_T/(8(1+ln T)/lam) <= 1 "
        "(<= 0.25 by the sharper bound)", best8, 1.0, sizes=sizes, seed=seed, headline=True,
        note="largest ratio to the sharpened bound found by the search")))
    recs.append(R.emit(R.lower_bound(
        "Theorem 6 tightness: regret / sharper bound", f"max Regret_T/(2 H_(T-1)/lam) >= "
        f"{TIGHT_MIN}", best_sh, TIGHT_MIN, sizes=sizes, seed=seed, headline=True,
        note=f"largest at {where}; the sharper bound is reached within "
             f"{1 / max(best_sh, 1e-300):.2f}x")))
    recs.append(R.emit(R.upper_bound(
        "Theorem 6 sharper bound holds", "max Regret_T/(2 H_(T-1)/lam) <= 1", worst_bound,
        1.0, sizes=sizes, seed=seed)))
    recs.append(R.emit(R.upper_bound(
        "Theorem 6 neg. control: sharper constant / 4", "max Regret_T/(0.5 H_(T-1)/lam) <= 1",
        4.0 * worst_bound, 1.0, sizes=sizes, seed=seed, negative=True,
        note="the bound with a quarter of the proved constant is beaten by the search")))
    recs.append(R.emit(R.identity(
        "Theorem 6 proof: lam w_t = -gbar_(t-1)", f"max_t ||lam w_t + gbar_(t-1)|| <= "
        f"{TOL_STEP:g}", max_step, 0.0, atol=TOL_STEP, sizes=sizes, seed=seed,
        note="iterates of sosl.OAUCM (partial_fit row by row), g_t from the library's grad_w")))
    recs.append(R.emit(R.upper_bound(
        "Theorem 6 proof: ||g_t|| <= C = 2", "max_t ||g_t|| <= 2 + 1e-12", max_g, 2.0 + 1e-12,
        sizes=sizes, seed=seed)))
    recs.append(R.emit(R.upper_bound(
        "Theorem 6 proof: 2 lam Regret <= sum ||d_t||^2/t", "max ratio <= 1 + 1e-9",
        max_proof, 1.0 + 1e-9, sizes=sizes, seed=seed,
        note="regret: lower estimate learner - F_T(w_hat); equality for linear losses")))

    fig, ax = plt.subplots(figsize=(7, 4.6))
    for lam, Tg, r8, rsh in curves:
        line, = ax.semilogx(Tg, rsh, "o-", ms=4, label=f"regret / (2 H_(T-1)/lam), lam={lam}")
        ax.semilogx(Tg, r8, "s:", ms=4, color=line.get_color(),
                    label=f"regret / (8(1+ln T)/lam), lam={lam}")
    ax.axhline(1.0, color="k", lw=1.0, ls="-", label="1: the bound itself (Theorem 6 / sharper)")
    ax.axhline(TIGHT_MIN, color="k", lw=0.9, ls="--",
               label=f"{TIGHT_MIN}: tightness target (search must reach it)")
    ax.set(xlabel="T (rounds)", ylabel="regret / bound",
           title="Theorem 6: greedy adversary, regret over two bounds")
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2)
    recs[-7].figures.append(R.save_figure(
        fig, out_dir, "theorem6_constant",
        caption="Regret of OAUC-M on the greedy adversarial streams divided by the "
                "sharper bound 2 H_(T-1)/lam proved in verify (solid) and by 8(1 + ln T)/lam "
                "(dotted), against T, per lam; the solid black line at 1 is the bound, the "
                "dashed line the tightness target the search must reach."))
    return recs

