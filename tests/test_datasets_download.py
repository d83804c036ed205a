"""Downloading without a network: a clear DownloadError naming dataset and URL, nothing left
behind. The opener is replaced, so no test here touches the network."""

import io
import os
import socket
import tempfile
import urllib.error

import numpy as np
import pytest

from sosl import datasets as ds
from sosl.datasets import _download


@pytest.fixture
def offline(monkeypatch, tmp_path):
    """No network: the opener fails as urllib does without DNS, and sockets cannot connect.

    Returns the scratch directory that serves as the system temporary directory.
    """
    def no_dns(url, timeout=None):
        raise urllib.error.URLError(socket.gaierror(-3, "Temporary failure in name resolution"))

    def no_connect(*args, **kwargs):
        raise AssertionError("a test tried to open a network connection")

    monkeypatch.setattr(_download, "_urlopen", no_dns)
    monkeypatch.setattr(socket.socket, "connect", no_connect)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    return scratch


@pytest.mark.parametrize("name, verify", [("heart", False), ("australian", True),
                                          ("svmguide1", True)])
def test_offline_download_names_dataset_and_url(offline, tmp_path, name, verify):
    target = tmp_path / "data" / "sub"
    with pytest.raises(ds.DownloadError) as err:
        ds.download(name, target, verbose=False, verify=verify)
    msg = str(err.value)
    first_url = ds.DATASETS[name].sources[0][0]
    assert f"{name!r}" in msg and first_url in msg and "name resolution" in msg
    assert "\n" not in msg
    assert isinstance(err.value, OSError) and isinstance(err.value, ds.DatasetError)
    assert isinstance(err.value.__cause__, urllib.error.URLError)
    assert not (tmp_path / "data").exists()  # no directory created
    assert os.listdir(offline) == []         # no temporary file left


class _Broken(io.RawIOBase):
    """A response that delivers some bytes, then loses the connection."""

    def __init__(self):
        self.sent = False

    def readable(self):
        return True

    def readinto(self, b):
        if self.sent:
            raise ConnectionResetError(104, "Connection reset by peer")
        self.sent = True
        b[:5] = b"1 1:0"
        return 5


def test_interrupted_download_leaves_no_partial_file(offline, tmp_path, monkeypatch):
    monkeypatch.setattr(_download, "_urlopen", lambda url, timeout=None: _Broken())
    target = tmp_path / "existing"
    target.mkdir()
    with pytest.raises(ds.DownloadError, match="Connection reset"):
        ds.download("australian", target, verbose=False)
    assert os.listdir(target) == [] and os.listdir(offline) == []


def test_http_error_names_url(offline, monkeypatch, tmp_path):
    def not_found(url, timeout=None):
        raise urllib.error.HTTPError(url, 404, "Not Found", {}, None)

    monkeypatch.setattr(_download, "_urlopen", not_found)
    with pytest.raises(ds.DownloadError, match=r"'german'.*german\.numer.*Not Found"):
        ds.download("german", tmp_path / "t", verbose=False)
    assert not (tmp_path / "t").exists()


def test_failed_install_removes_created_directories(offline, tmp_path, monkeypatch):
    """A failure while moving the checked file into place leaves no directory behind."""
    src = tmp_path / "src.libsvm"
    rng = np.random.default_rng(4)
    with open(src, "w") as f:
        for i in range(270):
            f.write(f"{1 if i < 120 else -1} " + " ".join(
                f"{j + 1}:{v:.6g}" for j, v in enumerate(rng.normal(size=13))) + "\n")
    info = ds.DATASETS["heart"]
    monkeypatch.setitem(ds.DATASETS, "heart", ds.DatasetInfo(
        **{**info.__dict__, "sources": ((src.as_uri(), None),)}))
    monkeypatch.setattr(_download, "_urlopen", lambda url, timeout=None: open(src, "rb"))

    def full_disk(a, b):
        with open(b, "wb") as f:
            f.write(b"partial")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_download.shutil, "copyfile", full_disk)
    with pytest.raises(OSError, match="No space"):
        ds.download("heart", tmp_path / "a" / "b", verbose=False, verify=False)
    assert not (tmp_path / "a").exists() and os.listdir(offline) == []
