"""Seeded synthetic streams: a stationary imbalanced stream and a drifting one."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

__all__ = ["make_imbalanced_stream", "make_drifting_stream"]


def make_imbalanced_stream(n_samples: int = 1000, n_features: int = 5,
                           imbalance_ratio: float = 5.0, class_sep: float = 1.0,
                           random_state: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """A seeded synthetic imbalanced stream: two Gaussian classes in random order.

    Negatives are N(-class_sep/2 * u, I), positives N(+class_sep/2 * u, I) with u a random
    unit vector, ``round(n_samples / (1 + imbalance_ratio))`` positives (at least one of
    each class), rows shuffled.

    Parameters
    ----------
    n_samples : int
    n_features : int
    imbalance_ratio : float, default=5.0
        Negatives per positive (the paper's IR), >= 1.
    class_sep : float, default=1.0
        Distance between the class means.
    random_state : int or None
        Seed of ``np.random.default_rng``.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,), int, in {0, 1}; 1 is the minority class
    """
    if int(n_samples) < 2 or int(n_features) < 1:
        raise ValueError(f"need n_samples >= 2 and n_features >= 1, got {n_samples}, {n_features}")
    if not imbalance_ratio >= 1:
        raise ValueError(f"imbalance_ratio must be >= 1, got {imbalance_ratio}")
    rng = np.random.default_rng(random_state)
    n, p = int(n_samples), int(n_features)
    n_pos = min(max(1, int(round(n / (1.0 + imbalance_ratio)))), n - 1)
    y = np.zeros(n, dtype=np.int64)
    y[:n_pos] = 1
    u = rng.normal(size=p)
    u /= np.linalg.norm(u)
    X = rng.normal(size=(n, p)) + np.outer(np.where(y == 1, 0.5, -0.5) * class_sep, u)
    perm = rng.permutation(n)
    return np.ascontiguousarray(X[perm]), y[perm]


def _int(value, name, low):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
    return int(value)


def make_drifting_stream(n_samples: int = 4000, n_features: int = 5, drift: str = "abrupt",
                         drift_at: int | None = None, width: int | None = None,
                         imbalance: float = 5.0, class_sep: float = 2.0, angle: float = np.pi / 2,
                         random_state: Any = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A seeded imbalanced stream whose concept changes once, abruptly or gradually.

    Two concepts share everything but the direction that separates the classes. Under
    concept c a row is ``x = z + (+class_sep/2 if y == 1 else -class_sep/2) * u_c`` with
    ``z ~ N(0, I)``: the class-conditional means sit at ``+-class_sep/2 * u_c``. The old
    direction ``u_0`` is a random unit vector; the new one ``u_1 = cos(angle) u_0 + sin(angle)
    v`` is ``u_0`` rotated by ``angle`` towards a random unit vector ``v`` orthogonal to it.
    So at the drift the class means rotate: with the default ``angle = pi/2`` a scorer of the
    old concept ranks the new one at random (AUC 1/2), with ``angle = pi`` the means swap
    (AUC about 1 - its old AUC), and ``angle = 0`` is no drift. The best linear scorer of
    either concept, ``u_c' x``, reaches AUC ``Phi(class_sep / sqrt(2))`` on it (0.92 for
    the default class_sep = 2). Class proportions do not change.

    * ``drift="abrupt"``: rows ``i >= drift_at`` come from the new concept.
    * ``drift="gradual"``: in the window of ``width`` rows starting at
      ``drift_at - width // 2`` each row comes from the new concept with a probability that
      rises linearly from about 0 to about 1 (``(i - start + 1/2) / width``); rows before
      the window are old, rows after it new.

    Parameters
    ----------
    n_samples : int, default=4000
    n_features : int, default=5
        At least 2 unless ``sin(angle) == 0`` (a rotation needs a plane).
    drift : {"abrupt", "gradual"}, default="abrupt"
    drift_at : int or None, default=None
        Index of the drift (the centre of the window when gradual); None is
        ``n_samples // 2``. Must satisfy ``0 < drift_at < n_samples``.
    width : int or None, default=None
        Rows of the gradual transition, >= 1, the window inside the stream; None is
        ``max(1, n_samples // 10)``. Abrupt drift takes None or 0.
    imbalance : float, default=5.0
        Negatives per positive (the paper's IR), >= 1: ``round(n_samples / (1 + imbalance))``
        positives (at least one), at random positions.
    class_sep : float, default=2.0
        Distance between the class means, > 0.
    angle : float, default=pi/2
        Rotation of the separating direction at the drift, in radians.
    random_state : int, numpy.random.Generator or None
        Seed of ``np.random.default_rng``.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), float64
    y : ndarray of shape (n_samples,), int in {0, 1}; 1 is the minority class
    concept : ndarray of shape (n_samples,), int in {0, 1}
        Which concept generated each row: the drift indices are where it changes
        (``np.flatnonzero(np.diff(concept)) + 1``; one index, ``drift_at``, when abrupt).

    Examples
    --------
    >>> import numpy as np
    >>> X, y, concept = make_drifting_stream(1000, 4, drift_at=600, random_state=0)
    >>> X.shape, int(concept.sum()), int(np.flatnonzero(concept)[0]), int(y.sum())
    ((1000, 4), 400, 600, 167)
    """
    n = _int(n_samples, "n_samples", 2)
    p = _int(n_features, "n_features", 1)
    if drift not in ("abrupt", "gradual"):
        raise ValueError(f"drift must be 'abrupt' or 'gradual', got {drift!r}")
    at = n // 2 if drift_at is None else _int(drift_at, "drift_at", 1)
    if not 0 < at < n:
        raise ValueError(f"drift_at must satisfy 0 < drift_at < n_samples = {n}, got {at}")
    if drift == "abrupt":
        if width not in (None, 0):
            raise ValueError(f"width is for drift='gradual'; abrupt drift takes width=None or 0, "
                             f"got {width!r}")
        w = 0
    else:
        w = max(1, n // 10) if width is None else _int(width, "width", 1)
    start = at - w // 2
    if start < 0 or start + w > n:
        raise ValueError(f"the gradual window [{start}, {start + w}) of width {w} around "
                         f"drift_at={at} must lie inside [0, {n})")
    if not (isinstance(imbalance, numbers.Real) and imbalance >= 1):
        raise ValueError(f"imbalance must be a number >= 1, got {imbalance!r}")
    if not (isinstance(class_sep, numbers.Real) and np.isfinite(class_sep) and class_sep > 0):
        raise ValueError(f"class_sep must be a finite number > 0, got {class_sep!r}")
    if not (isinstance(angle, numbers.Real) and np.isfinite(angle)):
        raise ValueError(f"angle must be a finite number, got {angle!r}")
    if p < 2 and abs(np.sin(angle)) > 1e-12:
        raise ValueError(f"a rotation by angle={angle!r} needs n_features >= 2 (only angle = "
                         f"0 or pi works with one feature)")
    rng = np.random.default_rng(random_state)
    u0 = rng.normal(size=p)
    u0 /= np.linalg.norm(u0)
    if p > 1:
        v = rng.normal(size=p)
        v -= (v @ u0) * u0
        v /= np.linalg.norm(v)
    else:
        v = np.zeros(1)
    u1 = np.cos(angle) * u0 + np.sin(angle) * v
    n_pos = min(max(1, int(round(n / (1.0 + imbalance)))), n - 1)
    y = np.zeros(n, dtype=np.int64)
    y[rng.choice(n, size=n_pos, replace=False)] = 1
    i = np.arange(n)
    if drift == "abrupt":
        concept = (i >= at).astype(np.int64)
    else:
        prob = np.clip((i - start + 0.5) / w, 0.0, 1.0)
        concept = (rng.random(n) < prob).astype(np.int64)
    direction = np.where(concept[:, None] == 1, u1, u0)
    X = rng.normal(size=(n, p)) + (np.where(y == 1, 0.5, -0.5) * class_sep)[:, None] * direction
    return np.ascontiguousarray(X), y, concept
