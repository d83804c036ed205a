"""OAUC-M / OAUC-M_c / OAUC-S as estimators: labels, shuffling, refused input and
parameters, sparse rows (the pass against its reference: tests/_core/test_linear.py)."""


import numpy as np
import pytest
from helpers import assert_unchanged, labelled_linear, snapshot

from sosl import OAUCM, OAUCS
from sosl.metrics import auc


@pytest.mark.parametrize("y", [
    np.array([3, 1, 3, 1, 1]), np.array([True, False, True]), np.array([1.0, -1.0, 1.0]),
    np.array([7, 200, 7], dtype=np.uint8), np.array(["b", "a", "b"]),
    np.array([2, 1, 2, 1], dtype=np.int16)])
def test_fit_labels_as_np_unique_gives_them(y):
    rng = np.random.default_rng(14)
    X = rng.normal(size=(y.shape[0], 3))
    m = OAUCM(lam=0.05).fit(X, y)
    expect = np.unique(y)
    assert m.classes_.dtype == expect.dtype and np.array_equal(m.classes_, expect)
    ref_model = OAUCM(lam=0.05).partial_fit(X, y, classes=expect)
    assert m.coef_.tobytes() == ref_model.coef_.tobytes()


def test_fit_with_three_numeric_labels_raises():
    X = np.random.default_rng(15).normal(size=(6, 2))
    with pytest.raises(ValueError, match="binary"):
        OAUCM().fit(X, np.array([0, 1, 2, 0, 1, 2]))
    with pytest.raises(ValueError, match="two"):
        OAUCM().fit(X, np.zeros(6))


def test_shuffle_is_explicit_and_seeded():
    X, y = labelled_linear()
    plain = OAUCM(lam=0.05).fit(X, y)
    sh1 = OAUCM(lam=0.05, shuffle=True, random_state=3).fit(X, y)
    sh2 = OAUCM(lam=0.05, shuffle=True, random_state=3).fit(X, y)
    np.testing.assert_array_equal(sh1.coef_, sh2.coef_)
    assert not np.array_equal(plain.coef_, sh1.coef_)
    np.testing.assert_allclose(plain.means_, sh1.means_, rtol=1e-12)  # same data, same moments


def test_predict_threshold_is_midpoint_of_projected_means():
    X, y = labelled_linear()
    m = OAUCM(lam=0.05).fit(X, y)
    w = m.coef_[0]
    mid = w @ (m.means_[0] + m.means_[1]) / 2
    np.testing.assert_allclose(m.intercept_, [-mid])
    np.testing.assert_allclose(m.decision_function(X), X @ w - mid)
    np.testing.assert_array_equal(m.predict(X), np.where(X @ w > mid, "pos", "neg"))


BAD = [
    ("nan", lambda X, y: (np.where(np.arange(X.size).reshape(X.shape) == 3, np.nan, X), y),
     ValueError, "NaN"),
    ("inf", lambda X, y: (X + np.inf, y), ValueError, "infinity"),
    ("features", lambda X, y: (X[:, :2], y), ValueError, "features"),
    ("unknown-label", lambda X, y: (X, np.where(y == "pos", "other", y)), ValueError, "other"),
    ("three-classes", lambda X, y: (X, np.r_[y[:-1], ["third"]]), ValueError, "third"),
    ("empty", lambda X, y: (X[:0], y[:0]), ValueError, "0 sample"),
    ("length", lambda X, y: (X, y[:-1]), ValueError, "inconsistent"),
    ("3d", lambda X, y: (X[:, :, None], y), ValueError, "dim"),
]


@pytest.mark.parametrize("name,make,exc,match", BAD, ids=[b[0] for b in BAD])
def test_bad_partial_fit_leaves_model_unchanged(name, make, exc, match):
    X, y = labelled_linear()
    m = OAUCM(lam=0.05).fit(X[:200], y[:200])
    before = snapshot(m)
    Xb, yb = make(X[200:], y[200:])
    with pytest.raises(exc, match=match):
        m.partial_fit(Xb, yb)
    assert_unchanged(before, m)


@pytest.mark.parametrize("name,make,exc,match", BAD, ids=[b[0] for b in BAD])
def test_bad_fit_leaves_model_unchanged(name, make, exc, match):
    X, y = labelled_linear()
    m = OAUCM(lam=0.05).fit(X[:200], y[:200])
    before = snapshot(m)
    Xb, yb = make(X[200:], y[200:])
    if name == "unknown-label":  # a fresh fit accepts any two labels; make it one class instead
        yb = np.full_like(yb, "pos")
        match = "class"
    if name == "features":      # a fresh fit may change the feature count; use sparse NaN
        import scipy.sparse as sp
        Xb = sp.csr_matrix(X[200:])
        Xb.data[3] = np.nan
        exc, match = ValueError, "NaN"
    with pytest.raises(exc, match=match):
        m.fit(Xb, yb)
    assert_unchanged(before, m)


def test_one_class_fit_and_first_partial_fit_need_two_classes():
    X, y = labelled_linear()
    with pytest.raises(ValueError, match="class"):
        OAUCM().fit(X, np.full(len(y), "pos"))
    with pytest.raises(ValueError, match="classes"):
        OAUCM().partial_fit(X[:5], np.full(5, "pos"))
    m = OAUCM().partial_fit(X[:5], np.full(5, "pos"), classes=["neg", "pos"])
    assert m.counts_.tolist() == [0, 5]
    with pytest.raises(ValueError, match="differs"):
        m.partial_fit(X[5:10], y[5:10], classes=["a", "b"])


@pytest.mark.parametrize("p", [5, 40])            # own loops, and BLAS with rank-k updates
@pytest.mark.parametrize("Est", [OAUCM, OAUCS])
def test_sparse_input_equals_dense(Est, p):
    import scipy.sparse as sp
    rng = np.random.default_rng(p)
    X = rng.uniform(-1, 1, size=(300, p)) * (rng.random((300, p)) < 0.3)
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=300) > 0.1, "pos", "neg")
    kw = dict(lam=0.05, eta=1e-3) if Est is OAUCS else dict(lam=0.05)
    dense = Est(**kw).fit(X, y)
    for fmt in ("csr", "csc", "coo"):
        sparse = Est(**kw).fit(sp.csr_matrix(X).asformat(fmt), y)
        np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(sparse.covariances_, dense.covariances_, rtol=1e-12,
                                   atol=1e-15)
    Xs = sp.csr_matrix(X)
    np.testing.assert_allclose(sparse.decision_function(Xs), dense.decision_function(X),
                               rtol=1e-12, atol=1e-13)
    inc = Est(**kw)
    for a in range(0, 300, 70):                # chunks, dense and sparse mixed
        part = Xs[a:a + 70] if (a // 70) % 2 else X[a:a + 70]
        inc.partial_fit(part, y[a:a + 70], classes=["neg", "pos"])
    np.testing.assert_allclose(inc.coef_, dense.coef_, rtol=1e-12, atol=1e-15)
    one = Est(**kw)
    one.learn_one(Xs[0], y[0], classes=["neg", "pos"])
    for i in range(1, 300):
        one.learn_one(Xs[i] if i % 2 else X[i], y[i])
    np.testing.assert_allclose(one.coef_, dense.coef_, rtol=1e-12, atol=1e-15)
    sh_d = Est(shuffle=True, random_state=0, **kw).fit(X, y)
    sh_s = Est(shuffle=True, random_state=0, **kw).fit(Xs, y)
    np.testing.assert_allclose(sh_s.coef_, sh_d.coef_, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("params,exc,match", [
    ({"lam": -1.0}, ValueError, "lam"), ({"lam": "a"}, TypeError, "lam"),
    ({"lam": 0.0}, ValueError, "lam"), ({"eta": 0.0}, ValueError, "eta"),
    ({"eta": np.nan}, ValueError, "eta"), ({"lam": True}, TypeError, "lam"),
])
def test_bad_hyper_parameters(params, exc, match):
    X, y = labelled_linear()
    with pytest.raises(exc, match=match):
        OAUCM(**params).fit(X, y)


def test_diverging_step_raises_and_keeps_state():
    X, y = labelled_linear()
    X = X * 50.0
    m = OAUCS(lam=0.01, eta=1e-4).fit(X[:100], y[:100])
    m.set_params(eta=10.0)
    before = snapshot(m)
    with pytest.raises(FloatingPointError, match="non-finite"):
        m.partial_fit(X[100:], y[100:])
    assert_unchanged(before, m)


def test_lam_zero_allowed_with_constant_step():
    X, y = labelled_linear()
    m = OAUCM(lam=0.0, eta=0.01).fit(X, y)
    assert auc(y, m.decision_function(X)) > 0.9


def test_batch_changed_in_place_between_calls_is_checked_again():
    """The max |x| of a batch is remembered within one call only: the same array, made
    non-finite in place, is refused on the next call and the model is left unchanged."""
    rng = np.random.default_rng(16)
    X = rng.normal(size=(200, 4))
    y = (X[:, 0] > 0).astype(int)
    m = OAUCM(lam=0.05).fit(X[:100], y[:100])
    batch = X[100:].copy()
    m.partial_fit(batch, y[100:])
    before = m.scatter_.copy(), m.coef_.copy(), m.max_abs_
    batch[7, 1] = np.inf
    with pytest.raises(ValueError, match="NaN or infinity"):
        m.partial_fit(batch, y[100:])
    np.testing.assert_array_equal(m.scatter_, before[0])
    np.testing.assert_array_equal(m.coef_, before[1])
    assert m.max_abs_ == before[2] < 1e3
    batch[7, 1] = 1e3                           # finite, but far above the remembered max
    m.partial_fit(batch, y[100:])
    assert m.max_abs_ == 1e3


def test_fit_of_plain_arrays_skips_validate_data_with_the_same_result(monkeypatch):
    """A fresh fit of a float64 C-contiguous X with integer labels takes the short
    validation path: the same fitted state as through validate_data (a Fortran copy of X
    takes that one), feature names of an earlier fit dropped, n_features_in_ reset, and a
    non-finite X still refused by the pass with the state unchanged."""
    pd = pytest.importorskip("pandas")
    import sosl._validation as base  # where the batch is validated
    rng = np.random.default_rng(16)
    X = rng.uniform(-1, 1, size=(300, 4))
    y = (X[:, 0] + 0.2 * rng.normal(size=300) > 0).astype(np.int64)
    slow = OAUCM(lam=0.05).fit(np.asfortranarray(X), y)
    calls = []
    real = base.validate_data
    monkeypatch.setattr(base, "validate_data", lambda *a, **k: calls.append(1) or real(*a, **k))
    m = OAUCM(lam=0.05).fit(pd.DataFrame(X[:, :3], columns=list("abc")), y)
    assert calls and list(m.feature_names_in_) == list("abc") and m.n_features_in_ == 3
    calls.clear()
    m.fit(X, y)
    assert not calls, "the plain-array fit went through validate_data"
    assert not hasattr(m, "feature_names_in_") and m.n_features_in_ == 4
    for name in ("w_", "means_", "scatter_", "calibration_"):
        assert getattr(m, name).tobytes() == getattr(slow, name).tobytes(), name
    before = snapshot(m)
    bad = X.copy()
    bad[150, 2] = np.nan
    with pytest.raises(ValueError, match="NaN or infinity"):
        m.fit(bad, y)
    assert_unchanged(before, m)


def test_refit_checks_the_hyper_parameters_once_until_one_is_assigned(monkeypatch):
    """A fit with no hyper-parameter assigned since the last check skips the constraint
    table (0.23 ms a call); an assignment, by set_params or directly, re-arms it."""
    X = np.random.default_rng(3).uniform(-1, 1, size=(50, 3))
    y = (X[:, 0] > 0).astype(np.int64)
    m = OAUCM(lam=0.05).fit(X, y)
    calls = []
    monkeypatch.setattr(OAUCM, "_validate_params", lambda self: calls.append(1))
    m.fit(X, y)
    assert not calls
    m.set_params(lam=0.1).fit(X, y)
    assert calls == [1]
    m.lam = 0.2
    m.fit(X, y)
    assert calls == [1, 1]


@pytest.mark.parametrize("labels,dtype", [
    (labels, dtype) for labels in [(0, 1), (-1, 0), (5, 6), (0, 2), (-1, 1)]
    for dtype in [np.int64, np.int8, np.uint8, np.float64, np.bool_]
    if (min(labels) >= 0 or np.dtype(dtype).kind in "if")
    and (np.dtype(dtype).kind != "b" or labels == (0, 1))])
def test_two_label_signs_equal_the_sorted_classes(labels, dtype):
    """The labels' signs found from a min and a max (adjacent integers need no count)
    give the fit of labels 0/1 to the bit; a third value in between is refused."""
    rng = np.random.default_rng(4)
    X = rng.uniform(-1, 1, size=(80, 3))
    z = (X[:, 0] > 0).astype(np.int64)
    y = np.where(z == 1, labels[1], labels[0]).astype(dtype)
    ref = OAUCM(lam=0.05).fit(X, z)
    m = OAUCM(lam=0.05).fit(X, y)
    assert m.classes_.tolist() == list(labels)
    assert m.w_.tobytes() == ref.w_.tobytes()
    if labels[1] - labels[0] == 2:
        y[7] = labels[0] + 1
        with pytest.raises(ValueError, match="binary"):
            OAUCM().fit(X, y)
