import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from sosl.metrics import auc


@pytest.mark.parametrize("seed", range(10))
def test_auc_equals_sklearn_with_ties(seed):
    rng = np.random.default_rng(seed)
    n = rng.integers(5, 400)
    y = rng.integers(0, 2, size=n)
    y[:2] = [0, 1]
    scores = rng.integers(0, 6, size=n).astype(float)  # many ties
    assert auc(y, scores) == pytest.approx(roc_auc_score(y, scores), abs=1e-12)


def test_auc_invariant_under_increasing_transform_and_label_swap():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, size=300)
    s = rng.normal(size=300)
    a = auc(y, s)
    assert 0.3 < a < 0.7
    assert auc(y, np.exp(3 * s) + 5) == pytest.approx(a, abs=1e-12)
    assert auc(1 - y, s) == pytest.approx(1 - a, abs=1e-12)
    assert auc(y, -s) == pytest.approx(1 - a, abs=1e-12)


def test_auc_hand_example_and_labels():
    assert auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]) == 0.75
    assert auc(["b", "b", "a"], [1, 1, 0], pos_label="a") == 0.0
    assert auc([-1, 1], [2.0, 2.0]) == 0.5


@pytest.mark.parametrize("y,s,match", [
    ([0, 0, 0], [1, 2, 3], "two classes"),
    ([0, 1], [1.0], "entries"),
    ([0, 1], [np.nan, 1.0], "NaN"),
])
def test_auc_errors(y, s, match):
    with pytest.raises(ValueError, match=match):
        auc(y, s)


# ----------------------------------------------------------------- streaming and rolling AUC

import pickle  # noqa: E402

from sosl._core import _auc, _auc_ref  # noqa: E402
from sosl.metrics import RollingAUC, StreamingAUC  # noqa: E402


def _stream(seed, n, n_levels=None, p_pos=0.3):
    """Scores with ties (n_levels distinct values) or continuous, labels 0/1."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < p_pos).astype(np.int64)
    if n_levels is None:
        s = rng.normal(size=n) + 0.8 * y
    else:
        s = (rng.integers(0, n_levels, size=n) + 2 * y * rng.integers(0, 2, size=n)).astype(float)
    return s, y


def _mismatches(metric, s, y, window=None, stop=None):
    """Steps where metric.get() differs from roc_auc_score on the prefix (or the window)."""
    bad, checked = [], 0
    for i in range(s.shape[0]):
        metric.update(y[i], s[i])
        lo = 0 if window is None else max(0, i + 1 - window)
        yy, ss = y[lo:i + 1], s[lo:i + 1]
        got = metric.get()
        if yy.min() == yy.max():
            if not np.isnan(got):
                bad.append((i, got, "nan"))
            continue
        want = roc_auc_score(yy, ss)
        checked += 1
        if abs(got - want) > 1e-12:
            bad.append((i, got, want))
            if stop is not None and len(bad) >= stop:
                break
    return bad, checked


@pytest.mark.parametrize("seed,n_levels", [(0, 3), (1, 8), (2, 40), (3, None)])
def test_streaming_auc_equals_sklearn_on_every_prefix(seed, n_levels):
    s, y = _stream(seed, 120, n_levels)
    bad, checked = _mismatches(StreamingAUC(), s, y)
    assert checked > 100
    assert bad == []


def test_streaming_auc_is_nan_until_both_classes_are_seen():
    m = StreamingAUC()
    for score in (0.3, 0.1, 0.7):
        m.update(0, score)
        assert np.isnan(m.get())
    assert (m.n_pos, m.n_neg) == (0, 3)
    m.update(1, 0.5)
    assert m.get() == pytest.approx(2 / 3)
    assert repr(m) == "StreamingAUC: 0.666667"


class _TiesAsZero(_auc_ref.AUCCounter):
    """Mutant: a tie between classes earns nothing."""

    def _credit(self, c, x):
        if c == 1:
            less, _ = self._below_and_at(0, x)
            return 2 * less
        less, equal = self._below_and_at(1, x)
        return 2 * (self.n_pos - less - equal)


class _TiesAsOne(_auc_ref.AUCCounter):
    """Mutant: a tie between classes counts as a correctly ranked pair."""

    def _credit(self, c, x):
        if c == 1:
            less, equal = self._below_and_at(0, x)
            return 2 * (less + equal)
        less, equal = self._below_and_at(1, x)
        return 2 * (self.n_pos - less)


class _Wrap(StreamingAUC):
    """StreamingAUC's label handling over another counter."""

    def __init__(self, core):
        super().__init__()
        self._core = core


@pytest.mark.parametrize("mutant", [_TiesAsZero, _TiesAsOne])
def test_prefix_check_catches_wrong_tie_credit(mutant):
    s, y = _stream(0, 120, 3)
    bad, _ = _mismatches(_Wrap(mutant()), s, y, stop=5)
    assert len(bad) == 5


@pytest.mark.parametrize("seed", range(3))
def test_core_equals_reference_exactly_with_removals(seed):
    rng = np.random.default_rng(seed)
    fast, ref = _auc.AUCCounter(), _auc_ref.AUCCounter()
    held = []
    for _ in range(3000):
        if held and rng.random() < 0.4:
            x, pos = held.pop(rng.integers(len(held)))
            fast.remove(x, pos)
            ref.remove(x, pos)
        else:
            x, pos = float(rng.integers(0, 30)) / 4, bool(rng.random() < 0.4)
            held.append((x, pos))
            fast.add(x, pos)
            ref.add(x, pos)
        assert (fast.u2, fast.n_pos, fast.n_neg) == (ref.u2, ref.n_pos, ref.n_neg)
    assert ref.u2 > 0 and fast.n_pos > 10
    keys, counts = fast.items()
    assert np.all(np.diff(keys) > 0)  # in-order traversal is sorted, no empty nodes left
    assert counts.sum(axis=1).min() > 0 and counts.sum() == len(held)


def test_core_refuses_to_remove_an_absent_element():
    core = _auc.AUCCounter()
    core.add(1.0, True)
    with pytest.raises(KeyError):
        core.remove(1.0, False)
    with pytest.raises(KeyError):
        core.remove(2.0, True)
    assert (core.n_pos, core.n_neg, core.u2) == (1, 0, 0)


def test_treap_depth_stays_logarithmic_on_sorted_input():
    core = _auc.AUCCounter()
    n = 1 << 14
    core.add_many(np.arange(n, dtype=np.float64), (np.arange(n) % 3 == 0).astype(np.uint8))
    # an unbalanced search tree would have depth n on sorted keys
    assert core.depth() <= 4 * np.log2(n)
    assert core.get() == pytest.approx(roc_auc_score(np.arange(n) % 3 == 0, np.arange(n)))


@pytest.mark.parametrize("window,seed,n_levels,min_checked", [
    (1, 0, 3, 0),  # one pair never holds both classes: NaN throughout
    (7, 1, 3, 80),
    (40, 2, 10, 100),
    (90, 3, None, 100),
])
def test_rolling_auc_equals_sklearn_on_every_window(window, seed, n_levels, min_checked):
    s, y = _stream(seed, 130, n_levels)
    m = RollingAUC(window)
    bad, checked = _mismatches(m, s, y, window=window)
    assert bad == []
    assert checked >= min_checked
    assert m.n_pos + m.n_neg == window


def test_rolling_core_equals_reference_exactly():
    s, y = _stream(4, 2000, 12)
    fast, ref = _auc.RollingAUCCounter(64), _auc_ref.RollingAUCCounter(64)
    for x, lab in zip(s, y):
        fast.add(x, lab == 1)
        ref.add(x, lab == 1)
        assert (fast.u2, fast.n_pos, fast.n_neg) == (ref.u2, ref.n_pos, ref.n_neg)
    assert fast.u2 > 0


def test_rolling_check_catches_a_window_off_by_one():
    s, y = _stream(5, 120, 5)
    bad, _ = _mismatches(RollingAUC(31), s, y, window=30, stop=5)
    assert len(bad) == 5


def test_update_many_equals_update_loop_and_pickle_resumes():
    s, y = _stream(6, 500, 20)
    for make in (StreamingAUC, lambda: RollingAUC(40)):
        one, many = make(), make()
        for x, lab in zip(s[:300], y[:300]):
            one.update(lab, x)
        many.update_many(y[:300], s[:300])
        assert one._core.u2 == many._core.u2 > 0
        resumed = pickle.loads(pickle.dumps(one))
        for x, lab in zip(s[300:], y[300:]):
            one.update(lab, x)
            resumed.update(lab, x)
            assert resumed._core.u2 == one._core.u2
            assert resumed.get() == one.get()


def test_labels_flags_and_pos_label():
    s, y = _stream(7, 200, 6)
    want = roc_auc_score(y, s)
    flags = StreamingAUC().update_many(y.astype(bool), s)
    signs = StreamingAUC().update_many(2 * y - 1, s)
    names = StreamingAUC(pos_label="spam")
    for x, lab in zip(s, np.where(y == 1, "spam", "ham")):
        names.update(lab, x)
    swapped = StreamingAUC(pos_label=0).update_many(y, s)
    for m in (flags, signs, names):
        assert m.get() == pytest.approx(want, abs=1e-12)
    assert swapped.get() == pytest.approx(1 - want, abs=1e-12)
    assert -0.0 == 0.0 and StreamingAUC().update(1, -0.0).update(0, 0.0).get() == 0.5


@pytest.mark.parametrize("score,label,err,match", [
    (np.nan, 1, ValueError, "finite"),
    (np.inf, 0, ValueError, "finite"),
    ("0.5", 1, TypeError, "real number"),
    (None, 1, TypeError, "real number"),
    (0.5, 2, ValueError, "pos_label"),
    (0.5, "yes", ValueError, "pos_label"),
    (0.5, np.array([1, 0]), TypeError, "scalar"),
])
@pytest.mark.parametrize("make", [StreamingAUC, lambda: RollingAUC(3)])
def test_bad_updates_raise_and_leave_the_metric_unchanged(make, score, label, err, match):
    m = make().update(0, 0.2).update(1, 0.6)
    with pytest.raises(err, match=match):
        m.update(label, score)
    assert (m.n_pos, m.n_neg, m.get()) == (1, 1, 1.0)
    with pytest.raises((ValueError, TypeError)):
        m.update_many([0, label] if not isinstance(label, np.ndarray) else [0, 1, 0],
                      [0.1, score] if not isinstance(score, np.ndarray) else [0.1, 0.2])
    assert (m.n_pos, m.n_neg, m.get()) == (1, 1, 1.0)


@pytest.mark.parametrize("window,err", [(0, ValueError), (-3, ValueError), (2.5, TypeError),
                                        (True, TypeError), ("10", TypeError)])
def test_rolling_window_is_checked(window, err):
    with pytest.raises(err, match="window"):
        RollingAUC(window)
