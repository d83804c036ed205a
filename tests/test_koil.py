"""KOIL as an estimator: seeded buffers, refused parameters and input, sparse-fitted models,
one-row calls in place (the pass against its reference: tests/_core/test_koil.py)."""

import os
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from helpers import koil_sparse_stream, koil_stream

from sosl import KOIL
from sosl._core import _koil
from sosl.kernels import kernel_matrix
from sosl.metrics import auc


def test_seed_controls_reservoir():
    rng = np.random.default_rng(8)
    X, y = koil_stream(rng, 600, 3)
    a = KOIL(budget=15, random_state=1).fit(X, y)
    b = KOIL(budget=15, random_state=1).fit(X, y)
    c = KOIL(budget=15, random_state=2).fit(X, y)
    np.testing.assert_array_equal(a.alpha_, b.alpha_)
    assert not np.array_equal(a.buffer_, c.buffer_)
    assert a.support_vectors_.shape[0] == 30


def test_learns_a_nonlinear_problem():
    rng = np.random.default_rng(9)
    X = rng.uniform(-1, 1, size=(1500, 2))
    y = (X[:, 0] ** 2 + X[:, 1] ** 2 < 0.3).astype(int)
    for policy in ("rs++", "fifo++"):
        model = KOIL(policy=policy, gamma=4.0, random_state=0).fit(X[:1000], y[:1000])
        assert auc(y[1000:], model.decision_function(X[1000:])) > 0.97


def test_fourclass_auc():
    data_dir = os.environ.get("SOSL_DATA_DIR")
    if not data_dir:
        pytest.skip("SOSL_DATA_DIR is not set")
    from sosl.datasets import load_dataset
    X, y = load_dataset("fourclass", data_dir=data_dir)
    perm = np.random.default_rng(0).permutation(len(y))
    X, y = X[perm], y[perm]
    model = KOIL(gamma=10.0, random_state=0).fit(X[:690], y[:690])
    assert auc(y[690:], model.decision_function(X[690:])) > 0.97


@pytest.mark.parametrize("params, err, match", [
    ({"eta": 1.0}, ValueError, r"eta.*range \(0(\.0)?, 1(\.0)?\)"),     # one constraint
    ({"eta": 0.0}, ValueError, "eta"),
    ({"eta": -0.1}, ValueError, "eta"),
    ({"C": 0.0}, ValueError, "C"),
    ({"n_neighbors": 0}, ValueError, "n_neighbors"),
    ({"n_neighbors": 2.5}, TypeError, "n_neighbors"),
    ({"budget": 0}, ValueError, "budget"),
    ({"budget": (3, 4, 5)}, ValueError, "budget"),
    ({"budget": 2.0}, TypeError, "budget"),
    ({"policy": "lifo"}, ValueError, "policy"),
    ({"kernel": "sigmoid"}, ValueError, "kernel"),
    ({"gamma": 0.0}, ValueError, "gamma"),
])
def test_bad_params(params, err, match):
    X = np.array([[0.0], [1.0]])
    with pytest.raises(err, match=match):
        KOIL(**params).fit(X, [0, 1])


def test_changed_budget_after_fit_is_refused():
    """The fitted buffers were built for budget=50: a later call with budget=20 must not
    read the new value into the old slots (scores and passes), and must leave the model."""
    rng = np.random.default_rng(14)
    X, y = koil_stream(rng, 200, 2)
    m = KOIL(budget=50, random_state=0).fit(X, y)
    scores = m.decision_function(X)
    alpha = m.alpha_.copy()
    m.set_params(budget=20)
    with pytest.raises(ValueError, match="budget.*changed"):
        m.decision_function(X)
    with pytest.raises(ValueError, match="budget.*changed"):
        m.partial_fit(X, y)
    np.testing.assert_array_equal(m.alpha_, alpha)
    assert m.t_ == 200
    m.set_params(budget=50)                                # set back: the same model
    np.testing.assert_array_equal(m.decision_function(X), scores)
    m.set_params(kernel="linear")
    with pytest.raises(ValueError, match="kernel.*changed"):
        m.partial_fit(X, y)
    m.set_params(kernel="gaussian", eta=-1.0)              # checked on every call, not only fit
    with pytest.raises(ValueError, match="eta"):
        m.partial_fit(X, y)
    with pytest.raises(ValueError, match="eta"):
        m.predict(X)


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
@pytest.mark.parametrize("kernel", ["linear", "poly"])
def test_overflowing_kernel_raises_and_never_maps_nan(kernel):
    """Finite inputs near 1e155 overflow the linear/poly kernels (x.x' > 1e308): a clear
    error from the pass (state untouched) and from predictions, never a NaN mapped to a class."""
    rng = np.random.default_rng(15)
    X, y = koil_stream(rng, 60, 2)
    big = X * 1e155
    with pytest.raises(FloatingPointError, match="KOIL"):
        KOIL(kernel=kernel, budget=10, random_state=0).fit(big, y)
    m = KOIL(kernel=kernel, budget=10, random_state=0).fit(X, y)
    alpha = m.alpha_.copy()
    with pytest.raises(FloatingPointError, match="KOIL"):
        m.partial_fit(big, y)
    np.testing.assert_array_equal(m.alpha_, alpha)
    # scores of the model fitted on X: (gamma x.x_i + 1)^3 overflows at 1e155 (poly); the
    # linear scores x.(sum alpha_i x_i) do at 1e308
    query = big if kernel == "poly" else np.full((3, 2), 1.7e308) * np.sign(m.dual_coef_ @
                                                                           m.support_vectors_)
    with pytest.raises(FloatingPointError, match="not finite"):
        m.predict(query)
    with pytest.raises(FloatingPointError, match="not finite"):
        m.decision_function(query)


def _koil_models_equal(a, b, X, rtol=1e-12):
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), rtol=rtol,
                               atol=rtol)
    np.testing.assert_allclose(a.dual_coef_, b.dual_coef_, rtol=rtol, atol=rtol)
    sa, sb = a.support_vectors_, b.support_vectors_
    np.testing.assert_array_equal(sa.toarray() if sp.issparse(sa) else sa,
                                  sb.toarray() if sp.issparse(sb) else sb)
    np.testing.assert_array_equal(a.n_buffer_, b.n_buffer_)
    assert a.t_ == b.t_


@pytest.mark.parametrize("policy, kernel, kp", [
    ("rs++", "gaussian", {"gamma": 1.5}), ("fifo++", "gaussian", {"gamma": 1.5}),
    ("rs++", "poly", {"gamma": 0.5, "degree": 2}), ("fifo++", "linear", {})])
def test_sparse_fitted_model_equals_dense_fitted(policy, kernel, kp):
    """partial_fit on CSR in chunks (row nnz growing, so the slots widen), pickled
    mid-stream, against the dense fit: equal at rtol 1e-12; then the other format."""
    rng = np.random.default_rng(42)
    X, y = koil_sparse_stream(rng, 300, 25, grow=True)
    kw = dict(policy=policy, kernel=kernel, budget=(8, 10), n_neighbors=4, eta=0.1,
              random_state=5, **kp)
    dense = KOIL(**kw).fit(X, y)
    part = KOIL(**kw)
    widths = []
    for a, b in zip([0, 2, 60, 150, 151, 240], [2, 60, 150, 151, 240, 300]):
        part.partial_fit(sp.csr_matrix(X[a:b]), y[a:b], classes=[0, 1])
        widths.append(part.buffer_ind_.shape[1])
        if a == 150:
            part = pickle.loads(pickle.dumps(part))
    assert widths == sorted(widths) and widths[-1] > widths[1]
    assert sp.issparse(part.support_vectors_) and not hasattr(part, "buffer_")
    _koil_models_equal(part, dense, X)
    _koil_models_equal(KOIL(**kw).fit(sp.csr_matrix(X), y), dense, X)
    more, y2 = koil_sparse_stream(np.random.default_rng(43), 40, 25)
    part.partial_fit(more, y2)                             # dense rows into the sparse model
    dense.partial_fit(sp.csr_matrix(more), y2)             # and CSR rows into the dense one
    _koil_models_equal(part, dense, X)
    np.testing.assert_allclose(part.decision_function(sp.csr_matrix(X)),
                               dense.decision_function(X), rtol=1e-12, atol=1e-12)
    assert np.ptp(dense.decision_function(X)) > 0


def test_sparse_fitted_bad_batch_leaves_state_unchanged():
    rng = np.random.default_rng(44)
    X, y = koil_sparse_stream(rng, 120, 20)
    m = KOIL(kernel="poly", gamma=0.5, degree=2, budget=6, random_state=0).fit(
        sp.csr_matrix(X[:80]), y[:80])
    before = {k: v.copy() for k, v in vars(m).items() if isinstance(v, np.ndarray)}
    for Xb, yb in ((sp.csr_matrix(np.ones((3, 19))), y[:3]),
                   (sp.csr_matrix(np.ones((5, 20)) * 1e160), y[80:85])):
        with pytest.raises((ValueError, FloatingPointError)):
            m.partial_fit(Xb, yb)
        for k, v in before.items():
            assert getattr(m, k).shape == v.shape, k
            np.testing.assert_array_equal(getattr(m, k), v, err_msg=k)
    m.partial_fit(sp.csr_matrix(X[80:]), y[80:])
    ref = KOIL(kernel="poly", gamma=0.5, degree=2, budget=6, random_state=0).fit(X[:80], y[:80])
    ref.partial_fit(X[80:], y[80:])
    _koil_models_equal(m, ref, X)


def test_sparse_model_memory_does_not_depend_on_p():
    rng = np.random.default_rng(45)
    n, p, k = 300, 1 << 20, 8
    cols = np.sort(rng.choice(p, size=(n, k), replace=True), axis=1)
    X = sp.csr_matrix((rng.uniform(-1, 1, n * k), (np.repeat(np.arange(n), k), cols.ravel())),
                      shape=(n, p))
    y = (rng.random(n) < 0.3).astype(int)
    m = KOIL(gamma=0.5, budget=20, random_state=0).fit(X, y)
    nbytes = sum(v.nbytes for v in vars(m).values() if isinstance(v, np.ndarray))
    assert nbytes < 64_000, nbytes                         # dense slots would be 335 MB
    sv = m.support_vectors_
    assert sp.issparse(sv) and sv.shape == (40, p)
    used = np.unique(X.indices)
    want = kernel_matrix(X[:30].toarray()[:, used], sv.toarray()[:, used], "gaussian",
                         0.5) @ m.dual_coef_ + m.intercept_
    np.testing.assert_allclose(m.decision_function(X[:30]), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("policy", ["rs++", "fifo++"])
@pytest.mark.parametrize("budget", [3, 40])
def test_learn_one_in_place_equals_partial_fit(policy, budget):
    """KOIL's in-place one-row path (live buffers, the written slot saved) == partial_fit on
    the row, bit for bit, through free slots, replacements and RS++ refusals."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(260, 4))
    y = (X[:, 0] + 0.5 * rng.normal(size=260) > 0).astype(int)
    a = KOIL(policy=policy, budget=budget, random_state=0).fit(X[:20], y[:20])
    b = pickle.loads(pickle.dumps(a))
    for i in range(20, 260):
        a.learn_one(X[i], y[i])
        b.partial_fit(X[i:i + 1], y[i:i + 1])
    for name in a._state_names + ("t_", "n_seen_", "calibration_"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert np.ptp(a.alpha_) > 0
    assert "_stepper_" in a.__dict__                 # the typed path played rounds


def test_typed_one_row_path_mutant_is_caught():
    """The same comparison with a Stepper bound to a step 1% off (the mutant) fails: the
    bit-for-bit test above can fail."""
    from sosl._core._kparams import layout_kernel_spec
    rng = np.random.default_rng(9)
    X = rng.normal(size=(120, 4))
    y = (X[:, 0] > 0).astype(int)
    a = KOIL(budget=5, random_state=0).fit(X[:40], y[:40])
    b = pickle.loads(pickle.dumps(a))
    d, lay = a.__dict__, a._layout_
    d["_stepper_"] = _koil.Stepper(
        d["buffer_"], d["alpha_"], d["gram_"], d["buffer_scores_"], d["n_buffer_"],
        d["n_class_seen_"], d["fifo_head_"], np.array(lay["budgets"], dtype=np.int64),
        1.01 * a.eta, float(a.C), int(a.n_neighbors), lay["policy"],
        layout_kernel_spec(lay), d["calibration_"])
    for i in range(40, 120):
        a.learn_one(X[i], y[i])
        b.partial_fit(X[i:i + 1], y[i:i + 1])
    assert a.t_ == b.t_
    assert not np.array_equal(a.alpha_, b.alpha_)


def test_learn_one_in_place_overflow_leaves_the_model_unchanged():
    """A row whose kernel overflows: the in-place path restores the buffers it wrote and the
    general path raises on the unchanged model."""
    rng = np.random.default_rng(8)
    X = rng.normal(size=(60, 3))
    y = np.arange(60) % 2
    m = KOIL(kernel="poly", degree=9, gamma=1.0, budget=5).fit(X, y)
    before = pickle.dumps(m)
    with pytest.raises(FloatingPointError, match="overflowed"):
        m.learn_one(np.full(3, 1e40), 1)
    after = pickle.loads(pickle.dumps(m))
    ref = pickle.loads(before)
    for name in ref._state_names + ("t_", "n_seen_", "calibration_"):
        np.testing.assert_array_equal(getattr(after, name), getattr(ref, name), err_msg=name)
