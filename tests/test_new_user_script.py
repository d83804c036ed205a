"""Issue 22's acceptance script: what a new user who knows scikit-learn and river writes,
run as written (no sosl-specific spelling anywhere). Each step checks its result against
the library the convention comes from, so a broken convention fails here by name."""

import numpy as np
import pytest
from sklearn.feature_selection import SelectFromModel
from sklearn.metrics import average_precision_score, roc_auc_score
from sklearn.model_selection import train_test_split

import sosl
from sosl import metrics


def _data(seed=0, n=600, p=8):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = (X[:, 0] - 0.5 * X[:, 1] + 0.7 * rng.normal(size=n) > 1.0).astype(int)
    return X, y


def test_scikit_learn_conventions_script():
    X, y = _data()
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, random_state=0,
                                              stratify=y)
    weights = np.where(y_tr == 0, 2.0, 1.0)                    # e.g. subsampled negatives
    model = sosl.OAUCM(lam=0.01).fit(X_tr, y_tr, sample_weight=weights)
    assert model.coef_.shape == (1, X.shape[1]) and model.intercept_.shape == (1,)
    w, b = model.coef_[0], model.intercept_[0]
    np.testing.assert_allclose(model.decision_function(X_te), X_te @ w + b, rtol=1e-12,
                               atol=1e-12)
    score = roc_auc_score(y_te, model.decision_function(X_te))
    assert score > 0.8
    proba = model.predict_proba(X_te)[:, 1]
    assert average_precision_score(y_te, proba) == pytest.approx(
        metrics.average_precision(y_te, proba), abs=1e-12)
    kept = SelectFromModel(sosl.OAUCM(lam=0.01), max_features=2).fit(X_tr, y_tr)
    assert set(np.flatnonzero(kept.get_support())) == {0, 1}   # the two informative columns
    # streaming metrics take (y_true, y_score), as sklearn's roc_auc_score does
    stream_auc = metrics.StreamingAUC()
    for yi, si in zip(y_te, model.decision_function(X_te)):
        stream_auc.update(yi, si)
    assert stream_auc.get() == pytest.approx(score, abs=1e-12)


def test_river_conventions_script():
    pytest.importorskip("river")
    from river import compose, evaluate, preprocessing, stream

    import sosl.river

    X, y = _data(seed=1, n=500, p=5)
    names = [f"x{j}" for j in range(X.shape[1])]
    rows = [(dict(zip(names, row)), bool(t)) for row, t in zip(X, y)]
    model = compose.Pipeline(preprocessing.StandardScaler(), sosl.river.OAUCM())
    metric = sosl.river.ExactROCAUC()
    evaluate.progressive_val_score(iter(rows), model, metric)
    assert 0.75 < metric.get() <= 1.0
    # the same metric as river's own metrics are used: update(y_true, y_pred)
    m2 = sosl.river.ExactROCAUC()
    for x, t in stream.iter_array(X, y.astype(bool), feature_names=names):
        m2.update(t, model.predict_proba_one(x).get(True, 0.0))
    assert 0.75 < m2.get() <= 1.0
