"""Oracle ceilings and batch references: bounds by construction, cache, marks, command line."""

import csv
import json

import numpy as np
import pytest

from sosl import experiments as ex
from sosl.experiments import runner
from sosl.experiments.__main__ import build_parser
from sosl.experiments.algorithms import REFERENCES

SMALL = dict(n_repeats=1, n_folds=2, inner_folds=2)
ALGOS = ["OAUC-M_c"]


def _rows(out):
    with open(out / "rows.csv", newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def ceiling_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("ceil")
    s = ex.run_experiment(["synthetic"], ALGOS, grid="quick", out=out, progress=False,
                          log=lambda *_: None, ceilings=True, **SMALL)
    return out, s


def test_references_registry_and_factories():
    assert ex.default_references({2}) == ["LogReg"]
    assert ex.default_references({3}) == ["SVC", "OKAUC-M_inf"]
    svc = REFERENCES["SVC"].make(C=2.0, sigma=4.0)
    assert type(svc).__name__ == "SVC" and svc.gamma == 1 / 16 and svc.kernel == "rbf"
    unbounded = ex.spec_of("OKAUC-M_inf").make(lam=0.5, sigma=1.0)
    assert unbounded.budget is None and unbounded.eta is None and unbounded.gamma == 1.0
    assert ex.check_point(REFERENCES["LogReg"], {"C": 0.25}) is None
    assert ex.check_point(REFERENCES["LogReg"], {"C": -1.0}) is not None
    assert [s.name for s in ex.resolve_algorithms(["OAUC-M", "SVC"])] == ["OAUC-M", "SVC"]
    assert "LogReg" not in {s.name for s in ex.resolve_algorithms()}   # not by default
    with pytest.raises(ValueError, match="unknown batch reference 'SVM'"):
        ex.run_experiment(["synthetic"], ALGOS, references=["SVM"], progress=False)


def test_oracle_bounds_every_selected_run(ceiling_run):
    out, s = ceiling_run
    rows = _rows(out)
    tests = [r for r in rows if r["kind"] == "test"]
    assert {r["algorithm"] for r in tests} == {"OAUC-M_c", "LogReg"}  # Table 2's reference
    ceil = ex.oracle_ceilings(ex.load_rows(out), "quick", protocol="1x2/2")
    n_points = {"OAUC-M_c": 9, "LogReg": 3}
    for t in tests:
        a, run = t["algorithm"], int(t["run"])
        oracle = {r["params"]: float(r["auc"]) for r in rows if r["kind"] == "oracle"
                  and r["algorithm"] == a and int(r["run"]) == run}
        assert len(oracle) == n_points[a]
        assert len(set(oracle.values())) > 1                     # not a constant column
        # the selected point's oracle row is its test row, bit for bit
        assert oracle[t["params"]] == float(t["auc"])
        assert max(oracle.values()) >= float(t["auc"])
        assert ceil[("synthetic", a)][run] == max(oracle.values())
    with open(out / "table2_quick.csv", newline="") as f:
        recs = {r["algorithm"]: r for r in csv.DictReader(f)}
    for a, rec in recs.items():
        mine = [100 * float(t["auc"]) for t in tests if t["algorithm"] == a]
        best = [100 * v for v in ceil[("synthetic", a)].values()]
        assert float(rec["oracle_mean"]) == round(np.mean(best), 2)
        assert float(rec["oracle_mean"]) >= float(rec["auc_mean"]) == round(np.mean(mine), 2)
    md = (out / "table2_quick.md").read_text()
    assert "| dataset | OAUC-M_c | LogReg |" in md and "Oracle ceilings" in md
    assert "`LogReg`: batch reference, run by the same protocol" in md
    assert "`^` after the paper's value" in md


def test_oracle_rows_are_cached_and_resumed(ceiling_run, tmp_path):
    out, s = ceiling_run
    work = tmp_path / "copy"
    work.mkdir()
    (work / "rows.csv").write_text((out / "rows.csv").read_text())
    kw = dict(grid="quick", out=work, progress=False, log=lambda *_: None, **SMALL)
    assert ex.run_experiment(["synthetic"], ALGOS, ceilings=True, **kw)["new_rows"] == 0
    md = (work / "table2_quick.md").read_text()
    lines = (work / "rows.csv").read_text().splitlines(keepends=True)
    assert all('"oracle"' in ln or ln.startswith("oracle,") for ln in lines[-4:])
    (work / "rows.csv").write_text("".join(lines[:-4]))       # an interrupted oracle stage
    # without the flag the incomplete ceilings are not shown (and nothing is computed)
    s2 = ex.run_experiment(["synthetic"], ALGOS, references=["LogReg"], **kw)
    assert s2["new_rows"] == 0 and "Oracle ceilings" in (work / "table2_quick.md").read_text()
    with open(work / "table2_quick.csv", newline="") as f:
        assert any(r["oracle_mean"] == "" for r in csv.DictReader(f))
    s3 = ex.run_experiment(["synthetic"], ALGOS, ceilings=True, **kw)
    assert s3["new_rows"] == 4 and {r["kind"] for r in s3["test_rows"]} == {"test"}
    assert (work / "table2_quick.md").read_text() == md
    # the report from the cache alone shows the ceilings and the reference
    paths = ex.report_from_cache(work, "quick", protocol="1x2/2", algorithms=ALGOS)
    assert str(work / "table2_quick.md") in paths
    assert (work / "table2_quick.md").read_text() == md


def _fake(dataset, algo, aucs):
    return [{"dataset": dataset, "algorithm": algo, "auc": a, "run": i, "protocol": "1x4/2"}
            for i, a in enumerate(aucs)]


def test_paper_above_ceiling_is_marked(tmp_path):
    rows = _fake("fourclass", "OAUC-M", [0.80, 0.81, 0.79, 0.80])      # paper 83.30 +- 1.14
    rows += _fake("diabetes", "OAUC-M", [0.81, 0.82, 0.82, 0.81])      # paper 83.25 +- 0.92
    rows += _fake("australian", "OAUC-M", [0.90, 0.91, 0.90, 0.91])    # paper 92.62 +- 0.93
    rows += _fake("ionosphere", "OAUC-M", [0.90, 0.91, 0.90, 0.91])    # paper 93.47 +- 1.05
    rows += _fake("fourclass", "LogReg", [0.82, 0.83, 0.82, 0.83])
    rows += _fake("fourclass", "Perceptron", [0.70, 0.71, 0.70, 0.71])  # paper 79.81 +- 2.05
    ceil = {("fourclass", "OAUC-M"): dict(enumerate([0.81, 0.82, 0.81, 0.82])),   # 81.50
            ("diabetes", "OAUC-M"): dict(enumerate([0.82, 0.83, 0.82, 0.83])),    # 82.50
            # exactly the paper's std below the paper: not marked (the mark is strict)
            ("australian", "OAUC-M"): dict(enumerate([0.9169, 0.9169, 0.9169, 0.9169])),
            # one run without its oracle: no ceiling
            ("ionosphere", "OAUC-M"): dict(enumerate([0.80, 0.80, 0.80])),
            ("fourclass", "LogReg"): dict(enumerate([0.84, 0.84, 0.84, 0.84])),
            ("fourclass", "Perceptron"): dict(enumerate([0.70, 0.71, 0.70, 0.71]))}
    ex.report(rows, tmp_path, suffix="_t", ceilings=ceil, grid="quick")
    with open(tmp_path / "table2_t.csv", newline="") as f:
        recs = {(r["dataset"], r["algorithm"]): r for r in csv.DictReader(f)}
    four, dia = recs[("fourclass", "OAUC-M")], recs[("diabetes", "OAUC-M")]
    assert (four["above_ceiling"], float(four["oracle_mean"])) == ("True", 81.5)
    assert float(four["paper_minus_oracle"]) == 1.8                     # 83.30 - 81.50 > 1.14
    assert (dia["above_ceiling"], float(dia["paper_minus_oracle"])) == ("False", 0.75)
    assert recs[("australian", "OAUC-M")]["above_ceiling"] == "False"
    assert recs[("ionosphere", "OAUC-M")]["oracle_mean"] == ""
    assert recs[("fourclass", "LogReg")]["above_ceiling"] == "False"
    md = (tmp_path / "table2_t.md").read_text()
    assert "80.00 ± 0.82 / 83.30 ± 1.14^ (-3.30!)" in md
    # below its ceiling: no ^; and within 2 sqrt(se^2 + 0.92^2) (the paper's 0.92 read as
    # its standard error): no ! (it had one when 0.92 was read as a std over 20 runs)
    assert "81.50 ± 0.58 / 83.25 ± 0.92 (-1.75)" in md
    assert dia["flagged"] == "False" and dia["flagged_std_reading"] == "True"
    assert "| fourclass | OAUC-M | 80.00 | 81.50 | 1.50 | 83.30 ± 1.14 | 1.80 ^ |" in md
    assert "4 of the 5 paper cells here have an oracle ceiling" in md
    assert ("Not reachable by this protocol on this data: 2 cells, whose paper mean exceeds "
            "the ceiling by more than the paper's std: fourclass Perceptron (paper 79.81 ± 2.05, "
            "ceiling 70.50, nothing searched: the ceiling is the one fit); fourclass OAUC-M "
            "(paper 83.30 ± 1.14, ceiling 81.50).") in md
    assert ("Reachable (paper mean at most the ceiling + the paper's std): 2 cells (2 of them "
            "with the paper's mean above the ceiling, by less than the paper's std)") in md
    assert ("LogReg (batch reference): within the paper's std of (or above) the best paper cell "
            "of its dataset on 1 of 1 datasets") in md      # 82.50 >= 83.30 - 1.14 (best cell)
    assert "that cell exceeds even LogReg's own ceiling by more than its std on 0 of 1" in md
    # without ceilings: no mark, no ceiling table
    ex.report(rows, tmp_path, suffix="_n")
    plain = (tmp_path / "table2_n.md").read_text()
    assert "1.14^" not in plain and "Oracle ceilings" not in plain and "`^`" not in plain


def test_command_line_flags():
    p = build_parser()
    a = p.parse_args(["--ceilings"])
    assert a.ceilings and a.references is None
    assert p.parse_args(["--references"]).references == []
    assert p.parse_args(["--references", "SVC"]).references == ["SVC"]
    assert p.parse_args(["--algorithms", "OAUC-M"]).ceilings is False
    assert json.dumps(runner.oracle_ceilings([], "quick")) == "{}"


def test_a_task_cached_twice_counts_once(ceiling_run, tmp_path):
    out, _ = ceiling_run
    lines = (out / "rows.csv").read_text().splitlines(keepends=True)
    tests = [ln for ln in lines if ln.startswith("test,")]
    (tmp_path / "rows.csv").write_text("".join(lines + tests))  # two calls ran the refits
    ex.report_from_cache(tmp_path, "quick", protocol="1x2/2")
    with open(tmp_path / "table2_quick.csv", newline="") as f:
        assert {int(r["n_runs"]) for r in csv.DictReader(f)} == {2}
    s = ex.run_experiment(["synthetic"], ALGOS, grid="quick", out=tmp_path, progress=False,
                          log=lambda *_: None, **SMALL)
    assert s["new_rows"] == 0 and len(s["test_rows"]) == 2
