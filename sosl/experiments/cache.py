"""The runner's result cache ``<out>/rows.csv``: reading, repairing and appending rows.

The file is a CSV with the header :data:`FIELDS` and one physical line per finished task
(a newline inside a text field, e.g. an error message, is written as a space). Only the
process that drives a run writes to it, and only by appending.

Crash safety
------------
Each row goes to the file as one ``write()`` of the whole line, newline last, on a
descriptor opened with ``O_APPEND``, as soon as its task has finished. A process killed at
any moment therefore leaves every earlier row whole and, at worst, part of the row it was
writing as a last line with no newline (a *torn* line). ``os.fsync`` follows at most a
second later (see :class:`RowWriter`), so a crash of the machine itself loses at most the
rows of that second, torn the same way. A torn line is not a row: readers
ignore it, and :func:`open_cache` cuts it off (with a :class:`CacheRepairWarning`) before
anything is appended, so the next row starts on a line of its own and the torn row's task
is computed again. An empty file, or one whose header itself was torn, gets its header.

A *corrupt* line, i.e. a complete line (newline-terminated) that is not a row of this
file (wrong number of fields, a kind, number or JSON cell that does not parse), is not
something a kill produces: it means the file was edited or damaged. It is never dropped
silently: :class:`CacheError` names the file and the line, and the command line prints
that one line and exits with status 2. Deleting the line makes the next run compute its
task again.
"""

import csv
import io
import json
import os
import time
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..exceptions import CacheRepairWarning

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["CACHE_NAME", "FIELDS", "KINDS", "CacheError", "CacheRepairWarning", "RowWriter",
           "open_cache", "read_cache"]

#: the cache file's name inside the result directory
CACHE_NAME = "rows.csv"

#: the columns of the cache, in file order
FIELDS = ("kind", "dataset", "algorithm", "run", "params", "grid", "seed", "protocol", "auc",
          "seconds", "cpu_seconds", "error", "pid", "thread")

#: the task kinds a row can record
KINDS = ("cv", "test", "oracle", "ceiling")   # "ceiling": a run's best oracle (a record)



class CacheError(ValueError):
    """A line of the cache that is not a row (or a header that is not the runner's).

    The message is one line, ``<path>:<line>: <problem>``.

    Attributes
    ----------
    path : str
    line : int
        1-based line number in the file (the header is line 1).
    """

    def __init__(self, path, line, problem):
        super().__init__(f"{path}:{line}: {problem}")
        self.path, self.line = str(path), int(line)


def _float(text):
    return float(text)


def _optional_float(text):
    return float(text) if text else float("nan")


_PARSERS = (("run", int), ("seed", int), ("auc", _float), ("seconds", _float),
            ("cpu_seconds", _optional_float))


def _parse(fields, path, line):
    """One record of the file as a row dict (numbers converted), or CacheError."""
    if len(fields) != len(FIELDS):
        extra = (" (two rows on one line: a torn row with the next appended to it, as an "
                 "older runner wrote them)" if len(fields) > len(FIELDS) else "")
        raise CacheError(path, line, f"{len(fields)} fields, expected {len(FIELDS)}{extra}; "
                                     f"delete the line to have its task computed again")
    row = dict(zip(FIELDS, fields))
    problems = []
    if row["kind"] not in KINDS:
        problems.append(f"kind {row['kind'][:40]!r} is none of {', '.join(KINDS)}")
    for name, parse in _PARSERS:
        try:
            row[name] = parse(row[name])
        except ValueError:
            problems.append(f"{name} {row[name][:40]!r} is not a number")
    try:
        if not isinstance(json.loads(row["params"]), dict):
            raise ValueError
    except ValueError:
        problems.append(f"params {row['params'][:40]!r} is not a JSON object")
    if problems:
        raise CacheError(path, line, "not a row: " + "; ".join(problems)
                         + "; delete the line to have its task computed again")
    return row


def _split(data):
    """(complete part, torn tail) of the file's bytes: the tail follows the last newline."""
    end = data.rfind(b"\n") + 1
    return data[:end], data[end:]


def _rows_of(complete, path, fields=FIELDS, parse=_parse):
    """The rows of the complete lines (the header checked first)."""
    if not complete:
        return []
    try:
        text = complete.decode("utf-8")
    except UnicodeDecodeError as err:
        raise CacheError(path, complete[:err.start].count(b"\n") + 1,
                         "not UTF-8 text; delete the line to have its task computed again"
                         ) from None
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader)
    if tuple(header) != tuple(fields):
        raise CacheError(path, 1, f"header {','.join(header)[:120]!r} is not the runner's "
                                  f"({','.join(fields)}); this is not a cache of "
                                  "sosl.experiments")
    rows = []
    start = reader.line_num + 1
    for record in reader:
        rows.append(parse(record, path, start))
        start = reader.line_num + 1
    return rows


def read_cache(path, fields=FIELDS, parse=_parse):
    """The rows of a cache file, without changing it; a torn last line is ignored.

    Parameters
    ----------
    path : path-like
        The file (``<out>/rows.csv``); a missing or empty file has no rows.

    Returns
    -------
    rows : list of dict
        Keyed by :data:`FIELDS`; ``run`` and ``seed`` int, ``auc``, ``seconds`` and
        ``cpu_seconds`` float (nan where empty).

    Raises
    ------
    CacheError
        (a ValueError) for the first line that is not a row, or a foreign header.
    """
    path = Path(path)
    if not path.exists():
        return []
    complete, _ = _split(path.read_bytes())
    return _rows_of(complete, path, fields, parse)


def _fsync_dir(path):
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:   # a platform without directory descriptors
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_all(fd, data):
    """Write ``data`` with one ``write()`` (more only if the kernel writes a part)."""
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def open_cache(path, fields=FIELDS, parse=_parse):
    """Check and repair a cache file for appending; return its rows and a writer.

    A missing file is created with the header; an empty one gets the header; a torn last
    line (no newline: the row being written when a run was killed) is cut off. The file
    is checked before anything is changed: a corrupt line raises and leaves the file as it
    was. The check and the repair hold the file's lock (see :class:`RowWriter`), so a run
    appending to the same file meanwhile is never cut mid-row.

    Parameters
    ----------
    path : path-like
    fields, parse
        The columns and the parser of one line (``parse(values, path, line)`` returns the
        row dict or raises :class:`CacheError`); default: the runner's :data:`FIELDS`.

    Returns
    -------
    rows : list of dict
        As :func:`read_cache`.
    writer : RowWriter
        Appends rows; close it (or use it as a context manager).

    Raises
    ------
    CacheError
        (a ValueError) for a line that is not a row or a foreign header.

    Warns
    -----
    CacheRepairWarning
        When a torn line is cut off or a header is written into an existing file.
    """
    path = Path(path)
    existed = path.exists()
    writer = RowWriter(path, fields=fields)
    header = ",".join(fields) + "\n"
    try:
        with writer.locked():
            fd = writer._fd
            data = _read_all(fd)
            complete, torn = _split(data)
            rows = _rows_of(complete, path, fields, parse)
            if not complete and not header.encode().startswith(torn.removesuffix(b"\r")):
                raise CacheError(path, 1, f"{torn[:60]!r} is not the runner's header "
                                          f"({','.join(fields)}); this is not a cache of "
                                          "sosl.experiments")
            if torn or not complete:
                os.ftruncate(fd, len(complete))
                if not complete:
                    _write_all(fd, header.encode())
                os.fsync(fd)
    except BaseException:
        writer.close()
        raise
    if not existed:
        _fsync_dir(path.parent)
    elif torn or not complete:
        if torn and complete:
            line = complete.count(b"\n") + 1
            what = (f"cut off the torn last line {line} ({len(torn)} bytes with no newline: "
                    "the row being written when a run stopped); its task is computed again")
        elif torn:
            what = "the header was torn; rewrote it"
        else:
            what = "the file was empty; wrote the header"
        warnings.warn(f"{path}: {what}", CacheRepairWarning, stacklevel=2)
    return rows, writer


def _read_all(fd):
    """The whole file behind ``fd``, read from offset 0 (the offset of ``fd`` untouched)."""
    parts: list[Any] = []
    offset = 0
    while True:
        block = os.pread(fd, 1 << 20, offset)
        if not block:
            return b"".join(parts)
        parts.append(block)
        offset += len(block)


@contextmanager
def _flocked(fd):
    if fcntl is None:      # no advisory locks here (Windows): one run per cache
        yield
        return
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


def _one_line(value):
    text = "" if value is None else str(value)
    return text.replace("\r\n", " ").replace("\n", " ").replace("\r", " ")


class RowWriter:
    """Appends rows to a cache file, each as one ``write()`` of a whole line.

    The write goes to the kernel at once, so a killed process loses at most the row it
    was writing. Each write holds an exclusive ``flock`` on the file (where the platform
    has one), the lock :func:`open_cache` takes to check and repair it, so two runs sharing
    a cache do not cut each other's rows. ``os.fsync`` then makes the rows durable against
    a crash of the machine itself; it costs milliseconds on a disk, so it runs after a row
    when ``sync_every`` seconds have passed since the last one, and on :meth:`close`.

    Parameters
    ----------
    path : path-like
        A cache file ending with a newline (see :func:`open_cache`, which makes it so).
    sync_every : float, default=1.0
        Seconds between fsyncs (a machine crash loses at most the rows of that interval);
        0 fsyncs after every row.
    fields : tuple of str, default=FIELDS
        The columns written, in file order (another cache of the package, such as the
        many-datasets suite's, has its own).
    """

    def __init__(self, path, sync_every=1.0, fields=FIELDS):
        self.path, self.sync_every = Path(path), float(sync_every)
        self.fields = tuple(fields)
        self._fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o666)
        self._synced, self._dirty = time.monotonic(), False

    def locked(self):
        """A context holding the file's exclusive lock."""
        return _flocked(self._fd)

    def write(self, row):
        """Append one row (a dict keyed by :data:`FIELDS`)."""
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerow([_one_line(row[k]) for k in self.fields])
        with self.locked():
            _write_all(self._fd, buf.getvalue().encode("utf-8"))
        self._dirty = True
        if time.monotonic() - self._synced >= self.sync_every:
            self.sync()

    def sync(self):
        """fsync the rows written so far."""
        if self._dirty:
            os.fsync(self._fd)
            self._dirty = False
        self._synced = time.monotonic()

    def close(self):
        """fsync and close the file (idempotent)."""
        if self._fd is not None:
            try:
                self.sync()
            finally:
                os.close(self._fd)
                self._fd = None  # type: ignore[assignment]  # closed: no descriptor

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
