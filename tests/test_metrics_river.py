"""The exact river metrics: progressive validation gives scikit-learn's numbers."""

import numpy as np
import pytest

pytest.importorskip("river", reason="river is not installed (pip install 'sosl[river]')")

from river import evaluate, linear_model, preprocessing, stream, utils  # noqa: E402
from sklearn.metrics import average_precision_score, roc_auc_score  # noqa: E402

from sosl._river_metrics import (  # noqa: E402
    ExactAveragePrecision,
    ExactPartialROCAUC,
    ExactROCAUC,
)
from sosl.datasets import make_imbalanced_stream  # noqa: E402
from sosl.metrics import RollingAUC  # noqa: E402


def _data(seed, n=600):
    X, y = make_imbalanced_stream(n, 4, imbalance_ratio=8.0, class_sep=2.0, random_state=seed)
    return X, y.astype(bool)


def _model():
    return preprocessing.StandardScaler() | linear_model.LogisticRegression()


def _collected(X, y):
    """(label, probability of True) of river's test-then-train loop, written out."""
    model, probs = _model(), []
    for x, t in stream.iter_array(X, y):
        probs.append(model.predict_proba_one(x).get(True, 0.0))
        model.learn_one(x, t)
    return np.asarray(probs)


def _sklearn(y, p):
    return {"ExactROCAUC": roc_auc_score(y, p),
            "ExactPartialROCAUC": roc_auc_score(y, p, max_fpr=0.1),
            "ExactAveragePrecision": average_precision_score(y, p)}


@pytest.mark.parametrize("seed", [0, 1])
def test_progressive_val_score_equals_sklearn_on_the_collected_pairs(seed):
    X, y = _data(seed)
    metric = ExactROCAUC() + ExactPartialROCAUC(max_fpr=0.1) + ExactAveragePrecision()
    out = evaluate.progressive_val_score(stream.iter_array(X, y), _model(), metric)
    p = _collected(X, y)
    assert np.unique(p).shape[0] > 100 and 20 < y.sum() < 200
    want = _sklearn(y, p)
    got = {type(m).__name__: m.get() for m in out}
    assert got.keys() == want.keys()
    for name in want:
        assert got[name] == pytest.approx(want[name], rel=1e-12, abs=1e-12), name
    assert all(0.1 < v < 0.999 for v in want.values())          # not trivial values
    assert len({round(v, 6) for v in want.values()}) == 3


class _WrongColumn(ExactROCAUC):
    """Mutant: ranks by the probability of the negative class."""

    def _score(self, y_pred):
        return y_pred.get(False, 0.0) if isinstance(y_pred, dict) else 1 - y_pred


def test_progressive_check_catches_the_wrong_probability_column():
    X, y = _data(0)
    out = evaluate.progressive_val_score(stream.iter_array(X, y), _model(), _WrongColumn())
    assert abs(out.get() - roc_auc_score(y, _collected(X, y))) > 0.1


def test_river_rolling_over_revert_equals_rolling_auc_on_every_window():
    rng = np.random.default_rng(3)
    y = rng.random(200) < 0.3
    p = rng.integers(0, 12, size=200) / 11.0  # probabilities with ties
    window = 30
    rolled, ours = utils.Rolling(ExactROCAUC, window_size=window), RollingAUC(window)
    checked = 0
    for i in range(200):
        rolled.update(bool(y[i]), {True: p[i], False: 1 - p[i]})
        ours.update(bool(y[i]), p[i])
        lo = max(0, i + 1 - window)
        if y[lo:i + 1].min() == y[lo:i + 1].max():
            assert np.isnan(rolled.get()) and np.isnan(ours.get())
            continue
        want = roc_auc_score(y[lo:i + 1], p[lo:i + 1])
        assert rolled.get() == pytest.approx(want, abs=1e-12)
        assert ours.get() == pytest.approx(want, abs=1e-12)
        checked += 1
    assert checked > 150


def test_pos_val_plain_scores_and_the_river_interface():
    ys = ["spam", "ham", "spam", "ham", "ham"]
    ps = [0.9, 0.2, 0.4, 0.6, 0.1]
    m = ExactAveragePrecision(pos_val="spam")
    for t, q in zip(ys, ps):
        m.update(t, {"spam": q, "ham": 1 - q})
    want = average_precision_score(np.asarray(ys) == "spam", ps)
    assert m.get() == pytest.approx(want, abs=1e-12)
    scored = ExactROCAUC()
    for t, q in zip(ys, ps):
        scored.update(t == "spam", q)          # a plain number as y_pred
    assert scored.get() == pytest.approx(roc_auc_score(np.asarray(ys) == "spam", ps))
    fresh = ExactPartialROCAUC(max_fpr=0.3).clone()
    assert fresh.max_fpr == 0.3 and np.isnan(fresh.get())
    assert not m.requires_labels and m.bigger_is_better and not m.works_with_weights
    assert m.works_with(linear_model.LogisticRegression())
    assert not m.works_with(linear_model.LinearRegression())


def test_weights_and_absent_reverts_are_refused_and_the_metric_kept():
    m = ExactROCAUC()
    m.update(True, 0.8)
    m.update(False, 0.3)
    with pytest.raises(ValueError, match="weights"):
        m.update(True, 0.1, w=2.0)
    with pytest.raises(ValueError, match="held"):
        m.revert(True, 0.3)
    assert m.get() == 1.0
    m.revert(True, 0.8)
    assert np.isnan(m.get())
    with pytest.raises(ValueError, match="max_fpr"):
        ExactPartialROCAUC(max_fpr=0)
