"""Tests of sosl.datasets: preprocessing, registry, loading, checking and offline download."""

import os
from pathlib import Path

import numpy as np
import pytest

from sosl import datasets as ds
from sosl.datasets import _download


def _write_libsvm(path, X, y):
    with open(path, "w") as f:
        for row, label in zip(X, y):
            feats = " ".join(f"{j + 1}:{v:.17g}" for j, v in enumerate(row) if v != 0)
            f.write(f"{label:g} {feats}\n")


def _shared_dir():
    d = os.environ.get("SOSL_DATA_DIR")
    if not d:
        pytest.skip("SOSL_DATA_DIR is not set")
    return d


def test_scale_features_range_and_constant_column():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3)) * [1.0, 10.0, 0.0] + [0.0, 5.0, 7.0]
    Xs = ds.scale_features(X)
    np.testing.assert_allclose(Xs[:, :2].min(axis=0), -1.0)
    np.testing.assert_allclose(Xs[:, :2].max(axis=0), 1.0)
    assert np.all(Xs[:, 2] == 0.0)
    # order within a column is kept (affine increasing map)
    assert np.array_equal(np.argsort(Xs[:, 1]), np.argsort(X[:, 1]))
    Xs2 = ds.scale_features(X, feature_range=(0, 2))
    np.testing.assert_allclose(Xs2[:, :2], Xs[:, :2] + 1.0)
    with pytest.raises(ValueError, match="feature_range"):
        ds.scale_features(X, feature_range=(1, 1))
    with pytest.raises(ValueError, match="2-D"):
        ds.scale_features(X[:, 0])


def test_to_unit_ball_common_factor():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 4)) * 3
    Xb = ds.to_unit_ball(X)
    norms = np.linalg.norm(Xb, axis=1)
    assert norms.max() == pytest.approx(1.0)
    assert np.all(norms <= 1.0 + 1e-12)
    ratio = Xb / X
    np.testing.assert_allclose(ratio, ratio[0, 0])  # one factor for all rows
    assert np.array_equal(ds.to_unit_ball(np.zeros((3, 2))), np.zeros((3, 2)))


def test_make_imbalanced_stream_seeded_and_imbalanced():
    X1, y1 = ds.make_imbalanced_stream(600, 4, imbalance_ratio=5.0, class_sep=2.0, random_state=3)
    X2, y2 = ds.make_imbalanced_stream(600, 4, imbalance_ratio=5.0, class_sep=2.0, random_state=3)
    X3, _ = ds.make_imbalanced_stream(600, 4, imbalance_ratio=5.0, class_sep=2.0, random_state=4)
    assert np.array_equal(X1, X2) and np.array_equal(y1, y2)
    assert not np.array_equal(X1, X3)
    assert y1.sum() == 100 and set(np.unique(y1)) == {0, 1}
    # the classes are separated along some direction: mean difference has norm ~ class_sep
    gap = np.linalg.norm(X1[y1 == 1].mean(0) - X1[y1 == 0].mean(0))
    assert 1.5 < gap < 2.5
    assert y1[:100].sum() < 100  # shuffled, not grouped
    with pytest.raises(ValueError, match="imbalance_ratio"):
        ds.make_imbalanced_stream(10, 2, imbalance_ratio=0.5)


def test_load_default_malignant_positive():
    X, y = ds.load_default()
    assert X.shape == (569, 30)
    assert y.sum() == 212  # malignant count of the Wisconsin diagnostic data
    assert X.min() == -1.0 and X.max() == 1.0
    Xd, yd = ds.load_dataset("default")
    assert np.array_equal(Xd, X) and np.array_equal(yd, y)


def test_registry_covers_table1():
    assert len(ds.DATASETS) == 18
    table1_ir = {"splice": 1.07, "australian": 1.25, "heart": 1.25, "svmguide1": 1.29,
                 "ionosphere": 1.79, "fourclass": 1.81, "magic04": 1.84, "diabetes": 1.87,
                 "german": 2.33, "vehicle": 2.90, "svmguide3": 3.34, "segment": 6.00,
                 "svmguide2": 6.38, "satimage": 9.28, "vowel": 10.00, "letter": 26.88,
                 "shuttle": 44.89, "poker": 47.75}
    assert set(ds.DATASETS) == set(table1_ir)
    for name, info in ds.DATASETS.items():
        assert info.paper_ir == table1_ir[name]
        assert info.sources and all(u.startswith("https://") for u, _ in info.sources)
        assert info.combined == (len(info.sources) > 1)
        if info.label_counts is not None:
            assert sum(info.label_counts.values()) == info.n_rows
        # the registered positive count reproduces the paper's IR except the two documented cases
        if name not in ("svmguide3", "shuttle"):
            assert info.ir == pytest.approx(info.paper_ir, abs=0.006), name
        else:
            assert "IR" in info.note
    assert sum(i.sha256 is not None for i in ds.DATASETS.values()) == 12


def _fake_dataset(tmp_path, name="australian", n_pos=None):
    info = ds.DATASETS[name]
    rng = np.random.default_rng(5)
    X = rng.normal(size=(info.n_rows, info.n_features)) * 4 + 2
    y = np.full(info.n_rows, -1.0)
    y[: info.n_positive if n_pos is None else n_pos] = 1.0
    rng.shuffle(y)
    _write_libsvm(tmp_path / info.filename, X, y)
    return X, y


def test_load_dataset_binarizes_and_scales(tmp_path):
    X, y = _fake_dataset(tmp_path)  # right shape, other bytes: loads only unverified
    Xl, yl = ds.load_dataset("australian", data_dir=tmp_path, verify=False)
    assert np.array_equal(yl, (y == 1).astype(int))
    np.testing.assert_allclose(Xl, ds.scale_features(X), atol=1e-12)
    Xr, _ = ds.load_dataset("australian", data_dir=tmp_path, scale=False, verify=False)
    np.testing.assert_allclose(Xr, X, rtol=1e-15)
    Xb, _ = ds.load_dataset("australian", data_dir=tmp_path, unit_ball=True, verify=False)
    assert np.linalg.norm(Xb, axis=1).max() == pytest.approx(1.0)
    assert ds.available_datasets(tmp_path) == ["australian"]


def test_data_dir_resolution(tmp_path, monkeypatch):
    _fake_dataset(tmp_path)
    monkeypatch.setenv("SOSL_DATA_DIR", str(tmp_path))
    assert ds.get_data_dir() == tmp_path
    assert ds.get_data_dir("/elsewhere") == Path("/elsewhere")
    assert "australian" in ds.available_datasets()
    monkeypatch.delenv("SOSL_DATA_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert ds.get_data_dir() == tmp_path / "cache" / "sosl"
    with pytest.raises(FileNotFoundError, match="SOSL_DATA_DIR"):
        ds.load_dataset("australian")
    with pytest.raises(ValueError, match="unknown dataset"):
        ds.load_dataset("nope", data_dir=tmp_path)


def test_check_dataset_reports_mismatch(tmp_path):
    _fake_dataset(tmp_path, n_pos=300)
    with pytest.raises(ValueError) as err:
        ds.check_dataset("australian", tmp_path)
    msg = str(err.value)
    assert "positive rows" in msg and "expected 307, found 300" in msg
    assert "sha256" in msg and "label counts" in msg
    _fake_dataset(tmp_path)
    with pytest.raises(ValueError, match="sha256"):  # right counts, different bytes
        ds.check_dataset("australian", tmp_path)
    rep = ds.check_dataset("australian", tmp_path, checksum=False)
    assert rep["n_positive"] == 307 and rep["sha256"] is None


def test_count_rule_and_ambiguity(tmp_path):
    info = ds.DATASETS["svmguide2"]
    rng = np.random.default_rng(2)
    X = rng.normal(size=(info.n_rows, info.n_features))
    y = np.array([1] * 221 + [2] * 117 + [3] * 53, dtype=float)
    _write_libsvm(tmp_path / info.filename, X, y)
    _, yl = ds.load_dataset("svmguide2", tmp_path, verify=False)
    assert yl.sum() == 53 and np.all(yl[-53:] == 1)
    assert ds.check_dataset("svmguide2", tmp_path, checksum=False)["n_positive"] == 53
    y[0] = 3  # now no class has exactly 53 rows (220, 117, 54)
    _write_libsvm(tmp_path / info.filename, X, y)
    with pytest.raises(ValueError, match="count=53"):
        ds.load_dataset("svmguide2", tmp_path, verify=False)


def test_download_verifies_checksums_offline(tmp_path, monkeypatch):
    src = tmp_path / "src"
    src.mkdir()
    info = ds.DATASETS["svmguide1"]
    rng = np.random.default_rng(7)
    X = rng.normal(size=(info.n_rows, info.n_features))
    y = np.array([0.0] * 3089 + [1.0] * 4000)
    _write_libsvm(src / "a", X[:5000], y[:5000])
    _write_libsvm(src / "b", X[5000:], y[5000:])
    urls = (src / "a").as_uri(), (src / "b").as_uri()
    sums = ds.sha256sum(src / "a"), ds.sha256sum(src / "b")
    monkeypatch.setitem(ds.DATASETS, "svmguide1", ds.DatasetInfo(
        **{**info.__dict__, "sources": tuple(zip(urls, sums)), "sha256": None}))
    out = tmp_path / "out"
    path = ds.download("svmguide1", out, verbose=False)  # real urllib on file:// URLs
    assert path == out / "svmguide1.libsvm"
    _, yl = ds.load_dataset("svmguide1", out, verify=False)  # no registered final sha256
    assert yl.sum() == 3089
    # a corrupt source is refused and nothing is written
    monkeypatch.setitem(ds.DATASETS, "svmguide1", ds.DatasetInfo(
        **{**info.__dict__, "sources": ((urls[0], "0" * 64), (urls[1], sums[1])), "sha256": None}))
    out2 = tmp_path / "out2"
    with pytest.raises(ValueError, match="sha256"):
        ds.download("svmguide1", out2, verbose=False)
    assert not (out2 / "svmguide1.libsvm").exists()


def test_download_never_fetches_when_file_present(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(_download, "_fetch", lambda url, dest: calls.append(url))
    _fake_dataset(tmp_path)
    with pytest.raises(ValueError, match="sha256"):
        ds.download("australian", tmp_path, verbose=False)  # only checks the existing file
    assert calls == []


def test_shared_data_matches_registry():
    d = _shared_dir()
    names = ds.available_datasets(d)
    assert len(names) >= 1
    for name in names:
        rep = ds.check_dataset(name, d)
        X, y = ds.load_dataset(name, d)
        assert X.shape == (ds.DATASETS[name].n_rows, ds.DATASETS[name].n_features)
        assert y.sum() == rep["n_positive"] == ds.DATASETS[name].n_positive
        assert X.min() >= -1.0 and X.max() <= 1.0


def test_verify_sha256_strict_false_warns_with_the_digest(tmp_path):
    import hashlib
    import warnings

    path = tmp_path / "x.libsvm"
    path.write_text("1 1:0.5\n-1 1:0.25\n")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert ds.verify_sha256("x", path, digest) == digest
    with pytest.raises(ds.UnknownChecksumError, match="no sha256 for x.libsvm"):
        ds.verify_sha256("x", path, None)
    with pytest.raises(ds.IntegrityError, match=f"has sha256 {digest}, the registry expects 00"):
        ds.verify_sha256("x", path, "00" * 32)
    with pytest.warns(ds.UnverifiedDatasetWarning,
                      match=f"{path} \\(sha256 {digest}\\) is used unverified: the registry "
                            "knows no checksum for x.libsvm"):
        assert ds.verify_sha256("x", path, None, strict=False) == digest
    with pytest.warns(ds.UnverifiedDatasetWarning, match=f"registry expects sha256 {'00' * 32}"):
        assert ds.verify_sha256("x", path, "00" * 32, strict=False) == digest
    with warnings.catch_warnings():
        warnings.simplefilter("error")       # a matching file warns of nothing
        assert ds.verify_sha256("x", path, digest, strict=False) == digest


def test_vowel_takes_class_2_with_the_reason_in_its_note():
    info = ds.DATASETS["vowel"]
    assert info.binarize == "label=2" and info.n_positive == 90
    assert "RMS z-score 0.76" in info.note and "class 3 second (1.60)" in info.note
    assert "--positive-class vowel=K" in info.note


def test_load_dataset_positive_class_overrides_the_rule(tmp_path):
    rng = np.random.default_rng(3)
    labels = np.repeat(np.arange(11.0), 8)
    X = rng.normal(size=(labels.size, 10))
    _write_libsvm(tmp_path / "vowel.libsvm", X, labels)
    _, y = ds.load_dataset("vowel", tmp_path, verify=False)
    assert np.array_equal(y, (labels == 2).astype(int))            # the registry's class
    _, y5 = ds.load_dataset("vowel", tmp_path, verify=False, positive_class=5)
    assert np.array_equal(y5, (labels == 5).astype(int))
    with pytest.raises(ds.IntegrityError, match=r"no row of .*vowel.libsvm has the label 11 "
                                                r"asked for .* its labels: 0, 1, 2, .*, 10"):
        ds.load_dataset("vowel", tmp_path, verify=False, positive_class=11)
    with pytest.raises(ValueError, match="not to 'default'"):
        ds.load_dataset("default", positive_class=1)
