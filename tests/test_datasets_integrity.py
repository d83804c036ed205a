"""Checksums: every registry entry has one or says that none is known, and loading,
checking and downloading refuse an unverifiable or altered file unless told otherwise."""

import os
import re

import numpy as np
import pytest

from sosl import datasets as ds
from sosl.datasets import _download, _registry

NO_CHECKED_COPY = {"heart", "vehicle", "svmguide2", "satimage", "vowel", "letter"}
HEX64 = re.compile(r"[0-9a-f]{64}")


def _write_libsvm(path, X, y):
    with open(path, "w") as f:
        for row, label in zip(X, y):
            feats = " ".join(f"{j + 1}:{v:.17g}" for j, v in enumerate(row) if v != 0)
            f.write(f"{label:g} {feats}\n")


def _fake(tmp_path, name, labels):
    """A file with the registered shape and the given original labels (not the real bytes)."""
    info = ds.DATASETS[name]
    rng = np.random.default_rng(11)
    X = rng.normal(size=(info.n_rows, info.n_features))
    _write_libsvm(tmp_path / info.filename, X, np.asarray(labels, dtype=float))
    return tmp_path / info.filename


def _heart_labels():
    return [1.0] * 120 + [-1.0] * 150


def test_registry_file_states_every_checksum():
    """Each file and source checksum is a sha256 or the literal word 'unknown'."""
    from importlib import resources

    text = resources.files("sosl").joinpath("data/registry.tsv").read_text()
    lines = [ln.split("\t") for ln in text.splitlines() if ln and not ln.startswith("#")]
    header, rows = lines[0], lines[1:]
    sha, src = header.index("sha256"), header.index("source_sha256")
    assert len(rows) == len(ds.DATASETS) + len(ds.HIGHDIM_DATASETS) == 22
    for row in rows:
        for digest in row[sha].split() + row[src].split():
            assert digest == "unknown" or HEX64.fullmatch(digest), row[0]
    unknown_final = {row[0] for row in rows if row[sha] == "unknown"}
    assert unknown_final == NO_CHECKED_COPY
    for name, info in ds.DATASETS.items():
        assert (info.sha256 is None) == (name in NO_CHECKED_COPY)
    for info in ds.HIGHDIM_DATASETS.values():  # the staged files are the sources, byte for byte
        assert all(s is not None for _, s in info.files)
        assert [s for _, s in info.files] == [s for _, s in info.sources]


def test_registry_parser_rejects_malformed_lines():
    text = _registry.resources.files("sosl").joinpath("data/registry.tsv").read_text()
    lines = text.splitlines()
    body = [i for i, ln in enumerate(lines) if ln.startswith("splice\t")][0]
    bad = lines.copy()
    bad[body] = bad[body].rsplit("\t", 1)[0]  # one cell short
    with pytest.raises(ValueError, match="cells"):
        _registry.read_registry("\n".join(bad))
    bad = lines.copy()
    bad[body] = bad[body].replace("\tunknown\t", "\tunknown unknown\t", 1)  # two sums, one source
    with pytest.raises(ValueError, match="checksums"):
        _registry.read_registry("\n".join(bad))
    assert _registry.read_registry(text).keys() == _registry._ALL.keys()


def test_load_refuses_altered_file(tmp_path):
    info = ds.DATASETS["australian"]
    _fake(tmp_path, "australian", [1.0] * 307 + [-1.0] * 383)  # right counts, other bytes
    with pytest.raises(ds.IntegrityError, match=info.sha256):
        ds.load_dataset("australian", tmp_path)
    with pytest.raises(ValueError, match="verify=False"):
        ds.load_dataset("australian", tmp_path)
    X, y = ds.load_dataset("australian", tmp_path, verify=False)
    assert X.shape == (690, 14) and y.sum() == 307


def test_load_and_check_refuse_without_known_checksum(tmp_path):
    _fake(tmp_path, "heart", _heart_labels())
    with pytest.raises(ds.UnknownChecksumError, match="'heart'.*no sha256.*verify=False"):
        ds.load_dataset("heart", tmp_path)
    with pytest.raises(ds.UnknownChecksumError, match="checksum=False"):
        ds.check_dataset("heart", tmp_path)
    X, y = ds.load_dataset("heart", tmp_path, verify=False)
    assert X.shape == (270, 13) and y.sum() == 120
    assert ds.check_dataset("heart", tmp_path, checksum=False)["n_positive"] == 120


def test_download_refuses_unverifiable_before_fetching(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(_download, "_fetch", lambda url, dest: calls.append(url))
    target = tmp_path / "new"
    for name in NO_CHECKED_COPY:
        with pytest.raises(ds.UnknownChecksumError, match=f"'{name}'.*verify=False"):
            ds.download(name, target, verbose=False)
    assert calls == [] and not target.exists()


def test_download_unverified_when_asked(tmp_path, monkeypatch):
    """verify=False accepts a source whose checksum is unknown, after shape and label checks."""
    src = tmp_path / "heart.src"
    X = np.random.default_rng(3).normal(size=(270, 13))
    _write_libsvm(src, X, np.array(_heart_labels()))
    info = ds.DATASETS["heart"]
    monkeypatch.setitem(ds.DATASETS, "heart", ds.DatasetInfo(
        **{**info.__dict__, "sources": ((src.as_uri(), None),)}))
    out = tmp_path / "out"
    path = ds.download("heart", out, verbose=False, verify=False)
    assert path == out / "heart.libsvm"
    assert ds.load_dataset("heart", out, verify=False)[1].sum() == 120
    # a source with the wrong label counts is still refused, and nothing is written
    _write_libsvm(src, X, np.array([1.0] * 100 + [-1.0] * 170))
    out2 = tmp_path / "out2"
    with pytest.raises(ds.IntegrityError, match="expected 120, found 100"):
        ds.download("heart", out2, verbose=False, verify=False)
    assert not (out2 / "heart.libsvm").exists()


def test_shared_files_match_registered_checksums():
    d = os.environ.get("SOSL_DATA_DIR")
    if not d:
        pytest.skip("SOSL_DATA_DIR is not set")
    found = 0
    for name, info in ds.DATASETS.items():
        path = os.path.join(d, info.filename)
        if info.sha256 is None or not os.path.isfile(path):
            continue
        assert ds.sha256sum(path) == info.sha256, name
        found += 1
    if not found:
        pytest.skip(f"no registered Table 1 file in {d}")
