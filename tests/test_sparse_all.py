"""Every public learner accepts scipy.sparse input and learns what it learns from the same
rows given dense (typed CSR passes, or dense state fed a densified block at a time)."""


import numpy as np
import pytest
import scipy.sparse as sp
from helpers import ESTIMATORS, KW, make

import sosl


def _data(n=240, p=12, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, p)) * (rng.random((n, p)) < 0.35)
    y = np.where(X[:, 0] - X[:, 1] + 0.3 * rng.normal(size=n) > 0.05, 1, 0)
    return X, y


def test_every_learner_is_covered():
    assert len(ESTIMATORS) >= 14


@pytest.mark.parametrize("Est", ESTIMATORS, ids=lambda E: E.__name__)
def test_sparse_equals_dense(Est):
    X, y = _data()
    dense = make(Est).fit(X, y)
    Xs = sp.csr_matrix(X)
    sparse = make(Est).fit(Xs, y)
    f_dense = dense.decision_function(X)
    np.testing.assert_allclose(sparse.decision_function(Xs), f_dense, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(sparse.decision_function(X), f_dense, rtol=1e-10, atol=1e-12)
    assert np.ptp(f_dense) > 0                              # not a comparison of constants
    inc = make(Est)
    for a in range(0, X.shape[0], 60):
        inc.partial_fit(sp.csc_matrix(X[a:a + 60]), y[a:a + 60], classes=[0, 1])
    np.testing.assert_allclose(inc.decision_function(Xs), f_dense, rtol=1e-10, atol=1e-12)


def test_partial_backup_restores_the_touched_entries():
    """FTRL-AUC saves only the columns a CSR batch touches; a failing batch writes them
    back, so the model is unchanged bit for bit."""
    rng = np.random.default_rng(1)
    X = sp.random(300, 1000, density=0.02, random_state=1, format="csr")
    y = (rng.random(300) < 0.3).astype(int)
    m = sosl.FTRLAUC().fit(X, y)
    backup = m._backup_names(X[:50])
    assert isinstance(backup, dict) and backup["z_"].shape[0] < 1000
    before = {k: v.copy() for k, v in vars(m).items() if isinstance(v, np.ndarray)}
    with pytest.raises(FloatingPointError, match="non-finite"):
        m.partial_fit(X[:50] * 1e300, y[:50])
    for k, v in before.items():
        np.testing.assert_array_equal(getattr(m, k), v, err_msg=k)
    m.partial_fit(X[:50], y[:50])                      # and it goes on as if nothing happened
    ref = sosl.FTRLAUC().fit(X, y).partial_fit(X[:50], y[:50])
    np.testing.assert_array_equal(m.coef_, ref.coef_)


@pytest.mark.parametrize("name", ["OKAUCM", "OKAUCS", "KOIL", "POLK"])
def test_kernel_learners_keep_sparse_support_vectors(name):
    """Fitted on CSR, the kernel learners hold no array with a dimension of n_features:
    their support vectors are CSR and every state array is sized by the budgets and the
    row nnz (equality with the dense fit is the test above)."""
    X, y = _data(p=5000)
    X[:, 40:] = 0.0                                          # 40 used columns out of 5000
    Est = getattr(sosl, name)
    m = Est(**KW[name]).fit(sp.csr_matrix(X), y)
    assert sp.issparse(m.support_vectors_) and m.support_vectors_.shape[1] == 5000
    shapes = [v.shape for v in vars(m).values() if isinstance(v, np.ndarray)]
    assert shapes and all(5000 not in s for s in shapes), shapes
    dense = Est(**KW[name]).fit(X, y)
    assert any(5000 in v.shape for v in vars(dense).values() if isinstance(v, np.ndarray))
