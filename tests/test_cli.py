"""The ``sosl`` command line: what it reports, what it saves, how it fails.

Most tests call :func:`sosl.cli.main` in-process (capsys holds its output); two run
``python -m sosl`` in a subprocess to check the entry point, standard input and exit codes
as a shell sees them.
"""

import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.feature_extraction.text import HashingVectorizer
from sklearn.metrics import average_precision_score, roc_auc_score

from sosl import FTRLAUC, OAUCM
from sosl.cli import main
from sosl.datasets import make_imbalanced_stream
from sosl.io import load_state
from sosl.state import from_state

ROOT = Path(__file__).resolve().parents[1]
WORDS_HAM = "ok see you later lunch home call mum tonight sure thanks meeting".split()
WORDS_SPAM = "free win prize cash claim urgent call text offer now winner".split()


def _texts(n, seed):
    rng = np.random.default_rng(seed)
    labels = np.where(rng.random(n) < 0.2, "spam", "ham")
    lines = []
    for lab in labels:
        own = WORDS_SPAM if lab == "spam" else WORDS_HAM
        pool = own * 3 + WORDS_HAM + WORDS_SPAM          # each class leans on its own words
        words = rng.choice(pool, size=rng.integers(3, 9))
        lines.append(f"{lab}\t{' '.join(words)}")
    return lines, labels


@pytest.fixture
def text_file(tmp_path):
    lines, labels = _texts(400, seed=0)
    path = tmp_path / "sms.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, lines, labels


@pytest.fixture
def svm_file(tmp_path):
    X, y = make_imbalanced_stream(300, 6, imbalance_ratio=4, class_sep=1.5, random_state=3)
    path = tmp_path / "rows.svm"
    with open(path, "w") as f:
        for row, label in zip(X, y):
            feats = " ".join(f"{j + 1}:{v:.17g}" for j, v in enumerate(row) if v != 0)
            f.write(f"{'+1' if label == 1 else '-1'} {feats}\n")
    return path, X, y


def _load(path):
    """A model file as the old joblib bundle read (the files are now sosl.io's safe format:
    the learner's state, the reader's settings in its meta)."""
    state, meta = load_state(path)
    return {"model": from_state(state), "learner": state.learner, **meta}


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _final_row(out):
    """The figures of the last progress line: rows, scored, auc, avg_prec."""
    last = [line for line in out.splitlines() if line.strip().endswith("(final)")
            or line.strip()[:1].isdigit()][-1].split()
    return int(last[0]), int(last[1]), float(last[2]), float(last[3])


def _by_hand_prequential(model, X, y):
    """Test-then-train written out here: the score of each row before it is learned."""
    scores = []
    model.learn_one(X[0:1], y[0], classes=[0, 1])
    for i in range(1, X.shape[0]):
        scores.append(model.score_one(X[i:i + 1]))
        model.learn_one(X[i:i + 1], y[i])
    return np.asarray(scores)


def test_learn_reports_the_prequential_auc_and_average_precision(capsys, text_file, tmp_path):
    path, lines, labels = text_file
    # --exact-auc: the report's default is a binned AUC in constant memory (tested in
    # test_cli_stream.py within its bound); here the exact figures are compared
    code, out, err = _run(capsys, "learn", path, "--positive", "spam", "--hash-bits", 12,
                          "--progress", 100, "--exact-auc", "-f", tmp_path / "m.joblib")
    assert code == 0, err
    y = (labels == "spam").astype(int)
    X = HashingVectorizer(n_features=2**12).transform([t.split("\t", 1)[1] for t in lines])
    scores = _by_hand_prequential(FTRLAUC(), X.tocsr(), y)
    rows, scored, auc_line, ap_line = _final_row(out)
    assert (rows, scored) == (400, 399)
    assert auc_line == pytest.approx(roc_auc_score(y[1:], scores), abs=6e-5)
    assert ap_line == pytest.approx(average_precision_score(y[1:], scores), abs=6e-5)
    # the score of each row after learning it would read higher: the report must not be that
    model = FTRLAUC().fit(X, y)
    assert abs(roc_auc_score(y, model.decision_function(X)) - auc_line) > 1e-3
    # a report every 100 rows, then the final one
    table = [ln.split()[0] for ln in out.splitlines() if ln.strip()[:1].isdigit()]
    assert table == ["100", "200", "300", "400"]


def test_model_file_round_trip_and_score(capsys, text_file, tmp_path):
    path, lines, labels = text_file
    model_path = tmp_path / "m.joblib"
    assert _run(capsys, "learn", path, "--positive", "spam", "-b", 12, "-q",
                "-f", model_path)[0] == 0
    bundle = _load(model_path)
    assert bundle["features"]["hash_bits"] == 12 and bundle["features"]["positive"] == "spam"
    assert bundle["rows_seen"] == 400 and bundle["learner"] == "FTRLAUC"
    y = (labels == "spam").astype(int)
    X = HashingVectorizer(n_features=2**12).transform([t.split("\t", 1)[1] for t in lines])
    expected = FTRLAUC().partial_fit(X, y, classes=[0, 1]).decision_function(X)
    code, out, err = _run(capsys, "score", path, "-i", model_path)
    assert code == 0, err
    got = np.array([float(v) for v in out.split()])
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)
    assert f"auc {roc_auc_score(y, expected):.4f}" in err
    # --out writes the same lines to a file; --proba writes probabilities
    assert _run(capsys, "score", path, "-i", model_path, "-o", tmp_path / "s.txt")[0] == 0
    assert (tmp_path / "s.txt").read_text() == out
    code, out, _ = _run(capsys, "score", path, "-i", model_path, "--proba")
    proba = np.array([float(v) for v in out.split()])
    np.testing.assert_allclose(proba, bundle["model"].predict_proba(X)[:, 1], rtol=1e-9)
    # unlabelled text lines (no TAB) are scored as whole texts
    (tmp_path / "u.txt").write_text("free cash now\nsee you at lunch\n")
    code, out, _ = _run(capsys, "score", tmp_path / "u.txt", "-i", model_path)
    np.testing.assert_allclose(
        [float(v) for v in out.split()],
        bundle["model"].decision_function(
            HashingVectorizer(n_features=2**12).transform(["free cash now",
                                                           "see you at lunch"])), rtol=1e-9)


def test_continued_training_equals_one_longer_run(capsys, svm_file, tmp_path):
    path, X, y = svm_file
    text = path.read_text().splitlines(keepends=True)
    (tmp_path / "a.svm").write_text("".join(text[:170]))
    (tmp_path / "b.svm").write_text("".join(text[170:]))
    common = ["--learner", "OAUCM", "--param", "lam=0.05", "--n-features", 7, "-q"]
    assert _run(capsys, "learn", path, *common, "-f", tmp_path / "all.joblib")[0] == 0
    assert _run(capsys, "learn", tmp_path / "a.svm", *common, "-f", tmp_path / "a.joblib")[0] == 0
    code, _, err = _run(capsys, "learn", tmp_path / "b.svm", "-i", tmp_path / "a.joblib", "-q",
                        "-f", tmp_path / "ab.joblib")
    assert code == 0, err
    whole, cont = _load(tmp_path / "all.joblib"), _load(tmp_path / "ab.joblib")
    assert cont["rows_seen"] == whole["rows_seen"] == 300
    Xd = np.column_stack([np.zeros(len(y)), X])             # column 0 unused (1-based file)
    np.testing.assert_allclose(cont["model"].decision_function(Xd),
                               whole["model"].decision_function(Xd), rtol=1e-12, atol=1e-12)
    assert cont["model"].t_ == whole["model"].t_
    # the same as Python's own one pass over the rows
    ref = OAUCM(lam=0.05).partial_fit(Xd, y, classes=[0, 1])
    np.testing.assert_allclose(whole["model"].coef_, ref.coef_, rtol=1e-12, atol=1e-12)
    # mutant: the second half learned by a fresh model is not the longer run
    assert _run(capsys, "learn", tmp_path / "b.svm", *common, "-f", tmp_path / "b.joblib")[0] == 0
    fresh = _load(tmp_path / "b.joblib")
    assert np.abs(fresh["model"].coef_ - whole["model"].coef_).max() > 1e-3


def test_chunk_size_does_not_change_the_model(capsys, text_file, tmp_path):
    path, _, _ = text_file
    for chunk in (7, 1000):
        assert _run(capsys, "learn", path, "--positive", "spam", "-b", 10, "-q", "--chunk",
                    chunk, "-f", tmp_path / f"c{chunk}.joblib")[0] == 0
    a, b = (_load(tmp_path / f"c{c}.joblib")["model"] for c in (7, 1000))
    np.testing.assert_array_equal(a.coef_, b.coef_)


def test_csv_with_header_and_stdin(capsys, monkeypatch, svm_file, tmp_path):
    _, X, y = svm_file
    csv = "label," + ",".join(f"x{j}" for j in range(X.shape[1])) + "\n" + "".join(
        f"{lab}," + ",".join(f"{v:.17g}" for v in row) + "\n" for row, lab in zip(X, y))
    (tmp_path / "rows.csv").write_text(csv)
    args = ["--learner", "OAUCM", "-q"]
    assert _run(capsys, "learn", tmp_path / "rows.csv", *args, "-f", tmp_path / "f.joblib")[0] == 0
    monkeypatch.setattr(sys, "stdin", io.StringIO(csv))
    assert _run(capsys, "learn", "-", *args, "-f", tmp_path / "s.joblib")[0] == 0
    f, s = (_load(tmp_path / n)["model"] for n in ("f.joblib", "s.joblib"))
    np.testing.assert_array_equal(f.coef_, s.coef_)
    np.testing.assert_allclose(f.coef_, OAUCM().partial_fit(X, y, classes=[0, 1]).coef_,
                               rtol=1e-12, atol=1e-12)


def _misuse_cases(tmp):
    good = tmp / "good.txt"
    good.write_text("spam\tfree cash\nham\tsee you\n")
    (tmp / "nolabel.txt").write_text("spam\tfree cash\njust text without a tab\n")
    (tmp / "bad.svm").write_text("1 1:0.5 2:x\n")
    (tmp / "ragged.csv").write_text("1,0.5,0.2\n0,0.1\n")
    (tmp / "not_a_model").write_text("hello")
    return {
        "unknown learner": ["learn", good, "--positive", "spam", "--learner", "Nope"],
        "unknown parameter": ["learn", good, "--positive", "spam", "--param", "nope=1"],
        "bad parameter value": ["learn", good, "--positive", "spam", "--param", "gamma=-3"],
        "param not NAME=VALUE": ["learn", good, "--positive", "spam", "--param", "gamma"],
        "missing file": ["learn", tmp / "missing.txt"],
        "missing model file": ["score", good, "-i", tmp / "missing.joblib"],
        "not a model file": ["score", good, "-i", tmp / "not_a_model"],
        "label not 1/0 without --positive": ["learn", good],
        "text line without TAB": ["learn", tmp / "nolabel.txt", "--positive", "spam"],
        "bad libsvm token": ["learn", tmp / "bad.svm"],
        "ragged csv": ["learn", tmp / "ragged.csv"],
        "hash bits on csv": ["learn", tmp / "ragged.csv", "--hash-bits", "10"],
        "negative progress": ["learn", good, "--positive", "spam", "--progress", "-1"],
    }


MISUSE = ["unknown learner", "unknown parameter", "bad parameter value", "param not NAME=VALUE",
          "missing file", "missing model file", "not a model file",
          "label not 1/0 without --positive", "text line without TAB", "bad libsvm token",
          "ragged csv", "hash bits on csv", "negative progress"]


@pytest.mark.parametrize("case", MISUSE)
def test_misuse_exits_2_with_one_line(capsys, tmp_path, case):
    argv = _misuse_cases(tmp_path)[case]
    code, out, err = _run(capsys, *argv)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("sosl: error: "), err
    assert "Traceback" not in err
    assert not list(tmp_path.glob("*.joblib"))


@pytest.mark.parametrize("argv", [["learn", "--bogus"], ["learn", "--hash-bits", "40"],
                                  ["score"], ["nothing"], []])
def test_argparse_errors_exit_2_with_one_line(capsys, argv):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "error:" in err, err


def test_continue_refuses_a_different_feature_setup(capsys, text_file, tmp_path):
    path, _, _ = text_file
    assert _run(capsys, "learn", path, "--positive", "spam", "-b", 10, "-q",
                "-f", tmp_path / "m.joblib")[0] == 0
    before = (tmp_path / "m.joblib").read_bytes()
    for extra in (["-b", "12"], ["--learner", "OAUCM"], ["--format", "csv"]):
        code, _, err = _run(capsys, "learn", path, "-i", tmp_path / "m.joblib", *extra,
                            "-f", tmp_path / "m.joblib")
        assert code == 2 and err.startswith("sosl: error: "), (extra, err)
    assert (tmp_path / "m.joblib").read_bytes() == before


def _python_m_sosl(*argv, stdin=None):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "sosl", *map(str, argv)], input=stdin,
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)


def test_python_m_sosl_learns_from_stdin_and_scores(tmp_path):
    lines, labels = _texts(200, seed=1)
    model = tmp_path / "m.joblib"
    proc = _python_m_sosl("learn", "--positive", "spam", "-b", 10, "--progress", 50,
                          "-f", model, stdin="\n".join(lines) + "\n")
    assert proc.returncode == 0, proc.stderr
    assert "auc" in proc.stdout.splitlines()[1] and model.exists()
    proc = _python_m_sosl("score", "-i", model, stdin="free cash now\nsee you later\n")
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout.split()) == 2
    proc = _python_m_sosl("learn", tmp_path / "missing.txt")
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"sosl: error: {tmp_path / 'missing.txt'}: no such file"


def test_block_mode_learns_the_same_model_and_scores_each_block_before_it(capsys, text_file,
                                                                           tmp_path):
    path, lines, labels = text_file
    for block in (1, 64):
        code, out, err = _run(capsys, "learn", path, "--positive", "spam", "-b", 12,
                              "--block", block, "--progress", 0, "--exact-auc",
                              "-f", tmp_path / f"b{block}.joblib")
        assert code == 0, err
    rows, scored, auc_line, ap_line = _final_row(out)
    row_by_row, blocks = (_load(tmp_path / f"b{b}.joblib")["model"] for b in (1, 64))
    np.testing.assert_allclose(blocks.coef_, row_by_row.coef_, rtol=1e-12, atol=1e-15)
    # by hand: the first row learned alone, then each block scored before it is learned
    y = (labels == "spam").astype(int)
    X = HashingVectorizer(n_features=2**12).transform([t.split("\t", 1)[1] for t in lines])
    model = FTRLAUC()
    model.learn_one(X[0:1], y[0], classes=[0, 1])
    scores = []
    for lo in range(1, 400, 64):
        scores.extend(model.decision_function(X[lo:lo + 64]))
        model.partial_fit(X[lo:lo + 64], y[lo:lo + 64])
    assert (rows, scored) == (400, 399)
    assert auc_line == pytest.approx(roc_auc_score(y[1:], scores), abs=6e-5)
    assert ap_line == pytest.approx(average_precision_score(y[1:], scores), abs=6e-5)
