"""Tests of sosl.experiments: grids, registry, protocol, resumable parallel runner, tables."""

import csv
import os
import threading

import numpy as np
import pytest

import sosl
from sosl import experiments as ex
from sosl.experiments import protocol, runner
from sosl.experiments.__main__ import main as cli_main
from sosl.experiments.algorithms import ALGORITHMS, AlgorithmSpec

SMALL = dict(n_repeats=1, n_folds=2, inner_folds=2)


def test_grid_points_counts_and_values():
    m, mc = ALGORITHMS["OAUC-M"], ALGORITHMS["OAUC-M_c"]
    assert len(ex.grid_points(m, "full")) == 21
    full = ex.grid_points(mc, "full")
    coarse = ex.grid_points(mc, "coarse")
    assert len(full) == 441 and len(coarse) == 121
    assert {p["lam"] for p in full} == {2.0 ** e for e in range(-10, 11)}
    keys = {tuple(sorted(p.items())) for p in full}
    assert all(tuple(sorted(p.items())) in keys for p in coarse)  # coarse is a subset
    assert ex.grid_points(AlgorithmSpec("x", 2, "OAUCM"), "quick") == [{}]
    assert ex.grid_points(m, [0, 1]) == [{"lam": 1.0}, {"lam": 2.0}]
    wide = ex.grid_points(m, "wide")
    assert len(wide) == 31 and {p["lam"] for p in full} < {p["lam"] for p in wide}


def test_registry_names_and_skipping(monkeypatch):
    table2 = ["Perceptron", "PA-I", "OAM", "OL-UBAUC", "OAUC-S", "OAUC-M_c", "OAUC-M"]
    table3 = ["KOIL", "OKAUC-M", "OKAUC-S"]
    assert [a for a, s in ALGORITHMS.items() if s.in_paper and s.table == 2] == table2
    assert [a for a, s in ALGORITHMS.items() if s.in_paper and s.table == 3] == table3
    assert ALGORITHMS["OAUC-M"].make(lam=0.5).eta is None
    assert ALGORITHMS["OAUC-M_c"].make(lam=0.5, eta=0.25).eta == 0.25
    assert isinstance(ALGORITHMS["OAUC-S"].make(), sosl.OAUCS)
    assert [s.name for s in ex.resolve_algorithms(["OAUC-M", "KOIL"])] == ["OAUC-M", "KOIL"]
    # a registry entry naming a class sosl does not have is an error, not a skip
    monkeypatch.setitem(ALGORITHMS, "Ghost", AlgorithmSpec("Ghost", 2, "NoSuchClass"))
    with pytest.raises(LookupError, match="'Ghost' names sosl.NoSuchClass"):
        ex.resolve_algorithms(["OAUC-M", "Ghost"])
    with pytest.raises(LookupError, match="NoSuchClass"):
        ALGORITHMS["Ghost"].make()
    with pytest.raises(ValueError, match="unknown algorithm"):
        ex.resolve_algorithms(["nope"])


def test_outer_splits_partition_and_stratify():
    rng = np.random.default_rng(0)
    y = (rng.random(300) < 0.2).astype(int)
    splits = ex.outer_splits(y, "d", seed=1)
    assert len(splits) == 20
    for r in range(4):
        tests = np.concatenate([splits[5 * r + f][1] for f in range(5)])
        assert np.array_equal(np.sort(tests), np.arange(300))  # each partition covers all rows
        for f in range(5):
            tr, te = splits[5 * r + f]
            assert np.intersect1d(tr, te).size == 0
            assert abs(y[te].mean() - y.mean()) < 0.03  # stratified
    again = ex.outer_splits(y, "d", seed=1)
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(splits, again))
    assert not np.array_equal(splits[0][1], splits[5][1])  # repeats are independent
    assert not np.array_equal(splits[0][1], ex.outer_splits(y, "e", seed=1)[0][1])


def test_kernel_training_part_subsampled(monkeypatch):
    y = np.r_[np.zeros(400, int), np.ones(100, int)]
    monkeypatch.setattr(protocol, "KERNEL_MAX_TRAIN", 50)
    tr_lin, te = protocol.train_part(y, "d", 0)
    tr_k, te_k = protocol.train_part(y, "d", 0, kernel=True)
    assert tr_lin.size == 400 and tr_k.size == 50 and np.array_equal(te, te_k)
    assert np.isin(tr_k, tr_lin).all()


class _Diverges(sosl.OAUCM):
    def fit(self, X, y):
        raise ValueError("non-finite weights")


def test_failed_fit_scores_zero(monkeypatch):
    monkeypatch.setattr(sosl, "Diverges", _Diverges, raising=False)
    spec = AlgorithmSpec("Div", 2, "Diverges", ("lam",))
    X, y = runner.get_data("synthetic")
    score, err = ex.cv_score(spec, {"lam": 1.0}, X, y, "synthetic", 0, **SMALL)
    assert score == 0.0 and "non-finite" in err
    good, err2 = ex.cv_score(ALGORITHMS["OAUC-M"], {"lam": 1.0}, X, y, "synthetic", 0, **SMALL)
    assert 0.6 < good <= 1.0 and err2 == ""


def _read(out):
    with open(out / "rows.csv", newline="") as f:
        return list(csv.DictReader(f))


def test_run_selects_best_and_resumes(tmp_path):
    kw = dict(grid="quick", out=tmp_path, progress=False, log=lambda *_: None, **SMALL)
    s1 = ex.run_experiment(["synthetic"], ["OAUC-M", "OAUC-M_c"], **kw)
    rows = _read(tmp_path)
    n_cv = 2 * (3 + 9)  # runs x grid points
    assert s1["new_rows"] == len(rows) == n_cv + 2 * 2
    tests = [r for r in rows if r["kind"] == "test"]
    for t in tests:
        cv = [r for r in rows if r["kind"] == "cv" and r["algorithm"] == t["algorithm"]
              and r["run"] == t["run"]]
        best = max(float(r["auc"]) for r in cv)
        chosen = [float(r["auc"]) for r in cv if r["params"] == t["params"]]
        assert chosen == [best]
        # the held-out AUC is reproducible from the chosen parameters alone
        X, y = runner.get_data("synthetic")
        import json
        again, _ = ex.heldout_score(ALGORITHMS[t["algorithm"]], json.loads(t["params"]), X, y,
                                    "synthetic", int(t["run"]), n_repeats=1, n_folds=2)
        assert again == float(t["auc"])
    md = (tmp_path / "table2_quick.md").read_text()
    assert "| synthetic |" in md and "OAUC-M_c" in md
    # resume: nothing new; then drop the last 5 rows and only those are recomputed
    assert ex.run_experiment(["synthetic"], ["OAUC-M", "OAUC-M_c"], **kw)["new_rows"] == 0
    lines = (tmp_path / "rows.csv").read_text().splitlines(keepends=True)
    (tmp_path / "rows.csv").write_text("".join(lines[:-5]))
    s3 = ex.run_experiment(["synthetic"], ["OAUC-M", "OAUC-M_c"], **kw)
    assert s3["new_rows"] == 5
    assert (tmp_path / "table2_quick.md").read_text() == md


def test_capped_grid_is_a_fixed_random_subset():
    s = ALGORITHMS["OKAUC-S"]
    assert s.max_dims == 2
    full = ex.grid_points(s, "full", max_points=0)
    sub = ex.grid_points(s, "full")
    assert len(full) == 21 ** 3 and len(sub) == 441
    keys = [tuple(sorted(p.items())) for p in full]
    idx = [keys.index(tuple(sorted(p.items()))) for p in sub]
    assert idx == sorted(set(idx))                      # distinct, in grid order
    assert ex.grid_points(s, "full") == sub              # same draw every call
    # the draw covers the grid: every exponent of every parameter appears
    for name in s.searched:
        assert {p[name] for p in sub} == {2.0 ** e for e in range(-10, 11)}
    # the budget of a 2-parameter grid at each resolution
    assert [len(ex.grid_points(s, g)) for g in ("coarse", "sparse", "quick")] == [121, 25, 9]
    assert len(ex.grid_points(s, "sparse", max_points=200)) == 125   # cap above the product
    assert ex.grid_label(s, "full") == "full@441"
    assert ex.grid_label(s, "sparse", max_points=200) == "sparse"
    assert ex.grid_label(s, "full", max_points=0) == "full"
    assert len(ex.grid_points(ALGORITHMS["OAUC-M_c"], "full", max_points=50)) == 50
    with pytest.raises(ValueError, match="max_points"):
        ex.grid_points(s, "full", max_points=-1)


def test_run_with_capped_grid_records_label(tmp_path):
    kw = dict(grid="quick", out=tmp_path, progress=False, log=lambda *_: None, **SMALL)
    s1 = ex.run_experiment(["synthetic"], ["OAUC-M_c"], max_points=4, **kw)
    rows = _read(tmp_path)
    cv = [r for r in rows if r["kind"] == "cv"]
    assert len({r["params"] for r in cv}) == 4 and len(cv) == 2 * 4
    assert {r["grid"] for r in rows if r["kind"] == "test"} == {"quick@4"}
    assert len(s1["test_rows"]) == 2
    # the uncapped search is a different one: its test rows are new, the 4 points reused
    s2 = ex.run_experiment(["synthetic"], ["OAUC-M_c"], max_points=0, **kw)
    assert s2["new_rows"] == 2 * (9 - 4) + 2
    assert {r["grid"] for r in s2["test_rows"]} == {"quick"}
    capped = ex.report_from_cache(tmp_path, "quick", protocol="1x2/2", max_points=4)
    assert any(p.endswith(".md") for p in capped)


def test_cost_table_sums_the_cached_tasks(tmp_path):
    kw = dict(grid="quick", out=tmp_path, progress=False, log=lambda *_: None, **SMALL)
    ex.run_experiment(["synthetic"], ["OAUC-M", "OAUC-M_c"], **kw)
    rows = ex.load_rows(tmp_path)
    paths = ex.report_from_cache(tmp_path, "quick", protocol="1x2/2")
    cost = [p for p in paths if p.endswith("cost_quick.md")]
    assert len(cost) == 1
    lines = {ln.split(" | ")[1]: ln for ln in open(cost[0]) if ln.startswith("| synthetic")}
    for algo, n_points in (("OAUC-M", 3), ("OAUC-M_c", 9)):
        cells = [c.strip() for c in lines[algo].strip("|\n").split("|")]
        assert cells[2:5] == [str(n_points), str(2 * n_points), "2"]
        cpu = sum(r["cpu_seconds"] for r in rows if r["algorithm"] == algo)
        assert float(cells[5]) == pytest.approx(cpu, abs=0.51)
    # nothing cached for another grid: no table
    assert runner.cost_table(tmp_path, "full", protocol="1x2/2") == []


@pytest.mark.parametrize("backend", ["threading", "loky"])
def test_backend_switch_is_honored(tmp_path, backend):
    s = ex.run_experiment(["synthetic"], ["OAUC-M"], grid="quick", n_jobs=2, backend=backend,
                          out=tmp_path, progress=False, **SMALL)
    pids = {int(r["pid"]) for r in s["test_rows"]} | {int(r["pid"]) for r in _read(tmp_path)}
    threads = {r["thread"] for r in _read(tmp_path)}
    if backend == "threading":
        assert pids == {os.getpid()}
        assert threading.main_thread().name not in threads
    else:
        assert os.getpid() not in pids


def test_report_flags_differences(tmp_path):
    rows = [{"dataset": "fourclass", "algorithm": "OAUC-M", "auc": a}
            for a in (0.80, 0.81, 0.79, 0.80)]  # 80.00 +- 0.82 vs paper 83.30
    rows += [{"dataset": "diabetes", "algorithm": "OAUC-M", "auc": a}
             for a in (0.83, 0.84, 0.82, 0.84)]  # 83.25 +- 0.96 vs paper 83.25
    ex.report(rows, tmp_path, suffix="_t")
    with open(tmp_path / "table2_t.csv", newline="") as f:
        recs = {r["dataset"]: r for r in csv.DictReader(f)}
    assert recs["fourclass"]["flagged"] == "True" and float(recs["fourclass"]["diff"]) == -3.3
    assert recs["diabetes"]["flagged"] == "False" and float(recs["diabetes"]["diff"]) == 0.0
    md = (tmp_path / "table2_t.md").read_text()
    assert "80.00 ± 0.82 / 83.30 ± 1.14 (-3.30!)" in md
    assert not (tmp_path / "table3_t.md").exists()


def test_paper_table_shipped_matches_shared_copy():
    table = ex.paper_table()
    assert len(table) == 18 * 7 + 18 * 3
    assert table[("fourclass", "OAUC-M")] == (2, 83.3, 1.14)
    assert table[("shuttle", "OKAUC-S")] == (3, 99.60, 0.13)
    d = os.environ.get("SOSL_DATA_DIR")
    if not d:
        pytest.skip("SOSL_DATA_DIR is not set")
    with open(os.path.join(d, "PAPER_TABLES.tsv")) as f:
        shared = [ln.rstrip("\n").split("\t") for ln in f if ln[0].isdigit()]
    assert {(r[1], r[2]): (int(r[0]), float(r[3]), float(r[4])) for r in shared} == table


def test_cli_writes_tables(tmp_path, capsys):
    rc = cli_main(["--datasets", "default", "--algorithms", "OAUC-M", "--grid", "quick",
                   "--repeats", "1", "--folds", "2", "--inner-folds", "2", "--quiet",
                   "--out", str(tmp_path)])
    assert rc == 0
    text = capsys.readouterr().out
    assert "| default |" in text and "wall time" in text
    assert (tmp_path / "table2_quick.csv").exists()


def test_shared_dataset_small_run(tmp_path):
    d = os.environ.get("SOSL_DATA_DIR")
    if not d:
        pytest.skip("SOSL_DATA_DIR is not set")
    s = ex.run_experiment(["fourclass"], ["OAUC-M"], grid="quick", out=tmp_path, progress=False,
                          data_dir=d, **SMALL)
    aucs = [float(r["auc"]) for r in s["test_rows"]]
    assert len(aucs) == 2 and all(0.7 < a < 0.95 for a in aucs)


def test_learning_curve_ends_at_the_full_fit():
    from sosl.experiments.curves import learning_curve, time_per_instance
    from sosl.metrics import auc

    X, y = runner.get_data("synthetic")
    tr, te = np.arange(1500), np.arange(1500, 2000)
    seen, aucs = learning_curve(sosl.OAUCM(lam=0.1), X[tr], y[tr], X[te], y[te], n_points=10)
    assert seen[-1] == 1500 and np.all(np.diff(seen) > 0)
    full = sosl.OAUCM(lam=0.1).fit(X[tr], y[tr])
    assert aucs[-1] == pytest.approx(auc(y[te], full.decision_function(X[te])), abs=1e-12)
    assert aucs[-1] > 0.8 and np.nanmin(aucs) < aucs[-1]  # it learns along the stream
    t = time_per_instance(lambda: sosl.OAUCM(lam=0.1), X[:200], y[:200], repeats=1)
    assert 0 < t < 1e-2


def test_report_only_rebuilds_tables_from_cache(tmp_path, capsys):
    kw = dict(grid="quick", out=tmp_path, progress=False, n_repeats=2, n_folds=2, inner_folds=2)
    ex.run_experiment(["synthetic"], ["OAUC-M"], **kw)
    ex.run_experiment(["default"], ["OAUC-M"], **kw)  # a second call, other dataset
    md_last = (tmp_path / "table2_quick.md").read_text()
    assert "| synthetic |" not in md_last  # tables of a call cover its datasets only
    rc = cli_main(["--report-only", "--grid", "quick", "--repeats", "2", "--folds", "2",
                   "--inner-folds", "2", "--out", str(tmp_path)])
    assert rc == 0
    md = (tmp_path / "table2_quick.md").read_text()
    assert "| synthetic |" in md and "| default |" in md
    with open(tmp_path / "table2_quick.csv", newline="") as f:
        recs = list(csv.DictReader(f))
    assert all(int(r["n_runs"]) == 4 and float(r["std_of_partition_means"]) >= 0 for r in recs)
