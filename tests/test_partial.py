"""PartialOAUCM: psi_beta in the loss home against its twin, the typed pass against the NumPy
reference (one-way, two-way, weights, forgetting), max_fpr=1 against OAUC-M, the FPR budget,
and two_way_partial_auc against a brute force on every prefix; each with a mutant."""

import math
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import ndtri

from sosl import OAUCM, PartialOAUCM
from sosl._core import _partial
from sosl._core import _partial_ref as PR
from sosl._core._codes import Schedule
from sosl._core._losses_ref import LOSS_M, cvar_grad, loss_grad
from sosl.metrics import auc, two_way_partial_auc
from sosl.partial import budget_rank

INV = int(Schedule.STEP_INV_LAM_T)
CONST = int(Schedule.STEP_CONSTANT)


# -- psi_beta: compiled against the reference ---------------------------------------------

def _points(rng):
    mu = np.concatenate([rng.normal(scale=3.0, size=300), [1.0, 1.0, 0.0, 2.0, -5.0]])
    s2 = np.concatenate([rng.exponential(scale=2.0, size=300), [0.0, 4.0, 0.0, 0.0, 1e-300]])
    return mu, s2


@pytest.mark.parametrize("frac", [0.01, 0.05, 0.3, 0.5, 0.7, 0.999, 1.0])
def test_compiled_psi_beta_equals_reference(frac):
    mu, s2 = _points(np.random.default_rng(int(frac * 1000)))
    got = np.array([_partial.cvar_value_grad(frac, m, v) for m, v in zip(mu, s2)])
    want = np.array(cvar_grad(frac, mu, s2)).T
    assert np.max(np.abs(got - want) / np.maximum(np.abs(want), 1e-300)) <= 1e-12
    assert np.abs(got).max() > 0.1
    if frac < 1.0:      # mutant: psi_M / beta everywhere (the first branch dropped)
        m_val, m_mu, m_s2 = loss_grad(LOSS_M, mu, s2)
        mutant = np.array([m_val / frac, m_mu / frac, m_s2 / frac]).T
        assert np.max(np.abs(got - mutant)) > 1e-3


def test_psi_one_is_psi_m_bit_for_bit():
    mu, s2 = _points(np.random.default_rng(1))
    for m, v in zip(mu, s2):
        assert _partial.cvar_value_grad(1.0, m, v) == tuple(float(u) for u in
                                                             loss_grad(LOSS_M, m, v))


def test_psi_beta_is_the_worst_case_cvar_of_a_two_point_law():
    """The closed form equals the CVaR_beta of the attaining two-point distribution."""
    rng = np.random.default_rng(2)
    for _ in range(200):
        beta = rng.uniform(0.01, 0.99)
        mu, sigma = rng.normal(scale=2.0), rng.exponential()
        b = 1.0 - mu
        c_star = (2 * beta - 1) * sigma / (2 * math.sqrt(beta * (1 - beta)))
        if b >= c_star:
            hi, lo, p_hi = sigma * math.sqrt((1 - beta) / beta), \
                -sigma * math.sqrt(beta / (1 - beta)), beta
        else:
            A = math.sqrt(b * b + sigma * sigma)
            hi, lo, p_hi = -b + A, -b - A, 0.5 * (1 + b / A)
        assert abs(p_hi * hi + (1 - p_hi) * lo) < 1e-9                    # mean 0
        assert abs(p_hi * hi ** 2 + (1 - p_hi) * lo ** 2 - sigma ** 2) < 1e-9 * (1 + sigma ** 2)
        L_hi, L_lo = max(b + hi, 0.0), max(b + lo, 0.0)
        cvar = (min(p_hi, beta) * L_hi + max(beta - p_hi, 0.0) * L_lo) / beta
        assert cvar == pytest.approx(float(cvar_grad(beta, mu, sigma ** 2)[0]), rel=1e-9,
                                     abs=1e-12)


# -- the pass against the reference ----------------------------------------------------------

def _stream(rng, n=120, p=5):
    X = rng.normal(size=(n, p))
    s = np.where(rng.random(n) < 0.3, 1.0, -1.0)
    s[:7] = -1.0                                 # one class for a while
    X[20] = X[19]                                # a duplicate
    return X, s


def _rings(m):
    return np.zeros((2, m)), np.zeros(2, np.int64), np.zeros(2, np.int64)


def _kernel(X, s, order, frac, lam, eta, schedule, beta=1.0, sw=None, rho=0.0, m=30):
    p = X.shape[1]
    w, xbar = np.zeros(p), np.zeros((2, p))
    C, scale, W, N = np.zeros((2, p, p)), np.ones(2), np.zeros(2), np.zeros(2, np.int64)
    H, Hn, Hf = _rings(m)
    wbar = np.zeros(p)
    t = _partial.partial_pass(X, s, order, w, xbar, C, scale, W, N, 0, lam, eta, schedule,
                              beta, frac, rho, H, Hn, Hf, np.empty(4 * p), None, sw, wbar)
    Sigma = np.array([np.triu(C[k]) + np.triu(C[k], 1).T for k in range(2)])
    Sigma *= (scale / np.where(W > 0, W, 1.0))[:, None, None]
    return t, w, xbar, Sigma, W, N, H, Hn, Hf, wbar


def _reference(X, s, order, frac, lam, eta, schedule, beta=1.0, sw=None, rho=0.0, m=30):
    p = X.shape[1]
    w, xbar, Sigma = np.zeros(p), np.zeros((2, p)), np.zeros((2, p, p))
    W, N = np.zeros(2), np.zeros(2, np.int64)
    H, Hn, Hf = _rings(m)
    wbar = np.zeros(p)
    t = PR.partial_pass(X, s, order, w, xbar, Sigma, W, N, 0, lam, eta, schedule, beta, frac,
                        rho, H, Hn, Hf, sw, wbar)
    return t, w, xbar, Sigma, W, N, H, Hn, Hf, wbar


CASES = [([0.05, 1.0], 0.1, 0.0, INV, 1.0, 0.0), ([0.2, 0.5], 0.05, 0.0, INV, 1.0, 0.5),
         ([0.1, 1.0], 0.0, 0.05, CONST, 0.9, 0.3), ([1.0, 1.0], 0.1, 0.0, INV, 1.0, 0.5),
         ([0.5, 0.3], 0.1, 0.0, INV, 0.95, 0.0)]


@pytest.mark.parametrize("frac,lam,eta,schedule,beta,rho", CASES)
@pytest.mark.parametrize("p,weighted", [(5, False), (1, False), (40, True)])
def test_kernel_equals_reference(frac, lam, eta, schedule, beta, rho, p, weighted,
                                 monkeypatch):
    rng = np.random.default_rng(p)
    X, s = _stream(rng, p=p)
    order = rng.permutation(X.shape[0]).astype(np.intp)
    sw = rng.uniform(0.2, 3.0, X.shape[0]) if weighted else None
    frac = np.array(frac)
    got = _kernel(X, s, order, frac, lam, eta, schedule, beta, sw, rho)
    want = _reference(X, s, order, frac, lam, eta, schedule, beta, sw, rho)
    assert got[0] == want[0]
    for g, r in zip(got[1:], want[1:]):
        np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-12 * max(1.0, np.abs(r).max()))
    assert np.abs(got[1]).max() > 1e-3          # not trivially zero
    assert np.abs(got[9] - got[1]).max() > 1e-6  # the average is not the last iterate
    if frac.min() < 1.0:
        assert got[8].max() > 0                  # the rings were used
        # mutant: the hardness with the wrong sign (the easiest rows selected)
        real = PR.own_selection

        def flipped(w, x, y, *args):
            return real(w, x, -y, *args)
        monkeypatch.setattr(PR, "own_selection", flipped)
        bad = _reference(X, s, order, frac, lam, eta, schedule, beta, sw, rho)
        monkeypatch.setattr(PR, "own_selection", real)
        assert np.abs(bad[1] - got[1]).max() > 1e-6
    if rho > 0.0 and frac.min() < 1.0:      # mutant: the full-AUC term left out
        bad = _reference(X, s, order, frac, lam, eta, schedule, beta, sw, 0.0)
        assert np.abs(bad[1] - got[1]).max() > 1e-6


def test_average_is_the_t_weighted_mean_of_the_iterates():
    """The kernel's w_avg after T rounds is sum_t t w_t / sum_t t of the reference's
    iterates, round by round (any start t0); the uniform average (1/t, the mutant) is
    not."""
    rng = np.random.default_rng(8)
    X, s = _stream(rng, p=4)
    frac = np.array([0.1, 1.0])
    got = _kernel(X, s, None, frac, 0.05, 0.0, INV, rho=0.5)
    p, T = X.shape[1], X.shape[0]
    w, xbar, Sigma = np.zeros(p), np.zeros((2, p)), np.zeros((2, p, p))
    W, N = np.zeros(2), np.zeros(2, np.int64)
    H, Hn, Hf = _rings(30)
    iterates = []
    for r in range(T):
        PR.partial_pass(X, s, [r], w, xbar, Sigma, W, N, r, 0.05, 0.0, INV, 1.0, frac, 0.5,
                        H, Hn, Hf)
        iterates.append(w.copy())
    ts = np.arange(1, T + 1, dtype=float)
    weighted = ts @ np.array(iterates) / ts.sum()
    np.testing.assert_allclose(got[9], weighted, rtol=1e-12, atol=1e-12)
    uniform = np.mean(iterates, axis=0)                       # mutant: 1/t
    assert np.abs(uniform - got[9]).max() > 1e-4


def test_kernel_refuses_a_ring_out_of_range():
    X, s = _stream(np.random.default_rng(4))
    p = X.shape[1]
    H, Hn, Hf = _rings(10)
    Hf[0] = 11
    with pytest.raises(ValueError, match="ring"):
        _partial.partial_pass(X, s, None, np.zeros(p), np.zeros((2, p)), np.zeros((2, p, p)),
                              np.ones(2), np.zeros(2), np.zeros(2, np.int64), 0, 0.1, 0.0,
                              INV, 1.0, np.array([0.1, 1.0]), 0.0, H, Hn, Hf,
                              np.empty(4 * p))


def test_selection_keeps_the_asked_share_whatever_the_law():
    """The own-class selection ranks a row against its class's last rows: on heavy-tailed
    negatives it keeps about max_fpr of them; the normal cut it replaced (the mutant) keeps
    a very different share."""
    rng = np.random.default_rng(5)
    n, p = 3000, 3
    s = np.where(rng.random(n) < 0.1, 1.0, -1.0)
    X = rng.exponential(size=(n, p)) ** 2
    X[s > 0, 0] += 2.0
    frac = np.array([0.05, 1.0])
    w, xbar, Sigma = np.zeros(p), np.zeros((2, p)), np.zeros((2, p, p))
    W, N = np.zeros(2), np.zeros(2, np.int64)
    H, Hn, Hf = _rings(200)
    kept, normal, seen = 0, 0, 0
    for r in range(n):
        if s[r] < 0 and N[0] > 0 and N[1] > 0 and Hf[0] >= 100:
            u = float(w @ (X[r] - xbar[0])) / math.sqrt(float(w @ Sigma[0] @ w))
            sel, u_ring = PR.own_selection(w, X[r], -1.0, xbar[0], Sigma[0], N[0], 0.05,
                                           H.copy(), Hn.copy(), Hf.copy(), 0)
            assert u_ring == pytest.approx(u, rel=1e-12)
            kept += sel > 0
            normal += u >= ndtri(0.95)
            seen += 1
        PR.partial_pass(X, s, [r], w, xbar, Sigma, W, N, r, 0.1, 0.0, INV, 1.0, frac, 0.5,
                        H, Hn, Hf)
    assert seen > 2000
    assert abs(kept / seen - 0.05) < 0.015
    assert abs(normal / seen - 0.05) > 0.015


# -- the estimator ------------------------------------------------------------------------

def _data(n=1500, p=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = (X[:, 0] + 0.7 * rng.normal(size=n) > 1.5).astype(int)
    return X, y


def test_max_fpr_one_is_oaucm():
    X, y = _data()
    a = OAUCM(lam=0.05).fit(X, y)
    b = PartialOAUCM(max_fpr=1.0, lam=0.05).fit(X, y)
    np.testing.assert_allclose(b.w_, a.w_, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(b.covariances_, a.covariances_, rtol=1e-12, atol=1e-14)
    c = PartialOAUCM(max_fpr=0.5, lam=0.05).fit(X, y)      # mutant: another level differs
    assert np.abs(c.w_ - a.w_).max() > 1e-3
    d = PartialOAUCM(max_fpr=1.0, lam=0.05, average=False).fit(X, y)
    np.testing.assert_allclose(d.decision_function(X), a.decision_function(X), rtol=1e-12,
                               atol=1e-12)
    # averaged (the default): the same iterates, other scores
    assert np.abs(b.decision_function(X) - a.decision_function(X)).max() > 1e-3


def test_learn_one_partial_fit_sparse_and_pickle_agree():
    X, y = _data(400)
    full = PartialOAUCM(min_tpr=0.3).fit(X, y)
    one = PartialOAUCM(min_tpr=0.3)
    one.partial_fit(X[:50], y[:50], classes=[0, 1])
    one = pickle.loads(pickle.dumps(one))
    for i in range(50, 400):
        one.learn_one(X[i], y[i])
    np.testing.assert_array_equal(one.w_, full.w_)
    np.testing.assert_array_equal(one.w_avg_, full.w_avg_)
    np.testing.assert_array_equal(one.budget_rows_, full.budget_rows_)
    np.testing.assert_array_equal(one.selection_scores_, full.selection_scores_)
    assert full.selection_filled_.min() > 0
    sparse = PartialOAUCM(min_tpr=0.3).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.w_, full.w_, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(sparse.w_avg_, full.w_avg_, rtol=1e-12, atol=1e-15)


def test_bad_parameters_raise_and_leave_the_model():
    X, y = _data(200)
    m = PartialOAUCM().fit(X, y)
    w = m.w_.copy()
    for kw in ({"max_fpr": 0.0}, {"max_fpr": 1.5}, {"min_tpr": 1.0}, {"min_tpr": -0.1},
               {"lam": "fast"}, {"lam": 0}, {"lam": -1.0}):
        m.set_params(**kw)
        with pytest.raises(ValueError, match="lam" if "lam" in kw else "_"):
            m.partial_fit(X, y)
        np.testing.assert_array_equal(m.w_, w)
        m.set_params(max_fpr=0.05, min_tpr=None, lam="auto")
    m.set_params(lam=0, eta=0.01).fit(X, y)                  # a constant step takes lam = 0
    assert np.abs(m.w_ - w).max() > 0


def _rms_lam(b, rho):
    return 0.01 * math.sqrt((1 - rho) ** 2 / b + 2 * rho * (1 - rho) + rho ** 2)


@pytest.mark.parametrize("kw,lam", [({}, _rms_lam(0.05, 0.5)),
                                    ({"max_fpr": 0.01}, _rms_lam(0.01, 0.5)),
                                    ({"max_fpr": 0.2, "min_tpr": 0.5}, _rms_lam(0.1, 0.5)),
                                    ({"max_fpr": 0.1, "auc_weight": 0.0}, 0.01 / math.sqrt(0.1)),
                                    ({"max_fpr": 0.1, "auc_weight": 1.0}, 0.01),
                                    ({"max_fpr": 1.0}, 0.01),
                                    ({"max_fpr": 1.0, "auc_weight": 0.2}, 0.01)])
def test_auto_lam_is_oaucm_default_times_the_rms_gradient_factor(kw, lam):
    """lam="auto" plays exactly the rounds of the explicit
    1e-2 sqrt((1 - rho)^2 / b + 2 rho (1 - rho) + rho^2), b = max_fpr (1 - min_tpr)."""
    X, y = _data(600)
    auto = PartialOAUCM(**kw).fit(X, y)
    assert auto.get_params()["lam"] == "auto" and auto._lam() == pytest.approx(lam, rel=1e-15)
    fixed = PartialOAUCM(lam=auto._lam(), **kw).fit(X, y)
    np.testing.assert_array_equal(auto.w_, fixed.w_)
    np.testing.assert_array_equal(auto.w_avg_, fixed.w_avg_)
    frac = auto._fractions()
    rho = auto.get_params()["auc_weight"]
    worst = 0.01 * ((1 - rho) / (frac[0] * frac[1]) + rho)
    if worst > lam * (1 + 1e-9):        # mutant: the worst-case rule (the former default)
        assert np.abs(PartialOAUCM(lam=worst, **kw).fit(X, y).w_ - auto.w_).max() > 1e-3


def test_default_scores_read_the_average():
    """average=True (the default): decision_function, coef_, intercept_ and the budget
    read w_avg_; average=False (the mutant of the default) reads the last iterate."""
    X, y = _data(800)
    m = PartialOAUCM().fit(X, y)
    assert m.get_params()["average"] is True
    assert np.abs(m.w_avg_ - m.w_).max() > 1e-3
    mid = -0.5 * m.w_avg_ @ (m.means_[0] + m.means_[1])
    np.testing.assert_allclose(m.decision_function(X), X @ m.w_avg_ + mid, rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_array_equal(m.coef_[0], m.w_avg_)
    assert m.intercept_[0] == pytest.approx(mid, rel=1e-12)
    n = m.budget_filled_
    assert m.budget_threshold_ in (m.budget_rows_[:n] @ m.w_avg_ + mid).tolist()
    last = PartialOAUCM(average=False).fit(X, y)
    np.testing.assert_array_equal(last.w_, m.w_)
    np.testing.assert_array_equal(last.w_avg_, m.w_avg_)
    np.testing.assert_array_equal(last.coef_[0], m.w_)
    mid_w = -0.5 * m.w_ @ (m.means_[0] + m.means_[1])
    np.testing.assert_allclose(last.decision_function(X), X @ m.w_ + mid_w, rtol=1e-12,
                               atol=1e-12)
    assert np.abs(last.decision_function(X) - m.decision_function(X)).max() > 1e-3
    assert m.score_one(X[3]) == pytest.approx(m.decision_function(X[3:4])[0], rel=1e-12)
    # coef_ assigned: both the iterate and the average take it
    m.coef_ = np.ones(X.shape[1])
    np.testing.assert_array_equal(m.w_, np.ones(X.shape[1]))
    np.testing.assert_array_equal(m.w_avg_, np.ones(X.shape[1]))
    with pytest.raises(ValueError, match="finite"):
        m.coef_ = np.full(X.shape[1], np.nan)
    np.testing.assert_array_equal(m.w_avg_, np.ones(X.shape[1]))


def test_state_without_the_average_is_refused():
    from sosl.state import from_state, get_state
    X, y = _data(300)
    m = PartialOAUCM().fit(X, y)
    st = get_state(m)
    back = from_state(st)
    np.testing.assert_array_equal(back.w_avg_, m.w_avg_)
    np.testing.assert_array_equal(back.decision_function(X), m.decision_function(X))
    del st.arrays["w_avg_"]
    with pytest.raises(ValueError, match="w_avg_"):
        from_state(st)
    again = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(again.w_avg_, m.w_avg_)
    old = m.__getstate__()
    del old["w_avg_"]
    with pytest.raises(ValueError, match="w_avg_"):
        PartialOAUCM().__setstate__(old)
    PartialOAUCM().__setstate__(PartialOAUCM().__getstate__())     # unfitted: no average


def test_default_lam_matches_oaucm_on_unscaled_rows():
    """On standard-normal rows the default learns the top 5% as well as OAUC-M; steps ten
    times longer than "auto"'s (lam=1e-3) scored at the last iterate (the mutant) fall far
    behind, the average of the same iterates does not."""
    from sosl.metrics import partial_auc
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 3))
    y = (X[:, 0] + 0.3 * rng.normal(size=2000) > 1.5).astype(int)
    ref = partial_auc(y, OAUCM().fit(X, y).decision_function(X), max_fpr=0.05)
    got = partial_auc(y, PartialOAUCM().fit(X, y).decision_function(X), max_fpr=0.05)
    old = partial_auc(y, PartialOAUCM(lam=1e-3, average=False).fit(X, y).decision_function(X),
                      max_fpr=0.05)
    avg = partial_auc(y, PartialOAUCM(lam=1e-3).fit(X, y).decision_function(X), max_fpr=0.05)
    assert got > ref - 0.02 and got > 0.9
    assert old < got - 0.1 and old < avg - 0.1


# -- the FPR budget -----------------------------------------------------------------------

def test_budget_rank_covers_both_errors():
    k, q = budget_rank(2000, 0.05, 1000, 0.95)
    assert 0 < q < 0.05 and 0 < k < 100
    from scipy.stats import beta as beta_dist
    from scipy.stats import binom
    assert binom.sf(50, 1000, q) <= 0.025 + 1e-9
    assert beta_dist.sf(q, k, 2001 - k) <= 0.025 + 1e-9
    assert beta_dist.sf(q, k + 1, 2000 - k) > 0.025       # the largest such rank
    assert budget_rank(5, 0.01, 1000, 0.95)[0] == 0        # too few scores: no threshold


def test_budget_keeps_the_fpr_on_a_stationary_stream():
    rng = np.random.default_rng(7)
    n, p = 30000, 4
    y = (rng.random(n) < 0.05).astype(int)
    X = rng.normal(size=(n, p))
    X[y == 1, 0] += 2.0
    m = PartialOAUCM(max_fpr=0.05, budget_window=500).fit(X[:20000], y[:20000])
    assert m.budget_filled_ == m.budget_rows_.shape[0]
    pred = m.predict_at_budget(X[20000:]) == 1
    neg = np.flatnonzero(y[20000:] == 0)
    windows = [pred[neg[a:a + 500]].mean() for a in range(0, neg.shape[0] - 499, 500)]
    assert np.mean(np.array(windows) > 0.05) <= 0.1
    assert pred[y[20000:] == 1].mean() > 0.2               # it still flags positives
    # the distribution-free rule: above the quantile rule's cut, never over budget here
    assert m.budget_moment_threshold_ > m.budget_threshold_
    strict = m.predict_at_budget(X[20000:], rule="moments") == 1
    assert max(strict[neg[a:a + 500]].mean() for a in range(0, neg.shape[0] - 499, 500)) <= 0.05
    with pytest.raises(ValueError, match="rule"):
        m.predict_at_budget(X[:5], rule="yes")
    with pytest.raises(TypeError, match="budget"):           # predict keeps its one argument
        m.predict(X[:5], budget=True)
    # the threshold is read from the kept negatives scored under the current model
    kept = m.decision_function(m.budget_rows_)
    k, _ = budget_rank(kept.shape[0], 0.05, 500, 0.95)
    assert m.budget_threshold_ == pytest.approx(np.sort(kept)[::-1][k - 1], rel=1e-12)
    # mutant: the raw threshold (the 5% quantile, no margin) exceeds far more often
    cut = np.sort(kept)[::-1][int(0.05 * kept.shape[0]) - 1]
    loose = m.decision_function(X[20000:]) > cut
    loose_w = [loose[neg[a:a + 500]].mean() for a in range(0, neg.shape[0] - 499, 500)]
    assert np.mean(np.array(loose_w) > 0.05) > np.mean(np.array(windows) > 0.05)


# -- two-way partial AUC against a brute force ----------------------------------------------

def _brute(y, s, min_tpr, max_fpr):
    y, s = np.asarray(y), np.asarray(s, float)
    neg = sorted(np.flatnonzero(y == 0), key=lambda i: (-s[i], i))
    pos = sorted(np.flatnonzero(y == 1), key=lambda i: (s[i], i))
    kn = math.ceil(round(max_fpr * len(neg), 9))
    kp = math.ceil(round((1 - min_tpr) * len(pos), 9))
    tot = 0.0
    for i in pos[:max(kp, 1)]:
        for j in neg[:max(kn, 1)]:
            tot += 1.0 if s[i] > s[j] else 0.5 if s[i] == s[j] else 0.0
    return tot / (max(kp, 1) * max(kn, 1))


@pytest.mark.parametrize("min_tpr,max_fpr", [(0.0, 1.0), (0.5, 0.1), (0.3, 0.25), (0.9, 0.05),
                                             (0.0, 0.07)])
def test_two_way_equals_brute_force_on_every_prefix(min_tpr, max_fpr):
    rng = np.random.default_rng(11)
    n = 90
    y = (rng.random(n) < 0.35).astype(int)
    s = np.round(rng.normal(size=n) + y, 1)              # ties
    for k in range(2, n + 1):
        if 0 < y[:k].sum() < k:
            got = two_way_partial_auc(y[:k], s[:k], min_tpr=min_tpr, max_fpr=max_fpr)
            assert got == pytest.approx(_brute(y[:k], s[:k], min_tpr, max_fpr), abs=1e-12)
    assert two_way_partial_auc(y, s, min_tpr=0.0, max_fpr=1.0) == pytest.approx(auc(y, s))


def test_two_way_integer_weights_are_repeated_rows_and_floor_is_caught():
    rng = np.random.default_rng(12)
    y = np.array([0, 1] * 20)
    s = rng.normal(size=40) + 0.5 * y
    w = rng.integers(1, 4, size=40)
    rep = np.repeat(np.arange(40), w)
    want = two_way_partial_auc(y[rep], s[rep], min_tpr=0.4, max_fpr=0.3)
    assert two_way_partial_auc(y, s, min_tpr=0.4, max_fpr=0.3, sample_weight=w) \
        == pytest.approx(want, abs=1e-12)
    # mutant: floor(max_fpr n-) rows (one fewer at a non-integer cut) gives another value
    neg = sorted(np.flatnonzero(y == 0), key=lambda i: -s[i])[:math.floor(0.33 * 20)]
    pos = sorted(np.flatnonzero(y == 1), key=lambda i: s[i])[:12]
    rows = np.r_[neg, pos]
    assert auc(y[rows], s[rows]) != pytest.approx(
        two_way_partial_auc(y, s, min_tpr=0.4, max_fpr=0.33), abs=1e-9)


def test_two_way_rejects_bad_levels():
    for kw, err in (({"min_tpr": 1.0, "max_fpr": 0.1}, ValueError),
                    ({"min_tpr": 0.1, "max_fpr": 0.0}, ValueError),
                    ({"min_tpr": "a", "max_fpr": 0.1}, TypeError)):
        with pytest.raises(err):
            two_way_partial_auc([0, 1], [0.1, 0.2], **kw)


def test_rolling_two_way_equals_brute_force_on_every_window():
    from sosl.metrics import RollingTwoWayPartialAUC
    rng = np.random.default_rng(13)
    y = (rng.random(120) < 0.3).astype(int)
    s = np.round(rng.normal(size=120) + y, 1)
    m = RollingTwoWayPartialAUC(25, min_tpr=0.5, max_fpr=0.2)
    checked = 0
    for k in range(120):
        m.update(int(y[k]), float(s[k]))
        lo = max(0, k + 1 - 25)
        yw, sw_ = y[lo:k + 1], s[lo:k + 1]
        if 0 < yw.sum() < yw.shape[0]:
            assert m.get() == pytest.approx(_brute(yw, sw_, 0.5, 0.2), abs=1e-12)
            checked += 1
        else:
            assert np.isnan(m.get())
    assert checked > 90
    # mutant: the whole stream instead of the window differs at the end
    assert m.get() != pytest.approx(_brute(y, s, 0.5, 0.2), abs=1e-6)
    with pytest.raises(ValueError):
        RollingTwoWayPartialAUC(10, min_tpr=1.0, max_fpr=0.1)


def test_moment_budget_is_a_guarantee_on_the_negatives_seen():
    """Cantelli: at most the share q of the negatives learned (forgetting=1: the moments are
    theirs exactly) score above the moments rule's cut, whatever their law; the normal
    reading of the same moments (the mutant) is exceeded on a skewed law."""
    rng = np.random.default_rng(21)
    n = 8000
    y = (rng.random(n) < 0.1).astype(int)
    X = rng.exponential(size=(n, 3)) ** 2            # heavy right tails
    X[y == 1, 0] += 3.0
    m = PartialOAUCM(max_fpr=0.01, budget_window=200).fit(X, y)
    _, q = budget_rank(0, 0.01, 200, 0.95)
    neg = m.decision_function(X[y == 0])
    assert np.mean(neg > m.budget_moment_threshold_) <= q
    mean, sd = m._negative_spread(m.w_, m.means_, m.scatter_, m.scales_, m.weights_)
    assert sd > 0 and np.mean(neg > mean + m._intercept()) > q


def test_budget_follows_a_turning_model():
    """The budget scores its kept negative rows under the current weights: after the weights
    turn, the realised FPR of new negatives stays at the budget. The mutant, the first
    version's rule (each negative's score standardized under the weights that scored it,
    re-located and re-scaled by the current moments), breaks it where the negatives are
    two clusters whose order flips with the turn."""
    rng = np.random.default_rng(31)

    def negatives(n):
        X = rng.normal(size=(n, 2))
        far = rng.random(n) < 0.1
        X[far] = rng.normal(size=(far.sum(), 2)) * 0.2 + np.array([4.0, -4.0])
        return X

    n = 4000
    X = np.vstack([negatives(n), rng.normal(size=(200, 2)) + 3.0])
    y = np.r_[np.zeros(n, int), np.ones(200, int)]
    order = rng.permutation(n + 200)
    m = PartialOAUCM(max_fpr=0.05, budget_window=500).fit(X[order], y[order])
    kept = m.budget_rows_[:m.budget_filled_].copy()
    old_w = np.array([0.0, 1.0])                     # the far cluster at the bottom
    new_w = np.array([1.0, 0.0])                     # ... and now above the normal bulk
    m.coef_ = new_w                                  # the turn (the iterate and average)
    fresh = negatives(20000)
    fpr = np.mean(m.decision_function(fresh) > m.budget_threshold_)
    assert fpr <= 0.05
    # mutant: standardized under the old weights, re-read by the new moments
    z = (kept @ old_w - kept.mean(0) @ old_w) / (kept @ old_w).std()
    k, _ = budget_rank(kept.shape[0], 0.05, 500, 0.95)
    z_k = np.sort(z)[::-1][k - 1]
    s_new = kept @ new_w
    cut = s_new.mean() + s_new.std() * z_k + m._intercept()
    assert np.mean(m.decision_function(fresh) > cut) > 0.05
