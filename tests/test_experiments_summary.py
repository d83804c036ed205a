"""A runner that tells: valid-domain grids, divergences caught, the run summary, the legend."""

import csv
import json

import numpy as np
import pytest

import sosl
from sosl import experiments as ex
from sosl.experiments import protocol, runner
from sosl.experiments.algorithms import ALGORITHMS, AlgorithmSpec

SMALL = dict(n_repeats=1, n_folds=2, inner_folds=2)


def test_koil_grid_stays_inside_its_domain():
    koil = ALGORITHMS["KOIL"]
    for grid, n_eta in (("coarse", 5), ("full", 10), ("sparse", 2)):
        points = ex.grid_points(koil, grid)
        n_exps = len(ex.GRIDS[grid])
        assert len(points) == n_eta * n_exps
        assert all(0 < p["eta"] < 1 for p in points)
        assert {p["sigma"] for p in points} == {2.0 ** e for e in ex.GRIDS[grid]}
        for p in points:  # the constructor's own check accepts every point left
            assert ex.check_point(koil, p) is None
    msgs = ex.grid_restrictions(koil, "coarse")
    assert len(msgs) == 1                      # one message for the one constraint on eta
    assert msgs[0].startswith("KOIL: eta = 2^0, 2^2, 2^4, 2^6, 2^8, 2^10 left out")
    assert "(6 of 11 values)" in msgs[0] and "'eta' parameter of KOIL must be" in msgs[0]
    assert ex.check_point(koil, {"eta": 1.0, "sigma": 1.0}) is not None
    assert ex.grid_restrictions(ALGORITHMS["OAUC-M_c"], "coarse") == []
    assert ex.grid_label(koil, "coarse") == "coarse"


class _Tied(sosl.OAUCM):
    """A learner whose domain ties two parameters: lam * eta < 1."""

    def _check_params(self):
        super()._check_params()
        if self.eta is not None and self.lam * self.eta >= 1:
            raise ValueError(f"lam * eta must be < 1, got {self.lam * self.eta}")


def test_a_constraint_tying_two_parameters_is_counted(monkeypatch):
    monkeypatch.setattr(sosl, "Tied", _Tied, raising=False)
    spec = AlgorithmSpec("Tied", 2, "Tied", ("lam", "eta"))
    points = ex.grid_points(spec, [-1, 0, 1])
    assert len(points) == 9 - 6                  # lam * eta < 1 keeps 3 of the 9 points
    assert all(p["lam"] * p["eta"] < 1 for p in points)
    assert ex.grid_restrictions(spec, [-1, 0, 1]) == [
        "Tied: 6 of 9 grid points left out: lam * eta must be < 1"]


class _Odd(sosl.OAUCM):
    """Scores by lam: 2^2 gives NaN scores (a finite model), 2^-2 reversed scores."""

    def decision_function(self, X):
        s = super().decision_function(X)
        if self.lam == 4.0:
            s = s.copy()
            s[::7] = np.nan
            s[1::7] = np.inf
        elif self.lam == 0.25:
            s = -s
        return s


class _Blows(sosl.OAUCM):
    def fit(self, X, y):
        raise FloatingPointError("OAUCM: the state 'w_' became non-finite during the pass")


class _Broken(sosl.OAUCM):
    def fit(self, X, y):
        raise ValueError("something else")


@pytest.fixture
def fakes(monkeypatch):
    for name, cls in (("Odd", _Odd), ("Blows", _Blows), ("Broken", _Broken)):
        monkeypatch.setattr(sosl, name, cls, raising=False)
        monkeypatch.setitem(ALGORITHMS, name, AlgorithmSpec(name, 2, name, ("lam",),
                                                            {"eta": None}, in_paper=False))


def test_every_failure_is_classified(fakes):
    X, y = runner.get_data("synthetic")
    tr, te = np.arange(1500), np.arange(1500, 2000)
    auc, err = protocol._fit_auc(ALGORITHMS["Odd"], {"lam": 4.0}, X, y, tr, te, 0)
    n_bad = len(range(0, 500, 7)) + len(range(1, 500, 7))
    assert auc == 0.0 and err == f"diverged: {n_bad} of 500 test scores are not finite"
    auc, err = protocol._fit_auc(ALGORITHMS["Blows"], {"lam": 1.0}, X, y, tr, te, 0)
    assert auc == 0.0 and err.startswith("diverged: FloatingPointError")
    auc, err = protocol._fit_auc(ALGORITHMS["Broken"], {"lam": 1.0}, X, y, tr, te, 0)
    assert auc == 0.0 and err == "failed: ValueError: something else"
    auc, err = protocol._fit_auc(ALGORITHMS["KOIL"], {"eta": 2.0, "sigma": 1.0}, X, y, tr, te, 0)
    assert auc == 0.0 and err.startswith("invalid: The 'eta' parameter of KOIL must be")
    auc, err = protocol._fit_auc(ALGORITHMS["Odd"], {"lam": 1 / 64}, X, y, tr, te, 0)
    assert 0.7 < auc < 1 and err == ""
    kinds = {"": "", "diverged: x": "diverged", "invalid: x": "invalid", "failed: x": "failed",
             "FloatingPointError: state": "diverged",            # rows cached before the prefixes
             "ValueError: y_score contains NaN or infinity.": "diverged",
             "ValueError: eta must be < 1": "failed"}
    assert {e: ex.error_kind(e) for e in kinds} == kinds


def test_the_summary_counts_divergences_and_edge_selections(fakes, tmp_path):
    logged = []
    s = ex.run_experiment(["synthetic"], ["Odd", "OAUC-M", "KOIL"], grid="quick", out=tmp_path,
                          progress=False, log=logged.append, **SMALL)
    recs = {r["algorithm"]: r for r in s["report"]}
    odd = recs["Odd"]
    assert odd["cv_tasks"] == 2 * 3 and odd["runs"] == 2
    assert odd["diverged"] == 2 and odd["diverged_points"] == 1      # lam = 2^2, both runs
    assert odd["invalid"] == odd["failed"] == odd["refits_failed"] == 0
    assert odd["edges"] == {"lam": (2, 0)}             # 2^-6 wins: 2^-2 scores reversed
    tests = [r for r in s["test_rows"] if r["algorithm"] == "Odd"]
    assert {json.loads(r["params"])["lam"] for r in tests} == {2.0 ** -6}
    koil = recs["KOIL"]
    assert koil["grid_points"] == 6 and koil["left_out"] == 3 and koil["cv_tasks"] == 12
    text = s["summary_text"]
    assert logged[-1] == text and text.startswith("Run summary: grid quick, protocol 1x2/2")
    assert logged[0].startswith("grid: KOIL: eta = 2^2 left out of the grid")
    warnings = [ln for ln in text.splitlines() if ln.startswith("warning: synthetic Odd")]
    assert len(warnings) == 2
    assert "2 of 6 inner-CV tasks diverged at 1 grid points" in warnings[0]
    assert "lam=2^2" in warnings[0] and "not finite" in warnings[0]
    assert "lam selected at the lower grid edge 2^-6 in 2 of 2 runs" in warnings[1]
    assert "| synthetic | Odd | 3 (0) | 6 | 2 (1 pts) | 0 | 0 | 0 | 2 | lam 2/0 |" in text
    assert (tmp_path / "summary_quick.md").read_text() == text + "\n"
    # the same summary from the cache alone
    again, _ = ex.run_summary(ex.load_rows(tmp_path), ["synthetic"], ["Odd", "OAUC-M", "KOIL"],
                              "quick", protocol="1x2/2")
    assert again == text


def test_report_gives_three_spreads_and_a_legend(tmp_path):
    rng = np.random.default_rng(3)
    aucs = rng.uniform(0.78, 0.86, size=20)
    rows = [{"dataset": "fourclass", "algorithm": "OAUC-M", "auc": a, "run": i,
             "protocol": "4x5/5"} for i, a in enumerate(aucs)]
    ex.report(rows, tmp_path, suffix="_t")
    with open(tmp_path / "table2_t.csv", newline="") as f:
        rec = next(csv.DictReader(f))
    v = 100 * aucs
    std = np.std(v, ddof=1)
    means = v.reshape(4, 5).mean(axis=1)     # runs r*5 + f: one row per repetition
    assert float(rec["auc_std"]) == round(std, 2)
    assert float(rec["std_of_partition_means"]) == round(np.std(means, ddof=1), 2)
    assert float(rec["auc_sem"]) == round(std / np.sqrt(20), 2)
    assert float(rec["ratio_std_runs"]) == round(std / 1.14, 2)   # the paper's std: 1.14
    md = (tmp_path / "table2_t.md").read_text()
    assert "`!` after `d`: |d| exceeds two standard errors of the difference" in md
    assert "`v` after the paper's value" in md and "`/ -`" in md
    assert "| fourclass | OAUC-M | 20 |" in md and "Median ratio to the paper's std" in md


def test_marks_go_both_ways(tmp_path):
    """`!` compares the gap with the standard errors of both means (not our std over
    runs; the paper's figure is its standard error, the std reading is kept beside), and
    `v` marks a paper value far *below* ours (beyond the paper's std plus our standard
    error); the mutant rule of the old legend (|d| > our std) would miss the first cell."""
    rng = np.random.default_rng(3)
    # fourclass OAUC-M: the paper has 83.30 +- 1.14; ours near 81.8 with a wide spread
    wide = 0.818 + 0.03 * rng.standard_normal(20)
    # diabetes OAUC-M: the paper has 83.25 +- 0.92; ours near 88 with a narrow spread
    high = 0.88 + 0.002 * rng.standard_normal(20)
    rows = [{"dataset": d, "algorithm": "OAUC-M", "auc": a, "run": i, "protocol": "4x5/5"}
            for d, v in (("fourclass", wide), ("diabetes", high)) for i, a in enumerate(v)]
    ex.report(rows, tmp_path, suffix="_t")
    with open(tmp_path / "table2_t.csv", newline="") as f:
        recs = {r["dataset"]: r for r in csv.DictReader(f)}
    four, dia = recs["fourclass"], recs["diabetes"]
    d4, s4, se4 = float(four["diff"]), float(four["auc_std"]), float(four["auc_sem"])
    assert abs(d4) < s4                              # the old rule: not flagged
    # the gap beats 2 s.e. of both means were the paper's 1.14 a std over its 20 runs ...
    assert four["flagged_std_reading"] == "True"
    assert abs(d4) > 2 * np.hypot(se4, 1.14 / np.sqrt(20))
    # ... but not with the paper's figure read as the standard error it has the size of
    assert four["flagged"] == "False" and abs(d4) <= 2 * np.hypot(se4, 1.14)
    assert four["paper_far_below"] == "False"
    assert dia["paper_far_below"] == "True" and float(dia["diff"]) > 0.92
    md = (tmp_path / "table2_t.md").read_text()
    assert "83.25 ± 0.92v (" in md and "83.30 ± 1.14 (" in md
