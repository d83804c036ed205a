"""Weighted metrics against scikit-learn at weights whose sums or products overflow.

The metrics are ratios of weight sums (AUC: a sum of products of positive and negative
weights over the product of the class totals), so a uniform scale of the weights must not
change them; sosl scales the weights by a power of two before it multiplies.
"""

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, roc_auc_score

from sosl import _metrics_batch as batch  # the module the batch functions read it in
from sosl.metrics import auc, average_precision, partial_auc

Y, S = [0, 1, 0, 1], [0.1, 0.9, 0.2, 0.3]


def test_issue_reproducers_equal_sklearn():
    assert auc(Y, S, sample_weight=[1e200] * 4) == roc_auc_score(Y, S, sample_weight=[1e200] * 4)
    assert auc(Y, S, sample_weight=[1e200] * 4) == 1.0
    ref = roc_auc_score(Y, S, sample_weight=[1e160] * 4, max_fpr=0.5)
    assert partial_auc(Y, S, 0.5, sample_weight=[1e160] * 4) == ref == 1.0


@pytest.mark.parametrize("scale", [1e-300, 1e-150, 1.0, 1e150, 1e200, 1e300, 1.7e308])
@pytest.mark.parametrize("seed", [0, 1])
def test_weighted_metrics_equal_sklearn_at_any_scale(scale, seed):
    rng = np.random.default_rng(seed)
    n = 60
    y = rng.integers(0, 2, n)
    y[:2] = [0, 1]
    s = np.round(rng.normal(size=n), 1)                 # ties
    w = rng.uniform(0.1, 1.0, n) * scale
    got = auc(y, s, sample_weight=w)
    assert np.isfinite(got)
    assert got == pytest.approx(roc_auc_score(y, s, sample_weight=w / scale), abs=1e-12)
    for m in (0.1, 0.5):
        assert partial_auc(y, s, m, sample_weight=w) == pytest.approx(
            roc_auc_score(y, s, sample_weight=w / scale, max_fpr=m), abs=1e-12)
    assert average_precision(y, s, sample_weight=w) == pytest.approx(
        average_precision_score(y, s, sample_weight=w / scale), abs=1e-12)


def test_unscaled_products_overflow(monkeypatch):
    """Mutant: without the scaling the reproducer is NaN again (the test above can fail)."""
    real = batch._binary_input

    def unscaled(y_true, y_score, sample_weight, pos_label, need_negative=True):
        pos, score, w = real(y_true, y_score, None, pos_label, need_negative)
        return pos, score, None if sample_weight is None else np.asarray(sample_weight, float)

    monkeypatch.setattr(batch, "_binary_input", unscaled)
    with np.errstate(all="ignore"):
        assert not np.isfinite(auc(Y, S, sample_weight=[1e200] * 4))
        assert not np.isfinite(partial_auc(Y, S, 0.5, sample_weight=[1e160] * 4))
