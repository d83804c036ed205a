"""The linear baselines as estimators: cross-checks against scikit-learn's Perceptron and
PA-I, seeded reservoir sampling, refused parameters and layouts, sparse input, overflow
(passes against references: tests/_core/test_baselines.py; the shared contract:
tests/test_contract.py)."""

import pickle
import warnings

import numpy as np
import pytest
from helpers import (
    assert_close_to_reference,
    assert_same_state,
    baseline_learners,
    baseline_state,
    baseline_stream,
    comparable_baseline_state,
    mutant_of,
    sparsify,
)
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from sosl import OAM, OLUBAUC, PAI, SOLAM, AdaOAM, Perceptron
from sosl._core import _baselines as K
from sosl._core import _baselines_ref as R
from sosl._core._codes import OamUpdate, Schedule
from sosl.metrics import auc

RTOL = 1e-12
OAM_SEQ, OAM_GRA = int(OamUpdate.OAM_SEQ), int(OamUpdate.OAM_GRA)
INV_LAM_T, CONSTANT = int(Schedule.STEP_INV_LAM_T), int(Schedule.STEP_CONSTANT)


# -- cross-checks with scikit-learn ------------------------------------------------------
def test_perceptron_equals_sklearn():
    from sklearn.linear_model import Perceptron as SkPerceptron
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 5))
    y = (X @ rng.normal(size=5) + 0.8 * rng.normal(size=300) > 0).astype(int)
    sk = SkPerceptron(fit_intercept=False, shuffle=False, max_iter=1, tol=None, eta0=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        sk.fit(X, y)
    ours = Perceptron().fit(X, y)
    assert np.any(ours.coef_ != 0)
    assert ours.coef_.shape == sk.coef_.shape and ours.intercept_.shape == sk.intercept_.shape
    np.testing.assert_allclose(ours.coef_, sk.coef_, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("C", [0.01, 1.0])
def test_pai_equals_sklearn_pa1(C):
    from sklearn.linear_model import SGDClassifier
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 5))
    X[17] = 0.0                                             # a zero row is skipped by both
    y = (X @ rng.normal(size=5) + 0.8 * rng.normal(size=300) > 0).astype(int)
    sk = SGDClassifier(loss="hinge", penalty=None, learning_rate="pa1", eta0=C,
                       fit_intercept=False, shuffle=False, max_iter=1, tol=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        sk.fit(X, y)
    ours = PAI(C=C).fit(X, y)
    assert np.any(ours.coef_ != 0)
    assert ours.coef_.shape == sk.coef_.shape and ours.intercept_.shape == sk.intercept_.shape
    np.testing.assert_allclose(ours.coef_, sk.coef_, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("est", baseline_learners(), ids=lambda e: repr(e))
def test_learns_a_ranking(est):
    """Each learner ranks a linearly separable-ish stream well (AUC well above 1/2)."""
    X, y = baseline_stream(2, n=600)
    model = pickle.loads(pickle.dumps(est)).fit(X, y)
    assert auc(y == "pos", model.decision_function(X)) > 0.85


def test_oam_seeded_reproducibility():
    X, y = baseline_stream(3, n=300)
    a = OAM(buffer_size=5, random_state=42).fit(X, y)
    b = OAM(buffer_size=5, random_state=42).fit(X, y)
    c = OAM(buffer_size=5, random_state=43).fit(X, y)
    assert_same_state(baseline_state(a), baseline_state(b))
    assert not np.array_equal(a.buffers_, c.buffers_)
    r1 = OAM(buffer_size=5, random_state=np.random.RandomState(0)).fit(X, y)
    r2 = OAM(buffer_size=5, random_state=np.random.RandomState(0)).fit(X, y)
    assert_same_state(baseline_state(r1), baseline_state(r2))


def test_oam_buffer_weighting_and_counts():
    X, y = baseline_stream(4, n=300)
    model = OAM(buffer_size=7, random_state=0).fit(X, y)
    n_pos = int(np.sum(y == "pos"))
    np.testing.assert_array_equal(model.counts_, [X.shape[0] - n_pos, n_pos])
    np.testing.assert_array_equal(model.buffer_fill_, [7, 7])


@pytest.mark.parametrize("est, match", [
    (PAI(C=-1.0), "'C' parameter of PAI must be"),
    (PAI(C="1"), "'C' parameter of PAI must be"),
    (OAM(update="foo"), "'update' parameter of OAM must be"),
    (OAM(buffer_size=0), "'buffer_size' parameter of OAM must be"),
    (OAM(buffer_size=2.5), "'buffer_size' parameter of OAM must be"),
    (OLUBAUC(lam=0.0), "lam must be > 0 when eta is None"),
    (OLUBAUC(lam=0.1, eta=-1.0), "'eta' parameter of OLUBAUC must be"),
    (SOLAM(radius=0.0), "'radius' parameter of SOLAM must be"),
    (SOLAM(eta=float("nan")), "'eta' parameter of SOLAM must be"),
    (AdaOAM(delta=-1.0), "'delta' parameter of AdaOAM must be"),
    (AdaOAM(eta=0.0), "'eta' parameter of AdaOAM must be"),
    (Perceptron(shuffle="yes"), "'shuffle' parameter of Perceptron must be"),
])
def test_bad_hyper_parameters(est, match):
    X, y = baseline_stream()
    with pytest.raises((ValueError, TypeError), match=match):
        est.fit(X, y)
    assert not hasattr(est, "coef_")


def test_oam_buffer_size_change_mid_stream_is_refused():
    X, y = baseline_stream()
    model = OAM(buffer_size=5, random_state=0).partial_fit(X[:50], y[:50])
    before = model.buffers_.copy()
    model.set_params(buffer_size=6)
    with pytest.raises(ValueError, match="buffer_size"):
        model.partial_fit(X[50:], y[50:])
    np.testing.assert_array_equal(model.buffers_, before)
    assert model.t_ == 50


def _inclusion_counts(pass_fn, n_items=40, budget=5, n_seeds=1500, use_kernel=True):
    """How often each of n_items positives ends in the buffer, over seeds 0..n_seeds-1."""
    X = np.arange(n_items, dtype=np.float64).reshape(-1, 1) + 1.0
    s = np.ones(n_items)
    order = np.arange(n_items, dtype=np.intp)
    counts = np.zeros(n_items, dtype=np.int64)
    for seed in range(n_seeds):
        st = [np.zeros(1), np.zeros((2, budget, 1)), np.zeros(2, np.int64),
              np.zeros(2, np.int64), np.array([seed], np.uint64)]
        args = (X, s, order, *st, 0, 1.0, OAM_SEQ)
        pass_fn(*args, np.zeros(2)) if use_kernel else pass_fn(*args)
        counts[st[1][1, :, 0].astype(np.int64) - 1] += 1
    return counts


def test_oam_reservoir_is_uniform():
    """Algorithm R keeps each instance with probability budget / n: counts within 6 sd."""
    n_items, budget, n_seeds = 40, 5, 1500
    mean = n_seeds * budget / n_items
    sd = np.sqrt(mean * (1 - budget / n_items))
    counts = _inclusion_counts(K.oam_pass, n_items, budget, n_seeds)
    assert counts.sum() == n_seeds * budget
    assert np.all(np.abs(counts - mean) < 6 * sd), counts
    # mutant: always replacing a slot once the buffer is full favours late instances
    bad = mutant_of(R.oam_pass, "if j < budget:", "j = j % budget\n            if True:")
    bad_counts = _inclusion_counts(bad, n_items, budget, 300, use_kernel=False) * 5
    assert not np.all(np.abs(bad_counts - mean) < 6 * sd)


# -- validation on every call, frozen layout ----------------------------------------------
@pytest.mark.parametrize("est, bad", [
    (PAI(C=0.5), {"C": -1.0}),
    (OAM(C=0.3, buffer_size=8, random_state=0), {"C": 0.0}),
    (OLUBAUC(lam=0.05), {"lam": 0.0}),
    (OLUBAUC(lam=0.05, eta=0.1), {"eta": -5.0}),
    (SOLAM(eta=0.5), {"radius": float("nan")}),
    (AdaOAM(lam=0.01), {"delta": -1.0}),
    (Perceptron(), {"shuffle": "no"}),
], ids=repr)
def test_bad_hyper_parameter_after_fit_is_refused_on_every_call(est, bad):
    X, y = baseline_stream()
    est.fit(X[:100], y[:100])
    before = pickle.dumps(baseline_state(est))
    est.set_params(**bad)
    name = next(iter(bad))
    for call in (lambda: est.partial_fit(X[100:], y[100:]), lambda: est.decision_function(X),
                 lambda: est.predict(X)):
        with pytest.raises((ValueError, TypeError), match=name):
            call()
    assert pickle.dumps(baseline_state(est)) == before


@pytest.mark.parametrize("est, change, name", [
    (OAM(buffer_size=5, random_state=0), {"update": "gra"}, "update"),
    (OAM(buffer_size=5, random_state=0), {"buffer_size": 6}, "buffer_size"),
    (OLUBAUC(lam=0.05), {"eta": 0.1}, "schedule"),
], ids=repr)
def test_layout_change_after_fit_is_refused(est, change, name):
    X, y = baseline_stream()
    est.partial_fit(X[:50], y[:50])
    before = pickle.dumps(baseline_state(est))
    scores = est.decision_function(X)
    est.set_params(**change)
    for call in (lambda: est.partial_fit(X[50:], y[50:]), lambda: est.decision_function(X)):
        with pytest.raises(ValueError, match=f"{name} changed from .* since the model was fitted"):
            call()
    assert pickle.dumps(baseline_state(est)) == before
    est.fit(X, y)                                           # fit starts over with the new value
    assert est._layout_ == est._layout()
    assert not np.array_equal(est.decision_function(X), scores)


# -- sparse input through the estimators --------------------------------------------------
def _sparse_estimators():
    return [e for e in baseline_learners() if not isinstance(e, AdaOAM)]


@pytest.mark.parametrize("est", _sparse_estimators(), ids=lambda e: repr(e))
def test_sparse_input_equals_dense(est):
    import scipy.sparse as sp
    X, y = baseline_stream(5)
    X = sparsify(X, seed=7)
    dense = pickle.loads(pickle.dumps(est)).fit(X, y)
    for fmt in ("csr", "csc", "coo"):
        sparse = pickle.loads(pickle.dumps(est)).fit(sp.csr_matrix(X).asformat(fmt), y)
        assert_close_to_reference(comparable_baseline_state(dense),
                                  comparable_baseline_state(sparse))
    assert np.any(dense.coef_ != 0)
    np.testing.assert_allclose(sparse.decision_function(sp.csr_matrix(X)),
                               dense.decision_function(X), rtol=RTOL, atol=1e-13)
    # chunks, dense and sparse mixed, equal the whole dense pass
    mixed = pickle.loads(pickle.dumps(est))
    bounds = [0, 1, 8, 9, 60, 130, X.shape[0]]
    for k, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:])):
        part = X[lo:hi] if k % 2 else sp.csr_matrix(X[lo:hi])
        mixed.partial_fit(part, y[lo:hi], classes=["neg", "pos"])
    assert_close_to_reference(comparable_baseline_state(dense), comparable_baseline_state(mixed))
    # and mixed the other way round (a dense first call: dense buffers, where OAM has them)
    mixed = pickle.loads(pickle.dumps(est))
    for k, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:])):
        part = sp.csr_matrix(X[lo:hi]) if k % 2 else X[lo:hi]
        mixed.partial_fit(part, y[lo:hi], classes=["neg", "pos"])
    assert_close_to_reference(comparable_baseline_state(dense), comparable_baseline_state(mixed))


def test_sparse_unsorted_int64_indices_are_canonicalised():
    import scipy.sparse as sp
    X, y = baseline_stream(6)
    X = sparsify(X, seed=8)
    A = sp.csr_matrix(X)
    perm = [np.random.default_rng(0).permutation(np.arange(lo, hi))
            for lo, hi in zip(A.indptr[:-1], A.indptr[1:])]
    perm = np.concatenate(perm)
    B = sp.csr_matrix((A.data[perm], A.indices[perm].astype(np.int64),
                       A.indptr.astype(np.int64)), shape=A.shape)
    assert not B.has_sorted_indices
    a = OLUBAUC(lam=0.05).fit(X, y)
    b = OLUBAUC(lam=0.05).fit(B, y)
    assert_close_to_reference(baseline_state(a), baseline_state(b))


def test_sparse_bad_batch_leaves_state_unchanged():
    import scipy.sparse as sp
    X, y = baseline_stream()
    for est in _sparse_estimators():
        est.fit(sp.csr_matrix(X), y)
        before = pickle.dumps(baseline_state(est))
        X_bad = sp.csr_matrix(X[:5])
        X_bad.data[3] = np.inf
        with pytest.raises(ValueError):
            est.partial_fit(X_bad, y[:5])
        with pytest.raises(ValueError):
            est.partial_fit(sp.csr_matrix(X[:5, :2]), y[:5])
        assert pickle.dumps(baseline_state(est)) == before


# -- overflow: a non-finite score or scalar state is an error, not a result ------------------
def test_oam_overflowing_intercept_is_refused():
    """Features near 1e160: the pairwise scores overflow in the pass (the reproducer of a
    committed ``intercept_ = -inf``); a finite pass whose intercept overflows is refused
    as well, naming ``intercept_``; both leave the fitted state unchanged."""
    X = np.array([[1.0, 0], [0, 1], [1, 1], [-1, 0]]) * 1e160
    model = OAM(update="gra", random_state=0)
    with pytest.raises(FloatingPointError, match="not finite"):
        model.fit(X, [1, 0, 1, 0])
    assert not hasattr(model, "coef_")
    X3 = np.array([[1.0, 0, 0], [0, 1, 0], [0, 0, 1e155]])   # w.d finite, w.mid overflows
    with pytest.raises(FloatingPointError, match="intercept_"):
        OAM(update="gra", random_state=0).fit(X3, [1, 0, 1])
    model = OAM(update="gra", random_state=0).partial_fit(X3[:2], [1, 0])
    before = pickle.dumps(baseline_state(model))
    for rows, labels, match in ((X3[2:], [1], "intercept_"),
                                (X[:, :1] @ np.ones((1, 3)), [1, 0, 1, 0], "not finite")):
        with pytest.raises(FloatingPointError, match=match):
            model.partial_fit(rows, labels)
        assert pickle.dumps(baseline_state(model)) == before
    assert np.all(np.isfinite(model.decision_function(X3[:2])))


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.parametrize("est, scale", [
    (Perceptron(), 1e155), (OLUBAUC(lam=0.05), 1e155), (PAI(), 1e155),
    (OAM(random_state=0), 1e155), (SOLAM(eta=5.0, radius=100.0), 1e300),  # ||w|| <= radius
], ids=repr)
def test_overflowing_scores_raise(est, scale):
    """Finite features so large that w.x overflows: training and scoring raise a clear
    FloatingPointError instead of NaN/inf scores (and predict mapping NaN to a class)."""
    import scipy.sparse as sp
    rng = np.random.default_rng(11)
    X = rng.normal(size=(60, 4))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(FloatingPointError, match="not finite"):
        pickle.loads(pickle.dumps(est)).fit(X * scale, y)
    with pytest.raises(FloatingPointError, match="not finite"):
        pickle.loads(pickle.dumps(est)).fit(sp.csr_matrix(X * scale), y)
    model = est.fit(X, y)
    before = pickle.dumps(baseline_state(model))
    assert np.abs(model.coef_).sum() > 2.0           # so that a finite row can overflow
    big = np.vstack([X[:3], 1e308 * np.sign(model.coef_)])      # score about 2e308 > max
    for rows in (big, sp.csr_matrix(big)):
        with pytest.raises(FloatingPointError, match="scores are not finite"):
            model.decision_function(rows)
        with pytest.raises(FloatingPointError, match="scores are not finite"):
            model.predict(rows)
    with pytest.raises(FloatingPointError, match="not finite"):
        model.partial_fit(X[:10] * scale, y[:10])
    assert pickle.dumps(baseline_state(model)) == before
    with pytest.raises(FloatingPointError, match="not finite"):    # a fresh state fails
        model.fit(sp.csr_matrix(X * scale), y)
    assert pickle.dumps(baseline_state(model)) == before
    fresh = clone(est)
    with pytest.raises(FloatingPointError, match="not finite"):
        fresh.partial_fit(X * scale, y)
    assert not hasattr(fresh, "coef_") and not hasattr(fresh, "t_")


@pytest.mark.parametrize("est", [e for e in baseline_learners() if e.capabilities.sparse_input],
                         ids=lambda e: repr(e))
def test_learn_one_on_csr_rows_equals_fit(est):
    """One CSR row at a time (dense rows: tests/test_contract.py)."""
    import scipy.sparse as sp
    X, y = baseline_stream(8, n=60)
    whole = pickle.loads(pickle.dumps(est)).fit(X, y)
    for kind in (sp.csr_matrix,):
        one = pickle.loads(pickle.dumps(est)).partial_fit(kind(X[:1]), y[:1],
                                                          classes=["neg", "pos"])
        for i in range(1, X.shape[0]):
            one.learn_one(X[i] if kind is np.asarray else kind(X[i:i + 1]), y[i])
        assert_close_to_reference(comparable_baseline_state(whole), comparable_baseline_state(one))
        assert one.score_one(X[0]) == pytest.approx(whole.decision_function(X[:1])[0],
                                                    rel=1e-12)
