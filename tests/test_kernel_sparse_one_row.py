"""KOIL and OKAUC-M/S on sparse slots, one CSR row at a time: the round and the score in place.

A kernel learner fitted on CSR rows keeps its support vectors in sparse slots (KOIL's
buffers; OKAUC's budgeted FIFO buffers). ``learn_one`` of a canonical CSR row that fits the
slot width plays the round on the model's own buffers (the written slot saved first), and
``score_one`` / ``decision_function`` read the slots in place
(``_kfun.kernel_decision_slots``) instead of a CSR matrix of the support vectors. Checked
here: the round equals ``partial_fit`` on the row bit for bit (free slots, replacements,
RS++ and FIFO++, both transfers, rows wider than the slots, which take the general path or
the pass on copies); the in-place scores equal those of the built matrix (KOIL) and of the
public ``support_vectors_`` / ``dual_coef_`` (OKAUC) bit for bit, and the NumPy reference to
1e-12; a kernel overflow leaves the model unchanged; and mutants (a slot count off by one,
the round played without its save and restore) are caught.
"""

import pickle

import numpy as np
import pytest
from helpers import fitted_state, same_state, slot_stream

import sosl
from sosl import KOIL, koil, okauc
from sosl import state as S
from sosl._core import _kfun, _kfun_ref, _koil
from sosl.kernels import _slots_to_csr, kernel_spec, layout_expansion

OKAUC = [sosl.OKAUCM, sosl.OKAUCS]


@pytest.mark.parametrize("policy", ["rs++", "fifo++"])
@pytest.mark.parametrize("kernel", ["rbf", "poly"])
def test_koil_learn_one_in_place_equals_partial_fit(policy, kernel, monkeypatch):
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


def test_koil_scores_read_in_place_equal_the_built_matrix_and_the_reference():
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


def _public_scores(m, X):
    return m.intercept_ + layout_expansion(X, m.support_vectors_, m.dual_coef_, m._layout_)


@pytest.mark.parametrize("Est", OKAUC, ids=lambda E: E.__name__)
@pytest.mark.parametrize("transfer", ["optimal", "min_abs"])
def test_okauc_learn_one_in_place_equals_partial_fit(Est, transfer, monkeypatch):
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


@pytest.mark.parametrize("Est", OKAUC, ids=lambda E: E.__name__)
def test_okauc_scores_read_in_place_equal_those_of_the_public_attributes(Est):
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


def _koil_round_without_restore(self, x, s):
    d = self.__dict__
    U = koil._philox_uniforms(d["seed_"], d["t_"], 1)
    try:
        _koil.koil_pass_csr(*self._pass_args(d, x, np.array([s]), koil._ONE_ROW,
                                             d["_layout_"], U))
    except FloatingPointError:
        pass
    return False


def _okauc_round_without_restore(self, x, s):
    try:
        self._play(okauc._SparseFifoBuffers, self.__dict__, x, np.array([s]), okauc._ONE_ROW)
    except FloatingPointError:
        pass
    return False


@pytest.mark.parametrize("Est, width, mutant", [
    (KOIL, "buffer_ind_", _koil_round_without_restore),
    (sosl.OKAUCM, "sv_ind_", _okauc_round_without_restore),
    (sosl.OKAUCS, "sv_ind_", _okauc_round_without_restore)], ids=["KOIL", "OKAUCM", "OKAUCS"])
def test_an_overflow_leaves_the_model_unchanged_and_a_round_without_restore_is_caught(
        Est, width, mutant, monkeypatch):
    X, y = slot_stream(seed=3)
    kw = dict(random_state=0) if Est is KOIL else {}
    m = Est(kernel="poly", degree=9, gamma=1.0, budget=5, **kw).fit(X[:60], y[:60])
    big = X[60].copy()
    big.data[:] = 1e40
    assert big.nnz <= getattr(m, width).shape[1]               # takes the in-place round
    before = pickle.loads(pickle.dumps(m))
    with pytest.raises(FloatingPointError, match="overflowed"):
        m.learn_one(big, 1)
    assert same_state(fitted_state(m), fitted_state(before))
    # mutant: the round played on the live buffers without the save and restore; the
    # general path then raises on a changed model, which the comparison catches
    m2 = pickle.loads(pickle.dumps(before))
    monkeypatch.setattr(Est, "_learn_one_live", mutant)
    with pytest.raises(FloatingPointError):
        m2.learn_one(big, 1)
    assert not same_state(fitted_state(m2), fitted_state(before))


@pytest.mark.parametrize("Est", OKAUC, ids=lambda E: E.__name__)
def test_okauc_sparse_support_vectors_are_built_when_read_and_never_stale(Est):
    """A round on sparse FIFO slots leaves None in the state where the CSR matrix of the
    support vectors was (it is built on the first read, then kept until the next round):
    what is read equals the slots of a model fed by partial_fit and the rows of a model
    fitted on the same rows densified, after every round, also when it was read (cached)
    just before the round."""
    X, y = slot_stream(seed=4)
    a = Est(budget=12).fit(X[:20], y[:20])
    b = pickle.loads(pickle.dumps(a))
    c = Est(budget=12).fit(X[:20].toarray(), y[:20])
    for i in range(20, 120):
        if i % 3:
            assert a.support_vectors_.shape[1] == X.shape[1]   # read: cached before the round
        a.learn_one(X[i], y[i])
        b.partial_fit(X[i], y[i:i + 1])
        c.learn_one(X[i].toarray()[0], y[i])
        assert vars(a)["support_vectors_"] is None          # not built by the round
        sv = a.support_vectors_
        assert vars(a)["support_vectors_"] is sv            # kept after the read
        np.testing.assert_array_equal(sv.toarray(), b.support_vectors_.toarray())
        np.testing.assert_array_equal(sv.toarray(), c.support_vectors_)
        assert sv.shape == (int(a.counts_.sum()), X.shape[1]) and sv.has_canonical_format
    assert a.counts_.sum() == 24
    assert not hasattr(Est(budget=12), "support_vectors_")   # unfitted: no attribute
