"""make_drift_stream: drift at the rows asked, the rate asked, the concept really changes."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics import roc_auc_score

from sosl.datasets import make_drift_stream


def _direction(X, y):
    """The difference of the class means: the simplest linear scorer fitted on data."""
    return np.asarray(X[y == 1].mean(axis=0) - X[y == 0].mean(axis=0)).ravel()


def _auc(X, y, w):
    return roc_auc_score(y, np.asarray(X @ w).ravel())


@pytest.mark.parametrize("kind", ["gaussian", "text"])
def test_seeded(kind):
    a = make_drift_stream(3000, 200, kind=kind, drift="gradual", width=400, random_state=3)
    b = make_drift_stream(3000, 200, kind=kind, drift="gradual", width=400, random_state=3)
    c = make_drift_stream(3000, 200, kind=kind, drift="gradual", width=400, random_state=4)
    for u, v in zip(a, b):
        assert (u != v).nnz == 0 if sp.issparse(u) else np.array_equal(u, v)
    assert not np.array_equal(a[1], c[1])


def test_drift_rows_and_recurrence():
    n = 40_000
    _, _, c = make_drift_stream(n, 4, drift="abrupt", drift_at=[10_000, 25_000], random_state=0)
    assert (np.flatnonzero(np.diff(c)) + 1).tolist() == [10_000, 25_000]
    assert c[[0, 10_000, 39_999]].tolist() == [0, 1, 2]                  # three concepts
    _, _, c = make_drift_stream(n, 4, drift="recurring", random_state=0)
    assert (np.flatnonzero(np.diff(c)) + 1).tolist() == [10_000, 20_000, 30_000]
    assert c[[0, 15_000, 25_000, 35_000]].tolist() == [0, 1, 0, 1]        # the old one returns
    _, _, c = make_drift_stream(n, 4, drift="gradual", drift_at=[10_000, 30_000], width=2000,
                                random_state=0)
    assert np.all(c[:9000] == 0) and np.all(c[11_000:29_000] == 1) and np.all(c[31_000:] == 2)
    window = c[9000:11_000]
    assert window[:500].mean() < 0.3 and window[-500:].mean() > 0.7      # a rising mixture
    _, _, c = make_drift_stream(n, 4, drift="none", random_state=0)
    assert not c.any()


@pytest.mark.parametrize("rate", [0.001, 0.01, 0.05])
def test_positive_rate(rate):
    n = 200_000
    _, y, _ = make_drift_stream(n, 2, positive_rate=rate, random_state=1)
    sd = np.sqrt(rate * (1 - rate) / n)
    assert abs(y.mean() - rate) < 5 * sd
    # a moving rate: a tenfold swing row by row
    r = np.where(np.arange(n) < n // 2, rate, rate / 10)
    _, y, _ = make_drift_stream(n, 2, positive_rate=r, random_state=1)
    assert abs(y[:n // 2].mean() / y[n // 2:].mean() - 10) < 3 + 30 / np.sqrt(rate * n)


@pytest.mark.parametrize("kind, p", [("gaussian", 6), ("text", 400)])
def test_concept_really_changes(kind, p):
    """A scorer of the first concept fails after the drift, refits recover, and the first
    concept's scorer works again when that concept recurs (negative control: angle 0)."""
    n = 60_000
    X, y, c = make_drift_stream(n, p, kind=kind, drift="recurring", positive_rate=0.05,
                                random_state=2)
    w0 = _direction(X[:12_000], y[:12_000])
    w1 = _direction(X[20_000:27_000], y[20_000:27_000])
    assert _auc(X[12_000:15_000], y[12_000:15_000], w0) > 0.85             # same concept
    assert _auc(X[28_000:30_000], y[28_000:30_000], w1) > 0.85             # refit, concept 1
    assert _auc(X[16_000:30_000], y[16_000:30_000], w0) < 0.65             # old scorer: lost
    assert _auc(X[31_000:45_000], y[31_000:45_000], w0) > 0.85             # concept 0 returns
    if kind == "gaussian":
        X, y, c = make_drift_stream(n, p, drift="recurring", positive_rate=0.05, angle=0.0,
                                    random_state=2)
        w0 = _direction(X[:12_000], y[:12_000])
        assert _auc(X[16_000:30_000], y[16_000:30_000], w0) > 0.85


def test_text_rows():
    X, y, _ = make_drift_stream(5000, 1000, kind="text", words_per_row=12, random_state=0)
    assert sp.isspmatrix_csr(X) and X.dtype == np.float64 and X.has_sorted_indices
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    np.testing.assert_allclose(norms, 1.0, rtol=1e-12)
    assert 5 < X.nnz / X.shape[0] < 12                                   # about 12 tokens


@pytest.mark.parametrize("kwargs, match", [
    ({"kind": "image"}, "kind must be"),
    ({"drift": "sudden"}, "drift must be"),
    ({"drift_at": 0}, "drift_at"),
    ({"drift_at": [500, 300]}, "strictly increasing"),
    ({"drift_at": []}, "empty"),
    ({"drift_at": "x"}, "drift_at"),
    ({"width": 10}, "width is for"),
    ({"drift": "none", "drift_at": 10}, "no drift_at"),
    ({"drift": "gradual", "drift_at": [400, 450], "width": 100}, "window"),
    ({"positive_rate": 0.0}, "positive_rate"),
    ({"positive_rate": np.full(3, 0.1)}, "shape"),
    ({"class_sep": -1.0}, "class_sep"),
    ({"kind": "text", "n_features": 50}, "n_features >= 4"),
    ({"kind": "text", "n_features": 200, "signal": 0.0}, "signal"),
    ({"kind": "text", "n_features": 200, "words_per_row": 0.5}, "words_per_row"),
])
def test_bad_arguments(kwargs, match):
    args = {"n_samples": 1000, "n_features": 3, **kwargs}
    with pytest.raises(ValueError, match=match):
        make_drift_stream(**args)
