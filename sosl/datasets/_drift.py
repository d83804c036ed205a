"""Imbalanced streams with drift at known rows: abrupt, gradual and recurring, in two kinds
(class-conditional Gaussians, and sparse text-like rows), with a positive rate that may move.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = ["make_drift_stream"]

_KINDS = ("gaussian", "text")
_DRIFTS = ("abrupt", "gradual", "recurring", "none")


def _int(value, name, low):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
    return int(value)


def _drift_points(drift_at, drift, n):
    if drift_at is None:
        points = [n // 4, n // 2, 3 * n // 4] if drift == "recurring" else [n // 2]
    elif isinstance(drift_at, numbers.Integral) and not isinstance(drift_at, bool):
        points = [int(drift_at)]
    else:
        try:
            points = [_int(a, "each drift_at", 1) for a in drift_at]
        except TypeError:
            raise ValueError(f"drift_at must be an int, a sequence of ints or None, got "
                             f"{drift_at!r}") from None
    if not points:
        raise ValueError("drift_at is empty: give at least one drift row")
    if any(not 0 < a < n for a in points):
        raise ValueError(f"every drift_at must satisfy 0 < drift_at < n_samples = {n}, got "
                         f"{points}")
    if any(b <= a for a, b in zip(points, points[1:])):
        raise ValueError(f"drift_at must be strictly increasing, got {points}")
    return points


def _concepts(points, drift, width, n, rng):
    """Concept of each row: segment k after the k-th drift holds concept k (``k % 2`` when
    recurring); a gradual drift mixes the two over a window centred on its row."""
    i = np.arange(n)
    seg = np.searchsorted(np.asarray(points, dtype=np.int64), i, side="right")
    if drift == "gradual":
        w = max(1, n // 10) if width is None else _int(width, "width", 1)
        end = 0                                   # where the previous window ends
        for k, at in enumerate(points):
            start = at - w // 2
            stop = points[k + 1] - w // 2 if k + 1 < len(points) else n
            if start < end or start + w > stop:
                raise ValueError(f"the gradual window [{start}, {start + w}) of drift {at} "
                                 f"must lie inside [0, {n}) and not overlap its neighbours'")
            end = start + w
            j = np.arange(start, start + w)
            new = rng.random(w) < (j - start + 0.5) / w       # rising chance of the new one
            seg[j] = np.where(new, k + 1, k)
    elif width not in (None, 0):
        raise ValueError(f"width is for drift='gradual', got {width!r}")
    return seg % 2 if drift == "recurring" else seg


def _rates(positive_rate, n):
    r = np.asarray(positive_rate, dtype=np.float64)
    if r.ndim == 0:
        r = np.full(n, float(r))
    if r.shape != (n,):
        raise ValueError(f"positive_rate must be a number or an array of shape ({n},), got "
                         f"shape {r.shape}")
    if not (np.all(np.isfinite(r)) and np.all(r > 0) and np.all(r < 1)):
        raise ValueError("positive_rate must lie in (0, 1) for every row")
    return r


def make_drift_stream(n_samples: int = 100_000, n_features: int = 20, *, kind: str = "gaussian",
                      drift: str = "abrupt", drift_at: Any = None, width: int | None = None,
                      positive_rate: Any = 0.01, class_sep: float = 2.0,
                      angle: float = np.pi / 2, words_per_row: float = 20.0,
                      signal: float = 0.25, n_signal_words: int = 25,
                      random_state: Any = None) -> tuple[Any, np.ndarray, np.ndarray]:
    """A seeded imbalanced stream whose concept changes at known rows.

    Labels are drawn row by row, ``y_i ~ Bernoulli(positive_rate_i)``, independently of
    the concept, so the positive rate can be constant (fraud, intrusion: 0.1% to 5%) or
    move (pass an array) while the class-conditional distributions stay: a prior shift.
    The concept of each row (returned) decides the class-conditional distribution.

    * ``kind="gaussian"``: under concept c a row is ``z + (+-class_sep/2) u_c`` with
      ``z ~ N(0, I)``, + for positives. ``u_0`` is a random unit vector; each new concept
      rotates the previous direction by ``angle`` towards a fresh random orthogonal
      direction (so ``angle = pi/2`` makes a scorer of the old concept rank the new one at
      random). The best linear scorer reaches AUC ``Phi(class_sep / sqrt(2))`` under every
      concept (0.92 at class_sep = 2).
    * ``kind="text"``: sparse rows over a vocabulary of ``n_features`` words, l2-normalised
      term counts (CSR, float64), as a spam or intrusion log might look after hashing. A
      row holds ``1 + Poisson(words_per_row - 1)`` tokens; each token of a positive row is,
      with probability ``signal``, one of the concept's ``n_signal_words`` positive words
      (else a word of the Zipf background shared by every row), and each token of a
      negative row with probability ``signal / 2`` one of the concept's negative words.
      A new concept draws new word sets (attackers change their vocabulary); a recurring
      one reuses the first concept's.

    Drift:

    * ``"none"``: one concept throughout (a stationary stream, for false alarms).
    * ``"abrupt"``: rows ``i >= drift_at[k]`` come from concept ``k + 1``.
    * ``"gradual"``: around each drift row, in a window of ``width`` rows starting at
      ``drift_at[k] - width // 2``, a row comes from the new concept with a probability that
      rises linearly from about 0 to about 1.
    * ``"recurring"``: abrupt changes that alternate between two concepts (0, 1, 0, ...):
      the old concept comes back.

    Parameters
    ----------
    n_samples : int, default=100_000
    n_features : int, default=20
        Features (Gaussian; at least 2 for a rotation) or vocabulary size (text; at least
        ``4 n_signal_words``).
    kind : {"gaussian", "text"}, default="gaussian"
    drift : {"abrupt", "gradual", "recurring", "none"}, default="abrupt"
    drift_at : int, sequence of int or None, default=None
        The drift rows, strictly increasing inside ``(0, n_samples)``. None: the middle row,
        or the quarter points ``n/4, n/2, 3n/4`` when recurring.
    width : int or None, default=None
        Gradual drift only: the rows of each transition (None: ``n_samples // 10``); the
        windows must not overlap.
    positive_rate : float or array of shape (n_samples,), default=0.01
        Probability that a row is positive, in (0, 1); an array sets it row by row.
    class_sep : float, default=2.0
        Gaussian only: distance between the class means, > 0.
    angle : float, default=pi/2
        Gaussian only: rotation of the separating direction at each drift, radians.
    words_per_row : float, default=20.0
        Text only: mean tokens per row, >= 1.
    signal : float, default=0.25
        Text only: share of a positive row's tokens drawn from the positive words, in (0, 1].
    n_signal_words : int, default=25
        Text only: size of each concept's positive (and negative) word set.
    random_state : int, numpy.random.Generator or None

    Returns
    -------
    X : ndarray of shape (n_samples, n_features) (Gaussian) or CSR matrix (text), float64
    y : ndarray of shape (n_samples,), int in {0, 1}; 1 is the positive (rare) class
    concept : ndarray of shape (n_samples,), int
        The concept of each row; the drift rows are ``np.flatnonzero(np.diff(concept)) + 1``
        (exactly ``drift_at`` unless gradual).

    Examples
    --------
    >>> import numpy as np
    >>> X, y, c = make_drift_stream(20_000, 5, drift="recurring", positive_rate=0.02,
    ...                             random_state=0)
    >>> (np.flatnonzero(np.diff(c)) + 1).tolist(), c[[0, 6000, 12000, 18000]].tolist()
    ([5000, 10000, 15000], [0, 1, 0, 1])
    >>> Xt, yt, _ = make_drift_stream(2000, 500, kind="text", random_state=0)
    >>> Xt.format, Xt.shape
    ('csr', (2000, 500))
    """
    n = _int(n_samples, "n_samples", 2)
    p = _int(n_features, "n_features", 1)
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of {_KINDS}, got {kind!r}")
    if drift not in _DRIFTS:
        raise ValueError(f"drift must be one of {_DRIFTS}, got {drift!r}")
    if drift == "none":
        if drift_at is not None or width not in (None, 0):
            raise ValueError("drift='none' takes no drift_at or width")
        points = []
    else:
        points = _drift_points(drift_at, drift, n)
    rates = _rates(positive_rate, n)
    if kind == "gaussian":
        if not (isinstance(class_sep, numbers.Real) and np.isfinite(class_sep)
                and class_sep > 0):
            raise ValueError(f"class_sep must be a finite number > 0, got {class_sep!r}")
        if not (isinstance(angle, numbers.Real) and np.isfinite(angle)):
            raise ValueError(f"angle must be a finite number, got {angle!r}")
        if p < 2 and abs(np.sin(angle)) > 1e-12:
            raise ValueError(f"a rotation by angle={angle!r} needs n_features >= 2")
    else:
        k = _int(n_signal_words, "n_signal_words", 1)
        if p < 4 * k:
            raise ValueError(f"kind='text' needs n_features >= 4 n_signal_words = {4 * k}, "
                             f"got {p}")
        if not (isinstance(words_per_row, numbers.Real) and 1 <= words_per_row < np.inf):
            raise ValueError(f"words_per_row must be a number >= 1, got {words_per_row!r}")
        if not (isinstance(signal, numbers.Real) and 0 < signal <= 1):
            raise ValueError(f"signal must lie in (0, 1], got {signal!r}")
    rng = np.random.default_rng(random_state)
    concept = _concepts(points, drift, width, n, rng)
    y = (rng.random(n) < rates).astype(np.int64)
    n_concepts = int(concept.max()) + 1
    if kind == "gaussian":
        return _gaussian(rng, y, concept, n_concepts, p, float(class_sep), float(angle)), \
            y, concept
    return _text(rng, y, concept, n_concepts, p, float(words_per_row), float(signal),
                 int(n_signal_words)), y, concept


def _gaussian(rng, y, concept, n_concepts, p, sep, angle):
    u = rng.normal(size=p)
    dirs = [u / np.linalg.norm(u)]
    for _ in range(1, n_concepts):
        v = rng.normal(size=p)
        for d in dirs:                      # orthogonal to every earlier direction if it can
            v -= (v @ d) * d
        norm = np.linalg.norm(v)
        v = v / norm if norm > 1e-12 else np.zeros(p)
        dirs.append(np.cos(angle) * dirs[-1] + np.sin(angle) * v)
    U = np.asarray(dirs)
    X = rng.normal(size=(y.shape[0], p))
    X += (np.where(y == 1, 0.5, -0.5) * sep)[:, None] * U[concept]
    return np.ascontiguousarray(X)


def _text(rng, y, concept, n_concepts, p, words, signal, k):
    n = y.shape[0]
    background = 1.0 / np.arange(1, p + 1) ** 1.1
    order = rng.permutation(p)                      # which word has which frequency rank
    background = background[np.argsort(order)]
    background /= background.sum()
    # each concept's positive and negative words, from the middle of the frequency ranks
    middle = order[p // 10: p // 10 + 2 * k * n_concepts].reshape(n_concepts, 2, k)
    lengths = 1 + rng.poisson(words - 1.0, size=n)
    rows = np.repeat(np.arange(n), lengths)
    tok_y, tok_c = y[rows], concept[rows]
    share = np.where(tok_y == 1, signal, signal / 2)
    special = rng.random(rows.shape[0]) < share
    cols = rng.choice(p, size=rows.shape[0], p=background)
    pick = rng.integers(0, k, size=rows.shape[0])
    cols = np.where(special, middle[tok_c, 1 - tok_y, pick], cols)
    X = sp.csr_matrix((np.ones(rows.shape[0]), (rows, cols)), shape=(n, p))
    X.sum_duplicates()
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    X = sp.diags(1.0 / norms) @ X
    X = sp.csr_matrix(X, dtype=np.float64)
    X.sort_indices()
    return X
