"""``gamma="scale"`` on the kernel learners: 1 / (p X.var()) of the first batch, as SVC's,
frozen with the fitted layout."""

import numpy as np
import pytest
import scipy.sparse as sp
from helpers import fitted_state, same_state

from sosl import KOIL, OKAUCM, OKAUCS, POLK

LEARNERS = [(OKAUCM, dict(budget=15)), (OKAUCS, dict(budget=15)), (KOIL, dict(budget=15)),
            (POLK, dict(eta=0.3))]


def _data(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(120, 4)) * np.array([1.0, 3.0, 0.5, 2.0]) + 1.0
    y = (X[:, 0] + 0.3 * rng.normal(size=120) > 1.2).astype(int)
    return X, y


@pytest.mark.parametrize("Est,kw", LEARNERS, ids=lambda v: getattr(v, "__name__", ""))
def test_scale_equals_the_explicit_width(Est, kw):
    X, y = _data()
    gamma = 1.0 / (X.shape[1] * X[:60].var())
    a = Est(gamma="scale", random_state=0, **kw).fit(X[:60], y[:60]).partial_fit(X[60:], y[60:])
    b = Est(gamma=gamma, random_state=0, **kw).fit(X[:60], y[:60]).partial_fit(X[60:], y[60:])
    assert a._layout_["gamma"] == gamma                     # frozen from the first batch
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
    sa, sb = fitted_state(a), fitted_state(b)
    assert same_state(sa, sb)
    c = Est(gamma=1.0, random_state=0, **kw).fit(X[:60], y[:60])     # the mutant: not scaled
    assert not np.allclose(c.decision_function(X), b.decision_function(X))
    a.fit(X[60:], y[60:])                                    # a new fit takes its own batch
    assert a._layout_["gamma"] == 1.0 / (X.shape[1] * X[60:].var())


@pytest.mark.parametrize("Est,kw", LEARNERS, ids=lambda v: getattr(v, "__name__", ""))
def test_scale_on_sparse_rows_equals_dense(Est, kw):
    X, y = _data(1)
    X[np.abs(X) < 1.0] = 0.0
    a = Est(gamma="scale", random_state=0, **kw).fit(sp.csr_matrix(X), y)
    b = Est(gamma="scale", random_state=0, **kw).fit(X, y)
    assert a._layout_["gamma"] == pytest.approx(b._layout_["gamma"], rel=1e-12)


def test_switching_from_scale_to_a_number_is_refused():
    X, y = _data()
    m = OKAUCM(gamma="scale", budget=10).fit(X, y)
    m.set_params(gamma=0.5)
    with pytest.raises(ValueError, match="gamma"):
        m.partial_fit(X, y)
    with pytest.raises(ValueError, match="gamma"):
        OKAUCM(gamma="auto").fit(X, y)
