"""Partial AUC, average precision, sample weights and the update(y_true, y_score) order."""

import pickle

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, roc_auc_score

from sosl._core import _auc, _auc_ref
from sosl.metrics import (
    RollingAUC,
    RollingAveragePrecision,
    StreamingAUC,
    StreamingAveragePrecision,
    auc,
    average_precision,
    partial_auc,
)


def _batch(seed, n=None, n_levels=6, weighted=False):
    """Labels 0/1 and scores with many ties; weights with zeros when asked."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(8, 300)) if n is None else n
    y = (rng.random(n) < rng.uniform(0.05, 0.5)).astype(np.int64)
    y[:2] = [0, 1]
    s = (rng.integers(0, n_levels, size=n) + y * rng.integers(0, 3, size=n)).astype(float)
    w = None
    if weighted:
        w = rng.exponential(size=n) * (rng.random(n) > 0.2)
        w[:2] = 1.0
    return y, s, w


# ------------------------------------------------------------------------------ batch


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("weighted", [False, True])
def test_batch_metrics_equal_sklearn_with_ties_and_weights(seed, weighted):
    y, s, w = _batch(seed, weighted=weighted)
    assert auc(y, s, sample_weight=w) == pytest.approx(
        roc_auc_score(y, s, sample_weight=w), rel=1e-12, abs=1e-12)
    assert average_precision(y, s, sample_weight=w) == pytest.approx(
        average_precision_score(y, s, sample_weight=w), rel=1e-12, abs=1e-12)
    n_neg = int((y == 0).sum())
    # random cuts, and cuts on a negative exactly (k / n_neg) and just either side of one
    cuts = [0.01, 0.1, 0.37, 0.5, 1.0, 1 / n_neg, 3 / n_neg, 3 / n_neg + 1e-9, 3 / n_neg - 1e-9]
    for m in cuts:
        if not 0 < m <= 1:
            continue
        assert partial_auc(y, s, m, sample_weight=w) == pytest.approx(
            roc_auc_score(y, s, max_fpr=m, sample_weight=w), rel=1e-12, abs=1e-12), m


def test_partial_auc_and_ap_see_what_auc_misses_at_the_top():
    # 5 positives, 95 negatives, 5 mis-ordered pairs in both rankings: in `top` one negative
    # outranks every positive, in `mid` the fifth positive sits below five negatives
    y = np.r_[np.ones(5), np.zeros(95)]
    top = np.r_[np.arange(95, 100), 100, np.arange(94)].astype(float)
    mid = np.r_[96, 97, 98, 99, 90, np.arange(91, 96), np.arange(90)].astype(float)
    assert auc(y, top) == auc(y, mid) == pytest.approx(1 - 5 / 475)
    def mcclish(pa, m):
        return 0.5 * (1 + (pa - m * m / 2) / (m - m * m / 2))

    # by hand: left of fpr 0.02, `top` has tpr 0 up to 1/95 and 1 after, `mid` has tpr 0.8
    assert partial_auc(y, top, 0.02) == pytest.approx(mcclish(0.02 - 1 / 95, 0.02), abs=1e-12)
    assert partial_auc(y, mid, 0.02) == pytest.approx(mcclish(0.8 * 0.02, 0.02), abs=1e-12)
    assert partial_auc(y, top, 0.02) < 0.75 < 0.85 < partial_auc(y, mid, 0.02)
    # precision at the positives: 1/2 ... 5/6 in `top`, 1, 1, 1, 1, 5/10 in `mid`
    assert average_precision(y, top) == pytest.approx(np.mean([1 / 2, 2 / 3, 3 / 4, 4 / 5, 5 / 6]))
    assert average_precision(y, mid) == pytest.approx(4.5 / 5)
    assert partial_auc(y, y, 0.1) == 1.0                        # perfect ranking
    assert partial_auc(y, np.zeros(100), 0.1) == pytest.approx(0.5)  # all tied: random


def test_batch_metrics_labels_and_pos_label():
    y, s, _ = _batch(3)
    names = np.where(y == 1, "spam", "ham")
    assert partial_auc(names, s, 0.2, pos_label="spam") == pytest.approx(
        roc_auc_score(y, s, max_fpr=0.2), abs=1e-12)
    assert average_precision(names, s, pos_label="spam") == pytest.approx(
        average_precision_score(y, s), abs=1e-12)
    assert average_precision([1, 1], [0.2, 0.3], pos_label=1) == 1.0   # positives only
    assert auc(1 - y, s) == pytest.approx(1 - auc(y, s), abs=1e-12)


@pytest.mark.parametrize("call,err,match", [
    (lambda: partial_auc([0, 1], [0.1, 0.2], 0.0), ValueError, "max_fpr"),
    (lambda: partial_auc([0, 1], [0.1, 0.2], 1.5), ValueError, "max_fpr"),
    (lambda: partial_auc([0, 1], [0.1, 0.2], True), TypeError, "max_fpr"),
    (lambda: partial_auc([0, 1], [0.1, 0.2], "0.1"), TypeError, "max_fpr"),
    (lambda: auc([0, 1], [0.1, 0.2], sample_weight=[1, -1]), ValueError, "non-negative"),
    (lambda: auc([0, 1], [0.1, 0.2], sample_weight=[1, np.nan]), ValueError, "finite"),
    (lambda: auc([0, 1], [0.1, 0.2], sample_weight=[1]), ValueError, "sample_weight"),
    (lambda: auc([0, 1], [0.1, 0.2], sample_weight=[1, 0]), ValueError, "no positives"),
    (lambda: average_precision([0, 0], [0.1, 0.2], pos_label=1), ValueError, "no positives"),
    (lambda: average_precision([0, 0, 1], [0.1, 0.2]), ValueError, "entries"),
    (lambda: average_precision([0, 1, 2], [0.1, 0.2, 0.3]), ValueError, "two classes"),
    (lambda: average_precision([0, 1], ["a", "b"]), TypeError, "real numbers"),
    (lambda: average_precision([0, 1], [np.inf, 0.0]), ValueError, "NaN or infinity"),
])
def test_batch_errors(call, err, match):
    with pytest.raises(err, match=match):
        call()


# ---------------------------------------------------------------- streaming and rolling


def _stream(seed, n, n_levels=None, p_pos=0.3):
    """Labels 0/1 and scores with ties (n_levels distinct values) or continuous."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < p_pos).astype(np.int64)
    if n_levels is None:
        s = rng.normal(size=n) + 0.8 * y
    else:
        s = (rng.integers(0, n_levels, size=n) + 2 * y * rng.integers(0, 2, size=n)).astype(float)
    return y, s


def _pauc(m):
    def want(yy, ss):
        return None if yy.min() == yy.max() else roc_auc_score(yy, ss, max_fpr=m)
    return want


def _ap(yy, ss):
    if yy.max() == 0:
        return None
    return average_precision_score(yy, ss)


def _mismatches(metric, y, s, want, window=None, stop=None):
    """Steps where metric.get() differs from want(y, s) on the prefix (or the window);
    want returns None where the metric is undefined (get() must then be NaN)."""
    bad, checked = [], 0
    for i in range(s.shape[0]):
        metric.update(y[i], s[i])
        lo = 0 if window is None else max(0, i + 1 - window)
        expected = want(y[lo:i + 1], s[lo:i + 1])
        got = metric.get()
        if expected is None:
            if not np.isnan(got):
                bad.append((i, got, "nan"))
            continue
        checked += 1
        if abs(got - expected) > 1e-12:
            bad.append((i, got, expected))
            if stop is not None and len(bad) >= stop:
                break
    return bad, checked


@pytest.mark.parametrize("seed,n_levels", [(0, 3), (1, 8), (2, 40), (3, None)])
@pytest.mark.parametrize("max_fpr", [0.05, 0.3, 1.0])
def test_streaming_partial_auc_equals_sklearn_on_every_prefix(seed, n_levels, max_fpr):
    y, s = _stream(seed, 120, n_levels)
    bad, checked = _mismatches(StreamingAUC(max_fpr=max_fpr), y, s, _pauc(max_fpr))
    assert checked > 100
    assert bad == []


@pytest.mark.parametrize("seed,n_levels,p_pos", [(0, 3, 0.3), (1, 8, 0.1), (2, 40, 0.5),
                                                 (3, None, 0.2)])
def test_streaming_average_precision_equals_sklearn_on_every_prefix(seed, n_levels, p_pos):
    y, s = _stream(seed, 120, n_levels, p_pos)
    y[0] = 1  # the first prefixes hold positives only: AP = 1 there, as in scikit-learn
    bad, checked = _mismatches(StreamingAveragePrecision(), y, s, _ap)
    assert checked == 120
    assert bad == []


def test_streaming_average_precision_is_nan_until_a_positive_is_seen():
    m = StreamingAveragePrecision()
    for score in (0.3, 0.1):
        assert np.isnan(m.update(0, score).get())
    assert m.update(1, 0.2).get() == pytest.approx(0.5)
    assert repr(m) == "StreamingAveragePrecision: 0.500000"


@pytest.mark.parametrize("window,seed,n_levels,min_checked", [
    (1, 0, 3, 0),  # one pair never holds both classes
    (7, 1, 3, 60),
    (40, 2, 10, 100),
    (90, 3, None, 100),
])
@pytest.mark.parametrize("max_fpr", [0.1, 0.5])
def test_rolling_partial_auc_equals_sklearn_on_every_window(window, seed, n_levels, min_checked,
                                                            max_fpr):
    y, s = _stream(seed, 130, n_levels)
    m = RollingAUC(window, max_fpr=max_fpr)
    bad, checked = _mismatches(m, y, s, _pauc(max_fpr), window=window)
    assert bad == []
    assert checked >= min_checked
    assert m.n_pos + m.n_neg == window


@pytest.mark.parametrize("window,seed,n_levels", [(1, 0, 3), (7, 1, 3), (40, 2, 10),
                                                  (90, 3, None)])
def test_rolling_average_precision_equals_sklearn_on_every_window(window, seed, n_levels):
    y, s = _stream(seed, 130, n_levels)
    m = RollingAveragePrecision(window)
    bad, checked = _mismatches(m, y, s, _ap, window=window)
    assert bad == []
    assert checked >= (30 if window == 1 else 100)
    assert m.n_pos + m.n_neg == window


# --------------------------------------------------------------- mutants of the reference


class _NoMcClish(_auc_ref.AUCCounter):
    """Mutant: the partial area divided by max_fpr, not McClish's standardization."""

    @staticmethod
    def _mcclish(pa, m):
        return pa / m


class _CutAsStep(_auc_ref.AUCCounter):
    """Mutant: the segment the cut crosses is taken flat at its lower end."""

    @staticmethod
    def _segment2(a, p, q, w):
        return w * (2 * a + (p if w == q else 0))


class _TiesCountAbove(_auc_ref.AUCCounter):
    """Mutant: at a threshold, the tied negatives are not counted in the precision."""

    @staticmethod
    def _precision(a, b, p, q):
        return (a + p) / (a + p + b)


def _wrapped(cls, core):
    m = cls()
    m._core = core
    return m


@pytest.mark.parametrize("mutant,cls,want", [
    (_NoMcClish, lambda: StreamingAUC(max_fpr=0.3), _pauc(0.3)),
    (_CutAsStep, lambda: StreamingAUC(max_fpr=0.3), _pauc(0.3)),
    (_TiesCountAbove, StreamingAveragePrecision, _ap),
])
def test_prefix_checks_catch_mutants(mutant, cls, want):
    y, s = _stream(0, 120, 3)
    y[0] = 1
    bad, _ = _mismatches(_wrapped(cls, mutant()), y, s, want, stop=5)
    assert len(bad) == 5
    # the unmutated reference passes the same check
    bad, checked = _mismatches(_wrapped(cls, _auc_ref.AUCCounter()), y, s, want)
    assert bad == [] and checked > 100


@pytest.mark.parametrize("seed", range(3))
def test_core_threshold_metrics_equal_reference_with_removals(seed):
    rng = np.random.default_rng(seed)
    fast, ref = _auc.AUCCounter(), _auc_ref.AUCCounter()
    held, compared = [], 0
    for step in range(1500):
        if held and rng.random() < 0.4:
            x, pos = held.pop(rng.integers(len(held)))
            fast.remove(x, pos)
            ref.remove(x, pos)
        else:
            x, pos = float(rng.integers(0, 30)) / 4, bool(rng.random() < 0.3)
            held.append((x, pos))
            fast.add(x, pos)
            ref.add(x, pos)
        assert fast.tree_u2 == fast.u2 == ref.u2  # the node aggregates (u2) stay right
        m = (0.02, 0.2, 0.5, 1.0)[step % 4]
        for a, b in ((fast.partial_auc(m), ref.partial_auc(m)),
                     (fast.average_precision(), ref.average_precision())):
            if np.isnan(b):
                assert np.isnan(a)
            else:
                assert a == pytest.approx(b, rel=1e-12, abs=1e-12)
                compared += 1
    assert compared > 2000
    assert 0 < fast.average_precision() < 1 and 0 < fast.partial_auc(0.2) < 1


def test_update_many_equals_update_loop_and_pickle_resumes():
    y, s = _stream(6, 500, 20)
    makers = (lambda: StreamingAUC(max_fpr=0.2), lambda: RollingAUC(40, max_fpr=0.2),
              StreamingAveragePrecision, lambda: RollingAveragePrecision(40))
    for make in makers:
        one, many = make(), make()
        for lab, x in zip(y[:300], s[:300]):
            one.update(lab, x)
        many.update_many(y[:300], s[:300])
        assert one.get() == many.get() > 0
        resumed = pickle.loads(pickle.dumps(one))
        for lab, x in zip(y[300:], s[300:]):
            one.update(lab, x)
            resumed.update(lab, x)
            assert resumed.get() == one.get()


# ------------------------------------------------------------------- argument order


_ORDER = r"update\(y_true, y_score\)"


@pytest.mark.parametrize("make", [
    StreamingAUC, lambda: RollingAUC(5), lambda: StreamingAUC(max_fpr=0.1),
    StreamingAveragePrecision, lambda: RollingAveragePrecision(5),
    lambda: StreamingAUC(pos_label=1), lambda: StreamingAveragePrecision(pos_label="spam"),
])
def test_a_score_passed_first_is_refused_and_the_metric_kept(make):
    m = make().update(0, 0.2)
    m.update(1 if m.pos_label is None or m.pos_label == 1 else "spam", 0.6)
    before = (m.n_pos, m.n_neg, m.get())
    with pytest.raises(ValueError, match=_ORDER):
        m.update(0.73, 1)                    # old order: score, label
    with pytest.raises(ValueError, match=_ORDER):
        m.update(np.float64(0.25), 0)
    with pytest.raises(TypeError, match=_ORDER):
        m.update(0.0, True)                  # y_score a bool: a label passed second
    with pytest.raises(ValueError, match=_ORDER):
        m.update_many(np.array([0.1, 0.9]), np.array([0, 1]))
    with pytest.raises(TypeError, match=_ORDER):
        m.update_many(np.array([0.0, 1.0]), np.array([False, True]))
    assert (m.n_pos, m.n_neg, m.get()) == before


def test_flag_labels_refuse_other_integers_with_the_order():
    m = StreamingAUC()
    with pytest.raises(ValueError, match=_ORDER):
        m.update(3, 0.5)                     # a score 3 passed first
    with pytest.raises(ValueError, match=_ORDER):
        m.update_many([0, 1, 5], [0.1, 0.2, 0.3])
    # integral floats and the three flags are labels
    m.update(1.0, 0.5).update(-1.0, 0.2).update(0.0, 0.1).update(True, 0.7).update(False, 0.8)
    assert (m.n_pos, m.n_neg) == (2, 3)
    assert m.get() == pytest.approx(roc_auc_score([1, 0, 0, 1, 0], [0.5, 0.2, 0.1, 0.7, 0.8]))


@pytest.mark.parametrize("kwargs,err", [({"max_fpr": 0}, ValueError), ({"max_fpr": 2}, ValueError),
                                        ({"max_fpr": "0.1"}, TypeError)])
def test_max_fpr_is_checked(kwargs, err):
    with pytest.raises(err, match="max_fpr"):
        StreamingAUC(**kwargs)
    with pytest.raises(err, match="max_fpr"):
        RollingAUC(10, **kwargs)
    with pytest.raises(ValueError, match="window"):
        RollingAveragePrecision(0)


def test_revert_removes_one_pair_and_rolling_metrics_refuse_it():
    y, s = _stream(8, 80, 6)
    for make, want in ((lambda: StreamingAUC(max_fpr=0.3), _pauc(0.3)),
                       (StreamingAveragePrecision, _ap)):
        m = make().update_many(y, s)
        for i in (5, 17, 40):
            m.revert(y[i], s[i])
        keep = np.setdiff1d(np.arange(80), [5, 17, 40])
        assert m.get() == pytest.approx(want(y[keep], s[keep]), abs=1e-12)
        assert m.n_pos + m.n_neg == 77
        before = m.get()
        with pytest.raises(ValueError, match="held"):
            m.revert(1, 1e6)
        assert m.get() == before and m.n_pos + m.n_neg == 77
    for m in (RollingAUC(5), RollingAveragePrecision(5)):
        with pytest.raises(TypeError, match="oldest"):
            m.update(1, 0.5).revert(1, 0.5)
