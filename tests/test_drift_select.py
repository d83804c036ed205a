"""forgetting="auto" of the moment learners: two memories and the evidence between them
(sosl._drift_select)."""

import numpy as np
import pytest

import sosl._drift_select as S
from sosl import OAUCM
from sosl.datasets import make_drift_stream
from sosl.evaluate import prequential


def _rotating(n, p=6, rate=0.05, turn=3e-4, seed=0):
    """Class-conditional Gaussians whose separating direction turns by ``turn`` radians
    a row in the plane of the first two features (a third of a turn over 20,000 rows,
    the concept at the end nearly opposed to the one at the start): a continuous drift,
    no change point."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < rate).astype(np.int64)
    angle = turn * np.arange(n)
    d = np.zeros((n, p))
    d[:, 0], d[:, 1] = np.cos(angle), np.sin(angle)
    X = rng.standard_normal((n, p)) + 1.5 * (2 * y[:, None] - 1) * d
    return X, y


def test_the_model_is_the_leading_candidate(monkeypatch):
    """The learner's arrays are those of the candidate leading, bit for bit: the
    detector's candidate (run alone: the fixed factor's never leads) or OAUC-M with
    forgetting=0.99, each fitted on the same rows by itself; the other is the shadow."""
    X, y = _rotating(12_000)
    auto = OAUCM(forgetting="auto").fit(X, y)
    sel = auto.drift_.selector
    assert len(sel.switches) >= 1
    short = OAUCM(forgetting=S.SHORT).fit(X, y)
    monkeypatch.setattr(S.MemorySelector, "observe", lambda self, f, positive: False)
    alone = OAUCM(forgetting="auto").fit(X, y)
    assert alone.drift_.selector.switches == []
    lead, other = (alone, short) if sel.detector_leads else (short, alone)
    assert not np.allclose(lead.w_, other.w_)
    for name in ("w_", "means_", "scatter_", "scales_", "weights_", "counts_"):
        np.testing.assert_allclose(getattr(auto, name), getattr(lead, name), rtol=1e-12,
                                   atol=1e-12)
        np.testing.assert_allclose(sel.shadow[name], getattr(other, name), rtol=1e-12,
                                   atol=1e-12)
    assert auto.t_ == short.t_ == alone.t_ == X.shape[0]


def test_a_continuous_drift_is_followed_and_a_stationary_stream_left_alone(monkeypatch):
    X, y = _rotating(20_000, seed=1)
    runs = {}
    for f in (1.0, 0.99, "auto"):
        m = OAUCM(forgetting=f)
        runs[f] = prequential(m, X, y, every=X.shape[0]).final()["auc"]
    assert m.drift_.detections == []               # no change point for the detector
    assert len(m.drift_.selector.switches) >= 1
    assert runs["auto"] > runs[1.0] + 0.005 and runs["auto"] > runs[0.99] - 0.002, runs
    # mutant: the fixed factor's candidate never leads; "auto" is then no forgetting
    monkeypatch.setattr(S.MemorySelector, "observe", lambda self, f, positive: False)
    off = prequential(OAUCM(forgetting="auto"), X, y, every=X.shape[0]).final()["auc"]
    assert off == pytest.approx(runs[1.0], abs=1e-9)
    monkeypatch.undo()
    # negative control of the rule: no switch on stationary streams
    for seed in (2, 3):
        Xs, ys, _ = make_drift_stream(40_000, 10, drift="none", positive_rate=0.02,
                                      random_state=seed)
        m = OAUCM(forgetting="auto").fit(Xs, ys)
        assert m.drift_.selector.switches == []


def test_evidence_is_taken_at_scoring_time():
    """With a label delay d the scores the evidence compares are those of the
    candidates d rounds before (snapshots every d // 16 rounds), None before the first
    snapshot that old."""
    sel = S.MemorySelector({}, label_delay=32)
    assert sel.stride == 2
    seen = {}
    for t in range(0, 100):
        w = np.full(2, float(t))
        got = sel.scoring_weights(t, (w, 0.0, -w, 0.0))
        seen[t] = None if got is None else got[0][0]
    assert all(seen[t] is None for t in range(32))
    for t in range(32, 100):
        assert t - 32 - sel.stride < seen[t] <= t - 32, (t, seen[t])
    # no delay: the candidates as they are
    now = S.MemorySelector({}, label_delay=0)
    w = np.ones(3)
    assert now.scoring_weights(5, (w, 1.0, w, 2.0))[3] == 2.0


def test_the_rule_waits_for_evidence_and_a_significant_gain():
    sel = S.MemorySelector({}, label_delay=0)
    rng = np.random.default_rng(0)
    # candidate 1 better by a clear margin: the lead changes, but not before `start`
    fired = []
    for _ in range(6000):
        pos = rng.random() < 0.1
        base = rng.standard_normal() + (1.0 if pos else 0.0)
        f = np.array([base + rng.standard_normal(), base + (0.6 if pos else -0.6)])
        if sel.observe(f, pos):
            fired.append(sel.seen)
            break
    assert fired and fired[0] >= sel.start
    # two equal candidates: never
    eq = S.MemorySelector({}, label_delay=0)
    for _ in range(6000):
        pos = rng.random() < 0.1
        f = rng.standard_normal(2) + (1.0 if pos else 0.0)
        assert not eq.observe(f, pos)


def test_one_row_path_plays_what_the_batch_path_plays(monkeypatch):
    """learn_one (typed steppers on the learner's and the shadow's arrays) and one-row
    partial_fit (the general pass) give the same candidates and the same switches; a
    pickle in the middle changes nothing."""
    import pickle

    import sosl.drift as D

    X, y = _rotating(9_000, seed=3)
    one, gen = OAUCM(forgetting="auto"), OAUCM(forgetting="auto")
    with monkeypatch.context() as mp:            # gen: the general path, every row
        mp.setattr(D, "linear_one_row", lambda *args: False)
        gen.partial_fit(X[:1], y[:1], classes=[0, 1])
        for i in range(1, X.shape[0]):
            gen.partial_fit(X[i:i + 1], y[i:i + 1])
    one.learn_one(X[0], y[0], classes=[0, 1])
    for i in range(1, X.shape[0]):
        one.learn_one(X[i], y[i])
        if i == 4_000:
            one = pickle.loads(pickle.dumps(one))
    a, b = one.drift_.selector, gen.drift_.selector
    assert a._steppers is not None and b._steppers is None   # the typed path ran
    assert a.switches == b.switches and len(a.switches) >= 1
    for name in ("w_", "means_", "scatter_", "weights_"):
        np.testing.assert_allclose(getattr(one, name), getattr(gen, name), rtol=1e-12,
                                   atol=1e-12)
        np.testing.assert_allclose(a.shadow[name], b.shadow[name], rtol=1e-12, atol=1e-12)
    # mutant: the one-row path skips the round of the candidate not leading
    real = D.linear_one_row

    def lazy(model, st, x, s, safe_p):
        sel = model.__dict__["drift_"].selector
        keep = {k: v.copy() for k, v in sel.shadow.items() if isinstance(v, np.ndarray)}
        ok = real(model, st, x, s, safe_p)
        if ok and not sel.switches:
            for k, v in keep.items():
                sel.shadow[k][...] = v
        return ok

    monkeypatch.setattr(D, "linear_one_row", lazy)
    bad = OAUCM(forgetting="auto")
    bad.learn_one(X[0], y[0], classes=[0, 1])
    for i in range(1, X.shape[0]):
        bad.learn_one(X[i], y[i])
    assert bad.drift_.selector.switches != b.switches or not np.allclose(bad.w_, gen.w_)


def test_no_lead_to_the_short_memory_within_two_delays_of_a_detection():
    sel = S.MemorySelector({}, label_delay=100)
    assert sel.may_switch(0)
    sel.detected(500)
    assert not sel.may_switch(699) and sel.may_switch(700)
    sel.detector_leads = False                   # back to the detector: never held
    assert sel.may_switch(600)
    # no delay: a detection holds nothing
    now = S.MemorySelector({}, label_delay=0)
    now.detected(500)
    assert now.may_switch(500)


def test_a_change_of_lead_keeps_the_largest_row_seen():
    """max_abs_ (the largest |x| seen, which the one-row path's no-copy proof reads) is
    the stream's, not a candidate's: a swap leaves it (mutant: it swapped in the shadow's
    value, stale since the shadow was made)."""
    X, y = _rotating(9_000, seed=3)
    X[:200] *= 3.0                      # the largest rows come before any change of lead
    m = OAUCM(forgetting="auto")
    m.learn_one(X[0], y[0], classes=[0, 1])
    for i in range(1, X.shape[0]):
        m.learn_one(X[i], y[i])
    assert len(m.drift_.selector.switches) >= 1
    assert m.max_abs_ == pytest.approx(np.abs(X).max(), rel=0, abs=0)
