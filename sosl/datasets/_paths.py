"""Where dataset files are looked up: ``data_dir``, then ``$SOSL_DATA_DIR``, then the cache."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Union

from ._errors import DataDirectoryError, DatasetNotFoundError

#: a path as a string or a path-like object
StrPath = Union[str, os.PathLike]

__all__ = ["get_data_dir", "find_file", "candidate_dirs"]

#: Sub-folder of a data directory that holds the high-dimensional datasets.
HIGHDIM_SUBDIR = "highdim"


def _cache_dir():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "sosl"


def get_data_dir(data_dir: StrPath | None = None) -> Path:
    """The data directory: ``data_dir`` if given, else ``$SOSL_DATA_DIR``, else the cache dir.

    The cache directory is ``$XDG_CACHE_HOME/sosl`` (default ``~/.cache/sosl``).

    Returns
    -------
    path : pathlib.Path
        Not created and not checked for existence.
    """
    if data_dir is not None:
        return Path(data_dir)
    env = os.environ.get("SOSL_DATA_DIR")
    if env:
        return Path(env)
    return _cache_dir()


def candidate_dirs(data_dir: StrPath | None = None) -> list[Path]:
    """The directories searched, in order: ``[data_dir]``, else ``[$SOSL_DATA_DIR, cache]``.

    A directory the caller named (``data_dir``, or ``$SOSL_DATA_DIR`` when set and not
    empty) must exist; the cache directory may be absent (nothing has been downloaded yet).

    Raises
    ------
    DataDirectoryError
        (a FileNotFoundError) naming the variable and the path, if a named directory is
        missing or is not a directory.
    """
    if data_dir is not None:
        d = Path(data_dir)
        if not d.is_dir():
            raise DataDirectoryError(
                f"data directory {d} (the data_dir argument): "
                f"{'not a directory' if d.exists() else 'no such directory'}", "data_dir", str(d))
        return [d]
    env = os.environ.get("SOSL_DATA_DIR")
    if env:
        d = Path(env)
        if not d.is_dir():
            raise DataDirectoryError(
                f"SOSL_DATA_DIR={env}: {'not a directory' if d.exists() else 'no such directory'}"
                f"; set SOSL_DATA_DIR to the directory holding the dataset files, or unset it "
                f"to use the cache directory {_cache_dir()}", "SOSL_DATA_DIR", env)
        return [d, _cache_dir()]
    return [_cache_dir()]


def find_file(name: str, filenames: Sequence[str], data_dir: StrPath | None = None,
              subdir: str | None = None, unverifiable: bool = False) -> list[Path]:
    """Paths of ``filenames``, all from the first searched directory that has every one.

    With ``subdir``, each directory ``d`` is searched as ``d/subdir`` first, then ``d``.
    ``unverifiable`` (no checksum known) adds ``verify=False`` to the download hint.

    Raises
    ------
    DatasetNotFoundError
        (a FileNotFoundError) naming the dataset, the files and every directory searched.
    """
    dirs = candidate_dirs(data_dir)
    searched = []
    for d in dirs:
        for where in ([d / subdir] if subdir else []) + [d]:
            searched.append(where)
            paths = [where / f for f in filenames]
            if all(p.is_file() for p in paths):
                return paths
    files = " + ".join(filenames)
    raise DatasetNotFoundError(
        f"dataset {name!r}: no file {files} in {', '.join(map(str, searched))}. Set SOSL_DATA_DIR "
        f"to a directory holding it, pass data_dir=, or fetch it with "
        f"sosl.datasets.download({name!r}, data_dir{', verify=False' if unverifiable else ''})")
