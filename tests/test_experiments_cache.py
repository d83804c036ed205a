"""The runner's result cache (rows.csv): torn, corrupt and empty files, and how rows are written.

A kill during a write leaves a torn last line; the cache must drop exactly that line and
the resumed run must compute exactly the rows that are missing (D8). A line that is not a
row stops the run with one line naming the file and line (D9). An empty file gets its
header (D10).
"""

import csv
import io
import warnings

import pytest

from sosl import experiments as ex
from sosl.experiments import cache, runner
from sosl.experiments.__main__ import main as cli_main
from sosl.experiments.cache import CacheError, CacheRepairWarning

SMALL = dict(n_repeats=1, n_folds=2, inner_folds=2)
#: Perceptron searches nothing: on the quick grid 2 cv rows and 2 test rows, the smallest run
RUN = (["synthetic"], ["Perceptron"])
CLI = ["--datasets", "synthetic", "--algorithms", "Perceptron", "--grid", "quick",
       "--repeats", "1", "--folds", "2", "--inner-folds", "2", "--quiet"]


def _run(out):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CacheRepairWarning)
        return ex.run_experiment(*RUN, grid="quick", out=out, progress=False,
                                 log=lambda *_: None, **SMALL)


def _keys(rows):
    """Task key -> AUC of rows (as written: text; as loaded: float)."""
    return {(r["kind"], r["algorithm"], int(r["run"]), r["params"], r["grid"]): float(r["auc"])
            for r in rows}


def _csv_rows(data):
    return list(csv.DictReader(io.StringIO(data.decode(), newline="")))


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    """The bytes of a complete cache of 4 rows."""
    out = tmp_path_factory.mktemp("full")
    _run(out)
    data = (out / "rows.csv").read_bytes()
    assert data.count(b"\n") == 5 and data.endswith(b"\n")
    return data


@pytest.mark.parametrize("eol", [b"\n", b"\r\n"], ids=["lf", "crlf"])
def test_truncation_at_every_byte_offset_loses_only_the_cut_row(full, tmp_path, monkeypatch,
                                                                 eol):
    """For every prefix of a 4-row cache (a kill at any byte of any write): the repair keeps
    exactly the complete lines before the cut, the resumed run computes only the missing
    rows, and the file ends with every row once, each on its own line. ``crlf``: a cache
    written by the older runner (csv's default line ends), cut between ``\r`` and ``\n``
    too.

    The tasks are replaced by a lookup of the complete cache's rows (the same rows the real
    tasks give, which the other tests run), and fsync (durability against a crash of the
    machine, not of the process, and milliseconds per call on a busy disk) by nothing, so
    that the ~600 resumed runs take seconds."""
    full = full.replace(b"\n", eol)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "rows.csv").write_bytes(full)
    by_key = {(r["kind"], r["algorithm"], r["run"], r["params"]): r
              for r in ex.load_rows(tmp_path / "src")}
    computed = []

    def task(kind, dataset, algorithm, run, params, cfg):
        computed.append((kind, run))
        return dict(by_key[(kind, algorithm, run, runner._params_key(params))])

    monkeypatch.setattr(runner, "_task", task)
    monkeypatch.setattr(cache.os, "fsync", lambda fd: None)
    want = _keys(_csv_rows(full))
    header_end = full.index(b"\n") + 1
    for cut in range(len(full) + 1):
        out = tmp_path / str(cut)     # new files: rewriting the tables in place is slower
        out.mkdir()
        path = out / "rows.csv"
        path.write_bytes(full[:cut])
        kept = full[:full.rfind(b"\n", 0, cut) + 1] if cut else b""
        n_kept = max(kept.count(b"\n") - 1, 0)
        computed.clear()
        s = _run(out)
        after = path.read_bytes()
        prefix = kept if len(kept) >= header_end else (",".join(cache.FIELDS) + "\n").encode()
        assert after.startswith(prefix), cut                  # kept rows untouched
        assert s["new_rows"] == len(computed) == len(want) - n_kept, cut   # only the missing
        rows = _csv_rows(after)
        assert all(None not in r and None not in r.values() for r in rows), cut  # 14 fields
        assert len(rows) == len(want) and _keys(rows) == want, cut


def test_torn_last_line_is_cut_off_with_a_warning(full, tmp_path):
    """D8: a row torn in its last field; the old runner appended the next row to it (a
    28-field line) and ended without that row."""
    path = tmp_path / "rows.csv"
    path.write_bytes(full[:-3])
    with pytest.warns(CacheRepairWarning, match=r"rows.csv: cut off the torn last line 5"):
        rows, w = cache.open_cache(path)
    w.close()
    assert len(rows) == 3 and path.read_bytes() == full[:full.rfind(b"\n", 0, len(full) - 1) + 1]
    assert len(ex.load_rows(tmp_path)) == 3
    # appending to a torn line without the repair (what the old runner did) is detected
    path.write_bytes(full[:-3] + full[full.index(b"\n") + 1:])
    with pytest.raises(CacheError, match=r"rows.csv:5: 27 fields, expected 14 \(two rows"):
        ex.load_rows(tmp_path)


def test_readers_ignore_a_torn_line_without_changing_the_file(full, tmp_path):
    path = tmp_path / "rows.csv"
    path.write_bytes(full[:-10])
    assert len(ex.load_rows(tmp_path)) == 3
    assert path.read_bytes() == full[:-10]


@pytest.mark.parametrize("bad, line, text", [
    ("garbage\n", 3, "1 fields, expected 14"),
    ("cv,synthetic,Perceptron,0,{},,0,1x2/2,high,0.1,0.1,,1,t\n", 3, "auc 'high' is not a"),
    ("cv,synthetic,Perceptron,zero,{},,0,1x2/2,0.5,0.1,0.1,,1,t\n", 3, "run 'zero' is not a"),
    ("fit,synthetic,Perceptron,0,{},,0,1x2/2,0.5,0.1,0.1,,1,t\n", 3, "kind 'fit' is none of"),
    ("cv,synthetic,Perceptron,0,{lam,,0,1x2/2,0.5,0.1,0.1,,1,t\n", 3, "params '{lam' is not"),
    (b"\xff\xfe\n", 3, "not UTF-8"),
])
def test_a_corrupt_line_is_named_and_nothing_is_changed(full, tmp_path, bad, line, text):
    """D9: a line that is not a row ended the old runner in a TypeError traceback."""
    lines = full.splitlines(keepends=True)
    bad = bad if isinstance(bad, bytes) else bad.encode()
    data = b"".join(lines[:2] + [bad] + lines[2:])
    path = tmp_path / "rows.csv"
    path.write_bytes(data)
    where = f"{path}:{line}: "
    for call in (lambda: ex.load_rows(tmp_path), lambda: _run(tmp_path)):
        with pytest.raises(CacheError) as err:
            call()
        assert str(err.value).startswith(where) and text in str(err.value)
        assert "\n" not in str(err.value)
        assert path.read_bytes() == data


def test_a_corrupt_line_on_the_command_line_is_one_line_and_status_2(full, tmp_path, capsys):
    lines = full.splitlines(keepends=True)
    (tmp_path / "rows.csv").write_bytes(b"".join(lines[:3] + [b"x,y\n"] + lines[3:]))
    for extra in ([], ["--report-only"], ["--estimate", "1"]):
        code = cli_main(CLI + ["--out", str(tmp_path)] + extra)
        out, err = capsys.readouterr()
        assert code == 2, (extra, err)
        assert err.count("\n") == 1 and "Traceback" not in err
        assert err.startswith(f"python -m sosl.experiments: error: {tmp_path / 'rows.csv'}:4: "
                              "2 fields, expected 14"), err


def test_a_foreign_header_is_refused(tmp_path):
    (tmp_path / "rows.csv").write_text("a,b,c\n1,2,3\n")
    with pytest.raises(CacheError, match=r"rows.csv:1: header 'a,b,c' is not the runner's"):
        _run(tmp_path)
    (tmp_path / "rows.csv").write_text("no newline, not a header")
    with pytest.raises(CacheError, match=r"rows.csv:1: .* is not the runner's header"):
        _run(tmp_path)
    assert (tmp_path / "rows.csv").read_text() == "no newline, not a header"


def test_an_empty_file_gets_its_header(full, tmp_path):
    """D10: the old runner appended rows to an empty file without a header; the next run
    crashed with KeyError: 'auc'."""
    path = tmp_path / "rows.csv"
    path.write_bytes(b"")
    with pytest.warns(CacheRepairWarning, match="the file was empty; wrote the header"):
        s = ex.run_experiment(*RUN, grid="quick", out=tmp_path, progress=False,
                              log=lambda *_: None, **SMALL)
    assert s["new_rows"] == 4
    assert path.read_bytes().startswith(full[:full.index(b"\n") + 1])
    assert _run(tmp_path)["new_rows"] == 0
    assert _keys(ex.load_rows(tmp_path)) == _keys(_csv_rows(full))


def _record(monkeypatch):
    calls = []
    real_write, real_fsync = cache.os.write, cache.os.fsync

    def write(fd, data):
        calls.append(("write", bytes(data)))
        return real_write(fd, data)

    def fsync(fd):
        calls.append(("fsync", None))
        return real_fsync(fd)

    monkeypatch.setattr(cache.os, "write", write)
    monkeypatch.setattr(cache.os, "fsync", fsync)
    return calls


def test_each_row_is_one_write_and_the_rows_are_fsynced(tmp_path, monkeypatch):
    """A kill between two writes of one row would tear it mid-line: each row is a single
    write() of the whole line, as soon as its task is done; the run ends with an fsync."""
    cache.open_cache(tmp_path / "rows.csv")[1].close()   # the header, written on creation
    calls = _record(monkeypatch)
    _run(tmp_path)
    kinds = [k for k, _ in calls]
    assert kinds[:4] == ["write"] * 4 and kinds[-1] == "fsync", kinds
    writes = [d for k, d in calls if k == "write"]
    assert len(writes) == 4 and all(d.endswith(b"\n") and d.count(b"\n") == 1 for d in writes)
    assert (tmp_path / "rows.csv").read_bytes().endswith(b"".join(writes))
    # sync_every=0: an fsync after every row
    calls.clear()
    rows, w = cache.open_cache(tmp_path / "rows.csv")
    w.sync_every = 0.0
    with w:
        for r in rows[:3]:
            w.write(r)
    assert [k for k, _ in calls] == ["write", "fsync"] * 3


def test_a_newline_in_a_field_stays_on_one_line(tmp_path):
    path = tmp_path / "rows.csv"
    rows, w = cache.open_cache(path)
    row = {k: "" for k in cache.FIELDS}
    row.update(kind="cv", dataset="d", algorithm="a", run=0, params="{}", seed=0, auc=0.0,
               seconds=0.1, error="failed: ValueError: first line\nsecond line\r\nthird")
    with w:
        w.write(row)
    assert path.read_bytes().count(b"\n") == 2
    (back,) = cache.read_cache(path)
    assert back["error"] == "failed: ValueError: first line second line third"


def test_repair_waits_for_a_row_being_written(tmp_path):
    """A second run opening the cache while the first is inside a row's write must not take
    the half-written row for a torn one: the repair waits for the writer's lock."""
    import os
    import threading

    if cache.fcntl is None:
        pytest.skip("no flock on this platform")
    path = tmp_path / "rows.csv"
    _, w = cache.open_cache(path)
    line = b"cv,synthetic,Perceptron,0,{},,0,1x2/2,0.5,0.1,0.1,,1,t\n"
    got = []
    with w, w.locked():
        os.write(w._fd, line[:20])
        t = threading.Thread(target=lambda: got.append(cache.open_cache(path)))
        t.start()
        t.join(0.3)
        assert t.is_alive()                 # blocked on the lock, nothing cut
        os.write(w._fd, line[20:])
    t.join()
    rows, w2 = got[0]
    w2.close()
    assert len(rows) == 1 and rows[0]["auc"] == 0.5
    assert path.read_bytes().endswith(line)


def test_the_command_line_reports_a_repair_in_one_line_and_resumes(full, tmp_path, capsys):
    cut = len(full) - 7
    (tmp_path / "rows.csv").write_bytes(full[:cut])
    torn = cut - (full.rfind(b"\n", 0, cut) + 1)
    assert cli_main(CLI + ["--out", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    warn = [ln for ln in err.splitlines() if ": warning: " in ln]
    assert warn == [f"python -m sosl.experiments: warning: CacheRepairWarning: "
                    f"{tmp_path / 'rows.csv'}: cut off the torn last line 5 ({torn} bytes with no "
                    f"newline: the row being written when a run stopped); its task is computed "
                    "again"], err
    assert "1 new rows" in out
    assert _keys(ex.load_rows(tmp_path)) == _keys(_csv_rows(full))
