"""The exceptions of :mod:`sosl.datasets`.

Every error raised on purpose by this package derives from :class:`DatasetError`, so a
command-line front end can catch that one class and print its message. Each class also
derives from the built-in exception a caller would expect (``ValueError`` for a wrong name
or a file that does not match the registry, ``FileNotFoundError`` for a missing directory
or file, ``OSError`` for a failed download), so existing ``except`` clauses keep working.
"""
from __future__ import annotations

__all__ = ["DatasetError", "UnknownDatasetError", "DataDirectoryError", "DatasetNotFoundError",
           "IntegrityError", "UnknownChecksumError", "DownloadError"]


class DatasetError(Exception):
    """Base class of the errors of :mod:`sosl.datasets`; the message is one line."""


class UnknownDatasetError(DatasetError, ValueError):
    """A dataset name that is not registered; the message lists close matches."""


class DataDirectoryError(DatasetError, FileNotFoundError):
    """A data directory named by the caller (``data_dir=`` or ``$SOSL_DATA_DIR``) is missing.

    Attributes
    ----------
    variable : str
        ``"SOSL_DATA_DIR"`` or ``"data_dir"``: where the path came from.
    path : str
        The path that is not a directory.
    """

    def __init__(self, message: str, variable: str | None = None, path: str | None = None
                 ) -> None:
        super().__init__(message)
        self.variable = variable
        self.path = path


class DatasetNotFoundError(DatasetError, FileNotFoundError):
    """A registered dataset whose file is in none of the data directories."""


class IntegrityError(DatasetError, ValueError):
    """A file that does not match the registry (sha256, shape or label counts)."""


class UnknownChecksumError(IntegrityError):
    """Verification was asked for (``verify=True``) but the registry knows no checksum."""


class DownloadError(DatasetError, OSError):
    """Fetching a source file failed; the message names the dataset and the URL."""
