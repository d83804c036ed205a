"""Shared fixtures of the test suite.

``edge_stream``: any test that takes an argument named ``edge_stream`` runs once per
stream of :data:`EDGE_STREAMS`, a ``(name, X, s)`` triple with labels ``s`` in {-1, +1}.
The streams are the cases where an online pairwise learner is most likely to go wrong:
the very first instance, one class alone for a while, duplicated rows, a single feature,
a single row, and constant features (zero spread, so psi_M's kink b = 0, s2 = 0 is hit).

Markers: ``slow`` (deselect with ``-m "not slow"``; ``make test`` runs everything).
"""

import numpy as np


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


def pytest_generate_tests(metafunc):
    if "edge_stream" in metafunc.fixturenames:
        metafunc.parametrize("edge_stream", EDGE_STREAMS, ids=[c[0] for c in EDGE_STREAMS])
