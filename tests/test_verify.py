"""Tests of the verification suite (verify/): the harness, the quick profile, the helpers."""

import json
import math
import sys
import textwrap

import numpy as np
import pytest

import verify
from sosl._core._losses_ref import psi_m, psi_s
from verify import _harness as H
from verify import _records as R
from verify._regret import (
    Comparator,
    adversarial_stream,
    growth_fits,
    labels,
    learner_losses,
    regret_curve,
)

ALL_CHECKS = {c.name for c in H.discover()}


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    """Every verify module once at its quick size; the tests below share this one run."""
    out = tmp_path_factory.mktemp("verify_quick")
    records, timings = H.run_checks("quick", 0, out)
    R.write_report(records, timings, out, profile="quick", seed=0)
    return records, timings, out


def test_every_module_is_a_check():
    assert {"lemma2", "lemma3", "lemma4", "theorem5", "theorem6", "kernel", "polk"} <= ALL_CHECKS
    assert all(c.run is not None for c in H.discover()), [c.import_error for c in H.discover()]


def test_quick_profile_all_as_expected(quick_run):
    records, _, _ = quick_run
    assert {r.check for r in records} == ALL_CHECKS
    bad = [(r.check, r.name, r.outcome, r.note[:300]) for r in records if not r.ok]
    assert not bad, bad
    assert all(r.outcome == "PASS" for r in records if not r.negative)


def test_every_check_has_a_failing_negative_control(quick_run):
    records, _, _ = quick_run
    for name in ALL_CHECKS:
        negs = [r for r in records if r.check == name and r.negative]
        assert negs, f"{name} has no negative control"
        assert all(r.outcome == "FAIL" for r in negs), name


def test_report_files_written(quick_run):
    records, _, out = quick_run
    report = (out / "report.md").read_text()
    assert "Closing note" in report and "negative control" in report
    assert R.RATIO_LEGEND in report and "measured / bound" in report
    data = json.loads((out / "results.json").read_text())
    assert len(data["records"]) == len(records) and data["all_ok"]
    figs = {f for r in records for f in r.figures}
    assert {"lemma2_worst_case_ratio.png", "lemma3_psi_vs_hinge.png", "lemma4_gradient_norms.png",
            "theorem6_regret.png", "theorem5_oaucs.png"} <= figs
    for f in figs:
        assert (out / f).stat().st_size > 1000
    # every embedded figure has a caption line under it, given where the figure is drawn
    lines = report.splitlines()
    embeds = [i for i, t in enumerate(lines) if t.startswith("![")]
    assert len(embeds) == len(figs)
    for i in embeds:
        name = lines[i][lines[i].index("(") + 1:-1]
        caption = lines[i + 2]
        assert caption.startswith("*Figure ") and f"({name}).*" in caption, caption
        assert caption == caption.strip() and len(caption.split()) > 15, caption
        assert R.FIGURE_CAPTIONS.get(name), f"{name} is saved without a caption"
        assert data["figure_captions"][name] == R.FIGURE_CAPTIONS[name]


def test_headline_figures_in_range(quick_run):
    records, _, _ = quick_run
    by = {r.name: r for r in records}
    assert by["Lemma 2 max ell(c)/psi_M over C"].measured <= 1 + 1e-9
    assert by["Lemma 2 max ell(c)/psi_M over C"].measured > 1 - 1e-6     # tight
    g = by["Lemma 4 max ||grad Psi_M||, paper C=3"].measured
    assert 1.9 < g <= 2 + 1e-9


# ----------------------------------------------------------------------------- harness
def test_record_constructors():
    assert R.upper_bound("a", "", 1.0, 2.0).outcome == "PASS"
    assert R.upper_bound("a", "", 1.0, 2.0).ratio == 0.5
    assert R.upper_bound("a", "", 3.0, 2.0).outcome == "FAIL"
    assert R.lower_bound("a", "", 3.0, 2.0).outcome == "PASS"
    r = R.identity("a", "", 1.0 + 1e-7, 1.0, rtol=1e-6)
    assert r.outcome == "PASS" and 0.09 < r.ratio < 0.11
    assert R.identity("a", "", 1.1, 1.0, rtol=1e-6).outcome == "FAIL"
    neg = R.upper_bound("a", "", 3.0, 2.0, negative=True)
    assert neg.outcome == "FAIL" and neg.ok
    assert not R.upper_bound("a", "", 1.0, 2.0, negative=True).ok
    assert "UNEXPECTED" in R.format_line(R.upper_bound("a", "", 1.0, 2.0, negative=True))
    assert not R.error_record("a", "b", "c").ok


def _drop_module(tmp_path, name, body):
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(body))


def test_discovery_and_broken_import_fails(tmp_path, monkeypatch, capsys):
    _drop_module(tmp_path, "zz_dummy_ok", """
        from verify import _records as R
        NAME = "zzok"
        TITLE = "dummy check"
        ORDER = 999
        def run(profile, seed, out_dir):
            return [R.upper_bound("dummy", "1 <= 2", 1, 2, seed=seed),
                    R.upper_bound("dummy neg", "3 <= 2", 3, 2, seed=seed, negative=True)]
        """)
    _drop_module(tmp_path, "zz_dummy_broken", """
        import sosl.no_such_module
        NAME = "zzbroken"
        def run(profile, seed, out_dir):
            raise AssertionError("must not be called")
        """)
    monkeypatch.setattr(verify, "__path__", list(verify.__path__) + [str(tmp_path)])
    for m in ("verify.zz_dummy_ok", "verify.zz_dummy_broken"):
        sys.modules.pop(m, None)
    names = {c.name for c in H.discover()}
    assert {"zzok", "zz_dummy_broken", "kernel", "polk"} <= names
    recs, _ = H.run_checks("quick", 0, tmp_path / "out", "zzok,zz_dummy_broken")
    out = capsys.readouterr().out
    assert "no_such_module" in " ".join(r.note for r in recs) and "ERROR" in out
    assert sorted((r.check, r.outcome) for r in recs) == [
        ("zz_dummy_broken", "ERROR"), ("zzok", "FAIL"), ("zzok", "PASS")]
    assert [r.ok for r in recs if r.check == "zz_dummy_broken"] == [False]


def test_unexpected_pass_of_negative_control_fails_the_run(tmp_path, monkeypatch):
    _drop_module(tmp_path, "zz_dummy_bad", """
        from verify import _records as R
        NAME = "zzbad"
        def run(profile, seed, out_dir):
            return [R.upper_bound("neg that passes", "1 <= 2", 1, 2, negative=True)]
        """)
    _drop_module(tmp_path, "zz_dummy_crash", """
        NAME = "zzcrash"
        def run(profile, seed, out_dir):
            raise RuntimeError("boom")
        """)
    monkeypatch.setattr(verify, "__path__", list(verify.__path__) + [str(tmp_path)])
    from verify.__main__ import main
    assert main(["--only", "zzbad", "--out", str(tmp_path / "o1")]) == 1
    assert main(["--only", "zzcrash", "--out", str(tmp_path / "o2")]) == 1
    rep = (tmp_path / "o2" / "report.md").read_text()
    assert "ERROR" in rep


def test_only_matching_nothing_is_a_cli_error(tmp_path, capsys):
    from verify.__main__ import main
    assert main(["--only", "no_such_check", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "matches no check" in err and len(err.strip().splitlines()) == 1


# ----------------------------------------------------------------------------- theorem 6 tools
def _brute_force_F(X, s, w, lam, loss, c):
    total = 0.0
    for t in range(X.shape[0]):
        S = X[:t][(s[:t] > 0) != (s[t] > 0)]
        L = 0.5 * lam * (w @ w)
        if len(S):
            a = s[t] * (X[t] - S.mean(axis=0))
            Sig = (S - S.mean(axis=0)).T @ (S - S.mean(axis=0)) / len(S)
            mu, s2 = w @ a, w @ Sig @ w
            L += c * (psi_m(mu, s2) if loss == "m" else psi_s(mu, s2))
        total += L
    return total


@pytest.mark.parametrize("loss,c", [("m", 1.0), ("s", 0.5)])
def test_comparator_running_sums_match_brute_force(loss, c):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(50, 3)) + 2.0                       # offset: tests the centering
    s = np.where(rng.random(50) < 0.3, 1.0, -1.0)
    w = rng.normal(size=3)
    comp = Comparator(X, s, 0.1, loss, c)
    val, g = comp.value_grad(w, 50)
    assert val == pytest.approx(_brute_force_F(X, s, w, 0.1, loss, c), rel=1e-10)
    h = 1e-6
    fd = np.array([(comp.value_grad(w + e, 50)[0] - comp.value_grad(w - e, 50)[0]) / (2 * h)
                   for e in np.eye(3) * h])
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-6)
    assert np.linalg.norm(g) > 1e-3
    # mutant: labels flipped -> different objective, must be detected
    mut = Comparator(X, -s, 0.1, loss, c).value_grad(w, 50)[0]
    assert abs(mut - _brute_force_F(X, s, w, 0.1, loss, c)) > 1e-3


def test_learner_step_mapping_matches_eq13_update():
    """c psi_S with step eta on the exact-gradient kernel == w -= eta (lam w + eq. (13))."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(40, 3))
    X /= np.linalg.norm(X, axis=1).max()
    s = np.where(rng.random(40) < 0.4, 1.0, -1.0)
    lam, eta = 0.3, 0.05
    _, w_k = learner_losses(X, s, lam, eta, "s", 0.5)
    w = np.zeros(3)
    for t in range(40):
        opp = (s[:t] > 0) != (s[t] > 0)
        g = lam * w
        if opp.any():
            S = X[:t][opp]
            xb = S.mean(axis=0)
            Sig = (S - xb).T @ (S - xb) / len(S)
            a = s[t] * (X[t] - xb)
            g = g + (1 - w @ a) * (-a) + Sig @ w                  # eq. (13) as printed
        w = w - eta * g
    np.testing.assert_allclose(w_k, w, rtol=1e-10, atol=1e-12)
    _, w_wrong = learner_losses(X, s, lam, eta, "s", 1.0)       # no mapping: differs
    assert np.linalg.norm(w_wrong - w) > 1e-6


def test_regret_curve_contract():
    rng = np.random.default_rng(5)
    X, y = adversarial_stream(400, rng)
    rc = regret_curve(X, y, 1.0, [10, 100, 400])
    for k in ("T", "regret", "bound18", "bound8", "err", "regret_raw"):
        assert rc[k].shape == (3,)
    assert np.all(rc["regret"] >= rc["regret_raw"])
    assert np.all(rc["regret"] <= rc["bound8"])
    np.testing.assert_allclose(rc["bound18"] / rc["bound8"], 18 / 8)
    with pytest.raises(ValueError, match=r"\|\|x_t\|\| <= 1"):
        regret_curve(2.0 * X, y, 1.0)
    with pytest.raises(ValueError, match="lam"):
        regret_curve(X, y, 0.0)


def test_growth_criterion_separates_log_from_sqrt():
    T = np.geomspace(10, 3e4, 20)
    assert growth_fits(T, 0.5 * np.log(T) + 1.0)[0] < 0.35
    assert growth_fits(T, 0.5 * np.sqrt(T))[0] > 0.35
    assert growth_fits(T, 0.01 * T)[0] > 0.35
    a, r2l, r2s, _, _ = growth_fits(T, 2.0 + 0.5 * np.log(T))
    assert r2l > 0.999 and r2s < r2l and math.isfinite(a)
    assert labels(np.array([0, 1, 1])).tolist() == [-1.0, 1.0, 1.0]


# ----------------------------------------------------------------------------- new checks
def test_theorem6_constant_derivation_pins_the_code(monkeypatch):
    from verify import _regret as RG
    from verify import theorem6_constant as T6C
    steps, derived = T6C.derive()
    assert all(e == 0 for e in steps.values()), steps
    assert derived["paper"] == 18.0 and derived["sharpened"] == 8.0 and derived["sharper"] == 2
    assert all(v == pytest.approx(18.0, rel=1e-12) for v in T6C.code_constants()["paper"])
    monkeypatch.setattr(RG, "C_PAPER", 3.0 / math.sqrt(10.0))      # 18 -> 1.8
    assert max(abs(v - 18.0) for v in T6C.code_constants()["paper"]) > 1.0


def test_greedy_adversary_reaches_a_quarter_of_the_sharper_bound():
    from verify import theorem6_constant as T6C
    X, y = T6C.greedy_stream(40, 2.0)
    assert np.linalg.norm(X, axis=1).max() <= 1 + 1e-12 and set(y) == {0, 1}
    rc = regret_curve(X, y, 2.0, [5, 40])
    ratio = rc["regret"] * 2.0 / (T6C.SHARPER * np.array([T6C.harmonic(t - 1) for t in rc["T"]]))
    assert np.all(ratio <= 1.0) and ratio.max() >= 0.25
    step_err, g_max, _ = T6C.proof_terms(X, y, 2.0)
    assert step_err < 1e-12 and g_max <= 2 + 1e-12


def test_replay_matches_library_and_catches_a_shifted_step():
    import sympy as sp

    from verify import algorithm1_replay as AR
    X, y, Xf, yf = AR.stream(1, T=12)
    lam = sp.Rational(1, 2)
    lib = AR.library_prefix_fits(Xf, yf, 0.5, None, "m")
    assert AR.max_scaled_error(lib, AR.replay(X, y, lam, None, "m")[0])[0] < 1e-12
    assert AR.max_scaled_error(lib, AR.replay(X, y, lam, None, "m", step_shift=1)[0])[0] > 1e-3
    assert np.abs(lib).max() > 1e-3


def test_mutants_are_applied_everywhere_and_undone():
    from sosl import OAUCM
    from sosl._core import _losses_ref as LR
    from verify import lemma2_worst_case as L2
    from verify import mutants as MU
    orig = LR.psi_m
    m = next(x for x in MU.MUTANTS if x.name == "psi_m_root")
    box = {}
    with MU._applied(m, box):
        assert LR.psi_m is not orig and L2.psi_m is LR.psi_m
        assert abs(float(L2.psi_m(1.0, 1.0)) - 0.505) < 1e-12
    assert LR.psi_m is orig and L2.psi_m is orig and box["c"].calls == 1
    assert all(MU.applicable(x) == "" for x in MU.MUTANTS), [MU.applicable(x) for x in MU.MUTANTS]
    X = np.array([[0.5, 0.0], [0.0, 0.5], [0.2, 0.1], [-0.3, 0.2]])
    y = np.array([1, 0, 1, 0])
    ref = OAUCM(lam=1.0).fit(X, y).coef_
    before = OAUCM.__dict__.get("_run_pass")
    shift = next(x for x in MU.MUTANTS if x.name == "step_shift")
    with MU._applied(shift, {}):
        mutated = OAUCM(lam=1.0).fit(X, y).coef_
    assert np.abs(mutated - ref).max() > 1e-3
    np.testing.assert_array_equal(OAUCM(lam=1.0).fit(X, y).coef_, ref)
    assert OAUCM.__dict__.get("_run_pass") is before
