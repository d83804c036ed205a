"""Every snapshot route reads a model under its lock (issue 35, D1): deepcopy, pickle,
``sosl.state.get_state`` as a function, ``merge`` and ``sklearn.clone``. A snapshot taken
while another thread trains is always a state some serial order of the calls produced."""

import copy
import pickle
import threading

import numpy as np
import pytest
from sklearn.base import BaseEstimator, clone

import sosl
from sosl import FTRLAUC, OAUCM
from sosl import state as S
from sosl._base import BaseOnlineAUC

ROUTES = {
    "deepcopy": copy.deepcopy,
    "pickle": lambda m: pickle.loads(pickle.dumps(m)),
    "state.get_state": lambda m: S.from_state(S.get_state(m)),
    "merge": lambda m: type(m).merge([m]),
    "clone": clone,
}


def _torn(e):
    """A state no serial order of partial_fit calls gives: its counters disagree."""
    return not (e.n_seen_ == e.t_ == int(e.counts_.sum()))


def _race(make, route, rows=4000, p=80, batch=50, min_snapshots=20, stop_torn=False):
    """The issue's reproducer, sized to a second or two: snapshots of a model that a
    second thread trains; returns (torn, taken)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(rows, p))
    y = (X[:, 0] > 0).astype(int)
    m = make().fit(X[:batch], y[:batch])
    done = threading.Event()

    def train():
        for a in range(batch, rows, batch):
            m.partial_fit(X[a:a + batch], y[a:a + batch])
        done.set()
    worker = threading.Thread(target=train)
    worker.start()
    bad = tot = 0
    while not done.is_set() or tot < min_snapshots:
        e = ROUTES[route](m)
        tot += 1
        bad += _torn(e)
        if stop_torn and bad:
            break
    worker.join()
    return bad, tot


@pytest.mark.parametrize("route", ["deepcopy", "pickle", "state.get_state", "merge"])
def test_snapshots_while_training_are_never_torn(route):
    bad, tot = _race(OAUCM, route)
    assert tot >= 20 and bad == 0, f"{bad} of {tot} snapshots torn"


def test_ftrl_pickles_while_training_are_never_torn():
    bad, tot = _race(lambda: FTRLAUC(), "pickle", rows=8000, p=200, batch=100)
    assert tot >= 20 and bad == 0, f"{bad} of {tot} pickles torn"


def test_the_race_finds_torn_snapshots_without_the_lock(monkeypatch):
    """Mutant: deepcopy without the lock; the same race then sees torn copies."""
    _unlock_deepcopy(monkeypatch)
    bad, tot = _race(OAUCM, "deepcopy", rows=8000, p=120, batch=50, stop_torn=True)
    assert bad > 0, f"no torn copy in {tot}: the race cannot see a missing lock"


def _waits_for_the_lock(route, model):
    """Whether ``route(model)`` blocks while another thread holds the model's lock."""
    lock = model.__dict__["_lock_"]
    finished = threading.Event()
    lock.acquire()
    try:
        t = threading.Thread(target=lambda: (ROUTES[route](model), finished.set()))
        t.start()
        t.join(0.3)
        waited = not finished.is_set()
    finally:
        lock.release()
    t.join(10)
    return waited and finished.is_set()


@pytest.mark.parametrize("route", list(ROUTES))
def test_every_route_takes_the_lock(route):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, 4))
    m = OAUCM().fit(X, (X[:, 0] > 0).astype(int))
    assert _waits_for_the_lock(route, m)


def _unlock_deepcopy(mp):
    def unlocked(self, memo):
        new = type(self).__new__(type(self))
        d = self.__dict__.copy()            # one step under the GIL; no lock
        d.pop("_lock_", None)
        d.pop("_stepper_", None)
        new.__dict__.update(copy.deepcopy(d, memo))
        return new
    mp.setattr(BaseOnlineAUC, "__deepcopy__", unlocked)


def _unlock_pickle(mp):
    def unlocked(self):
        d = dict(self.__dict__)
        d.pop("_lock_", None)
        d.pop("_stepper_", None)
        d["_sosl_version"] = sosl.__version__
        return d
    mp.setattr(BaseOnlineAUC, "__getstate__", unlocked)


def _unlock_get_state(mp):
    mp.setattr(S, "model_lock", lambda d: threading.RLock())


MUTANTS = {
    "deepcopy": _unlock_deepcopy,
    "pickle": _unlock_pickle,
    "state.get_state": _unlock_get_state,
    "merge": _unlock_get_state,
    "clone": lambda mp: mp.setattr(BaseOnlineAUC, "__sklearn_clone__",
                                   BaseEstimator.__sklearn_clone__),
}


@pytest.mark.parametrize("route", list(ROUTES))
def test_the_lock_test_catches_an_unlocked_route(route, monkeypatch):
    """Mutant per route: that route without the lock is seen not to wait."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, 4))
    m = OAUCM().fit(X, (X[:, 0] > 0).astype(int))
    MUTANTS[route](monkeypatch)
    assert not _waits_for_the_lock(route, m)
