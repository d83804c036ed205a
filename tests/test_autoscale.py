"""The "auto" defaults of FTRLAUC (gamma) and SketchedOAUCM (lam): the explicit numbers they
stand for, invariance to the scale of the features, and explicit numbers left as they were."""

import numpy as np
import pytest
import scipy.sparse as sp

from sosl import FTRLAUC, SketchedOAUCM
from sosl._autoscale import row_scale
from sosl._core import _ftrl_ref
from sosl.state import from_state, get_state


def _data(seed=0, n=300, p=200):
    rng = np.random.default_rng(seed)
    X = sp.random(n, p, density=0.05, random_state=seed, format="csr")
    X.data = np.round(X.data * 5) + 1.0                  # counts, rows of norm ~ 4-10
    w = rng.normal(size=p)
    y = (X @ w + 0.5 * rng.normal(size=n) > 0).astype(int)
    return X, y


def _scores_auc_order(model, X):
    return np.argsort(model.decision_function(X), kind="stable")


def test_row_scale_is_the_first_nonzero_row_norm_dense_or_sparse():
    X = np.zeros((4, 3))
    X[1] = [3.0, 0.0, 4.0]
    X[2] = [1.0, 1.0, 1.0]
    assert row_scale(X) == 5.0
    assert row_scale(sp.csr_matrix(X)) == 5.0
    assert row_scale(sp.csc_matrix(X)) == 5.0
    assert row_scale(np.zeros((2, 3))) == 1.0
    assert row_scale(np.array([[0.1, 0.2], [30.0, 40.0]])) == 1.0   # floored at 1
    X, _ = _data()
    assert row_scale(X) == row_scale(X.toarray()) == np.linalg.norm(X[0].toarray())


def test_ftrl_auto_equals_its_explicit_numbers_bit_for_bit():
    X, y = _data()
    a = FTRLAUC(l1=0.01, l2=0.1).fit(X[:100], y[:100]).partial_fit(X[100:], y[100:])
    s = float(np.linalg.norm(X[0].toarray()))
    assert a.row_scale_ == s and a._layout_ == {"row_scale": s}
    b = FTRLAUC(gamma=0.5 / s, beta=s, l1=0.01 * s, l2=0.1 * s * s).fit(X, y)
    assert b.row_scale_ is None and b._layout_ == {}        # explicit: the old layout
    np.testing.assert_array_equal(a.w_, b.w_)
    assert np.count_nonzero(a.w_) > 10


def test_ftrl_explicit_gamma_runs_the_reference_unchanged():
    X, y = _data(1)
    m = FTRLAUC(gamma=0.1).fit(X, y)                        # the old default, explicit
    p = X.shape[1]
    w, z, n = np.zeros(p), np.zeros(p), np.zeros(p)
    N, score = np.zeros(2, dtype=np.int64), np.zeros(2)
    s = np.where(y == 1, 1.0, -1.0)
    _ftrl_ref.ftrl_pass(X.toarray(), s, np.arange(X.shape[0]), w, z, n, N, score, 0,
                        0.0, 0.0, 1.0, 0.1)
    np.testing.assert_allclose(m.w_, w, rtol=1e-12, atol=1e-14)
    assert np.abs(w).max() > 0


def _invariant(Est, c=37.0, **kw):
    """Whether the default learner ranks X and c X the same way, with weights c times
    smaller on c X."""
    X, y = _data(2)
    a = Est(**kw).fit(X, y)
    b = Est(**kw).fit(X * c, y)
    fa, fb = a.decision_function(X), b.decision_function(X * c)
    return np.allclose(fa, fb, rtol=1e-8, atol=1e-10 * np.abs(fa).max())


@pytest.mark.parametrize("Est", [FTRLAUC, SketchedOAUCM])
def test_auto_is_invariant_to_the_feature_scale(Est):
    assert _invariant(Est)
    explicit = {"gamma": 0.1} if Est is FTRLAUC else {"lam": 1e-2}
    assert not _invariant(Est, **explicit)                 # a fixed number is not


def test_mutant_auto_without_the_scaled_beta_is_not_invariant(monkeypatch):
    """Mutant: gamma scaled, beta left as given: the step then depends on the scale."""
    def mutant(params, layout):
        s = float(layout["row_scale"])
        return 0.5 / s, float(params["beta"]), 0.0, 0.0
    monkeypatch.setattr(FTRLAUC, "effective_params", staticmethod(mutant))
    assert not _invariant(FTRLAUC)


def test_sketch_auto_equals_its_explicit_lambda():
    X, y = _data(3)
    a = SketchedOAUCM(rank=4).fit(X, y)
    s = float(np.linalg.norm(X[0].toarray()))
    b = SketchedOAUCM(rank=4, lam=1e-3 * (s * s)).fit(X, y)
    assert a.row_scale_ == s and "row_scale" not in b._layout_
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))


@pytest.mark.parametrize("Est", [FTRLAUC, SketchedOAUCM])
def test_auto_learn_one_and_state_round_trip(Est):
    X, y = _data(4)
    full = Est().fit(X[:40], y[:40])
    one = Est()
    for i in range(40):
        one.learn_one(X[i], y[i], classes=[0, 1])
    assert one.row_scale_ == full.row_scale_
    np.testing.assert_array_equal(one.decision_function(X), full.decision_function(X))
    back = from_state(get_state(full))
    assert back.row_scale_ == full.row_scale_
    np.testing.assert_array_equal(back.decision_function(X), full.decision_function(X))


@pytest.mark.parametrize("Est,name", [(FTRLAUC, "gamma"), (SketchedOAUCM, "lam")])
def test_switching_between_auto_and_a_number_after_fit_is_refused(Est, name):
    X, y = _data(5)
    m = Est().fit(X, y)
    before = m.decision_function(X)
    m.set_params(**{name: 0.3})
    with pytest.raises(ValueError, match="row_scale"):
        m.partial_fit(X, y)
    m.set_params(**{name: "auto"})
    np.testing.assert_array_equal(m.decision_function(X), before)
    e = Est(**{name: 0.3}).fit(X, y)
    e.set_params(**{name: "auto"})
    with pytest.raises(ValueError, match="'auto'"):
        e.partial_fit(X, y)


def test_merge_warns_when_auto_shards_read_different_row_scales():
    import warnings

    from sosl.state import merge
    rng = np.random.default_rng(0)
    X = 3.0 * rng.normal(size=(200, 5))
    y = (X[:, 0] > 0).astype(int)
    a = FTRLAUC().fit(X[:100], y[:100]).get_state()
    b = FTRLAUC().fit(2.0 * X[100:], y[100:]).get_state()
    assert a.layout["row_scale"] != b.layout["row_scale"]
    with pytest.warns(UserWarning, match="different row scales"):
        merge([a, b])
    Xc = X[100:].copy()
    Xc[0] = X[0]                              # the same first row: the same row scale
    c = FTRLAUC().fit(Xc, y[100:]).get_state()
    assert a.layout["row_scale"] == c.layout["row_scale"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        merge([a, c])
