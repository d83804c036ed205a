"""The runner's dataset handling: files without a known checksum (--no-verify).

The data files here are small synthetic LIBSVM files written under registered names into a
temporary data directory, never the real datasets.
"""

import hashlib
import subprocess
import sys

import numpy as np
import pytest

from sosl import datasets as ds
from sosl import experiments as ex
from sosl.experiments.__main__ import main as cli_main

SMALL = ["--algorithms", "Perceptron", "--grid", "quick", "--repeats", "1", "--folds", "2",
         "--inner-folds", "2", "--quiet"]
PROG = "python -m sosl.experiments"


def _libsvm(path, labels, n_features, seed=0):
    rng = np.random.default_rng(seed)
    lines = []
    for lab in labels:
        x = rng.uniform(-1, 1, n_features) + (0.8 if lab == labels[0] else 0.0)
        lines.append(f"{lab:g} " + " ".join(f"{j + 1}:{v:.6f}" for j, v in enumerate(x)))
    path.write_text("\n".join(lines) + "\n")
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def data_dir(tmp_path):
    """heart (no checksum registered) and fourclass (one registered, this file not it)."""
    d = tmp_path / "data"
    d.mkdir()
    assert ds.DATASETS["heart"].sha256 is None and ds.DATASETS["fourclass"].sha256
    sums = {"heart": _libsvm(d / "heart.libsvm", [1] * 12 + [-1] * 28, 13),
            "fourclass": _libsvm(d / "fourclass.libsvm", [1] * 12 + [-1] * 28, 2, seed=1)}
    return d, sums


def _one_error(code, out, err):
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err and out == ""
    assert err.startswith(f"{PROG}: error: ")
    return err


def test_unverifiable_dataset_is_refused_naming_no_verify(data_dir, tmp_path, capsys):
    d, sums = data_dir
    code = cli_main(["--datasets", "heart", "--data-dir", str(d), "--out", str(tmp_path / "o"),
                     *SMALL])
    err = _one_error(code, *capsys.readouterr())
    assert "dataset 'heart'" in err and "no sha256 for heart.libsvm" in err
    assert "pass --no-verify" in err and "verify=False" not in err
    assert not (tmp_path / "o").exists()


def test_mismatched_checksum_is_refused_naming_no_verify(data_dir, tmp_path, capsys):
    d, sums = data_dir
    code = cli_main(["--datasets", "fourclass", "--data-dir", str(d), "--out", str(tmp_path),
                     *SMALL])
    err = _one_error(code, *capsys.readouterr())
    assert f"has sha256 {sums['fourclass']}" in err
    assert f"the registry expects {ds.DATASETS['fourclass'].sha256}" in err
    assert "--no-verify" in err


def test_no_verify_runs_with_a_warning_giving_the_sha256(data_dir, tmp_path, capsys):
    d, sums = data_dir
    out = tmp_path / "o"
    code = cli_main(["--datasets", "heart", "fourclass", "--data-dir", str(d), "--out",
                     str(out), "--no-verify", *SMALL])
    stdout, err = capsys.readouterr()
    assert code == 0, err
    warn = [ln for ln in err.splitlines() if ln.startswith(f"{PROG}: warning: ")]
    assert len(warn) == 2, err
    assert warn[0].startswith(f"{PROG}: warning: UnverifiedDatasetWarning: dataset 'heart': "
                              f"{d / 'heart.libsvm'} (sha256 {sums['heart']}) is used "
                              "unverified: the registry knows no checksum")
    assert f"{d / 'fourclass.libsvm'} (sha256 {sums['fourclass']})" in warn[1]
    assert f"registry expects sha256 {ds.DATASETS['fourclass'].sha256}" in warn[1]
    rows = ex.load_rows(out)
    assert sorted({r["dataset"] for r in rows}) == ["fourclass", "heart"] and len(rows) == 8
    assert "| heart |" in stdout


def test_no_verify_in_a_real_process(data_dir, tmp_path):
    d, sums = data_dir
    proc = subprocess.run([sys.executable, "-m", "sosl.experiments", "--datasets", "heart",
                           "--data-dir", str(d), "--out", str(tmp_path / "o"), "--no-verify",
                           *SMALL], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert f"UnverifiedDatasetWarning: dataset 'heart': {d / 'heart.libsvm'} (sha256 " \
           f"{sums['heart']})" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_run_experiment_verify_false_warns_and_true_refuses(data_dir, tmp_path):
    d, sums = data_dir
    kw = dict(grid="quick", out=tmp_path, progress=False, log=lambda *_: None, n_repeats=1,
              n_folds=2, inner_folds=2, data_dir=d)
    with pytest.raises(ds.UnknownChecksumError, match="no sha256 for heart.libsvm"):
        ex.run_experiment(["heart"], ["Perceptron"], **kw)
    with pytest.warns(ds.UnverifiedDatasetWarning, match=sums["heart"]):
        s = ex.run_experiment(["heart"], ["Perceptron"], verify=False, **kw)
    assert s["new_rows"] == 4


@pytest.fixture
def vowel_dir(tmp_path):
    """A small vowel.libsvm: 11 classes (labels 0..10) of 8 rows, 10 features."""
    d = tmp_path / "vdata"
    d.mkdir()
    rng = np.random.default_rng(4)
    labels = np.repeat(np.arange(11), 8)
    X = rng.normal(size=(labels.size, 10)) + 0.7 * np.eye(11, 10)[labels]
    (d / "vowel.libsvm").write_text("".join(
        f"{lab} " + " ".join(f"{j + 1}:{v:.6f}" for j, v in enumerate(x)) + "\n"
        for lab, x in zip(labels, X)))
    return d, labels


def test_positive_class_option_runs_another_class(vowel_dir, tmp_path, capsys):
    d, labels = vowel_dir
    out = tmp_path / "o"
    base = ["--datasets", "vowel", "--data-dir", str(d), "--out", str(out), "--no-verify",
            *SMALL]
    code = cli_main(base + ["--positive-class", "vowel=5", "--positive-class", "vowel=2"])
    stdout, err = capsys.readouterr()
    assert code == 0, err
    rows = ex.load_rows(out)
    # vowel=2 is the registry's own class: the plain name; 5 is another task of its own
    assert sorted({r["dataset"] for r in rows}) == ["vowel", "vowel:pos=5"] and len(rows) == 8
    _, y5 = ex.get_data("vowel:pos=5", str(d), False)
    _, y2 = ex.get_data("vowel", str(d), False)
    assert np.array_equal(y5, labels == 5) and np.array_equal(y2, labels == 2)
    paper = ex.paper_table()[("vowel", "Perceptron")]
    line = next(ln for ln in stdout.splitlines() if ln.startswith("| vowel:pos=5 |"))
    assert f"/ {paper[1]:.2f} ± {paper[2]:.2f}" in line           # the paper's vowel beside it
    assert "`vowel:pos=5`: vowel with its original label 5 as the positive class" in stdout
    # the tasks of the two classes differ: same splits' seeds, other labels, other AUCs
    auc = {(r["dataset"], r["kind"], r["run"]): r["auc"] for r in rows}
    assert auc[("vowel", "test", 0)] != auc[("vowel:pos=5", "test", 0)]


@pytest.mark.parametrize("arg, text", [
    ("vowel", "expected DATASET=LABEL (e.g. vowel=3), got 'vowel'"),
    ("vowel=two", "the label after vowel= must be a number"),
    ("vowl=3", "'vowl' is not a registered dataset (did you mean 'vowel'?)"),
    ("heart=1", "a positive class is given for 'heart', which is not among the datasets run"),
    ("vowel=12", "no row of"),
])
def test_positive_class_mistakes_are_one_line(vowel_dir, tmp_path, capsys, arg, text):
    d, _ = vowel_dir
    args = ["--datasets", "vowel", "--data-dir", str(d), "--out", str(tmp_path / "o"),
            "--no-verify", *SMALL, "--positive-class", arg]
    try:
        code = cli_main(args)
    except SystemExit as stop:       # argparse's own errors
        code = stop.code
    out, err = capsys.readouterr()
    err = "\n".join(ln for ln in err.splitlines() if ": warning: " not in ln) + "\n"
    _one_error(code, out, err)
    assert text in err, err


def test_run_names_of_positive_classes():
    assert ex.runner.run_name("vowel", 3) == "vowel:pos=3"
    assert ex.runner.run_name("vowel", 2.0) == "vowel"          # the registry's own label=2
    assert ex.runner.run_name("vowel", None) == "vowel"
    assert ex.runner.run_name("satimage", 4) == "satimage:pos=4"  # a count= rule: named
    assert ex.runner.split_run_name("vowel:pos=3") == ("vowel", 3.0)
    assert ex.runner.split_run_name("vowel") == ("vowel", None)
    with pytest.raises(ValueError, match="registered dataset, not 'synthetic'"):
        ex.runner.run_name("synthetic", 1)
    assert ex.runner.with_positive_classes(["heart", "vowel"], {"vowel": [3, 2, 3]}) == \
        ["heart", "vowel:pos=3", "vowel"]
    with pytest.raises(ValueError, match="given for 'vowel', which is not among"):
        ex.runner.with_positive_classes(["heart"], {"vowel": 3})


def test_run_experiment_positive_class(vowel_dir, tmp_path):
    d, labels = vowel_dir
    with pytest.warns(ds.UnverifiedDatasetWarning):
        s = ex.run_experiment(["vowel"], ["Perceptron"], grid="quick", out=tmp_path,
                              progress=False, log=lambda *_: None, n_repeats=1, n_folds=2,
                              inner_folds=2, data_dir=d, verify=False,
                              positive_class={"vowel": 7})
    assert {r["dataset"] for r in s["test_rows"]} == {"vowel:pos=7"}
