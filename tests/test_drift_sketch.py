"""forgetting="auto" for SketchedOAUCM: the answer on the compact state keeps weights,
means and covariance estimate; the change is found and answered."""

import copy
import pickle

import numpy as np
import pytest
import scipy.sparse as sp

import sosl.drift as D
from sosl.datasets import make_drift_stream
from sosl.ftrl import FTRLAUC
from sosl.metrics import auc
from sosl.sketch import SketchedOAUCM


def _capped():
    # 600 columns, 64 slots: most columns untracked (lazy weights, raw sums)
    X, y, _ = make_drift_stream(3000, 600, kind="text", drift="none", positive_rate=0.1,
                                random_state=0)
    m = SketchedOAUCM(rank=8, lam=1e-3).fit(X, y)
    assert m.n_active_ > m.n_slots_ == 64
    return m, X


def _untracked_sums(m):
    """Pv and Qm recomputed from their definitions over the untracked columns (C3)."""
    cols = np.flatnonzero(m.column_slots_[:m.n_active_] < 0)
    S = m.untracked_sums_
    W = np.where(m.untracked_epochs_[cols] == m.untracked_epoch_,
                 m.untracked_weights_[cols], 0.0)
    u = np.vstack([W, S[0, 0, cols], S[0, 1, cols]])               # (3, |U|)
    Pv = np.stack([(u * S[0, c, cols]).sum(axis=1) for c in (0, 1)])
    T = np.vstack([S[1, 0, cols], S[1, 1, cols], S[0, 0, cols] ** 2, S[0, 1, cols] ** 2])
    Qm = np.einsum("tj,aj,bj->tab", T, u, u)
    return Pv, Qm


def _answered(m, g, a):
    state = {name: getattr(m, name) for name in m._state_names}
    D.sketch_answer(state, g, a)
    out = copy.deepcopy(m)
    for name, value in state.items():
        setattr(out, name, value)
    return out


def test_sketch_answer_keeps_weights_means_and_covariance():
    m, X = _capped()
    N = m.counts_.astype(float)
    kept = np.array([300.0, 40.0])
    g = kept / N
    b = _answered(m, g, 0.25)
    np.testing.assert_array_equal(b.counts_, kept.astype(np.int64))
    np.testing.assert_allclose(b.coef_, m.coef_, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(b.means_, m.means_, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(b.decision_function(X), m.decision_function(X), rtol=1e-10,
                               atol=1e-12)
    for c in (0, 1):                                       # B'B / N and the diagonals / N
        Bm, Bb = m.sketches_[c], b.sketches_[c]
        np.testing.assert_allclose(Bb.T @ Bb / kept[c], Bm.T @ Bm / N[c], rtol=1e-12,
                                   atol=1e-15)
        np.testing.assert_allclose(b.scatter_diag_[c] / kept[c], m.scatter_diag_[c] / N[c],
                                   rtol=1e-12)
    Pv, Qm = _untracked_sums(b)                            # (C3) holds after the answer
    assert np.abs(Pv).max() > 0 and np.abs(Qm).max() > 0
    np.testing.assert_allclose(b.untracked_lin_, Pv, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(b.untracked_quad_, Qm, rtol=1e-9, atol=1e-12)
    assert b.untracked_scale_[0] == pytest.approx(4.0 * m.untracked_scale_[0])
    # mutant: the drift accumulators H left as they were; the untracked weights move
    bad = copy.deepcopy(b)
    bad.untracked_scale_ = b.untracked_scale_ * np.r_[1.0, g / 0.25]
    assert np.abs(bad.coef_ - m.coef_).max() > 1e-6


def _abrupt(n=30_000):
    X, y, _ = make_drift_stream(n, 10, drift_at=n // 2, positive_rate=0.05, random_state=1)
    return sp.csr_matrix(X), y


def test_sketch_auto_finds_and_answers_a_change():
    X, y = _abrupt()
    tail = {}
    for f in (1.0, "auto"):
        m = SketchedOAUCM(forgetting=f).fit(X[:-5000], y[:-5000])
        tail[f] = auc(y[-5000:], m.decision_function(X[-5000:]))
    det = m.drift_.detections
    assert len(det) == 1 and 15_000 <= det[0] < 15_300, det
    assert tail["auto"] > tail[1.0] + 0.02, tail
    assert m.counts_.sum() < 25_000 - 10_000            # the memory was shortened


def test_sketch_auto_fit_equals_chunked_partial_fit_pickle_and_learn_one():
    X, y = _abrupt(n=12_000)
    a = SketchedOAUCM(forgetting="auto").fit(X, y)
    b = SketchedOAUCM(forgetting="auto")
    for lo in range(0, 11_520, 320):                      # chunk boundaries line up
        b.partial_fit(X[lo:lo + 320], y[lo:lo + 320], classes=[0, 1])
        if lo == 3200:
            b = pickle.loads(pickle.dumps(b))
    for i in range(11_520, 12_000):                       # rows of one: the general path
        b.learn_one(X[i], y[i])
    assert len(a.drift_.detections) == 1 and a.drift_.detections == b.drift_.detections
    assert a.t_ == b.t_ == 12_000
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match="forgetting"):
        SketchedOAUCM(forgetting=0.99).fit(X, y)
    with pytest.raises(ValueError, match="forgetting='auto' only"):
        SketchedOAUCM(label_delay=3).fit(X, y)


@pytest.mark.parametrize("make", [lambda: SketchedOAUCM(forgetting="auto", max_columns=None),
                                  lambda: FTRLAUC(forgetting="auto")])
def test_auto_states_do_not_merge(make):
    from sosl.state import merge

    X, y, _ = make_drift_stream(600, 120, kind="text", positive_rate=0.2, random_state=0)
    a, b = make().fit(X[:300], y[:300]), make().fit(X[300:], y[300:])
    with pytest.raises(ValueError, match="do not merge"):
        merge([a.get_state(), b.get_state()])
