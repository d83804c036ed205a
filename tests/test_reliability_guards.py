"""Regression tests of the defects found by an independent battery: the guards that
refuse a call instead of going wrong. D11: AdaOAM had no memory guard (and the other
learners whose state can grow past ``max_memory``); pickles carry the version and warn
on a mismatch; a multiclass target points to one-vs-rest.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from helpers import fitted_state, same_state

import sosl
from sosl import OAUCM


# -- D11 ------------------------------------------------------------------------------------
def test_adaoam_refuses_a_state_larger_than_max_memory():
    m = sosl.AdaOAM(max_memory=10**6)
    with pytest.raises(MemoryError, match="max_memory"):
        m.fit(np.ones((2, 400)), [0, 1])
    assert not hasattr(m, "classes_")
    sosl.AdaOAM(max_memory=10**6).fit(np.ones((2, 100)), [0, 1])      # 0.32 MB fits
    with pytest.raises(MemoryError, match="GiB"):
        sosl.AdaOAM().fit(np.ones((2, 400_000)), [0, 1])              # 5 TB: "auto"


def test_oam_refuses_slots_widened_past_max_memory():
    rng = np.random.default_rng(0)
    X = sp.random(40, 10_000, density=0.001, random_state=0, format="csr")
    y = np.arange(40) % 2
    m = sosl.OAM(buffer_size=50, max_memory=2**20).fit(X, y)
    before = fitted_state(m)
    long_row = sp.csr_matrix((rng.normal(size=8000), (np.zeros(8000, dtype=int),
                              rng.choice(10_000, 8000, replace=False))), shape=(1, 10_000))
    with pytest.raises(MemoryError, match="width 8192.*max_memory"):
        m.partial_fit(long_row, [1])
    assert same_state(fitted_state(m), before)
    m.set_params(max_memory="auto")
    m.partial_fit(long_row, [1])                             # 19 MB with the copy: fits
    assert m.buffer_indices_.shape[2] == 8192


def test_unbounded_okaucm_refuses_growth_past_max_memory():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, 5))
    y = (X[:, 0] > 0).astype(int)
    m = sosl.OKAUCM(budget=None, max_memory=2**20).fit(X[:100], y[:100])
    before = fitted_state(m)
    with pytest.raises(MemoryError, match="budget=None.*max_memory"):
        m.partial_fit(X[100:], y[100:])
    assert same_state(fitted_state(m), before)
    sosl.OKAUCM(budget=None, max_memory=2**23).fit(X, y)      # 8 MB is enough for 400


def test_polk_refuses_a_dictionary_past_max_memory():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(600, 30))
    y = (X[:, 0] > 0).astype(int)
    m = sosl.POLK(max_memory=2**20)
    with pytest.raises(MemoryError, match="POLK: the dictionary would grow"):
        m.fit(X, y)
    assert not hasattr(m, "classes_")
    kept = sosl.POLK().fit(X, y).support_vectors_.shape[0]
    assert kept > 100                                      # the defaults keep many atoms


# -- pickles carry the version ------------------------------------------------------------
def test_pickles_carry_the_version_and_warn_on_a_mismatch():
    import pickle
    import warnings

    from sosl.exceptions import InconsistentVersionWarning
    m = OAUCM().fit(np.eye(4), [0, 1, 0, 1])
    blob = pickle.dumps(m)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        same = pickle.loads(blob)                           # same version: no warning
    assert "_sosl_version" not in vars(same) and np.array_equal(same.coef_, m.coef_)
    state = m.__getstate__()
    assert state["_sosl_version"] == sosl.__version__
    state["_sosl_version"] = "0.0.1"
    other = OAUCM.__new__(OAUCM)
    with pytest.warns(InconsistentVersionWarning, match="0.0.1.*" + sosl.__version__):
        other.__setstate__(state)
    assert np.array_equal(other.coef_, m.coef_) and "_sosl_version" not in vars(other)


def test_multiclass_error_points_to_one_vs_rest():
    with pytest.raises(ValueError, match="OneVsRestClassifier"):
        OAUCM().fit(np.eye(3), [0, 1, 2])
