"""The library tells: specific warning categories (``sosl.exceptions``), each once per
model, for what a user should know."""

import warnings

import numpy as np
import pytest

import sosl
import sosl.polk
from sosl.exceptions import GrowthWarning, UnscaledInputWarning


def _data(n=200, p=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    return X, (X[:, 0] + 0.3 * rng.normal(size=n) > 0).astype(int)


def _caught(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fn()
    return w


@pytest.mark.parametrize("Est", [sosl.OAUCM, sosl.OAUCS], ids=lambda E: E.__name__)
def test_unscaled_features_warn_once(Est):
    X, y = _data()
    m = Est(lam=1.0, eta=1e-12)

    def run():
        m.fit(X * 1e5, y)
        m.partial_fit(X * 1e5, y)
        m.learn_one(X[0] * 1e5, 1)
    w = [x for x in _caught(run) if issubclass(x.category, UnscaledInputWarning)]
    assert len(w) == 1 and "MaxAbsScaler" in str(w[0].message)
    assert _caught(lambda: Est().fit(X, y)) == []              # scaled data: silent
    w = _caught(lambda: m.fit(X * 1e5, y))                     # a new fit warns again
    assert [x.category for x in w] == [UnscaledInputWarning]


def test_polk_dictionary_growth_warns_once(monkeypatch):
    monkeypatch.setattr(sosl.polk, "_GROWTH_ATOMS", 40)
    X, y = _data(n=120, p=3)
    m = sosl.POLK()

    def run():
        m.fit(X, y)
        m.partial_fit(X[:20], y[:20])
    w = [x for x in _caught(run) if issubclass(x.category, GrowthWarning)]
    assert m.support_vectors_.shape[0] >= 40
    assert len(w) == 1 and "epsilon" in str(w[0].message)
    sparse = sosl.POLK(epsilon=10.0)                          # keeps few atoms: silent
    assert not [x for x in _caught(lambda: sparse.fit(X, y))
                if issubclass(x.category, GrowthWarning)]


def test_unbounded_kernel_buffers_warn_past_the_threshold(monkeypatch):
    import sosl.okauc
    monkeypatch.setattr(sosl.okauc, "_GROWTH_INSTANCES", 150)
    X, y = _data(n=200, p=2, seed=1)
    m = sosl.OKAUCM(budget=None, gamma=0.5).fit(X[:100], y[:100])
    w = _caught(lambda: m.partial_fit(X[100:], y[100:]))
    assert [x.category for x in w] == [GrowthWarning] and "budget" in str(w[0].message)
    assert _caught(lambda: m.partial_fit(X[:10], y[:10])) == []          # once per model


def test_the_categories_have_one_home():
    import sosl.datasets
    import sosl.experiments.cache
    assert sosl.datasets.UnverifiedDatasetWarning is sosl.exceptions.UnverifiedDatasetWarning
    assert sosl.experiments.cache.CacheRepairWarning is sosl.exceptions.CacheRepairWarning
    for name in sosl.exceptions.__all__:
        assert issubclass(getattr(sosl.exceptions, name), Warning)
