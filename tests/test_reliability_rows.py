"""Regression tests of the silent-corruption defects found by an independent battery: the
rows the one-row calls take and the one-row paths themselves.

D3: complex rows lost their imaginary part in the one-row calls. D4: the first
``learn_one`` flattened a 2-D row. D6: CSR input with 2**31 columns or more failed with a
buffer dtype message. D7: the one-row path's Platt step saw another score than the general
path at p >= 32. Then the one-row round on copies (learners with ``capabilities.one_row_by_copy``)
against the general path, and the feature-names warning on the fast batch paths.
"""

import copy
import inspect

import numpy as np
import pytest
import scipy.sparse as sp
from helpers import ESTIMATORS, fitted_state, make, same_state

import sosl
from sosl import OAUCM
from sosl._core import _linear

_make = make


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


# -- D6 -------------------------------------------------------------------------------------
@pytest.mark.parametrize("Est", [E for E in ESTIMATORS if E.capabilities.sparse_input is True],
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


# -- the one-row round on copies (learners with capabilities.one_row_by_copy) ----------
BY_COPY = [E for E in ESTIMATORS if E.capabilities.one_row_by_copy]


def test_by_copy_learners_are_the_expected_ones():
    assert {E.__name__ for E in BY_COPY} >= {"Perceptron", "PAI", "OAM", "OLUBAUC", "SOLAM",
                                             "AdaOAM", "KOIL", "POLK"}


@pytest.mark.parametrize("Est,sparse", [(E, False) for E in BY_COPY]
                         + [(E, True) for E in BY_COPY if E.capabilities.sparse_input is True],
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
    import sosl._passes as base  # the module of the round on copies
    from sosl._base import BaseOnlineAUC
    from sosl._passes import platt_steps  # noqa: F401 (the name patched)
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
