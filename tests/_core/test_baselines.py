"""Tests of the linear baselines: Perceptron, PA-I, OAM (seq/gra), OL-UBAUC, SOLAM, AdaOAM.

Kernel == NumPy reference at rtol 1e-12 on streams with edge cases, one mutant of each
reference caught, cross-checks against scikit-learn's Perceptron and PA-I, fit ==
partial_fit over chunks, pickle mid-stream, seeded reservoir sampling, bad input; CSR
kernels == dense references; OAM's sparse buffers (slots == their reference, == the dense
buffers, growth, storage chosen by the first call, failed calls, memory at p = 2^20).
"""

import inspect
import pickle
import warnings

import numpy as np
import pytest
from helpers import assert_close_to_reference
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from sosl import OAM, OLUBAUC, PAI, SOLAM, AdaOAM, Perceptron
from sosl._core import _baselines as K
from sosl._core import _baselines_ref as R
from sosl._core._codes import OamUpdate, Schedule
from sosl.metrics import auc

OAM_SEQ, OAM_GRA = int(OamUpdate.OAM_SEQ), int(OamUpdate.OAM_GRA)
INV_LAM_T, CONSTANT = int(Schedule.STEP_INV_LAM_T), int(Schedule.STEP_CONSTANT)

RTOL = 1e-12


# -- streams -----------------------------------------------------------------------------
def _stream(kind, seed):
    """(X, s) of a named test stream; labels +-1.0."""
    rng = np.random.default_rng(seed)
    if kind == "random":
        X = rng.uniform(-1, 1, (300, 4))
        s = np.where(rng.random(300) < 0.3, 1.0, -1.0)
    elif kind == "one_class_first":       # 60 negatives before any positive
        X = rng.normal(size=(250, 3))
        s = np.where(rng.random(250) < 0.5, 1.0, -1.0)
        s[:60] = -1.0
    elif kind == "duplicates":            # rows repeated, also with both labels
        base = rng.normal(size=(15, 3))
        idx = rng.integers(0, 15, 250)
        X = base[idx].copy()
        s = np.where(rng.random(250) < 0.4, 1.0, -1.0)
    elif kind == "p1":
        X = rng.normal(size=(200, 1))
        s = np.where(X[:, 0] + 0.5 * rng.normal(size=200) > 0, 1.0, -1.0)
    elif kind == "single":                # a pass over one instance
        X = rng.normal(size=(1, 3))
        s = np.array([1.0])
    else:  # pragma: no cover
        raise ValueError(kind)
    return np.ascontiguousarray(X), s


STREAMS = ["random", "one_class_first", "duplicates", "p1", "single"]


# -- one runner per learner: fresh state, run a pass module (kernel or reference) -------
def _run(name, mod, X, s, order, t0=0, fn=None):
    p = X.shape[1]
    if name == "perceptron":
        st = {"w": np.zeros(p)}
        t = (fn or mod.perceptron_pass)(X, s, order, st["w"], t0)
    elif name == "pa1":
        st = {"w": np.zeros(p)}
        t = (fn or mod.pa1_pass)(X, s, order, st["w"], t0, 0.3)
    elif name in ("oam_seq", "oam_gra"):
        st = {"w": np.zeros(p), "B": np.zeros((2, 6, p)), "nB": np.zeros(2, np.int64),
              "N": np.zeros(2, np.int64), "rng": np.array([12345], np.uint64)}
        upd = OAM_SEQ if name == "oam_seq" else OAM_GRA
        args = (X, s, order, st["w"], st["B"], st["nB"], st["N"], st["rng"], t0, 0.2, upd)
        if fn is None and mod is K:
            t = K.oam_pass(*args, np.zeros(2 * p))
        else:
            t = (fn or R.oam_pass)(*args)
    elif name == "ubauc":
        st = {"w": np.zeros(p), "c": np.zeros(1), "N": np.zeros(2, np.int64)}
        t = (fn or mod.ubauc_pass)(X, s, order, st["w"], st["c"], st["N"], t0, 0.05,
                                   INV_LAM_T, 0.0)
    elif name == "ubauc_c":
        st = {"w": np.zeros(p), "c": np.zeros(1), "N": np.zeros(2, np.int64)}
        t = (fn or mod.ubauc_pass)(X, s, order, st["w"], st["c"], st["N"], t0, 0.05,
                                   CONSTANT, 0.1)
    elif name == "solam":
        st = {"v": np.zeros(p + 2), "v_avg": np.zeros(p + 2), "alpha": np.zeros(2),
              "G": np.zeros(1), "N": np.zeros(2, np.int64)}
        t = (fn or mod.solam_pass)(X, s, order, st["v"], st["v_avg"], st["alpha"], st["G"],
                                   st["N"], t0, 0.7, 2.0)
    elif name == "adaoam":
        st = {"w": np.zeros(p), "xbar": np.zeros((2, p)), "Sigma": np.zeros((2, p, p)),
              "N": np.zeros(2, np.int64), "G2": np.zeros(p)}
        args = (X, s, order, st["w"], st["xbar"], st["Sigma"], st["N"], st["G2"], t0, 0.01,
                0.2, 1e-3)
        t = K.adaoam_pass(*args, np.zeros(4 * p)) if (fn is None and mod is K) else \
            (fn or R.adaoam_pass)(*args)
    else:  # pragma: no cover
        raise ValueError(name)
    st["t"] = t
    return st


LEARNERS = ["perceptron", "pa1", "oam_seq", "oam_gra", "ubauc", "ubauc_c", "solam",
            "adaoam"]


@pytest.mark.parametrize("kind", STREAMS)
@pytest.mark.parametrize("name", LEARNERS)
def test_kernel_equals_reference(name, kind):
    X, s = _stream(kind, seed=3)
    for order in (np.arange(X.shape[0], dtype=np.intp),
                  np.random.default_rng(7).permutation(X.shape[0]).astype(np.intp)):
        ker = _run(name, K, X, s, order, t0=4)
        ref = _run(name, R, X, s, order, t0=4)
        assert_close_to_reference(ker, ref, rtol=RTOL)
        assert ker["t"] == 4 + X.shape[0]
        floats = [np.asarray(v) for v in ker.values() if np.asarray(v).dtype.kind == "f"]
        assert any(np.any(v != 0.0) for v in floats), "the compared state is trivially zero"


def test_kernel_empty_order_is_a_no_op():
    X, s = _stream("random", 0)
    for name in LEARNERS:
        st = _run(name, K, X, s, np.zeros(0, dtype=np.intp), t0=9)
        assert st["t"] == 9
        assert not np.any(st["w" if "w" in st else "v"])


def test_oam_reservoir_replaces_and_matches():
    """Long stream, small buffer: replacements happen, draws are identical."""
    X, s = _stream("random", 11)
    order = np.arange(X.shape[0], dtype=np.intp)
    ker = _run("oam_seq", K, X, s, order)
    ref = _run("oam_seq", R, X, s, order)
    assert int(ker["rng"][0]) != 12345                     # the generator was used
    assert np.array_equal(ker["B"], ref["B"])
    # the buffers hold instances of their class only, not just the first ones seen
    for k, lab in ((0, -1.0), (1, 1.0)):
        rows = X[s == lab]
        assert all(any(np.array_equal(b, r) for r in rows) for b in ker["B"][k])
        assert not np.array_equal(ker["B"][k], rows[:6])


def _mutant(func, old, new):
    """The reference ``func`` with one source line changed (must change exactly one)."""
    src = inspect.getsource(func)
    assert src.count(old) == 1, old
    ns = dict(vars(R))
    exec(compile(src.replace(old, new), "<mutant>", "exec"), ns)
    return ns[func.__name__]


MUTANTS = {
    "perceptron": (R.perceptron_pass, "w += y * x", "w -= y * x"),
    "pa1": (R.pa1_pass, "tau = min(C, loss / sq)", "tau = loss / sq"),
    "oam_seq": (R.oam_pass, "C_t = C * max(1.0, N[o] / budget)", "C_t = C"),
    "oam_gra": (R.oam_pass, "active = y * Dw <= 1.0", "active = y * Dw <= 0.0"),
    "ubauc": (R.ubauc_pass, "omega = t / (2.0 * N[k])", "omega = 1.0"),
    "solam": (R.solam_pass, "al + gamma * g_al", "al - gamma * g_al"),
    "adaoam": (R.adaoam_pass, "g = g + 0.5 * (d_mu * a + 2.0 * d_s2 * Sw)",
               "g = g + 0.5 * d_mu * a"),
}


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_reference_is_caught(name):
    func, old, new = MUTANTS[name]
    bad = _mutant(func, old, new)
    good = _mutant(func, old, old)                          # recompiled, unchanged
    X, s = _stream("random", 5)
    order = np.arange(X.shape[0], dtype=np.intp)
    ker = _run(name, K, X, s, order)
    assert_close_to_reference(ker, _run(name, R, X, s, order, fn=good), rtol=RTOL)
    with pytest.raises(AssertionError):
        assert_close_to_reference(ker, _run(name, R, X, s, order, fn=bad), rtol=RTOL)


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


# -- estimator API ------------------------------------------------------------------------
def _estimators():
    return [Perceptron(), PAI(C=0.5), OAM(C=0.3, buffer_size=8, random_state=0),
            OAM(C=0.3, update="gra", buffer_size=8, random_state=0), OLUBAUC(lam=0.05),
            OLUBAUC(lam=0.01, eta=0.05), SOLAM(eta=0.5, radius=5.0),
            AdaOAM(lam=0.01, eta=0.1, delta=1e-3)]


def _data(seed=0, n=240, p=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = np.where(X[:, 0] - 0.5 * X[:, 1] + 0.5 * rng.normal(size=n) > 0.6, "pos", "neg")
    return X, y


def _state(est):
    return {name: getattr(est, name) for name in est._state_names + ("t_", "n_seen_")}


def _assert_states_equal(a, b):
    assert a.keys() == b.keys()
    for key in a:
        np.testing.assert_array_equal(np.asarray(a[key]), np.asarray(b[key]), err_msg=key)


@pytest.mark.parametrize("est", _estimators(), ids=lambda e: repr(e))
def test_learns_a_ranking(est):
    """Each learner ranks a linearly separable-ish stream well (AUC well above 1/2)."""
    X, y = _data(2, n=600)
    model = pickle.loads(pickle.dumps(est)).fit(X, y)
    assert auc(y == "pos", model.decision_function(X)) > 0.85


def test_oam_seeded_reproducibility():
    X, y = _data(3, n=300)
    a = OAM(buffer_size=5, random_state=42).fit(X, y)
    b = OAM(buffer_size=5, random_state=42).fit(X, y)
    c = OAM(buffer_size=5, random_state=43).fit(X, y)
    _assert_states_equal(_state(a), _state(b))
    assert not np.array_equal(a.buffers_, c.buffers_)
    r1 = OAM(buffer_size=5, random_state=np.random.RandomState(0)).fit(X, y)
    r2 = OAM(buffer_size=5, random_state=np.random.RandomState(0)).fit(X, y)
    _assert_states_equal(_state(r1), _state(r2))


def test_oam_buffer_weighting_and_counts():
    X, y = _data(4, n=300)
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
    X, y = _data()
    with pytest.raises((ValueError, TypeError), match=match):
        est.fit(X, y)
    assert not hasattr(est, "coef_")


def test_oam_buffer_size_change_mid_stream_is_refused():
    X, y = _data()
    model = OAM(buffer_size=5, random_state=0).partial_fit(X[:50], y[:50])
    before = model.buffers_.copy()
    model.set_params(buffer_size=6)
    with pytest.raises(ValueError, match="buffer_size"):
        model.partial_fit(X[50:], y[50:])
    np.testing.assert_array_equal(model.buffers_, before)
    assert model.t_ == 50


def test_adaoam_zero_delta_guard_matches_reference():
    """delta = 0 and all-zero gradients (one class first, w = 0): no 0/0, same as NumPy."""
    X, s = _stream("one_class_first", 8)
    order = np.arange(X.shape[0], dtype=np.intp)
    states = []
    for mod in (K, R):
        p = X.shape[1]
        st = [np.zeros(p), np.zeros((2, p)), np.zeros((2, p, p)), np.zeros(2, np.int64),
              np.zeros(p)]
        args = (X, s, order, *st, 0, 0.0, 0.3, 0.0)
        mod.adaoam_pass(*args, np.zeros(4 * p)) if mod is K else mod.adaoam_pass(*args)
        states.append(st)
    for a, b in zip(*states):
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=1e-14)
    assert np.all(np.isfinite(states[0][0])) and np.any(states[0][0] != 0)


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
    bad = _mutant(R.oam_pass, "if j < budget:", "j = j % budget\n            if True:")
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
    X, y = _data()
    est.fit(X[:100], y[:100])
    before = pickle.dumps(_state(est))
    est.set_params(**bad)
    name = next(iter(bad))
    for call in (lambda: est.partial_fit(X[100:], y[100:]), lambda: est.decision_function(X),
                 lambda: est.predict(X)):
        with pytest.raises((ValueError, TypeError), match=name):
            call()
    assert pickle.dumps(_state(est)) == before


@pytest.mark.parametrize("est, change, name", [
    (OAM(buffer_size=5, random_state=0), {"update": "gra"}, "update"),
    (OAM(buffer_size=5, random_state=0), {"buffer_size": 6}, "buffer_size"),
    (OLUBAUC(lam=0.05), {"eta": 0.1}, "schedule"),
], ids=repr)
def test_layout_change_after_fit_is_refused(est, change, name):
    X, y = _data()
    est.partial_fit(X[:50], y[:50])
    before = pickle.dumps(_state(est))
    scores = est.decision_function(X)
    est.set_params(**change)
    for call in (lambda: est.partial_fit(X[50:], y[50:]), lambda: est.decision_function(X)):
        with pytest.raises(ValueError, match=f"{name} changed from .* since the model was fitted"):
            call()
    assert pickle.dumps(_state(est)) == before
    est.fit(X, y)                                           # fit starts over with the new value
    assert est._layout_ == est._layout()
    assert not np.array_equal(est.decision_function(X), scores)


# -- CSR kernels == dense reference ----------------------------------------------------------
def _sparsify(X, seed, density=0.4):
    """X with most entries set to 0 (each row keeps about ``density`` of its entries, and
    at least one)."""
    rng = np.random.default_rng(seed)
    keep = rng.random(X.shape) < density
    keep[np.arange(X.shape[0]), rng.integers(0, X.shape[1], X.shape[0])] = True
    return np.ascontiguousarray(X * keep)


def _csr(X):
    import scipy.sparse as sp
    A = sp.csr_matrix(X)
    A.sort_indices()
    return A.data, A.indices.astype(np.int32), A.indptr.astype(np.int32)


class _CsrModule:
    """Stands in for a pass module in :func:`_run`: runs the ``*_pass_csr`` kernels on X."""

    def __init__(self, X):
        self.csr, self.p = _csr(X), X.shape[1]

    def perceptron_pass(self, X, s, order, w, t0):
        return K.perceptron_pass_csr(*self.csr, s, order, w, t0)

    def pa1_pass(self, X, s, order, w, t0, C):
        return K.pa1_pass_csr(*self.csr, s, order, w, t0, C)

    def ubauc_pass(self, X, s, order, *args):
        return K.ubauc_pass_csr(*self.csr, s, order, *args)

    def solam_pass(self, X, s, order, *args):
        return K.solam_pass_csr(*self.csr, s, order, *args, np.full(2 * self.p, np.nan))

    def oam_pass(self, X, s, order, w, B, nB, N, rng, t0, C, update):
        """The sparse-buffer kernel on B's rows (fresh or not), written back densified."""
        Bi, Bv, Bn = _sparse_slots(B, nB, cap=int(np.diff(self.csr[2]).max()))
        t = K.oam_pass_csr(*self.csr, s, order, w, Bi, Bv, Bn, nB, N, rng, t0, C, update,
                           np.zeros(self.p), np.zeros(B.shape[1], np.uint8))
        B[...] = _dense_slots(Bi, Bv, Bn, self.p)
        return t


def _sparse_slots(B, nB, cap=None):
    """Sparse slots (Bi, Bv, Bn) holding the used rows of dense buffers B."""
    nnz = (B != 0).sum(axis=2)
    cap = cap or max(1, int(nnz.max()))
    Bi = np.zeros(B.shape[:2] + (cap,), np.int32)
    Bv = np.zeros(B.shape[:2] + (cap,))
    Bn = np.zeros(B.shape[:2], np.int64)
    for k in range(2):
        for q in range(nB[k]):
            cols = np.flatnonzero(B[k, q])
            Bi[k, q, :cols.shape[0]], Bv[k, q, :cols.shape[0]] = cols, B[k, q, cols]
            Bn[k, q] = cols.shape[0]
    return Bi, Bv, Bn


def _dense_slots(Bi, Bv, Bn, p):
    """Dense (2, budget, p) buffers from sparse slots."""
    B = np.zeros(Bi.shape[:2] + (p,))
    for k in range(2):
        for q in range(Bi.shape[1]):
            B[k, q, Bi[k, q, :Bn[k, q]]] = Bv[k, q, :Bn[k, q]]
    return B


SPARSE_LEARNERS = ["perceptron", "pa1", "oam_seq", "oam_gra", "ubauc", "ubauc_c", "solam"]


def _run_csr(name, X, s, order, t0=0, fn=None):
    mod = _CsrModule(X)
    if name.startswith("oam"):                       # _run calls K.oam_pass with work space
        return _run(name, R, X, s, order, t0=t0, fn=fn or mod.oam_pass)
    return _run(name, mod, X, s, order, t0=t0, fn=fn)


@pytest.mark.parametrize("kind", STREAMS)
@pytest.mark.parametrize("name", SPARSE_LEARNERS)
def test_csr_kernel_equals_dense_reference(name, kind):
    X, s = _stream(kind, seed=3)
    X = _sparsify(X, seed=4)
    if X.shape[0] > 1:
        X[1] = 0.0                                          # an empty row
    for order in (np.arange(X.shape[0], dtype=np.intp),
                  np.random.default_rng(7).permutation(X.shape[0]).astype(np.intp)):
        ker = _run_csr(name, X, s, order, t0=4)
        assert_close_to_reference(ker, _run(name, R, X, s, order, t0=4), rtol=RTOL)
        assert_close_to_reference(ker, _run(name, K, X, s, order, t0=4), rtol=RTOL)
        floats = [np.asarray(v) for v in ker.values() if np.asarray(v).dtype.kind == "f"]
        assert any(np.any(v != 0.0) for v in floats), "the compared state is trivially zero"


@pytest.mark.parametrize("name", sorted(set(MUTANTS) & set(SPARSE_LEARNERS)))
def test_csr_kernel_catches_mutant_reference(name):
    func, old, new = MUTANTS[name]
    X, s = _stream("random", 5)
    X = _sparsify(X, seed=6)
    order = np.arange(X.shape[0], dtype=np.intp)
    ker = _run_csr(name, X, s, order)
    assert_close_to_reference(ker, _run(name, R, X, s, order, fn=_mutant(func, old, old)),
                              rtol=RTOL)
    with pytest.raises(AssertionError):
        assert_close_to_reference(ker, _run(name, R, X, s, order, fn=_mutant(func, old, new)),
                                  rtol=RTOL)


def test_csr_rescaling_paths_equal_dense():
    """Shrinkage and projections strong enough that the CSR kernels fold their scale back
    into the weights many times within the pass (OL-UBAUC: factor 0.1 per round, so the
    scale passes 1e-9 every 9 rounds; SOLAM: radius 0.05, a projection in most rounds)."""
    rng = np.random.default_rng(9)
    X = _sparsify(rng.normal(size=(400, 6)), seed=10, density=0.5)
    s = np.where(rng.random(400) < 0.4, 1.0, -1.0)
    order = np.arange(400, dtype=np.intp)
    csr, p = _csr(X), X.shape[1]
    for mod in ("csr", R):
        st = [np.zeros(p), np.zeros(1), np.zeros(2, np.int64)]
        args = (*st, 0, 9.0, CONSTANT, 0.1)                 # 1 - eta lam = 0.1
        if mod == "csr":
            K.ubauc_pass_csr(*csr, s, order, *args)
            ker = st
        else:
            R.ubauc_pass(X, s, order, *args)
            ref = st
    for a, b in zip(ker, ref):
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=1e-14)
    assert np.any(ker[0] != 0)
    out = []
    for mod in ("csr", R):
        st = [np.zeros(p + 2), np.zeros(p + 2), np.zeros(2), np.zeros(1), np.zeros(2, np.int64)]
        if mod == "csr":
            K.solam_pass_csr(*csr, s, order, *st, 0, 2.0, 0.05, np.full(2 * p, np.nan))
        else:
            R.solam_pass(X, s, order, *st, 0, 2.0, 0.05)
        out.append(st)
    for a, b in zip(*out):
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=1e-14)
    assert np.isclose(np.linalg.norm(out[0][0][:p]), 0.05)   # the ball's boundary was reached


# -- sparse input through the estimators --------------------------------------------------
def _sparse_estimators():
    return [e for e in _estimators() if not isinstance(e, AdaOAM)]


def _comparable(est):
    """The state of a fitted estimator with OAM's buffers dense whatever their storage, so
    that models with dense and with sparse buffers can be compared."""
    state = _state(est)
    if isinstance(est, OAM):
        for name in OAM._DENSE_STORE + OAM._SPARSE_STORE:
            state.pop(name, None)
        B = est.buffers_
        if isinstance(B, tuple):
            dense = np.zeros((2, est.buffer_size, est.n_features_in_))
            for k in range(2):
                dense[k, :B[k].shape[0]] = B[k].toarray()
            B = dense
        state["buffers"] = B
    return state


def _assert_states_close(a, b):
    assert a.keys() == b.keys()
    for key in a:
        x, y = np.asarray(a[key]), np.asarray(b[key])
        if x.dtype.kind == "f":
            np.testing.assert_allclose(x, y, rtol=RTOL, atol=1e-14, err_msg=key)
        else:
            np.testing.assert_array_equal(x, y, err_msg=key)


@pytest.mark.parametrize("est", _sparse_estimators(), ids=lambda e: repr(e))
def test_sparse_input_equals_dense(est):
    import scipy.sparse as sp
    X, y = _data(5)
    X = _sparsify(X, seed=7)
    dense = pickle.loads(pickle.dumps(est)).fit(X, y)
    for fmt in ("csr", "csc", "coo"):
        sparse = pickle.loads(pickle.dumps(est)).fit(sp.csr_matrix(X).asformat(fmt), y)
        _assert_states_close(_comparable(dense), _comparable(sparse))
    assert np.any(dense.coef_ != 0)
    np.testing.assert_allclose(sparse.decision_function(sp.csr_matrix(X)),
                               dense.decision_function(X), rtol=RTOL, atol=1e-13)
    # chunks, dense and sparse mixed, equal the whole dense pass
    mixed = pickle.loads(pickle.dumps(est))
    bounds = [0, 1, 8, 9, 60, 130, X.shape[0]]
    for k, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:])):
        part = X[lo:hi] if k % 2 else sp.csr_matrix(X[lo:hi])
        mixed.partial_fit(part, y[lo:hi], classes=["neg", "pos"])
    _assert_states_close(_comparable(dense), _comparable(mixed))
    # and mixed the other way round (a dense first call: dense buffers, where OAM has them)
    mixed = pickle.loads(pickle.dumps(est))
    for k, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:])):
        part = sp.csr_matrix(X[lo:hi]) if k % 2 else X[lo:hi]
        mixed.partial_fit(part, y[lo:hi], classes=["neg", "pos"])
    _assert_states_close(_comparable(dense), _comparable(mixed))


def test_sparse_unsorted_int64_indices_are_canonicalised():
    import scipy.sparse as sp
    X, y = _data(6)
    X = _sparsify(X, seed=8)
    A = sp.csr_matrix(X)
    perm = [np.random.default_rng(0).permutation(np.arange(lo, hi))
            for lo, hi in zip(A.indptr[:-1], A.indptr[1:])]
    perm = np.concatenate(perm)
    B = sp.csr_matrix((A.data[perm], A.indices[perm].astype(np.int64),
                       A.indptr.astype(np.int64)), shape=A.shape)
    assert not B.has_sorted_indices
    a = OLUBAUC(lam=0.05).fit(X, y)
    b = OLUBAUC(lam=0.05).fit(B, y)
    _assert_states_close(_state(a), _state(b))


def test_sparse_bad_batch_leaves_state_unchanged():
    import scipy.sparse as sp
    X, y = _data()
    for est in _sparse_estimators():
        est.fit(sp.csr_matrix(X), y)
        before = pickle.dumps(_state(est))
        X_bad = sp.csr_matrix(X[:5])
        X_bad.data[3] = np.inf
        with pytest.raises(ValueError):
            est.partial_fit(X_bad, y[:5])
        with pytest.raises(ValueError):
            est.partial_fit(sp.csr_matrix(X[:5, :2]), y[:5])
        assert pickle.dumps(_state(est)) == before


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
    before = pickle.dumps(_state(model))
    for rows, labels, match in ((X3[2:], [1], "intercept_"),
                                (X[:, :1] @ np.ones((1, 3)), [1, 0, 1, 0], "not finite")):
        with pytest.raises(FloatingPointError, match=match):
            model.partial_fit(rows, labels)
        assert pickle.dumps(_state(model)) == before
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
    before = pickle.dumps(_state(model))
    assert np.abs(model.coef_).sum() > 2.0           # so that a finite row can overflow
    big = np.vstack([X[:3], 1e308 * np.sign(model.coef_)])      # score about 2e308 > max
    for rows in (big, sp.csr_matrix(big)):
        with pytest.raises(FloatingPointError, match="scores are not finite"):
            model.decision_function(rows)
        with pytest.raises(FloatingPointError, match="scores are not finite"):
            model.predict(rows)
    with pytest.raises(FloatingPointError, match="not finite"):
        model.partial_fit(X[:10] * scale, y[:10])
    assert pickle.dumps(_state(model)) == before
    with pytest.raises(FloatingPointError, match="not finite"):    # a fresh state fails
        model.fit(sp.csr_matrix(X * scale), y)
    assert pickle.dumps(_state(model)) == before
    fresh = clone(est)
    with pytest.raises(FloatingPointError, match="not finite"):
        fresh.partial_fit(X * scale, y)
    assert not hasattr(fresh, "coef_") and not hasattr(fresh, "t_")


@pytest.mark.parametrize("est", [e for e in _estimators() if e._sparse_input],
                         ids=lambda e: repr(e))
def test_learn_one_on_csr_rows_equals_fit(est):
    """One CSR row at a time (dense rows: tests/test_contract.py)."""
    import scipy.sparse as sp
    X, y = _data(8, n=60)
    whole = pickle.loads(pickle.dumps(est)).fit(X, y)
    for kind in (sp.csr_matrix,):
        one = pickle.loads(pickle.dumps(est)).partial_fit(kind(X[:1]), y[:1],
                                                          classes=["neg", "pos"])
        for i in range(1, X.shape[0]):
            one.learn_one(X[i] if kind is np.asarray else kind(X[i:i + 1]), y[i])
        _assert_states_close(_comparable(whole), _comparable(one))
        assert one.score_one(X[0]) == pytest.approx(whole.decision_function(X[:1])[0],
                                                    rel=1e-12)


# -- OAM's sparse buffers: kernel == reference on the slots, estimator behaviour ------------
def _oam_csr_stream(seed, n=400, p=30, max_len=7):
    """CSR rows of lengths 0..max_len (some empty, some repeated), labels +-1."""
    import scipy.sparse as sp
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        if i > 10 and rng.random() < 0.1:
            rows.append(rows[rng.integers(0, i)].copy())          # a duplicate row
            continue
        x = np.zeros(p)
        length = rng.integers(0, max_len + 1)
        x[rng.choice(p, size=length, replace=False)] = rng.uniform(-1, 1, length)
        rows.append(x)
    X = np.array(rows)
    s = np.where(X[:, 0] - X[:, 1] + 0.5 * rng.normal(size=n) > 0.2, 1.0, -1.0)
    s[:25] = -1.0                                                 # one class first
    A = sp.csr_matrix(X)
    return X, (A.data, A.indices.astype(np.int32), A.indptr.astype(np.int32)), s


def _slots_state(p, budget, cap, seed=99):
    return {"w": np.zeros(p), "Bi": np.zeros((2, budget, cap), np.int32),
            "Bv": np.zeros((2, budget, cap)), "Bn": np.zeros((2, budget), np.int64),
            "nB": np.zeros(2, np.int64), "N": np.zeros(2, np.int64),
            "rng": np.array([seed], np.uint64), "t": 0}


def _run_slots(fn, csr, s, order, st, update, C=0.2):
    """One pass of an ``oam_pass_csr`` (kernel or reference) on the slot state ``st``."""
    args = (*csr, s, order, st["w"], st["Bi"], st["Bv"], st["Bn"], st["nB"], st["N"],
            st["rng"], st["t"], C, update)
    if fn is K.oam_pass_csr:
        st["t"] = fn(*args, np.zeros(st["w"].shape[0]), np.zeros(st["Bi"].shape[1], np.uint8))
    else:
        st["t"] = fn(*args)
    return st


@pytest.mark.parametrize("update", [OAM_SEQ, OAM_GRA])
@pytest.mark.parametrize("budget", [1, 5, 40])
def test_oam_csr_kernel_equals_csr_reference(update, budget):
    """Slots, counts, generator bit for bit and w at rtol 1e-12, over two passes (the
    second continuing the first's state) on a stream with empty and duplicate rows and
    many reservoir replacements; and both equal the dense reference over the same rows."""
    X, csr, s = _oam_csr_stream(1)
    p, cap = X.shape[1], 8
    half = X.shape[0] // 2
    orders = [np.arange(half, dtype=np.intp),
              np.random.default_rng(2).permutation(np.arange(half, X.shape[0])).astype(np.intp)]
    ker, ref = _slots_state(p, budget, cap), _slots_state(p, budget, cap)
    dense = {"w": np.zeros(p), "B": np.zeros((2, budget, p)), "nB": np.zeros(2, np.int64),
             "N": np.zeros(2, np.int64), "rng": np.array([99], np.uint64), "t": 0}
    for order in orders:
        _run_slots(K.oam_pass_csr, csr, s, order, ker, update)
        _run_slots(R.oam_pass_csr, csr, s, order, ref, update)
        dense["t"] = R.oam_pass(X, s, order, dense["w"], dense["B"], dense["nB"], dense["N"],
                                dense["rng"], dense["t"], 0.2, update)
        assert_close_to_reference(ker, ref, rtol=RTOL)
        for name in ("Bi", "Bv", "Bn"):
            np.testing.assert_array_equal(ker[name], ref[name], err_msg=name)
        np.testing.assert_allclose(ker["w"], dense["w"], rtol=RTOL, atol=1e-14)
        np.testing.assert_array_equal(_dense_slots(ker["Bi"], ker["Bv"], ker["Bn"], p),
                                      dense["B"])
        for name in ("nB", "N", "rng"):
            np.testing.assert_array_equal(ker[name], dense[name], err_msg=name)
    assert ker["t"] == X.shape[0] and np.any(ker["w"] != 0)
    assert ker["N"].min() > 3 * budget                           # replacements happened
    first = [X[s == lab][:budget] for lab in (-1.0, 1.0)]
    B = _dense_slots(ker["Bi"], ker["Bv"], ker["Bn"], p)
    assert not all(np.array_equal(B[k], first[k]) for k in range(2))
    # the zeros after each slot's row: nothing is left of an earlier, longer occupant
    used = np.arange(cap) < ker["Bn"][..., None]
    assert not np.any(ker["Bi"][~used]) and not np.any(ker["Bv"][~used])


def _mutant_ref(changes):
    """R.oam_pass_csr with its helper _difference, each with the given line changes."""
    ns = dict(vars(R))
    for func in (R._difference, R.oam_pass_csr):
        src = inspect.getsource(func)
        for old, new in changes:
            if old in src:
                assert src.count(old) == 1, old
                src = src.replace(old, new)
        exec(compile(src, "<mutant>", "exec"), ns)
    return ns["oam_pass_csr"]


OAM_CSR_MUTANTS = {
    "difference": ("d[np.searchsorted(u, bi)] -= bv", "d[np.searchsorted(u, bi)] = -bv"),
    "weighting": ("C_t = C * max(1.0, N[o] / budget)", "C_t = C"),
    "stale slot": ("Bi[k, j], Bv[k, j] = 0, 0.0", "pass"),
    "active": ("active = y * Dw <= 1.0", "active = y * Dw < 0.0"),
}


@pytest.mark.parametrize("mutant", sorted(OAM_CSR_MUTANTS))
def test_oam_csr_kernel_catches_mutant_reference(mutant):
    X, csr, s = _oam_csr_stream(3)
    order = np.arange(X.shape[0], dtype=np.intp)
    update = OAM_GRA if mutant == "active" else OAM_SEQ
    ker = _run_slots(K.oam_pass_csr, csr, s, order, _slots_state(X.shape[1], 6, 8), update)

    def compare(fn):
        ref = _run_slots(fn, csr, s, order, _slots_state(X.shape[1], 6, 8), update)
        assert_close_to_reference(ker, ref, rtol=RTOL)

    compare(_mutant_ref([]))                                      # recompiled, unchanged
    with pytest.raises(AssertionError):
        compare(_mutant_ref([OAM_CSR_MUTANTS[mutant]]))


def test_oam_csr_row_longer_than_capacity_is_refused():
    X, csr, s = _oam_csr_stream(4)
    order = np.arange(X.shape[0], dtype=np.intp)
    for fn in (K.oam_pass_csr, R.oam_pass_csr):
        st = _slots_state(X.shape[1], 5, 3)
        with pytest.raises(ValueError, match="more than the buffer capacity 3"):
            _run_slots(fn, csr, s, order, st, OAM_SEQ)


def _oam_sparse_data(seed, n=300, p=50, growing=False):
    """A CSR batch for the estimator (rows of 1..6 values; longer and longer if growing)."""
    import scipy.sparse as sp
    rng = np.random.default_rng(seed)
    X = np.zeros((n, p))
    for i in range(n):
        length = 1 + (i * 12 // n if growing else rng.integers(0, 6))
        X[i, rng.choice(p, size=length, replace=False)] = rng.uniform(0.1, 1.0, length)
    y = np.where(X[:, :5].sum(axis=1) - X[:, 5:10].sum(axis=1)
                 + 0.2 * rng.normal(size=n) > 0, "pos", "neg")
    return sp.csr_matrix(X), y


@pytest.mark.parametrize("update", ["seq", "gra"])
def test_oam_sparse_buffers_hold_sampled_rows(update):
    """A model fitted on CSR rows keeps sparse slots (no dense buffers); ``buffers_`` is a
    pair of CSR matrices holding rows of their class, not just the first ones (reservoir
    replacement after the buffer filled up), equal to the dense model's buffers."""
    import scipy.sparse as sp
    X, y = _oam_sparse_data(5)
    model = OAM(C=0.3, update=update, buffer_size=6, random_state=1).fit(X, y)
    dense = OAM(C=0.3, update=update, buffer_size=6, random_state=1).fit(X.toarray(), y)
    assert model.buffer_rows_ is None and isinstance(dense.buffer_rows_, np.ndarray)
    assert dense.buffer_values_ is None
    longest = int(np.diff(X.indptr).max())
    assert model.buffer_values_.shape == (2, 6, 1 << (longest - 1).bit_length())
    B = model.buffers_
    assert isinstance(B, tuple) and all(sp.issparse(b) and b.format == "csr" for b in B)
    Xd = X.toarray()
    for k, lab in enumerate(model.classes_):
        assert B[k].shape == (6, X.shape[1])
        rows = Xd[y == lab]
        assert all(any(np.array_equal(b, r) for r in rows) for b in B[k].toarray())
        assert not np.array_equal(B[k].toarray(), rows[:6])
    _assert_states_close(_comparable(model), _comparable(dense))
    assert dense.buffers_ is dense.buffer_rows_
    assert model.intercept_ != 0.0
    np.testing.assert_allclose(model.intercept_, dense.intercept_, rtol=RTOL)


@pytest.mark.parametrize("update", ["seq", "gra"])
def test_oam_sparse_partial_fit_learn_one_and_pickle(update):
    """On CSR rows whose length grows through the stream (the slots grow between calls):
    fit == partial_fit in chunks == learn_one row by row == pickled mid-stream then
    continued, bit for bit, slots included."""
    X, y = _oam_sparse_data(6, growing=True)
    est = OAM(C=0.3, update=update, buffer_size=5, random_state=2)
    whole = clone(est).fit(X, y)
    chunked = clone(est)
    caps = []
    for lo, hi in zip([0, 1, 40, 41, 150, 220], [1, 40, 41, 150, 220, X.shape[0]]):
        chunked.partial_fit(X[lo:hi], y[lo:hi], classes=["neg", "pos"])
        caps.append(chunked.buffer_values_.shape[2])
    assert caps[0] < caps[-1]                                     # the slots grew
    one = clone(est).partial_fit(X[:1], y[:1], classes=["neg", "pos"])
    for i in range(1, X.shape[0]):
        one.learn_one(X[i], y[i])
    a = clone(est).partial_fit(X[:120], y[:120], classes=["neg", "pos"])
    b = pickle.loads(pickle.dumps(a))
    for m in (a, b):
        m.partial_fit(X[120:], y[120:])
    for other in (chunked, one, a, b):
        _assert_states_equal(_state(whole), _state(other))
    assert set(OAM._SPARSE_STORE) <= set(whole._state_names)
    assert np.any(whole.coef_ != 0)


def test_oam_sparse_failed_call_leaves_state_unchanged():
    """A CSR call that overflows mid-pass (after its first rows changed w and the slots,
    and after growing the slots) leaves the model bit for bit as it was; the call saved
    only the entries of w_ it could touch, and the model goes on as if nothing
    happened."""
    import scipy.sparse as sp
    X, y = _oam_sparse_data(7)
    for update in ("seq", "gra"):
        model = OAM(C=0.3, update=update, buffer_size=5, random_state=3).fit(X[:200], y[:200])
        before = pickle.dumps(_state(model))
        backup = model._backup_names(X[200:210])
        assert isinstance(backup, dict) and backup["w_"].shape[0] < 200
        bad = sp.vstack([X[200:205], sp.csr_matrix(np.full((1, X.shape[1]), 1e308)),
                         X[205:210]]).tocsr()
        with pytest.raises(FloatingPointError, match="not finite"):
            model.partial_fit(bad, y[200:211])
        assert pickle.dumps(_state(model)) == before
        with pytest.raises(ValueError):                           # validation: NaN
            bad = X[200:205].copy()
            bad.data[0] = np.nan
            model.partial_fit(bad, y[200:205])
        assert pickle.dumps(_state(model)) == before
        model.partial_fit(X[200:], y[200:])
        _assert_states_equal(_state(model), _state(
            OAM(C=0.3, update=update, buffer_size=5, random_state=3).fit(X, y)))


def test_oam_sparse_memory_does_not_grow_with_p():
    """At p = 2^20 the buffers take O(buffer_size x row length) bytes, not 1.6 GB, and
    buffers_ is sparse; the model equals the one at p = 2^10 on the same columns."""
    import scipy.sparse as sp
    X, y = _oam_sparse_data(8, n=200, p=40)
    wide = sp.csr_matrix((X.data, X.indices * 2 ** 14, X.indptr), shape=(200, 2 ** 20))
    small = OAM(update="gra", buffer_size=100, random_state=0).fit(X, y)
    big = OAM(update="gra", buffer_size=100, random_state=0).fit(wide, y)
    nbytes = sum(getattr(big, n).nbytes for n in OAM._SPARSE_STORE)
    assert nbytes < 2 ** 15, nbytes
    assert all(b.shape[1] == 2 ** 20 for b in big.buffers_)
    np.testing.assert_array_equal(big.coef_[0, np.arange(40) * 2 ** 14], small.coef_[0])
    assert np.count_nonzero(big.coef_) == np.count_nonzero(small.coef_) > 0
    big.learn_one(wide[0], y[0])
    small.learn_one(X[0], y[0])
    np.testing.assert_array_equal(big.coef_[0, np.arange(40) * 2 ** 14], small.coef_[0])


def test_oam_storage_is_chosen_by_the_first_call():
    """Dense first: dense buffers, later CSR rows densified; CSR first: sparse buffers,
    later dense rows converted; fit starts over and chooses again."""
    import scipy.sparse as sp
    X, y = _oam_sparse_data(9)
    Xd = X.toarray()
    a = OAM(buffer_size=4, random_state=0).partial_fit(Xd[:50], y[:50])
    a.partial_fit(X[50:], y[50:])
    assert a.buffer_values_ is None and a.buffer_rows_.shape == (2, 4, X.shape[1])
    b = OAM(buffer_size=4, random_state=0).partial_fit(X[:50], y[:50])
    b.partial_fit(Xd[50:], y[50:])
    b.learn_one(Xd[0], y[0])
    a.learn_one(Xd[0], y[0])
    assert b.buffer_rows_ is None and sp.issparse(b.buffers_[0])
    _assert_states_close(_comparable(a), _comparable(b))
    b.fit(Xd, y)
    assert b.buffer_values_ is None and b.buffer_rows_ is not None
    a.fit(X, y)
    assert a.buffer_rows_ is None and a.buffer_values_ is not None
    _assert_states_close(_comparable(a), _comparable(b))


def test_oam_midpoint_score_equals_reference_and_dense():
    """The sparse buffers' projected midpoint (minus OAM's intercept_): kernel == reference
    == the midpoint of the dense buffers' mean projections, and a mutant is caught."""
    X, csr, s = _oam_csr_stream(10)
    p = X.shape[1]
    st = _run_slots(K.oam_pass_csr, csr, s, np.arange(X.shape[0], dtype=np.intp),
                    _slots_state(p, 7, 8), OAM_SEQ)
    args = (st["w"], st["Bi"], st["Bv"], st["Bn"], st["nB"])
    ker = K.oam_midpoint_score(*args)
    B = _dense_slots(st["Bi"], st["Bv"], st["Bn"], p)
    dense = st["w"] @ (0.5 * (B[0, :7].mean(axis=0) + B[1, :7].mean(axis=0)))
    assert abs(ker) > 0.01
    np.testing.assert_allclose(ker, R.oam_midpoint_score(*args), rtol=RTOL)
    np.testing.assert_allclose(ker, dense, rtol=RTOL)
    bad = _mutant(R.oam_midpoint_score, "sum(scores[0]) / nB[0]", "sum(scores[0]) / 7")
    st["nB"][0] = 5                                               # a partly filled buffer
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(K.oam_midpoint_score(*args), bad(*args), rtol=1e-6)
    np.testing.assert_allclose(K.oam_midpoint_score(*args), R.oam_midpoint_score(*args),
                               rtol=RTOL)


@pytest.mark.parametrize("est", _estimators(), ids=lambda e: repr(e))
def test_score_one_typed_path_and_its_refusals(est, monkeypatch):
    """score_one of a fitted linear baseline is x.coef_ + intercept_ without the general
    path (it is patched to fail here) and equals decision_function; a NaN or inf row, a
    wrong length and an unfitted model still get the general path's errors."""
    from sklearn.exceptions import NotFittedError

    from sosl._base import BaseOnlineAUC
    X, y = _data(9)
    m = pickle.loads(pickle.dumps(est)).fit(X, y)
    with monkeypatch.context() as mp:
        mp.setattr(BaseOnlineAUC, "score_one", lambda self, x: pytest.fail("general path"))
        for i in range(5):
            assert m.score_one(X[i]) == pytest.approx(m.decision_function(X[i:i + 1])[0],
                                                      rel=1e-12, abs=1e-12)
    for bad in (np.r_[X[0, :-1], np.nan], np.r_[X[0, :-1], np.inf], X[0, :2]):
        with pytest.raises(ValueError):
            m.score_one(bad)
    with pytest.raises(NotFittedError):
        pickle.loads(pickle.dumps(est)).score_one(X[0])


# -- typed one-row rounds: OAM (dense buffers), SOLAM, AdaOAM ---------------------------------
def _typed_one_row_estimators():
    return [e for e in _estimators() if isinstance(e, (OAM, SOLAM, AdaOAM))]


def _fitted(est):
    return {k: v for k, v in vars(est).items() if k.endswith("_") and not k.startswith("_")}


def _same_bits(a, b):
    assert a.keys() == b.keys()
    for k in a:
        u, v = np.asarray(a[k]), np.asarray(b[k])
        assert u.dtype == v.dtype and u.shape == v.shape and u.tobytes() == v.tobytes(), k


@pytest.mark.parametrize("est", _typed_one_row_estimators(), ids=lambda e: repr(e))
def test_typed_one_row_round_is_taken_and_equals_partial_fit(est, monkeypatch):
    """learn_one on dense rows runs the typed round (the round on copies and the general
    path are patched to fail) and equals the general one-row partial_fit bit for bit in
    every fitted attribute, the Platt scaling included; the mutant without the Platt step
    is caught, so the comparison sees it."""
    import sosl.baselines
    from sosl._base import BaseOnlineAUC
    X, y = _data(11)
    start = pickle.loads(pickle.dumps(est)).partial_fit(X[:20], y[:20])
    general = pickle.loads(pickle.dumps(start))
    for i in range(20, 120):
        BaseOnlineAUC.partial_fit(general, X[i:i + 1], y[i:i + 1])
    for mutant in (False, True):
        typed = pickle.loads(pickle.dumps(start))
        with monkeypatch.context() as mp:
            mp.setattr(BaseOnlineAUC, "_learn_one_by_copy",
                       lambda self, x, s: pytest.fail("the round on copies ran"))
            mp.setattr(BaseOnlineAUC, "_learn_one_general",
                       lambda self, *args: pytest.fail("the general path ran"))
            if mutant:
                mp.setattr(sosl.baselines, "platt_steps", lambda f, s, c: None)
            for i in range(20, 120):
                typed.learn_one(X[i], y[i])
        if mutant:
            with pytest.raises(AssertionError, match="calibration_"):
                _same_bits(_fitted(typed), _fitted(general))
        else:
            _same_bits(_fitted(typed), _fitted(general))
    assert typed.t_ == 120 and np.any(typed.coef_ != 0)


@pytest.mark.parametrize("est", _typed_one_row_estimators(), ids=lambda e: repr(e))
def test_typed_one_row_failure_leaves_the_state_as_it_was(est):
    """Rows too large for the round: whenever the general path refuses one (it raises and
    leaves the state unchanged), the typed round refused it too, with the state exactly as
    it was (bit for bit), and learn_one then raises the general path's error on the
    unchanged model. At least one of the rows is refused (the check is not vacuous)."""
    X, y = _data(12)
    fitted = pickle.dumps(pickle.loads(pickle.dumps(est)).fit(X, y))
    before = _fitted(pickle.loads(fitted))
    refused = 0
    for scale in (1e150, 1e200, 1e300, 1.7e308):
        for label, sign in (("pos", 1.0), ("neg", -1.0)):
            row = np.full(X.shape[1], scale)
            probe = pickle.loads(fitted)
            try:
                probe.partial_fit(row.reshape(1, -1), [label])
            except FloatingPointError:
                _same_bits(_fitted(probe), before)
                m = pickle.loads(fitted)
                assert not m._learn_one_in_place(row, sign)
                _same_bits(_fitted(m), before)
                with pytest.raises(FloatingPointError):
                    m.learn_one(row, label)
                _same_bits(_fitted(m), before)
                refused += 1
    assert refused > 0


def _copies(*arrays):
    return [a.copy() for a in arrays]


def test_oam_one_restores_what_the_round_wrote():
    """The kernel's transaction: a row whose pairwise norm overflows (sequential update) or
    whose intercept does (gradient update) leaves w, the buffers, the counts and the
    generator bit for bit; the pass without the transaction (the control) writes them."""
    rng = np.random.default_rng(3)
    p, budget = 5, 4
    X = rng.normal(size=(40, p))
    s = np.where(rng.random(40) < 0.5, 1.0, -1.0)
    for update, C in ((OAM_SEQ, 0.5), (OAM_GRA, 1e150)):
        st = [np.zeros(p), np.zeros((2, budget, p)), np.zeros(2, np.int64),
              np.zeros(2, np.int64), np.array([7], np.uint64)]
        K.oam_pass(X, s, np.arange(40, dtype=np.intp), *st, 0, 0.5, update, np.zeros(2 * p))
        assert st[2].min() == budget                       # full buffers: a replacement
        x = np.full(p, 1e200)
        refused = 0
        for y in (1.0, -1.0):
            saved = _copies(*st)
            icpt = K.oam_one(x, y, *st, C, update, np.full(4 * p, np.nan),
                             np.zeros(budget, np.uint8))
            if not np.isnan(icpt):
                st = saved                                 # committed: start again
                continue
            refused += 1
            for a, b in zip(st, saved):
                assert a.tobytes() == b.tobytes()
            control = _copies(*st)
            try:
                K.oam_pass(x.reshape(1, p), np.array([y]), np.zeros(1, np.intp), *control,
                           0, C, update, np.zeros(2 * p))
            except FloatingPointError:
                pass
            assert any(a.tobytes() != b.tobytes() for a, b in zip(control, saved))
        assert refused > 0
        good = K.oam_one(X[0], 1.0, *st, 0.5, update, np.zeros(4 * p),
                         np.zeros(budget, np.uint8))
        assert np.isfinite(good)


def test_adaoam_one_commits_the_covariance_only_when_it_stays_finite():
    """AdaOAM's covariance update is made last, and only when every term it adds is below
    2^1020 (so it cannot overflow): a row just inside the bound commits a finite state
    equal to the pass's; rows past it are refused with the state bit for bit as it was,
    both one the pass still keeps finite (the bound is conservative: the general path then
    plays it) and one where the pass (the control) makes the covariance non-finite."""
    p = 3

    def state():
        return [np.zeros(p), np.zeros((2, p)), np.zeros((2, p, p)),
                np.array([0, 2], np.int64), np.zeros(p)]

    # x = v in a class of 2 rows at 0: d_old = v, d_new = 2 v / 3, term d_old d_new / 3
    edge = 2.0 ** 509.9 * 1.5                   # the term just under 2^1020: committed
    for value, commits, finite in ((edge, True, True),
                                   (2.0 ** 512, False, True),    # refused: left to the
                                   (2.0 ** 514, False, False)):  # general path
        st, ref = state(), state()
        x = np.full(p, value)
        icpt = K.adaoam_one(x, 1.0, *st, 0.01, 0.1, 1e-3, np.zeros(7 * p))
        K.adaoam_pass(x.reshape(1, p), np.ones(1), np.zeros(1, np.intp), *ref, 0,
                      0.01, 0.1, 1e-3, np.zeros(4 * p))
        assert np.isfinite(ref[2]).all() == finite
        if commits:
            assert icpt == 0.0 and all(np.isfinite(a).all() for a in st)
            for a, b in zip(st, ref):
                np.testing.assert_array_equal(a, b)
            assert np.abs(st[2][1]).max() > 2.0 ** 1018       # the edge was reached
        else:
            assert np.isnan(icpt)
            for a, b in zip(st, state()):
                assert a.tobytes() == b.tobytes()


def test_dense_midpoints_equal_numpy():
    """OAM's dense-buffer midpoint and AdaOAM's intercept (the typed functions both the
    pass and the one-row round use) against NumPy, and a mutant (the whole buffer
    averaged instead of its filled rows) caught."""
    rng = np.random.default_rng(8)
    w, B = rng.normal(size=6), rng.normal(size=(2, 5, 6))
    nB = np.array([3, 5], np.int64)
    ref = 0.5 * (B[0, :3] @ w).mean() + 0.5 * (B[1, :5] @ w).mean()
    np.testing.assert_allclose(K.oam_midpoint_dense(w, B, nB), ref, rtol=1e-13)
    mutant = 0.5 * (B[0] @ w).mean() + 0.5 * (B[1] @ w).mean()
    assert not np.isclose(K.oam_midpoint_dense(w, B, nB), mutant, rtol=1e-6)
    means = rng.normal(size=(2, 6))
    np.testing.assert_allclose(K.adaoam_intercept(w, means), -w @ means.mean(axis=0),
                               rtol=1e-13)
