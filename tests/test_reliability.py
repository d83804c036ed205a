"""Regression tests of the silent-corruption defects found by an independent battery.

D1/D2: forgetting with a large constant step once formed the unscaled scatter times w,
which overflows where Sigma w is finite, and the no-copy argument let NaN weights (and a
changed scatter) through. D3: complex rows lost their imaginary part in the one-row calls.
D4: the first ``learn_one`` flattened a 2-D row. D5: two threads on one model lost
updates. D6: CSR input with 2**31 columns or more failed with a buffer dtype message.
D7: the one-row path's Platt step saw another score than the general path at p >= 32.
D11: AdaOAM had no memory guard. The stress streams of ``conftest.STRESS_STREAMS`` run
every learner at the edges the no-copy arguments assume away.
"""

import contextlib
import copy
import inspect
import sys
import threading

import numpy as np
import pytest
import scipy.sparse as sp
from helpers import ESTIMATORS, fitted_state, make, same_state

import sosl
from sosl import OAUCM, OAUCS
from sosl._core import _linear

_make = make


def _call_keeps_or_commits_finite(model, fn, *args):
    """Run ``fn(*args)``: either it raises and the state is byte-identical, or it returns
    and every fitted float array is finite. Returns True if it raised."""
    before = fitted_state(model)
    try:
        fn(*args)
    except (FloatingPointError, ValueError):
        assert same_state(fitted_state(model), before)
        return True
    for name, value in fitted_state(model).items():
        if isinstance(value, np.ndarray) and value.dtype.kind == "f":
            assert np.isfinite(value).all(), name
        elif isinstance(value, float):
            assert np.isfinite(value), name
    return False


# -- D1 / D2 -------------------------------------------------------------------------------
def _d1_stream():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(3000, 5)) * 1e40
    y = (rng.random(3000) < 0.3).astype(int)
    return X, y


def test_d1_forgetting_with_large_step_never_commits_nan():
    X, y = _d1_stream()
    m = OAUCM(forgetting=0.5, eta=1.0).partial_fit(X[:2], [0, 1], classes=[0, 1])
    for i in range(2, 713):
        _call_keeps_or_commits_finite(m, m.learn_one, X[i], y[i])
    assert np.isfinite(m.coef_).all() and m.t_ >= 2


def test_d2_failed_batch_leaves_the_scatter_unchanged():
    X, y = _d1_stream()
    m = OAUCM(forgetting=0.5, eta=1.0).partial_fit(X[:2], [0, 1], classes=[0, 1])
    _call_keeps_or_commits_finite(m, m.partial_fit, X[2:], y[2:])
    # the same rows one at a time and as one batch give the same weights (no failure)
    a = OAUCM(forgetting=0.5, eta=1.0).partial_fit(X[:2], [0, 1], classes=[0, 1])
    a.partial_fit(X[2:], y[2:])
    assert np.isfinite(a.coef_).all() and np.isfinite(a.scatter_).all()


@pytest.mark.parametrize("Est", [OAUCM, OAUCS], ids=lambda E: E.__name__)
@pytest.mark.parametrize("p", [5, 40], ids=["own-loops", "blas"])
@pytest.mark.parametrize("forgetting", [1.0, 0.5, 0.05])
def test_large_magnitudes_with_forgetting(Est, p, forgetting):
    """Guarded and unguarded rounds, one-row and batch, at magnitudes 1e30-1e45 and large
    constant steps, on both sides of the BLAS threshold: a failing call leaves the state
    byte-identical, and nothing non-finite is ever committed."""
    assert (p < _linear_blas_min_p()) == (p == 5)
    rng = np.random.default_rng(p + int(100 * forgetting))
    guarded = proven = failed = 0
    for scale in (1e30, 1e40, 1e45):
        for eta in (None, 1.0, 1e3):
            X = rng.normal(size=(90, p)) * scale
            y = (rng.random(90) < 0.3).astype(int)
            m = Est(eta=eta, lam=1e-2, forgetting=forgetting).partial_fit(
                X[:4], np.r_[0, 1, 0, 1], classes=[0, 1])
            for i in range(4, 60):
                failed += _call_keeps_or_commits_finite(m, m.learn_one, X[i], y[i])
            st = m.__dict__.get("_stepper_")
            if st is not None:
                guarded += st.n_guarded
                proven += m.t_ - 4 - st.n_guarded
            failed += _call_keeps_or_commits_finite(m, m.partial_fit, X[60:], y[60:])
    assert guarded + proven > 0


def _linear_blas_min_p():
    from sosl.linear import BLAS_MIN_P
    return BLAS_MIN_P


def test_stress_battery_exercises_both_one_row_paths():
    """Across a few configurations the typed stepper takes both its proven (no copy) and
    its guarded (saved and restored) rounds, so the test above covers both."""
    guarded = proven = 0
    rng = np.random.default_rng(7)
    for Est, eta, scale in ((OAUCM, None, 1.0), (OAUCS, 1e3, 1e40)):
        X = rng.normal(size=(80, 6)) * scale
        y = (rng.random(80) < 0.4).astype(int)
        m = Est(eta=eta, forgetting=0.5).partial_fit(X[:4], [0, 1, 0, 1])
        for i in range(4, 80):
            _call_keeps_or_commits_finite(m, m.learn_one, X[i], y[i])
        st = m._stepper()
        guarded += st.n_guarded
        proven += m.t_ - 4 - st.n_guarded
    assert guarded > 0 and proven > 0, (guarded, proven)


def test_scaled_matvec_is_what_keeps_d1_finite():
    """The reference of one round, with Sigma w formed as (scale / W) (C w) as the old
    kernel did, overflows on the D1 state where the kernel's C (alpha w) does not (the
    mutant this regression test is about)."""
    X, y = _d1_stream()
    m = OAUCM(forgetting=0.5, eta=1.0).partial_fit(X[:2], [0, 1], classes=[0, 1])
    old_overflowed, new_finite = False, True
    with np.errstate(over="ignore", invalid="ignore"):
        for i in range(2, 713):
            opp = 0 if y[i] == 1 else 1
            if m.counts_[opp] > 0:
                C = np.triu(m.scatter_[opp]) + np.triu(m.scatter_[opp], 1).T
                alpha = m.scales_[opp] / m.weights_[opp]
                w = m.coef_[0]
                old_overflowed |= not np.isfinite(alpha * (w @ (C @ w)))
                new_finite &= bool(np.isfinite(w @ (C @ (alpha * w))))
            m.learn_one(X[i], y[i])
    assert old_overflowed and new_finite


# -- the shared stress streams, every learner ------------------------------------------------
@pytest.mark.parametrize("Est", ESTIMATORS, ids=lambda E: E.__name__)
def test_every_learner_survives_the_stress_streams(Est, stress_stream):
    name, X, y = stress_stream
    m = _make(Est)
    m.partial_fit(X[:4], y[:4], classes=[0, 1])
    half = X.shape[0] // 2
    for i in range(4, half):
        _call_keeps_or_commits_finite(m, m.learn_one, X[i], y[i])
    _call_keeps_or_commits_finite(m, m.partial_fit, X[half:], y[half:])
    assert m.n_seen_ >= 4


# -- D3 / D4 ---------------------------------------------------------------------------------
@pytest.mark.parametrize("Est", ESTIMATORS, ids=lambda E: E.__name__)
def test_complex_rows_are_refused_by_the_one_row_calls(Est):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    y = np.arange(30) % 2
    m = _make(Est).fit(X, y)
    before = fitted_state(m)
    z = np.ones(3) + 5j
    for call in (lambda: m.learn_one(z, 1), lambda: m.score_one(z),
                 lambda: m.predict_one(z), lambda: m.predict_proba_one(z),
                 lambda: m.learn_one(sp.csr_matrix(z.reshape(1, -1)), 1)):
        with pytest.raises(ValueError, match="[Cc]omplex"):
            call()
    assert same_state(fitted_state(m), before)
    fresh = _make(Est)
    with pytest.raises(ValueError, match="[Cc]omplex"):
        fresh.learn_one(z, 1, classes=[0, 1])
    assert not hasattr(fresh, "classes_")


@pytest.mark.parametrize("Est", [OAUCM, sosl.FTRLAUC, sosl.PAI], ids=lambda E: E.__name__)
@pytest.mark.parametrize("x", [np.ones((3, 4)), np.float64(2.0), np.ones((1, 4))],
                         ids=["2-d", "0-d", "row-matrix"])
def test_first_learn_one_refuses_a_row_that_is_not_1d(Est, x):
    m = Est()
    with pytest.raises(ValueError, match="1-D"):
        m.learn_one(x, 1, classes=[0, 1])
    assert not hasattr(m, "classes_") and not hasattr(m, "n_features_in_")
    m.learn_one(np.ones(4), 1, classes=[0, 1])             # a 1-D row still starts it
    assert m.n_features_in_ == 4


# -- D5: threads -------------------------------------------------------------------------------
def _row_log(model):
    """Record, from inside the model's own calls, the order in which rows were learned:
    ('one', i) for a row played by the typed one-row path, ('batch', (i, ...)) for a pass
    of the general path (rows identified by their bytes)."""
    log, index = [], {}
    in_place, validated = model._learn_one_in_place, model._learn_validated

    def rec_in_place(x, s):
        ok = in_place(x, s)
        if ok:
            log.append(("batch", (index[np.asarray(x).tobytes()],)))
        return ok

    def rec_validated(X, s, order=None, fresh=False, sw=None):
        validated(X, s, order, fresh, sw)
        rows = np.arange(X.shape[0]) if order is None else order
        log.append(("batch", tuple(index[np.asarray(X[r]).tobytes()] for r in rows)))

    model.__dict__["_learn_one_in_place"] = rec_in_place
    model.__dict__["_learn_validated"] = rec_validated
    return log, index


def _drop_recorders(model):
    model.__dict__.pop("_learn_one_in_place", None)
    model.__dict__.pop("_learn_validated", None)


def _two_threads(model, X, y, start, n_each):
    errors = []

    def work(rows):
        try:
            for k, i in enumerate(rows):
                if k % 20 == 19:
                    model.partial_fit(X[i:i + 1], y[i:i + 1])
                else:
                    model.learn_one(X[i], y[i])
                if k % 15 == 7:
                    model.decision_function(X[:3])
                    model.score_one(X[0])
        except BaseException as err:                     # reported by the main thread
            errors.append(err)

    rows = np.arange(start, start + 2 * n_each)
    threads = [threading.Thread(target=work, args=(rows[k::2],)) for k in range(2)]
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    return errors


def _threads_case(Est, p=40, n_each=120, lock=None):
    rng = np.random.default_rng(3)
    n = 20 + 2 * n_each
    X = rng.normal(size=(n, p))
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0.3).astype(int)
    y[:2] = [0, 1]
    model = _make(Est)
    model.partial_fit(X[:20], y[:20], classes=[0, 1])
    if lock is not None:
        model.__dict__["_lock_"] = lock
    log, index = _row_log(model)
    index.update({X[i].tobytes(): i for i in range(n)})
    errors = _two_threads(model, X, y, 20, n_each)
    _drop_recorders(model)
    return model, log, X, y, errors


def _violation(Est, lock=None):
    """What is wrong with a two-thread run on one model (None: it equals the serial order
    of the calls that its own critical sections recorded, with no update lost)."""
    model, log, X, y, errors = _threads_case(Est, n_each=60, lock=lock)
    if errors:
        return f"errors {errors}"
    total = 20 + 120
    if model.n_seen_ != total or model.t_ != total:
        return f"lost updates: n_seen_ {model.n_seen_}, t_ {model.t_} of {total}"
    if sorted(i for _, rows in log for i in rows) != list(range(20, total)):
        return "rows recorded more or less than once"
    replay = _make(Est).partial_fit(X[:20], y[:20], classes=[0, 1])
    for _, rows in log:
        rows = list(rows)
        if len(rows) == 1:
            replay.learn_one(X[rows[0]], y[rows[0]])
        else:
            replay.partial_fit(X[rows], y[rows])
    if not same_state(fitted_state(model), fitted_state(replay)):
        return "a state no serial order gives"
    return None


@pytest.mark.parametrize("Est", ESTIMATORS, ids=lambda E: E.__name__)
def test_two_threads_on_one_model_equal_a_serial_order(Est):
    assert _violation(Est) is None


def test_threads_without_the_lock_are_caught():
    """The mutant: with the lock replaced by a no-op, the same two-thread runs lose
    updates or end in states no serial order gives (so the check above can fail). Only
    learners whose state arrays keep their size: two unlocked threads on a learner that
    reallocates its buffers (the sketch's column map) can corrupt the heap and abort the
    whole test process rather than produce a wrong state."""
    found = []
    for _ in range(4):
        for Est in (OAUCS, sosl.Perceptron, sosl.AdaOAM, OAUCM):
            v = _violation(Est, lock=contextlib.nullcontext())
            if v is not None:
                found.append((Est.__name__, v))
        if len(found) >= 2:
            break
    assert found


def test_the_lock_is_not_pickled_and_copies_get_their_own():
    import pickle
    m = OAUCM().fit(np.eye(4), [0, 1, 0, 1])
    m.learn_one(np.ones(4), 1)
    assert "_lock_" in m.__dict__
    assert "_lock_" not in pickle.loads(pickle.dumps(m)).__dict__
    c = copy.deepcopy(m)
    c.learn_one(np.ones(4), 0)
    assert c.__dict__["_lock_"] is not m.__dict__["_lock_"]


# -- D6 -------------------------------------------------------------------------------------
@pytest.mark.parametrize("Est", [E for E in ESTIMATORS if E._sparse_input is True],
                         ids=lambda E: E.__name__)
def test_csr_with_2_31_columns_gets_a_clear_error(Est):
    p = 2**31 + 5
    rng = np.random.default_rng(0)
    rows = np.repeat(np.arange(20), 2)
    X = sp.csr_matrix((rng.normal(size=40), (rows, rng.integers(0, p, size=40))),
                      shape=(20, p))
    m = _make(Est)
    with pytest.raises(ValueError, match=r"2\*\*31 - 1"):
        m.fit(X, np.arange(20) % 2)
    assert not hasattr(m, "classes_")


# -- D7 -------------------------------------------------------------------------------------
@pytest.mark.parametrize("p", [5, 40, 100])
def test_one_row_calibration_equals_the_general_path(p):
    rng = np.random.default_rng(p)
    X = rng.normal(size=(400, p))
    y = (X[:, 0] + rng.normal(size=400) > 0.5).astype(int)
    a = OAUCM().partial_fit(X[:50], y[:50])
    b = copy.deepcopy(a)
    for i in range(50, 400):
        a.learn_one(X[i], y[i])
        b._transaction(b._learn_validated, X[i:i + 1], np.array([1.0 if y[i] else -1.0]))
        assert np.array_equal(a.calibration_, b.calibration_), i
    assert np.array_equal(a.coef_, b.coef_)
    assert a._stepper().n_guarded < 350                  # the typed path did play


def test_decision_rows_equals_the_reference():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, 37))
    m = OAUCM().fit(X, (X[:, 0] > 0).astype(int))
    w = m.w_                                  # the 1-D state the kernels take
    ref = X @ w - 0.5 * w @ (m.means_[0] + m.means_[1])
    out = np.empty(50)
    _linear.decision_rows(X, w, m.means_, m.counts_, out)
    np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-14)
    assert np.ptp(ref) > 0
    mutant = X @ w - w @ (m.means_[0] + m.means_[1])     # offset not halved
    assert not np.allclose(out, mutant, rtol=1e-6)
    with pytest.raises(ValueError, match="inconsistent"):
        _linear.decision_rows(X, w, m.means_, m.counts_, np.empty(3))


# -- D11 ------------------------------------------------------------------------------------
def test_adaoam_refuses_a_state_larger_than_max_memory():
    m = sosl.AdaOAM(max_memory=10**6)
    with pytest.raises(MemoryError, match="max_memory"):
        m.fit(np.ones((2, 400)), [0, 1])
    assert not hasattr(m, "classes_")
    sosl.AdaOAM(max_memory=10**6).fit(np.ones((2, 100)), [0, 1])      # 0.32 MB fits
    with pytest.raises(MemoryError, match="GiB"):
        sosl.AdaOAM().fit(np.ones((2, 400_000)), [0, 1])              # 5 TB: "auto"


def test_oam_refuses_slots_widened_past_max_memory():
    rng = np.random.default_rng(0)
    X = sp.random(40, 10_000, density=0.001, random_state=0, format="csr")
    y = np.arange(40) % 2
    m = sosl.OAM(buffer_size=50, max_memory=2**20).fit(X, y)
    before = fitted_state(m)
    long_row = sp.csr_matrix((rng.normal(size=8000), (np.zeros(8000, dtype=int),
                              rng.choice(10_000, 8000, replace=False))), shape=(1, 10_000))
    with pytest.raises(MemoryError, match="width 8192.*max_memory"):
        m.partial_fit(long_row, [1])
    assert same_state(fitted_state(m), before)
    m.set_params(max_memory="auto")
    m.partial_fit(long_row, [1])                             # 19 MB with the copy: fits
    assert m.buffer_indices_.shape[2] == 8192


def test_unbounded_okaucm_refuses_growth_past_max_memory():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, 5))
    y = (X[:, 0] > 0).astype(int)
    m = sosl.OKAUCM(budget=None, max_memory=2**20).fit(X[:100], y[:100])
    before = fitted_state(m)
    with pytest.raises(MemoryError, match="budget=None.*max_memory"):
        m.partial_fit(X[100:], y[100:])
    assert same_state(fitted_state(m), before)
    sosl.OKAUCM(budget=None, max_memory=2**23).fit(X, y)      # 8 MB is enough for 400


def test_polk_refuses_a_dictionary_past_max_memory():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(600, 30))
    y = (X[:, 0] > 0).astype(int)
    m = sosl.POLK(max_memory=2**20)
    with pytest.raises(MemoryError, match="POLK: the dictionary would grow"):
        m.fit(X, y)
    assert not hasattr(m, "classes_")
    kept = sosl.POLK().fit(X, y).support_vectors_.shape[0]
    assert kept > 100                                      # the defaults keep many atoms


# -- pickles carry the version ------------------------------------------------------------
def test_pickles_carry_the_version_and_warn_on_a_mismatch():
    import pickle
    import warnings

    from sosl.exceptions import InconsistentVersionWarning
    m = OAUCM().fit(np.eye(4), [0, 1, 0, 1])
    blob = pickle.dumps(m)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        same = pickle.loads(blob)                           # same version: no warning
    assert "_sosl_version" not in vars(same) and np.array_equal(same.coef_, m.coef_)
    state = m.__getstate__()
    assert state["_sosl_version"] == sosl.__version__
    state["_sosl_version"] = "0.0.1"
    other = OAUCM.__new__(OAUCM)
    with pytest.warns(InconsistentVersionWarning, match="0.0.1.*" + sosl.__version__):
        other.__setstate__(state)
    assert np.array_equal(other.coef_, m.coef_) and "_sosl_version" not in vars(other)


def test_multiclass_error_points_to_one_vs_rest():
    with pytest.raises(ValueError, match="OneVsRestClassifier"):
        OAUCM().fit(np.eye(3), [0, 1, 2])


# -- the one-row round on copies (learners with _one_row_by_copy) ---------------------------
BY_COPY = [E for E in ESTIMATORS if E._one_row_by_copy]


def test_by_copy_learners_are_the_expected_ones():
    assert {E.__name__ for E in BY_COPY} >= {"Perceptron", "PAI", "OAM", "OLUBAUC", "SOLAM",
                                             "AdaOAM", "KOIL", "POLK"}


@pytest.mark.parametrize("Est,sparse", [(E, False) for E in BY_COPY]
                         + [(E, True) for E in BY_COPY if E._sparse_input is True],
                         ids=lambda v: v.__name__ if inspect.isclass(v) else
                         ("csr" if v else "dense"))
def test_learn_one_by_copy_equals_the_general_path(Est, sparse, monkeypatch):
    """Dense rows (and canonical CSR rows for the sparse learners) on a fitted model take
    the round on copies, never the general path, and equal the general one-row
    partial_fit in every fitted attribute, bit for bit."""
    from sosl._base import BaseOnlineAUC
    rng = np.random.default_rng(4)
    X = rng.normal(size=(70, 6)) * (rng.random((70, 6)) < (0.6 if sparse else 1.0))
    y = (X[:, 0] + 0.3 * rng.normal(size=70) > 0.1).astype(int)
    rows = [sp.csr_matrix(X[i:i + 1]) for i in range(70)] if sparse else list(X)
    a = _make(Est).partial_fit(X[:6], y[:6], classes=[0, 1])
    b = copy.deepcopy(a)

    def no_general(*args):
        raise AssertionError("the general path ran")

    for i in range(6, 70):
        monkeypatch.setattr(a, "_learn_one_general", no_general)
        a.learn_one(rows[i], y[i])
        monkeypatch.undo()
        BaseOnlineAUC.partial_fit(b, rows[i] if sparse else X[i:i + 1], y[i:i + 1])
        assert same_state(fitted_state(a), fitted_state(b)), i
    assert a.n_seen_ == 70 and not np.array_equal(a.calibration_, [1.0, 1.0])


def test_learn_one_by_copy_mutant_is_caught():
    """The mutant: the round on copies without its Platt step differs from the general
    path (so the equality above can fail)."""
    import sosl._base as base
    from sosl._base import BaseOnlineAUC, platt_steps  # noqa: F401 (the name patched)
    rng = np.random.default_rng(5)
    X = rng.normal(size=(30, 4))
    y = (X[:, 0] > 0).astype(int)
    a = sosl.PAI().partial_fit(X[:6], y[:6], classes=[0, 1])
    b = copy.deepcopy(a)
    orig = base.platt_steps
    base.platt_steps = lambda f, s, c: None
    try:
        for i in range(6, 30):
            a.learn_one(X[i], y[i])
    finally:
        base.platt_steps = orig
    for i in range(6, 30):
        BaseOnlineAUC.partial_fit(b, X[i:i + 1], y[i:i + 1])
    assert np.array_equal(a.coef_, b.coef_)
    assert not np.array_equal(a.calibration_, b.calibration_)


def test_learn_one_by_copy_leaves_a_failing_round_to_the_general_path():
    m = sosl.PAI(C=1e300).partial_fit(np.eye(3), [0, 1, 0], classes=[0, 1])
    before = fitted_state(m)
    with pytest.raises(FloatingPointError):
        m.learn_one(np.full(3, 1e200), 1)
    assert same_state(fitted_state(m), before)


@pytest.mark.parametrize("Est", [OAUCM, sosl.PAI, sosl.FTRLAUC], ids=lambda E: E.__name__)
def test_an_array_after_a_named_fit_gets_the_feature_names_warning(Est):
    """A model fitted on a dataframe (feature_names_in_ set) warns as scikit-learn does
    when later given a plain array, on the fast batch paths too."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] > 0).astype(int)
    m = Est().fit(X, y)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m.decision_function(X)                             # no names: silent
    m.feature_names_in_ = np.array(["a", "b", "c"], dtype=object)   # as a dataframe fit
    for call in (lambda: m.decision_function(X), lambda: m.partial_fit(X, y)):
        with pytest.warns(UserWarning, match="does not have valid feature names"):
            call()
