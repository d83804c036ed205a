"""The high-dimensional datasets: readers on small files written here (always run), and the
real files of ``$SOSL_DATA_DIR/highdim`` (skipped when the variable or the file is absent)."""

import os

import numpy as np
import pytest
import scipy.sparse as sp

from sosl import datasets as ds
from sosl.datasets import _download


def _shared(name):
    d = os.environ.get("SOSL_DATA_DIR")
    if not d:
        pytest.skip("SOSL_DATA_DIR is not set")
    try:
        ds.find_highdim(name, d)
    except FileNotFoundError:
        pytest.skip(f"{name}: no file {ds.HIGHDIM_DATASETS[name].files[0][0]} under {d}")
    return d


def _canonical(X):
    assert sp.issparse(X) and X.format == "csr" and X.dtype == np.float64
    assert X.has_sorted_indices and X.indices.dtype == np.int32


def test_registry_entries():
    # davidson_hate: see _davidson_info below (its registry line may not be merged yet)
    assert [n for n in ds.HIGHDIM_DATASETS if n != "davidson_hate"] == [
        "sms_spam", "w8a", "dorothea_valid"]
    for info in ds.HIGHDIM_DATASETS.values():
        assert sum(info.label_counts.values()) == info.n_rows
        pos = info.positive_label if info.fmt == "sms-tsv" else int(info.positive_label)
        assert info.label_counts[pos] == info.n_positive
        assert all(u.startswith("https://raw.githubusercontent.com/") for u, _ in info.sources)
    assert ds.HIGHDIM_DATASETS["w8a"].n_features == 300
    assert ds.HIGHDIM_DATASETS["sms_spam"].n_features is None


def test_read_sparse_binary_matches_dense(tmp_path):
    rng = np.random.default_rng(0)
    dense = (rng.random((6, 9)) < 0.3).astype(float)
    dense[2] = 0.0  # an empty line is a zero row
    with open(tmp_path / "x.data", "w") as f:
        for row in dense:
            idx = np.flatnonzero(row)
            rng.shuffle(idx)  # any order in the file
            f.write(" ".join(str(j + 1) for j in idx) + " \n")
    X = ds.read_sparse_binary(tmp_path / "x.data", 9)
    _canonical(X)
    assert X.nnz > 0 and np.array_equal(X.toarray(), dense)
    with open(tmp_path / "bad.data", "w") as f:
        f.write("1 10\n")
    with pytest.raises(ValueError, match=r"1\.\.9"):
        ds.read_sparse_binary(tmp_path / "bad.data", 9)
    with open(tmp_path / "dup.data", "w") as f:
        f.write("2 2\n")
    with pytest.raises(ValueError, match="repeated"):
        ds.read_sparse_binary(tmp_path / "dup.data", 9)


def test_read_sms_tsv(tmp_path):
    (tmp_path / "s").write_text("ham\tHello, you\nspam\tWIN £100 now\t!\nham\t\n", encoding="utf-8")
    texts, labels = ds.read_sms_tsv(tmp_path / "s")
    assert texts == ["Hello, you", "WIN £100 now\t!", ""]
    assert labels.tolist() == ["ham", "spam", "ham"]
    (tmp_path / "b").write_text("ham no tab\n", encoding="utf-8")
    with pytest.raises(ValueError, match="line 1 has no tab"):
        ds.read_sms_tsv(tmp_path / "b")


def test_vectorize_texts_methods():
    texts = ["free prize now", "see you at lunch", "prize prize call now", "lunch now"]
    X = ds.vectorize_texts(texts, n_features=2**10)
    _canonical(X)
    assert X.shape == (4, 2**10) and X.nnz >= 10
    np.testing.assert_allclose(sp.linalg.norm(X, axis=1), 1.0)
    assert ds.vectorize_texts(texts).shape == (4, 2**20)  # the default width
    T = ds.vectorize_texts(texts, "tfidf")
    _canonical(T)
    assert T.shape == (4, 8)  # the vocabulary
    assert ds.vectorize_texts(texts, "tfidf", n_features=3).shape == (4, 3)
    with pytest.raises(ValueError, match="method"):
        ds.vectorize_texts(texts, "bag")
    with pytest.raises(ValueError, match="n_features"):
        ds.vectorize_texts(texts, n_features=0)


def _fake_highdim(root):
    """Small files with the registered names, in root/highdim/."""
    d = root / "highdim"
    d.mkdir(parents=True)
    (d / "SMSSpamCollection").write_text("ham\thi\nspam\tprize\n", encoding="utf-8")
    (d / "w8a").write_text("-1 3:1 300:1\n+1 1:1\n", encoding="ascii")
    (d / "dorothea_valid.data").write_text("5 100000\n\n", encoding="ascii")
    (d / "dorothea_valid.labels").write_text("1\n-1\n", encoding="ascii")
    (d / "davidson_labeled_data.csv").write_text(_CSV[1:], encoding="utf-8")
    return d


def test_loaders_on_small_files(tmp_path, monkeypatch):
    d = _fake_highdim(tmp_path / "data")
    monkeypatch.setenv("SOSL_DATA_DIR", str(tmp_path / "data"))  # maps to its highdim/
    texts, y = ds.load_sms_spam(verify=False)
    assert texts == ["hi", "prize"] and y.tolist() == [0, 1]
    X, y = ds.load_highdim("w8a", verify=False)
    _canonical(X)
    assert X.shape == (2, 300) and X[0, 299] == 1 and y.tolist() == [0, 1]
    X, y = ds.load_dorothea_valid(verify=False)
    assert X.shape == (2, 100000) and X.nnz == 2 and y.tolist() == [1, 0]
    # data_dir may also name the folder that holds the files
    assert ds.load_w8a(d, verify=False)[0].shape == (2, 300)
    # the files are not the registered ones: verification refuses them
    for name in ds.HIGHDIM_DATASETS:
        with pytest.raises(ds.IntegrityError, match=f"'{name}'.*sha256"):
            ds.load_highdim(name)
    (d / "dorothea_valid.labels").write_text("1\n", encoding="ascii")
    with pytest.raises(ValueError, match="2 rows.*1 labels"):
        ds.load_dorothea_valid(verify=False)


def test_missing_and_misnamed(tmp_path):
    with pytest.raises(ds.DatasetNotFoundError, match=r"'w8a'.*highdim"):
        ds.load_w8a(tmp_path)
    with pytest.raises(ValueError, match="did you mean 'w8a'"):
        ds.load_highdim("w8", tmp_path)
    with pytest.raises(ValueError, match="load_highdim"):
        ds.load_dataset("w8a", tmp_path)
    with pytest.raises(ValueError, match="load_dataset"):
        ds.load_highdim("german", tmp_path)


def test_download_highdim_into_subfolder(tmp_path, monkeypatch):
    """Sources are fetched (file:// here) into <data dir>/highdim and verified."""
    src = _fake_highdim(tmp_path / "src")
    info = ds.HIGHDIM_DATASETS["dorothea_valid"]
    files = [src / f for f, _ in info.files]
    sums = [ds.sha256sum(f) for f in files]
    monkeypatch.setitem(ds.HIGHDIM_DATASETS, "dorothea_valid", ds.HighDimInfo(**{
        **info.__dict__, "files": tuple((f.name, s) for f, s in zip(files, sums)),
        "sources": tuple((f.as_uri(), s) for f, s in zip(files, sums))}))
    out = tmp_path / "out"
    path = ds.download("dorothea_valid", out, verbose=False)
    assert path == out / "highdim" / "dorothea_valid.data"
    assert ds.load_dorothea_valid(out)[0].shape == (2, 100000)  # verified against the sums
    # a corrupt second source: refused, nothing written (not even the first file)
    monkeypatch.setitem(ds.HIGHDIM_DATASETS, "dorothea_valid", ds.HighDimInfo(**{
        **info.__dict__, "files": tuple((f.name, s) for f, s in zip(files, sums)),
        "sources": ((files[0].as_uri(), sums[0]), (files[1].as_uri(), "0" * 64))}))
    with pytest.raises(ds.IntegrityError, match="sha256"):
        ds.download("dorothea_valid", tmp_path / "out2", verbose=False)
    assert not (tmp_path / "out2").exists()
    calls = []
    monkeypatch.setattr(_download, "_fetch", lambda url, dest: calls.append(url))
    ds.download("dorothea_valid", out, verbose=False, verify=False)  # present: no fetch
    assert calls == []


def test_shared_sms_spam():
    d = _shared("sms_spam")
    texts, y = ds.load_sms_spam(d)
    assert len(texts) == len(y) == 5574 and y.sum() == 747
    assert all(isinstance(t, str) for t in texts) and min(map(len, texts)) >= 1
    X = ds.vectorize_texts(texts)
    _canonical(X)
    assert X.shape == (5574, 2**20) and X.nnz > 50000


def test_shared_w8a():
    d = _shared("w8a")
    X, y = ds.load_highdim("w8a", d)
    _canonical(X)
    assert X.shape == (49749, 300) and X.nnz == 579586 and y.sum() == 1479
    assert np.all(X.data == 1.0)


def test_shared_dorothea_valid():
    d = _shared("dorothea_valid")
    X, y = ds.load_highdim("dorothea_valid", d)
    _canonical(X)
    assert X.shape == (350, 100000) and X.nnz == 317752 and y.sum() == 34
    assert np.all(X.data == 1.0)


# -- davidson_hate ---------------------------------------------------------------------------
#: the registry line of davidson_hate (sosl/data/registry.tsv), as the test inserts it while
#: the packaged registry does not hold it yet; once it does, the packaged entry is used and
#: must agree with this one
DAVIDSON_SHA = "fcb8bc7c68120ae4af04a5b9acd58585513ede11e1548ebf36a5c2040b6f6281"
DAVIDSON_URL = ("https://raw.githubusercontent.com/t-davidson/hate-speech-and-offensive-language/"
                "cb50f7e9eb855a99abc51423bf40df0e26d6fe30/data/labeled_data.csv")


def _davidson_info():
    return ds.HighDimInfo("davidson_hate", (("davidson_labeled_data.csv", DAVIDSON_SHA),),
                          ((DAVIDSON_URL, DAVIDSON_SHA),), "davidson-csv", "label=0", 24783,
                          None, 1430, {0: 1430, 1: 19190, 2: 4163})


@pytest.fixture
def davidson(monkeypatch):
    info = ds.HIGHDIM_DATASETS.get("davidson_hate")
    if info is None:
        monkeypatch.setitem(ds.HIGHDIM_DATASETS, "davidson_hate", _davidson_info())
        return
    want = _davidson_info()
    for field in ("files", "sources", "binarize", "n_rows", "n_positive", "label_counts"):
        assert getattr(info, field) == getattr(want, field), field


_CSV = ('",count,hate_speech,offensive_language,neither,class,tweet\n'
        '0,3,0,0,3,2,"!!! RT @user: a tweet, with a comma"\n'
        '1,3,2,1,0,0,"a ""quoted"" word and\na newline"\n'
        '2,3,0,3,0,1,plain\n')


def test_read_davidson_csv(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text(_CSV[1:], encoding="utf-8")
    texts, classes = ds.read_davidson_csv(path)
    assert texts == ["!!! RT @user: a tweet, with a comma", 'a "quoted" word and\na newline',
                     "plain"]
    assert classes.tolist() == [2, 0, 1] and classes.dtype == np.int64
    path.write_text(_CSV[1:].replace(",1,plain", ",7,plain"), encoding="utf-8")
    with pytest.raises(ValueError, match=r"record 3 .*class '7'"):
        ds.read_davidson_csv(path)
    path.write_text(_CSV[1:].replace(",1,plain", ",plain"), encoding="utf-8")
    with pytest.raises(ValueError, match=r"record 3 .*6 fields, the header 7"):
        ds.read_davidson_csv(path)
    path.write_text("a,b\n1,2\n", encoding="utf-8")
    with pytest.raises(ValueError, match="'class' and 'tweet'"):
        ds.read_davidson_csv(path)


def test_load_davidson_hate_on_a_small_file(tmp_path, davidson):
    d = tmp_path / "highdim"
    d.mkdir()
    (d / "davidson_labeled_data.csv").write_text(_CSV[1:], encoding="utf-8")
    texts, y = ds.load_davidson_hate(tmp_path, verify=False)
    assert len(texts) == 3 and y.tolist() == [0, 1, 0]            # class 0 is the positive
    texts2, y2 = ds.load_highdim("davidson_hate", tmp_path, verify=False)
    assert texts2 == texts and y2.tolist() == y.tolist()
    with pytest.raises(ds.IntegrityError, match="'davidson_hate'.*sha256"):
        ds.load_davidson_hate(tmp_path)                          # not the registered bytes


def test_shared_davidson_hate(davidson):
    d = _shared("davidson_hate")
    texts, y = ds.load_davidson_hate(d)                           # sha256 verified
    assert len(texts) == len(y) == 24783 and y.sum() == 1430
    assert round((len(y) - y.sum()) / y.sum(), 1) == 16.3
    assert all(isinstance(t, str) for t in texts) and sum("\n" in t for t in texts) > 0
    X = ds.vectorize_texts(texts)
    _canonical(X)
    assert X.shape == (24783, 2**20) and X.nnz > 200000
