"""OKAUC-M/S with budgeted FIFO buffers of sparse slots, one CSR row at a time.

A model fitted on CSR rows keeps its support vectors in sparse slots. ``learn_one`` of a
canonical CSR row that fits the slot width plays the round on the model's own buffers (the
written slot saved first), and the scores read the slots in place
(``_kfun.kernel_decision_slots``). Checked here: the round equals ``partial_fit`` on the
row bit for bit (free slots, FIFO replacements, both transfers, rows wider than the slots,
which take the general path); the in-place scores equal those of the public
``support_vectors_`` / ``dual_coef_`` bit for bit after each kind of update; a kernel
overflow leaves the model unchanged; and a round without the restore (the mutant) is caught.
"""

import pickle

import numpy as np
import pytest
from helpers import fitted_state, same_state, slot_stream

import sosl
from sosl import okauc
from sosl import state as S
from sosl.kernels import layout_expansion

LEARNERS = [sosl.OKAUCM, sosl.OKAUCS]





def _public_scores(m, X):
    return m.intercept_ + layout_expansion(X, m.support_vectors_, m.dual_coef_, m._layout_)


@pytest.mark.parametrize("Est", LEARNERS, ids=lambda E: E.__name__)
@pytest.mark.parametrize("transfer", ["optimal", "min_abs"])
def test_learn_one_in_place_equals_partial_fit(Est, transfer, monkeypatch):
    X, y = slot_stream()
    a = Est(budget=12, transfer=transfer).fit(X[:20], y[:20])
    assert a._layout_["storage"] == "csr"
    b = pickle.loads(pickle.dumps(a))
    general = []
    real = Est._learn_one_general

    def counted(self, x, label, classes):
        general.append(x.nnz)
        return real(self, x, label, classes)
    monkeypatch.setattr(Est, "_learn_one_general", counted)
    width, wider = a.sv_ind_.shape[1], 0
    for i in range(20, 240):
        r = X[i]
        wider += r.nnz > a.sv_ind_.shape[1]
        a.learn_one(r, y[i])
        b.partial_fit(r, y[i:i + 1])
    assert same_state(fitted_state(a), fitted_state(b))
    assert wider > 0 and a.sv_ind_.shape[1] > width          # some rows widened the slots
    assert len(general) == wider                           # only those took the general path
    assert a.counts_.sum() == 24 and np.ptp(a.dual_coef_) > 0


@pytest.mark.parametrize("Est", LEARNERS, ids=lambda E: E.__name__)
def test_scores_read_in_place_equal_those_of_the_public_attributes(Est):
    X, y = slot_stream(seed=1)
    for kernel in ("rbf", "poly"):
        m = Est(kernel=kernel, budget=15).fit(X[:150], y[:150])
        R = X[200:]
        for step in ("fit", "partial_fit", "learn_one", "pickle", "state"):
            if step == "partial_fit":
                m.partial_fit(X[150:170], y[150:170])
            elif step == "learn_one":
                for i in range(170, 200):
                    m.learn_one(X[i], y[i])
            elif step == "pickle":
                m = pickle.loads(pickle.dumps(m))
            elif step == "state":
                m = S.from_state(S.get_state(m))
            want = _public_scores(m, R)
            np.testing.assert_array_equal(m.decision_function(R), want, err_msg=step)
            np.testing.assert_array_equal([m.score_one(R[i]) for i in range(R.shape[0])],
                                          want, err_msg=step)


@pytest.mark.parametrize("Est", LEARNERS, ids=lambda E: E.__name__)
def test_an_overflow_leaves_the_model_unchanged_and_a_round_without_restore_is_caught(
        Est, monkeypatch):
    X, y = slot_stream(seed=3)
    m = Est(kernel="poly", degree=9, gamma=1.0, budget=5).fit(X[:60], y[:60])
    big = X[60].copy()
    big.data[:] = 1e40
    assert big.nnz <= m.sv_ind_.shape[1]                       # takes the in-place round
    before = pickle.loads(pickle.dumps(m))
    with pytest.raises(FloatingPointError, match="overflowed"):
        m.learn_one(big, 1)
    assert same_state(fitted_state(m), fitted_state(before))
    # mutant: the round played on the live buffers without the save and restore
    m2 = pickle.loads(pickle.dumps(before))

    def no_restore(self, x, s):
        try:
            self._play(okauc._SparseFifoBuffers, self.__dict__, x, np.array([s]),
                       okauc._ONE_ROW)
        except FloatingPointError:
            pass
        return False
    monkeypatch.setattr(Est, "_learn_one_live", no_restore)
    with pytest.raises(FloatingPointError):
        m2.learn_one(big, 1)
    assert not same_state(fitted_state(m2), fitted_state(before))
