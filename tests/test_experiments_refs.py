"""Capped batch references: on a dataset whose training parts exceed the cap, SVC and the
unbounded OKAUC-M train on a stratified subsample of each training part, fixed per run and
shared by every grid point, over the first partition only, and their cells are labelled in
every table; the learners and the small datasets keep the full protocol."""

import warnings
from collections import Counter, defaultdict

import numpy as np
import pytest

import sosl.experiments as ex
from sosl.exceptions import ExperimentWarning
from sosl.experiments import protocol, runner, tables
from sosl.experiments.__main__ import main

#: synthetic: 2000 rows, 1 positive in 6; 2 x 3 folds give training parts of 1333-1334 rows
SMALL = dict(n_repeats=2, n_folds=3, inner_folds=2, progress=False, log=lambda *_: None)
CAP = 500


def _run(out, cap=CAP, algorithms=("PA-I",)):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExperimentWarning)   # grid-edge selections
        return ex.run_experiment(["synthetic"], list(algorithms), grid="quick", out=out,
                                 ceilings=True, references=["SVC"], reference_max_train=cap,
                                 **SMALL)


def _spy(monkeypatch):
    """Record the training rows of every fit the refits (test and oracle tasks) make."""
    seen = defaultdict(set)   # (algorithm, run) -> {(params, training rows)}
    real = protocol.heldout_score

    def heldout(spec, params, X, y, dataset, run, **kw):
        train, _ = protocol.train_part(y, dataset, run, kw["seed"], kw["n_repeats"],
                                       kw["n_folds"], spec.kernel, kw.get("max_train"))
        seen[(spec.name, run)].add((runner._params_key(params), tuple(train)))
        return real(spec, params, X, y, dataset, run, **kw)

    monkeypatch.setattr(runner, "heldout_score", heldout)
    return seen


def subsample_problems(seen, y, cap, n_runs):
    """What is wrong with the capped reference's training rows, as a list of strings."""
    problems = []
    if sorted(run for a, run in seen if a == "SVC") != list(range(n_runs)):
        problems.append(f"SVC refits ran on runs {sorted(r for a, r in seen if a == 'SVC')}")
    firsts = []
    for (a, run), fits in sorted(seen.items()):
        if a != "SVC":
            continue
        rows = {t for _, t in fits}
        if len(rows) != 1:
            problems.append(f"run {run}: {len(rows)} different training sets over the grid")
        train = np.array(next(iter(rows)))
        firsts.append(train)
        if train.shape[0] != cap:
            problems.append(f"run {run}: {train.shape[0]} training rows, not {cap}")
        full, _ = protocol.outer_splits(y, "synthetic", 0, SMALL["n_repeats"],
                                        SMALL["n_folds"])[run]
        if not np.isin(train, full).all():
            problems.append(f"run {run}: rows outside the run's training part")
        share = cap * np.mean(y[full])
        if abs(np.sum(y[train]) - share) >= 1:
            problems.append(f"run {run}: {np.sum(y[train])} positives, share {share:.1f}")
    if len({t.tobytes() for t in firsts}) != len(firsts):
        problems.append("two runs trained on the same subsample")
    return problems


@pytest.fixture(scope="module")
def y():
    return runner.get_data("synthetic")[1]


@pytest.fixture(scope="module")
def capped_run(tmp_path_factory):
    """One run of PA-I and the capped SVC, with the training rows of every refit."""
    out = tmp_path_factory.mktemp("capped")
    with pytest.MonkeyPatch.context() as mp:
        seen = _spy(mp)
        _run(out)
    return out, seen


def test_stratified_subsample_keeps_each_class_share(y):
    train = np.arange(1, 1900, 2)           # 950 rows of the synthetic stream
    a = protocol.stratified_subsample(train, y, 300, seed=7)
    assert a.shape == (300,) and np.all(np.diff(a) > 0) and np.isin(a, train).all()
    assert abs(y[a].sum() - 300 * y[train].mean()) < 1
    assert np.array_equal(a, protocol.stratified_subsample(train, y, 300, seed=7))
    assert not np.array_equal(a, protocol.stratified_subsample(train, y, 300, seed=8))
    assert np.array_equal(protocol.stratified_subsample(train, y, 2000, seed=7), train)
    # a class too rare for its share keeps a row
    yy = np.zeros(1000, dtype=int)
    yy[3] = 1
    b = protocol.stratified_subsample(np.arange(1000), yy, 100, seed=0)
    assert b.shape == (100,) and yy[b].sum() == 1


def test_capped_reference_subsample_is_stratified_fixed_and_shared(capped_run, y):
    out, seen = capped_run
    assert subsample_problems(seen, y, CAP, SMALL["n_folds"]) == []
    # the learner keeps the full protocol: every run, its whole training part
    pa = {run: {t for _, t in fits} for (a, run), fits in seen.items() if a == "PA-I"}
    assert sorted(pa) == list(range(6))
    assert all(len(next(iter(t))) > 1300 for t in pa.values())
    rows = ex.load_rows(out)
    assert Counter((r["algorithm"], r["protocol"]) for r in rows if r["kind"] == "test") == {
        ("PA-I", "2x3/2"): 6, ("SVC", "1x3/2@500"): 3}
    # the inner CV folds of a capped run split the subsample
    cv = [r for r in rows if r["kind"] == "cv" and r["algorithm"] == "SVC"]
    assert len(cv) == 3 * 9 and {r["protocol"] for r in cv} == {"1x3/2@500"}


@pytest.mark.parametrize("mutant", ["uniform", "per-call", "short"])
def test_capped_subsample_mutants_are_caught(tmp_path, monkeypatch, y, mutant):
    real = protocol.stratified_subsample
    calls = Counter()

    def wrong(train, yy, size, seed):
        if mutant == "uniform":      # not stratified: a uniform draw of the same size
            return np.sort(np.random.default_rng(seed).choice(train, size, replace=False))
        if mutant == "short":        # one row short of the cap
            return real(train, yy, size - 1, seed)
        calls[seed] += 1             # a new draw at every call: each grid point its own rows
        return real(train, yy, size, seed + calls[seed])

    monkeypatch.setattr(protocol, "stratified_subsample", wrong)
    seen = _spy(monkeypatch)
    _run(tmp_path, algorithms=())
    assert subsample_problems(seen, y, CAP, SMALL["n_folds"]) != []


def test_capped_cells_are_labelled_in_every_table(capped_run, tmp_path):
    run, _ = capped_run
    md = (run / "table3_quick.md").read_text()
    label = "reference: 500-row subsample, 1 x 3 folds"
    assert label in md
    lines = md.splitlines()
    main_row = next(ln for ln in lines if ln.startswith("| synthetic |") and " / -" in ln)
    assert main_row.count(tables.CAPPED_MARK) == 1            # SVC's cell, not PA-I's
    n_svc = sum(ln.startswith("| synthetic | SVC† |") for ln in lines)
    assert n_svc == 2                                        # ceilings and spread tables
    assert not any(ln.startswith("| synthetic | SVC |") for ln in lines)
    csv_text = (run / "table3_quick.csv").read_text()
    assert ",SVC,3,1x3/2@500," in csv_text
    # the record keeps the capped rows and their label
    assert main(["--out", str(run), "--grid", "quick", "--repeats", "2",
                 "--folds", "3", "--inner-folds", "2", "--export-record",
                 str(tmp_path / "rec")]) == 0
    assert (tmp_path / "rec" / "table3_quick.md").read_text() == md
    ceil = [r for r in ex.load_rows(tmp_path / "rec") if r["kind"] == "ceiling"
            and r["algorithm"] == "SVC"]
    assert len(ceil) == 3 and {r["protocol"] for r in ceil} == {"1x3/2@500"}


def test_small_datasets_and_no_cap_keep_the_full_protocol():
    cfg = {"seed": 0, "n_repeats": 2, "n_folds": 3, "inner_folds": 2, "protocol": "2x3/2",
           "data_dir": None, "verify": True}
    svc, koil = ex.spec_of("SVC"), ex.spec_of("KOIL")
    assert svc.capped and ex.spec_of("OKAUC-M_inf").capped and not koil.capped
    assert not ex.spec_of("LogReg").capped
    full = ("2x3/2", 6, None)
    for cap in (1334, None):     # training parts of 1333-1334 rows: not above the cap
        assert runner.plan("synthetic", svc, {**cfg, "reference_max_train": cap}) == full
    assert runner.plan("synthetic", svc, {**cfg, "reference_max_train": 1333}) == (
        "1x3/2@1333", 3, 1333)
    assert runner.plan("synthetic", koil, {**cfg, "reference_max_train": 500}) == full


def test_a_cell_is_never_a_mix_of_protocols():
    rows = [{"dataset": "d", "algorithm": "SVC", "seed": 0, "protocol": p, "kind": "test"}
            for p in ("4x5/5", "1x5/5@4000", "1x5/4@4000")]
    rows += [{"dataset": "e", "algorithm": "SVC", "seed": 0, "protocol": "1x5/5@4000",
              "kind": "test"}]
    got = [(r["dataset"], r["protocol"]) for r in runner.pick_protocol(rows, "4x5/5")]
    assert got == [("d", "4x5/5"), ("e", "1x5/5@4000")]
    assert runner.same_protocol("1x5/5@4000", "4x5/5")
    assert not runner.same_protocol("1x5/4@4000", "4x5/5")
    assert protocol.parse_protocol("1x5/5@4000") == (1, 5, 5, 4000)
    with pytest.raises(ValueError, match="protocol is"):
        protocol.parse_protocol("4x5")


def test_cli_refuses_a_negative_cap(capsys):
    assert main_exit(["--reference-max-train", "-1"]) == 2
    assert "--reference-max-train" in capsys.readouterr().err


def main_exit(argv):
    try:
        return main(argv)
    except SystemExit as err:
        return err.code
