"""The base contract on the linear learners: checks on every call, frozen layout,
transactions without full copies, the positive class by name, and one-row calls."""

import pickle

import numpy as np
import pytest
from helpers import assert_unchanged, snapshot
from sklearn.datasets import load_breast_cancer

from sosl import OAUCM, OAUCS
from sosl._base import BaseOnlineAUC
from sosl.metrics import auc


def _data(n=300, p=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, p))
    y = np.where(X @ np.arange(1, p + 1) + rng.normal(size=n) > 1.0, 1, 0)
    return X, y


#: not state: the re-arming flag and the typed stepper (rebuilt on demand)
SKIP = ("_params_ok", "_stepper_")


def test_invalid_value_set_after_fit_is_refused_on_the_next_call():
    X, y = _data()
    m = OAUCM(eta=0.01).fit(X, y)
    m.set_params(eta=-5)
    before = snapshot(m, SKIP)
    with pytest.raises(ValueError, match="eta"):
        m.partial_fit(X, y)
    with pytest.raises(ValueError, match="eta"):
        m.decision_function(X)
    with pytest.raises(ValueError, match="eta"):
        m.learn_one(X[0], y[0])
    assert_unchanged(before, m, SKIP)


def test_schedule_is_frozen_with_the_fitted_state():
    X, y = _data()
    m = OAUCM(eta=0.01).fit(X, y)
    m.set_params(eta=None)          # valid on its own, but another step schedule
    before = snapshot(m, SKIP)
    with pytest.raises(ValueError, match="schedule changed"):
        m.partial_fit(X, y)
    assert_unchanged(before, m, SKIP)
    m.set_params(eta=0.5)           # same schedule, another constant: allowed
    m.partial_fit(X, y)
    m.set_params(eta=None)
    m.fit(X, y)                     # fit starts over and freezes the new layout
    assert m._layout_ == {"schedule": "1/(lam t)"}


def test_attribute_assignment_rearms_the_one_row_check():
    X, y = _data()
    m = OAUCM().fit(X, y)
    m.learn_one(X[0], y[0])
    m.lam = -1.0                    # bypasses set_params
    with pytest.raises(ValueError, match="lam"):
        m.learn_one(X[1], y[1])
    with pytest.raises(ValueError, match="lam"):
        m.score_one(X[1])


def test_failed_shuffled_call_restores_the_generator():
    X, y = _data()
    X_bad = X.copy()
    X_bad[5, 0] = np.nan
    rs = np.random.RandomState(0)
    a = OAUCM(shuffle=True, random_state=rs).fit(X, y)
    state = rs.get_state()
    with pytest.raises(ValueError):
        a.partial_fit(X_bad, y)      # refused at validation: nothing drawn
    a.set_params(eta=10.0, lam=0.0)
    with pytest.raises(ValueError, match="schedule"):
        a.partial_fit(X, y)
    a.set_params(eta=None, lam=1e-2)
    s2 = rs.get_state()
    assert state[0] == s2[0] and np.array_equal(state[1], s2[1]) and state[2:] == s2[2:]


def test_failed_pass_restores_the_generator():
    X, y = _data()
    gen = np.random.RandomState(0)
    m = OAUCS(lam=0.01, eta=1e-4, shuffle=True, random_state=gen).fit(X, y)
    before = gen.get_state()[1].copy()
    m.set_params(eta=1e6)
    with pytest.raises(FloatingPointError):
        m.partial_fit(X * 50, y)     # the permutation was drawn, then the pass diverged
    np.testing.assert_array_equal(gen.get_state()[1], before)
    m.set_params(eta=1e-4)
    ref = OAUCS(lam=0.01, eta=1e-4, shuffle=True, random_state=np.random.RandomState(0))
    ref.fit(X, y).partial_fit(X, y)
    m.partial_fit(X, y)
    np.testing.assert_array_equal(m.coef_, ref.coef_)


def test_huge_finite_input_raises_instead_of_nan_scores():
    X, y = _data()
    m = OAUCM().fit(X, y)
    assert np.abs(m.coef_).sum() > 1.5       # so the row below overflows
    with pytest.raises(FloatingPointError, match="scores"):
        m.decision_function(np.sign(m.coef_) * 1.5e308)        # one row
    before = snapshot(m, SKIP)
    with pytest.raises(FloatingPointError):
        m.partial_fit(X * 1e160, y)
    assert_unchanged(before, m, SKIP)


def test_positive_class_by_name():
    X, y = load_breast_cancer(return_X_y=True)     # malignant = 0
    X = (X - X.min(0)) / (X.max(0) - X.min(0)) * 2 - 1
    m = OAUCM(lam=2**-6).partial_fit(X, y, classes=[1, 0])
    assert m.classes_.tolist() == [1, 0]
    malignant = (y == 0).astype(int)
    assert auc(malignant, m.decision_function(X)) > 0.95
    assert np.mean(m.predict(X) == y) > 0.85
    default = OAUCM(lam=2**-6).fit(X, y)             # sorted labels: 1 (benign) positive
    assert default.classes_.tolist() == [0, 1]
    np.testing.assert_allclose(m.decision_function(X), -default.decision_function(X),
                               rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("Est,kw", [(OAUCM, {}), (OAUCM, {"eta": 0.05}),
                                    (OAUCS, {"eta": 1e-3}),
                                    # no contraction (eta lam > 2; eta (lam + 10 R^2 p) > 2):
                                    # guarded rounds, on saved copies of what they write
                                    (OAUCM, {"eta": 30.0, "lam": 0.1}), (OAUCS, {"eta": 0.1})])
def test_learn_one_equals_partial_fit_bit_for_bit(Est, kw):
    X, y = _data()
    a = Est(**kw)
    b = Est(**kw)
    for i in range(len(y)):
        a.learn_one(X[i], y[i], classes=[0, 1] if i == 0 else None)
        BaseOnlineAUC.partial_fit(b, X[i:i + 1], y[i:i + 1], classes=[0, 1])   # general
    assert "_stepper_" in vars(a)                # the typed one-row path was taken
    guarded = a._stepper().n_guarded
    assert (guarded > 0) == (kw.get("eta", 0) >= 0.1), guarded
    c = Est(**kw).partial_fit(X[:1], y[:1], classes=[0, 1])
    for i in range(1, len(y)):
        c.partial_fit(X[i:i + 1], y[i:i + 1])    # one-row partial_fit takes the typed path too
    assert c.coef_.tobytes() == a.coef_.tobytes()
    assert c.calibration_.tobytes() == a.calibration_.tobytes()
    assert a.coef_.tobytes() == b.coef_.tobytes()
    assert a.scatter_.tobytes() == b.scatter_.tobytes()
    assert a.t_ == b.t_ == len(y)
    assert a.score_one(X[3]) == pytest.approx(a.decision_function(X[3:4])[0], rel=1e-13)
    assert a.predict_one(X[3]) == a.predict(X[3:4])[0]
    full = Est(**kw).fit(X, y)
    assert full.coef_.tobytes() == a.coef_.tobytes()


@pytest.mark.parametrize("Est", [OAUCS, OAUCM])
def test_guarded_one_row_round_that_diverges_leaves_the_state_unchanged(Est):
    """A typed round without the no-copy proof saves what it writes; when w comes out
    non-finite it restores all of it and the general path reports the divergence."""
    X, y = _data()
    X = X * 50.0
    m = Est(lam=0.01, eta=1e-4).fit(X[:100], y[:100])
    m.set_params(eta=1e4)
    for i in range(100, 300):
        before = snapshot(m, SKIP)
        try:
            m.learn_one(X[i], y[i])
        except FloatingPointError as err:
            assert "non-finite" in str(err)
            break
    else:
        pytest.fail("the step never diverged")
    assert i > 100                              # a guarded round was committed before it
    assert_unchanged(before, m, SKIP)
    assert m._stepper().n_guarded >= i - 101    # the rounds after the first were guarded
    with pytest.raises(FloatingPointError, match="non-finite"):   # so does the general path
        BaseOnlineAUC.partial_fit(pickle.loads(pickle.dumps(m)), X[i:i + 1], y[i:i + 1])


@pytest.mark.parametrize("Est,scale,kw", [(OAUCS, 10.0, {}), (OAUCM, 1e3, {}),
                                          (OAUCS, 10.0, {"forgetting": 0.99})])
def test_guarded_round_restores_every_array_it_wrote(Est, scale, kw):
    """One step from moderate weights to infinity: the Platt step, the moments and w were
    all written before the check, and all are restored."""
    X, y = _data()
    X = X * scale                               # eta |x| overflows: w is infinite after it
    m = Est(lam=0.01, eta=1e-4, **kw).fit(X, y)
    m.set_params(eta=1e308)
    m.score_one(X[0])                           # the new step is checked here
    before = snapshot(m, SKIP)
    with pytest.raises(FloatingPointError, match="non-finite"):
        m.learn_one(X[0], y[0])
    assert_unchanged(before, m, SKIP)
    assert m._stepper().n_guarded == 1


def test_learn_one_updates_the_covariances_in_place():
    X, y = _data()
    m = OAUCM().fit(X, y)
    cov = m.scatter_
    m.learn_one(X[0], y[0])
    assert m.scatter_ is cov                     # no copy of the O(p^2) state
    m.partial_fit(X[:50], y[:50])
    assert m.scatter_ is cov
    big = OAUCS(eta=0.5).fit(X, y)               # no contraction, p < BLAS_MIN_P: the
    cov = big.scatter_                           # batch keeps a copy in the stepper and
    big.partial_fit(X[:50], y[:50])              # updates in place
    assert big.scatter_ is cov
    X, y = _data(p=40)                           # p >= BLAS_MIN_P: the pass runs on copies
    big = OAUCS(eta=0.5).fit(X, y)
    cov = big.scatter_
    big.partial_fit(X[:50], y[:50])
    assert big.scatter_ is not cov


def test_one_row_calls_refuse_bad_rows_and_keep_state():
    X, y = _data()
    m = OAUCM().fit(X, y)
    before = snapshot(m, SKIP)
    for bad, exc in [(np.r_[X[0, :-1], np.nan], ValueError), (X[0, :2], ValueError),
                     (X[:2], ValueError)]:
        with pytest.raises(exc):
            m.learn_one(bad, y[0])
    with pytest.raises(ValueError, match="not one of classes_"):
        m.learn_one(X[0], 7)
    with pytest.raises(ValueError, match="classes"):
        OAUCM().learn_one(X[0], 1)
    assert_unchanged(before, m, SKIP)


def test_memory_guard_names_the_size_and_the_sketched_learner():
    X = np.zeros((2, 50_000))
    with pytest.raises(MemoryError, match=r"74\.5 GiB.*SketchedOAUCM"):
        OAUCM(max_memory=2**30).fit(X, [0, 1])
    with pytest.raises(MemoryError, match="max_memory"):
        OAUCS(max_memory=10_000).fit(np.zeros((2, 30)), [0, 1])
    OAUCS(max_memory=10**6).fit(np.zeros((2, 30)), [0, 1])     # 29 KiB fits


def test_auto_memory_reads_the_system_only_for_a_large_state(monkeypatch):
    """With max_memory="auto" a state of at most 16 MiB is allowed without reading the
    available memory (0.15 ms a fit); a larger one is checked against half of it."""
    import sosl._base as base

    def unreadable():
        raise AssertionError("available_memory read for a small state")
    monkeypatch.setattr(base, "available_memory", unreadable)
    OAUCS().fit(np.zeros((2, 30)), [0, 1])                  # 29 KiB: not asked
    monkeypatch.setattr(base, "available_memory", lambda: 2**20)
    with pytest.raises(MemoryError, match="half the available memory"):
        OAUCS().fit(np.zeros((2, 800)), [0, 1])             # about 20 MiB


@pytest.mark.parametrize("p", [3, 40])           # own loops, and BLAS with rank-k updates
def test_one_row_fast_path_matches_batches_through_changes(p):
    """The typed one-row path == partial_fit, also across a pickle, a set_params, a row
    outside the no-copy bound (general path) and a refit."""
    import pickle
    rng = np.random.default_rng(p)
    X = rng.uniform(-1, 1, size=(240, p))
    y = (X[:, 0] + 0.3 * rng.normal(size=240) > 0.4).astype(int)
    X[100] *= 1e60                              # |x| > 1e50: copies, then the typed path again
    a, b = OAUCM(lam=0.05), OAUCM(lam=0.05)
    for i in range(len(y)):
        if i == 60:
            a = pickle.loads(pickle.dumps(a))
            assert "_stepper_" not in vars(a)
        if i == 150:
            a.set_params(lam=0.2)
            b.set_params(lam=0.2)
        if i == 200:
            a.lam = 0.1                          # plain assignment is seen too
            b.lam = 0.1
        a.learn_one(X[i], y[i], classes=[0, 1] if i == 0 else None)
        BaseOnlineAUC.partial_fit(b, X[i:i + 1], y[i:i + 1], classes=[0, 1])   # general
        if i in (99, 101, 239):
            assert a.coef_.tobytes() == b.coef_.tobytes(), i
            assert a.scatter_.tobytes() == b.scatter_.tobytes(), i
            assert a.score_one(X[i]) == pytest.approx(b.decision_function(X[i:i + 1])[0],
                                                      rel=1e-13, abs=1e-13)
    assert a.t_ == b.t_ == len(y) and a.max_abs_ == b.max_abs_
    a.fit(X[:50], y[:50])                        # new arrays: the stepper is rebound
    a.learn_one(X[50], y[50])
    b.fit(X[:50], y[:50]).partial_fit(X[50:51], y[50:51])
    assert a.coef_.tobytes() == b.coef_.tobytes()
