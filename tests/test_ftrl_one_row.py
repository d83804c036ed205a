"""FTRL-AUC's one-row scoring path (``score_one``, ``predict_proba_one`` on one row).

The path skips the general validation for a canonical one-row CSR matrix (or a dense
float64 row) and runs the kernel (the dense product) of ``decision_function`` on the live
state; it must give what the general path
gives (the same kernel: bit for bit here, asserted at 1e-12 as well), fall back to it for
every row or model it does not suit (so the same errors), and its probability uses the
``math``-module twin of the Platt sigmoid. Each equivalence keeps a mutant that must fail.
"""

import math
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError

from sosl import FTRLAUC
from sosl._base import BaseOnlineAUC
from sosl._core._calibration_ref import sigmoid, sigmoid_one


def _stream(seed=0, n=400, p=300):
    rng = np.random.default_rng(seed)
    X = sp.random(n, p, density=0.03, random_state=seed, format="csr")
    X.data = rng.normal(size=X.nnz)
    w = np.zeros(p)
    w[:30] = rng.normal(size=30)
    y = (np.asarray(X @ w).ravel() + 0.3 * rng.normal(size=n) > 0.3).astype(int)
    return X, y


def _fitted(seed=0):
    X, y = _stream(seed)
    m = FTRLAUC(gamma=0.5).fit(X[:300], y[:300])
    rows = [X[i] for i in range(300, 400)]
    assert all(r.has_canonical_format and r.indices.dtype == np.int32 for r in rows)
    return m, rows, X, y


def _general_scores(m, rows):
    """Scores and probabilities of the general path (full validation, batch kernel)."""
    f = np.array([m.decision_function(r)[0] for r in rows])
    p1 = np.array([m.predict_proba(r)[0, 1] for r in rows])
    return f, p1


def test_sigmoid_one_equals_the_array_sigmoid():
    u = np.concatenate([np.linspace(-50, 50, 2001), [0.0, -0.0, 1e-300, -1e-300, 709.0,
                                                      -709.0, 745.0, -745.0, 800.0, -800.0,
                                                      1e6, -1e6]])
    got = np.array([sigmoid_one(float(v)) for v in u])
    np.testing.assert_allclose(got, sigmoid(u), rtol=1e-15, atol=0)
    assert got.min() == 0.0 and got.max() == 1.0 and sigmoid_one(0.0) == 0.5
    # mutant: the one-branch formula overflows for large negative u
    with pytest.raises(OverflowError):
        [1.0 / (1.0 + math.exp(-float(v))) for v in u]


def test_score_one_and_predict_proba_one_equal_the_general_path():
    m, rows, X, y = _fitted()
    assert all(m._one_row_score(r) is not None for r in rows)    # the path is taken
    f_gen, p_gen = _general_scores(m, rows)
    f_one = np.array([m.score_one(r) for r in rows])
    probs = [m.predict_proba_one(r) for r in rows]
    p_one = np.array([p[1] for p in probs])
    assert all(list(p) == [0, 1] and type(p[1]) is float for p in probs)
    np.testing.assert_allclose(f_one, f_gen, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(f_one, f_gen)                  # the same kernel: same bits
    np.testing.assert_allclose(p_one, p_gen, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose([p[0] for p in probs], 1.0 - p_gen, rtol=1e-12, atol=1e-15)
    # also equal to the base's score_one (validation, then the batch kernel)
    np.testing.assert_array_equal([BaseOnlineAUC.score_one(m, r) for r in rows], f_gen)
    # the comparisons are not trivial: scores of both signs, an intercept, A away from 1
    assert f_gen.min() < 0 < f_gen.max() and abs(m.intercept_[0]) > 1e-3
    assert abs(m.calibration_[0] - 1.0) > 1e-3
    # mutants: the row's dot product without the intercept, the sigmoid without A
    w = m.w_
    no_b = np.array([float(w[r.indices] @ r.data) for r in rows])
    assert not np.allclose(no_b, f_gen, rtol=1e-6, atol=1e-9)
    no_a = np.array([sigmoid_one(f) for f in f_gen])
    assert not np.allclose(no_a, p_gen, rtol=1e-6, atol=1e-9)


def test_a_dense_row_takes_the_path_with_the_one_row_bits():
    """A dense float64 row: decision_function's dense product on it as a one-row matrix
    (the base's score_one, to the bit); a non-finite one declines and raises there."""
    m, rows, X, y = _fitted(4)
    D = X[300:400].toarray()
    assert all(m._one_row_score(x) is not None for x in D)
    f_one = np.array([m.score_one(x) for x in D])
    np.testing.assert_array_equal(f_one, [BaseOnlineAUC.score_one(m, x) for x in D])
    np.testing.assert_array_equal(f_one, [m.decision_function(x[None, :])[0] for x in D])
    np.testing.assert_allclose(f_one, m.decision_function(D), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose([m.predict_proba_one(x)[1] for x in D],
                               m.predict_proba(D)[:, 1], rtol=1e-12, atol=1e-15)
    bad = D[0].copy()
    bad[5] = np.nan
    assert m._one_row_score(bad) is None
    with pytest.raises(ValueError, match="NaN or infinity"):
        m.score_one(bad)
    assert m._one_row_score(D[0, :10].copy()) is None
    with pytest.raises(ValueError, match="features"):
        m.score_one(D[0, :10].copy())
    # mutant: the dense product without the intercept is caught by the equality above
    assert abs(m.intercept_[0]) > 1e-3
    assert not np.array_equal([float(x @ m.w_) for x in D], f_one)


def test_labels_of_the_probabilities_follow_classes():
    X, y = _stream(1)
    labels = np.where(y == 1, "spam", "ham")
    m = FTRLAUC().partial_fit(X[:200], labels[:200], classes=["spam", "ham"])  # spam negative
    row = X[250]
    got = m.predict_proba_one(row)
    assert list(got) == ["spam", "ham"]
    np.testing.assert_allclose([got["spam"], got["ham"]], m.predict_proba(row)[0],
                               rtol=1e-12, atol=1e-15)


def test_rows_and_models_the_path_does_not_suit_take_the_general_path():
    m, rows, X, y = _fitted(2)
    p = X.shape[1]
    r = rows[0]
    assert r.nnz >= 3
    want = m.decision_function(r)[0]
    unsorted = sp.csr_matrix((r.data[::-1].copy(), r.indices[::-1].copy(),
                              np.array([0, r.nnz])), shape=(1, p))
    wide = sp.csr_matrix((r.data, r.indices.astype(np.int64), r.indptr.astype(np.int64)),
                         shape=(1, p))
    wide.indices = wide.indices.astype(np.int64)
    csc = r.tocsc()
    strided = np.asfortranarray(np.vstack([r.toarray()] * 2))[0]       # not C-contiguous
    assert not strided.flags.c_contiguous
    for other in (unsorted, wide, csc, r.toarray()[0].tolist(), strided):
        assert m._one_row_score(other) is None
        assert m.score_one(other) == pytest.approx(want, rel=1e-12, abs=1e-12)
        np.testing.assert_allclose(m.predict_proba_one(other)[1], m.predict_proba(r)[0, 1],
                                   rtol=1e-12)
    single = r.astype(np.float32)
    assert m._one_row_score(single) is None
    assert m.score_one(single) == m.decision_function(single)[0]
    # separate p-vectors (not the columns of one (p, 3) array): the general path
    twin = pickle.loads(pickle.dumps(m))
    for name in ("w_", "z_", "sq_grad_"):
        setattr(twin, name, getattr(twin, name).copy())
    assert twin._one_row_score(r) is None and twin.score_one(r) == want


def test_bad_rows_raise_as_on_the_general_path_and_change_nothing():
    m, rows, X, y = _fitted(3)
    p = X.shape[1]
    before = pickle.dumps(m.get_state())
    r = rows[1].copy()
    for bad_value, match in ((np.nan, "NaN or infinity"), (np.inf, "NaN or infinity")):
        bad = r.copy()
        bad.data[0] = bad_value
        assert m._one_row_score(bad) is None
        for call in (m.score_one, m.predict_proba_one):
            with pytest.raises(ValueError, match=match):
                call(bad)
    top = np.sort(np.argsort(-np.abs(m.w_))[:20]).astype(np.int32)
    assert np.abs(m.w_[top]).sum() > 1.3                        # so the score overflows
    big = sp.csr_matrix((np.sign(m.w_[top]) * 1.5e308, top, np.array([0, 20], np.int32)),
                        shape=(1, p))
    assert m._one_row_score(big) is None
    with pytest.raises(FloatingPointError, match="not finite"):
        m.score_one(big)
    narrow = sp.csr_matrix((r.data, r.indices, r.indptr), shape=(1, p + 5))
    with pytest.raises(ValueError, match="features"):
        m.score_one(narrow)
    with pytest.raises(ValueError, match="one row"):
        m.predict_proba_one(sp.vstack([r, r]).tocsr())
    assert pickle.dumps(m.get_state()) == before
    with pytest.raises(NotFittedError):
        FTRLAUC().score_one(r)
    with pytest.raises(NotFittedError):
        FTRLAUC().predict_proba_one(r)


def test_a_changed_hyper_parameter_is_checked_before_scoring():
    m, rows, X, y = _fitted(4)
    f = m.score_one(rows[0])
    m.gamma = -1.0                                  # re-arms the check: no fast score
    assert m._one_row_score(rows[0]) is None
    with pytest.raises(ValueError, match="gamma"):
        m.score_one(rows[0])
    with pytest.raises(ValueError, match="gamma"):
        m.predict_proba_one(rows[0])
    m.gamma = 0.5
    assert m.score_one(rows[0]) == f and m._one_row_score(rows[0]) == f
