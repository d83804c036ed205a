"""SketchedOAUCM's typed one-row paths (``learn_one`` and ``score_one`` through the bound
``sosl._core._sketch.Stepper``) on a capped model: the general path's bits, the state as it
was after a failed round, rebinding when the state arrays are replaced."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp

from sosl import sketch as sketch_module
from sosl.sketch import SketchedOAUCM

from .test_sketch_capped import _fitted, _sparse_data, _stream


def _spy_general_path(monkeypatch):
    calls = []
    original = SketchedOAUCM._learn_validated
    monkeypatch.setattr(SketchedOAUCM, "_learn_validated",
                        lambda self, *a, **k: calls.append(1) or original(self, *a, **k))
    return calls


def test_typed_one_row_path_equals_partial_fit_bit_for_bit(monkeypatch):
    """A capped model's learn_one plays the round on the live state (the general path is
    not taken) and equals a one-row partial_fit in every fitted array, through promotions,
    shrinks, new columns and capacity growth."""
    X, y = _sparse_data(n=220, p=60)
    kw = dict(rank=2, lam=0.01, eta=0.1, max_columns=5)
    a = SketchedOAUCM(**kw).partial_fit(X[:3], y[:3], classes=[0, 1])
    b = pickle.loads(pickle.dumps(a))
    calls = _spy_general_path(monkeypatch)
    slots_seen = set()
    for i in range(3, 220):
        b.learn_one(X[i], y[i])
        slots_seen.add(tuple(b.slot_columns_[:b.n_slots_]))
    assert calls == []                                     # the typed path took every row
    for i in range(3, 220):
        a.partial_fit(X[i], y[i:i + 1])
    assert len(calls) == 217 and len(slots_seen) > 3        # the tracked set changed
    fa, fb = _fitted(a), _fitted(b)
    assert fa.keys() == fb.keys()
    for key, value in fa.items():
        np.testing.assert_array_equal(fb[key], value, err_msg=key)
    np.testing.assert_array_equal(b.predict_proba(X), a.predict_proba(X))


def test_typed_one_row_path_restores_what_it_wrote_on_failure(monkeypatch):
    """Rows whose round overflows, at every fill level of the sketches (shrinks and
    promotions at stake): the typed path restores every array and hands over to the
    general path, which raises; the model then goes on as one that never saw them."""
    X, y = _sparse_data(n=220, p=60)
    model = SketchedOAUCM(rank=2, lam=0.01, eta=0.05, max_columns=5).fit(X[:40], y[:40])
    twin = pickle.loads(pickle.dumps(model))
    in_place = []
    original = SketchedOAUCM._learn_one_in_place
    monkeypatch.setattr(SketchedOAUCM, "_learn_one_in_place",
                        lambda self, x, s: in_place.append(original(self, x, s)) or in_place[-1])
    for i in range(40, 60):
        before = _fitted(model)
        big = X[i] * 1e200 + sp.csr_matrix(np.full((1, X.shape[1]), 1e200))
        with pytest.raises(FloatingPointError, match="non-finite"):
            model.learn_one(big, y[i])
        assert in_place[-1] is False
        for key, value in before.items():
            np.testing.assert_array_equal(getattr(model, key), value, err_msg=key)
        model.learn_one(X[i], y[i])
        twin.learn_one(X[i], y[i])
        assert in_place[-1] is True
    for key, value in _fitted(twin).items():
        np.testing.assert_array_equal(getattr(model, key), value, err_msg=key)
    # a mutant that saves no sketch row is caught: the failed call leaves a written row
    monkeypatch.setattr(sketch_module, "_ONE_ROW_SAVES_SKETCH", [False])
    before = model.sketches_.copy()
    seen = np.flatnonzero(model.column_map_ >= 0)
    held = seen[model.column_slots_[model.column_map_[seen]] >= 0]     # tracked: no promotion
    big = sp.csr_matrix((np.full(held.size, 1e200), (np.zeros(held.size, int), held)),
                        shape=(1, X.shape[1]))
    with pytest.raises(FloatingPointError):
        model.learn_one(big, 1)
    assert not np.array_equal(model.sketches_, before)


def test_typed_one_row_path_takes_dense_rows_bit_for_bit(monkeypatch):
    """A dense float64 row takes the typed path too (its non-zero entries, with the general
    path's dense pre-score) and equals a one-row partial_fit of the same dense row in every
    fitted array, through promotions and new columns; a NaN in a column never seen (which
    the pre-score does not read) is still refused with the model unchanged. The mutant (the
    pre-score of the model after the round) is caught."""
    X, s = _stream(seed=3, n=200, p=24)
    y = (s > 0).astype(int)
    kw = dict(rank=2, lam=0.01, eta=0.1, max_columns=5)
    a = SketchedOAUCM(**kw).partial_fit(X[:20], y[:20], classes=[0, 1])
    b = pickle.loads(pickle.dumps(a))
    calls = _spy_general_path(monkeypatch)
    for i in range(20, 200):
        b.learn_one(X[i], y[i])
    assert calls == []                                     # the typed path took every row
    for i in range(20, 200):
        a.partial_fit(X[i:i + 1], y[i:i + 1])
    assert len(calls) == 180
    fa, fb = _fitted(a), _fitted(b)
    for key, value in fa.items():
        np.testing.assert_array_equal(fb[key], value, err_msg=key)
    unseen = np.flatnonzero(b.column_map_ < 0)
    bad = X[0].copy()
    bad[unseen[0] if unseen.size else 0] = np.nan
    before = _fitted(b)
    with pytest.raises(ValueError, match="NaN or infinity"):
        b.learn_one(bad, 1)
    for key, value in before.items():
        np.testing.assert_array_equal(getattr(b, key), value, err_msg=key)
    # mutant: the Platt step on the score after the round
    c = pickle.loads(pickle.dumps(b))
    d = pickle.loads(pickle.dumps(b))
    c.learn_one(X[5], y[5])
    monkeypatch.setattr(sketch_module, "_ONE_ROW_SCORES_FIRST", [False])
    d.learn_one(X[5], y[5])
    assert np.array_equal(c.coef_, d.coef_)                 # the same round
    assert not np.array_equal(c.calibration_, d.calibration_)


def test_typed_score_one_equals_decision_function_bit_for_bit(monkeypatch):
    """score_one of a fitted model runs the bound stepper's typed scorer (no validation
    pass) on dense and CSR rows and gives decision_function's bits on the same row, the
    lazy weights of untracked columns included (a dense row and its CSR form alike); rows
    it does not take (a NaN, another width, int64 indices, unsorted indices) go to the
    general path, which refuses or scores them. The mutant, a stale stepper kept after a
    partial_fit replaced the arrays, is caught."""
    X, y = _sparse_data(n=220, p=60)
    model = SketchedOAUCM(rank=2, lam=0.01, eta=0.1, max_columns=5).fit(X[:150], y[:150])
    assert (model.column_slots_[:model.n_active_] < 0).sum() > 5      # untracked columns
    general = []
    real = SketchedOAUCM._validate_row
    monkeypatch.setattr(SketchedOAUCM, "_validate_row",
                        lambda self, x: general.append(1) or real(self, x))
    dense = X.toarray()
    scores = []
    for i in range(150, 220):
        f, g = model.score_one(dense[i]), model.score_one(X[i])
        scores.append(f)
        assert f == g == model.decision_function(X[i])[0]
        assert f == model.decision_function(dense[i:i + 1])[0]
        assert f == pytest.approx(dense[i] @ model.coef_[0] + model.intercept_[0],
                                  rel=1e-12, abs=1e-14)
    assert general == [] and np.ptp(scores) > 0.1
    bad = dense[150].copy()
    bad[np.flatnonzero(model.column_map_ < 0)[0]] = np.nan            # a column never seen
    with pytest.raises(ValueError, match="NaN or infinity"):
        model.score_one(bad)
    with pytest.raises(ValueError, match="expected"):
        model.score_one(dense[150, :-1])
    wide = X[150].copy()
    wide.indices = wide.indices.astype(np.int64)
    backwards = sp.csr_matrix((X[150].data[::-1], X[150].indices[::-1], X[150].indptr),
                              shape=(1, X.shape[1]))
    assert model.score_one(wide) == model.score_one(backwards) == scores[0]
    assert len(general) == 4
    # mutant: a stepper bound to the arrays a general-path call has since replaced
    stale = model._stepper()
    model.partial_fit(X[150:160], y[150:160])
    fresh = model.score_one(dense[200])
    model.__dict__["_stepper_"] = stale
    assert model.score_one(dense[200]) != fresh


def test_assigned_state_rebinds_the_typed_one_row_path(monkeypatch):
    """Assigning a fitted attribute (a state set by hand, as sosl.dask does with the
    calibration) drops the bound stepper, so the next learn_one plays on the new array and
    equals a one-row partial_fit from the same state; the mutant (no rebinding) is caught."""
    from sosl._base import BaseOnlineAUC
    X, y = _sparse_data(n=120, p=60)
    kw = dict(rank=2, lam=0.01, eta=0.1, max_columns=5)
    base = SketchedOAUCM(**kw).fit(X[:100], y[:100])
    calib = np.array([0.5, 2.0])
    models = []
    def no_rebinding(self, name, value):                   # the base's, without the drop
        if not name.endswith("_") and not name.startswith("_"):
            self.__dict__["_params_ok"] = False
        object.__setattr__(self, name, value)

    for mutant in (False, True):
        if mutant:
            monkeypatch.setattr(BaseOnlineAUC, "__setattr__", no_rebinding)
        a = pickle.loads(pickle.dumps(base))
        a.learn_one(X[100], y[100])                        # binds a stepper
        a.calibration_ = calib.copy()
        a.learn_one(X[101], y[101])
        models.append(a)
    b = pickle.loads(pickle.dumps(base))
    b.partial_fit(X[100], y[100:101])
    b.calibration_ = calib.copy()
    b.partial_fit(X[101], y[101:102])
    np.testing.assert_array_equal(models[0].calibration_, b.calibration_)
    np.testing.assert_array_equal(models[0].coef_, b.coef_)
    assert not np.array_equal(models[1].calibration_, b.calibration_)


def test_non_canonical_csr_rows_take_the_general_path(monkeypatch):
    """learn_one on a CSR row with unsorted indices, with a duplicated column (summed by
    the general path) or with int64 indices is refused by the typed path and played by the
    general one, with the bits of a one-row partial_fit of its canonical form."""
    X, y = _sparse_data(n=120, p=60)
    model = SketchedOAUCM(rank=2, lam=0.01, eta=0.1, max_columns=5).fit(X[:100], y[:100])
    twin = pickle.loads(pickle.dumps(model))
    calls = _spy_general_path(monkeypatch)
    data, idx, p = X[100].data, X[100].indices, X.shape[1]
    unsorted = sp.csr_matrix((data[::-1], idx[::-1], [0, idx.size]), shape=(1, p))
    doubled = sp.csr_matrix((np.r_[data, 0.5], np.r_[idx, idx[0]], [0, idx.size + 1]),
                            shape=(1, p))                    # column idx[0] twice
    wide = X[101].copy()
    wide.indices = wide.indices.astype(np.int64)
    for x, i in ((unsorted, 100), (doubled, 100), (wide, 101)):
        assert not (x.has_canonical_format and x.indices.dtype == np.int32)
        model.learn_one(x, y[i])
        canonical = x.copy()
        canonical.sum_duplicates()
        twin.partial_fit(canonical, y[i:i + 1])
    assert len(calls) == 6                       # three learn_one, three partial_fit calls
    for key, value in _fitted(twin).items():
        np.testing.assert_array_equal(getattr(model, key), value, err_msg=key)
