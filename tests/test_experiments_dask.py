"""The runner on a real dask.distributed cluster gives the rows of a loky run, bit for bit.

The cluster is the one :func:`sosl.experiments.backends.dask_client` starts when no
scheduler is given, with 2 single-threaded workers bound to 127.0.0.1; its workers are
threads here (a process cluster takes several seconds to start and import sosl; the
command line's default is processes), and the run reaches it through its scheduler
address, as ``--backend dask --scheduler tcp://...`` does.
"""

import csv

import pytest

from sosl import experiments as ex
from sosl.experiments import backends

distributed = pytest.importorskip(
    "distributed", reason="dask.distributed is not installed (pip install 'sosl[dask]')")

SMALL = dict(n_repeats=1, n_folds=2, inner_folds=2)
TIMING = ("seconds", "cpu_seconds", "pid", "thread")


@pytest.fixture(scope="module")
def cluster():
    with backends.dask_client(None, n_workers=2, processes=False) as client:
        yield client


def _rows(out):
    with open(out / "rows.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    return sorted(({k: v for k, v in r.items() if k not in TIMING} for r in rows),
                  key=lambda r: (r["kind"], r["dataset"], r["algorithm"], int(r["run"]),
                                 r["params"]))


def test_local_cluster_listens_on_loopback_only(cluster):
    info = cluster.scheduler_info()
    assert info["address"].startswith("tcp://127.0.0.1:")
    assert len(info["workers"]) == 2
    assert all(w.startswith("tcp://127.0.0.1:") for w in info["workers"])
    assert all(w["nthreads"] == 1 for w in info["workers"].values())


def test_dask_rows_equal_loky_rows_bit_for_bit(cluster, tmp_path):
    kw = dict(grid="quick", progress=False, log=lambda *_: None, **SMALL)
    names, algos = ["synthetic", "default"], ["OAUC-M", "OAM", "KOIL"]
    ex.run_experiment(names, algos, n_jobs=2, backend="loky", out=tmp_path / "loky", **kw)
    s = ex.run_experiment(names, algos, backend="dask", scheduler=cluster.scheduler.address,
                          out=tmp_path / "dask", **kw)
    loky, dask = _rows(tmp_path / "loky"), _rows(tmp_path / "dask")
    n_cv = 2 * 2 * (3 + 3 + 6)  # datasets x runs x grid points (KOIL: 2 x 3 within its domain)
    assert len(dask) == n_cv + 2 * 3 * 2 and s["new_rows"] == len(dask)
    assert dask == loky                           # every field, AUCs as written, bit for bit
    assert len({r["auc"] for r in dask}) > 10     # not a constant column
    # the work really ran on the cluster's workers (threads named by dask), not here
    threads = {r["thread"] for r in csv.DictReader(open(tmp_path / "dask" / "rows.csv"))}
    assert threads and not threads & {"MainThread"}
    # the same cache: a dask call on the loky results has nothing left to do
    again = ex.run_experiment(names, algos, backend="dask", scheduler=cluster.scheduler.address,
                              out=tmp_path / "loky", **kw)
    assert again["new_rows"] == 0


def test_unreachable_scheduler_is_a_clear_error(tmp_path):
    with pytest.raises(backends.BackendUnavailable, match="cannot reach the dask scheduler"):
        with backends.dask_client("tcp://127.0.0.1:9", n_workers=1, timeout=1):
            pass


def test_dask_oracle_and_reference_rows_equal_loky_rows(cluster, tmp_path):
    kw = dict(grid="quick", progress=False, log=lambda *_: None, ceilings=True, **SMALL)
    names, algos = ["default"], ["OAUC-M", "OKAUC-M"]   # + LogReg, SVC, OKAUC-M_inf
    ex.run_experiment(names, algos, n_jobs=2, backend="loky", out=tmp_path / "loky", **kw)
    s = ex.run_experiment(names, algos, backend="dask", scheduler=cluster.scheduler.address,
                          out=tmp_path / "dask", **kw)
    loky, dask = _rows(tmp_path / "loky"), _rows(tmp_path / "dask")
    oracle = [r for r in dask if r["kind"] == "oracle"]
    assert len(oracle) == 2 * (3 + 9 + 3 + 9 + 9)          # runs x grid points, every learner
    assert {r["algorithm"] for r in oracle} == {"OAUC-M", "OKAUC-M", "LogReg", "SVC",
                                                "OKAUC-M_inf"}
    assert dask == loky and s["new_rows"] == len(dask)
    assert len({r["auc"] for r in oracle}) > 10
