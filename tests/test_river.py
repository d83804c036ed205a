"""The river adapters: dict rows, pipelines, progressive validation, online Platt scaling."""

import math
import pickle

import numpy as np
import pytest

river = pytest.importorskip("river", reason="river is not installed (pip install 'sosl[river]')")

from river import checks, evaluate, metrics, preprocessing, stream  # noqa: E402
from sklearn.utils import murmurhash3_32  # noqa: E402

import sosl  # noqa: E402
import sosl.river as sr  # noqa: E402
from sosl.datasets import make_imbalanced_stream  # noqa: E402
from sosl.metrics import auc  # noqa: E402


def _rows(seed, n=400, p=4, sep=2.0, ir=4.0):
    X, y = make_imbalanced_stream(n, p, imbalance_ratio=ir, class_sep=sep, random_state=seed)
    names = [f"f{j}" for j in range(p)]
    return X, y, names, [dict(zip(names, row)) for row in X]


def _platt_reference(scores, targets, lr, decay=0.995, min_slope=1e-6):
    """The documented calibration, written out: p_t from the state before row t's step."""
    a, b, m, ss, k = 1.0, 0.0, 0.0, 0.0, 0.0
    probs = []
    for s, t in zip(scores, targets):
        sd = math.sqrt(ss / k) if k > 1 else 0.0
        z = (s - m) / sd if sd > 0 else s - m
        p = 1 / (1 + math.exp(-(a * z + b)))
        probs.append(p)
        g = p - t
        a, b = max(a - lr * g * z, min_slope), b - lr * g
        k = decay * k + 1
        d = s - m
        m = m + d / k
        ss = decay * ss + d * (s - m)
    return np.array(probs), (a, b)


def test_adapter_equals_the_sosl_learner_on_the_same_rows():
    X, y, names, rows = _rows(0)
    ad = sr.OAUCM(lam=0.05, features=names)
    est = sosl.OAUCM(lam=0.05)
    scores, probs = [], []
    for i, (x, t) in enumerate(zip(rows, y)):
        if i:
            scores.append(est.score_one(X[i]))
            assert ad.score_one(x) == scores[-1]
            probs.append(ad.predict_proba_one(x)[True])
        ad.learn_one(x, bool(t))
        est.learn_one(X[i], int(t), classes=[0, 1] if i == 0 else None)
    np.testing.assert_array_equal(ad.estimator_.coef_, est.coef_)
    assert np.abs(est.coef_).max() > 0
    want, (a, b) = _platt_reference(scores, y[1:], lr=0.05)
    np.testing.assert_allclose(probs, want, rtol=1e-12)
    assert ad.calibration_[:2] == pytest.approx((a, b), rel=1e-12)
    # the check can fail: calibrating on the score after the update gives other numbers
    est2, late = sosl.OAUCM(lam=0.05), []
    for i in range(X.shape[0]):
        est2.learn_one(X[i], int(y[i]), classes=[0, 1] if i == 0 else None)
        if i:
            late.append(est2.score_one(X[i]))
    assert np.abs(_platt_reference(late, y[1:], lr=0.05)[0] - want).max() > 1e-3


def test_probability_keeps_the_ranking_and_is_calibrated_on_held_out_rows():
    X, y, names, rows = _rows(1, n=3000, p=5, sep=2.0, ir=9.0)
    ad = sr.OAUCM(lam=0.1, features=names)
    for x, t in zip(rows[:2500], y[:2500]):
        ad.learn_one(x, bool(t))
    test_rows, test_y = rows[2500:], y[2500:]
    p = np.array([ad.predict_proba_one(x)[True] for x in test_rows])
    s = np.array([ad.score_one(x) for x in test_rows])
    assert auc(test_y, p) == auc(test_y, s) > 0.85  # an increasing map of the score
    assert abs(p.mean() - test_y.mean()) < 0.03     # close to the base rate (0.1)
    eps = 1e-12
    log_loss = -np.mean(test_y * np.log(p + eps) + (1 - test_y) * np.log(1 - p + eps))
    prior = test_y.mean()
    constant = -(prior * np.log(prior) + (1 - prior) * np.log(1 - prior))
    assert log_loss < 0.8 * constant
    probs = ad.predict_proba_one(test_rows[0])
    assert set(probs) == {False, True} and sum(probs.values()) == pytest.approx(1.0)


def test_pipeline_in_progressive_val_score_with_rocauc():
    X, y, names, rows = _rows(2, n=800, p=6, sep=2.5, ir=10.0)
    model = preprocessing.StandardScaler() | sr.OAUCM(lam=0.1)
    got = evaluate.progressive_val_score(stream.iter_array(X, y.astype(bool)), model,
                                         metrics.ROCAUC())
    assert got.get() > 0.8
    # the same run written out: predict, update the metric, then learn
    hand, manual = preprocessing.StandardScaler() | sr.OAUCM(lam=0.1), metrics.ROCAUC()
    for x, t in stream.iter_array(X, y.astype(bool)):
        manual.update(t, hand.predict_proba_one(x))
        hand.learn_one(x, t)
    assert manual.get() == got.get()
    assert model["OAUCM"].features_ == list(range(6))  # iter_array's keys, frozen


def test_river_estimator_checks():
    checks.check_estimator(sr.OAUCM(n_hash=16))


_FEATURE_CHECKS = {"check_emerging_features", "check_disappearing_features",
                   "check_radically_disappearing_features", "check_shuffle_features_no_impact"}


@pytest.mark.parametrize("params,expected_failures", [
    ({"unknown": "ignore"}, set()),
    # by design: a key that is not in the frozen first row is refused, with a clear error
    ({}, {"check_emerging_features"}),
])
def test_river_feature_checks(params, expected_failures):
    model = sr.OAUCM(**params)
    failed, ran = set(), set()
    for check in checks.yield_checks(model):
        if check.__name__ not in _FEATURE_CHECKS:
            continue
        ran.add(check.__name__)
        try:
            check(model.clone())
        except ValueError as exc:
            assert "n_hash" in str(exc) and "features=" in str(exc)
            failed.add(check.__name__)
    assert ran == _FEATURE_CHECKS and failed == expected_failures


def test_feature_list_hashing_and_frozen_keys():
    ad = sr.OAUCS(features=["b", "a", "c"])
    ad.learn_one({"a": 1.0, "c": 2.0}, True)
    assert ad.estimator_.n_features_in_ == 3 and ad.features_ == ["b", "a", "c"]
    np.testing.assert_array_equal(ad.estimator_.means_[1], [0.0, 1.0, 2.0])

    hashed = sr.OAUCS(n_hash=8)
    hashed.learn_one({"a": 1.0, ("tuple", 3): 2.0}, True)
    h = murmurhash3_32(repr("a"), seed=0)
    row = np.zeros(8)
    row[abs(h) % 8] += np.sign(h) * 1.0
    h = murmurhash3_32(repr(("tuple", 3)), seed=0)
    row[abs(h) % 8] += np.sign(h) * 2.0
    np.testing.assert_array_equal(hashed.estimator_.means_[1], row)
    assert hashed.n_features == 8 and hashed.features_ is None

    frozen = sr.OAUCM()
    assert frozen.n_features is None
    frozen.learn_one({"z": 1.0, "y": 0.5}, False)
    assert frozen.features_ == ["y", "z"] and frozen.n_features == 2
    frozen.learn_one({"y": 2.0}, True)  # an absent key is a zero
    np.testing.assert_array_equal(frozen.estimator_.means_[1], [2.0, 0.0])
    ignoring = sr.OAUCM(unknown="ignore")
    ignoring.learn_one({"y": 1.0}, False)
    ignoring.learn_one({"y": 1.0, "new": 5.0}, True)
    assert ignoring.features_ == ["y"]


def test_bad_rows_and_labels_leave_the_adapter_unchanged():
    ad = sr.OAUCM(features=["a", "b"])
    ad.learn_one({"a": 1.0, "b": 0.0}, True)
    ad.learn_one({"a": 0.0, "b": 1.0}, False)
    ad.learn_one({"a": 0.5, "b": 0.2}, True)
    before = pickle.dumps(ad)
    for x, y, err, match in [
        ({"a": 1.0, "q": 1.0}, True, ValueError, r"\['q'\].*n_hash"),
        ({"a": "red"}, True, TypeError, "OneHotEncoder"),
        ({"a": float("nan")}, True, ValueError, "NaN"),
        ([1.0, 2.0], True, TypeError, "dict"),
        ({"a": 1.0}, "yes", ValueError, "classes="),
        ({"a": 1.0}, 2, ValueError, "positive flag"),
    ]:
        with pytest.raises(err, match=match):
            ad.learn_one(x, y)
        assert pickle.dumps(ad) == before
    frozen = sr.OAUCM()
    with pytest.raises(ValueError, match="no features"):
        frozen.learn_one({}, True)
    assert frozen.features_ is None and frozen.estimator_ is None


def test_named_classes_and_predict_one():
    X, y, names, rows = _rows(3, n=1500)
    ad = sr.OAUCM(features=names, classes=("ham", "spam"))
    for x, t in zip(rows, y):
        ad.learn_one(x, "spam" if t else "ham")
    probs = ad.predict_proba_one(rows[0])
    assert set(probs) == {"ham", "spam"}
    p_spam = np.array([ad.predict_proba_one(x)["spam"] for x in rows])
    preds = np.array([ad.predict_one(x) for x in rows])
    np.testing.assert_array_equal(preds, np.where(p_spam > 0.5, "spam", "ham"))
    assert 100 < (preds == "spam").sum() < 500 and auc(y, p_spam) > 0.9
    with pytest.raises(ValueError, match="classes="):
        ad.learn_one(rows[0], True)


def test_before_any_learning_the_prior_is_one_half():
    ad = sr.OAUCM(features=["a"])
    assert ad.predict_proba_one({"a": 3.0}) == {False: 0.5, True: 0.5}
    assert ad.score_one({"a": 3.0}) == 0.0


@pytest.mark.parametrize("kwargs,err,match", [
    ({"features": "abc"}, TypeError, "sequence"),
    ({"features": []}, ValueError, "empty"),
    ({"features": ["a", "a"]}, ValueError, "twice"),
    ({"features": ["a"], "n_hash": 4}, ValueError, "not both"),
    ({"n_hash": 0}, ValueError, "n_hash"),
    ({"n_hash": 2.0}, TypeError, "n_hash"),
    ({"unknown": "drop"}, ValueError, "unknown"),
    ({"classes": (1, 1)}, ValueError, "classes"),
    ({"classes": "ab"}, ValueError, "classes"),
    ({"calibration_lr": 0}, ValueError, "calibration_lr"),
    ({"calibration_lr": float("inf")}, ValueError, "calibration_lr"),
])
def test_adapter_parameters_are_checked(kwargs, err, match):
    with pytest.raises(err, match=match):
        sr.OAUCM(**kwargs)


def test_learner_parameters_are_passed_and_checked_at_the_first_update():
    ad = sr.OKAUCM(budget=7, gamma=0.5, n_hash=4)
    ad.learn_one({"a": 1.0}, True)
    assert ad.estimator_.budget == 7 and ad.estimator_.gamma == 0.5
    bad = sr.OAUCM(lam=-1.0, n_hash=4)
    with pytest.raises(ValueError, match="lam"):
        bad.learn_one({"a": 1.0}, True)
    assert bad.estimator_ is None
    with pytest.raises(TypeError, match="use a learner"):
        sr.SOSLClassifier()


@pytest.mark.parametrize("name", [n for n in sosl.__all__ if n != "__version__"])
def test_every_learner_has_a_river_twin(name):
    cls = getattr(sr, name)
    assert issubclass(cls, river.base.Classifier) and cls._estimator_class is getattr(sosl, name)
    X, y, names, rows = _rows(4, n=60, p=3)
    ad = cls(features=names, **({"budget": 10} if "budget" in cls._estimator_params else {}))
    for x, t in zip(rows, y):
        ad.learn_one(x, bool(t))
    assert ad.estimator_.n_seen_ == 60
    s = np.array([ad.score_one(x) for x in rows])
    assert np.isfinite(s).all() and s.std() > 0
    clone = ad.clone()
    assert clone.estimator_ is None and repr(clone) == repr(ad)
    again = pickle.loads(pickle.dumps(ad))
    assert again.predict_proba_one(rows[0]) == ad.predict_proba_one(rows[0])

