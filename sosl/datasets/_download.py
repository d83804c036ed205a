"""Fetching the public source files, checking them, and writing the prepared file."""

from __future__ import annotations

import http.client
import os
import shutil
import tempfile
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING

from ..exceptions import UnverifiedDatasetWarning
from ._checksum import sha256sum, verify_sha256
from ._errors import DownloadError, IntegrityError, UnknownChecksumError
from ._loaders import check_dataset
from ._paths import HIGHDIM_SUBDIR, get_data_dir
from ._registry import HighDimInfo, any_info_of

if TYPE_CHECKING:
    from ._paths import StrPath

__all__ = ["UnverifiedDatasetWarning", "sha256sum", "verify_sha256", "download"]


#: The opener used by :func:`download` (``urllib.request.urlopen``); tests replace it.
_urlopen = urllib.request.urlopen


def _fetch(url, dest):
    """Copy ``url`` (http(s) or file://) to the path ``dest``."""
    with _urlopen(url, timeout=60) as r, open(dest, "wb") as f:
        shutil.copyfileobj(r, f)


def _fetch_checked(name, url, dest):
    """:func:`_fetch`, with any failure turned into a DownloadError naming dataset and URL."""
    try:
        _fetch(url, dest)
    except (OSError, http.client.HTTPException, ValueError) as err:
        reason = getattr(err, "reason", None) or err
        raise DownloadError(
            f"dataset {name!r}: could not fetch {url} ({type(err).__name__}: {reason}); check "
            f"the network connection, or put the file into the data directory by hand (see "
            f"data/README.md)") from err


def _install(pairs):
    """Move checked files into place: ``pairs`` of (source, target) in one directory.

    Each file is first copied next to its target under a hidden ``.part`` name and then
    renamed (atomic on one file system). On any failure the partial copies, the targets
    already renamed and the directories created here are removed.
    """
    pairs = [(Path(a), Path(b)) for a, b in pairs]
    parent = pairs[0][1].parent
    created, d = [], parent
    while not d.exists():
        created.append(d)
        d = d.parent
    parts = [b.with_name(f".{b.name}.part") for _, b in pairs]
    done = []
    try:
        parent.mkdir(parents=True, exist_ok=True)
        for (a, _), part in zip(pairs, parts):
            shutil.copyfile(a, part)
        for (_, b), part in zip(pairs, parts):
            os.replace(part, b)
            done.append(b)
    except BaseException:
        for f in parts + done:
            f.unlink(missing_ok=True)
        for d in created:  # deepest first
            try:
                d.rmdir()
            except OSError:
                pass
        raise


def _csv_to_libsvm(src, dst, label_map):
    with open(src, encoding="ascii") as fin, open(dst, "w", encoding="ascii") as fout:
        for line in fin:
            parts = [t.strip() for t in line.strip().split(",")]
            if len(parts) < 2:
                continue
            label = label_map[parts[-1]] if label_map else parts[-1]
            feats = " ".join(f"{j}:{v}" for j, v in enumerate(parts[:-1], start=1)
                             if float(v) != 0.0)
            fout.write(f"{label} {feats}\n")


def _download_files(name, info, data_dir, overwrite, verbose, verify):
    """download() for a high-dimensional dataset: its files as published, into highdim/."""
    target_dir = get_data_dir(data_dir) / HIGHDIM_SUBDIR
    targets = [target_dir / f for f, _ in info.files]
    if all(t.is_file() for t in targets) and not overwrite:
        if verify:
            for t, (_, digest) in zip(targets, info.files):
                verify_sha256(name, t, digest)
        return targets[0]
    if verify and any(digest is None for _, digest in info.sources):
        raise UnknownChecksumError(
            f"dataset {name!r}: the registry knows no sha256 for every source, so a download "
            f"cannot be verified; pass verify=False to accept it unverified")
    with tempfile.TemporaryDirectory(prefix=f"sosl-{name}-") as tmp:
        pairs = []
        for (url, want), target in zip(info.sources, targets):
            part = Path(tmp) / target.name
            _fetch_checked(name, url, part)
            got = sha256sum(part)
            if verify and got != want:
                raise IntegrityError(f"dataset {name!r}: {url} has sha256 {got}, expected "
                                     f"{want}; the public file changed or the download is corrupt")
            if want is None and verbose:
                print(f"{name}: {url} sha256 {got} (no registered checksum)")
            pairs.append((part, target))
        _install(pairs)
    if verbose:
        print(f"{name}: wrote {', '.join(map(str, targets))}")
    return targets[0]


def download(name: str, data_dir: StrPath | None = None, overwrite: bool = False,
             verbose: bool = True, verify: bool = True) -> Path:
    """Fetch a dataset from its public source, verify it and write it to the data directory.

    For a Table 1 dataset the file written is ``<name>.libsvm``. For a high-dimensional one
    (:data:`HIGHDIM_DATASETS`) the published files are written unchanged into the
    ``highdim/`` folder of the data directory, each verified against its sha256, and the
    path of the first one is returned.

    Each source file with a registered sha256 is verified before use (a mismatch raises and
    nothing is written); one without prints its computed sha256 so it can be pinned. The
    sources are concatenated (LIBSVM) or converted (UCI CSV), and the prepared file is then
    checked with :func:`check_dataset` (shape, label counts, and the sha256 where
    registered). The file appears in ``data_dir`` only if every check passes.

    The sources are fetched into a temporary directory outside the data directory; the data
    directory is created, and the file moved into it, only after every check has passed, so
    a failed download (no network, a corrupt file) leaves nothing behind.

    A download is verifiable when the registry knows the prepared file's sha256 or that of
    every source. Otherwise (the six Table 1 datasets without a checked copy: heart, vehicle,
    svmguide2, satimage, vowel, letter) it is refused before anything is fetched, unless
    ``verify=False``; then only the shape and label checks stand between the public file and
    the data directory.

    This function is never called at import or test time. Plain ``urllib`` and ``hashlib``
    are used (pooch-style: known hash, verify, then move into place), so no extra
    dependency is needed.

    Parameters
    ----------
    name : str
    data_dir : str or path-like or None
        Target directory (created if needed); default as in :func:`get_data_dir`.
    overwrite : bool, default=False
        Replace an existing file; otherwise an existing file is only checked.
    verbose : bool, default=True
    verify : bool, default=True
        Verify the checksums (refusing an unverifiable download); False checks shape and
        label counts only.

    Returns
    -------
    path : pathlib.Path

    Raises
    ------
    UnknownChecksumError
        (an IntegrityError) if ``verify`` and the registry knows no checksum that could
        verify the download; nothing is fetched.
    DownloadError
        (an OSError) if a source cannot be fetched (no network, HTTP error); the message
        names the dataset and the URL.
    IntegrityError
        (a ValueError) if a checksum, the shape or the label counts differ.
    """
    info = any_info_of(name)
    if isinstance(info, HighDimInfo):
        return _download_files(name, info, data_dir, overwrite, verbose, verify)
    if verify and info.sha256 is None and any(s is None for _, s in info.sources):
        raise UnknownChecksumError(
            f"dataset {name!r}: the registry knows no sha256 for {info.filename} nor for every "
            f"source ({', '.join(u for u, _ in info.sources)}), so a download cannot be "
            f"verified; pass verify=False to accept it after the shape and label checks")
    target_dir = get_data_dir(data_dir)
    target = target_dir / info.filename
    if target.exists() and not overwrite:
        check_dataset(name, target_dir, checksum=verify)
        return target
    with tempfile.TemporaryDirectory(prefix=f"sosl-{name}-") as tmp:
        parts = []
        for i, (url, want) in enumerate(info.sources):
            part = Path(tmp) / f"part{i}"
            _fetch_checked(name, url, part)
            got = sha256sum(part)
            if verify and want is not None and got != want:
                raise IntegrityError(f"dataset {name!r}: {url} has sha256 {got}, expected "
                                     f"{want}; the public file changed or the download is corrupt")
            if want is None and verbose:
                print(f"{name}: {url} sha256 {got} (no registered checksum)")
            parts.append(part)
        prepared = Path(tmp) / info.filename
        if info.fmt == "uci-csv":
            _csv_to_libsvm(parts[0], prepared, info.label_map)
        else:
            with open(prepared, "wb") as out:
                for part in parts:
                    data = part.read_bytes()
                    out.write(data if data.endswith(b"\n") or not data else data + b"\n")
        check_dataset(name, tmp, checksum=verify and info.sha256 is not None)
        _install([(prepared, target)])
    if verbose:
        print(f"{name}: wrote {target}")
    return target
