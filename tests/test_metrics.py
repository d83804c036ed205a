import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from sosl.metrics import auc


@pytest.mark.parametrize("seed", range(10))
def test_auc_equals_sklearn_with_ties(seed):
    rng = np.random.default_rng(seed)
    n = rng.integers(5, 400)
    y = rng.integers(0, 2, size=n)
    y[:2] = [0, 1]
    scores = rng.integers(0, 6, size=n).astype(float)  # many ties
    assert auc(y, scores) == pytest.approx(roc_auc_score(y, scores), abs=1e-12)


def test_auc_invariant_under_increasing_transform_and_label_swap():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, size=300)
    s = rng.normal(size=300)
    a = auc(y, s)
    assert 0.3 < a < 0.7
    assert auc(y, np.exp(3 * s) + 5) == pytest.approx(a, abs=1e-12)
    assert auc(1 - y, s) == pytest.approx(1 - a, abs=1e-12)
    assert auc(y, -s) == pytest.approx(1 - a, abs=1e-12)


def test_auc_hand_example_and_labels():
    assert auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]) == 0.75
    assert auc(["b", "b", "a"], [1, 1, 0], pos_label="a") == 0.0
    assert auc([-1, 1], [2.0, 2.0]) == 0.5


@pytest.mark.parametrize("y,s,match", [
    ([0, 0, 0], [1, 2, 3], "two classes"),
    ([0, 1], [1.0], "entries"),
    ([0, 1], [np.nan, 1.0], "NaN"),
])
def test_auc_errors(y, s, match):
    with pytest.raises(ValueError, match=match):
        auc(y, s)
