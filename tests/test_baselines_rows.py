"""The linear baselines row by row: OAM's sparse buffers through the estimator (sampled
rows, pickling, failed calls, memory at large p, storage chosen by the first call) and the
typed one-row rounds of OAM, SOLAM and AdaOAM (== partial_fit, failures leave the state)."""

import pickle

import numpy as np
import pytest
from helpers import (
    assert_close_to_reference,
    assert_same_state,
    baseline_learners,
    baseline_state,
    baseline_stream,
    comparable_baseline_state,
)
from sklearn.base import clone

from sosl import OAM, SOLAM, AdaOAM
from sosl._core import _baselines as K
from sosl._core._codes import OamUpdate, Schedule

RTOL = 1e-12
OAM_SEQ, OAM_GRA = int(OamUpdate.OAM_SEQ), int(OamUpdate.OAM_GRA)
INV_LAM_T, CONSTANT = int(Schedule.STEP_INV_LAM_T), int(Schedule.STEP_CONSTANT)


def _oam_sparse_data(seed, n=300, p=50, growing=False):
    """A CSR batch for the estimator (rows of 1..6 values; longer and longer if growing)."""
    import scipy.sparse as sp
    rng = np.random.default_rng(seed)
    X = np.zeros((n, p))
    for i in range(n):
        length = 1 + (i * 12 // n if growing else rng.integers(0, 6))
        X[i, rng.choice(p, size=length, replace=False)] = rng.uniform(0.1, 1.0, length)
    y = np.where(X[:, :5].sum(axis=1) - X[:, 5:10].sum(axis=1)
                 + 0.2 * rng.normal(size=n) > 0, "pos", "neg")
    return sp.csr_matrix(X), y


@pytest.mark.parametrize("update", ["seq", "gra"])
def test_oam_sparse_buffers_hold_sampled_rows(update):
    """A model fitted on CSR rows keeps sparse slots (no dense buffers); ``buffers_`` is a
    pair of CSR matrices holding rows of their class, not just the first ones (reservoir
    replacement after the buffer filled up), equal to the dense model's buffers."""
    import scipy.sparse as sp
    X, y = _oam_sparse_data(5)
    model = OAM(C=0.3, update=update, buffer_size=6, random_state=1).fit(X, y)
    dense = OAM(C=0.3, update=update, buffer_size=6, random_state=1).fit(X.toarray(), y)
    assert model.buffer_rows_ is None and isinstance(dense.buffer_rows_, np.ndarray)
    assert dense.buffer_values_ is None
    longest = int(np.diff(X.indptr).max())
    assert model.buffer_values_.shape == (2, 6, 1 << (longest - 1).bit_length())
    B = model.buffers_
    assert isinstance(B, tuple) and all(sp.issparse(b) and b.format == "csr" for b in B)
    Xd = X.toarray()
    for k, lab in enumerate(model.classes_):
        assert B[k].shape == (6, X.shape[1])
        rows = Xd[y == lab]
        assert all(any(np.array_equal(b, r) for r in rows) for b in B[k].toarray())
        assert not np.array_equal(B[k].toarray(), rows[:6])
    assert_close_to_reference(comparable_baseline_state(model), comparable_baseline_state(dense))
    assert dense.buffers_ is dense.buffer_rows_
    assert model.intercept_ != 0.0
    np.testing.assert_allclose(model.intercept_, dense.intercept_, rtol=RTOL)


@pytest.mark.parametrize("update", ["seq", "gra"])
def test_oam_sparse_partial_fit_learn_one_and_pickle(update):
    """On CSR rows whose length grows through the stream (the slots grow between calls):
    fit == partial_fit in chunks == learn_one row by row == pickled mid-stream then
    continued, bit for bit, slots included."""
    X, y = _oam_sparse_data(6, growing=True)
    est = OAM(C=0.3, update=update, buffer_size=5, random_state=2)
    whole = clone(est).fit(X, y)
    chunked = clone(est)
    caps = []
    for lo, hi in zip([0, 1, 40, 41, 150, 220], [1, 40, 41, 150, 220, X.shape[0]]):
        chunked.partial_fit(X[lo:hi], y[lo:hi], classes=["neg", "pos"])
        caps.append(chunked.buffer_values_.shape[2])
    assert caps[0] < caps[-1]                                     # the slots grew
    one = clone(est).partial_fit(X[:1], y[:1], classes=["neg", "pos"])
    for i in range(1, X.shape[0]):
        one.learn_one(X[i], y[i])
    a = clone(est).partial_fit(X[:120], y[:120], classes=["neg", "pos"])
    b = pickle.loads(pickle.dumps(a))
    for m in (a, b):
        m.partial_fit(X[120:], y[120:])
    for other in (chunked, one, a, b):
        assert_same_state(baseline_state(whole), baseline_state(other))
    assert set(OAM._SPARSE_STORE) <= set(whole._state_names)
    assert np.any(whole.coef_ != 0)


def test_oam_sparse_failed_call_leaves_state_unchanged():
    """A CSR call that overflows mid-pass (after its first rows changed w and the slots,
    and after growing the slots) leaves the model bit for bit as it was; the call saved
    only the entries of w_ it could touch, and the model goes on as if nothing
    happened."""
    import scipy.sparse as sp
    X, y = _oam_sparse_data(7)
    for update in ("seq", "gra"):
        model = OAM(C=0.3, update=update, buffer_size=5, random_state=3).fit(X[:200], y[:200])
        before = pickle.dumps(baseline_state(model))
        backup = model._backup_names(X[200:210])
        assert isinstance(backup, dict) and backup["w_"].shape[0] < 200
        bad = sp.vstack([X[200:205], sp.csr_matrix(np.full((1, X.shape[1]), 1e308)),
                         X[205:210]]).tocsr()
        with pytest.raises(FloatingPointError, match="not finite"):
            model.partial_fit(bad, y[200:211])
        assert pickle.dumps(baseline_state(model)) == before
        with pytest.raises(ValueError):                           # validation: NaN
            bad = X[200:205].copy()
            bad.data[0] = np.nan
            model.partial_fit(bad, y[200:205])
        assert pickle.dumps(baseline_state(model)) == before
        model.partial_fit(X[200:], y[200:])
        assert_same_state(baseline_state(model), baseline_state(
            OAM(C=0.3, update=update, buffer_size=5, random_state=3).fit(X, y)))


def test_oam_sparse_memory_does_not_grow_with_p():
    """At p = 2^20 the buffers take O(buffer_size x row length) bytes, not 1.6 GB, and
    buffers_ is sparse; the model equals the one at p = 2^10 on the same columns."""
    import scipy.sparse as sp
    X, y = _oam_sparse_data(8, n=200, p=40)
    wide = sp.csr_matrix((X.data, X.indices * 2 ** 14, X.indptr), shape=(200, 2 ** 20))
    small = OAM(update="gra", buffer_size=100, random_state=0).fit(X, y)
    big = OAM(update="gra", buffer_size=100, random_state=0).fit(wide, y)
    nbytes = sum(getattr(big, n).nbytes for n in OAM._SPARSE_STORE)
    assert nbytes < 2 ** 15, nbytes
    assert all(b.shape[1] == 2 ** 20 for b in big.buffers_)
    np.testing.assert_array_equal(big.coef_[0, np.arange(40) * 2 ** 14], small.coef_[0])
    assert np.count_nonzero(big.coef_) == np.count_nonzero(small.coef_) > 0
    big.learn_one(wide[0], y[0])
    small.learn_one(X[0], y[0])
    np.testing.assert_array_equal(big.coef_[0, np.arange(40) * 2 ** 14], small.coef_[0])


def test_oam_storage_is_chosen_by_the_first_call():
    """Dense first: dense buffers, later CSR rows densified; CSR first: sparse buffers,
    later dense rows converted; fit starts over and chooses again."""
    import scipy.sparse as sp
    X, y = _oam_sparse_data(9)
    Xd = X.toarray()
    a = OAM(buffer_size=4, random_state=0).partial_fit(Xd[:50], y[:50])
    a.partial_fit(X[50:], y[50:])
    assert a.buffer_values_ is None and a.buffer_rows_.shape == (2, 4, X.shape[1])
    b = OAM(buffer_size=4, random_state=0).partial_fit(X[:50], y[:50])
    b.partial_fit(Xd[50:], y[50:])
    b.learn_one(Xd[0], y[0])
    a.learn_one(Xd[0], y[0])
    assert b.buffer_rows_ is None and sp.issparse(b.buffers_[0])
    assert_close_to_reference(comparable_baseline_state(a), comparable_baseline_state(b))
    b.fit(Xd, y)
    assert b.buffer_values_ is None and b.buffer_rows_ is not None
    a.fit(X, y)
    assert a.buffer_rows_ is None and a.buffer_values_ is not None
    assert_close_to_reference(comparable_baseline_state(a), comparable_baseline_state(b))


@pytest.mark.parametrize("est", baseline_learners(), ids=lambda e: repr(e))
def test_score_one_typed_path_and_its_refusals(est, monkeypatch):
    """score_one of a fitted linear baseline is x.coef_ + intercept_ without the general
    path (it is patched to fail here) and equals decision_function; a NaN or inf row, a
    wrong length and an unfitted model still get the general path's errors."""
    from sklearn.exceptions import NotFittedError

    from sosl._base import BaseOnlineAUC
    X, y = baseline_stream(9)
    m = pickle.loads(pickle.dumps(est)).fit(X, y)
    with monkeypatch.context() as mp:
        mp.setattr(BaseOnlineAUC, "score_one", lambda self, x: pytest.fail("general path"))
        for i in range(5):
            assert m.score_one(X[i]) == pytest.approx(m.decision_function(X[i:i + 1])[0],
                                                      rel=1e-12, abs=1e-12)
    for bad in (np.r_[X[0, :-1], np.nan], np.r_[X[0, :-1], np.inf], X[0, :2]):
        with pytest.raises(ValueError):
            m.score_one(bad)
    with pytest.raises(NotFittedError):
        pickle.loads(pickle.dumps(est)).score_one(X[0])


# -- typed one-row rounds: OAM (dense buffers), SOLAM, AdaOAM ---------------------------------
def _typed_one_row_estimators():
    return [e for e in baseline_learners() if isinstance(e, (OAM, SOLAM, AdaOAM))]


def _fitted(est):
    return {k: v for k, v in vars(est).items() if k.endswith("_") and not k.startswith("_")}


def _same_bits(a, b):
    assert a.keys() == b.keys()
    for k in a:
        u, v = np.asarray(a[k]), np.asarray(b[k])
        assert u.dtype == v.dtype and u.shape == v.shape and u.tobytes() == v.tobytes(), k


@pytest.mark.parametrize("est", _typed_one_row_estimators(), ids=lambda e: repr(e))
def test_typed_one_row_round_is_taken_and_equals_partial_fit(est, monkeypatch):
    """learn_one on dense rows runs the typed round (the round on copies and the general
    path are patched to fail) and equals the general one-row partial_fit bit for bit in
    every fitted attribute, the Platt scaling included; the mutant without the Platt step
    is caught, so the comparison sees it."""
    import sosl._baseline_core
    from sosl._base import BaseOnlineAUC
    X, y = baseline_stream(11)
    start = pickle.loads(pickle.dumps(est)).partial_fit(X[:20], y[:20])
    general = pickle.loads(pickle.dumps(start))
    for i in range(20, 120):
        BaseOnlineAUC.partial_fit(general, X[i:i + 1], y[i:i + 1])
    for mutant in (False, True):
        typed = pickle.loads(pickle.dumps(start))
        with monkeypatch.context() as mp:
            mp.setattr(BaseOnlineAUC, "_learn_one_by_copy",
                       lambda self, x, s: pytest.fail("the round on copies ran"))
            mp.setattr(BaseOnlineAUC, "_learn_one_general",
                       lambda self, *args: pytest.fail("the general path ran"))
            if mutant:
                mp.setattr(sosl._baseline_core, "platt_steps", lambda f, s, c: None)
            for i in range(20, 120):
                typed.learn_one(X[i], y[i])
        if mutant:
            with pytest.raises(AssertionError, match="calibration_"):
                _same_bits(_fitted(typed), _fitted(general))
        else:
            _same_bits(_fitted(typed), _fitted(general))
    assert typed.t_ == 120 and np.any(typed.coef_ != 0)


@pytest.mark.parametrize("est", _typed_one_row_estimators(), ids=lambda e: repr(e))
def test_typed_one_row_failure_leaves_the_state_as_it_was(est):
    """Rows too large for the round: whenever the general path refuses one (it raises and
    leaves the state unchanged), the typed round refused it too, with the state exactly as
    it was (bit for bit), and learn_one then raises the general path's error on the
    unchanged model. At least one of the rows is refused (the check is not vacuous)."""
    X, y = baseline_stream(12)
    fitted = pickle.dumps(pickle.loads(pickle.dumps(est)).fit(X, y))
    before = _fitted(pickle.loads(fitted))
    refused = 0
    for scale in (1e150, 1e200, 1e300, 1.7e308):
        for label, sign in (("pos", 1.0), ("neg", -1.0)):
            row = np.full(X.shape[1], scale)
            probe = pickle.loads(fitted)
            try:
                probe.partial_fit(row.reshape(1, -1), [label])
            except FloatingPointError:
                _same_bits(_fitted(probe), before)
                m = pickle.loads(fitted)
                assert not m._learn_one_in_place(row, sign)
                _same_bits(_fitted(m), before)
                with pytest.raises(FloatingPointError):
                    m.learn_one(row, label)
                _same_bits(_fitted(m), before)
                refused += 1
    assert refused > 0


def _copies(*arrays):
    return [a.copy() for a in arrays]


def test_oam_one_restores_what_the_round_wrote():
    """The kernel's transaction: a row whose pairwise norm overflows (sequential update) or
    whose intercept does (gradient update) leaves w, the buffers, the counts and the
    generator bit for bit; the pass without the transaction (the control) writes them."""
    rng = np.random.default_rng(3)
    p, budget = 5, 4
    X = rng.normal(size=(40, p))
    s = np.where(rng.random(40) < 0.5, 1.0, -1.0)
    for update, C in ((OAM_SEQ, 0.5), (OAM_GRA, 1e150)):
        st = [np.zeros(p), np.zeros((2, budget, p)), np.zeros(2, np.int64),
              np.zeros(2, np.int64), np.array([7], np.uint64)]
        K.oam_pass(X, s, np.arange(40, dtype=np.intp), *st, 0, 0.5, update, np.zeros(2 * p))
        assert st[2].min() == budget                       # full buffers: a replacement
        x = np.full(p, 1e200)
        refused = 0
        for y in (1.0, -1.0):
            saved = _copies(*st)
            icpt = K.oam_one(x, y, *st, C, update, np.full(4 * p, np.nan),
                             np.zeros(budget, np.uint8))
            if not np.isnan(icpt):
                st = saved                                 # committed: start again
                continue
            refused += 1
            for a, b in zip(st, saved):
                assert a.tobytes() == b.tobytes()
            control = _copies(*st)
            try:
                K.oam_pass(x.reshape(1, p), np.array([y]), np.zeros(1, np.intp), *control,
                           0, C, update, np.zeros(2 * p))
            except FloatingPointError:
                pass
            assert any(a.tobytes() != b.tobytes() for a, b in zip(control, saved))
        assert refused > 0
        good = K.oam_one(X[0], 1.0, *st, 0.5, update, np.zeros(4 * p),
                         np.zeros(budget, np.uint8))
        assert np.isfinite(good)


def test_adaoam_one_commits_the_covariance_only_when_it_stays_finite():
    """AdaOAM's covariance update is made last, and only when every term it adds is below
    2^1020 (so it cannot overflow): a row just inside the bound commits a finite state
    equal to the pass's; rows past it are refused with the state bit for bit as it was,
    both one the pass still keeps finite (the bound is conservative: the general path then
    plays it) and one where the pass (the control) makes the covariance non-finite."""
    p = 3

    def state():
        return [np.zeros(p), np.zeros((2, p)), np.zeros((2, p, p)),
                np.array([0, 2], np.int64), np.zeros(p)]

    # x = v in a class of 2 rows at 0: d_old = v, d_new = 2 v / 3, term d_old d_new / 3
    edge = 2.0 ** 509.9 * 1.5                   # the term just under 2^1020: committed
    for value, commits, finite in ((edge, True, True),
                                   (2.0 ** 512, False, True),    # refused: left to the
                                   (2.0 ** 514, False, False)):  # general path
        st, ref = state(), state()
        x = np.full(p, value)
        icpt = K.adaoam_one(x, 1.0, *st, 0.01, 0.1, 1e-3, np.zeros(7 * p))
        K.adaoam_pass(x.reshape(1, p), np.ones(1), np.zeros(1, np.intp), *ref, 0,
                      0.01, 0.1, 1e-3, np.zeros(4 * p))
        assert np.isfinite(ref[2]).all() == finite
        if commits:
            assert icpt == 0.0 and all(np.isfinite(a).all() for a in st)
            for a, b in zip(st, ref):
                np.testing.assert_array_equal(a, b)
            assert np.abs(st[2][1]).max() > 2.0 ** 1018       # the edge was reached
        else:
            assert np.isnan(icpt)
            for a, b in zip(st, state()):
                assert a.tobytes() == b.tobytes()
