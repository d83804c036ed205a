"""The verify rows of PartialOAUCM at a small size: psi_beta's worst-case identity (sympy,
two-point attainment, beta = 1 is Lemma 2), convexity and the regret bound; every negative
control must FAIL and every check PASS."""

import numpy as np

from verify import partial_convexity_regret as PC
from verify import partial_cvar_worst_case as PW


def _split(records):
    pos = [r for r in records if not r.negative]
    neg = [r for r in records if r.negative]
    return pos, neg


def test_cvar_rows_pass_and_controls_fail():
    records = PW.run("quick", 0, None)
    pos, neg = _split(records)
    assert len(pos) >= 7 and len(neg) >= 3
    assert all(r.outcome == "PASS" for r in pos), [(r.name, r.outcome) for r in pos]
    assert all(r.outcome == "FAIL" for r in neg), [(r.name, r.outcome) for r in neg]


def test_convexity_check_and_its_control():
    rng = np.random.default_rng(0)
    assert PC.convexity(rng, 300) <= PC.TOL_CONVEX
    assert PC.convexity(rng, 300, selected=True) > 1e-3


def test_regret_below_the_bound_on_a_short_run_and_the_tight_claim_fails():
    T, lam = 300, 0.5
    X, s = PC.stream(np.random.default_rng(1), T)
    its, rounds, g2 = PC.run_and_record(X, s, lam, np.array([0.2, 0.5]))
    reg = PC.regret(its, PC.stack(rounds), lam, T, [its[-1], np.zeros(3)])
    bound = float(np.sum(g2 / (2.0 * lam * np.arange(1, T + 1))))
    assert 0.0 < reg <= bound
    assert reg > bound / PC.CONTROL_FACTOR
    # the recorded rounds are the learner's: its iterates equal the reference pass
    from sosl._core import _partial_ref as PR
    from sosl._core._codes import Schedule
    w, xbar, Sig = np.zeros(3), np.zeros((2, 3)), np.zeros((2, 3, 3))
    frac = np.array([0.2, 0.5])
    PR.partial_pass(X, s, np.arange(T - 1), w, xbar, Sig, np.zeros(2),
                    np.zeros(2, np.int64), 0, lam, 0.0, int(Schedule.STEP_INV_LAM_T), 1.0,
                    frac, PC.RHO, np.zeros((2, PC.RING)), np.zeros(2, np.int64),
                    np.zeros(2, np.int64))
    np.testing.assert_allclose(its[-1], w, rtol=1e-12, atol=1e-14)   # w_T of both
    assert np.abs(w).max() > 1e-3
