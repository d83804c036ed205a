"""The model lock (``sosl._core._lock.ModelLock``) and the one-row calls that use it
without the ``with`` statement: ``score_one``'s unlocked typed read (OAUC-M, OAUC-S, the
sketch) and ``learn_one``'s round with the lock taken in compiled code (OAUC-M, OAUC-S).
Each safety property has a mutant (``lock=False`` of the compiled calls) that must fail."""

import dataclasses
import pickle
import sys
import threading
import types

import numpy as np
import pytest

from sosl import OAUCM, OAUCS, SketchedOAUCM
from sosl import linear as linear_module
from sosl import sketch as sketch_module
from sosl._capabilities import model_lock
from sosl._core import _linear, _sketch
from sosl._core._lock import ModelLock


def _data(n=200, p=20, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, p)) / np.sqrt(p)
    return X, (X @ rng.normal(size=p) > 0).astype(int)


def _fitted(Est, **kw):
    X, y = _data()
    m = Est(**kw).fit(X[:100], y[:100])
    m.score_one(X[0])                      # binds the stepper (the general path's first call)
    m.learn_one(X[1], y[1])                # makes the lock
    return m, X, y


def _in_thread(fn):
    out = []
    t = threading.Thread(target=lambda: out.append(fn()))
    t.start()
    return t, out


# -- the lock ----------------------------------------------------------------------------
def test_model_lock_is_reentrant_and_owned():
    lk = ModelLock()
    assert lk.acquire() and lk.acquire() and lk.locked() and lk._is_owned()
    t, out = _in_thread(lambda: (lk.acquire(False), lk.acquire(timeout=0.05)))
    t.join()
    assert out == [(False, False)]                 # another thread cannot take it
    t, out = _in_thread(lambda: pytest.raises(RuntimeError, lk.release))
    t.join()
    lk.release()
    assert lk.locked()                             # one level left
    lk.release()
    assert not lk.locked()
    with pytest.raises(RuntimeError, match="un-acquired"):
        lk.release()
    with lk:
        t, out = _in_thread(lambda: lk.acquire(False))
        t.join()
        assert out == [False]
    with pytest.raises(TypeError, match="pickle"):
        pickle.dumps(lk)


def test_models_get_a_model_lock():
    m, _, _ = _fitted(OAUCM)
    assert type(model_lock(m.__dict__)) is ModelLock


# -- score_one: unlocked read ------------------------------------------------------------
LEARNERS = [(OAUCM, {}, _linear, linear_module), (OAUCS, {}, _linear, linear_module),
            (SketchedOAUCM, {"rank": 4, "max_columns": 10}, _sketch, sketch_module)]
IDS = [E.__name__ for E, *_ in LEARNERS]


@pytest.mark.parametrize("Est, kw, core, _", LEARNERS, ids=IDS)
def test_score_one_reads_without_the_lock_only_when_no_other_thread_holds_it(Est, kw, core, _):
    m, X, _y = _fitted(Est, **kw)
    d, lk = m.__dict__, m.__dict__["_lock_"]
    want = m.decision_function(X[2:3])[0]
    assert core.read_score(d, X[2]) == want        # free: read
    with lk:                                       # held by this thread: read
        assert core.read_score(d, X[2]) == want
        t, out = _in_thread(lambda: core.read_score(d, X[2]))
        t.join()
        assert out == [None]                       # held by another: take the lock
        t, out = _in_thread(lambda: core.read_score(d, X[2], lock=False))
        t.join()
        assert out == [want]                       # the mutant reads anyway
    assert m.score_one(X[2]) == want


def _score_one_waits(m, X):
    """Whether score_one in another thread waits while this thread holds the lock."""
    lk = m.__dict__["_lock_"]
    done = threading.Event()
    lk.acquire()
    try:
        t = threading.Thread(target=lambda: (m.score_one(X[3]), done.set()))
        t.start()
        t.join(0.3)
        waited = not done.is_set()
    finally:
        lk.release()
    t.join(10)
    return waited and done.is_set()


@pytest.mark.parametrize("Est, kw, core, module", LEARNERS, ids=IDS)
def test_score_one_waits_for_a_writer(Est, kw, core, module, monkeypatch):
    m, X, _ = _fitted(Est, **kw)
    assert _score_one_waits(m, X)
    # mutant: the typed read ignores the lock; the same check must see it not wait
    unlocked = types.SimpleNamespace(**{k: getattr(core, k) for k in dir(core)
                                        if not k.startswith("__")})
    unlocked.read_score = lambda d, x: core.read_score(d, x, lock=False)
    monkeypatch.setattr(module, f"_{core.__name__.rsplit('._', 1)[1]}", unlocked)
    assert not _score_one_waits(m, X)


# -- learn_one: the round with the lock taken in compiled code ---------------------------
@pytest.mark.parametrize("Est", [OAUCM, OAUCS])
def test_compiled_learn_one_equals_the_python_round(Est):
    X, y = _data(300)
    a = Est().fit(X[:50], y[:50])
    b = pickle.loads(pickle.dumps(a))
    for i in range(50, 300):
        a.learn_one(X[i], y[i])
        b.learn_one(X[i], y[i])
        b.__dict__["_stepper_"].one_row = False    # b: the base class's locked round
    assert a.__dict__["_stepper_"].one_row
    for k in ("w_", "means_", "scatter_", "counts_", "calibration_", "t_", "n_seen_",
              "max_abs_"):
        np.testing.assert_array_equal(getattr(a, k), getattr(b, k), err_msg=k)


def _two_writers(m, X, y):
    def work(rows):
        for i in rows:
            m.learn_one(X[i], y[i])
    n = X.shape[0]
    threads = [threading.Thread(target=work, args=(range(k, n, 2),)) for k in range(2)]
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)


def _lost_update(X, y):
    m, _, _ = _fitted(OAUCM)
    t0 = m.t_
    _two_writers(m, X, y)
    return m.t_ != t0 + X.shape[0] or m.n_seen_ != m.t_


def test_two_threads_learning_lose_no_round():
    X, y = _data(2000, seed=1)
    assert not any(_lost_update(X, y) for _ in range(3))


def test_two_threads_without_the_lock_lose_rounds(monkeypatch):
    """Mutant: the compiled round without the lock; two threads then play two rounds with
    one counter value (likely, not certain, in one run: up to 30 runs are played)."""
    assert OAUCM.capabilities.compiled_round is _linear.learn_row
    monkeypatch.setattr(OAUCM, "capabilities", dataclasses.replace(
        OAUCM.capabilities,
        compiled_round=lambda d, x, y: _linear.learn_row(d, x, y, lock=False)))
    X, y = _data(2000, seed=1)
    assert any(_lost_update(X, y) for _ in range(30))
