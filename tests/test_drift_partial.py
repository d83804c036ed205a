"""forgetting="auto" for PartialOAUCM (sosl.drift drives its pass as OAUC-M's)."""

import numpy as np
import pytest

import sosl._drift_select as S
import sosl.drift as D
from sosl import PartialOAUCM
from sosl.datasets import make_drift_stream
from sosl.metrics import partial_auc

N = 30_000


def _fit_tail(forgetting, **kw):
    X, y, _ = make_drift_stream(N, 10, drift_at=N // 2, positive_rate=0.05, random_state=1)
    m = PartialOAUCM(max_fpr=0.05, forgetting=forgetting, **kw).fit(X[:-5000], y[:-5000])
    # the last 5,000 rows (new concept) scored by the model that has not learned them
    return m, partial_auc(y[-5000:], m.decision_function(X[-5000:]), max_fpr=0.05)


def test_partial_auto_answers_the_change(monkeypatch):
    none, p_none = _fit_tail(1.0)
    auto, p_auto = _fit_tail("auto")
    det = auto.drift_.detections
    assert len(det) == 1 and N // 2 <= det[0] < N // 2 + 300, det
    assert p_auto > p_none + 0.02, (p_auto, p_none)
    assert auto.budget_filled_ > 0                     # the budget's negatives kept coming
    # mutant: the answer switched off (and the fixed factor's candidate never leading);
    # "auto" is then the learner without forgetting bit for bit
    monkeypatch.setattr(S.MemorySelector, "observe", lambda self, f, positive: False)
    monkeypatch.setattr(D.MemoryController, "keep_factors", lambda self, w, c: np.ones(2))
    monkeypatch.setattr(D.MemoryController, "restart", lambda self, t, c: None)
    off, _ = _fit_tail("auto")
    np.testing.assert_array_equal(off.w_, none.w_)
    assert not np.array_equal(auto.w_, none.w_)


def test_partial_auto_parameters():
    X, y, _ = make_drift_stream(600, 4, positive_rate=0.2, random_state=0)
    with pytest.raises(ValueError, match="forgetting='auto' only"):
        PartialOAUCM(label_delay=5).fit(X, y)
    with pytest.raises(TypeError, match="drift_detected"):
        PartialOAUCM(forgetting="auto", detector=object()).fit(X, y)
    m = PartialOAUCM(forgetting="auto", label_delay=100).fit(X, y)
    assert m.drift_.label_delay == 100 and m.t_ == 600
    a = PartialOAUCM(forgetting=0.99).fit(X, y)      # a fixed factor: the plain pass
    assert "drift_" not in a.__dict__


def test_partial_auto_answer_restarts_the_average(monkeypatch):
    """A detected change restarts the averaged weights at the iterate: a detection on the
    last row leaves w_avg_ == w_; with no detection (the mutant: no restart) the average
    still holds the earlier iterates."""
    X, y, _ = make_drift_stream(900, 4, positive_rate=0.2, random_state=2)
    plain = PartialOAUCM(forgetting="auto").fit(X, y)
    assert np.abs(plain.w_avg_ - plain.w_).max() > 1e-3
    calls = []

    def observe(self, score, positive, ref_neg, ref_pos):
        calls.append(1)
        return len(calls) == X.shape[0]             # a change seen on the last row

    monkeypatch.setattr(D.MemoryController, "observe", observe)
    monkeypatch.setattr(D.MemoryController, "due", lambda self, t: True)
    m = PartialOAUCM(forgetting="auto").fit(X, y)
    assert len(calls) == X.shape[0]
    np.testing.assert_array_equal(m.w_, plain.w_)   # the rows played as before the answer
    np.testing.assert_array_equal(m.w_avg_, m.w_)
