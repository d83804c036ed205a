"""The command line's streaming reader and its misreads: the compiled LIBSVM pass against
its reference, compressed and binary input, files labelled or not, the errors that name
their line, model files that run no code, and VW's habits (-p, -t, -d, VW's format)."""

import bz2
import gzip
import lzma
import os
import pickle

import numpy as np
import pytest
from sklearn.feature_extraction import FeatureHasher
from sklearn.metrics import roc_auc_score

from sosl import FTRLAUC, OAUCM
from sosl import cli as sosl_cli
from sosl._core import _reader, _reader_ref
from sosl.cli import main
from sosl.io import load_state
from sosl.metrics import BinnedAUC
from sosl.state import from_state


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _model(path):
    return from_state(load_state(path)[0])


def _one_error(code, err):
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("sosl: error: "), err
    return err


def _svm_rows(n, p, seed):
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, p)), 3)
    X[rng.random((n, p)) < 0.3] = 0.0
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int)
    y[:2] = [0, 1]
    lines = [f"{'+1' if lab else '-1'} " + " ".join(f"{j + 1}:{v:.17g}" for j, v in
                                                    enumerate(row) if v != 0)
             for row, lab in zip(X, y)]
    return X, y, "\n".join(lines) + "\n"


# -- the compiled pass and its reference ---------------------------------------------------
def _parse(fn, block):
    n_lines, n_colons = block.count(b"\n") + 1, block.count(b":")
    y, indptr = np.full(n_lines, -7.0), np.zeros(n_lines + 1, dtype=np.int64)
    idx, val = np.zeros(n_colons, dtype=np.int64), np.zeros(n_colons)
    out = np.zeros(4, dtype=np.int64)
    status = fn(block, y, indptr, idx, val, out)
    rows, nnz = int(out[0]), int(out[1])
    return status, out.tolist(), y[:rows], indptr[:rows + 1], idx[:nnz], val[:nnz]


BLOCKS = [
    b"1 1:0.5 3:-2e-3 10:7\n-1 2:1\n\n0 qid:4 5:1.25 # comment 9:9\n",
    b"1\n  -1   4:3.0e+2\t5:-0 \r\n1 1:1",                       # no final newline, CR
    b"2:1 3:4\n7:0.1\n",                                         # no labels
    b"1 1:0.1234567890123456789 2:1e300 3:4.9e-324 4:123456789012345678\n",
    b"1 9223372036854775807:1\n",                                # int64's largest
    b"1 1:2 3:x\n", b"1 1:nan\n", b"1 -1:2\n", b"spam 1:2\n", b"1 1: 2\n", b"1 1:2:3\n",
    b"1 1:2\n1 9223372036854775808:1\n", b"nan 1:2\n", b"1 +1:2\n", b"1 1:inf\n",
]


@pytest.mark.parametrize("block", BLOCKS)
def test_kernel_equals_reference(block):
    got, ref = _parse(_reader.parse_libsvm, block), _parse(_reader_ref.parse_libsvm, block)
    assert got[0] == ref[0] and got[1] == ref[1]
    for a, b in zip(got[2:], ref[2:]):
        np.testing.assert_array_equal(a, b)


def test_kernel_equals_reference_on_random_rows():
    _, _, text = _svm_rows(300, 9, seed=1)
    got = _parse(_reader.parse_libsvm, text.encode())
    ref = _parse(_reader_ref.parse_libsvm, text.encode())
    assert got[0] == ref[0] == _reader.OK and got[1][0] == 300 and got[1][1] > 1000
    for a, b in zip(got[2:], ref[2:]):
        np.testing.assert_array_equal(a, b)                 # the same bits


def test_reference_check_catches_a_mutant(monkeypatch):
    """Mutant: a reference that keeps qid tokens as features disagrees with the kernel."""
    block = BLOCKS[0]
    real = _reader_ref.parse_libsvm

    def mutant(b, *args):
        return real(b.replace(b"qid:4", b"4:4"), *args)
    got, bad = _parse(_reader.parse_libsvm, block), _parse(mutant, block)
    assert got[1] != bad[1]


# -- compressed, binary, labelled or not ----------------------------------------------------
@pytest.mark.parametrize("opener", [gzip.open, bz2.open, lzma.open])
def test_compressed_input_is_read_transparently(capsys, tmp_path, opener):
    _, _, text = _svm_rows(200, 5, seed=2)
    (tmp_path / "plain.svm").write_text(text)
    with opener(tmp_path / "packed.svm.z", "wt") as f:
        f.write(text)
    common = ["--learner", "OAUCM", "--n-features", 6, "-q"]
    assert _run(capsys, "learn", tmp_path / "plain.svm", *common, "-f", tmp_path / "a.npz")[0] == 0
    code, _, err = _run(capsys, "learn", tmp_path / "packed.svm.z", *common,
                        "-f", tmp_path / "b.npz")
    assert code == 0, err
    np.testing.assert_array_equal(_model(tmp_path / "a.npz").coef_,
                                  _model(tmp_path / "b.npz").coef_)


def test_a_cut_compressed_file_is_one_line_error(capsys, tmp_path):
    _, _, text = _svm_rows(400, 5, seed=2)
    packed = gzip.compress(text.encode())
    (tmp_path / "cut.svm.gz").write_bytes(packed[: len(packed) // 2])
    err = _one_error(*_run(capsys, "learn", tmp_path / "cut.svm.gz", "--n-features", 6)[::2])
    assert "corrupt compressed input" in err, err


def test_binary_input_is_one_line_error(capsys, tmp_path):
    rng = np.random.default_rng(0)
    (tmp_path / "noise.bin").write_bytes(rng.integers(0, 256, 20000, dtype=np.uint8).tobytes())
    _, _, text = _svm_rows(50, 3, seed=3)
    (tmp_path / "ok.svm").write_text(text)
    assert _run(capsys, "learn", tmp_path / "ok.svm", "-q", "-f", tmp_path / "m.npz")[0] == 0
    for argv in (["learn", tmp_path / "noise.bin", "--format", "libsvm", "--n-features", 4],
                 ["score", tmp_path / "noise.bin", "-i", tmp_path / "m.npz"]):
        err = _one_error(*_run(capsys, *argv)[::2])
        assert "binary input" in err


def test_csv_labelled_once_a_short_row_names_its_line(capsys, tmp_path):
    rows = "1,0.5,0.25,1.0\n0,0.1,0.2,0.3\n1,0.7,0.1\n0,0.2,0.2,0.2\n"
    (tmp_path / "r.csv").write_text(rows)
    (tmp_path / "good.csv").write_text("1,0.5,0.25,1.0\n0,0.1,0.2,0.3\n")
    assert _run(capsys, "learn", tmp_path / "good.csv", "-q", "-f", tmp_path / "m.npz")[0] == 0
    for argv in (["learn", tmp_path / "r.csv"],
                 ["score", tmp_path / "r.csv", "-i", tmp_path / "m.npz"]):
        code, out, err = _run(capsys, *argv)
        err = _one_error(code, err)
        assert "line 3: 3 fields, expected 4" in err and "lacks 1 field" in err, err


def test_unseen_positive_and_one_class_are_errors(capsys, tmp_path):
    (tmp_path / "t.tsv").write_text("0\tfree cash\n1\tsee you\n0\twin\n")
    err = _one_error(*_run(capsys, "learn", tmp_path / "t.tsv", "--positive", "spam")[::2])
    assert "--positive spam: no row has this label" in err
    (tmp_path / "one.tsv").write_text("1\tfree cash\n1\tsee you\n")
    err = _one_error(*_run(capsys, "learn", tmp_path / "one.tsv", "-f", tmp_path / "m.npz")[::2])
    assert "every row is positive" in err and not (tmp_path / "m.npz").exists()


def test_libsvm_errors_name_their_line(capsys, tmp_path):
    """The line counts blank lines and the chunk's offset (mutant: a number off by one)."""
    body = "1 1:0.5\n\n-1 2:0.25\n" * 3 + "1 99999999999999999999:1\n"   # line 10
    (tmp_path / "big.svm").write_text(body)
    for extra in ([], ["--n-features", 4], ["--chunk", 2, "--n-features", 4]):
        err = _one_error(*_run(capsys, "learn", tmp_path / "big.svm", *extra)[::2])
        assert "line 10: feature index 99999999999999999999" in err, err
    (tmp_path / "bad.svm").write_text("1 1:0.5\n\n-1 2:0.25\n1 3:x\n")
    for chunk in (1, 3, 1000):
        err = _one_error(*_run(capsys, "learn", tmp_path / "bad.svm", "--n-features", 4,
                               "--chunk", chunk)[::2])
        assert err.startswith("sosl: error: line 4: '3:x'"), err


# -- model files ----------------------------------------------------------------------------
class _Payload:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_a_crafted_pickle_is_refused_and_never_runs(capsys, tmp_path):
    marker = tmp_path / "ran"
    evil = tmp_path / "evil.joblib"
    evil.write_bytes(pickle.dumps({"kind": "sosl-cli-model", "model": _Payload(str(marker))}))
    (tmp_path / "t.tsv").write_text("1\tfree cash\n0\tsee you\n")
    for argv in (["score", tmp_path / "t.tsv", "-i", evil],
                 ["learn", tmp_path / "t.tsv", "-i", evil, "-f", tmp_path / "m.npz"]):
        err = _one_error(*_run(capsys, *argv)[::2])
        assert "pickle" in err and "--trust-pickle" in err, err
        assert not marker.exists()
    # control: the payload does run when unpickled (the test could see it)
    pickle.loads(evil.read_bytes())
    assert marker.exists()


def test_trust_pickle_reads_an_old_joblib_model_with_a_warning(capsys, tmp_path):
    import joblib

    X, y, text = _svm_rows(100, 3, seed=4)
    (tmp_path / "r.svm").write_text(text)
    old = OAUCM().partial_fit(np.column_stack([np.zeros(len(y)), X]), y, classes=[0, 1])
    joblib.dump({"kind": "sosl-cli-model", "layout": 1, "sosl_version": "0.1", "model": old,
                 "features": {"fmt": "libsvm", "hash_bits": None, "n_features": 4,
                              "positive": None, "delimiter": ",", "label_col": 0,
                              "ngram": 1}, "rows_seen": 100}, tmp_path / "old.joblib")
    _one_error(*_run(capsys, "score", tmp_path / "r.svm", "-i", tmp_path / "old.joblib")[::2])
    code, out, err = _run(capsys, "score", tmp_path / "r.svm", "-i", tmp_path / "old.joblib",
                          "--trust-pickle")
    assert code == 0 and "sosl: warning:" in err and "pickle" in err
    np.testing.assert_allclose([float(v) for v in out.split()],
                               old.decision_function(np.column_stack([np.zeros(len(y)), X])),
                               rtol=1e-9)


def _interrupt(*args, **kwargs):
    fh = args[0]
    fh.write(b"PK\x03\x04 half a model")
    raise KeyboardInterrupt


def test_sigint_during_the_write_keeps_the_old_model_and_no_temporary(capsys, monkeypatch,
                                                                      tmp_path):
    _, _, text = _svm_rows(80, 3, seed=5)
    (tmp_path / "r.svm").write_text(text)
    assert _run(capsys, "learn", tmp_path / "r.svm", "-q", "-f", tmp_path / "m.npz")[0] == 0
    before = (tmp_path / "m.npz").read_bytes()
    monkeypatch.setattr(np, "savez", _interrupt)
    code, _, err = _run(capsys, "learn", tmp_path / "r.svm", "-q", "-f", tmp_path / "m.npz")
    assert code == 130 and "interrupted" in err
    assert (tmp_path / "m.npz").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.npz", "r.svm"]


def test_a_non_atomic_write_is_caught(capsys, monkeypatch, tmp_path):
    """Mutant: the CLI writing over the target in place loses the old model on SIGINT."""
    _, _, text = _svm_rows(80, 3, seed=5)
    (tmp_path / "r.svm").write_text(text)
    assert _run(capsys, "learn", tmp_path / "r.svm", "-q", "-f", tmp_path / "m.npz")[0] == 0
    before = (tmp_path / "m.npz").read_bytes()

    def in_place(path, model, spec, rows):
        with open(path, "wb") as fh:
            _interrupt(fh)
    monkeypatch.setattr(sosl_cli, "_save_model_file", in_place)
    assert _run(capsys, "learn", tmp_path / "r.svm", "-q", "-f", tmp_path / "m.npz")[0] == 130
    assert (tmp_path / "m.npz").read_bytes() != before


# -- VW's habits ----------------------------------------------------------------------------
def test_predictions_file_holds_the_progressive_scores(capsys, tmp_path):
    X, y, text = _svm_rows(150, 4, seed=6)
    (tmp_path / "r.svm").write_text(text)
    code, _, err = _run(capsys, "learn", "-d", tmp_path / "r.svm", "--n-features", 5, "-q",
                        "-p", tmp_path / "p.txt", "-f", tmp_path / "m.npz")
    assert code == 0, err
    got = np.loadtxt(tmp_path / "p.txt")
    Xd = np.column_stack([np.zeros(len(y)), X])
    m = FTRLAUC()
    m.learn_one(Xd[0], int(y[0]), classes=[0, 1])
    ref = [0.0]
    for i in range(1, len(y)):
        ref.append(m.score_one(Xd[i]))
        m.learn_one(Xd[i], int(y[i]))
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-12)
    assert np.ptp(got) > 0
    # -t scores with the saved model and learns nothing
    code, out, err = _run(capsys, "learn", tmp_path / "r.svm", "-t", "-i", tmp_path / "m.npz",
                          "-p", tmp_path / "t.txt", "--progress", 0)
    assert code == 0, err
    np.testing.assert_allclose(np.loadtxt(tmp_path / "t.txt"),
                               _model(tmp_path / "m.npz").decision_function(Xd), rtol=1e-9)


def test_vw_format_hashes_namespaced_features_and_weights(capsys, tmp_path):
    rng = np.random.default_rng(7)
    lines, pairs, y, w = [], [], [], []
    for i in range(120):
        lab = int(rng.random() < 0.4)
        words = rng.choice(["cash", "win", "hi", "lunch", "now"], size=3)
        imp = 1.0 if i % 3 else 2.0
        lines.append(f"{2 * lab - 1} {imp:g} 'r{i}|text " + " ".join(words)
                     + f" |num len:{len(words[0])}")
        pairs.append([(f"text^{t}", 1.0) for t in words] + [("num^len", float(len(words[0])))])
        y.append(lab)
        w.append(imp)
    (tmp_path / "d.vw").write_text("\n".join(lines) + "\n")
    code, _, err = _run(capsys, "learn", tmp_path / "d.vw", "-b", 8, "--block", 40, "-q",
                        "--learner", "OAUCM",
                        "-f", tmp_path / "m.npz")
    assert code == 0, err
    X = FeatureHasher(2**8, input_type="pair", alternate_sign=False).transform(pairs).tocsr()
    X.sum_duplicates()
    ref = OAUCM()
    y, w = np.array(y), np.array(w)
    ref.partial_fit(X[0:1], y[0:1], classes=[0, 1], sample_weight=w[0:1])
    for a in range(1, 120, 40):
        ref.partial_fit(X[a:a + 40], y[a:a + 40], sample_weight=w[a:a + 40])
    np.testing.assert_allclose(_model(tmp_path / "m.npz").coef_, ref.coef_, rtol=1e-12,
                               atol=1e-15)


def test_blocks_do_not_depend_on_the_chunk(capsys, tmp_path):
    _, _, text = _svm_rows(230, 4, seed=8)
    (tmp_path / "r.svm").write_text(text)
    outs = []
    for chunk in (7, 1000):
        code, out, err = _run(capsys, "learn", tmp_path / "r.svm", "--block", 25, "--chunk",
                              chunk, "--exact-auc", "--progress", 0, "-p", tmp_path / "p.txt")
        assert code == 0, err
        outs.append(np.loadtxt(tmp_path / "p.txt"))
    np.testing.assert_array_equal(*outs)


# -- the binned report ----------------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1])
def test_binned_auc_is_within_its_bound_of_the_exact_auc(seed):
    rng = np.random.default_rng(seed)
    s = rng.normal(size=20000) * 3
    y = (s + rng.normal(size=20000) > 0).astype(int)
    m = BinnedAUC()
    for a in range(0, 20000, 999):
        m.update_many(y[a:a + 999], s[a:a + 999])
    exact = roc_auc_score(y, s)
    assert abs(m.get() - exact) <= m.error_bound() and m.error_bound() < 1e-3
    # scores in distinct bins: binned == exact, ties credited 1/2 as scikit-learn does
    k = rng.integers(-20, 20, 500).astype(float)
    lab = (k + rng.normal(size=500) * 5 > 0).astype(int)
    b = BinnedAUC().update_many(lab, k)
    assert b.get() == pytest.approx(roc_auc_score(lab, k), abs=1e-14)
    assert b.error_bound() > 1e-3                              # the ties are in the bound


def test_binned_auc_tie_credit_mutant(monkeypatch):
    """Mutant: no credit for pairs in one bin; the exact comparison above catches it."""
    rng = np.random.default_rng(3)
    k = rng.integers(-5, 5, 300).astype(float)
    lab = (k + rng.normal(size=300) * 3 > 0).astype(int)
    b = BinnedAUC().update_many(lab, k)
    p, q = b._pq()
    no_tie = float((p * (q.sum() - np.cumsum(q))).sum() / (p.sum() * q.sum()))
    assert abs(no_tie - roc_auc_score(lab, k)) > 1e-3


def test_report_uses_constant_memory_by_default(capsys, tmp_path):
    _, _, text = _svm_rows(300, 3, seed=9)
    (tmp_path / "r.svm").write_text(text)
    code, out, _ = _run(capsys, "learn", tmp_path / "r.svm", "--progress", 0)
    assert code == 0 and "auc binned, within" in out
    bound = float(out.split("within ")[1].split(")")[0])
    assert 0 <= bound < 1e-2


@pytest.mark.skipif(not hasattr(os, "getpid"), reason="no pid")
def test_gzip_on_stdin(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    data = gzip.compress(b"spam\tfree cash now\nham\tsee you later\nspam\twin cash\n")
    env = dict(os.environ, PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-m", "sosl", "learn", "--positive", "spam",
                           "--progress", "0"], input=data, capture_output=True, env=env,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert b"text, hashed to 2^18" in proc.stdout


def test_delay_learns_each_row_after_the_next_d_are_scored(capsys, tmp_path):
    X, y, text = _svm_rows(120, 3, seed=10)
    (tmp_path / "r.svm").write_text(text)
    code, _, err = _run(capsys, "learn", tmp_path / "r.svm", "--n-features", 4, "-q",
                        "--learner", "OAUCM", "--delay", 3, "-p", tmp_path / "p.txt",
                        "-f", tmp_path / "d.npz")
    assert code == 0, err
    Xd = np.column_stack([np.zeros(len(y)), X])
    m = OAUCM()
    m.learn_one(Xd[0], int(y[0]), classes=[0, 1])
    ref, waiting = [0.0], []
    for i in range(1, len(y)):
        ref.append(m.score_one(Xd[i]))
        waiting.append(i)
        if len(waiting) > 3:                  # row i - 3 learned once row i is scored
            j = waiting.pop(0)
            m.learn_one(Xd[j], int(y[j]))
    got = np.loadtxt(tmp_path / "p.txt")                # written with 10 digits
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-12)
    # mutant: learning after D - 1 rows gives other scores
    m2, ref2, waiting = OAUCM(), [0.0], []
    m2.learn_one(Xd[0], int(y[0]), classes=[0, 1])
    for i in range(1, len(y)):
        ref2.append(m2.score_one(Xd[i]))
        waiting.append(i)
        if len(waiting) > 2:
            j = waiting.pop(0)
            m2.learn_one(Xd[j], int(y[j]))
    assert np.abs(np.array(ref2) - got).max() > 1e-6
    # every row is learned in the end, in order: the model of the undelayed pass
    assert _run(capsys, "learn", tmp_path / "r.svm", "--n-features", 4, "-q", "--learner",
                "OAUCM", "-f", tmp_path / "n.npz")[0] == 0
    np.testing.assert_allclose(_model(tmp_path / "d.npz").coef_,
                               _model(tmp_path / "n.npz").coef_, rtol=1e-12, atol=1e-15)
    err = _one_error(*_run(capsys, "learn", tmp_path / "r.svm", "--delay", 2, "--block", 5)[::2])
    assert "--delay" in err


def test_csv_chunks_through_the_compiled_reader_and_back(capsys, tmp_path, monkeypatch):
    from sosl import _reader as reader

    X, y, _ = _svm_rows(230, 4, seed=11)
    body = "".join(f"{lab}," + ",".join(f"{v:.17g}" for v in row) + "\n"
                   for row, lab in zip(X, y))
    (tmp_path / "r.csv").write_text("label,a,b,c,d\n" + body)
    fast_calls = []
    real = reader.FeatureSpec._csv_fast

    def spy(self, block, required):
        out = real(self, block, required)
        fast_calls.append(out is not None)
        return out
    monkeypatch.setattr(reader.FeatureSpec, "_csv_fast", spy)
    code, _, err = _run(capsys, "learn", tmp_path / "r.csv", "--learner", "OAUCM", "-q",
                        "--chunk", 50, "-f", tmp_path / "m.npz")
    assert code == 0, err
    assert fast_calls and all(fast_calls)                 # chunks 2..5 by the compiled reader
    np.testing.assert_allclose(_model(tmp_path / "m.npz").coef_,
                               OAUCM().partial_fit(X, y, classes=[0, 1]).coef_,
                               rtol=1e-12, atol=1e-15)
    # a short row in a later chunk: the pass declines, the line-by-line reader names it
    lines = body.splitlines(keepends=True)
    lines[120] = lines[120].rsplit(",", 1)[0] + "\n"
    (tmp_path / "s.csv").write_text("label,a,b,c,d\n" + "".join(lines))
    err = _one_error(*_run(capsys, "learn", tmp_path / "s.csv", "--chunk", 50)[::2])
    assert "line 122: 4 fields, expected 5" in err, err
    # word labels: the line-by-line reader, for every chunk once the pass has declined one
    words = "".join(("spam," if lab else "ham,") + ",".join(f"{v:.17g}" for v in row) + "\n"
                    for row, lab in zip(X, y))
    (tmp_path / "w.csv").write_text(words)
    fast_calls.clear()
    code, _, err = _run(capsys, "learn", tmp_path / "w.csv", "--learner", "OAUCM", "-q",
                        "--positive", "spam", "--chunk", 50, "-f", tmp_path / "w.npz")
    assert code == 0, err
    assert fast_calls == [False]
    np.testing.assert_allclose(_model(tmp_path / "w.npz").coef_,
                               _model(tmp_path / "m.npz").coef_, rtol=1e-12, atol=1e-15)


def test_block_1_typed_path_equals_row_by_row(capsys, tmp_path, monkeypatch):
    """--block 1 (the default) hands FTRLAUC's sparse chunks to its typed progressive pass:
    the same -p bytes, report rows and figures, and model as the per-row calls (the
    estimator path; the engine's equality with it is tests/test_cli_engine.py's)."""
    _, _, text = _svm_rows(260, 6, seed=9)
    (tmp_path / "r.svm").write_text(text)
    monkeypatch.setattr(sosl_cli, "_ENGINE", False)
    calls = []
    real = FTRLAUC._learn_block_prequential

    def spy(self, X, y):
        calls.append(X.shape[0])
        return real(self, X, y)

    monkeypatch.setattr(FTRLAUC, "_learn_block_prequential", spy)
    runs = []
    for typed in (False, True):
        monkeypatch.setattr(sosl_cli._Pass, "typed_rows", typed)
        code, out, err = _run(capsys, "learn", tmp_path / "r.svm", "--chunk", 37,
                              "--progress", 50, "--exact-auc", "-p", tmp_path / f"p{typed}.txt",
                              "-f", tmp_path / f"m{typed}.npz")
        assert code == 0, err
        lines = [ln.split()[:4] for ln in out.splitlines()[1:]]
        runs.append(((tmp_path / f"p{typed}.txt").read_bytes(), lines,
                     _model(tmp_path / f"m{typed}.npz")))
        if not typed:
            assert calls == []
    assert sum(calls) == 259 and max(calls) <= 37          # every row but the first
    (p0, l0, m0), (p1, l1, m1) = runs
    assert p0 == p1 and p0.count(b"\n") == 260
    assert l0 == l1 and [r[0] for r in l0[1:-1]] == ["50", "100", "150", "200", "250"]
    for k in ("w_", "z_", "sq_grad_", "counts_", "mean_scores_", "calibration_"):
        assert np.array_equal(getattr(m0, k), getattr(m1, k)), k
