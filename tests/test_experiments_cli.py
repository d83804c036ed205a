"""The experiments command line as a user meets it: mistakes give one line and status 2.

Every mistake must exit with status 2 and print exactly one line on stderr, naming the
problem, with no traceback and nothing on stdout. Each case runs the module the way
``python -m sosl.experiments`` does (``runpy`` executes its ``__main__`` with the case's
argv and environment); one case also runs as a real ``python -m`` process, to pin the
interpreter-level behaviour (status code, no traceback) without paying an interpreter
start-up (over 1 s of imports) per case.
"""

import os
import runpy
import subprocess
import sys

import pytest

from sosl import experiments as ex
from sosl.experiments.__main__ import build_parser
from sosl.experiments.__main__ import main as cli_main

SMALL = ["--repeats", "1", "--folds", "2", "--inner-folds", "2"]


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k != "SOSL_DATA_DIR"}
    env.update(extra)
    return env


def _start(args, env):
    return subprocess.Popen([sys.executable, "-m", "sosl.experiments", *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.fixture(scope="module")
def cached(tmp_path_factory):
    """A results directory holding a tiny quick-grid run (protocol 1x2/2)."""
    out = tmp_path_factory.mktemp("cached")
    ex.run_experiment(["synthetic"], ["OAUC-M"], grid="quick", out=out, progress=False,
                      log=lambda *_: None, n_repeats=1, n_folds=2, inner_folds=2)
    return out


def test_command_line_mistakes_exit_2_with_one_line(tmp_path, cached, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    home = tmp_path / "home"  # no ~/.cache/sosl there
    home.mkdir()
    cases = {
        "misspelled dataset": (["--datasets", "fourclas"], {},
                               ["unknown dataset 'fourclas'", "did you mean 'fourclass'"]),
        "missing --data-dir": (["--datasets", "fourclass", "--data-dir", str(tmp_path / "nope")],
                               {}, ["--data-dir", "nope: no such directory"]),
        "SOSL_DATA_DIR missing, discovery": ([], {"SOSL_DATA_DIR": "/nonexistent"},
                                             ["SOSL_DATA_DIR=/nonexistent: no such directory"]),
        "SOSL_DATA_DIR missing, named": (["--datasets", "fourclass"],
                                         {"SOSL_DATA_DIR": "/nonexistent"},
                                         ["SOSL_DATA_DIR=/nonexistent: no such directory"]),
        "data dir without the file": (["--datasets", "fourclass"],
                                      {"SOSL_DATA_DIR": str(empty), "HOME": str(home),
                                       "XDG_CACHE_HOME": str(home)},
                                      ["dataset 'fourclass'", "no file fourclass.libsvm"]),
        "no dataset anywhere": ([], {"HOME": str(home), "XDG_CACHE_HOME": str(home)},
                                ["no dataset file found", "SOSL_DATA_DIR"]),
        "jobs 0": (["--datasets", "default", "--jobs", "0"], {}, ["--jobs", "got 0"]),
        "jobs not a number": (["--jobs", "two"], {}, ["--jobs", "'two'"]),
        "bogus backend": (["--datasets", "default", "--backend", "bogus"], {},
                          ["--backend", "invalid choice: 'bogus'"]),
        "folds 1": (["--datasets", "default", "--folds", "1"], {}, ["--folds", ">= 2"]),
        "scheduler without cluster backend": (["--datasets", "default", "--scheduler",
                                               "tcp://127.0.0.1:1"], {}, ["--scheduler"]),
        "report-only, nothing cached": (["--report-only", "--out", str(empty)], {},
                                        ["no cached results", "rows.csv"]),
        "estimate 0": (["--datasets", "default", "--estimate", "0"], {},
                       ["--estimate", ">= 1"]),
        "estimate with report-only": (["--estimate", "--report-only", "--out", str(cached)],
                                      {}, ["--estimate and --report-only"]),
        "report-only, other grid cached": (["--report-only", "--out", str(cached)], {},
                                           ["nothing cached", "--grid full",
                                            "cached: --grid quick (protocol 1x2/2, seed 0: "
                                            "2 test rows)"]),
    }
    for name, (args, env, texts) in cases.items():
        code = _run_module(args, env)
        out, err = capsys.readouterr()
        _check_one_line(name, code, out, err, texts)


def _run_module(args, env=None):
    """Run ``python -m sosl.experiments ARGS`` in this process; return its exit status."""
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("SOSL_DATA_DIR", raising=False)
        for k, v in (env or {}).items():
            mp.setenv(k, v)
        mp.setattr(sys, "argv", ["python -m sosl.experiments", *args])
        mp.delitem(sys.modules, "sosl.experiments.__main__", raising=False)
        with pytest.raises(SystemExit) as stop:
            runpy.run_module("sosl.experiments", run_name="__main__", alter_sys=True)
    return stop.value.code


def _check_one_line(name, code, out, err, texts):
    lines = err.strip().splitlines()
    assert code == 2, (name, code, err)
    assert len(lines) == 1 and "Traceback" not in err, (name, err)
    assert lines[0].startswith("python -m sosl.experiments: error: "), (name, err)
    for text in texts:
        assert text in lines[0], (name, text, lines[0])
    assert out == "", (name, out)


def test_mistake_in_a_real_process(tmp_path):
    proc = _start(["--datasets", "fourclas"], _env())
    out, err = proc.communicate(timeout=300)
    _check_one_line("misspelled dataset", proc.returncode, out, err, ["did you mean"])


def test_report_only_with_the_grid_run_prints_tables(cached, capsys):
    code = _run_module(["--report-only", "--grid", "quick", *SMALL, "--out", str(cached)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "| synthetic |" in out and "Legend:" in out and "Run summary: grid quick" in out
    assert (cached / "summary_quick.md").read_text().startswith("Run summary: grid quick")


def test_every_option_has_help_text():
    parser = build_parser()
    opts = {a.dest: a for a in parser._actions}
    for dest in ("jobs", "out", "seed", "repeats", "folds", "inner_folds", "backend",
                 "scheduler", "grid", "datasets", "algorithms", "max_points", "data_dir",
                 "no_verify"):
        assert opts[dest].help and len(opts[dest].help) > 15, dest
    text = parser.format_help()
    assert "resumable cache" in text and "outer partitions" in text and "one per core" in text


@pytest.mark.parametrize("backend, module, text", [
    ("dask", "distributed", "--backend dask needs dask and distributed (pip install 'sosl[dask]')"),
    ("ray", "ray", "--backend ray needs ray (pip install 'sosl[ray]')")])
def test_missing_cluster_package_is_one_line(backend, module, text, monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, module, None)  # makes `import <module>` fail
    code = _run_module(["--datasets", "default", "--algorithms", "OAUC-M", "--grid", "quick",
                        *SMALL, "--quiet", "--backend", backend, "--out", str(tmp_path)])
    out, err = capsys.readouterr()
    _check_one_line(backend, code, "", err, [text])


def _estimate_rows(text):
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if line.startswith("| synthetic"):
            rows[cells[1]] = cells
    return rows


def test_estimate_counts_the_tasks_left_and_times_real_fits(tmp_path, capsys):
    """--estimate writes nothing, counts the tasks of the run (grid points x runs, refits
    of the selected points and, with --ceilings, of every point) and times fits; after the
    run, nothing is left and the estimate is 0."""
    out = tmp_path / "est"
    args = ["--datasets", "synthetic", "--algorithms", "OAUC-M", "KOIL", "--grid", "quick",
            *SMALL, "--ceilings", "--references", "SVC", "--out", str(out), "--quiet"]
    assert cli_main(args + ["--estimate", "2"]) == 0
    rows = _estimate_rows(capsys.readouterr().out)
    assert not (out / "rows.csv").exists()
    # quick grid: OAUC-M 3 points (lam); KOIL 2 x 3 (eta = 2^2 >= 1 left out); SVC 3 x 3
    for name, n_points in [("OAUC-M", 3), ("KOIL", 6), ("SVC", 9)]:
        cells = rows[name]
        assert int(cells[2]) == 2 * n_points                 # 2 runs x points
        assert int(cells[3]) == 2 + 2 * n_points             # 2 tests + the oracle refits
        assert int(cells[4]) == 500 and int(cells[6]) == 1000  # synthetic: 2000 rows, 2 folds
        assert float(cells[5].split()[0]) > 0 and float(cells[8]) > 0
    assert cli_main(args) == 0                       # the run itself
    capsys.readouterr()
    assert cli_main(args + ["--estimate"]) == 0
    text = capsys.readouterr().out
    rows = _estimate_rows(text)
    assert all(c[2] == "0" and c[3] == "0" and c[8] == "0" for c in rows.values()), rows
    assert "Total: 0 CPU s" in text


def test_help_gives_every_grid_range():
    """--help prints each grid's first and last exponent, read from GRIDS (the sparse grid
    stops at 2^-8 and 2^8, short of the paper's 2^-10 and 2^10)."""
    from sosl.experiments.algorithms import GRIDS

    text = " ".join(build_parser().format_help().split())
    for name, exps in GRIDS.items():
        if len(exps) > 3:
            assert f"{name}: e = {exps[0]}..{exps[-1]}" in text, name
            assert f"({len(exps)} points)" in text, name
        else:
            assert f"{name}: e in {{{', '.join(map(str, exps))}}}" in text, name
    lo, hi = GRIDS["sparse"][0], GRIDS["sparse"][-1]
    assert (lo, hi) != (GRIDS["full"][0], GRIDS["full"][-1])
    assert f"it ends at 2^{lo} and 2^{hi}" in text
