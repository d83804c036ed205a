"""Checksums of dataset files: the sha256 of a file and its check against the registry.

The lowest module of the dataset package's I/O: the loaders check the files they read
and the downloader the files it fetches, both with these functions.
"""

from __future__ import annotations

import hashlib
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

from ..exceptions import UnverifiedDatasetWarning
from ._errors import IntegrityError, UnknownChecksumError

if TYPE_CHECKING:
    from ._paths import StrPath

__all__ = ["sha256sum", "verify_sha256"]


def sha256sum(path: StrPath, chunk: int = 1 << 20) -> str:
    """Hex sha256 of a file."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(chunk), b""):
            h.update(block)
    return h.hexdigest()


def verify_sha256(name: str, path: StrPath, expected: str | None, strict: bool = True) -> str:
    """Check the sha256 of ``path`` against the registry's ``expected`` digest.

    Parameters
    ----------
    name : str
        The dataset, named in the error messages.
    path : path-like
    expected : str or None
        None means that the registry knows no checksum for this file.
    strict : bool, default=True
        False accepts the file anyway: instead of raising, an
        :class:`UnverifiedDatasetWarning` names the file and its sha256 (and the expected
        one, if any), so that the copy used can be pinned or compared later.

    Returns
    -------
    digest : str

    Raises
    ------
    UnknownChecksumError
        If ``strict`` and ``expected`` is None: the file cannot be verified.
    IntegrityError
        If ``strict`` and the digests differ.
    """
    path = Path(path)
    if expected is None and strict:
        raise UnknownChecksumError(
            f"dataset {name!r}: the registry knows no sha256 for {path.name}, so {path} cannot "
            f"be verified; pass verify=False to use it unverified")
    got = sha256sum(path)
    if expected is None:
        warnings.warn(f"dataset {name!r}: {path} (sha256 {got}) is used unverified: the "
                      f"registry knows no checksum for {path.name}", UnverifiedDatasetWarning,
                      stacklevel=2)
    elif got != expected:
        if strict:
            raise IntegrityError(
                f"dataset {name!r}: {path} has sha256 {got}, the registry expects {expected}; "
                f"the file is not the registered one (fetch it again, or pass verify=False to "
                f"use it)")
        warnings.warn(f"dataset {name!r}: {path} (sha256 {got}) is used unverified: the "
                      f"registry expects sha256 {expected}", UnverifiedDatasetWarning,
                      stacklevel=2)
    return got
