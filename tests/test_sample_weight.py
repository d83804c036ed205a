"""Importance weights (``sample_weight``, ``learn_one(..., w=)``).

OAUCM/OAUCS have a weighted form: a row of weight v counts v times in its class's moments
(W' = beta W + v) and its loss term is scaled by v in the step; the kernel equals the
NumPy reference with weights. Every learner: a zero weight is exactly the row left out
(``t_`` not advanced), all-one weights are the unweighted pass bit for bit, bad weights
are refused with the state unchanged; a learner without a weighted form refuses weights
other than 0 and 1.
"""


import numpy as np
import pytest
from helpers import ESTIMATORS, fitted_state, make, same_state

import sosl
from sosl import OAUCM, OAUCS
from sosl._core import _linear, _linear_ref
from sosl._core._codes import Loss, Schedule

_make = make


def _data(n=160, p=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = (X[:, 0] + 0.4 * rng.normal(size=n) > 0.3).astype(int)
    y[:2] = [0, 1]
    return X, y


@pytest.mark.parametrize("Est", ESTIMATORS, ids=lambda E: E.__name__)
def test_zero_weight_is_the_row_left_out(Est):
    X, y = _data()
    sw = np.ones(160)
    sw[[5, 17, 18, 90, 159]] = 0.0
    keep = sw > 0
    a = _make(Est).fit(X, y, sample_weight=sw)
    b = _make(Est).fit(X[keep], y[keep])
    assert same_state(fitted_state(a), fitted_state(b))
    assert a.t_ == a.n_seen_ == keep.sum()
    a.partial_fit(X[:40], y[:40], sample_weight=sw[:40])
    b.partial_fit(X[:40][keep[:40]], y[:40][keep[:40]])
    assert same_state(fitted_state(a), fitted_state(b))
    ones = _make(Est).fit(X, y, sample_weight=np.ones(160))
    assert same_state(fitted_state(ones), fitted_state(_make(Est).fit(X, y)))


@pytest.mark.parametrize("Est", [E for E in ESTIMATORS if not E.capabilities.weighted],
                         ids=lambda E: E.__name__)
def test_learners_without_a_weighted_form_refuse_other_weights(Est):
    X, y = _data()
    m = _make(Est).fit(X, y)
    before = fitted_state(m)
    with pytest.raises(ValueError, match="no weighted form"):
        m.partial_fit(X[:10], y[:10], sample_weight=np.full(10, 2.0))
    with pytest.raises(ValueError, match="no weighted form"):
        m.learn_one(X[0], y[0], w=0.5)
    assert same_state(fitted_state(m), before)


@pytest.mark.parametrize("Est", ESTIMATORS, ids=lambda E: E.__name__)
def test_bad_weights_are_refused_and_leave_the_state(Est):
    X, y = _data()
    m = _make(Est).fit(X, y)
    before = fitted_state(m)
    for bad, match in [(-np.ones(10), "non-negative"), (np.full(10, np.nan), "finite"),
                       (np.ones(9), "one weight per row"), (np.ones((10, 2)), "shape"),
                       (np.array(["a"] * 10), "real numbers")]:
        with pytest.raises((ValueError, TypeError), match=match):
            m.partial_fit(X[:10], y[:10], sample_weight=bad)
    assert same_state(fitted_state(m), before)


@pytest.mark.parametrize("Est", ESTIMATORS, ids=lambda E: E.__name__)
def test_learn_one_with_zero_weight_changes_nothing_but_checks_the_row(Est):
    X, y = _data()
    m = _make(Est).fit(X, y)
    before = fitted_state(m)
    m.learn_one(X[3], y[3], w=0.0)
    assert same_state(fitted_state(m), before)
    with pytest.raises(ValueError):
        m.learn_one(np.r_[X[3, :-1], np.nan], y[3], w=0.0)
    with pytest.raises(ValueError):
        m.learn_one(X[3], 7, w=0.0)


@pytest.mark.parametrize("Est", [OAUCM, OAUCS], ids=lambda E: E.__name__)
@pytest.mark.parametrize("p", [4, 40], ids=["own-loops", "blas"])
def test_integer_weights_give_the_moments_of_repeated_rows(Est, p):
    X, y = _data(n=120, p=p, seed=p)
    k = np.random.default_rng(1).integers(1, 4, size=120)
    weighted = Est().fit(X, y, sample_weight=k.astype(float))
    repeated = Est().fit(np.repeat(X, k, axis=0), np.repeat(y, k))
    np.testing.assert_allclose(weighted.means_, repeated.means_, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(weighted.covariances_, repeated.covariances_, rtol=1e-10,
                               atol=1e-12)
    np.testing.assert_allclose(weighted.weights_, repeated.weights_, rtol=1e-13)
    assert weighted.counts_.sum() == 120 and repeated.counts_.sum() == k.sum()
    assert weighted.t_ == 120
    plain = Est().fit(X, y)                                # the weights did something
    assert not np.allclose(plain.covariances_, weighted.covariances_, rtol=1e-3)


def _kernel_vs_reference(X, s, sw, beta, blas_min_p, ref_pass=_linear_ref.linear_pass):
    n, p = X.shape
    order = np.arange(n, dtype=np.intp)
    lam, loss, sched = 0.1, int(Loss.LOSS_M), int(Schedule.STEP_INV_LAM_T)
    w, xbar, C = np.zeros(p), np.zeros((2, p)), np.zeros((2, p, p))
    scale, W, N = np.ones(2), np.zeros(2), np.zeros(2, dtype=np.int64)
    _linear.linear_pass(X, s, order, w, xbar, C, scale, W, N, 0, lam, 0.0, sched, loss, beta,
                        blas_min_p, np.empty(3 * p + 2 * 4 * p), None, sw)
    U = np.triu(C) + np.transpose(np.triu(C, 1), (0, 2, 1))
    Sigma_c = U * (scale / np.where(W > 0, W, 1.0))[:, None, None]
    w_r, xbar_r, Sigma_r = np.zeros(p), np.zeros((2, p)), np.zeros((2, p, p))
    N_r, W_r = np.zeros(2, dtype=np.int64), np.zeros(2)
    ref_pass(X, s, order, w_r, xbar_r, Sigma_r, N_r, 0, lam, 0.0, sched, loss, beta=beta,
             W=W_r, sw=sw)
    return (w, xbar, Sigma_c, W), (w_r, xbar_r, Sigma_r, W_r)


@pytest.mark.parametrize("blas_min_p", [10**9, 1], ids=["own-loops", "blas"])
@pytest.mark.parametrize("beta", [1.0, 0.8])
def test_weighted_kernel_equals_the_reference(blas_min_p, beta):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 6))
    s = np.where(rng.random(200) < 0.3, 1.0, -1.0)
    sw = rng.uniform(0.1, 3.0, size=200)
    c, r = _kernel_vs_reference(X, s, sw, beta, blas_min_p)
    for a, b, name in zip(c, r, ["w", "xbar", "Sigma", "W"]):
        np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-13, err_msg=name)
    assert np.abs(c[0]).max() > 1e-3


def test_weighted_reference_mutant_is_caught():
    """The mutant: a reference that weights the moments but not the loss term differs
    from the kernel (so the equality above can fail)."""
    from sosl._core._losses_ref import grad_w
    from sosl._core._moments_ref import moment_update, round_prologue

    def mutant(X, s, order, w, xbar, Sigma, N, t0, lam, eta, schedule, loss, beta=1.0,
               W=None, sw=None):
        t = t0
        for i in order:
            t += 1
            own, opp, eta_t = round_prologue(s[i], t, schedule, eta, lam)
            g = lam * w
            if N[opp] > 0:
                g = g + grad_w(loss, w, s[i] * (X[i] - xbar[opp]), Sigma[opp])   # no v
            W[own] = moment_update(X[i], xbar[own], Sigma[own], W[own], beta, sw[i])
            N[own] += 1
            w -= eta_t * g
        return t

    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 6))
    s = np.where(rng.random(200) < 0.3, 1.0, -1.0)
    sw = rng.uniform(0.1, 3.0, size=200)
    c, r = _kernel_vs_reference(X, s, sw, 1.0, 10**9, ref_pass=mutant)
    np.testing.assert_allclose(c[1], r[1], rtol=1e-11)         # moments still agree
    assert not np.allclose(c[0], r[0], rtol=1e-6)              # the step does not


@pytest.mark.parametrize("Est", [OAUCM, OAUCS], ids=lambda E: E.__name__)
def test_learn_one_weight_equals_partial_fit_weight(Est):
    X, y = _data()
    a = Est().fit(X[:50], y[:50])
    b = Est().fit(X[:50], y[:50])
    for i in range(50, 80):
        a.learn_one(X[i], y[i], w=2.5)
        b.partial_fit(X[i:i + 1], y[i:i + 1], sample_weight=[2.5])
    assert same_state(fitted_state(a), fitted_state(b))
    assert not np.array_equal(a.coef_, Est().fit(X[:80], y[:80]).coef_)


def test_weights_work_through_scikit_learn_meta_estimators():
    from sklearn.model_selection import cross_val_score
    X, y = _data(n=200)
    scores = cross_val_score(OAUCM(), X, y, scoring="roc_auc", cv=3,
                             params={"sample_weight": np.where(y == 1, 2.0, 1.0)})
    assert scores.shape == (3,) and np.all(scores > 0.6)


@pytest.mark.parametrize("Est", [OAUCM, sosl.PAI], ids=lambda E: E.__name__)
def test_all_zero_weights_cannot_start_a_model(Est):
    X, y = _data(n=20)
    for call in (lambda m: m.fit(X, y, sample_weight=np.zeros(20)),
                 lambda m: m.partial_fit(X, y, classes=[0, 1], sample_weight=np.zeros(20))):
        m = Est()
        with pytest.raises(ValueError, match="non-zero"):
            call(m)
        assert not hasattr(m, "classes_")
    m = Est().fit(X, y)
    before = fitted_state(m)
    m.partial_fit(X, y, sample_weight=np.zeros(20))             # a fitted model: no-op
    assert same_state(fitted_state(m), before)
