"""Tests of the verify checks for what the library runs beyond Algorithm 1 (issue 25, items
6-7): the budgeted kernel replay (eq. 28), forgetting, the frequent-directions invariant,
Theorem 5's L*-terms, the evidence labels, and the four mutants that target them."""

import math

import numpy as np
import pytest

from verify import _records as R
from verify import forgetting_moments as FM
from verify import kernel_budget_replay as KB
from verify import mutants as MU
from verify import sketch_frequent_directions as SK
from verify import theorem5_oaucs as T5

NEW_MUTANTS = ("forget_twice", "kernel_delta_half", "fd_smallest", "t5_sqrt")


def _mutant(name):
    return next(m for m in MU.MUTANTS if m.name == name)


def _bad_rows(records):
    return [(r.name, r.outcome) for r in records if not r.ok]


# ----------------------------------------------------------------------------- eq. (28)
@pytest.mark.parametrize("loss,eta,rule", [("m", None, "optimal"), ("m", None, "min_abs"),
                                           ("s", 0.05, "optimal")])
def test_budget_replay_matches_library_and_exercises_transfers(loss, eta, rule):
    X, y = KB.stream(3, 50)
    budgets = (2, 3)
    lib = KB.library_states(X, y, 0.1, loss=loss, eta=eta, rule=rule, budgets=budgets)
    rep, counts = KB.replay(X, y, 0.1, loss=loss, eta=eta, rule=rule, budgets=budgets)
    assert counts["onto x_t"] > 0 and counts["onto an older vector"] > 0
    assert counts["removals"] == X.shape[0] - sum(budgets)
    assert KB.max_error(lib, rep) < 1e-10
    assert max(abs(a) for st in rep for c in (1, -1) for _, a in st[c]) > 1e-2


def test_budget_replay_negative_controls_fail():
    X, y = KB.stream(3, 50)
    lib = KB.library_states(X, y, 0.1, budgets=(2, 3))
    half, _ = KB.replay(X, y, 0.1, budgets=(2, 3), delta_factor=0.5)
    none, _ = KB.replay(X, y, 0.1, budgets=(2, 3), transfer=False)
    assert KB.max_error(lib, half) > 1e-4
    assert KB.max_error(lib, none) > 1e-4
    other, _ = KB.replay(X, y, 0.1, budgets=(2, 3), rule="min_abs")   # the other rule differs
    assert KB.max_error(lib, other) > 1e-4


def test_budget_max_error_flags_different_support_vectors():
    lib = [{1: {0: 0.5}, -1: {1: 0.2}}]
    assert KB.max_error(lib, [{1: [(0, 0.5)], -1: [(1, 0.2)]}]) == 0.0
    assert KB.max_error(lib, [{1: [(2, 0.5)], -1: [(1, 0.2)]}]) == math.inf


# ----------------------------------------------------------------------------- forgetting
def test_forgetting_direct_computation_matches_library_and_controls_fail():
    import sympy as sp
    X, y, Xf, yf = FM.stream(2, T=12)
    beta = sp.Rational(3, 4)
    lib = FM.library_prefixes(Xf, yf, 0.5, None, "m", 0.75)
    e_mom, e_w = FM.errors(lib, FM.direct(X, y, sp.Rational(1, 2), None, "m", beta))
    assert e_mom < 1e-12 and e_w < 1e-12
    twice = FM.errors(lib, FM.direct(X, y, sp.Rational(1, 2), None, "m", beta, cov_power=2))
    plain = FM.errors(lib, FM.direct(X, y, sp.Rational(1, 2), None, "m", sp.Integer(1)))
    assert max(twice) > 1e-4 and max(plain) > 1e-4
    assert np.abs(lib[-1][0]).max() > 1e-3


def test_discounted_moments_closed_form():
    import sympy as sp
    xs = [[sp.Integer(1), sp.Integer(0)], [sp.Integer(3), sp.Integer(2)]]
    W, xbar, Sigma = FM.discounted_moments(xs, sp.Rational(1, 2))
    assert W == sp.Rational(3, 2)                           # 1/2 + 1
    assert xbar == [sp.Rational(7, 3), sp.Rational(4, 3)]   # (x1/2 + x2) / W
    # normalized weights 1/3, 2/3; d1 = -4/3, d2 = 2/3 in coordinate 0:
    # Sigma_00 = (1/3)(16/9) + (2/3)(4/9) = 8/9
    assert Sigma[0][0] == sp.Rational(8, 9)
    rec = FM.paper_recursions(xs, [1, 1])[-1][1]
    _, xb1, S1 = FM.discounted_moments(xs, sp.Integer(1))
    assert rec[0] == 2 and rec[1] == xb1 and rec[2] == S1


# ----------------------------------------------------------------------------- FD
def _fd_stream(seed=0, n=240, p=20):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) * np.geomspace(1.0, 0.05, p)
    return X, (rng.random(n) < 0.2).astype(int)


def test_fd_replay_matches_library_and_invariant_holds():
    X, y = _fd_stream()
    r = 4
    B, cols, N, delta = SK._class_sketch(X, y, r)
    Bf = np.zeros((B.shape[0], X.shape[1]))
    Bf[:, cols] = B
    A = SK.sketch_rows(X[y == 0])
    assert A.shape[0] == N - 1
    np.testing.assert_allclose(A.T @ A, (X[y == 0] - X[y == 0].mean(0)).T
                               @ (X[y == 0] - X[y == 0].mean(0)), rtol=1e-10, atol=1e-10)
    Bm, dm = SK.fd_replay(A, r)
    assert abs(dm - delta) <= 1e-9 * dm and dm > 0
    np.testing.assert_allclose(Bf.T @ Bf, Bm.T @ Bm, atol=1e-9 * np.linalg.norm(A, 2) ** 2)
    assert SK._dense_gram_error(A, Bf) <= delta * (1 + 1e-9)
    Bs, ds = SK.fd_replay(A, r, "smallest")                  # the negative control
    assert SK._dense_gram_error(A, Bs) > 2 * ds
    Bo, do = SK.fd_replay(A, r, "r-1")
    assert abs(do - delta) > 1e-3 * delta


def test_fd_check_rows_pass_and_controls_fail():
    recs = SK.check_fd("quick", 1, with_data=False)
    names = {r.name for r in recs}
    assert "FD invariant ||A'A-B'B||_2 <= sum(delta) [gaussian decaying]" in names
    assert "NEG FD invariant, smallest-eigenvalue shrink [gaussian decaying]" in names
    assert not _bad_rows(recs)
    assert all(r.outcome == "FAIL" for r in recs if r.negative)


# ----------------------------------------------------------------------------- Theorem 5
def test_theorem5_read_back_pins_the_sqrt_term():
    c_b, c_s = T5.read_back()
    assert c_b == pytest.approx(2.0, rel=1e-12) and c_s == pytest.approx(1.0, rel=1e-9)
    wrong, _ = T5.read_back(bound_fn=lambda lam, T, L: 2 * (4 + lam) / lam
                            + math.sqrt((4 + lam) * T * L / lam))
    assert wrong == pytest.approx(1.0)
    linear, _ = T5.read_back(bound_fn=lambda lam, T, L: 2 * (4 + lam) / lam + 2 * L)
    assert abs(linear - 2.0) > 0.1
    with MU._applied(_mutant("t5_sqrt"), {}):
        assert abs(T5.read_back()[0] - 2.0) > 0.5
    assert T5.read_back()[0] == pytest.approx(2.0, rel=1e-12)


# ----------------------------------------------------------------------------- evidence
def test_evidence_labels_and_counts(tmp_path):
    rows = [R.upper_bound("m", "", 1, 2), R.upper_bound("m neg", "", 3, 2, negative=True),
            R.identity("d", "", 0, 0, evidence="derivation"),
            R.identity("d neg", "", 1, 0, negative=True, evidence="derivation")]
    assert [r.evidence for r in rows] == ["measured", "measured", "derivation", "derivation"]
    c = R.summary_counts(rows)
    assert (c["measured"], c["measured_negative"], c["derivation"],
            c["derivation_negative"], c["errors"]) == (1, 1, 1, 1, 0)
    assert "1 measured checks (+ 1 negative controls) and 1 derivations" in R.summary_text(rows)
    assert "[derivation]" in R.format_line(rows[2]) and "[derivation]" not in R.format_line(rows[0])
    with pytest.raises(ValueError, match="evidence"):
        R.identity("x", "", 0, 0, evidence="proof")
    report, _ = R.write_report(rows, {}, tmp_path, profile="quick", seed=0)
    text = report.read_text()
    assert "| evidence |" in text and R.EVIDENCE_LEGEND in text and "| derivation |" in text


def test_report_captions_every_figure(tmp_path, monkeypatch):
    """A figure saved with a caption has it under its embed; one saved without gets a
    caption naming the row that shows it; the figure list in results.json carries both."""
    import json

    R.use_agg()
    import matplotlib.pyplot as plt

    monkeypatch.setattr(R, "FIGURE_CAPTIONS", {})
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    named = R.save_figure(fig, tmp_path, "with_caption", caption="What it shows,\n and how.")
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    bare = R.save_figure(fig, tmp_path, "without_caption")
    rows = [R.upper_bound("row one", "x <= 2", 1, 2, figures=[named]),
            R.upper_bound("row two", "y <= 3", 1, 3, figures=[bare])]
    report, results = R.write_report(rows, {}, tmp_path, profile="quick", seed=0)
    lines = report.read_text().splitlines()
    i = lines.index(f"![{named}]({named})")
    assert lines[i + 2] == f"*Figure 1 ({named}).* What it shows, and how."
    j = lines.index(f"![{bare}]({bare})")
    assert lines[j + 2].startswith(f"*Figure 2 ({bare}).*") and "row two (y <= 3)" in lines[j + 2]
    caps = json.loads(results.read_text())["figure_captions"]
    assert caps[named] == "What it shows, and how." and "row two" in caps[bare]


def test_symbolic_rows_are_derivations():
    recs = SK.check_lipschitz_symbolic(0)
    assert {r.evidence for r in recs} == {"derivation"}
    assert any(r.negative for r in recs)


# ----------------------------------------------------------------------------- mutants
def test_new_mutants_listed_and_applicable():
    names = [m.name for m in MU.MUTANTS]
    assert set(NEW_MUTANTS) <= set(names) and len(names) == len(set(names))
    assert all(MU.applicable(_mutant(n)) == "" for n in NEW_MUTANTS)
    with pytest.raises(LookupError, match="occurs 0 times"):
        MU.patched_reference("sosl._core._okauc_ref", "no such line", "x")


@pytest.mark.parametrize("name", ["kernel_delta_half", "fd_smallest"])
def test_routed_passes_equal_the_typed_ones_unless_mutated(name):
    """The routing itself changes nothing (the reference agrees with the typed pass); only
    the patched line does."""
    import scipy.sparse as sp

    from sosl import OKAUCM
    from sosl._core import _okauc, _sketch
    from sosl.sketch import SketchedOAUCM
    rng = np.random.default_rng(0)
    X = rng.normal(size=(90, 4))
    y = (rng.random(90) < 0.4).astype(int)
    if name == "kernel_delta_half":
        mod, attr, via = _okauc, "kernel_pass", MU.kernel_pass_via

        def fit():
            return OKAUCM(lam=0.1, budget=(3, 5)).fit(X, y).dual_coef_
    else:
        mod, attr, via = _sketch, "sketch_pass", MU.sketch_pass_via
        Xs = sp.random(90, 30, density=0.2, random_state=1, format="csr")

        def fit():
            return np.r_[SketchedOAUCM(lam=0.1, rank=3, sketch="fd",
                                       max_columns=None).fit(X, y).coef_[0],
                         SketchedOAUCM(lam=0.1, rank=3, max_columns=None).fit(Xs, y).coef_[0]]
    ref = fit()
    module, old, new = MU._ROUTES[name]
    orig = getattr(mod, attr)
    got = {}
    for label, line in (("same", old), ("mutated", new)):
        setattr(mod, attr, via(MU.patched_reference(module, old, line)))
        try:
            got[label] = fit()
        finally:
            setattr(mod, attr, orig)
    assert getattr(mod, attr) is orig
    np.testing.assert_allclose(got["same"], ref, rtol=1e-10, atol=1e-12)
    assert np.abs(got["mutated"] - ref).max() > 1e-4


def test_forget_twice_acts_only_under_forgetting():
    from sosl import OAUCM
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 3))
    y = (rng.random(40) < 0.4).astype(int)
    plain = OAUCM(lam=0.5).fit(X, y).coef_
    forget = OAUCM(lam=0.5, forgetting=0.8).fit(X, y).coef_
    with MU._applied(_mutant("forget_twice"), {}):
        np.testing.assert_allclose(OAUCM(lam=0.5).fit(X, y).coef_, plain, rtol=1e-12)
        assert np.abs(OAUCM(lam=0.5, forgetting=0.8).fit(X, y).coef_ - forget).max() > 1e-4
    np.testing.assert_array_equal(OAUCM(lam=0.5, forgetting=0.8).fit(X, y).coef_, forget)


@pytest.mark.parametrize("name,run", [
    ("kernel_delta_half", lambda: KB.run("quick", 0, None)),
    ("forget_twice", lambda: FM.run("quick", 0, None)),
    ("fd_smallest", lambda: SK._fd_replay_records("small", *_fd_stream(), 4, "", 0)),
])
def test_new_checks_catch_their_mutant(name, run, capsys):
    recs = run()
    assert not _bad_rows(recs) and any(r.negative for r in recs)
    if name == "forget_twice":
        assert [r.evidence for r in recs].count("derivation") == 1
    with MU._applied(_mutant(name), {}):
        bad = _bad_rows(run())
    assert bad, f"{name} survived"
    capsys.readouterr()
