"""The river adapter on a real text stream: the SMS Spam Collection through ``BagOfWords``.

Needs ``$SOSL_DATA_DIR/highdim/SMSSpamCollection`` (skipped otherwise). Timings are in
``benchmarks/bench_river.py``, not here.
"""

import os

import numpy as np
import pytest

river = pytest.importorskip("river", reason="river is not installed (pip install 'sosl[river]')")

import scipy.sparse as sp  # noqa: E402
from river import feature_extraction  # noqa: E402
from sklearn.feature_extraction import FeatureHasher  # noqa: E402

import sosl  # noqa: E402
import sosl.river as sr  # noqa: E402
from sosl.datasets import find_highdim, load_sms_spam  # noqa: E402
from sosl.metrics import auc  # noqa: E402

N = 1500


@pytest.fixture(scope="module")
def sms():
    d = os.environ.get("SOSL_DATA_DIR")
    if not d:
        pytest.skip("SOSL_DATA_DIR is not set")
    try:
        find_highdim("sms_spam", d)
    except FileNotFoundError:
        pytest.skip(f"no SMSSpamCollection under {d}")
    texts, y = load_sms_spam(d)
    return texts[:N], [bool(v) for v in y[:N]]


def _progressive(model, texts, labels):
    probs = []
    for text, label in zip(texts, labels):
        probs.append(model.predict_proba_one(text)[True])
        model.learn_one(text, label)
    return probs


def test_bag_of_words_then_ftrlauc_equals_the_estimator_on_hashed_rows(sms):
    texts, labels = sms
    pipe = feature_extraction.BagOfWords() | sr.FTRLAUC()   # every word accepted
    probs = _progressive(pipe, texts, labels)
    assert auc(labels, probs) > 0.93
    bow = feature_extraction.BagOfWords()
    X = sp.csr_matrix(FeatureHasher(n_features=2**20, input_type="dict").transform(
        bow.transform_one(t) for t in texts))
    est = sosl.FTRLAUC()
    want = [0.5]
    for i, label in enumerate(labels):
        if i:
            want.append(est.predict_proba_one(X[i])[1])
        est.learn_one(X[i], int(label), classes=[0, 1] if i == 0 else None)
    np.testing.assert_array_equal(probs, want)
    np.testing.assert_array_equal(pipe["FTRLAUC"].estimator_.coef_, est.coef_)
    assert np.count_nonzero(est.coef_) > 1000


def test_the_second_order_learners_on_text(sms):
    texts, labels = sms
    sketched = feature_extraction.BagOfWords() | sr.SketchedOAUCM()
    assert auc(labels[:600], _progressive(sketched, texts[:600], labels[:600])) > 0.85
    exact = feature_extraction.BagOfWords() | sr.OAUCM()     # 128 words at most, and it says so
    with pytest.raises(ValueError, match="max_features=128.*SketchedOAUCM"):
        _progressive(exact, texts, labels)
    assert len(exact["OAUCM"].features_) <= 128
    hashed = feature_extraction.BagOfWords() | sr.OAUCM(n_hash=128, lam=0.1)
    assert auc(labels[:600], _progressive(hashed, texts[:600], labels[:600])) > 0.8


@pytest.mark.parametrize("name", ["FTRLAUC", "SketchedOAUCM"])
def test_text_pipelines_reach_river_lr_and_their_probabilities_spread(sms, name):
    """On the 5,574 messages in a seeded order, with defaults, each learner the docs
    recommend for text reaches river's LogisticRegression on river's binned ROCAUC, and that
    binned ROCAUC is within 0.01 of the exact AUC of the same probabilities (a Platt slope
    frozen near 0 puts every probability near 1/2, where the 10 thresholds cannot see the
    ranking)."""
    from river import linear_model, metrics
    texts, y = load_sms_spam(os.environ["SOSL_DATA_DIR"])     # the whole stream, shuffled
    order = np.random.default_rng(0).permutation(len(y))      # as bench_defaults.py does
    texts, labels = [texts[i] for i in order], [bool(y[i]) for i in order]

    def binned_and_probs(last):
        model, metric, probs = feature_extraction.BagOfWords() | last, metrics.ROCAUC(), []
        for text, label in zip(texts, labels):
            proba = model.predict_proba_one(text)
            metric.update(label, proba)
            probs.append(proba[True])
            model.learn_one(text, label)
        return metric.get(), probs

    lr, _ = binned_and_probs(linear_model.LogisticRegression())
    binned, probs = binned_and_probs(getattr(sr, name)())
    assert binned >= lr
    assert abs(auc(labels, probs) - binned) < 0.01
    assert np.percentile(probs, 90) - np.percentile(probs, 10) > 0.3
