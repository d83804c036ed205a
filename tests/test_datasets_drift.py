"""The drifting stream generator: seeded, the concept really changes, arguments checked."""

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from sosl.datasets import make_drifting_stream


def _mean_direction(X, y):
    """The simplest linear scorer fitted on data: the difference of the class means."""
    return X[y == 1].mean(axis=0) - X[y == 0].mean(axis=0)


def test_seeded_reproducibility():
    a = make_drifting_stream(1500, 4, drift="gradual", width=300, random_state=7)
    b = make_drifting_stream(1500, 4, drift="gradual", width=300, random_state=7)
    c = make_drifting_stream(1500, 4, drift="gradual", width=300, random_state=8)
    for u, v in zip(a, b):
        assert np.array_equal(u, v)
    assert not np.array_equal(a[0], c[0]) and not np.array_equal(a[2], c[2])
    g = make_drifting_stream(1500, 4, random_state=np.random.default_rng(7))
    assert np.array_equal(g[0], make_drifting_stream(1500, 4, random_state=7)[0])


def test_abrupt_drift_index_and_imbalance():
    X, y, concept = make_drifting_stream(3000, 6, drift_at=1000, imbalance=9.0, random_state=0)
    assert X.shape == (3000, 6) and X.flags.c_contiguous
    assert np.array_equal(concept, (np.arange(3000) >= 1000).astype(int))
    assert np.array_equal(np.flatnonzero(np.diff(concept)) + 1, [1000])
    assert y.sum() == 300 and set(np.unique(y)) == {0, 1}
    # positives spread over the stream: both sides keep roughly the same proportion
    assert 0.07 < y[:1000].mean() < 0.13 and 0.07 < y[1000:].mean() < 0.13


def test_gradual_window():
    X, y, concept = make_drifting_stream(4000, 3, drift="gradual", drift_at=2000, width=1000,
                                         random_state=1)
    assert np.all(concept[:1500] == 0) and np.all(concept[2500:] == 1)
    window = concept[1500:2500]
    assert 0 < window.sum() < 1000
    assert window[:250].mean() < 0.3 < 0.7 < window[750:].mean()  # rising probability
    default = make_drifting_stream(4000, 3, drift="gradual", random_state=1)[2]
    assert np.all(default[:1800] == 0) and np.all(default[2200:] == 1)  # width n // 10


@pytest.mark.parametrize("drift", ["abrupt", "gradual"])
def test_concept_really_changes(drift):
    """A scorer fitted before the drift loses its ranking after it; a refit recovers."""
    n, at = 8000, 4000
    width = 800 if drift == "gradual" else None  # window [3600, 4400)
    X, y, concept = make_drifting_stream(n, 5, drift=drift, drift_at=at, width=width,
                                         class_sep=2.0, random_state=3)
    w_old = _mean_direction(X[:2000], y[:2000])
    before = roc_auc_score(y[2000:3500], X[2000:3500] @ w_old)  # held out, same concept
    after = roc_auc_score(y[4500:], X[4500:] @ w_old)
    w_new = _mean_direction(X[4500:6500], y[4500:6500])
    refit = roc_auc_score(y[6500:], X[6500:] @ w_new)
    assert before > 0.88 and refit > 0.88  # both concepts are learnable (optimum 0.92)
    assert after < 0.6                     # the old concept ranks the new one at random
    # the means swap at angle = pi: the old scorer is now clearly wrong
    X, y, _ = make_drifting_stream(n, 5, drift=drift, drift_at=at, width=width, angle=np.pi,
                                   random_state=3)
    w_old = _mean_direction(X[:2000], y[:2000])
    assert roc_auc_score(y[4500:], X[4500:] @ w_old) < 0.15
    # negative control: angle = 0 is no drift, and the same measurement sees none
    X, y, _ = make_drifting_stream(n, 5, drift=drift, drift_at=at, width=width, angle=0.0,
                                   random_state=3)
    w_old = _mean_direction(X[:2000], y[:2000])
    assert roc_auc_score(y[4500:], X[4500:] @ w_old) > 0.88


@pytest.mark.parametrize("kwargs, match", [
    ({"drift": "sudden"}, "drift must be"),
    ({"drift_at": 0}, "drift_at"),
    ({"drift_at": 1000}, "drift_at"),
    ({"drift_at": 2.5}, "drift_at"),
    ({"width": 10}, "width is for drift='gradual'"),
    ({"drift": "gradual", "width": 0}, "width"),
    ({"drift": "gradual", "drift_at": 100, "width": 400}, "window"),
    ({"imbalance": 0.5}, "imbalance"),
    ({"class_sep": 0.0}, "class_sep"),
    ({"class_sep": float("nan")}, "class_sep"),
    ({"angle": float("inf")}, "angle"),
    ({"n_features": 1}, "n_features >= 2"),
    ({"n_samples": 1}, "n_samples"),
    ({"n_features": True}, "n_features"),
])
def test_argument_validation(kwargs, match):
    args = {"n_samples": 1000, "n_features": 3, **kwargs}
    with pytest.raises(ValueError, match=match):
        make_drifting_stream(**args)


def test_one_feature_swap_allowed():
    X, y, concept = make_drifting_stream(2000, 1, angle=np.pi, random_state=2)
    first, second = concept == 0, concept == 1
    assert np.sign(_mean_direction(X[first], y[first])) == -np.sign(
        _mean_direction(X[second], y[second]))
