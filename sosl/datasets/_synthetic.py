"""Seeded synthetic streams."""

import numpy as np

__all__ = ["make_imbalanced_stream"]


def make_imbalanced_stream(n_samples=1000, n_features=5, imbalance_ratio=5.0, class_sep=1.0,
                           random_state=None):
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
