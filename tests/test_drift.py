"""forgetting="auto" (sosl.drift): detection, the answer, duck-typed detectors, and that
explicit numeric forgetting is untouched."""

import copy
import pickle

import numpy as np
import pytest

import sosl._drift_select as S
import sosl.drift as D
from sosl import OAUCM, OAUCS
from sosl._core import _linear
from sosl._core._codes import Loss, Schedule
from sosl.datasets import make_drift_stream
from sosl.evaluate import prequential
from sosl.linear import BLAS_MIN_P, SMALL_KMAX

N = 30_000


def _abrupt(seed=1, rate=0.02, n=N):
    return make_drift_stream(n, 10, drift_at=n // 2, positive_rate=rate, random_state=seed)


# -- explicit numeric forgetting: the kernel's own pass, bit for bit ---------------------
@pytest.mark.parametrize("beta", [1.0, 0.99, 0.9])
def test_numeric_forgetting_is_the_plain_kernel_pass(beta):
    X, y, _ = make_drift_stream(3000, 6, drift="gradual", positive_rate=0.1, random_state=0)
    s = np.where(y == 1, 1.0, -1.0)
    p = X.shape[1]
    w, xbar, C = np.zeros(p), np.zeros((2, p)), np.zeros((2, p, p))
    scale, W, cnt = np.ones(2), np.zeros(2), np.zeros(2, dtype=np.int64)
    kmax = min(SMALL_KMAX, X.shape[0])
    _linear.linear_pass(X, s, None, w, xbar, C, scale, W, cnt, 0, 0.01, 0.0,
                        int(Schedule.STEP_INV_LAM_T), int(Loss.LOSS_M), beta, BLAS_MIN_P,
                        np.empty(3 * p + 2 * kmax * p), np.array([0.0, -1.0]))
    m = OAUCM(lam=0.01, forgetting=beta).fit(X, y)
    assert np.array_equal(m.w_, w) and np.array_equal(m.means_, xbar)
    assert np.array_equal(m.weights_, W) and "drift_" not in m.__dict__
    one = OAUCM(lam=0.01, forgetting=beta)
    for i in range(X.shape[0]):                        # the typed one-row path
        one.learn_one(X[i], y[i], classes=[0, 1])
    assert np.array_equal(one.w_, w) and np.abs(w).max() > 0


# -- detection and answer ------------------------------------------------------------------
def test_auto_detects_an_abrupt_drift_and_beats_no_forgetting():
    X, y, _ = _abrupt()
    runs = {}
    for f in (1.0, "auto"):
        m = OAUCM(forgetting=f)
        runs[f] = prequential(m, X, y, every=N).final()["auc"]
    det = m.drift_.detections
    assert len(det) == 1 and N // 2 <= det[0] < N // 2 + 300
    assert runs["auto"] > runs[1.0] + 0.005


def test_auto_answer_mutant_is_caught(monkeypatch):
    """With the answer switched off (nothing forgotten, schedule kept) "auto" is the
    paper's learner again: the gain above is gone."""
    X, y, _ = _abrupt()
    base = prequential(OAUCM(), X, y, every=N).final()["auc"]
    # the detector's candidate alone (the fixed factor's never leads)
    monkeypatch.setattr(S.MemorySelector, "observe", lambda self, f, positive: False)
    monkeypatch.setattr(D.MemoryController, "keep_factors", lambda self, w, c: np.ones(2))
    monkeypatch.setattr(D.MemoryController, "restart",
                        lambda self, t, c: self.detections.append(t))
    m = OAUCM(forgetting="auto")
    auto = prequential(m, X, y, every=N).final()["auc"]
    assert len(m.drift_.detections) >= 1 and abs(auto - base) < 1e-9


def test_no_alarm_on_a_stationary_stream_nor_under_prior_shift():
    n = 100_000
    rate = np.where(np.arange(n) < n // 2, 0.05, 0.005)        # a tenfold swing
    for r in (0.02, rate):
        X, y, _ = make_drift_stream(n, 10, drift="none", positive_rate=r, random_state=3)
        m = OAUCM(forgetting="auto").fit(X, y)
        assert m.drift_.detections == []
    # negative control: a test of the pooled mean score (both classes together) sees the
    # swing: silent on the first half, it fires on the second
    f = m.decision_function(X)
    z = (f - f[:5000].mean()) / f[:5000].std()

    def fires(values):
        det = D.Cusum(delta=0.04, threshold=200.0)
        for v in values:
            det.update(-v)                                    # fewer positives: lower
            if det.drift_detected:
                return True
        return False

    assert not fires(z[5000:n // 2]) and fires(z[n // 2:])


def test_one_row_path_equals_the_general_path(monkeypatch):
    """The typed one-row path of "auto" and the validated general path play the same
    rounds and answer the same detection (a scripted one, at the 200th signal tested,
    after the quiet start)."""
    X, y, _ = _abrupt(n=2600, rate=0.1)

    def run():
        m = OAUCM(forgetting="auto", detector=_Scripted([200]))
        for i in range(X.shape[0]):
            m.learn_one(X[i], y[i], classes=[0, 1])
        return m

    a = run()
    monkeypatch.setattr(D, "linear_one_row", lambda *args: False)   # every row: general
    b = run()
    assert a.drift_.detections == b.drift_.detections and len(a.drift_.detections) == 1
    np.testing.assert_allclose(a.w_, b.w_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(a.weights_, b.weights_, rtol=1e-12)
    assert a.t_ == b.t_ == X.shape[0] and a.drift_.t == b.drift_.t < a.t_


@pytest.mark.parametrize("Est", [OAUCM, OAUCS])
def test_fit_equals_chunked_partial_fit_and_pickle(Est):
    X, y, _ = _abrupt(n=8000)
    a = Est(forgetting="auto").fit(X, y)
    b = Est(forgetting="auto")
    for lo in range(0, X.shape[0], 64 * 5):                 # chunk boundaries line up
        b.partial_fit(X[lo:lo + 320], y[lo:lo + 320], classes=[0, 1])
        if lo == 3200:
            b = pickle.loads(pickle.dumps(b))
    assert a.drift_.detections == b.drift_.detections
    np.testing.assert_array_equal(a.w_, b.w_)


class _Scripted:
    """A detector as river has them (update, drift_detected), firing at given calls."""

    def __init__(self, at):
        self.at, self.n, self.drift_detected = set(at), 0, False

    def update(self, x):
        self.n += 1
        self.drift_detected = self.n in self.at


def test_duck_typed_detector_is_copied_and_used():
    X, y, _ = _abrupt(n=4000)
    det = _Scripted([500])
    m = OAUCM(forgetting="auto", detector=det).fit(X[:3000], y[:3000])
    assert det.n == 0                                        # the model's copy is its own
    assert len(m.drift_.detections) == 1
    assert m.weights_.sum() < 2000 and m.drift_.t < m.t_      # memory shortened


def test_bad_detector_and_parameters_leave_the_model_as_it_was():
    X, y, _ = _abrupt(n=2000)
    m = OAUCM(forgetting="auto").fit(X[:1000], y[:1000])
    before = {"drift_": copy.deepcopy(m.drift_), "w_": m.w_.copy(), "t_": m.t_}
    m.detector = object()
    with pytest.raises(TypeError, match="drift_detected"):
        m.partial_fit(X[1000:], y[1000:])
    m.detector, m.forgetting = _Scripted([]), 0.99
    with pytest.raises(ValueError, match="forgetting='auto' only"):
        m.partial_fit(X[1000:], y[1000:])
    m.forgetting = "sometimes"
    with pytest.raises(ValueError, match="forgetting"):
        m.partial_fit(X[1000:], y[1000:])
    assert m.drift_.detections == before["drift_"].detections
    np.testing.assert_array_equal(m.w_, before["w_"])
    # a failed pass (a NaN row) leaves the controller as it was
    m.detector, m.forgetting = None, "auto"
    Xbad = X[1000:].copy()
    Xbad[500, 0] = np.nan
    t_before = m.drift_.t
    with pytest.raises(ValueError):
        m.partial_fit(Xbad, y[1000:])
    assert m.drift_.t == t_before and m.t_ == before["t_"]


def test_cusum_and_signal():
    c = D.Cusum(delta=0.25, threshold=25.0)
    rng = np.random.default_rng(0)
    for v in rng.normal(size=200_000):                       # unit-variance, mean 0
        c.update(v)
    assert c.n_detections == 0
    hits = []
    for i, v in enumerate(rng.normal(size=2000) + 1.0):       # a shift of one unit
        c.update(v)
        if c.drift_detected:
            hits.append(i)
    assert hits and hits[0] < 80
    with pytest.raises(ValueError, match="threshold"):
        D.Cusum(threshold=0)
    sig = D.ClassScoreShift(warmup=1)
    assert np.isnan(sig.update(0.0, True, -1.0, 1.0))
    assert sig.update(0.0, True, -1.0, 1.0) == pytest.approx(1.0)   # (1 - 0) / rms 1


# -- FTRL-AUC ------------------------------------------------------------------------------
def test_ftrl_auto_on_text_drift():
    from sosl.ftrl import FTRLAUC

    n = 16_000
    X, y, _ = make_drift_stream(n, 300, kind="text", drift_at=n // 2, positive_rate=0.05,
                                random_state=1)
    aucs = {}
    # the defaults (gamma="auto") and the published step gamma=0.1 alike
    for gamma in ("auto", 0.1):
        for f in (1.0, "auto"):
            m = FTRLAUC(gamma=gamma, forgetting=f)
            aucs[f] = prequential(m, X, y, every=n).final()["auc"]
        det = m.drift_.detections
        assert len(det) >= 1 and n // 2 <= det[0] < n // 2 + 200, (gamma, det)
        assert aucs["auto"] > aucs[1.0] + 0.004, (gamma, aucs)
    # the batch path (chunks on a copy) finds the same change
    b = FTRLAUC(forgetting="auto").fit(X, y)
    assert len(b.drift_.detections) >= 1 and n // 2 <= b.drift_.detections[0] < n // 2 + 200


def test_ftrl_forgetting_values():
    from sosl.ftrl import FTRLAUC

    X, y, _ = make_drift_stream(500, 200, kind="text", random_state=0)
    a = FTRLAUC().fit(X, y)
    b = FTRLAUC(forgetting=1.0).fit(X, y)
    assert np.array_equal(a.w_, b.w_) and "drift_" not in b.__dict__
    with pytest.raises(ValueError, match="forgetting"):
        FTRLAUC(forgetting=0.99).fit(X, y)
    with pytest.raises(ValueError, match="forgetting='auto' only"):
        FTRLAUC(detector=_Scripted([])).fit(X, y)


def test_river_adwin_as_the_detector():
    """river's ADWIN fits the duck-typed slot (river is an optional extra)."""
    river_drift = pytest.importorskip("river.drift")
    n = 12_000
    X, y, _ = _abrupt(n=n, rate=0.05)
    m = OAUCM(forgetting="auto", detector=river_drift.ADWIN())
    for i in range(n):
        m.learn_one(X[i], y[i], classes=[0, 1])
    det = m.drift_.detections
    assert any(n // 2 <= d < n // 2 + 2000 for d in det), det
    assert not any(d < n // 2 for d in det), det            # no alarm before the drift


def test_auto_forgetting_is_refused_by_merge_and_parallel():
    from sosl.dask import Parallel
    from sosl.state import merge

    X, y, _ = make_drift_stream(600, 5, drift="abrupt", drift_at=300, positive_rate=0.2,
                                random_state=0)
    a = OAUCM(forgetting="auto").fit(X[:300], y[:300])
    b = OAUCM(forgetting="auto").fit(X[300:], y[300:])
    with pytest.raises(ValueError, match="do not merge"):
        merge([a.get_state(), b.get_state()])
    with pytest.raises(ValueError, match="give forgetting as a number"):
        Parallel(OAUCM(forgetting="auto")).fit(X, y)


def test_ftrl_auto_batch_and_one_row_answer_a_change_alike():
    """The batch path scales FTRL's sums once per detection, as the one-row path does (the
    mutant, a second scaling, over-forgets and moves w well past the bound; what is left
    comes from the chunks scoring their rows under the chunk's first weights)."""
    from sosl.ftrl import FTRLAUC

    n = 16_000
    X, y, _ = make_drift_stream(n, 300, kind="text", drift_at=n // 2, positive_rate=0.05,
                                random_state=1)
    a = FTRLAUC(forgetting="auto").fit(X, y)
    b = FTRLAUC(forgetting="auto").partial_fit(X[:2000], y[:2000], classes=[0, 1])
    for i in range(2000, n):
        b.learn_one(X[i], y[i])
    assert len(a.drift_.detections) >= 1 and len(b.drift_.detections) >= 1
    assert np.abs(a.w_ - b.w_).max() < 0.05 * np.abs(b.w_).max()
