"""Prior shift: a tenfold swing of the positive rate alone does not move OAUCM's model beyond
sampling noise, because its state (the class moments) is per class.

The comparison: a reference model fitted on a stream at a 5% positive rate; a second model on
an independent stream at the same rate (the noise: the angle between the two weight
vectors), and a model on the same second stream whose positive rate drops to 0.5% halfway
(the shift). The class-conditional distributions are the same throughout and differ in shape
(an anisotropic positive class), so a learner that mixes the classes by their frequency
turns its weights. The shift passes if its mean angle stays below the noise's mean plus two
of its standard deviations. Negative control: FTRLAUC, whose update weighs each class by the
running positive fraction (state shared across the classes), fails the same comparison.
"""

import numpy as np
import pytest

from sosl import OAUCM, OAUCS
from sosl.ftrl import FTRLAUC

N, P = 40_000, 5


def _stream(late_rate, seed):
    """Gaussian classes fixed across seeds (no concept drift), positive rate 5% then
    ``late_rate`` from row N/2; the positive class stretched along two axes so that its
    covariance differs from the negatives'."""
    rng = np.random.default_rng(seed)
    u = np.full(P, 1 / np.sqrt(P))
    rate = np.where(np.arange(N) < N // 2, 0.05, late_rate)
    y = (rng.random(N) < rate).astype(np.int64)
    Z = rng.normal(size=(N, P))
    X = np.where(y[:, None] == 1, Z * np.array([3.0, 1.0, 0.3, 1.0, 1.0]) + u, Z - u)
    return np.ascontiguousarray(X), y


def _direction(model, X, y):
    w = np.ravel(model.fit(X, y).coef_)
    return w / np.linalg.norm(w)


def _angles(make):
    same, shifted = [], []
    for seed in range(6):
        ref = _direction(make(), *_stream(0.05, seed))
        a = _direction(make(), *_stream(0.05, seed + 100))
        b = _direction(make(), *_stream(0.005, seed + 100))     # same draws, rate / 10
        same.append(np.degrees(np.arccos(min(1.0, ref @ a))))
        shifted.append(np.degrees(np.arccos(min(1.0, ref @ b))))
    return np.array(same), np.array(shifted)


def _within_noise(same, shifted):
    return shifted.mean() <= same.mean() + 2 * same.std(ddof=1)


def test_the_stream_really_swings():
    _, y = _stream(0.005, 0)
    early, late = y[:N // 2].mean(), y[N // 2:].mean()
    assert 7 < early / late < 14 and 0.04 < early < 0.06


@pytest.mark.parametrize("Est", [OAUCM, OAUCS])
def test_prior_shift_does_not_move_the_model(Est):
    same, shifted = _angles(lambda: Est())
    assert same.min() > 0                                      # a real, noisy comparison
    assert _within_noise(same, shifted), (same, shifted)


def test_negative_control_a_learner_with_shared_state_fails():
    """FTRLAUC weighs positives by 1 - p and negatives by p, p the running positive
    fraction: a drop of p turns its weights well beyond the noise."""
    same, shifted = _angles(lambda: FTRLAUC(gamma=0.1))
    assert not _within_noise(same, shifted), (same, shifted)
