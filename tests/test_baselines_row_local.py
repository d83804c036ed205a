"""One-row CSR calls of the linear baselines. Perceptron and PA-I (``_RowLocalBaseline``) and
OAM with sparse buffers (``OAM._learn_one_csr``) play ``learn_one`` on a canonical one-row CSR
matrix on the live ``w_`` after saving only the entries the pass can write; the result is the
general path's, bit for bit, and a failing round leaves the model exactly as it was. Every
baseline's ``score_one`` on such a row reads only its non-zero entries."""

import inspect
import textwrap
from functools import partial

import numpy as np
import pytest
import scipy.sparse as sp

from sosl import OAM, PAI, Perceptron, baselines

from .helpers import assert_same_state, assert_unchanged, fitted_state, snapshot

P = 4096


def _rows(n, seed, p=P):
    """Sparse rows of ~8 non-zeros in p columns, canonical CSR, with labels."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, p, density=8 / p, format="csr", random_state=rng,
                  data_rvs=rng.standard_normal)
    X.sort_indices()
    y = (np.asarray(X[:, :p // 2].sum(axis=1)).ravel() + 0.3 * rng.standard_normal(n) > 0)
    return X, y.astype(int)


@pytest.mark.parametrize("Est", [Perceptron, PAI, partial(OAM, buffer_size=20),
                                 partial(OAM, buffer_size=20, update="gra")])
def test_one_row_csr_equals_one_row_partial_fit(Est):
    X, y = _rows(300, 0)
    a = Est(random_state=0).fit(X[:100], y[:100])
    b = Est(random_state=0).fit(X[:100], y[:100])
    for i in range(100, 300):
        a.learn_one(X[i], y[i])
        b.partial_fit(X[i], y[i:i + 1])
    assert_same_state(fitted_state(a), fitted_state(b))
    assert a.t_ == b.t_ == 300


@pytest.mark.parametrize("Est", [Perceptron, PAI, OAM])
def test_one_row_csr_takes_the_row_local_round(Est, monkeypatch):
    X, y = _rows(120, 1)
    est = Est().fit(X[:100], y[:100])

    def no_copy(self, x, s):
        raise AssertionError("the round on copies ran for a canonical CSR row")
    monkeypatch.setattr(type(est), "_learn_one_by_copy", no_copy)
    for i in range(100, 120):
        est.learn_one(X[i], y[i])
    assert est.t_ == 120
    with pytest.raises(AssertionError, match="round on copies"):
        est.learn_one(X[100].toarray().ravel(), y[100])      # a dense row still takes it


def _spoiled(est):
    """Make the pass of ``est`` leave the first column of the row infinite after a normal
    round (a stand-in for an overflowing step: with finite rows and a finite score neither
    learner's step overflows in practice)."""
    orig = est._run_pass

    def run(state, X, s, order):
        orig(state, X, s, order)
        state["w_"][X.indices[0]] = np.inf
    est._run_pass = run


def _big_row(j, value):
    return sp.csr_matrix((np.array([value]), np.array([j], dtype=np.int32),
                          np.array([0, 1], dtype=np.int32)), shape=(1, P))


@pytest.mark.parametrize("Est", [Perceptron, PAI])
def test_a_non_finite_score_leaves_the_model_unchanged(Est):
    X, y = _rows(100, 2)
    est = Est().fit(X, y)
    j = int(np.flatnonzero(est.w_ == 0)[0])
    if Est is Perceptron:         # a first step sets w_j = 1e300; the second score overflows
        x = _big_row(j, 1e300)
        est.learn_one(x, 1)
        assert est.w_[j] == 1e300
    else:                         # ||x||^2 overflows
        x = _big_row(j, 1e200)
    before = snapshot(est)
    with pytest.raises(FloatingPointError):
        est.learn_one(x, 1)
    assert_unchanged(before, est)


@pytest.mark.parametrize("Est", [Perceptron, PAI, OAM])
def test_a_non_finite_weight_is_put_back(Est):
    X, y = _rows(100, 3)
    est = Est().fit(X[:99], y[:99])
    before = snapshot(est)
    _spoiled(est)
    with pytest.raises((FloatingPointError, ValueError)):
        est.learn_one(X[99], 1 - y[99])
    assert_unchanged(before, est, skip=("_run_pass",))


@pytest.mark.parametrize("Est", [Perceptron, OAM])
def test_a_round_that_does_not_put_back_is_caught(Est):
    """Mutant: without putting the saved entries back, the spoiled round leaves an infinite
    weight, which the unchanged check above must catch."""
    method = "_csr_round_in_place"
    X, y = _rows(100, 3)
    est = Est().fit(X[:99], y[:99])
    owner = next(c for c in Est.__mro__ if method in vars(c))
    src = textwrap.dedent(inspect.getsource(getattr(owner, method)))
    old = ('_all_finite(v) for k, v in state.items() if k != "w_")):\n'
           "        w[cols] = saved\n")
    assert src.count(old) == 1
    ns = dict(getattr(owner, method).__globals__)        # the namespace of its module
    exec(compile(src.replace(old, old.replace("        w[cols] = saved\n", "")), "<mutant>",
                 "exec"), ns)
    before = snapshot(est)
    _spoiled(est)
    setattr(est, method, ns[method].__get__(est))
    with pytest.raises((FloatingPointError, ValueError)):
        est.learn_one(X[99], 1 - y[99])
    with pytest.raises(AssertionError):
        assert_unchanged(before, est, skip=("_run_pass", method))


@pytest.mark.parametrize("name", baselines.__all__)
def test_score_one_on_a_csr_row_equals_decision_function(name):
    """Every linear baseline scores a canonical one-row CSR matrix from its non-zero entries
    (the fast branch of ``score_one``), equal to ``decision_function`` to rounding."""
    X, y = _rows(200, 4, p=256)            # AdaOAM keeps two p x p covariances
    est = getattr(baselines, name)().fit(X, y)
    ref = est.decision_function(X[:50])
    got = np.array([est.score_one(X[i]) for i in range(50)])
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-14)
    assert np.ptp(got) > 0                            # the scores are not all alike


def test_score_one_csr_branch_is_checked_by_a_mutant():
    """Mutant of the fast branch: a product with the wrong columns must be caught by the
    comparison above."""
    X, y = _rows(200, 4, p=256)
    est = PAI().fit(X, y)
    src = textwrap.dedent(inspect.getsource(baselines._LinearBaseline.score_one))
    old = 'd["w_"][x.indices]'
    assert src.count(old) == 1
    ns = dict(baselines._LinearBaseline.score_one.__globals__)   # its module's namespace
    ns["__class__"] = baselines._LinearBaseline
    exec(compile(src.replace(old, 'd["w_"][x.indices - 1]'), "<mutant>", "exec"), ns)
    mutant = ns["score_one"].__get__(est)
    got = np.array([mutant(X[i]) for i in range(50)])
    assert not np.allclose(got, est.decision_function(X[:50]), rtol=1e-12, atol=1e-14)
