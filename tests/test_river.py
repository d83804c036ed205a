"""The river adapters: the rows the learners receive, keys to columns, one calibration,
learning equal to the estimator's on the same rows, bad input.

river's ``check_estimator`` on every adapter's defaults: ``test_river_checks.py``; the SMS
text stream: ``test_river_text.py``.
"""

import pickle

import numpy as np
import pytest

river = pytest.importorskip("river", reason="river is not installed (pip install 'sosl[river]')")

import scipy.sparse as sp  # noqa: E402
from river import evaluate, feature_extraction, metrics, preprocessing, stream  # noqa: E402
from sklearn.feature_extraction import FeatureHasher  # noqa: E402

import sosl  # noqa: E402
import sosl.river as sr  # noqa: E402
from sosl._core._calibration_ref import sigmoid  # noqa: E402
from sosl.datasets import make_imbalanced_stream  # noqa: E402
from sosl.metrics import auc  # noqa: E402

LEARNERS = [n for n in sosl.__all__ if n != "__version__"]
DENSE = {"OAUCM", "OAUCS", "AdaOAM", "PartialOAUCM",  # p x p state: dense rows, growing index
         "NystroemOAUCM"}                         # dense landmarks: the same
SMALL = {"budget": 10, "n_components": 20}      # keeps the kernel learners quick


def _small(cls):
    return {k: v for k, v in SMALL.items() if k in cls._estimator_params}


def _word_rows(seed, n=300, vocab=60, spam_words=8):
    """Dicts of word counts (str keys, int values) with a label: spam uses some words more."""
    rng = np.random.default_rng(seed)
    words = [f"w{j}" for j in range(vocab)]
    rows, labels = [], []
    for _ in range(n):
        spam = rng.random() < 0.25
        k = int(rng.integers(1, 12))
        p = np.ones(vocab)
        if spam:
            p[:spam_words] *= 6.0
        picked = rng.choice(vocab, size=k, p=p / p.sum())
        x = {}
        for j in picked:
            x[words[j]] = x.get(words[j], 0) + 1
        rows.append(x)
        labels.append(bool(spam))
    return rows, labels


def _numeric_rows(seed, n=300, p=4):
    X, y = make_imbalanced_stream(n, p, imbalance_ratio=4.0, class_sep=2.0, random_state=seed)
    names = [f"f{j}" for j in range(p)]
    return X, y, names, [dict(zip(names, row)) for row in X]


# -- the rows the learners receive ------------------------------------------------------
@pytest.mark.parametrize("name", LEARNERS)
def test_the_learner_receives_sparse_rows_or_small_dense_ones(name, monkeypatch):
    cls = getattr(sr, name)
    est_cls = cls._estimator_class
    seen = []
    for method in ("learn_one", "predict_proba_one"):
        original = getattr(est_cls, method)

        def spy(self, x, *args, _original=original, **kwargs):
            seen.append(x)
            return _original(self, x, *args, **kwargs)
        monkeypatch.setattr(est_cls, method, spy)
    ad = cls(**_small(cls))
    rows, labels = _word_rows(0, n=40, vocab=30)
    for x, t in zip(rows, labels):
        ad.predict_proba_one(x)
        ad.learn_one(x, t)
    assert len(seen) == 2 * len(rows) - 1        # no prediction before the first update
    calls = [(r, call) for r in rows for call in ("predict", "learn")][1:]
    for (x, call), got in zip(calls, seen):
        if name in DENSE:
            assert type(got) is np.ndarray and got.shape == (ad.n_features,) == (128,)
            # a key not yet indexed has no column in a prediction
            assert np.count_nonzero(got) == len(x) or (call == "predict"
                                                       and np.count_nonzero(got) < len(x))
            continue
        assert type(got) is sp.csr_matrix and got.shape == (1, ad.n_features) == (1, ad.n_hash)
        assert ad.n_hash == (2**16 if name in ("OLUBAUC", "SOLAM") else 2**20)
        assert got.data.dtype == np.float64 and got.indices.dtype == np.int32
        assert got.indptr.tolist() == [0, got.nnz] and got.has_canonical_format
        assert np.all(np.diff(got.indices) > 0) and got.nnz == len(x)   # no collision here
    # the spy can fail: it records what a densifying adapter would hand over
    seen.clear()
    if name not in DENSE:
        monkeypatch.setattr(sr.SOSLClassifier, "_row",
                            lambda self, x, learn: (np.zeros(self.n_features), None, False))
        try:
            ad.learn_one(rows[0], True)
        except (ValueError, TypeError):
            pass
        assert type(seen[0]) is np.ndarray


def test_the_fast_csr_rows_are_the_constructors():
    assert sr._copies_work() and sr._CSRRows._fast
    rng = np.random.default_rng(1)
    make = sr._CSRRows(50)
    idx = np.sort(rng.choice(50, 7, replace=False)).astype(np.int32)
    data = rng.normal(size=7)
    got = make(data, idx)
    want = sp.csr_matrix((data, idx, [0, 7]), shape=(1, 50))
    assert type(got) is type(want) and got.has_canonical_format
    np.testing.assert_array_equal(got.toarray(), want.toarray())
    np.testing.assert_array_equal((got @ np.arange(50.0)), want @ np.arange(50.0))
    # and learning from them equals learning from the constructor's rows
    rows, labels = _word_rows(2, n=120)
    fast = sr.FTRLAUC(n_hash=64)
    slow = sr.FTRLAUC(n_hash=64)
    for x, t in zip(rows, labels):
        fast.learn_one(x, t)
        sr._CSRRows._fast = False
        try:
            slow.learn_one(x, t)
        finally:
            sr._CSRRows._fast = True
    np.testing.assert_array_equal(fast.estimator_.coef_, slow.estimator_.coef_)
    assert np.abs(fast.estimator_.coef_).max() > 0


# -- keys to columns -------------------------------------------------------------------------
@pytest.mark.parametrize("n_hash,sign", [(8, True), (8, False), (2**20, True)])
def test_hashed_rows_are_feature_hashers_rows(n_hash, sign):
    rows, _ = _word_rows(3, n=60, vocab=40)
    rows[0] = {"zero": 0, "w1": 2.5, "w2": -1}            # zeros are dropped, as FeatureHasher
    rows[1] = {}
    ad = sr.FTRLAUC(n_hash=n_hash, alternate_sign=sign)
    ad.learn_one(rows[2], True)
    want = FeatureHasher(n_features=n_hash, input_type="dict", alternate_sign=sign)
    for x in rows:
        got = ad._row(x, learn=False)[0]
        ref = sp.csr_matrix(want.transform([x]))
        np.testing.assert_array_equal(got.indices, ref.indices)
        np.testing.assert_array_equal(got.data, ref.data)
    collided = [x for x in rows if ad._row(x, learn=False)[0].nnz < len(x)]
    assert (len(collided) > 5) == (n_hash == 8)           # collisions add up, as there
    # the check can fail: FeatureHasher with the other sign rule gives other rows
    other = FeatureHasher(n_features=n_hash, input_type="dict", alternate_sign=not sign)
    assert any(not np.array_equal(ad._row(x, False)[0].data,
                                  sp.csr_matrix(other.transform([x])).data) for x in rows)


def test_non_string_keys_hash_by_type_and_repr_and_the_slot_memory_changes_nothing(
        monkeypatch):
    ad = sr.FTRLAUC(n_hash=2**20)
    ad.learn_one({"a": 1.0}, True)
    keys = [1, 1.0, "1", ("w", 1)]                        # 1 == 1.0 as dict keys
    cols = [ad._row({k: 1.0}, False)[0].indices[0] for k in keys]
    assert len(set(cols)) == 4                            # but hashed apart, and from "1"
    from sklearn.utils import murmurhash3_32
    assert cols[3] == abs(murmurhash3_32("tuple:('w', 1)", seed=0)) % 2**20
    rows, labels = _word_rows(4, n=200)
    full = sr.FTRLAUC(n_hash=256)
    monkeypatch.setattr(sr, "_SLOT_CACHE", 3)             # forgets every few keys
    tiny = sr.FTRLAUC(n_hash=256)
    for x, t in zip(rows, labels):
        tiny.learn_one(x, t)
        assert len(tiny._slots) <= 3
    monkeypatch.setattr(sr, "_SLOT_CACHE", 2**14)
    for x, t in zip(rows, labels):
        full.learn_one(x, t)
    assert len(full._slots) == len({k for x in rows for k in x}) > 3
    np.testing.assert_array_equal(tiny.estimator_.coef_, full.estimator_.coef_)


def test_the_growing_index_accepts_new_keys_up_to_max_features():
    ad = sr.OAUCM()                                      # dense learner: index, 128 keys
    assert ad.n_hash is None and ad.max_features == 128 == ad.n_features
    ad.learn_one({"z": 1.0, "y": 0.5}, False)
    ad.learn_one({"y": 2.0, "b": 1.0, "a": 3.0}, True)    # new keys, sorted within a row
    assert ad.features_ == ["y", "z", "a", "b"]
    np.testing.assert_array_equal(ad.estimator_.means_[1][:5], [2.0, 0.0, 3.0, 1.0, 0.0])
    assert ad.score_one({"never": 5.0}) == ad.score_one({})   # unseen keys weigh nothing
    small = sr.OAUCS(max_features=3)
    small.learn_one({"a": 1.0, "b": 2.0}, True)
    before = pickle.dumps(small)
    with pytest.raises(ValueError, match=r"\['d'\].*max_features=3.*SketchedOAUCM"):
        small.learn_one({"a": 1.0, "c": 1.0, "d": 1.0}, False)
    assert pickle.dumps(small) == before and small.features_ == ["a", "b"]
    ignoring = sr.OAUCS(max_features=3, unknown="ignore")
    ignoring.learn_one({"a": 1.0, "b": 2.0}, True)
    ignoring.learn_one({"a": 1.0, "c": 1.0, "d": 1.0}, False)
    assert ignoring.features_ == ["a", "b", "c"]
    sparse = sr.FTRLAUC(n_hash=None, max_features=5)      # a sparse learner may index too
    sparse.learn_one({"q": 1.0, "p": 2.0}, True)
    assert sparse.features_ == ["p", "q"]
    assert sparse._row({"q": 1.0}, False)[0].indices.tolist() == [1]
    mixed = sr.OAUCM()
    mixed.learn_one({2: 1.0, "a": 1.0, (1, 2): 1.0}, True)  # keys of mixed types
    assert mixed.features_ == [2, "a", (1, 2)]               # by type name, then repr


def test_declared_features_fix_the_columns():
    ad = sr.OAUCS(features=["b", "a", "c"])
    ad.learn_one({"a": 1.0, "c": 2.0}, True)
    assert ad.estimator_.n_features_in_ == 3 and ad.features_ == ["b", "a", "c"]
    np.testing.assert_array_equal(ad.estimator_.means_[1], [0.0, 1.0, 2.0])
    with pytest.raises(ValueError, match=r"\['q'\].*declared features.*unknown='ignore'"):
        ad.learn_one({"a": 1.0, "q": 1.0}, True)
    hashed = sr.FTRLAUC(features=["b", "a"])              # features win over the n_hash default
    hashed.learn_one({"a": 2.0}, True)
    assert hashed.n_features == 2 and hashed.estimator_.n_features_in_ == 2


# -- learning and calibration equal to the estimator's on the same rows -------------------
def _learned(est, X, labels):
    """The estimator after ``learn_one`` on each row of ``X`` in order, with the
    probabilities it gave each row before learning it."""
    probs = []
    for i, t in enumerate(labels):
        if i:
            probs.append(est.predict_proba_one(X[i])[1])
        est.learn_one(X[i], int(t), classes=[0, 1] if i == 0 else None)
    return est, probs


def _estimator(name, params):
    return getattr(sosl, name)(**{("random_state" if k == "seed" else k): v
                                  for k, v in params.items()})


@pytest.mark.parametrize("name,params", [
    ("FTRLAUC", {"gamma": 0.5}), ("SketchedOAUCM", {"rank": 4}), ("OAM", {"seed": 0}),
    ("Perceptron", {}), ("SOLAM", {}), ("OKAUCM", {"budget": 10}), ("KOIL", {"seed": 0}),
])
def test_sparse_adapter_equals_the_estimator_on_feature_hasher_rows(name, params):
    rows, labels = _word_rows(5, n=150)
    n_hash = 512
    ad = getattr(sr, name)(n_hash=n_hash, **params)
    X = sp.csr_matrix(FeatureHasher(n_features=n_hash, input_type="dict").transform(rows))
    got = []
    for i, (x, t) in enumerate(zip(rows, labels)):
        if i:
            got.append(ad.predict_proba_one(x)[True])
        ad.learn_one(x, t)
    est, want = _learned(_estimator(name, params), X, labels)
    np.testing.assert_array_equal(got, want)                # one calibration: the estimator's
    np.testing.assert_array_equal(ad.estimator_.decision_function(X), est.decision_function(X))
    assert np.ptp(want) > 0.05                            # not a constant
    f = ad.score_one(rows[3])                               # the rule: sigmoid(A f)
    assert ad.predict_proba_one(rows[3])[True] == pytest.approx(
        float(sigmoid(ad.calibration_[0] * f)), rel=1e-15)
    # the check can fail: rows hashed without the signs teach another model
    X2 = sp.csr_matrix(FeatureHasher(n_features=n_hash, input_type="dict",
                                     alternate_sign=False).transform(rows))
    other, probs = _learned(_estimator(name, params), X2, labels)
    assert not np.array_equal(probs, want)


@pytest.mark.parametrize("name", sorted(DENSE - {"NystroemOAUCM"}))  # its own: test_nystroem.py
def test_dense_adapter_equals_the_estimator_on_the_same_columns(name):
    X, y, names, rows = _numeric_rows(6)
    ad = getattr(sr, name)()                              # growing index of 128 columns
    est = getattr(sosl, name)()
    Z = np.zeros((X.shape[0], 128))
    Z[:, :4] = X                                          # names sort as f0 < f1 < f2 < f3
    probs, want = [], []
    for i, (x, t) in enumerate(zip(rows, y)):
        if i:
            probs.append(ad.predict_proba_one(x)[True])
            want.append(est.predict_proba_one(Z[i])[1])
        ad.learn_one(x, bool(t))
        est.learn_one(Z[i], int(t), classes=[0, 1] if i == 0 else None)
    assert ad.features_ == names
    np.testing.assert_array_equal(ad.estimator_.coef_, est.coef_)
    np.testing.assert_array_equal(probs, want)
    assert np.abs(est.coef_[0, :4]).min() > 0 and auc(y[1:], probs) > 0.8
    f = ad.score_one(rows[5])
    assert ad.predict_proba_one(rows[5])[True] == pytest.approx(
        float(sigmoid(ad.calibration_[0] * f)), rel=1e-15)
    # the check can fail: the columns in another order give another model
    P = Z.copy()
    P[:, [0, 1]] = P[:, [1, 0]]
    other = getattr(sosl, name)()
    other.partial_fit(P, y, classes=[0, 1])
    assert not np.allclose(other.coef_[0, :4], est.coef_[0, :4])


def test_a_prediction_then_learning_of_an_equal_dict_reuses_the_row_correctly():
    rows, labels = _word_rows(7, n=200)
    plain, reused = sr.FTRLAUC(n_hash=128), sr.FTRLAUC(n_hash=128)
    for x, t in zip(rows, labels):
        reused.predict_proba_one(dict(x))
        reused.learn_one(x, t)                            # an equal dict: the row is reused
        plain.learn_one(x, t)
    np.testing.assert_array_equal(reused.estimator_.coef_, plain.estimator_.coef_)
    # a dict changed between the two calls is made again
    a, b = sr.FTRLAUC(n_hash=128), sr.FTRLAUC(n_hash=128)
    a.learn_one({"x": 1.0}, True)
    b.learn_one({"x": 1.0}, True)
    x = {"u": 1.0, "v": 2.0}
    a.predict_proba_one(x)
    x["v"] = 5.0
    a.learn_one(x, False)
    b.learn_one({"u": 1.0, "v": 5.0}, False)
    np.testing.assert_array_equal(a.estimator_.coef_, b.estimator_.coef_)
    # keys equal as dict keys but hashed apart (1 == 1.0) are never reused
    c, d = sr.FTRLAUC(n_hash=128), sr.FTRLAUC(n_hash=128)
    for m in (c, d):
        m.learn_one({"x": 1.0}, True)
    c.predict_proba_one({1: 2.0})
    c.learn_one({1.0: 2.0}, False)
    d.learn_one({1.0: 2.0}, False)
    np.testing.assert_array_equal(c.estimator_.coef_, d.estimator_.coef_)
    assert np.abs(c.estimator_.coef_).max() > 0
    c.predict_proba_one({"x": 1.0})
    assert c._last is not None and pickle.loads(pickle.dumps(c))._last is None


def test_pipelines_progressive_validation_and_pickling_mid_stream():
    rows, labels = _word_rows(8, n=400)
    texts = [" ".join(w for w, c in x.items() for _ in range(c)) for x in rows]
    model = feature_extraction.BagOfWords() | sr.FTRLAUC()
    got = evaluate.progressive_val_score(zip(texts, labels), model, metrics.ROCAUC())
    assert got.get() > 0.75
    X, y, names, nrows = _numeric_rows(9, n=500, p=6)
    pipe = preprocessing.StandardScaler() | sr.OAUCM(lam=0.1)
    score = evaluate.progressive_val_score(stream.iter_array(X, y.astype(bool)), pipe,
                                           metrics.ROCAUC())
    assert score.get() > 0.8 and pipe["OAUCM"].features_ == list(range(6))
    a, b = sr.FTRLAUC(n_hash=1024), sr.FTRLAUC(n_hash=1024)
    for i, (x, t) in enumerate(zip(rows, labels)):
        a.learn_one(x, t)
        b.learn_one(x, t)
        if i == 150:
            b = pickle.loads(pickle.dumps(b))
    np.testing.assert_array_equal(a.estimator_.coef_, b.estimator_.coef_)
    assert a.predict_proba_one(rows[0]) == b.predict_proba_one(rows[0])


# -- labels, defaults, bad input -------------------------------------------------------------
def test_named_classes_predict_one_and_the_prior_before_learning():
    rows, labels = _word_rows(10, n=300)
    ad = sr.FTRLAUC(classes=("ham", "spam"), gamma=0.5)
    assert ad.predict_proba_one(rows[0]) == {"ham": 0.5, "spam": 0.5}
    assert ad.score_one(rows[0]) == 0.0 and ad.calibration_ is None
    for x, t in zip(rows, labels):
        ad.learn_one(x, "spam" if t else "ham")
    p = np.array([ad.predict_proba_one(x)["spam"] for x in rows])
    pred = np.array([ad.predict_one(x) for x in rows])
    np.testing.assert_array_equal(pred, np.where(p > 0.5, "spam", "ham"))
    assert auc(labels, p) > 0.8
    with pytest.raises(ValueError, match="classes="):
        ad.learn_one(rows[0], True)


@pytest.mark.parametrize("name", ["FTRLAUC", "OAUCM", "OKAUCS"])
def test_bad_rows_and_labels_leave_the_adapter_unchanged(name):
    ad = getattr(sr, name)(**_small(getattr(sr, name)))
    for x, t in [({"a": 1.0, "b": 0.0}, True), ({"b": 1.0}, False), ({"a": 0.5}, True)]:
        ad.learn_one(x, t)
    before = pickle.dumps(ad)
    for x, y, err, match in [
        ({"a": "red"}, True, TypeError, "'a' has the value 'red'.*OneHotEncoder"),
        ({"a": None}, True, TypeError, "OneHotEncoder"),
        ({"a": [1.0]}, True, TypeError, "OneHotEncoder"),
        ({"a": float("nan"), "new": 1.0}, True, ValueError, "NaN"),
        ({"a": float("inf")}, True, ValueError, "infinity"),
        ([1.0, 2.0], True, TypeError, "dict"),
        ({"a": 1.0}, "yes", ValueError, "classes="),
        ({"a": 1.0}, 2, ValueError, "positive flag"),
    ]:
        with pytest.raises(err, match=match):
            ad.learn_one(x, y)
        assert pickle.dumps(ad) == before
    with pytest.raises(ValueError, match="NaN"):
        ad.predict_proba_one({"a": float("nan")})
    fresh = getattr(sr, name)()
    fresh.n_hash = 0                                       # checked again at the first update
    with pytest.raises(ValueError, match="n_hash must be in"):
        fresh.learn_one({"a": 1.0}, True)
    assert fresh.estimator_ is None
    ad.n_hash = 8                                          # the layout is frozen
    with pytest.raises(ValueError, match="changed since the model started"):
        ad.learn_one({"a": 1.0}, True)
    with pytest.raises(ValueError, match="clone"):
        ad.predict_proba_one({"a": 1.0})


@pytest.mark.parametrize("kwargs,err,match", [
    ({"features": "abc"}, TypeError, "sequence"),
    ({"features": []}, ValueError, "empty"),
    ({"features": ["a", "a"]}, ValueError, "twice"),
    ({"n_hash": 0}, ValueError, "n_hash"),
    ({"n_hash": 2**31}, ValueError, "n_hash"),
    ({"n_hash": 2.0}, TypeError, "n_hash"),
    ({"n_hash": True}, TypeError, "n_hash"),
    ({"max_features": None}, TypeError, "max_features"),
    ({"max_features": 0}, ValueError, "max_features"),
    ({"alternate_sign": 1}, TypeError, "alternate_sign"),
    ({"unknown": "drop"}, ValueError, "unknown"),
    ({"classes": (1, 1)}, ValueError, "classes"),
    ({"classes": "ab"}, ValueError, "classes"),
])
def test_adapter_parameters_are_checked(kwargs, err, match):
    with pytest.raises(err, match=match):
        sr.FTRLAUC(**kwargs)


def test_learner_parameters_are_passed_and_checked_at_the_first_update():
    ad = sr.OKAUCM(budget=7, gamma=0.5)
    ad.learn_one({"a": 1.0}, True)
    assert ad.estimator_.budget == 7 and ad.estimator_.gamma == 0.5
    assert sr.OAM(seed=3)._new_estimator().random_state == 3
    bad = sr.FTRLAUC(gamma=-1.0)
    with pytest.raises(ValueError, match="gamma"):
        bad.learn_one({"a": 1.0}, True)
    assert bad.estimator_ is None and bad._layout is None
    with pytest.raises(TypeError, match="use a learner"):
        sr.SOSLClassifier()


@pytest.mark.parametrize("name", LEARNERS)
def test_every_learner_has_a_river_twin(name):
    cls = getattr(sr, name)
    assert issubclass(cls, river.base.Classifier) and cls._estimator_class is getattr(sosl, name)
    assert cls._sparse_rows == (name not in DENSE)
    assert "random_state" not in cls._estimator_params
    rows, labels = _word_rows(11, n=60, vocab=20)
    ad = cls(**_small(cls))
    for x, t in zip(rows, labels):
        ad.learn_one(x, t)
    assert ad.estimator_.n_seen_ == 60
    s = np.array([ad.score_one(x) for x in rows])
    assert np.isfinite(s).all() and s.std() > 0
    clone = ad.clone()
    assert clone.estimator_ is None and repr(clone) == repr(ad) and clone._index == {}
    again = pickle.loads(pickle.dumps(ad))
    assert again.predict_proba_one(rows[0]) == ad.predict_proba_one(rows[0])
