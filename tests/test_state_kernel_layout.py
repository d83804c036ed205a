"""``sosl.state`` round trips of kernel learners whose layout depends on their first fit.

A kernel learner freezes in its layout what the first call of a fit read from the data:
the storage of the support vectors (sparse slots after a ``scipy.sparse`` fit) and the
numeric width of ``gamma="scale"``. ``from_state`` must rebuild that layout from the stored
one (``_layout_inputs``), not from the parameters alone (which give dense storage and
gamma 1.0: the state was refused as not matching). Checked: the rebuilt model has the same
layout, the same scores and continues bit for bit; without the hook (the mutant) the state
of such a model is refused.
"""

import numpy as np
import pytest
import scipy.sparse as sp

import sosl
from sosl import state as S
from sosl.kernels import _SparseStorage

LEARNERS = [sosl.KOIL, sosl.OKAUCM, sosl.OKAUCS]


def _data():
    rng = np.random.default_rng(0)
    X = 3.0 * rng.normal(size=(120, 5))
    y = (X[:, 0] + rng.normal(size=120) > 0).astype(int)
    return X, sp.csr_matrix(np.where(np.abs(X) > 2.0, X, 0.0)), y


@pytest.mark.parametrize("Est", LEARNERS, ids=lambda E: E.__name__)
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("gamma", ["scale", 0.5])
def test_the_rebuilt_model_has_the_layout_and_continues_bit_for_bit(Est, sparse, gamma):
    X, Xs, y = _data()
    data = Xs if sparse else X
    m = Est(budget=10, gamma=gamma).fit(data[:80], y[:80])
    assert (m._layout_["storage"] == "csr") == sparse
    r = S.from_state(S.get_state(m))
    assert r._layout_ == m._layout_
    np.testing.assert_array_equal(r.decision_function(data), m.decision_function(data))
    m.partial_fit(data[80:], y[80:])
    r.partial_fit(data[80:], y[80:])
    np.testing.assert_array_equal(r.decision_function(data), m.decision_function(data))


def test_without_the_hook_such_states_are_refused(monkeypatch):
    X, Xs, y = _data()
    states = [S.get_state(sosl.OKAUCM(budget=10).fit(Xs, y)),
              S.get_state(sosl.KOIL(budget=10, gamma="scale").fit(X, y))]
    monkeypatch.delattr(_SparseStorage, "_layout_inputs")
    for st in states:
        with pytest.raises(ValueError, match="does not match its parameters"):
            S.from_state(st)
