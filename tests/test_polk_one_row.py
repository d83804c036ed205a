"""POLK's typed one-row path (``PolkStepper`` on buffers kept in the model) against the
general path: the same rounds and bits as ``partial_fit`` on each row, declined rounds
(dependent atoms, rebuilds, non-finite results, bad input) leaving the state as it was,
pickles, growth of the buffers, and a mutant the comparison must catch."""

import pickle

import numpy as np
import pytest
from helpers import noisy_ball

from sosl import POLK
from sosl._core import _polk, _polk_driver

#: the state and counters learn_one must reproduce bit for bit
_NAMES = ("support_vectors_", "dual_coef_", "gram_", "_gram_inv", "model_orders_",
          "projection_errors_", "projection_budgets_", "calibration_", "t_", "n_seen_")


def _stream(seed, n=300, p=4, repeats=True):
    rng = np.random.default_rng(seed)
    X, y = noisy_ball(rng, n, p=p)
    if repeats:
        X[101:160:2] = X[100:160:2]           # a row twice in a row: dependent atoms
        X[250:270] = X[30:50]                 # and again much later
    return np.ascontiguousarray(X), y


def _assert_same(a, b):
    for name in _NAMES:
        u, v = getattr(a, name), getattr(b, name)
        if u is None or v is None:
            assert u is None and v is None, name
            continue
        u, v = np.asarray(u), np.asarray(v)
        assert u.shape == v.shape and u.dtype == v.dtype, name
        assert u.tobytes() == v.tobytes(), name


def _play(model, X, y, one_row):
    for i in range(X.shape[0]):
        if one_row:
            model.learn_one(X[i], y[i])
        else:
            model.partial_fit(X[i:i + 1], y[i:i + 1])
    return model


def _typed_rounds(monkeypatch):
    """Count the rounds the typed one-row path committed (through ``_new_stepper``'s
    steppers) and the calls that went to the general path."""
    counts = {"general": 0, "steppers": 0}
    general, new = POLK._learn_one_general, POLK._new_stepper

    def counting_general(self, *args):
        counts["general"] += 1
        return general(self, *args)

    def counting_new(self, *args):
        counts["steppers"] += 1
        return new(self, *args)
    monkeypatch.setattr(POLK, "_learn_one_general", counting_general)
    monkeypatch.setattr(POLK, "_new_stepper", counting_new)
    return counts


@pytest.mark.parametrize("params", [
    dict(eta=0.3, gamma=2.0),
    dict(loss="logistic", eta=0.5, lam=0.05, schedule="diminishing", parsimony=2.0),
    dict(loss="square", eta=0.3, lam=0.01, epsilon=0.02, gamma=1.0),
], ids=["hinge", "logistic-diminishing", "square"])
def test_learn_one_typed_equals_partial_fit(monkeypatch, params):
    """learn_one == partial_fit on each row, bit for bit, through dependent-atom rounds,
    a pickle in the middle and buffers that grow; the typed path played most rounds."""
    X, y = _stream(1)
    ref = _play(POLK(**params).fit(X[:40], y[:40]), X[40:], y[40:], one_row=False)
    counts = _typed_rounds(monkeypatch)
    one = POLK(**params).fit(X[:40], y[:40])
    _play(one, X[40:170], y[40:170], one_row=True)
    one = pickle.loads(pickle.dumps(one))
    _play(one, X[170:], y[170:], one_row=True)
    _assert_same(one, ref)
    assert np.any(np.diff(ref.model_orders_) < 0) and ref.model_orders_.max() > 10
    assert counts["general"] < 0.3 * (X.shape[0] - 40)   # most rounds by the typed path
    assert isinstance(one.__dict__.get("_stepper_"), _polk.PolkStepper)


def test_learn_one_mixed_with_partial_fit_and_rebuilds(monkeypatch):
    """learn_one between partial_fit chunks, and with G rebuilt after every round (drift
    tolerance 0: STATUS_REBUILD on each typed round), still equals the general path."""
    X, y = _stream(2, repeats=False)
    monkeypatch.setattr(_polk_driver, "DRIFT_TOL", 0.0)
    monkeypatch.setattr(_polk_driver, "DRIFT_REL", 0.0)
    ref = _play(POLK(eta=0.3).fit(X[:30], y[:30]), X[30:], y[30:], one_row=False)
    one = POLK(eta=0.3).fit(X[:30], y[:30])
    _play(one, X[30:100], y[30:100], one_row=True)
    one.partial_fit(X[100:101], y[100:101])
    _play(one, X[101:200], y[101:200], one_row=True)
    for i in range(200, 300, 2):
        one.partial_fit(X[i:i + 1], y[i:i + 1])
        one.learn_one(X[i + 1], y[i + 1])
    _assert_same(one, ref)


def test_mutant_is_caught(monkeypatch):
    """A typed path whose step size is off by one part in 1e9 must fail the comparison."""
    X, y = _stream(3)
    ref = _play(POLK(eta=0.3).fit(X[:40], y[:40]), X[40:], y[40:], one_row=False)
    specs = POLK._specs

    def mutant_new_stepper(self, *args):
        step, komp, kern = specs(self)
        step = dict(step, eta=step["eta"] * (1 + 1e-9))
        monkeypatch.setattr(POLK, "_specs", lambda model: (step, komp, kern))
        try:
            return new(self, *args)
        finally:
            monkeypatch.setattr(POLK, "_specs", specs)
    new = POLK._new_stepper
    monkeypatch.setattr(POLK, "_new_stepper", mutant_new_stepper)
    one = _play(POLK(eta=0.3).fit(X[:40], y[:40]), X[40:], y[40:], one_row=True)
    with pytest.raises(AssertionError):
        _assert_same(one, ref)


def _snapshot(model):
    return {k: (v.copy() if isinstance(v, np.ndarray) else pickle.dumps(v))
            for k, v in vars(model).items() if k not in ("_lock_", "_stepper_")}


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
def test_bad_rows_leave_state_and_buffers_unchanged():
    """Refused rows (NaN, wrong length, unknown label, an overflowing kernel) raise with
    the state exactly as it was, and the model then goes on as one that never saw them."""
    X, y = _stream(4, repeats=False)
    m = POLK(kernel="poly", degree=2, eta=0.2).fit(X[:50], y[:50])
    _play(m, X[50:80], y[50:80], one_row=True)
    assert isinstance(m.__dict__.get("_stepper_"), _polk.PolkStepper)
    before = _snapshot(m)
    bad = X[80].copy()
    bad[1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        m.learn_one(bad, y[80])
    with pytest.raises(ValueError, match="features"):
        m.learn_one(X[80, :3].copy(), y[80])
    with pytest.raises(ValueError, match="classes|label"):
        m.learn_one(X[80], 7)
    with pytest.raises(FloatingPointError, match="kernel overflowed"):
        m.learn_one(X[80] * 1e155, y[80])
    after = _snapshot(m)
    assert after.keys() == before.keys()
    for k, v in before.items():
        np.testing.assert_array_equal(after[k], v, err_msg=k)
    _play(m, X[80:], y[80:], one_row=True)
    ref = _play(POLK(kernel="poly", degree=2, eta=0.2).fit(X[:50], y[:50]), X[50:], y[50:],
                one_row=False)
    _assert_same(m, ref)


def test_declined_round_writes_nothing_of_the_state():
    """The stepper's statuses other than DONE / REBUILD leave its state untouched: a
    repeated row (dependent atom: STATUS_FALLBACK) and a non-finite row."""
    X, y = _stream(5, repeats=False)
    m = POLK(eta=0.3).fit(X[:60], y[:60])
    m.learn_one(X[60], y[60])
    st = m.__dict__["_stepper_"]
    state = [a.copy() for a in st.views]
    calib = m.calibration_.copy()
    dup = np.array(m.support_vectors_[3])                  # an atom again: sc = 0
    assert st.step(dup, 1.0, m.t_ + 1, m.calibration_) == _polk.STATUS_FALLBACK
    nan = X[61].copy()
    nan[0] = np.inf
    assert st.step(nan, 1.0, m.t_ + 1, m.calibration_) == -1
    for a, b in zip(st.views, state):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(m.calibration_, calib)
    assert st.M == m.dual_coef_.shape[0] and st.n == m.t_


@pytest.mark.filterwarnings("ignore::sosl.exceptions.GrowthWarning")
def test_buffers_grow_geometrically_and_stay_in_place(monkeypatch):
    """Over a stream where the dictionary keeps growing, the buffers are rebuilt a
    logarithmic number of times and each round otherwise runs in place."""
    rng = np.random.default_rng(6)
    X = np.ascontiguousarray(rng.uniform(-1, 1, size=(700, 3)))
    y = (X[:, 0] > 0).astype(int)
    counts = _typed_rounds(monkeypatch)
    m = POLK(eta=0.5, gamma=40.0, epsilon=1e-4).fit(X[:20], y[:20])
    m.learn_one(X[20], y[20])
    buf = m.__dict__["_stepper_"].D
    same = 0
    for i in range(21, 700):
        m.learn_one(X[i], y[i])
        same += m.__dict__["_stepper_"].D is buf
        buf = m.__dict__["_stepper_"].D
    assert m.dual_coef_.shape[0] > 300                     # the dictionary did grow
    assert counts["steppers"] <= 6 and counts["general"] == 0
    assert same >= 679 - 5
    ref = POLK(eta=0.5, gamma=40.0, epsilon=1e-4).fit(X[:20], y[:20])
    _assert_same(m, _play(ref, X[20:], y[20:], one_row=False))
