"""OAUC-M / OAUC-M_c / OAUC-S: the typed pass (``_linear.pyx``) == its NumPy reference,
forgetting, the gradient of eq. (14), the moments of eq. (16), each with a mutant."""

import numpy as np
import pytest
from helpers import labelled_linear

from sosl import OAUCM, OAUCS
from sosl._core import _linear
from sosl._core import _linear_ref as ref
from sosl._core._codes import Loss, Schedule
from sosl.metrics import auc

LOSS_M, LOSS_S = int(Loss.LOSS_M), int(Loss.LOSS_S)
INV = int(Schedule.STEP_INV_LAM_T)
CONST = int(Schedule.STEP_CONSTANT)


def _state(p):
    return dict(w=np.zeros(p), xbar=np.zeros((2, p)), Sigma=np.zeros((2, p, p)),
                N=np.zeros(2, dtype=np.int64))


def _run(pass_fn, X, s, order, lam, eta, loss, extra=()):
    """One pass; ``eta=None`` selects the 1/(lam t) schedule, a float a constant step."""
    st = _state(X.shape[1])
    schedule, eta = (INV, 0.0) if eta is None else (CONST, eta)
    t = pass_fn(X, s, order, st["w"], st["xbar"], st["Sigma"], st["N"], 0, lam, eta, schedule,
                loss, *extra)
    return t, st


def _cython(X, s, order, lam, eta, loss, beta=1.0, blas_min_p=64, kmax=8, small_kmax=0):
    """The typed pass on scaled scatter state; returns the covariances as the reference has.

    ``small_kmax``: pending rank-one terms per class on the own-loop path (0: each term is
    applied at once)."""
    p = X.shape[1]
    st = _state(p)
    C, scale, W = np.zeros((2, p, p)), np.ones(2), np.zeros(2)
    schedule, eta = (INV, 0.0) if eta is None else (CONST, eta)
    work = np.empty(3 * p + 2 * p * (kmax if p >= blas_min_p else small_kmax))
    t = _linear.linear_pass(X, s, order, st["w"], st["xbar"], C, scale, W, st["N"], 0, lam,
                            eta, schedule, loss, beta, blas_min_p, work)
    U = np.triu(C) + np.transpose(np.triu(C, 1), (0, 2, 1))
    st["Sigma"] = U * (scale / np.where(W > 0, W, 1.0))[:, None, None]
    st["W"] = W
    return t, st


def _reference(X, s, order, lam, eta, loss, pass_fn=ref.linear_pass):
    return _run(pass_fn, X, s, order, lam, eta, loss)


CONFIGS = [(0.1, None, LOSS_M), (0.01, 0.05, LOSS_M), (0.01, 0.02, LOSS_S),
           (1.0, None, LOSS_S)]


PATHS = {"loops": dict(blas_min_p=10**9), "blas": dict(blas_min_p=1, kmax=3),
         "loops-batched": dict(blas_min_p=10**9, small_kmax=6)}


@pytest.mark.parametrize("path", sorted(PATHS))
@pytest.mark.parametrize("lam,eta,loss", CONFIGS)
def test_cython_equals_reference(edge_stream, lam, eta, loss, path):
    """Both kernel paths (own loops; BLAS with batched rank-k updates, a 3-row buffer so
    that full-buffer flushes happen too) equal the reference on every edge stream."""
    name, X, s = edge_stream
    order = np.random.default_rng(1).permutation(X.shape[0]).astype(np.intp)
    t_c, c = _cython(X, s, order, lam, eta, loss, **PATHS[path])
    t_r, r = _reference(X, s, order, lam, eta, loss)
    assert t_c == t_r == X.shape[0]
    for key in r:
        np.testing.assert_allclose(c[key], r[key], rtol=1e-12, atol=1e-14, err_msg=key)
    if X.shape[0] > 1 and name != "constant":
        assert np.abs(c["w"]).max() > 1e-3  # the comparison is not between zeros


@pytest.mark.parametrize("path", sorted(PATHS))
@pytest.mark.parametrize("beta", [0.97, 0.5, 1e-3])
def test_forgetting_equals_reference(beta, path):
    """Decayed moments: kernel (scale factor, renormalised below 1e-150) == reference."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(400, 6))
    s = np.where(rng.random(400) < 0.2, 1.0, -1.0)
    order = np.arange(400, dtype=np.intp)
    t_c, c = _cython(X, s, order, 0.05, None, LOSS_M, beta=beta, **PATHS[path])
    st = _state(6)
    W = np.zeros(2)
    ref.linear_pass(X, s, order, st["w"], st["xbar"], st["Sigma"], st["N"], 0, 0.05, 0.0, INV,
                    LOSS_M, beta=beta, W=W)
    for key in ("w", "xbar", "Sigma", "N"):
        np.testing.assert_allclose(c[key], st[key], rtol=1e-11, atol=1e-13, err_msg=key)
    np.testing.assert_allclose(c["W"], W, rtol=1e-12)
    assert W.max() < 1.0 / (1.0 - beta) + 1e-9                 # the effective memory
    _, plain = _cython(X, s, order, 0.05, None, LOSS_M, **PATHS[path])
    assert not np.allclose(plain["Sigma"], c["Sigma"], rtol=1e-3)   # forgetting did something


@pytest.mark.parametrize("beta", [1.0, 0.9, 1e-3])
@pytest.mark.parametrize("p", [1, 5, 6, 16, 20, 31])   # generic and constant-p copies
def test_batched_small_updates_are_bit_identical(p, beta):
    """Own loops: rank-one terms held back until the class's matrix is read (or the buffer
    of 1..7 terms is full) give the same bits as terms applied at once, on a stream with
    long same-class runs; forgetting with beta = 1e-3 also exercises the renormalisation."""
    rng = np.random.default_rng(11)
    n = 600
    X = rng.normal(size=(n, p)) + 0.5
    runs = rng.geometric(0.15, size=n)                     # runs of ~7 rows of one class
    s = np.repeat(np.tile([1.0, -1.0], n), np.resize(runs, 2 * n))[:n]
    order = np.arange(n, dtype=np.intp)
    _, at_once = _cython(X, s, order, 0.05, None, LOSS_M, beta=beta, blas_min_p=10**9)
    assert np.abs(at_once["w"]).max() > 1e-3 and np.abs(at_once["Sigma"]).max() > 1e-3
    for small_kmax in (1, 2, 3, 4, 5, 7):
        _, batched = _cython(X, s, order, 0.05, None, LOSS_M, beta=beta, blas_min_p=10**9,
                             small_kmax=small_kmax)
        for key in ("w", "xbar", "Sigma", "W"):
            assert batched[key].tobytes() == at_once[key].tobytes(), (small_kmax, key)


def test_pass_reports_max_abs_and_first_bad_row():
    rng = np.random.default_rng(12)
    X = rng.normal(size=(50, 4)) * 3.0
    s = np.where(rng.random(50) < 0.5, 1.0, -1.0)
    order = rng.permutation(50).astype(np.intp)

    def run(X, order, stats):
        p = X.shape[1]
        return _linear.linear_pass(X, s, order, np.zeros(p), np.zeros((2, p)),
                                   np.zeros((2, p, p)), np.ones(2), np.zeros(2),
                                   np.zeros(2, dtype=np.int64), 0, 0.1, 0.0, INV, LOSS_M, 1.0,
                                   10**9, np.empty(3 * p + 8 * p), stats)
    stats = np.array([0.5, -1.0])
    assert run(X, order, stats) == 50
    assert stats[0] == np.abs(X).max() and stats[1] == -1.0
    stats = np.array([1e3, -1.0])                       # the running maximum is kept
    run(X, order, stats)
    assert stats[0] == 1e3
    for bad in (np.nan, np.inf, -np.inf):
        Xb = X.copy()
        Xb[order[17], 2] = bad
        stats = np.array([0.0, -1.0])
        assert run(Xb, order, stats) == 18                 # stopped after that row's round
        assert stats[1] == 17.0
    with pytest.raises(ValueError, match="stats"):
        run(X, order, np.zeros(3))


@pytest.mark.parametrize("p", [3, 40])
@pytest.mark.parametrize("first", ["fit", "partial_fit"])
def test_fresh_pass_refuses_a_late_non_finite_row(p, first):
    """A fresh fit leaves the finiteness scan to the kernel: a NaN in the last row still
    raises the validation's message and leaves an earlier model untouched."""
    rng = np.random.default_rng(13)
    X = rng.normal(size=(300, p))
    y = (X[:, 0] > 0).astype(int)
    m = OAUCM(lam=0.05).fit(X, y)
    before = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in vars(m).items()}
    Xb = X.copy()
    Xb[-1, -1] = np.nan
    with pytest.raises(ValueError, match="NaN or infinity"):
        if first == "fit":
            m.fit(Xb, y)
        else:
            OAUCM(lam=0.05).partial_fit(Xb, y)
            raise AssertionError("not reached")
    assert vars(m).keys() == before.keys()
    for k, v in before.items():
        assert (np.array_equal(v, vars(m)[k]) if isinstance(v, np.ndarray)
                else v == vars(m)[k]), k
    assert m.max_abs_ == np.abs(X).max()


def test_no_forgetting_is_bit_identical_to_beta_one():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(300, 5))
    y = (X[:, 0] > 0.5).astype(int)
    a = OAUCM(lam=0.05).fit(X, y)
    b = OAUCM(lam=0.05, forgetting=1.0).fit(X, y)
    c = OAUCM(lam=0.05, forgetting=1.0 - 1e-12).fit(X, y)
    assert a.coef_.tobytes() == b.coef_.tobytes()
    assert a.scatter_.tobytes() == b.scatter_.tobytes()
    np.testing.assert_allclose(a.coef_, c.coef_, rtol=1e-8)   # continuity at beta -> 1
    assert a.coef_.tobytes() != c.coef_.tobytes()


def _mutant_pass(X, s, order, w, xbar, Sigma, N, t0, lam, eta, schedule, loss):
    """The reference with one sign flipped in the Sigma w term of eq. (14)."""
    t = t0
    for i in order:
        t += 1
        x, y = X[i], s[i]
        own, opp = (1, 0) if y > 0 else (0, 1)
        eta_t = eta if schedule == CONST else 1.0 / (lam * t)
        g = lam * w
        if N[opp] > 0:
            a = y * (x - xbar[opp])
            g = g + ref.grad_psi_m(w, a, -Sigma[opp])       # mutated: -Sigma
        N[own] = ref.welford_update(x, xbar[own], Sigma[own], N[own])
        w -= eta_t * g
    return t


def test_mutant_reference_is_caught():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(300, 7))
    s = np.where(X[:, 0] + 0.5 * rng.normal(size=300) > 0.3, 1.0, -1.0)
    order = np.arange(X.shape[0], dtype=np.intp)
    _, c = _cython(X, s, order, 0.1, None, LOSS_M)
    _, m = _reference(X, s, order, 0.1, None, LOSS_M, pass_fn=_mutant_pass)
    assert not np.allclose(c["w"], m["w"], rtol=1e-6, atol=1e-9)


def test_gradient_matches_eq14_and_finite_differences():
    rng = np.random.default_rng(3)
    for _ in range(20):
        p = 5
        w, a = rng.normal(size=p), rng.normal(size=p)
        B = rng.normal(size=(p, p))
        Sigma = B @ B.T / p
        g = ref.grad_psi_m(w, a, Sigma)
        s2 = w @ Sigma @ w
        v = (1 - w @ a) / np.sqrt(s2)
        Phi = 0.5 * (1 + v / np.sqrt(1 + v * v))
        phi = 0.5 / np.sqrt(1 + v * v)
        eq14 = -Phi * a + phi * Sigma @ w / np.sqrt(s2)
        np.testing.assert_allclose(g, eq14, rtol=1e-10, atol=1e-12)
        f = lambda u: ref.psi_m(u @ a, u @ Sigma @ u)  # noqa: E731
        h = 1e-6
        fd = np.array([(f(w + h * e) - f(w - h * e)) / (2 * h) for e in np.eye(p)])
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)
        gs = ref.grad_psi_s(w, a, Sigma)
        fs = lambda u: ref.psi_s(u @ a, u @ Sigma @ u)  # noqa: E731
        fds = np.array([(fs(w + h * e) - fs(w - h * e)) / (2 * h) for e in np.eye(p)])
        np.testing.assert_allclose(gs, fds, rtol=1e-6, atol=1e-6)


def test_gradient_at_zero_spread_is_one_sided():
    a = np.array([1.0, 2.0])
    Sigma = np.zeros((2, 2))
    w = np.array([1.0, 0.0])  # w.a = 1 -> b = 0, Sigma w = 0 -> A = 0
    np.testing.assert_array_equal(ref.grad_psi_m(w, a, Sigma), -0.5 * a)
    assert np.all(ref.grad_psi_m(np.array([3.0, 0.0]), a, Sigma) == 0.0)   # hinge inactive
    np.testing.assert_array_equal(ref.grad_psi_m(np.zeros(2), a, Sigma), -a)  # hinge active


# -- moment statistics -------------------------------------------------------------------
def _eq16(X):
    """Means and covariances by the paper's (uncentered) recursions, eqs. (15)-(16)."""
    p = X.shape[1]
    xbar, Sigma = np.zeros(p), np.zeros((p, p))
    for N, x in enumerate(X, start=1):
        old = xbar.copy()
        xbar = old + (x - old) / N
        Sigma = (Sigma + np.outer(old, old) - np.outer(xbar, xbar)
                 + (np.outer(x, x) - Sigma - np.outer(old, old)) / N)
    return xbar, Sigma


def test_moments_equal_eq16_on_small_streams():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(120, 4))
    s = rng.choice([-1.0, 1.0], size=120)
    _, st = _cython(X, s, np.arange(120, dtype=np.intp), 0.1, None, LOSS_M)
    for k, lab in enumerate([-1.0, 1.0]):
        xb, Sg = _eq16(X[s == lab])
        np.testing.assert_allclose(st["xbar"][k], xb, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(st["Sigma"][k], Sg, rtol=1e-12, atol=1e-13)
        assert st["N"][k] == np.sum(s == lab)


def test_moments_stable_with_large_offset():
    """10^6 instances offset by 10^3: Welford stays within 1e-9 of a two-pass covariance."""
    rng = np.random.default_rng(5)
    n, p = 1_000_000, 3
    X = 1e3 + rng.normal(size=(n, p)) * np.array([1.0, 0.1, 2.0])
    s = np.where(rng.random(n) < 0.3, 1.0, -1.0)
    _, st = _cython(X, s, np.arange(n, dtype=np.intp), 1.0, None, LOSS_M)
    for k, lab in enumerate([-1.0, 1.0]):
        Xk = X[s == lab]
        D = Xk - Xk.mean(axis=0)
        two_pass = D.T @ D / Xk.shape[0]
        err = np.linalg.norm(st["Sigma"][k] - two_pass) / np.linalg.norm(two_pass)
        assert err < 1e-9, err
    # the paper's uncentered recursion loses most digits here: a control that the
    # test data is hard enough to tell the two forms apart
    Xs = X[:20000][s[:20000] > 0]
    _, Sg = _eq16(Xs)
    D = Xs - Xs.mean(axis=0)
    assert np.linalg.norm(Sg - D.T @ D / Xs.shape[0]) / np.linalg.norm(D.T @ D / Xs.shape[0]) > 1e-9


@pytest.mark.parametrize("Est,kw", [(OAUCM, {}), (OAUCM, {"eta": 0.05}), (OAUCS, {})])
def test_estimator_matches_kernel(Est, kw):
    X, y = labelled_linear()
    model = Est(lam=0.05, **kw).fit(X, y)
    s = np.where(y == "pos", 1.0, -1.0)
    loss = LOSS_S if Est is OAUCS else LOSS_M
    eta = model.eta
    _, r = _reference(X, s, np.arange(len(y), dtype=np.intp), 0.05, eta, loss)
    np.testing.assert_allclose(model.coef_[0], r["w"], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(model.means_, r["xbar"], rtol=1e-12)
    assert list(model.classes_) == ["neg", "pos"]
    assert model.t_ == model.n_seen_ == len(y)
    assert auc(y, model.decision_function(X)) > 0.9


def test_rounds_before_other_class_only_shrink():
    X, y = labelled_linear()
    y = np.array(["pos"] * 10 + list(y[10:]))
    m = OAUCM(lam=0.05, eta=0.1).partial_fit(X[:10], y[:10], classes=["neg", "pos"])
    np.testing.assert_array_equal(m.coef_, np.zeros((1, X.shape[1])))  # w_1 = 0, only shrinking
    assert m.counts_.tolist() == [0, 10]


def test_finite_max_abs_is_one_pass_of_max_and_isfinite():
    rng = np.random.default_rng(17)
    for shape in [(1, 1), (3, 5), (64, 7), (0, 3)]:
        X = rng.normal(size=shape) * 10.0
        expect = np.abs(X).max() if X.size else 0.0
        assert _linear.finite_max_abs(X) == expect
        if X.size:
            for bad in (np.nan, np.inf, -np.inf):
                Xb = X.copy()
                Xb.flat[X.size - 1] = bad
                assert np.isnan(_linear.finite_max_abs(Xb))
    assert _linear.finite_max_abs(np.array([[-0.0, -3.0]])) == 3.0
