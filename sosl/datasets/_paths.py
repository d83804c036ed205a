"""Where dataset files are looked up: ``data_dir``, then ``$SOSL_DATA_DIR``, then the cache."""

import os
from pathlib import Path

from ._errors import DatasetNotFoundError

__all__ = ["get_data_dir", "find_file", "candidate_dirs"]

#: Sub-folder of a data directory that holds the high-dimensional datasets.
HIGHDIM_SUBDIR = "highdim"


def _cache_dir():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "sosl"


def get_data_dir(data_dir=None):
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


def candidate_dirs(data_dir=None):
    """The directories searched, in order: ``[data_dir]``, else ``[$SOSL_DATA_DIR, cache]``."""
    if data_dir is not None:
        return [Path(data_dir)]
    return [Path(d) for d in (os.environ.get("SOSL_DATA_DIR"),) if d] + [_cache_dir()]


def find_file(name, filenames, data_dir=None, subdir=None):
    """Paths of ``filenames``, all from the first searched directory that has every one.

    With ``subdir``, each directory ``d`` is searched as ``d/subdir`` first, then ``d``.

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
        f"sosl.datasets.download({name!r}, data_dir)")
