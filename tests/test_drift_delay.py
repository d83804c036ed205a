"""forgetting="auto" under delayed labels (``label_delay``) and FTRL-AUC's references
(the class means' scores under the current weights), with the default step."""

import numpy as np
import pytest

import sosl.drift as D
from sosl import OAUCM
from sosl.datasets import make_drift_stream
from sosl.evaluate import prequential
from sosl.ftrl import FTRLAUC


def test_due_answers_a_change_only_after_a_concept_longer_than_twice_the_delay():
    ctl = D.MemoryController(label_delay=100)
    assert ctl.due(150) is False                  # lasted 150 <= 200 rounds
    assert ctl.due(351) is True                   # lasted 201
    assert ctl.due(500) is False                  # lasted 149
    assert ctl.detections == [150, 351, 500] and ctl.unanswered == [150, 500]
    assert D.MemoryController().due(1) is True    # no delay: every change answered
    with pytest.raises(ValueError, match="label_delay"):
        OAUCM(label_delay=10).fit(np.eye(4), [0, 1, 0, 1])
    with pytest.raises(ValueError, match="label_delay"):
        OAUCM(forgetting="auto", label_delay=-1).fit(np.eye(4), [0, 1, 0, 1])


def _recurring():
    # two concepts taking turns every 6,000 rows (the one-row path finds the three changes)
    return make_drift_stream(24_000, 20, drift="recurring", positive_rate=0.05,
                             random_state=1)


def test_changes_shorter_than_twice_the_delay_leave_the_learner_alone(monkeypatch):
    """The concepts last 6,000 rows and the labels come 4,000 late: "auto" told the delay
    detects the changes but answers none, so it is the paper's learner bit for bit; not
    told, it answers them and differs (so does the mutant that answers every detection)."""
    X, y, _ = _recurring()
    d = 4000
    runs = {}
    for name, kw in (("none", {}), ("told", {"forgetting": "auto", "label_delay": d}),
                     ("not told", {"forgetting": "auto"})):
        m = OAUCM(**kw)
        runs[name] = (prequential(m, X, y, delay=d, every=X.shape[0]).final()["auc"], m)
    told = runs["told"][1].drift_
    assert told.detections and told.unanswered == told.detections
    np.testing.assert_array_equal(runs["told"][1].w_, runs["none"][1].w_)
    assert len(runs["not told"][1].drift_.unanswered) == 0
    assert np.abs(runs["not told"][1].w_ - runs["none"][1].w_).max() > 1e-3
    assert runs["told"][0] > runs["not told"][0]
    monkeypatch.setattr(D.MemoryController, "due",
                        lambda self, t: self.detections.append(t) or True)
    mutant = OAUCM(forgetting="auto", label_delay=d)
    prequential(mutant, X, y, delay=d, every=X.shape[0])
    assert np.abs(mutant.w_ - runs["none"][1].w_).max() > 1e-3


def _text(drift="abrupt", seed=2, n=16_000):
    kw = {"drift_at": n // 2} if drift == "abrupt" else {}
    return make_drift_stream(n, 300, kind="text", drift=drift, positive_rate=0.05,
                             random_state=seed, **kw)


def test_ftrl_references_are_the_class_means_under_the_current_weights():
    X, y, _ = _text(drift="none", n=4000)
    m = FTRLAUC(forgetting="auto").fit(X[:2500], y[:2500])
    for i in range(2500, 4000):                             # the one-row path
        m.learn_one(X[i:i + 1], y[i])
    means = m.drift_.means
    assert m.drift_.detections == []
    for k in (0, 1):
        rows = X[y == k]
        np.testing.assert_allclose(means.sums[k], np.asarray(rows.sum(axis=0)).ravel(),
                                   rtol=1e-12, atol=1e-12)
        assert means.weight[k] == rows.shape[0]
    np.testing.assert_allclose(means.dot, means.sums @ m.w_, rtol=1e-9)
    assert np.abs(means.dot).min() > 1e-3


def test_ftrl_defaults_no_early_alarm_and_the_lagging_reference_mutant(monkeypatch):
    """With the default step (gamma="auto") the change at row 8,000 is found within 200
    rows and nothing fires before it. The mutant keeps each row's score under the weights
    it met (the running mean scores FTRL-AUC keeps, which lag the growing weights): it
    fires before the change."""
    X, y, _ = _text()
    m = FTRLAUC(forgetting="auto").fit(X, y)
    det = m.drift_.detections
    assert det and 8000 <= det[0] < 8200, det
    monkeypatch.setattr(D.ClassMeanScores, "touched",
                        lambda self, X, rows, w: (np.zeros(0, dtype=np.intp), np.zeros(0)))
    bad = FTRLAUC(forgetting="auto").fit(X, y)
    assert bad.drift_.detections and bad.drift_.detections[0] < 8000, bad.drift_.detections


def test_ftrl_defaults_stationary_text_no_alarm():
    for seed in (0, 1):
        X, y, _ = _text(drift="none", seed=seed, n=30_000)
        m = FTRLAUC(forgetting="auto").fit(X, y)
        assert m.drift_.detections == [], (seed, m.drift_.detections)
