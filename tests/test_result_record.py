"""The result record: ``--export-record`` keeps the test rows and one oracle-ceiling row per
run, and ``--report-only`` on the record rewrites the same tables as the full cache; the
record committed under ``data/results/`` regenerates the committed tables exactly."""

import shutil
from pathlib import Path

import pytest

import sosl.experiments as ex
from sosl.experiments.__main__ import main
from sosl.experiments.cache import read_cache

RECORDS = sorted(Path(__file__).resolve().parents[1].joinpath("data", "results").glob(
    "*/rows.csv"))
SMALL = dict(n_repeats=1, n_folds=2, inner_folds=2, progress=False)


def test_record_rewrites_the_tables_of_the_full_cache(tmp_path):
    full, rec = tmp_path / "full", tmp_path / "record"
    ex.run_experiment(["synthetic"], ["OAUC-M", "PA-I"], grid="quick", out=full,
                      ceilings=True, references=[], **SMALL)
    proto = "1x2/2"
    before = {p.name: p.read_text() for p in full.glob("table*_quick.*")}
    assert before
    assert main(["--out", str(full), "--grid", "quick", "--repeats", "1", "--folds", "2",
                 "--inner-folds", "2", "--export-record", str(rec)]) == 0
    rows = read_cache(rec / "rows.csv")
    kinds = {r["kind"] for r in rows}
    assert kinds == {"test", "ceiling"}
    assert sum(r["kind"] == "test" for r in rows) == 2 * 2       # 2 learners x 2 runs
    assert len(rows) < len(read_cache(full / "rows.csv")) / 3   # compact
    after = {p.name: p.read_text() for p in rec.glob("table*_quick.*")}
    assert after == before
    # the mutant: a record without its ceiling rows loses the ceiling table
    lines = (rec / "rows.csv").read_text().splitlines(True)
    (rec / "rows.csv").write_text("".join([lines[0]] + [ln for ln in lines[1:]
                                                         if ln.startswith("test,")]))
    ex.runner.report_from_cache(rec, "quick", protocol=proto)
    assert (rec / "table2_quick.md").read_text() != before["table2_quick.md"]


def test_export_record_refuses_an_empty_cache(tmp_path, capsys):
    assert main(["--out", str(tmp_path), "--export-record", str(tmp_path / "r")]) == 2
    assert "no test rows" in capsys.readouterr().err


@pytest.mark.parametrize("record", RECORDS, ids=lambda p: p.parent.name)
def test_committed_record_regenerates_the_committed_tables(record, tmp_path):
    committed = {p.name: p.read_text() for p in record.parent.glob("table*.*")}
    assert committed, f"{record.parent} holds no tables"
    work = tmp_path / "r"
    shutil.copytree(record.parent, work)
    for p in work.glob("table*.*"):
        p.unlink()
    grid = next(iter(committed)).split("_", 1)[1].rsplit(".", 1)[0]
    ex.runner.report_from_cache(work, grid)
    assert {p.name: p.read_text() for p in work.glob("table*.*")} == committed
