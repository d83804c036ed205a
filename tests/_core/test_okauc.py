"""OKAUC-M / OKAUC-S kernels (``_okauc.pyx``, ``_kbudget.pyx``) against their NumPy
references: dense and CSR passes, the FIFO transfer rule of eq. (28), the KOMP policy, the
update as the paper's functional gradient step, each with a mutant that must be caught."""


import numpy as np
import pytest
import scipy.sparse as sp
from helpers import sparse_stream
from sklearn.metrics.pairwise import pairwise_kernels

from sosl._core import _kbudget, _kbudget_ref, _okauc
from sosl._core import _okauc_ref as ref
from sosl._core._kparams import kernel_spec, step_spec
from sosl.kernels import KERNEL_CODES, gamma_from_sigma, kernel_matrix, sigma_from_gamma

KPAR = dict(gamma=0.7, degree=2.0, coef0=1.0)


def _step(lam, eta, loss):
    """The step bundle; ``eta=None`` is the 1/(lam t) schedule."""
    schedule = ref.STEP_INV_LAM_T if eta is None else ref.STEP_CONSTANT
    return step_spec(0.0 if eta is None else eta, lam, schedule, loss)


def _kern(kind):
    return kernel_spec(kind, KPAR["gamma"], KPAR["degree"], KPAR["coef0"])


def _state(p, caps):
    M = caps[0] + caps[1]
    return dict(SV=np.zeros((M, p)), alpha=np.zeros(M), G=np.zeros((M, M)), fb=np.zeros(M),
                cap=np.array(caps, dtype=np.int64), count=np.zeros(2, dtype=np.int64),
                head=np.zeros(2, dtype=np.int64))


def _run(pass_fn, X, s, order, caps, lam, eta, loss, kind=1, transfer=0, trace=False):
    """One pass from empty buffers; ``eta=None`` is the 1/(lam t) schedule."""
    st = _state(X.shape[1], caps)
    tr = np.zeros((order.shape[0] if trace else 0, 2))
    t = pass_fn(X, s, order, st["SV"], st["alpha"], st["G"], st["fb"], st["cap"], st["count"],
                st["head"], 0, _step(lam, eta, loss), _kern(kind), transfer,
                np.zeros(3 * (caps[0] + caps[1])), tr)
    st["t"], st["trace"] = t, tr
    return st


def _occ(st):
    c0 = int(st["cap"][0])
    return np.r_[0:st["count"][0], c0:c0 + st["count"][1]]


def _assert_close_on_slots(c, r, rtol=1e-12):
    assert c["t"] == r["t"]
    for name in ("count", "head"):
        np.testing.assert_array_equal(c[name], r[name])
    occ = _occ(r)
    for name in ("alpha", "fb", "SV"):
        scale = max(np.abs(r[name][occ]).max(), 1.0)
        np.testing.assert_allclose(c[name][occ], r[name][occ], rtol=rtol, atol=rtol * scale,
                                   err_msg=name)
    G = r["G"][np.ix_(occ, occ)]
    np.testing.assert_allclose(c["G"][np.ix_(occ, occ)], G, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(c["trace"], r["trace"], rtol=1e-10,
                               atol=1e-10 * np.abs(r["trace"]).max(initial=1.0))


def _streams():
    """(name, X, s, caps) edge cases: first instance, one class for a while, duplicates, p=1,
    overflowing small buffers, constant features (sigma = 0, A = 0 reachable)."""
    rng = np.random.default_rng(0)
    out = []
    X = rng.uniform(-1, 1, size=(150, 5))
    s = np.where(X[:, 0] * X[:, 1] + 0.2 * rng.normal(size=150) > 0, 1.0, -1.0)
    out.append(("random-overflow", X, s, (12, 9)))
    out.append(("random-roomy", X, s, (150, 150)))
    s1 = np.r_[np.ones(25), -np.ones(20), rng.choice([-1.0, 1.0], size=45)]
    out.append(("one-class-first", rng.normal(size=(90, 3)), s1, (10, 10)))
    Xd = np.repeat(rng.normal(size=(6, 3)), 10, axis=0)
    out.append(("duplicates", Xd, np.tile([1.0, -1.0, -1.0], 20), (7, 5)))
    X1 = rng.normal(size=(100, 1))
    out.append(("p=1", X1, np.where(np.abs(X1[:, 0]) < 0.7, 1.0, -1.0), (8, 8)))
    out.append(("single", rng.normal(size=(1, 4)), -np.ones(1), (3, 3)))
    out.append(("constant", np.ones((40, 2)), rng.choice([-1.0, 1.0], size=40), (4, 6)))
    out.append(("budget-1", X[:60], s[:60], (1, 1)))
    return out


STREAMS = _streams()


CONFIGS = [(0.1, None, ref.LOSS_M), (0.01, 0.3, ref.LOSS_M), (0.01, 0.05, ref.LOSS_S),
           (1.0, None, ref.LOSS_S)]


@pytest.mark.parametrize("lam,eta,loss", CONFIGS)
@pytest.mark.parametrize("name,X,s,caps", STREAMS, ids=[c[0] for c in STREAMS])
def test_cython_equals_reference(name, X, s, caps, lam, eta, loss):
    order = np.random.default_rng(1).permutation(X.shape[0]).astype(np.intp)
    c = _run(_okauc.kernel_pass, X, s, order, caps, lam, eta, loss, trace=True)
    r = _run(ref.kernel_pass, X, s, order, caps, lam, eta, loss, trace=True)
    _assert_close_on_slots(c, r)
    if X.shape[0] > 1 and name != "constant":
        assert np.abs(r["alpha"]).max() > 1e-3          # not trivially zero


@pytest.mark.parametrize("kind", sorted(set(KERNEL_CODES.values())))
@pytest.mark.parametrize("transfer", [ref.TRANSFER_OPTIMAL, ref.TRANSFER_MIN_ABS])
def test_cython_equals_reference_kernels_and_transfer(kind, transfer):
    name, X, s, caps = STREAMS[0]
    order = np.arange(X.shape[0], dtype=np.intp)
    for lam, eta, loss in CONFIGS[:3]:
        c = _run(_okauc.kernel_pass, X, s, order, caps, lam, eta, loss, kind, transfer, True)
        r = _run(ref.kernel_pass, X, s, order, caps, lam, eta, loss, kind, transfer, True)
        _assert_close_on_slots(c, r)


def _mutant_loss_coefficients(loss, y, eta_t, b, s2, fO, mu):
    a_new, d = ORIGINAL_LOSS_COEFFICIENTS(loss, y, eta_t, b, s2, fO, mu)
    if loss == ref.LOSS_M:                                  # sigma term sign flipped
        A = b * b + s2
        g = 0.5 * (b + np.sqrt(A)) / np.sqrt(A) if A > 0 else 0.5
        h = 1.0 / (2.0 * np.sqrt(A)) if A > 0 else 0.0
        d = -(eta_t / fO.shape[0]) * (y * g - h * (fO - mu))
    return a_new, d


ORIGINAL_LOSS_COEFFICIENTS = ref.loss_coefficients


def test_mutant_reference_is_caught(monkeypatch):
    name, X, s, caps = STREAMS[0]
    order = np.arange(X.shape[0], dtype=np.intp)
    c = _run(_okauc.kernel_pass, X, s, order, caps, 0.1, None, ref.LOSS_M)
    _assert_close_on_slots(c, _run(ref.kernel_pass, X, s, order, caps, 0.1, None, ref.LOSS_M))
    monkeypatch.setattr(ref, "loss_coefficients", _mutant_loss_coefficients)
    m = _run(ref.kernel_pass, X, s, order, caps, 0.1, None, ref.LOSS_M)
    with pytest.raises(AssertionError):
        _assert_close_on_slots(c, m)


def test_mutant_transfer_is_caught(monkeypatch):
    """The literal rule in place of the default must change the result on an overflowing stream."""
    name, X, s, caps = STREAMS[0]
    order = np.arange(X.shape[0], dtype=np.intp)
    c = _run(_okauc.kernel_pass, X, s, order, caps, 0.1, None, ref.LOSS_M)
    original = ref.choose_transfer
    monkeypatch.setattr(ref, "choose_transfer",
                        lambda transfer, k_rj, k_rr: original(ref.TRANSFER_MIN_ABS, k_rj, k_rr))
    m = _run(ref.kernel_pass, X, s, order, caps, 0.1, None, ref.LOSS_M)
    with pytest.raises(AssertionError):
        _assert_close_on_slots(c, m)


def test_cached_f_and_gram_match_direct_evaluation():
    name, X, s, caps = STREAMS[0]
    order = np.random.default_rng(3).permutation(X.shape[0]).astype(np.intp)
    c = _run(_okauc.kernel_pass, X, s, order, caps, 0.05, None, ref.LOSS_M)
    occ = _occ(c)
    K = kernel_matrix(c["SV"][occ], c["SV"][occ], "gaussian", KPAR["gamma"])
    np.testing.assert_allclose(c["G"][np.ix_(occ, occ)], K, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(c["fb"][occ], K @ c["alpha"][occ], rtol=1e-10, atol=1e-12)
    assert np.abs(c["fb"][occ]).max() > 1e-2


def _objective(loss, lam, beta, K, t, y, S):
    """L_t(f) with f = sum_i beta_i k(x_i, .), from the Gram matrix: lam/2 |f|^2 + psi (eq. 21)."""
    f = K @ beta
    mu = f[S].mean()
    s2 = ((f[S] - mu) ** 2).mean()
    b = 1.0 - y * (f[t] - mu)
    return 0.5 * lam * beta @ K @ beta + ref.psi_value(loss, b, s2)


@pytest.mark.parametrize("loss,eta", [(ref.LOSS_M, None), (ref.LOSS_S, 0.05)])
def test_update_is_functional_gradient_step(loss, eta):
    """Infinite buffer: alpha_t - alpha_{t+1} = eta_t c with K c = grad_beta L_t (eqs. 22-27).

    The gradient in the coefficients beta of L_t(sum beta_i k(x_i, .)) is K times the
    coefficients of the functional gradient; it is compared with central differences."""
    rng = np.random.default_rng(5)
    n, lam = 30, 0.2
    X = rng.normal(size=(n, 2))
    s = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    s[:2] = [1.0, -1.0]
    K = kernel_matrix(X, X, "gaussian", KPAR["gamma"])
    checked = 0
    for t in range(2, n):
        before = _run(ref.kernel_pass, X, s, np.arange(t, dtype=np.intp), (n, n), lam, eta, loss)
        after = _run(ref.kernel_pass, X, s, np.arange(t + 1, dtype=np.intp), (n, n), lam, eta, loss)
        # slot -> stream index: each buffer holds its class in arrival order
        def coefs(st, m):
            beta = np.zeros(n)
            for c, idx in ((0, np.flatnonzero(s[:m] < 0)), (1, np.flatnonzero(s[:m] > 0))):
                beta[idx] = st["alpha"][c * n: c * n + idx.size]
            return beta
        b0, b1 = coefs(before, t), coefs(after, t + 1)
        S = np.flatnonzero(s[:t] == -s[t])
        eta_t = eta if eta is not None else 1.0 / (lam * (t + 1))
        grad = np.zeros(n)
        for i in range(n):
            e = np.zeros(n)
            e[i] = 1e-6
            grad[i] = (_objective(loss, lam, b0 + e, K, t, s[t], S)
                       - _objective(loss, lam, b0 - e, K, t, s[t], S)) / 2e-6
        np.testing.assert_allclose(K @ (b0 - b1) / eta_t, grad, rtol=1e-5, atol=1e-6)
        checked += np.abs(grad).max() > 1e-3
    assert checked > 20


def test_default_transfer_minimizes_the_stated_objective():
    """r* of the default rule minimizes min_Delta ||alpha_j k(., x_j) - Delta k(., x_r)||^2."""
    rng = np.random.default_rng(7)
    wins = 0
    for trial in range(40):
        kind = trial % 3
        Xb = rng.normal(size=(8, 3)) * rng.uniform(0.3, 2.0)
        K = kernel_matrix(Xb, Xb, ["linear", "gaussian", "poly"][kind], 0.5, 2, 1.0)
        j, aj = 0, rng.normal()
        cand = np.arange(1, 8)
        c, ratio = ref.choose_transfer(ref.TRANSFER_OPTIMAL, K[cand, j], K[cand, cand])

        def residual(r, delta):
            return aj ** 2 * K[j, j] - 2 * aj * delta * K[r, j] + delta ** 2 * K[r, r]

        grid = np.linspace(-3, 3, 6001) * abs(aj) * 3
        brute = min(residual(r, dl) for r in cand for dl in grid)
        best = residual(cand[c], aj * ratio)
        assert best <= brute + 1e-12
        exact = [residual(r, aj * K[r, j] / K[r, r]) for r in cand]
        assert best == pytest.approx(min(exact), rel=1e-12, abs=1e-14)
        cl, rl = ref.choose_transfer(ref.TRANSFER_MIN_ABS, K[cand, j], K[cand, cand])
        wins += residual(cand[cl], aj * rl) > best + 1e-9
    assert wins > 10                                      # the literal rule is often worse


def test_kernels_match_scikit_learn_and_sigma_mapping():
    rng = np.random.default_rng(2)
    A, B = rng.normal(size=(7, 4)), rng.normal(size=(5, 4))
    np.testing.assert_allclose(kernel_matrix(A, B, "gaussian", 0.3),
                               pairwise_kernels(A, B, metric="rbf", gamma=0.3), rtol=1e-12)
    np.testing.assert_allclose(kernel_matrix(A, B, "poly", 0.3, 3, 0.5),
                               pairwise_kernels(A, B, metric="poly", gamma=0.3, degree=3,
                                                coef0=0.5),
                               rtol=1e-12)
    np.testing.assert_allclose(kernel_matrix(A, B, "linear"), A @ B.T, rtol=1e-12)
    sigma = 0.8                                          # paper: exp(-|x - x'|^2 / sigma^2)
    d2 = np.sum((A[0] - B[0]) ** 2)
    assert kernel_matrix(A[:1], B[:1], "gaussian", gamma_from_sigma(sigma))[0, 0] == pytest.approx(
        np.exp(-d2 / sigma ** 2), rel=1e-14)
    assert sigma_from_gamma(gamma_from_sigma(sigma)) == pytest.approx(sigma)
    with pytest.raises(ValueError, match="kernel"):
        kernel_matrix(A, B, "sigmoid")
    with pytest.raises(ValueError, match="gamma"):
        kernel_matrix(A, B, "gaussian", gamma=-1.0)


def _pool_run(fn, X, s, caps, lam, eta, loss, eps, bounds=None):
    """The budget_policy="komp" pass over X in row order (in chunks), from an empty pool."""
    p = X.shape[1]
    pool = (np.zeros((0, p)), np.zeros((0, 0)), np.zeros(0), np.zeros(0),
            np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    t, acc = 0, 0.0
    bounds = bounds or [0, X.shape[0]]
    for a, b in zip(bounds[:-1], bounds[1:]):
        out = fn(X, s, np.arange(a, b, dtype=np.intp), *pool, np.array(caps, dtype=np.int64), t,
                 acc, _step(lam, eta, loss), _kern(1), eps, 10)
        pool, t, acc = out[:7], out[7], out[8]
    return pool, t, acc


def _assert_pool_close(c, r, rtol=1e-10):
    (pc, tc, ac), (pr, tr, ar) = c, r
    assert tc == tr
    for name, a, b in zip(("Z", "G", "beta", "f", "buf", "lab", "age"), pc, pr):
        assert a.shape == b.shape, name
        scale = max(np.abs(b).max(initial=0.0), 1.0)
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * scale, err_msg=name)
    assert ac == pytest.approx(ar, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("lam,eta,loss,eps", [(0.01, None, ref.LOSS_M, 0.05),
                                              (0.01, 0.3, ref.LOSS_M, 0.02),
                                              (0.01, 0.05, ref.LOSS_S, 0.02)])
def test_komp_policy_cython_equals_reference(lam, eta, loss, eps):
    """Typed pass of budget_policy="komp" == its NumPy reference (chunks across the typed
    pass's allocation boundary, compressions that shrink the pool, overflowing buffers)."""
    rng = np.random.default_rng(12)
    X = rng.uniform(-1, 1, size=(300, 3))
    s = np.where(X[:, 0] * X[:, 1] + 0.2 * rng.normal(size=300) > 0, 1.0, -1.0)
    bounds = [0, 7, 40, 300]
    c = _pool_run(_kbudget.komp_policy_pass, X, s, (15, 12), lam, eta, loss, eps, bounds)
    r = _pool_run(_kbudget_ref.komp_policy_pass, X, s, (15, 12), lam, eta, loss, eps, bounds)
    _assert_pool_close(c, r)
    beta, buf = r[0][2], r[0][4]
    assert np.count_nonzero(beta) < 300 - 10            # KOMP removed vectors
    assert np.sum(buf == -1) > 0                        # vectors left the comparison buffers
    assert np.abs(beta).max() > 1e-3


def test_komp_policy_mutant_is_caught(monkeypatch):
    rng = np.random.default_rng(13)
    X = rng.uniform(-1, 1, size=(120, 2))
    s = np.where(X[:, 0] + 0.3 * rng.normal(size=120) > 0, 1.0, -1.0)
    c = _pool_run(_kbudget.komp_policy_pass, X, s, (10, 10), 0.1, None, ref.LOSS_M, 0.02)
    monkeypatch.setattr(_kbudget_ref, "loss_coefficients", _mutant_loss_coefficients)
    m = _pool_run(_kbudget_ref.komp_policy_pass, X, s, (10, 10), 0.1, None, ref.LOSS_M, 0.02)
    with pytest.raises(AssertionError):
        _assert_pool_close(c, m)


def _run_csr(pass_fn, X, s, order, caps, lam, eta, loss, kind, transfer=0, trace=False):
    Xs = sp.csr_matrix(X)
    M = caps[0] + caps[1]
    L = max(int(np.diff(Xs.indptr).max()), 1)
    st = dict(ind=np.zeros((M, L), dtype=np.int32), val=np.zeros((M, L)),
              nnz=np.zeros(M, dtype=np.int32), alpha=np.zeros(M), G=np.zeros((M, M)),
              fb=np.zeros(M), cap=np.array(caps, dtype=np.int64),
              count=np.zeros(2, dtype=np.int64), head=np.zeros(2, dtype=np.int64))
    tr = np.zeros((order.shape[0] if trace else 0, 2))
    st["t"] = pass_fn(Xs.data, Xs.indices, Xs.indptr, s, order, st["ind"], st["val"],
                      st["nnz"], st["alpha"], st["G"], st["fb"], st["cap"], st["count"],
                      st["head"], 0, _step(lam, eta, loss), _kern(kind), transfer,
                      np.zeros(3 * M), tr)
    st["trace"] = tr
    SV = np.zeros((M, X.shape[1]))                          # the slots densified
    for q in range(M):
        SV[q, st["ind"][q, :st["nnz"][q]]] = st["val"][q, :st["nnz"][q]]
    st["SV"] = SV
    return st


@pytest.mark.parametrize("kind", sorted(set(KERNEL_CODES.values())))
@pytest.mark.parametrize("lam,eta,loss", CONFIGS[:3])
def test_csr_pass_equals_reference_on_densified_rows(kind, lam, eta, loss):
    """The typed CSR pass with sparse slots against the dense NumPy reference on the same
    rows densified, on a stream that overflows both buffers (FIFO removals, eq. 28)."""
    X, s = sparse_stream()
    order = np.random.default_rng(2).permutation(X.shape[0]).astype(np.intp)
    caps = (9, 7)
    c = _run_csr(_okauc.kernel_pass_csr, X, s, order, caps, lam, eta, loss, kind, trace=True)
    r = _run(ref.kernel_pass, X, s, order, caps, lam, eta, loss, kind, trace=True)
    _assert_close_on_slots(c, r)
    assert np.abs(r["alpha"]).max() > 1e-3
    assert c["head"].tolist() != [0, 0] or c["t"] > 2 * sum(caps)     # removals happened
    d = _run(_okauc.kernel_pass, X, s, order, caps, lam, eta, loss, kind, trace=True)
    _assert_close_on_slots(c, d)                                      # and the typed dense pass
    # the reference with the CSR signature: the same slots, entry for entry
    rc = _run_csr(ref.kernel_pass_csr, X, s, order, caps, lam, eta, loss, kind, trace=True)
    _assert_close_on_slots(c, rc)
    np.testing.assert_array_equal(c["nnz"], rc["nnz"])


@pytest.mark.parametrize("transfer", [ref.TRANSFER_OPTIMAL, ref.TRANSFER_MIN_ABS])
def test_csr_pass_equals_reference_transfer_rules(transfer):
    X, s = sparse_stream(seed=4)
    order = np.arange(X.shape[0], dtype=np.intp)
    c = _run_csr(_okauc.kernel_pass_csr, X, s, order, (5, 6), 0.05, None, ref.LOSS_M, 1,
                 transfer)
    _assert_close_on_slots(c, _run(ref.kernel_pass, X, s, order, (5, 6), 0.05, None,
                                   ref.LOSS_M, 1, transfer))


def test_csr_pass_mutant_merge_is_caught(monkeypatch):
    """A distance that drops the coordinates present only in x_t (a merge that stops at the
    support of the stored vector) must make the comparison fail."""
    X, s = sparse_stream(seed=5)
    order = np.arange(X.shape[0], dtype=np.intp)
    args = ((9, 7), 0.05, None, ref.LOSS_M, KERNEL_CODES["gaussian"])
    c = _run_csr(_okauc.kernel_pass_csr, X, s, order, *args)
    _assert_close_on_slots(c, _run(ref.kernel_pass, X, s, order, *args))

    def mutant_row(SV, x, kind, gamma, degree, coef0):
        D = (SV - x) * (SV != 0)                            # x-only coordinates dropped
        return np.exp(-gamma * np.einsum("ij,ij->i", D, D))

    monkeypatch.setattr(ref, "kernel_row", mutant_row)
    with pytest.raises(AssertionError):
        _assert_close_on_slots(c, _run(ref.kernel_pass, X, s, order, *args))


def test_csr_pass_rejects_narrow_slots_and_bad_shapes():
    X, s = sparse_stream(n=20)
    Xs = sp.csr_matrix(X)
    M = 6
    width = int(np.diff(Xs.indptr).max())
    G, a, fb = np.zeros((M, M)), np.zeros(M), np.zeros(M)
    cap, z = np.array([3, 3], dtype=np.int64), np.zeros(2, dtype=np.int64)
    order = np.arange(20, dtype=np.intp)
    ind, val = np.zeros((M, width - 1), dtype=np.int32), np.zeros((M, width - 1))
    with pytest.raises(ValueError, match="slots hold at most"):
        _okauc.kernel_pass_csr(Xs.data, Xs.indices, Xs.indptr, s, order, ind, val,
                                np.zeros(M, dtype=np.int32), a, G, fb, cap, z.copy(), z.copy(),
                                0, _step(0.1, None, ref.LOSS_M), kernel_spec(1, 1.0, 2.0, 1.0),
                                0, np.zeros(3 * M), np.zeros((0, 2)))
    with pytest.raises(ValueError, match="inconsistent shapes"):
        _okauc.kernel_pass_csr(Xs.data, Xs.indices, Xs.indptr, s, order,
                                np.zeros((M, width), dtype=np.int32), np.zeros((M - 1, width)),
                                np.zeros(M, dtype=np.int32), a, G, fb, cap, z.copy(), z.copy(),
                                0, _step(0.1, None, ref.LOSS_M), kernel_spec(1, 1.0, 2.0, 1.0),
                                0, np.zeros(3 * M), np.zeros((0, 2)))
    assert np.all(a == 0.0) and np.all(G == 0.0)            # nothing was written


def _komp_pool_csr(Xs, s, caps, lam, eta, loss, eps, kind, bounds):
    """The budget_policy="komp" CSR pass from an empty sparse pool, in chunks; the pool is
    returned densified, as :func:`_pool_run` gives it."""
    p = Xs.shape[1]
    pool = (np.zeros((0, 1), dtype=np.int32), np.zeros((0, 1)), np.zeros(0, dtype=np.int32),
            np.zeros((0, 0)), np.zeros(0), np.zeros(0), np.zeros(0, dtype=np.int64),
            np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    t, acc = 0, 0.0
    widths = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        out = _kbudget.komp_policy_pass_csr(
            Xs.data, Xs.indices, Xs.indptr, s, np.arange(a, b, dtype=np.intp), *pool,
            np.array(caps, dtype=np.int64), t, acc, _step(lam, eta, loss), _kern(kind), eps, 10)
        pool, t, acc = out[:9], out[9], out[10]
        widths.append(pool[0].shape[1])
    ind, val, nnz = pool[:3]
    Z = np.zeros((nnz.shape[0], p))
    for q in range(nnz.shape[0]):
        Z[q, ind[q, :nnz[q]]] = val[q, :nnz[q]]
    return ((Z,) + tuple(pool[3:]), t, acc), widths


def _komp_ref_run(X, s, caps, lam, eta, loss, eps, kind, bounds):
    p = X.shape[1]
    pool = (np.zeros((0, p)), np.zeros((0, 0)), np.zeros(0), np.zeros(0),
            np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    t, acc = 0, 0.0
    for a, b in zip(bounds[:-1], bounds[1:]):
        out = _kbudget_ref.komp_policy_pass(
            X, s, np.arange(a, b, dtype=np.intp), *pool, np.array(caps, dtype=np.int64), t, acc,
            _step(lam, eta, loss), _kern(kind), eps, 10)
        pool, t, acc = out[:7], out[7], out[8]
    return pool, t, acc


@pytest.mark.parametrize("kind", sorted(set(KERNEL_CODES.values())))
@pytest.mark.parametrize("lam,eta,loss,eps", [(0.01, None, ref.LOSS_M, 0.05),
                                              (0.01, 0.05, ref.LOSS_S, 0.1)])
def test_komp_csr_pass_equals_reference_on_densified_rows(kind, lam, eta, loss, eps):
    """The typed budget_policy="komp" pass on CSR rows (pool of sparse slots, widened
    between the chunks as the rows grow denser) against the NumPy reference on the rows
    densified: the same pool, compressions and buffers."""
    X, s = sparse_stream(n=300, p=30, seed=14, grow=True)
    bounds = [0, 7, 40, 300]
    c, widths = _komp_pool_csr(sp.csr_matrix(X), s, (15, 12), lam, eta, loss, eps, kind, bounds)
    r = _komp_ref_run(X, s, (15, 12), lam, eta, loss, eps, kind, bounds)
    _assert_pool_close(c, r)
    assert widths[0] < widths[-1]                       # the slots widened between calls
    beta, buf = r[0][2], r[0][4]
    assert np.count_nonzero(beta) < 300 - 10            # KOMP removed vectors
    assert np.sum(buf == -1) > 0


def test_komp_csr_pass_mutant_is_caught():
    """Rows whose indices are in decreasing order (a non-canonical CSR the merges misread)
    must make the CSR pass differ from the reference."""
    X, s = sparse_stream(n=120, p=30, seed=15)
    Xs = sp.csr_matrix(X)
    data, ind = Xs.data.copy(), Xs.indices.copy()
    for i in range(Xs.shape[0]):
        a, b = Xs.indptr[i], Xs.indptr[i + 1]
        data[a:b], ind[a:b] = data[a:b][::-1], ind[a:b][::-1]
    bad = sp.csr_matrix((data, ind, Xs.indptr), shape=Xs.shape)
    args = ((10, 10), 0.1, None, ref.LOSS_M, 0.02, 1, [0, 120])
    r = _komp_ref_run(X, s, *args)
    _assert_pool_close(_komp_pool_csr(Xs, s, *args)[0], r)
    with pytest.raises(AssertionError):
        _assert_pool_close(_komp_pool_csr(bad, s, *args)[0], r)
