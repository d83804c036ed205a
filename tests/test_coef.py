"""``coef_`` of shape (1, p) and ``intercept_`` of shape (1,) on every linear learner.

scikit-learn's binary linear classifiers shape them so; sosl keeps the weights as the 1-D
state ``w_`` (what the typed passes, the rollback, ``sosl.state`` and the merges use) and
``coef_`` is a view of it. Checked here: the shapes, ``decision_function == X @ coef_.T +
intercept_``, ``coef_[0]`` is ``w_`` (shared memory, writes go through), the setter (two
accepted shapes, everything else refused with the model unchanged; a mutant setter without
the checks is caught), pickles (new layout, and the old one with a 1-D ``coef_``),
``SelectFromModel`` and the state format.
"""

import copy
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError
from sklearn.feature_selection import SelectFromModel

import sosl
from sosl import state as S
from sosl._coef import LinearCoef

#: every learner with a linear weight vector (the kernel learners have none)
LINEAR = [sosl.OAUCM, sosl.OAUCS, sosl.FTRLAUC, sosl.SketchedOAUCM, sosl.Perceptron,
          sosl.PAI, sosl.OAM, sosl.OLUBAUC, sosl.SOLAM, sosl.AdaOAM, sosl.PartialOAUCM]
#: those whose ``coef_`` is a view of the 1-D state ``w_`` (the sketch computes its own)
WRITABLE = [E for E in LINEAR if issubclass(E, LinearCoef)]
KERNEL = [sosl.OKAUCM, sosl.OKAUCS, sosl.KOIL, sosl.POLK]
#: linear in a feature space of their own, not in the input's (no coef_ over the features)
FEATURE_MAP = [sosl.NystroemOAUCM]


def _data(seed=0, n=120, p=6):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = (X[:, 0] - 0.5 * X[:, 1] + 0.3 * rng.normal(size=n) > 0.4).astype(int)
    return X, y


def _fitted(Est, seed=0):
    X, y = _data(seed)
    return Est().fit(X, y), X, y


def _arrays(m):
    """Every array and number of the model's __dict__, as bytes (the state to compare)."""
    return {k: (v.tobytes(), v.shape) if isinstance(v, np.ndarray) else repr(v)
            for k, v in vars(m).items() if not k.startswith("_lock")}


def test_the_lists_cover_the_library():
    """Every public learner is linear (listed here), a kernel learner, or linear in a
    feature map of a kernel."""
    public = {getattr(sosl, n) for n in sosl.__all__ if isinstance(getattr(sosl, n), type)
              and issubclass(getattr(sosl, n), sosl._base.BaseOnlineAUC)}
    assert public == set(LINEAR) | set(KERNEL) | set(FEATURE_MAP)
    assert set(WRITABLE) == set(LINEAR) - {sosl.SketchedOAUCM}


@pytest.mark.parametrize("Est", LINEAR, ids=lambda E: E.__name__)
def test_shapes_and_the_linear_decision(Est):
    m, X, y = _fitted(Est)
    p = X.shape[1]
    assert m.coef_.shape == (1, p) and m.coef_.dtype == np.float64
    assert m.intercept_.shape == (1,) and m.intercept_.dtype == np.float64
    assert m.coef_[0].shape == (p,)
    f = m.decision_function(X)
    want = (X @ m.coef_.T + m.intercept_).ravel()          # scikit-learn's linear contract
    np.testing.assert_allclose(f, want, rtol=1e-12, atol=1e-12)
    assert np.ptp(f) > 0 and np.abs(m.coef_).max() > 0
    # mutant: the weights in another order do not give the decision function
    assert not np.allclose(f, X @ m.coef_[0, ::-1] + m.intercept_[0], rtol=1e-6)
    # sparse rows score the same where the learner takes them
    if m._sparse_mode():
        np.testing.assert_allclose(m.decision_function(sp.csr_matrix(X)), f, rtol=1e-12,
                                   atol=1e-12)


def _scored(m):
    """The state vector coef_ views: w_, or PartialOAUCM's averaged w_avg_ (average=True)."""
    return m.w_avg_ if getattr(m, "average", False) else m.w_


@pytest.mark.parametrize("Est", WRITABLE, ids=lambda E: E.__name__)
def test_coef_row_is_the_state_vector_and_writes_go_through(Est):
    m, X, y = _fitted(Est)
    w = _scored(m)
    assert w.ndim == 1 and "coef_" not in vars(m)
    assert np.array_equal(m.coef_[0], w) and np.shares_memory(m.coef_, w)
    f = m.decision_function(X)
    old = float(w[2])
    m.coef_[0, 2] = old + 1.0                      # a write into the view is a write into w_
    assert _scored(m)[2] == old + 1.0 and _scored(m) is w
    g = m.decision_function(X)                     # (the intercept may depend on w_)
    np.testing.assert_allclose(g, X @ w + m.intercept_[0], rtol=1e-12, atol=1e-12)
    assert np.abs(g - f).max() > 0.1


@pytest.mark.parametrize("Est", WRITABLE, ids=lambda E: E.__name__)
def test_the_setter_takes_both_shapes_and_learning_continues_from_it(Est):
    m, X, y = _fitted(Est)
    p = X.shape[1]
    w_id = id(m.w_)
    new = np.linspace(-1.0, 1.0, p)
    m.coef_ = new[None, :]
    assert np.array_equal(m.w_, new) and id(m.w_) == w_id     # copied into the state array
    m.coef_ = (2 * new).tolist()                             # (p,) as a list
    assert np.array_equal(m.coef_, 2 * new[None, :])
    m.coef_ = np.arange(p)                                    # integers are converted
    assert m.w_.dtype == np.float64 and np.array_equal(m.w_, np.arange(p, dtype=float))
    # the next rounds start from the assigned weights: the same as a model given them
    twin = pickle.loads(pickle.dumps(m))
    m.partial_fit(X[:20], y[:20])
    twin.w_[:] = np.arange(p)
    twin.partial_fit(X[:20], y[:20])
    assert np.array_equal(m.coef_, twin.coef_)


def _refused(m, value, exc):
    """Whether assigning ``value`` to ``coef_`` raises ``exc`` and leaves m as it was."""
    before = _arrays(m)
    try:
        m.coef_ = value
    except exc:
        return _arrays(m) == before
    return False


@pytest.mark.parametrize("Est", WRITABLE, ids=lambda E: E.__name__)
def test_the_setter_refuses_anything_else_and_leaves_the_model_unchanged(Est):
    m, X, y = _fitted(Est)
    p = X.shape[1]
    f = m.decision_function(X)
    for bad in (np.ones(p + 1), np.ones((2, p)), np.ones((p, 1)), np.ones((1, 1, p)),
                np.ones(1), 1.0, np.ones((1, p - 1))):
        assert _refused(m, bad, ValueError), np.shape(bad)
    with pytest.raises(ValueError, match=rf"shape \(1, {p}\) or \({p},\).*got shape \(2, {p}\)"):
        m.coef_ = np.ones((2, p))
    nan = np.ones(p)
    nan[3] = np.nan
    assert _refused(m, nan, ValueError) and _refused(m, np.full((1, p), np.inf), ValueError)
    assert _refused(m, np.array(["a"] * p), TypeError)
    assert _refused(m, np.ones(p) * 1j, TypeError)
    assert _refused(m, np.ones(p, dtype=bool), TypeError)
    np.testing.assert_array_equal(m.decision_function(X), f)
    with pytest.raises(NotFittedError):
        Est().coef_ = np.ones(p)
    assert not hasattr(Est(), "coef_")


def test_a_setter_without_the_checks_is_caught(monkeypatch):
    """Mutant: a setter that writes whatever numpy broadcasts into w_ (a (1,) array or a
    scalar silently sets every weight) is caught by the checks above."""
    m, X, y = _fitted(sosl.OAUCM)

    def naive(self, value):
        self.w_[...] = value
    monkeypatch.setattr(LinearCoef, "coef_", property(LinearCoef.coef_.fget, naive))
    assert not _refused(m, np.ones(1), ValueError)
    assert not _refused(m, 1.0, ValueError)


BASELINES = [sosl.Perceptron, sosl.PAI, sosl.OAM, sosl.OLUBAUC, sosl.SOLAM, sosl.AdaOAM]


def _intercept_checks(m, X):
    """Whether a number assigned to ``intercept_`` scores as ``X @ coef_.T + b`` on every
    path (one row included) and a bad value is refused with the model unchanged."""
    m.intercept_ = 0.25
    if not (isinstance(m.intercept_, np.ndarray) and m.intercept_.shape == (1,)
            and m.intercept_.dtype == np.float64):
        return False
    want = X @ m.coef_[0] + 0.25
    try:
        if not np.allclose([m.score_one(x) for x in X[:3]], want[:3], rtol=1e-12, atol=0):
            return False
    except TypeError:                       # a float where the one-row path indexes
        return False
    np.testing.assert_allclose(m.decision_function(X), want, rtol=1e-12, atol=1e-15)
    before = _arrays(m)
    for bad, err in ((np.ones(2), ValueError), (np.ones((1, 1)), ValueError),
                     (np.nan, ValueError), ("a", TypeError)):
        try:
            m.intercept_ = bad
        except err:
            pass
        else:
            return False
        if _arrays(m) != before:
            return False
    return True


@pytest.mark.parametrize("Est", BASELINES, ids=lambda E: E.__name__)
def test_the_intercept_takes_a_number_and_refuses_anything_else(Est):
    """scikit-learn's linear models accept ``clf.intercept_ = 0.5``; so do the baselines
    (stored as a (1,) array), and learning continues from it."""
    m, X, y = _fitted(Est)
    assert _intercept_checks(m, X)
    m.partial_fit(X, y)
    assert np.isfinite(m.decision_function(X)).all()
    assert not hasattr(Est(), "intercept_")


def test_a_plain_intercept_attribute_is_caught(monkeypatch):
    """Mutant: ``intercept_`` as a plain attribute (the float stays a float) fails the
    one-row path, and bad values go in unchecked."""
    m, X, y = _fitted(sosl.Perceptron)
    monkeypatch.delattr(sosl.baselines._LinearBaseline, "intercept_")
    assert not _intercept_checks(m, X)


def test_the_sketch_coef_is_read_only():
    m, X, y = _fitted(sosl.SketchedOAUCM)
    before = _arrays(m)
    with pytest.raises(AttributeError):
        m.coef_ = np.zeros((1, X.shape[1]))
    assert _arrays(m) == before
    m.coef_[0, 0] = 5.0                         # a computed array: writing it changes nothing
    assert _arrays(m) == before and m.coef_[0, 0] != 5.0


@pytest.mark.parametrize("Est", KERNEL, ids=lambda E: E.__name__)
def test_kernel_learners_have_no_coef(Est):
    X, y = _data(1, n=60, p=3)
    m = Est().fit(X, y)
    assert not hasattr(m, "coef_") and not hasattr(m, "w_")


@pytest.mark.parametrize("Est", LINEAR, ids=lambda E: E.__name__)
def test_pickles_round_trip_and_continue(Est):
    m, X, y = _fitted(Est)
    again = pickle.loads(pickle.dumps(m))
    assert np.array_equal(again.coef_, m.coef_) and again.coef_.shape == m.coef_.shape
    assert np.array_equal(again.intercept_, m.intercept_)
    m.partial_fit(X[:30], y[:30])
    again.partial_fit(X[:30], y[:30])
    assert np.array_equal(again.coef_, m.coef_)
    np.testing.assert_array_equal(again.decision_function(X), m.decision_function(X))


@pytest.mark.parametrize("Est", WRITABLE, ids=lambda E: E.__name__)
def test_a_pickle_of_the_old_layout_loads_into_the_new_one(Est):
    """Before the change the 1-D weights were pickled as ``coef_`` (and a linear
    baseline's intercept as a float): loading moves them to ``w_`` (and a (1,) array)."""
    m, X, y = _fitted(Est)
    old = copy.deepcopy(m.__getstate__())          # not the live arrays of m
    old["coef_"] = old.pop("w_").copy()
    if isinstance(old.get("intercept_"), np.ndarray):
        old["intercept_"] = float(old["intercept_"][0])
    loaded = Est.__new__(Est)
    loaded.__setstate__(old)
    assert "coef_" not in vars(loaded) and loaded.w_.ndim == 1
    assert np.array_equal(loaded.coef_, m.coef_)
    assert loaded.intercept_.shape == (1,)
    np.testing.assert_array_equal(loaded.decision_function(X), m.decision_function(X))
    loaded.partial_fit(X[:30], y[:30])
    m.partial_fit(X[:30], y[:30])
    assert np.array_equal(loaded.coef_, m.coef_)


def test_select_from_model_reads_the_coefficients():
    X, y = _data(2, n=300, p=8)
    X[:, 5] *= 40.0                                 # a feature the weights rank high
    m = sosl.OAUCM(lam=0.01).fit(X, y)
    sel = SelectFromModel(m, prefit=True, max_features=3, threshold=-np.inf)
    kept = np.flatnonzero(sel.get_support())
    want = np.sort(np.argsort(-np.abs(m.coef_[0]))[:3])
    assert kept.tolist() == want.tolist()
    assert sel.transform(X).shape == (300, 3)
    refit = SelectFromModel(sosl.FTRLAUC(), max_features=2, threshold=-np.inf).fit(X, y)
    assert refit.get_support().sum() == 2


@pytest.mark.parametrize("Est", [sosl.OAUCM, sosl.FTRLAUC, sosl.PAI],
                         ids=lambda E: E.__name__)
def test_the_state_holds_w_and_round_trips(Est):
    m, X, y = _fitted(Est)
    st = S.get_state(m)
    assert st.version == S.STATE_VERSION == 2
    assert "coef_" not in st.arrays and np.array_equal(st.arrays["w_"], m.coef_[0])
    back = S.from_state(st)
    assert np.array_equal(back.coef_, m.coef_)
    np.testing.assert_array_equal(back.intercept_, m.intercept_)
    # a state written before the change (version 1, the weights under "coef_") is refused
    with pytest.raises(ValueError, match="version 1"):
        S.from_state(S.LearnerState(**{**st.__dict__, "version": 1}))
