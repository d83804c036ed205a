"""The command line's engine (:mod:`sosl._engine`): the default learner without
scikit-learn, equal to the estimator path bit for bit, and a start-up that imports neither
scikit-learn nor SciPy."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sosl import FTRLAUC
from sosl import cli as sosl_cli
from sosl._engine import FTRLEngine
from sosl._ftrl_state import DEFAULTS, NAME
from sosl.cli import main
from sosl.io import load, load_state

ROOT = Path(__file__).resolve().parents[1]


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _svm_text(n, p, seed, width_jump=False):
    """LIBSVM rows; ``width_jump``: the largest index appears only late (the width grows)."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, p)), 4)
    X[rng.random((n, p)) < 0.3] = 0.0
    if width_jump:
        X[: n // 2, p // 2:] = 0.0
    y = (X[:, 0] + X[:, 1] + 0.7 * rng.normal(size=n) > 0).astype(int)
    y[:2] = [1, 0]
    lines = [f"{'+1' if lab else '-1'} " + " ".join(f"{j + 1}:{v:.17g}" for j, v in
                                                    enumerate(row) if v != 0)
             for row, lab in zip(X, y)]
    return "\n".join(lines) + "\n"


def _both(capsys, monkeypatch, tmp_path, *argv, model_out=True):
    """(-p bytes, report rows, saved state) of the estimator path, then of the engine."""
    runs = []
    for engine in (False, True):
        monkeypatch.setattr(sosl_cli, "_ENGINE", engine)
        pred, model = tmp_path / f"p{engine}.txt", tmp_path / f"m{engine}.npz"
        extra = ["-p", pred] + (["-f", model] if model_out else [])
        code, out, err = _run(capsys, *argv, *extra)
        assert code == 0, err
        rows = [ln.split()[:4] for ln in out.splitlines()[2:]]
        runs.append((pred.read_bytes(), rows, load_state(model) if model_out else None))
    return runs


def _assert_same_state(a, b):
    (sa, ma), (sb, mb) = a, b
    assert sa.learner == sb.learner == NAME
    assert sa.params == sb.params and sa.layout == sb.layout
    assert (sa.n_features, sa.t, sa.n_seen) == (sb.n_features, sb.t, sb.n_seen)
    assert np.array_equal(sa.classes, sb.classes) and sa.classes.dtype == sb.classes.dtype
    assert np.array_equal(sa.calibration, sb.calibration)
    assert set(sa.arrays) == set(sb.arrays)
    for k in sa.arrays:
        assert sa.arrays[k].dtype == sb.arrays[k].dtype, k
        assert np.array_equal(sa.arrays[k], sb.arrays[k]), k
    assert ma == mb


@pytest.mark.parametrize("opts", [
    (),                                                   # --block 1, the default
    ("--block", 7),
    ("--param", "gamma=0.3,l1=0.01"),
])
def test_engine_equals_the_estimator_path(capsys, monkeypatch, tmp_path, opts):
    """The same -p bytes, report lines and model file state (every array, the Platt state,
    the row scale, the width grown from the rows = the width the estimator's scan found)."""
    (tmp_path / "r.svm").write_text(_svm_text(300, 8, seed=4, width_jump=True))
    (p0, r0, s0), (p1, r1, s1) = _both(capsys, monkeypatch, tmp_path, "learn",
                                       tmp_path / "r.svm", "--chunk", 23, "--progress", 40,
                                       "--exact-auc", *opts)
    assert p0 == p1 and p0.count(b"\n") == 300
    assert r0 == r1 and len(r0) == 8
    _assert_same_state(s0, s1)
    assert s1[0].n_features == 9


def test_engine_continues_tests_and_scores_as_the_estimator(capsys, monkeypatch, tmp_path):
    (tmp_path / "a.svm").write_text(_svm_text(150, 6, seed=1))
    (tmp_path / "b.svm").write_text(_svm_text(150, 6, seed=2))
    code, _, err = _run(capsys, "learn", tmp_path / "a.svm", "-q", "-f", tmp_path / "a.npz")
    assert code == 0, err
    (p0, r0, s0), (p1, r1, s1) = _both(capsys, monkeypatch, tmp_path, "learn",
                                       tmp_path / "b.svm", "-i", tmp_path / "a.npz",
                                       "--chunk", 31)
    assert p0 == p1 and r0 == r1
    _assert_same_state(s0, s1)
    (p0, r0, _), (p1, r1, _) = _both(capsys, monkeypatch, tmp_path, "learn",
                                     tmp_path / "b.svm", "-t", "-i", tmp_path / "a.npz",
                                     model_out=False)
    np.testing.assert_allclose(np.loadtxt(tmp_path / "pFalse.txt"),
                               np.loadtxt(tmp_path / "pTrue.txt"), rtol=1e-12, atol=1e-15)
    for proba in ((), ("--proba",)):
        outs = []
        for engine in (False, True):
            monkeypatch.setattr(sosl_cli, "_ENGINE", engine)
            code, out, err = _run(capsys, "score", tmp_path / "b.svm", "-i",
                                  tmp_path / "a.npz", *proba)
            assert code == 0, err
            outs.append(np.array(out.split(), dtype=float))
        np.testing.assert_allclose(outs[0], outs[1], rtol=1e-12, atol=1e-15)


def test_engine_model_loads_as_the_estimator(capsys, tmp_path):
    """sosl.io.load gives Python users the fitted FTRLAUC; it continues as a fresh one fed
    the same rows would."""
    text = _svm_text(120, 5, seed=7)
    (tmp_path / "r.svm").write_text(text)
    code, _, err = _run(capsys, "learn", tmp_path / "r.svm", "-q", "-f", tmp_path / "m.npz")
    assert code == 0, err
    model = load(tmp_path / "m.npz")
    assert isinstance(model, FTRLAUC) and model.get_params() == DEFAULTS
    ref = FTRLAUC()
    X = np.zeros((120, 6))
    y = np.zeros(120, dtype=int)
    for i, line in enumerate(text.splitlines()):
        label, *feats = line.split()
        y[i] = label == "+1"
        for tok in feats:
            j, v = tok.split(":")
            X[i, int(j)] = float(v)
    import scipy.sparse as sp
    for i in range(120):
        ref.learn_one(sp.csr_matrix(X[i:i + 1]), y[i], classes=None if i else [0, 1])
    for k in ("w_", "z_", "sq_grad_", "counts_", "mean_scores_", "calibration_"):
        assert np.array_equal(getattr(model, k), getattr(ref, k)), k


def test_a_mutated_engine_is_caught(capsys, monkeypatch, tmp_path):
    """The equality test must be able to fail: an engine that does not read gamma="auto"'s
    row scale from the first row, or scores a row after its round, differs from the
    estimator."""
    from sosl import _engine

    (tmp_path / "r.svm").write_text(_svm_text(120, 5, seed=3))
    with monkeypatch.context() as m:
        m.setattr(_engine, "csr_row_scale", lambda data, indptr: 1.0)
        (p0, _, s0), (p1, _, s1) = _both(capsys, m, tmp_path, "learn", tmp_path / "r.svm")
    assert s0[0].layout["row_scale"] > 1.0 and p0 != p1
    with pytest.raises(AssertionError):
        _assert_same_state(s0, s1)
    real_pre = FTRLEngine.prequential

    def after(self, data, indices, indptr, s, lo, hi):
        real_pre(self, data, indices, indptr, s, lo, hi)
        return self.scores(data[indptr[lo]:indptr[hi]], indices[indptr[lo]:indptr[hi]],
                           indptr[lo:hi + 1] - indptr[lo])

    monkeypatch.setattr(FTRLEngine, "prequential", after)
    (p0, _, _), (p1, _, _) = _both(capsys, monkeypatch, tmp_path, "learn", tmp_path / "r.svm")
    assert p0 != p1


def test_engine_declines_what_it_does_not_cover():
    assert FTRLEngine.accepts({}) and FTRLEngine.accepts({"gamma": 0.1, "l2": 0})
    for params in ({"gamma": 0}, {"gamma": True}, {"beta": -1.0}, {"l1": float("nan")},
                   {"shuffle": True}, {"forgetting": "auto"}, {"gamma": "fast"}):
        assert not FTRLEngine.accepts(params), params


def test_bad_parameter_message_comes_from_the_estimator(capsys, tmp_path):
    (tmp_path / "r.svm").write_text(_svm_text(20, 3, seed=0))
    code, _, err = _run(capsys, "learn", tmp_path / "r.svm", "--param", "gamma=-1")
    assert code == 2 and err.startswith("sosl: error: bad parameter for FTRLAUC") \
        and "gamma" in err, err


def test_libsvm_on_stdin_needs_no_width(tmp_path):
    """The width grows with the rows: LIBSVM from standard input without --n-features."""
    text = _svm_text(60, 4, seed=5)
    res = subprocess.run([sys.executable, "-m", "sosl", "learn", "-q", "-f",
                          str(tmp_path / "m.npz")], input=text.encode(), capture_output=True,
                         cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
    assert res.returncode == 0, res.stderr
    state, meta = load_state(tmp_path / "m.npz")
    assert state.n_features == meta["features"]["n_features"] == 5


_PROBE = """
import sys
from sosl.cli import console_main
sys.argv = ["sosl"] + sys.argv[1:]
code = console_main()
heavy = sorted({m.split(".")[0] for m in sys.modules if m.split(".")[0] in
               ("sklearn", "scipy")})
sys.stderr.write("HEAVY=" + ",".join(heavy) + "\\n")
sys.exit(code)
"""


@pytest.mark.parametrize("fmt", ["svm", "csv", "tsv"])
def test_learn_and_score_import_neither_sklearn_nor_scipy(tmp_path, fmt):
    text = _svm_text(10, 3, seed=6)
    if fmt == "tsv":
        text = "".join(f"{i % 2}\t{'free prize' if i % 2 else 'à bientôt'} msg{i}\n"
                       for i in range(10))
    if fmt == "csv":
        rows = []
        for line in text.splitlines():
            label, *feats = line.split()
            x = ["0"] * 4
            for tok in feats:
                j, v = tok.split(":")
                x[int(j) - 1] = v
            rows.append(",".join([label.replace("+", "").replace("-1", "0")] + x))
        text = "\n".join(rows) + "\n"
    data = tmp_path / f"r.{fmt}"
    data.write_text(text, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for argv in (["learn", str(data), "-f", str(tmp_path / "m.npz"), "-p",
                  str(tmp_path / "p.txt")],
                 ["score", str(data), "-i", str(tmp_path / "m.npz"), "--proba"]):
        res = subprocess.run([sys.executable, "-c", _PROBE, *argv], capture_output=True,
                             cwd=ROOT, env=env, timeout=60, text=True)
        assert res.returncode == 0, res.stderr
        assert "HEAVY=\n" in res.stderr, res.stderr
    # and the same command with another learner does load scikit-learn (the probe sees it)
    res = subprocess.run([sys.executable, "-c", _PROBE, "learn", str(data), "-q",
                          "--learner", "PAI"], capture_output=True, cwd=ROOT, env=env,
                         timeout=60, text=True)
    assert res.returncode == 0 and "sklearn" in res.stderr.split("HEAVY=")[1], res.stderr


def test_defaults_are_the_estimators():
    assert FTRLAUC().get_params() == DEFAULTS and FTRLAUC.__name__ == NAME
    assert json.loads(json.dumps(DEFAULTS)) == DEFAULTS


# -- the reader's helpers: kernel against reference -----------------------------------------
_VALUES = np.concatenate([
    np.random.default_rng(0).normal(size=3000) * 10.0 ** np.random.default_rng(1).integers(
        -320, 300, size=3000),
    [0.0, -0.0, 1e-5, 1e-4, 0.1, 1 / 3, 123456789.5, 1234567890.5, 12345678901.0, 5e-324,
     1.7976931348623157e308, -2.5e-7, 9999999999.5, 1e16, np.inf, -np.inf, np.nan]])


def test_format_scores_equals_reference():
    from sosl._core import _reader, _reader_ref

    got = _reader.format_scores(_VALUES)
    assert got == _reader_ref.format_scores(_VALUES) and got.count("\n") == _VALUES.shape[0]
    assert _reader.format_scores(np.zeros(0)) == ""


def test_format_scores_check_catches_a_mutant(monkeypatch):
    """Mutant: a reference with one digit less disagrees with the kernel."""
    from sosl._core import _reader

    def mutant(v):
        return "".join(f"{x:.9g}\n" for x in np.asarray(v).tolist())
    assert _reader.format_scores(_VALUES) != mutant(_VALUES)


@pytest.mark.parametrize("block", [b"", b"\n", b"a", b"a\nb\n\n", b"x" * 70000 + b"\n\ny"])
def test_count_lines_equals_reference(block):
    from sosl._core import _reader, _reader_ref

    assert _reader.count_lines(block) == _reader_ref.count_lines(block)


def test_chunks_cut_at_line_ends_whatever_the_line_lengths(capsys, tmp_path):
    """Chunks after the first are read by bytes: a line longer than a chunk, a last line
    without its end and an error deep in the file still give the rows and line numbers of
    a line-by-line reading (mutant: the chunks' first line numbers off)."""
    from sosl._reader import open_input, read_chunks

    lines = [f"{'+1' if i % 3 else '-1'} 1:{i}" + (" 2:1" * (3000 if i == 40 else 0))
             for i in range(1, 120)]
    text = "\n".join(lines)                               # no final line end
    (tmp_path / "r.svm").write_text(text)
    for chunk in (1, 4, 25, 1000):
        with open_input(str(tmp_path / "r.svm")) as stream:
            parts = list(read_chunks(stream, chunk, "r.svm"))
        assert b"".join(b for _, b in parts) == text.encode()
        for number, block in parts:                         # each starts where it says
            assert text.encode().split(b"\n")[number - 1] == block.split(b"\n")[0]
    (tmp_path / "bad.svm").write_text(text + "\n1 3:x\n")
    for chunk in (1, 7, 1000):
        code, _, err = _run(capsys, "learn", tmp_path / "bad.svm", "--chunk", chunk, "-q")
        assert code == 2 and err.startswith("sosl: error: line 120: '3:x'"), err


# -- text hashed without scikit-learn -------------------------------------------------------
_WORDS = ["Free", "win", "PRIZE", "a", "I", "x_y", "__", "42", "b2b", "don't", "e-mail",
          "Hello", "hello", "CALL", "now!"]


def _docs(n, seed):
    rng = np.random.default_rng(seed)
    docs = [" ".join(rng.choice(_WORDS, size=rng.integers(0, 12)))
            + str(rng.choice(["", ".", "!!", " ,"])) for _ in range(n)]
    return docs + ["", "  ", "a b c", "AB", "one"]


def _hash(fn, docs, bits, ngram):
    block = "\n".join(docs).encode()
    cap = ngram * ((len(block) + 1) // 3 + 2)
    val, idx = np.zeros(cap), np.zeros(cap, dtype=np.int32)
    ptr = np.zeros(len(docs) + 1, dtype=np.int32)
    nnz = fn(block, 2 ** bits, ngram, val, idx, ptr)
    return val[:nnz], idx[:nnz], ptr


@pytest.mark.parametrize("bits, ngram", [(4, 1), (4, 3), (18, 1), (18, 2)])
def test_hash_words_equals_reference_and_hashing_vectorizer(bits, ngram):
    from sklearn.feature_extraction.text import HashingVectorizer

    from sosl._core import _reader, _reader_ref

    docs = _docs(200, seed=bits + ngram)
    X = HashingVectorizer(n_features=2 ** bits, ngram_range=(1, ngram)).transform(docs)
    X.sum_duplicates()
    for fn in (_reader.hash_words, _reader_ref.hash_words):
        val, idx, ptr = _hash(fn, docs, bits, ngram)
        assert np.array_equal(ptr, X.indptr) and np.array_equal(idx, X.indices)
        assert np.array_equal(val, X.data)                  # the same bits


_UNICODE = ["Café", "CAFÉ", "naïve", "ÜBER", "straße", "日本語", "ok", "Ωmega", "x", "é",
            "naïve-e", "l'été", "₂₃", "ǅemal", "İstanbul"]


@pytest.mark.parametrize("ngram", [1, 2])
def test_text_that_is_not_ascii_is_hashed_as_hashing_vectorizer(ngram):
    """The reader's path for text that is not ASCII (tokens found by the regular
    expression, hashed by the kernel with ``tokens_given``) equals scikit-learn's
    HashingVectorizer bit for bit, as does the reference; the mutant (the UTF-8 bytes
    handed to the ASCII tokenizer, which splits at every non-ASCII byte) does not."""
    from sklearn.feature_extraction.text import HashingVectorizer

    from sosl._core import _reader, _reader_ref
    from sosl._reader import _TOKEN

    rng = np.random.default_rng(ngram)
    docs = [" ".join(rng.choice(_UNICODE + _WORDS, size=rng.integers(0, 10)))
            for _ in range(200)] + ["", "日本 語", "ÉÉ"]
    X = HashingVectorizer(n_features=2 ** 18, ngram_range=(1, ngram)).transform(docs)
    X.sum_duplicates()
    block = "\n".join(" ".join(_TOKEN.findall(d.lower())) for d in docs).encode("utf-8")
    for fn in (_reader.hash_words, _reader_ref.hash_words):
        cap = ngram * ((len(block) + 1) // 3 + 2)
        val, idx = np.zeros(cap), np.zeros(cap, dtype=np.int32)
        ptr = np.zeros(len(docs) + 1, dtype=np.int32)
        nnz = fn(block, 2 ** 18, ngram, val, idx, ptr, True)
        assert np.array_equal(ptr, X.indptr) and np.array_equal(idx[:nnz], X.indices)
        assert np.array_equal(val[:nnz], X.data)
    nnz = _reader.hash_words(block, 2 ** 18, ngram, val, idx, ptr)     # mutant
    assert not (np.array_equal(ptr, X.indptr) and np.array_equal(idx[:nnz], X.indices))


def test_hash_words_check_catches_a_mutant(monkeypatch):
    """Mutant: a reference whose hash skips a key's last byte disagrees with the kernel."""
    from sosl._core import _reader, _reader_ref

    docs = _docs(50, seed=1)
    got = _hash(_reader.hash_words, docs, 18, 2)
    assert np.array_equal(got[1], _hash(_reader_ref.hash_words, docs, 18, 2)[1])
    real = _reader_ref._murmur3
    monkeypatch.setattr(_reader_ref, "_murmur3", lambda key: real(key[:-1]))
    assert not np.array_equal(got[1], _hash(_reader_ref.hash_words, docs, 18, 2)[1])


def test_text_engine_equals_estimator_ascii_or_not(capsys, monkeypatch, tmp_path):
    """ASCII chunks go through the compiled hasher, others through scikit-learn's: the
    engine and the estimator path give the same bytes either way."""
    docs = _docs(300, seed=5)
    labels = ["spam" if "PRIZE" in d or "win" in d else "ham" for d in docs]
    lines = [f"{lab}\t{d}" for lab, d in zip(labels, docs)]
    lines[250] = "spam\tcafé gratuit PRIZE"                   # one chunk is not ASCII
    (tmp_path / "t.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (p0, r0, s0), (p1, r1, s1) = _both(capsys, monkeypatch, tmp_path, "learn",
                                       tmp_path / "t.tsv", "--positive", "spam", "--chunk",
                                       40, "--ngram", 2, "-b", 12)
    assert p0 == p1 and r0 == r1
    _assert_same_state(s0, s1)


def test_csv_engine_equals_estimator(capsys, monkeypatch, tmp_path):
    rng = np.random.default_rng(8)
    X = np.round(rng.normal(size=(200, 4)), 3)
    X[rng.random((200, 4)) < 0.25] = 0.0
    y = (X[:, 0] - X[:, 2] + rng.normal(size=200) > 0).astype(int)
    (tmp_path / "r.csv").write_text("y,a,b,c,d\n" + "".join(
        f"{lab}," + ",".join(f"{v:g}" for v in row) + "\n" for row, lab in zip(X, y)))
    for opts in ((), ("--block", 13)):
        (p0, r0, s0), (p1, r1, s1) = _both(capsys, monkeypatch, tmp_path, "learn",
                                           tmp_path / "r.csv", "--chunk", 30, *opts)
        assert p0 == p1 and r0 == r1 and p0.count(b"\n") == 200
        _assert_same_state(s0, s1)


def test_a_model_whose_features_do_not_match_its_setup_is_refused(capsys, tmp_path):
    from sosl.io import save

    (tmp_path / "r.svm").write_text(_svm_text(40, 3, seed=2))
    code, _, err = _run(capsys, "learn", tmp_path / "r.svm", "-q", "-f", tmp_path / "m.npz")
    assert code == 0, err
    state, meta = load_state(tmp_path / "m.npz")
    meta["features"]["n_features"] = state.n_features + 5       # a file edited by hand
    save(state, tmp_path / "bad.npz", meta=meta)
    for argv in (["score", tmp_path / "r.svm"], ["learn", tmp_path / "r.svm"]):
        code, _, err = _run(capsys, *argv, "-i", tmp_path / "bad.npz")
        assert code == 2 and err.count("\n") == 1 and "do not match" in err, err


def test_rows_without_features_give_the_estimators_width(capsys, monkeypatch, tmp_path):
    (tmp_path / "r.svm").write_text("1\n0\n1 # no features\n0\n")
    (p0, r0, s0), (p1, r1, s1) = _both(capsys, monkeypatch, tmp_path, "learn",
                                       tmp_path / "r.svm")
    assert p0 == p1 and s1[0].n_features == 1
    _assert_same_state(s0, s1)
