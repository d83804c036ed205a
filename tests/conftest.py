"""Shared fixtures of the test suite.

``edge_stream``: any test that takes an argument named ``edge_stream`` runs once per
stream of :data:`EDGE_STREAMS`, a ``(name, X, s)`` triple with labels ``s`` in {-1, +1}.
The streams are the cases where an online pairwise learner is most likely to go wrong:
the very first instance, one class alone for a while, duplicated rows, a single feature,
a single row, and constant features (zero spread, so psi_M's kink b = 0, s2 = 0 is hit).

``stress_stream``: any test that takes an argument named ``stress_stream`` runs once per
stream of :data:`STRESS_STREAMS`, a ``(name, X, y)`` triple with labels in {0, 1}: rows at
the magnitudes the learners' no-copy arguments and guards assume away (1e30 to 1e45, and
one row of 1e150 amid ordinary rows), where a learner must either raise with its state
unchanged or commit finite values (``test_reliability.py``).

``edge_stream`` serves tests/_core/test_linear.py and tests/_core/test_baselines.py.

Shared helpers live in ``tests/helpers.py`` (this file puts the folder on ``sys.path``): the
learners of ``sosl.__all__`` and their small settings (``ESTIMATORS``, ``KW``, ``make``), the
two state comparisons under two names (``assert_same_state`` / ``assert_unchanged``: bit for
bit; ``assert_close_to_reference``: a typed pass against its NumPy twin, to rounding), the
reference mutant ``mutant_of`` and the stream builders used by more than one file.

``clusters``: a 1-worker and a 2-worker local dask.distributed cluster (threads,
127.0.0.1), made once per test module that asks for them (``tests/test_dask*.py``).

Markers: ``slow`` (deselect with ``-m "not slow"``; ``make test`` runs everything).
"""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def _edge_streams():
    rng = np.random.default_rng(0)
    out = []
    X = rng.uniform(-1, 1, size=(300, 7))
    out.append(("random", X, np.where(X[:, 0] + 0.5 * rng.normal(size=300) > 0.3, 1.0, -1.0)))
    s = np.r_[np.ones(40), -np.ones(30), rng.choice([-1.0, 1.0], size=80)]
    out.append(("one-class-first", rng.normal(size=(150, 4)), s))
    Xd = np.repeat(rng.normal(size=(10, 3)), 12, axis=0)
    out.append(("duplicates", Xd, np.tile([1.0, -1.0, -1.0], 40)))
    X1 = rng.normal(size=(200, 1))
    out.append(("p=1", X1, np.where(X1[:, 0] > 0.2, 1.0, -1.0)))
    out.append(("single", rng.normal(size=(1, 5)), np.ones(1)))
    Xc = rng.normal(size=(60, 3)) * 0.0 + 1.0
    out.append(("constant", Xc, rng.choice([-1.0, 1.0], size=60)))
    return out


EDGE_STREAMS = _edge_streams()


def _stress_streams():
    rng = np.random.default_rng(11)
    out = []
    for scale in (1e30, 1e45):
        X = rng.normal(size=(80, 6)) * scale
        out.append((f"scale={scale:.0e}", X, (rng.random(80) < 0.3).astype(int)))
    X = rng.normal(size=(80, 6))
    X[40] *= 1e150                                      # one huge row amid ordinary ones
    out.append(("one-huge-row", X, (rng.random(80) < 0.4).astype(int)))
    return out


STRESS_STREAMS = _stress_streams()


def pytest_generate_tests(metafunc):
    if "edge_stream" in metafunc.fixturenames:
        metafunc.parametrize("edge_stream", EDGE_STREAMS, ids=[c[0] for c in EDGE_STREAMS])
    if "stress_stream" in metafunc.fixturenames:
        metafunc.parametrize("stress_stream", STRESS_STREAMS,
                             ids=[c[0] for c in STRESS_STREAMS])


@pytest.fixture(scope="module")
def clusters():
    distributed = pytest.importorskip("distributed")
    kw = dict(processes=False, threads_per_worker=1, protocol="tcp://", host="127.0.0.1",
              dashboard_address="127.0.0.1:0")
    with distributed.LocalCluster(n_workers=1, **kw) as one, \
            distributed.LocalCluster(n_workers=2, **kw) as two:
        yield one, two
