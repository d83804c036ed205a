"""Sweeps around the record's selected points: the budget-100 refit is the record's own run,
the tables are a function of the sweep file, and the committed sweep rewrites its table."""

import os
import shutil
from pathlib import Path

import pytest

from sosl.experiments import sweep
from sosl.experiments.cache import read_cache

ROOT = Path(__file__).resolve().parents[1]
T3 = ROOT / "data" / "results" / "table3_sparse"
T2 = ROOT / "data" / "results" / "table2_coarse"
BUDGET = ROOT / "data" / "results" / "table3_budget"


def test_tasks_take_the_selected_point_of_each_run():
    tasks = sweep.budget_tasks(T3, ["fourclass"], "OKAUC-M", runs=range(2))
    assert len(tasks) == 2 * len(sweep.BUDGETS)
    rows = {(r["run"]): r for r in read_cache(T3 / "rows.csv")
            if r["kind"] == "test" and r["dataset"] == "fourclass"
            and r["algorithm"] == "OKAUC-M"}
    import json
    for t in tasks:
        assert t[6] == json.loads(rows[t[5]]["params"])
    sens = sweep.sensitivity_tasks(T2, ["fourclass"], ["OAUC-S"], runs=range(1))
    assert {t[3] for t in sens} == {"lam", "eta"} and len(sens) == 2 * 11


def test_budget_100_refit_is_the_records_run(tmp_path):
    """Budget 100 + 100 with the selected point is the record's test fit, bit for bit at
    the record's 6 decimals; budget None keeps every instance and scores differently."""
    d = os.environ.get("SOSL_DATA_DIR")
    if not d:
        pytest.skip("SOSL_DATA_DIR is not set")
    tasks = [t for t in sweep.budget_tasks(T3, ["fourclass"], "OKAUC-M", runs=range(1))
             if t[4] in (100, 20)]
    tasks.append(("budget", "fourclass", "OKAUC-M", "budget", 20, 0, tasks[0][6]))
    assert sweep.run_sweep(tasks, tmp_path, "budget", data_dir=d, log=lambda m: None) == 2
    got = {r["value"]: r["auc"] for r in read_cache(sweep.sweep_path(tmp_path, "budget"),
                                                    sweep.SWEEP_FIELDS, sweep._parse)}
    rec = next(r for r in read_cache(T3 / "rows.csv") if r["kind"] == "test"
               and r["dataset"] == "fourclass" and r["algorithm"] == "OKAUC-M"
               and r["run"] == 0)
    assert got["100"] == round(rec["auc"], 6)
    assert got["20"] != got["100"]                   # the mutant budget is seen
    assert sweep.run_sweep(tasks, tmp_path, "budget", data_dir=d, log=lambda m: None) == 0


SWEEPS = [(BUDGET, "budget", T3 / "table3_sparse.csv"),
          (ROOT / "data" / "results" / "table2_sensitivity", "sensitivity",
           T2 / "table2_coarse.csv")]


@pytest.mark.parametrize("where, study, table", SWEEPS, ids=[s[1] for s in SWEEPS])
def test_committed_sweep_rewrites_its_table(where, study, table, tmp_path):
    src = where / f"sweep_{study}.csv"
    if not src.exists():
        pytest.skip(f"no committed {src.name}")
    shutil.copy(src, tmp_path / src.name)
    out = sweep.sweep_tables(tmp_path / src.name, table, tmp_path / f"sweep_{study}.md")
    text = Path(out).read_text()
    assert text == (where / f"sweep_{study}.md").read_text()
    assert "| german |" in text or "| german" in text
    # the mutant: a row lost (the first, a scored one) changes a mean of the table
    lines = src.read_text().splitlines(True)
    assert ",invalid" not in lines[1]
    (tmp_path / src.name).write_text("".join(lines[:1] + lines[2:]))
    sweep.sweep_tables(tmp_path / src.name, table, tmp_path / "m.md")
    assert (tmp_path / "m.md").read_text() != text
