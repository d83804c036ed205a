"""Prequential evaluation: sosl.evaluate.prequential against hand-written test-then-train."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import SGDClassifier
from sklearn.metrics import roc_auc_score

from sosl import KOIL, OAUCM, OAUCS, OKAUCM, Perceptron
from sosl.datasets import make_imbalanced_stream
from sosl.evaluate import PrequentialResult, prequential
from sosl.metrics import RollingAUC, StreamingAUC


def _data(seed, n=240, p=4):
    return make_imbalanced_stream(n, p, imbalance_ratio=3, class_sep=1.5, random_state=seed)


def _hand_loop(model, X, y, classes):
    """Test-then-train written out with the batch API; scores[i] is NaN for unscored rows."""
    scores = np.full(X.shape[0], np.nan)
    for i in range(X.shape[0]):
        if i > 0:
            scores[i] = model.decision_function(X[i:i + 1])[0]
        model.partial_fit(X[i:i + 1], y[i:i + 1], classes=classes if i == 0 else None)
    return scores


def _expected_curves(scores, y, positive, steps, window):
    full, rolling = [], []
    for k in steps:
        s, lab = scores[1:k], (y[1:k] == positive)
        full.append(roc_auc_score(lab, s) if 0 < lab.sum() < lab.shape[0] else np.nan)
        s, lab = s[-window:], lab[-window:]
        rolling.append(roc_auc_score(lab, s) if 0 < lab.sum() < lab.shape[0] else np.nan)
    return np.array(full), np.array(rolling)


class _BatchOnly:
    """A sosl learner seen through partial_fit/decision_function only."""

    def __init__(self, est):
        self.est = est

    def partial_fit(self, X, y, classes=None):
        self.est.partial_fit(X, y, classes=classes)
        return self

    def decision_function(self, X):
        return self.est.decision_function(X)

    @property
    def classes_(self):
        return self.est.classes_


@pytest.mark.parametrize("seed", [0, 1])
def test_curve_equals_hand_written_test_then_train(seed):
    X, y = _data(seed)
    res = prequential(OAUCM(lam=0.05), X, y, every=20, classes=[0, 1],
                      metrics={"auc": StreamingAUC(), "roll": RollingAUC(60)})
    scores = _hand_loop(OAUCM(lam=0.05), X, y, [0, 1])
    np.testing.assert_allclose(res.scores, scores, rtol=1e-12, atol=1e-12, equal_nan=True)
    assert np.isnan(res.scores[0]) and res.n_scored == X.shape[0] - 1
    assert res.steps.tolist() == list(range(20, 241, 20))
    full, rolling = _expected_curves(scores, y, 1, res.steps, 60)
    np.testing.assert_allclose(res["auc"], full, rtol=0, atol=1e-12)
    np.testing.assert_allclose(res["roll"], rolling, rtol=0, atol=1e-12)
    assert 0.6 < full[-1] < 1.0 and np.ptp(rolling) > 0  # a real, moving curve


def test_threshold_metrics_follow_the_same_scores():
    """Partial AUC and average precision get (y_true, y_score) like the AUC does."""
    from sklearn.metrics import average_precision_score

    from sosl.metrics import RollingAveragePrecision, StreamingAveragePrecision

    X, y = _data(3)
    res = prequential(OAUCM(lam=0.05), X, y, every=40, classes=[0, 1],
                      metrics={"pauc": RollingAUC(80, max_fpr=0.2),
                               "ap": StreamingAveragePrecision(),
                               "ap_roll": RollingAveragePrecision(80)})
    for j, k in enumerate(res.steps):
        s, lab = res.scores[1:k], y[1:k] == 1
        assert res["ap"][j] == pytest.approx(average_precision_score(lab, s), abs=1e-12)
        assert res["ap_roll"][j] == pytest.approx(
            average_precision_score(lab[-80:], s[-80:]), abs=1e-12)
        assert res["pauc"][j] == pytest.approx(
            roc_auc_score(lab[-80:], s[-80:], max_fpr=0.2), abs=1e-12)
    assert 0.3 < res["ap"][-1] < 1 and np.ptp(res["pauc"]) > 0


def test_curve_check_catches_train_then_test():
    """The comparison fails if the rows are learned before being scored (a leak)."""
    X, y = _data(2)
    res = prequential(OAUCM(lam=0.05), X, y, every=40)
    leaky, model = np.full(X.shape[0], np.nan), OAUCM(lam=0.05)
    for i in range(X.shape[0]):
        model.partial_fit(X[i:i + 1], y[i:i + 1], classes=[0, 1])
        if i > 0:
            leaky[i] = model.decision_function(X[i:i + 1])[0]
    full, _ = _expected_curves(leaky, y, 1, res.steps, 60)
    assert np.abs(res["auc"] - full).max() > 1e-3


@pytest.mark.parametrize("make", [
    lambda: OAUCS(lam=0.05), lambda: OKAUCM(budget=20), lambda: Perceptron(),
    lambda: KOIL(budget=20, random_state=0),
], ids=["OAUCS", "OKAUCM", "Perceptron", "KOIL"])
def test_one_row_path_equals_batch_path_for_sosl_learners(make):
    X, y = _data(3, n=120)
    fast = prequential(make(), X, y, metrics=[StreamingAUC(), RollingAUC(50)], every=10)
    batch = prequential(_BatchOnly(make()), X, y, metrics=[StreamingAUC(), RollingAUC(50)],
                        every=10)
    assert set(fast.values) == {"StreamingAUC", "RollingAUC(50)"}
    np.testing.assert_allclose(fast.scores, batch.scores, rtol=1e-12, atol=1e-12,
                               equal_nan=True)
    for name in fast.values:
        np.testing.assert_allclose(fast[name], batch[name], rtol=0, atol=1e-12)
    assert np.nanstd(fast.scores) > 0


def test_any_partial_fit_estimator_and_sparse_rows():
    X, y = _data(4, n=80)
    for rows in (X, sp.csr_matrix(X)):  # SGDClassifier takes CSR rows as they are
        got = prequential(SGDClassifier(random_state=0), rows, y, every=30)
        scores = _hand_loop(SGDClassifier(random_state=0), rows, y, [0, 1])
        np.testing.assert_allclose(got.scores, scores, rtol=1e-12, equal_nan=True)
        assert np.nanstd(scores) > 0
    # a dense-only learner receives the sparse rows densified
    dense = prequential(OAUCM(), X, y, every=30)
    coo = prequential(OAUCM(), sp.coo_matrix(X), y, every=30)
    np.testing.assert_array_equal(coo.scores, dense.scores)
    np.testing.assert_array_equal(coo["auc"], dense["auc"])


def test_positive_class_by_name_and_warm_model():
    X, y01 = _data(5)
    y = np.where(y01 == 1, "pos", "neg")
    res = prequential(OAUCM(), X, y, classes=["pos", "neg"], every=X.shape[0])
    assert res.positive == "neg"  # classes=[negative, positive] is kept in order
    lab = y[1:] == "neg"
    assert res.final()["auc"] == pytest.approx(roc_auc_score(lab, res.scores[1:]), abs=1e-12)

    model = OAUCM().partial_fit(X[:50], y01[:50], classes=[0, 1])
    warm = prequential(model, X[50:], y01[50:])
    assert warm.n_scored == X.shape[0] - 50  # a fitted model scores the first row too
    assert model.n_seen_ == X.shape[0]
    assert isinstance(warm, PrequentialResult) and warm.steps[-1] == X.shape[0] - 50


def test_every_records_the_last_row_and_nan_before_both_classes():
    X, y = _data(6, n=95)
    y = y.copy()
    y[:30] = 0
    res = prequential(OAUCM(), X, y, every=20)
    assert res.steps.tolist() == [20, 40, 60, 80, 95]
    assert np.isnan(res["auc"][0]) and np.isfinite(res["auc"][-1])


@pytest.mark.parametrize("kwargs,err,match", [
    ({"every": 0}, ValueError, "every"),
    ({"every": 2.5}, TypeError, "every"),
    ({"every": True}, TypeError, "every"),
    ({"metrics": {}}, ValueError, "empty"),
    ({"metrics": [StreamingAUC(), StreamingAUC()]}, ValueError, "share the name"),
    ({"metrics": {"m": object()}}, TypeError, "update"),
    ({"metrics": "auc"}, TypeError, "metrics must be"),
    ({"classes": [0, 0]}, ValueError, "two distinct"),
    ({"classes": [0, 2]}, ValueError, r"label\(s\) \[1\]"),
])
def test_bad_arguments_raise_before_learning(kwargs, err, match):
    X, y = _data(7, n=60)
    model = OAUCM()
    with pytest.raises(err, match=match):
        prequential(model, X, y, **kwargs)
    assert not hasattr(model, "classes_")


@pytest.mark.parametrize("change,err,match", [
    ("nan", ValueError, "NaN"),
    ("short_y", ValueError, "inconsistent"),
    ("three", ValueError, "exactly two labels"),
    ("y2d", ValueError, "1-D"),
])
def test_bad_data_raise_before_learning(change, err, match):
    X, y = _data(8, n=60)
    X = X.copy()
    if change == "nan":
        X[30, 1] = np.nan
    elif change == "short_y":
        y = y[:-1]
    elif change == "three":
        y = y.copy()
        y[5] = 2
    else:
        y = y.reshape(-1, 1)
    model = OAUCM()
    with pytest.raises(err, match=match):
        prequential(model, X, y)
    assert not hasattr(model, "classes_")


def test_models_that_cannot_learn_or_score_and_class_mismatch():
    X, y = _data(9, n=40)
    with pytest.raises(TypeError, match="cannot learn"):
        prequential(object(), X, y)

    class _NoScore:
        def partial_fit(self, X, y, classes=None):
            return self

    with pytest.raises(TypeError, match="cannot score"):
        prequential(_NoScore(), X, y)
    model = OAUCM().fit(X, y)
    coef = model.coef_.copy()
    with pytest.raises(ValueError, match="fitted on classes_"):
        prequential(model, X, np.where(y == 1, 5, 7))
    np.testing.assert_array_equal(model.coef_, coef)


def test_prequential_plot_quick(tmp_path, capsys):
    import matplotlib.image as mpimg

    from plots import prequential as plot

    paths = plot.main(["--quick", "--out", str(tmp_path), "--seed", "1"])
    assert sorted(q.rsplit(".", 1)[1] for q in paths) == ["pdf", "png"]
    img = mpimg.imread(next(q for q in paths if q.endswith(".png")))
    assert img.shape[0] > 200 and img.shape[1] > 300 and img[..., :3].std() > 0.05
    with open(next(q for q in paths if q.endswith(".pdf")), "rb") as f:
        assert f.read(5) == b"%PDF-"
    out = capsys.readouterr().out
    assert "abrupt change at 400" in out and out.count("rolling AUC before change") == 4


def test_prequential_plot_command_line_errors(tmp_path, capsys):
    from plots import prequential as plot

    with pytest.raises(SystemExit) as exc:
        plot.main(["--quick", "--window", "0", "--out", str(tmp_path)])
    assert exc.value.code == 2
    assert "--window >= 1" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())

