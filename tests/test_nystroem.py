"""NystroemOAUCM: the feature maps against their NumPy reference and scikit-learn's
transforms, the warm-up rule, OAUC-M's pass on the mapped rows, state and layout.

The contract every learner keeps (fit == partial_fit over chunks, pickling, bad input,
learn_one) is in tests/test_contract.py, which picks this learner up from ``sosl.__all__``.
"""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from helpers import mutant_of
from sklearn.kernel_approximation import Nystroem, RBFSampler

from sosl import OAUCM, NystroemOAUCM
from sosl import state as S
from sosl._core import _features
from sosl._core import _features_ref as ref


def _circle(n=600, p=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, p))
    y = (np.hypot(X[:, 0], X[:, 1]) + 0.1 * rng.normal(size=n) < 0.6).astype(int)
    return X, y


def _landmarks(m=12, p=4, seed=1):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(m, p))


# -- the maps: production == reference == scikit-learn -----------------------------------
@pytest.mark.parametrize("sparse", [False, True])
def test_nystroem_map_equals_its_reference(sparse):
    C = _landmarks()
    gamma = 0.3                                        # a well-conditioned Gram matrix
    X = np.random.default_rng(2).normal(size=(40, 4))
    K = ref.rbf(C, C, gamma)
    N = _features.nystroem_normalization(K)
    Xin = sp.csr_matrix(X) if sparse else X
    got = _features.nystroem_map(Xin, _features.nystroem_parts(C, N), gamma)
    want = ref.nystroem_map(X, C, gamma)
    assert np.abs(want).max() > 0.1
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    # on the landmarks the map is exact: z(c_i) . z(c_j) = K_ij
    Zc = _features.nystroem_map(C, _features.nystroem_parts(C, N), gamma)
    np.testing.assert_allclose(Zc @ Zc.T, K, atol=1e-12)


def test_a_mutant_of_the_reference_is_caught():
    C = _landmarks()
    X = np.random.default_rng(2).normal(size=(40, 4))
    N = _features.nystroem_normalization(ref.rbf(C, C, 0.3))
    got = _features.nystroem_map(X, _features.nystroem_parts(C, N), 0.3)
    bad_norm = mutant_of(ref.nystroem_normalization, "1.0 / np.sqrt(", "1.0 / (")   # K^-1
    bad = ref.rbf(X, C, 0.3) @ bad_norm(C, 0.3).T
    assert not np.allclose(got, bad, rtol=1e-6)
    bad_rbf = mutant_of(ref.rbf, "np.exp(-gamma * D2)", "np.exp(-gamma * D2 / 2)")
    assert not np.allclose(ref.rbf(X, C, 0.3), bad_rbf(X, C, 0.3), rtol=1e-6)
    bad_rff = mutant_of(ref.rff_map, "np.sqrt(2.0 / W.shape[1])", "np.sqrt(1.0 / W.shape[1])")
    W, b = np.ones((4, 5)), np.zeros(5)
    assert not np.allclose(_features.rff_map(X, W, b), bad_rff(X, W, b))


@pytest.mark.parametrize("sparse", [False, True])
def test_rff_map_equals_its_reference(sparse):
    rng = np.random.RandomState(3)
    W, b = _features.draw_rff(rng, 4, 30, 0.5)
    X = np.random.default_rng(4).normal(size=(25, 4))
    got = _features.rff_map(sp.csr_matrix(X) if sparse else X, W, b)
    np.testing.assert_allclose(got, ref.rff_map(X, W, b), rtol=1e-12, atol=1e-13)


def test_the_learners_nystroem_map_equals_sklearns_on_its_landmarks():
    X, y = _circle(p=4)
    X[:, 3] *= 3.0
    m = NystroemOAUCM(n_components=15).fit(X, y)
    C = m.components_
    np.testing.assert_array_equal(C, X[:15])                 # the first rows
    assert m.gamma_ == pytest.approx(ref.gamma_scale(X[:15]), rel=1e-14)
    # sklearn's Nystroem on exactly these rows keeps them all, in a permuted order
    sk = Nystroem(gamma=m.gamma_, n_components=15, random_state=0).fit(C)
    np.testing.assert_array_equal(sk.components_, C[sk.component_indices_])
    Z = m.feature_map(X)
    want = sk.transform(X)
    assert np.abs(want).max() > 0.1
    np.testing.assert_allclose(Z[:, sk.component_indices_], want, rtol=1e-12, atol=1e-12)
    # and the reference gives the learner's map, in the learner's own order
    np.testing.assert_allclose(Z, ref.nystroem_map(X, C, m.gamma_), rtol=1e-12, atol=1e-12)


def test_the_learners_rff_equals_sklearns_rbfsampler_with_the_same_seed():
    X, y = _circle(p=3)
    m = NystroemOAUCM(n_components=40, method="rff", random_state=7).fit(X, y)
    sk = RBFSampler(gamma=m.gamma_, n_components=40, random_state=7).fit(X)
    np.testing.assert_array_equal(m.random_weights_, sk.random_weights_)
    np.testing.assert_allclose(m.feature_map(X), sk.transform(X), rtol=1e-12, atol=1e-13)
    # another seed draws other features (the check can fail)
    other = RBFSampler(gamma=m.gamma_, n_components=40, random_state=8).fit(X)
    assert not np.allclose(m.feature_map(X), other.transform(X), atol=1e-3)


def test_a_row_maps_to_the_same_bits_alone_or_in_any_batch():
    X, y = _circle(n=400, p=5)
    for method in ("nystroem", "rff"):
        m = NystroemOAUCM(n_components=37, method=method, random_state=0).fit(X, y)
        Z = m.feature_map(X)
        for size in (1, 3, 16, 100):
            parts = np.vstack([m.feature_map(X[i:i + size]) for i in range(9, 9 + 3 * size, size)])
            np.testing.assert_array_equal(parts, Z[9:9 + 3 * size])


# -- learning: OAUC-M's pass on the mapped rows ---------------------------------------------
@pytest.mark.parametrize("method", ["nystroem", "rff"])
def test_the_learner_is_oaucm_on_the_mapped_rows(method):
    X, y = _circle()
    m = NystroemOAUCM(n_components=25, method=method, lam=1e-3, random_state=0).fit(X, y)
    Z = m.feature_map(X)
    o = OAUCM(lam=1e-3).fit(Z, y)
    for name in ("w_", "means_", "scatter_", "scales_", "weights_", "counts_"):
        np.testing.assert_array_equal(getattr(m, name), getattr(o, name), err_msg=name)
    np.testing.assert_array_equal(m.decision_function(X), o.decision_function(Z))
    # the check can fail: another lam learns other weights
    assert not np.array_equal(OAUCM(lam=2e-3).fit(Z, y).w_, m.w_)


def test_warm_up_scores_zero_then_the_map_is_built_and_the_rows_replayed():
    X, y = _circle()
    m = NystroemOAUCM(n_components=30).partial_fit(X[:29], y[:29], classes=[0, 1])
    assert m.t_ == 29 and m.n_components_ == 0 and m.components_.shape == (29, 3)
    np.testing.assert_array_equal(m.decision_function(X), 0.0)
    with pytest.raises(ValueError, match="warm-up"):
        m.feature_map(X)
    m.partial_fit(X[29:31], y[29:31])
    assert m.n_components_ == 30 and m.t_ == 31 and m.warm_signs_.shape == (0,)
    assert m.counts_.sum() == 31                      # the warm-up rows were learned
    assert np.ptp(m.decision_function(X)) > 0


def test_fit_on_fewer_rows_than_the_warm_up_uses_them_all():
    X, y = _circle(n=50)
    m = NystroemOAUCM().fit(X, y)
    assert m.n_components_ == 50 and m.counts_.sum() == 50
    assert np.ptp(m.decision_function(X)) > 0 and m.calibration_[1] > 1.0


def test_it_learns_a_kernel_problem_a_linear_learner_cannot():
    from sosl.metrics import auc
    X, y = _circle(n=3000, p=2, seed=5)
    Xt, yt = _circle(n=1000, p=2, seed=6)
    for method in ("nystroem", "rff"):
        m = NystroemOAUCM(n_components=100, method=method, random_state=0).fit(X, y)
        assert auc(yt, m.decision_function(Xt)) > 0.9
    assert auc(yt, OAUCM().fit(X, y).decision_function(Xt)) < 0.7


# -- state, layout, bad input ----------------------------------------------------------
@pytest.mark.parametrize("method", ["nystroem", "rff"])
def test_state_round_trip_and_pickle_inside_the_warm_up(method):
    X, y = _circle()
    m = NystroemOAUCM(n_components=30, method=method, random_state=0)
    m.partial_fit(X[:10], y[:10], classes=[0, 1])
    again = pickle.loads(pickle.dumps(m))
    m.partial_fit(X[10:], y[10:])
    again.partial_fit(X[10:], y[10:])
    np.testing.assert_array_equal(again.w_, m.w_)
    back = NystroemOAUCM.from_state(S.get_state(m))
    np.testing.assert_array_equal(back.decision_function(X), m.decision_function(X))
    back.partial_fit(X[:50], y[:50])
    m.partial_fit(X[:50], y[:50])
    np.testing.assert_array_equal(back.w_, m.w_)


def test_a_changed_map_is_refused_and_the_state_kept():
    X, y = _circle()
    m = NystroemOAUCM(n_components=20).fit(X, y)
    w = m.w_.copy()
    for change in (dict(method="rff"), dict(n_components=21), dict(gamma=0.5)):
        m.set_params(**change)
        with pytest.raises(ValueError, match="changed"):
            m.partial_fit(X[:5], y[:5])
        np.testing.assert_array_equal(m.w_, w)
        m.set_params(method="nystroem", n_components=20, gamma="scale")
    m.set_params(lam=1e-3)                        # the step may change, as in OAUCM
    m.partial_fit(X[:5], y[:5])


@pytest.mark.parametrize("bad,err", [(dict(n_components=0), ValueError),
                                     (dict(method="poly"), ValueError),
                                     (dict(gamma=-1.0), ValueError),
                                     (dict(gamma="auto"), ValueError),
                                     (dict(lam=0.0), ValueError)])
def test_bad_parameters_are_named(bad, err):
    X, y = _circle(n=40)
    with pytest.raises(err, match=next(iter(bad)) if "lam" not in bad else "lam"):
        NystroemOAUCM(**bad).fit(X, y)


def test_the_river_adapter_learns_with_it():
    from sosl import river as sr
    X, y = _circle(n=200, p=2)
    ad = sr.NystroemOAUCM(n_components=20)
    for x, t in zip(X, y):
        ad.learn_one({"a": x[0], "b": x[1]}, bool(t))
    assert ad.estimator_.n_components_ == 20 and ad.estimator_.n_seen_ == 200
    s = [ad.score_one({"a": x[0], "b": x[1]}) for x in X]
    assert np.ptp(s) > 0


def test_the_fits_in_sample_scores_reuse_the_mapped_rows(monkeypatch):
    X, y = _circle(n=3000)
    mapped = []
    real = NystroemOAUCM._map

    def counting(self, state, A):
        mapped.append(A.shape[0])
        return real(self, state, A)

    monkeypatch.setattr(NystroemOAUCM, "_map", counting)
    a = NystroemOAUCM(n_components=20).fit(X, y)
    assert sum(mapped) == 3000                       # each row once: pass and Platt
    mapped.clear()
    monkeypatch.setattr(NystroemOAUCM, "_cached_rows", lambda self, X: None)
    b = NystroemOAUCM(n_components=20).fit(X, y)
    assert sum(mapped) == 6000                       # mapped again for the Platt scaling
    np.testing.assert_array_equal(a.calibration_, b.calibration_)
    assert a.calibration_[1] > 1.0 and "_mapped_tail" not in vars(a)


def test_models_of_two_shards_do_not_merge():
    # each shard freezes its own landmarks: their moments live in different feature spaces
    X, y = _circle()
    a = NystroemOAUCM(n_components=20).fit(X[:300], y[:300])
    b = NystroemOAUCM(n_components=20).fit(X[300:], y[300:])
    assert not np.array_equal(a.components_, b.components_)
    with pytest.raises((TypeError, ValueError), match="NystroemOAUCM"):
        NystroemOAUCM.merge([a, b])


def test_learn_one_takes_the_typed_stepper_on_the_mapped_row():
    X, y = _circle()
    a = NystroemOAUCM(n_components=20).fit(X[:100], y[:100])
    b = pickle.loads(pickle.dumps(a))
    for i in range(100, 140):
        a.learn_one(X[i], y[i])
        # a weight (of 1) sends the row through the general path: the batch pass
        b.partial_fit(X[i:i + 1], y[i:i + 1], sample_weight=np.ones(1))
        assert "_stepper_" not in vars(b)
    assert "_stepper_" in vars(a)                   # the typed one-row path ran
    for name in a._state_names + ("t_", "calibration_"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert a.score_one(X[3]) == pytest.approx(a.decision_function(X[3:4])[0], rel=1e-12)
    assert "_map_parts_" not in pickle.loads(pickle.dumps(a)).__dict__
    c = pickle.loads(pickle.dumps(b))
    c.partial_fit(X[140:141], y[140:141])           # one dense row: the typed path too
    assert "_stepper_" in vars(c) and c.t_ == b.t_ + 1


def test_the_kernel_panel_runs_and_reports_every_contender(capsys):
    import importlib.util
    import os
    from pathlib import Path
    d = os.environ.get("SOSL_DATA_DIR")
    if not d:
        pytest.skip("SOSL_DATA_DIR is not set")
    path = Path(__file__).parents[1] / "benchmarks" / "bench_kernel_defaults.py"
    spec = importlib.util.spec_from_file_location("bench_kernel_defaults", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    rows = bench.main(["--quick", "--datasets", "svmguide3", "--data-dir", d,
                       "--panel", "kernel"])
    assert {r["learner"] for r in rows} >= {"NystroemOAUCM()", bench.PEER,
                                            "OKAUCM(budget=100)", "KOIL(budget=100)"}
    assert all(0.5 < r["auc"] <= 1.0 and r["rows_per_s"] > 0 for r in rows)
    peer = next(r for r in rows if r["learner"] == bench.PEER)
    assert peer["auc_vs_peer"] == 0.0 and peer["speed_vs_peer"] == 1.0
    assert "svmguide3: NystroemOAUCM() AUC" in capsys.readouterr().out


def test_weights_are_oaucms_on_the_mapped_rows_warm_up_included():
    X, y = _circle()
    sw = np.random.default_rng(9).choice([0.0, 0.5, 1.0, 3.0], size=X.shape[0])
    m = NystroemOAUCM(n_components=25, lam=1e-3).fit(X, y, sample_weight=sw)
    keep = sw > 0
    np.testing.assert_array_equal(m.components_, X[keep][:25])   # weight 0: never a landmark
    o = OAUCM(lam=1e-3).fit(m.feature_map(X[keep]), y[keep], sample_weight=sw[keep])
    for name in ("w_", "means_", "scatter_", "weights_", "counts_"):
        np.testing.assert_array_equal(getattr(m, name), getattr(o, name), err_msg=name)
    # chunks through the warm-up (its weights buffered) give the same state
    c = NystroemOAUCM(n_components=25, lam=1e-3)
    for a, b in [(0, 10), (10, 33), (33, 600)]:
        c.partial_fit(X[a:b], y[a:b], classes=[0, 1], sample_weight=sw[a:b])
    np.testing.assert_array_equal(c.w_, m.w_)
    # the check can fail: the weights ignored
    assert not np.array_equal(NystroemOAUCM(n_components=25, lam=1e-3).fit(X[keep], y[keep]).w_,
                              m.w_)
