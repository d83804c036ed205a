"""The dataset registry, read from the package data file ``sosl/data/registry.tsv``.

The registry is data, not code: one tab-separated line per dataset (the columns are described
in the file's header comment). This module parses it into :class:`DatasetInfo` records (the
18 datasets of the paper's Table 1, :data:`DATASETS`) and :class:`HighDimInfo` records (the
sparse / high-dimensional datasets, :data:`HIGHDIM_DATASETS`), and resolves names with a clear
error for a misspelled one. A checksum written ``unknown`` in the file is ``None`` here.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING

from ._errors import UnknownDatasetError

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["DATASETS", "HIGHDIM_DATASETS", "DatasetInfo", "HighDimInfo", "read_registry",
           "info_of", "highdim_info_of", "any_info_of"]

_UNKNOWN = "unknown"
_NONE = "-"
_COLUMNS = ("name", "group", "format", "files", "sha256", "sources", "source_sha256", "binarize",
            "rows", "features", "positives", "paper_ir", "label_counts", "label_map", "note")


@dataclass(frozen=True)
class DatasetInfo:
    """One dataset of the paper's Table 1.

    Attributes
    ----------
    name : str
        Name used in the paper and as the prepared file's stem, ``<name>.libsvm``.
    sources : tuple of (url, sha256 or None)
        Public files; several are concatenated in order (train then test) when
        ``combined``. A known sha256 is verified by :func:`~sosl.datasets.download`;
        None means that no checksum is known.
    fmt : str
        ``"libsvm"`` or ``"uci-csv"`` (comma separated, label in the last column).
    binarize : str
        Which original label becomes the positive class: ``"label=<v>"`` (that label),
        ``"count=<k>"`` (the one class with exactly k rows, used where the paper states only
        the imbalance ratio) or ``"min-label"`` (the smallest label, where all classes are
        the same size and the paper does not say).
    combined : bool
        Whether train and test files are combined to give the paper's instance count.
    n_rows, n_features, n_positive : int
        Expected shape and positive count of the prepared file.
    paper_ir : float
        The imbalance ratio printed in Table 1 (negatives / positives).
    sha256 : str or None
        Checksum of the prepared file; None means that no checksum is known, and then
        loading and downloading refuse unless called with ``verify=False``.
    label_counts : dict or None
        Expected count per original label, where known.
    label_map : dict or None
        For ``uci-csv``: text label -> numeric label written to the prepared file.
    note : str
        Departures from the paper and choices made.
    """

    name: str
    sources: tuple
    fmt: str
    binarize: str
    combined: bool
    n_rows: int
    n_features: int
    n_positive: int
    paper_ir: float
    sha256: str | None = None
    label_counts: dict | None = None
    label_map: dict | None = None
    note: str = ""

    @property
    def ir(self) -> float:
        """Imbalance ratio of the registered instance set (negatives / positives)."""
        return (self.n_rows - self.n_positive) / self.n_positive

    @property
    def filename(self) -> str:
        """Name of the prepared file, ``<name>.libsvm``."""
        return f"{self.name}.libsvm"


@dataclass(frozen=True)
class HighDimInfo:
    """One sparse or high-dimensional dataset, kept in its original format.

    Attributes
    ----------
    name : str
    files : tuple of (filename, sha256 or None)
        The files read by the loader, looked up in ``<data dir>/highdim/`` (then in the data
        directory itself).
    sources : tuple of (url, sha256 or None)
        One public URL per file (a raw file at a pinned commit), in the order of ``files``.
    fmt : str
        ``"sms-tsv"`` (``label<TAB>text`` lines), ``"svmlight"`` or ``"sparse-binary"``
        (one line of 1-based column indices per row, labels in a second file).
    binarize : str
        ``"label=<v>"``: the original label that becomes the positive class 1.
    n_rows : int
    n_features : int or None
        None for raw text, whose dimension is chosen when it is vectorized.
    n_positive : int
    label_counts : dict
        Expected count per original label (keys as written in the file).
    note : str
    """

    name: str
    files: tuple
    sources: tuple
    fmt: str
    binarize: str
    n_rows: int
    n_features: int | None
    n_positive: int
    label_counts: dict
    note: str = ""

    @property
    def ir(self) -> float:
        """Imbalance ratio (negatives / positives)."""
        return (self.n_rows - self.n_positive) / self.n_positive

    @property
    def positive_label(self) -> str:
        """The original label of the positive class, as written in the file."""
        return self.binarize.partition("=")[2]


def _sha(text):
    return None if text == _UNKNOWN else text


def _label(text):
    """A label key: a number where it reads as one (``-1``, ``3``), else the text (``spam``)."""
    try:
        v = float(text)
    except ValueError:
        return text
    return int(v) if v.is_integer() else v


def _mapping(text, value=int):
    if text in (_UNKNOWN, _NONE):
        return None
    pairs = (item.rsplit(":", 1) for item in text.split(","))
    return {_label(k): value(v) for k, v in pairs}


def _pairs(names, sums, what, name):
    names, sums = names.split(), sums.split()
    if len(names) != len(sums) or not names:
        raise ValueError(f"registry line {name!r}: {len(names)} {what} but {len(sums)} checksums")
    return tuple((n, _sha(s)) for n, s in zip(names, sums))


def _entry(row):
    name, group = row["name"], row["group"]
    sources = _pairs(row["sources"], row["source_sha256"], "sources", name)
    files = _pairs(row["files"], row["sha256"], "files", name)
    note = "" if row["note"] == _NONE else row["note"]
    counts = _mapping(row["label_counts"])
    if group == "table1":
        if files[0][0] != f"{name}.libsvm" or len(files) != 1:
            raise ValueError(f"registry line {name!r}: a Table 1 entry has one file {name}.libsvm")
        return DatasetInfo(name, sources, row["format"], row["binarize"], len(sources) > 1,
                           int(row["rows"]), int(row["features"]), int(row["positives"]),
                           float(row["paper_ir"]), files[0][1], counts,
                           _mapping(row["label_map"]) if row["label_map"] != _NONE else None,
                           note)
    if group == "highdim":
        if len(files) != len(sources):
            raise ValueError(f"registry line {name!r}: one source per file expected")
        return HighDimInfo(name, files, sources, row["format"], row["binarize"], int(row["rows"]),
                           None if row["features"] == _NONE else int(row["features"]),
                           int(row["positives"]), counts, note)
    raise ValueError(f"registry line {name!r}: unknown group {group!r}")


def read_registry(text: str | None = None) -> dict[str, DatasetInfo | HighDimInfo]:
    """Parse the registry file into ``{name: DatasetInfo or HighDimInfo}`` (file order).

    Parameters
    ----------
    text : str or None
        The TSV text; None reads the packaged ``sosl/data/registry.tsv``.
    """
    if text is None:
        text = resources.files("sosl").joinpath("data/registry.tsv").read_text(encoding="utf-8")
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
    header = tuple(lines[0].split("\t"))
    if header != _COLUMNS:
        raise ValueError(f"registry header {header} differs from the expected {_COLUMNS}")
    out = {}
    for ln in lines[1:]:
        cells = ln.split("\t")
        if len(cells) != len(_COLUMNS):
            raise ValueError(f"registry line {cells[0]!r}: {len(cells)} cells, "
                             f"expected {len(_COLUMNS)}")
        entry = _entry(dict(zip(_COLUMNS, cells)))
        out[entry.name] = entry
    return out


_ALL = read_registry()

#: Registry of the 18 datasets of Table 1, in the paper's order.
DATASETS = {k: v for k, v in _ALL.items() if isinstance(v, DatasetInfo)}

#: Registry of the sparse / high-dimensional datasets (see :func:`~sosl.datasets.load_highdim`).
HIGHDIM_DATASETS = {k: v for k, v in _ALL.items() if isinstance(v, HighDimInfo)}


def _check_name(name):
    if not isinstance(name, str):
        raise TypeError(f"a dataset name is a str, got {type(name).__name__} {name!r}")


def _unknown(name, known):
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    guess = f"; did you mean {' or '.join(map(repr, close))}?" if close else "."
    return UnknownDatasetError(f"unknown dataset {name!r}{guess} Known datasets: "
                               f"{', '.join(known)}.")


def info_of(name: str, extra: Iterable[str] = ()) -> DatasetInfo:
    """The :class:`DatasetInfo` of a Table 1 dataset.

    Parameters
    ----------
    name : str
    extra : sequence of str
        Further names the caller accepts (e.g. ``"default"``), listed in the error message.

    Raises
    ------
    UnknownDatasetError
        (a ValueError) naming close matches and every known name. A high-dimensional name
        gets a pointer to :func:`~sosl.datasets.load_highdim` instead.
    TypeError
        If ``name`` is not a str.
    """
    _check_name(name)
    if name in DATASETS:
        return DATASETS[name]
    if name in HIGHDIM_DATASETS:
        raise UnknownDatasetError(
            f"{name!r} is a high-dimensional dataset, not one of Table 1: load it with "
            f"sosl.datasets.load_highdim({name!r}) (sparse CSR or raw text)")
    raise _unknown(name, list(DATASETS) + list(extra))


def highdim_info_of(name: str) -> HighDimInfo:
    """The :class:`HighDimInfo` of a high-dimensional dataset (UnknownDatasetError if none)."""
    _check_name(name)
    if name in HIGHDIM_DATASETS:
        return HIGHDIM_DATASETS[name]
    if name in DATASETS:
        raise UnknownDatasetError(f"{name!r} is a Table 1 dataset: load it with "
                                  f"sosl.datasets.load_dataset({name!r})")
    raise _unknown(name, list(HIGHDIM_DATASETS))


def any_info_of(name: str) -> DatasetInfo | HighDimInfo:
    """The registry record of any registered dataset, Table 1 or high-dimensional."""
    _check_name(name)
    for group in (DATASETS, HIGHDIM_DATASETS):
        if name in group:
            return group[name]
    raise _unknown(name, list(DATASETS) + list(HIGHDIM_DATASETS))
