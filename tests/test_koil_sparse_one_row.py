"""KOIL on sparse slots, one CSR row at a time: the round and the score in place.

A KOIL fitted on CSR rows keeps its support vectors in sparse slots. ``learn_one`` of a
canonical CSR row that fits the slot width plays the round on the model's own buffers (the
written slot saved first), and ``score_one`` / ``decision_function`` read the slots in
place (``_kfun.kernel_decision_slots``) instead of building a CSR matrix of the support
vectors. Checked here: the round equals ``partial_fit`` on the row bit for bit (free slots,
replacements, RS++ and FIFO++, rows wider than the slots, which take the pass on copies);
the in-place scores equal those of the built matrix bit for bit and the NumPy reference to
1e-12; a kernel overflow leaves the model unchanged; and mutants (a slot count off by one,
a round without the saved slot restored) are caught.
"""

import pickle

import numpy as np
import pytest
from helpers import fitted_state, same_state, slot_stream

from sosl import KOIL, koil
from sosl._core import _kfun, _kfun_ref, _koil
from sosl.kernels import _slots_to_csr, kernel_spec, layout_expansion


@pytest.mark.parametrize("policy", ["rs++", "fifo++"])
@pytest.mark.parametrize("kernel", ["rbf", "poly"])
def test_learn_one_in_place_equals_partial_fit(policy, kernel, monkeypatch):
    X, y = slot_stream()
    a = KOIL(policy=policy, kernel=kernel, budget=12, random_state=0).fit(X[:20], y[:20])
    assert a._layout_["storage"] == "csr"
    b = pickle.loads(pickle.dumps(a))
    copies = []
    by_copy = KOIL._learn_one_by_copy

    def counted(self, x, s):
        copies.append(x.nnz)
        return by_copy(self, x, s)
    monkeypatch.setattr(KOIL, "_learn_one_by_copy", counted)
    width = a.buffer_ind_.shape[1]
    wider = 0
    for i in range(20, 240):
        r = X[i]
        wider += r.nnz > a.buffer_ind_.shape[1]
        a.learn_one(r, y[i])
        b.partial_fit(r, y[i:i + 1])
    assert same_state(fitted_state(a), fitted_state(b))
    assert wider > 0 and a.buffer_ind_.shape[1] > width     # some rows widened the slots
    assert len(copies) == wider                            # only those took the copies
    assert np.ptp(a.alpha_) > 0 and a.n_buffer_.sum() == 24


def test_scores_read_in_place_equal_the_built_matrix_and_the_reference():
    X, y = slot_stream(seed=1)
    for kernel in ("rbf", "poly", "linear"):
        m = KOIL(kernel=kernel, budget=15, random_state=0).fit(X[:200], y[:200])
        lay = m._layout_
        want = m.intercept_ + layout_expansion(X[200:], m.support_vectors_, m.dual_coef_, lay)
        np.testing.assert_array_equal(m.decision_function(X[200:]), want)
        np.testing.assert_array_equal([m.score_one(X[i]) for i in range(200, 240)], want)
        slots = m._filled()
        rows = [(X[i].indices, X[i].data) for i in range(200, 240)]
        ref = _kfun_ref.slots_decision(rows, m.buffer_ind_, m.buffer_val_, m.buffer_nnz_,
                                       slots, m.alpha_[slots], int(lay["kernel"]),
                                       float(lay["gamma"]), float(lay["degree"]),
                                       float(lay["coef0"]))
        np.testing.assert_allclose(want - m.intercept_, ref, rtol=1e-12, atol=1e-12)


def test_a_slot_count_off_by_one_is_caught():
    """Mutant: the slots read with one entry fewer each (nnz - 1) give other scores."""
    X, y = slot_stream(seed=2)
    m = KOIL(budget=15, random_state=0).fit(X[:200], y[:200])
    lay, slots = m._layout_, np.ascontiguousarray(m._filled(), dtype=np.intp)
    spec = kernel_spec(int(lay["kernel"]), float(lay["gamma"]), float(int(lay["degree"])),
                       float(lay["coef0"]))
    R = X[200:240]

    def run(nnz):
        out = np.empty(R.shape[0])
        _kfun.kernel_decision_slots(R.data, R.indices, R.indptr, m.buffer_ind_,
                                    m.buffer_val_, nnz, slots, m.alpha_[slots], spec, out,
                                    np.empty(slots.shape[0]))
        return out
    good = layout_expansion(R, _slots_to_csr(m.buffer_ind_, m.buffer_val_, m.buffer_nnz_,
                                             slots, R.shape[1]), m.alpha_[slots], lay)
    np.testing.assert_array_equal(run(m.buffer_nnz_), good)
    short = np.maximum(m.buffer_nnz_ - 1, 0).astype(np.int32)
    assert not np.allclose(run(short), good, rtol=1e-9, atol=0)
    with pytest.raises(ValueError, match="not a filled slot"):
        bad = m.buffer_nnz_.copy()
        bad[slots[0]] = m.buffer_ind_.shape[1] + 1
        run(bad)


def test_an_overflow_leaves_the_model_unchanged_and_a_mutant_restore_is_caught(monkeypatch):
    X, y = slot_stream(seed=3)
    m = KOIL(kernel="poly", degree=9, gamma=1.0, budget=5, random_state=0).fit(X[:60], y[:60])
    big = X[60].copy()
    big.data[:] = 1e40
    assert big.nnz <= m.buffer_ind_.shape[1]                 # takes the in-place round
    before = pickle.loads(pickle.dumps(m))
    with pytest.raises(FloatingPointError, match="overflowed"):
        m.learn_one(big, 1)
    assert same_state(fitted_state(m), fitted_state(before))
    # mutant: the round played on the live buffers without the save and restore; the
    # general path then raises on a changed model, which the comparison catches
    m2 = pickle.loads(pickle.dumps(before))

    def no_restore(self, x, s):
        d = self.__dict__
        U = koil._philox_uniforms(d["seed_"], d["t_"], 1)
        try:
            _koil.koil_pass_csr(*self._pass_args(d, x, np.array([s]), koil._ONE_ROW,
                                                 d["_layout_"], U))
        except FloatingPointError:
            pass
        return False
    monkeypatch.setattr(KOIL, "_learn_one_live", no_restore)
    with pytest.raises(FloatingPointError):
        m2.learn_one(big, 1)
    assert not same_state(fitted_state(m2), fitted_state(before))
