"""Online learning curves and per-instance timings, the numbers behind two of the plots."""

import time

import numpy as np

from ..metrics import auc

__all__ = ["learning_curve", "time_per_instance"]


def learning_curve(estimator, X_train, y_train, X_test, y_test, n_points=20):
    """Test AUC of an online learner after each of ``n_points`` growing prefixes of the stream.

    The stream ``X_train`` is fed in order with ``partial_fit`` in chunks ending at
    roughly log-spaced positions; after each chunk the current model scores ``X_test``.

    Parameters
    ----------
    estimator : sosl estimator
        A fresh (unfitted) learner; it is trained in place.
    X_train, y_train : arrays
        The stream, in the order seen.
    X_test, y_test : arrays
        Held-out data with both classes.
    n_points : int, default=20

    Returns
    -------
    seen : ndarray of int
        Number of instances seen at each evaluation (strictly increasing, last = n).
    aucs : ndarray of float
        Test AUC there; NaN while the model could not score (e.g. only one class seen by
        a learner that needs both).
    """
    n = X_train.shape[0]
    ends = np.unique(np.geomspace(1, n, int(n_points)).round().astype(int))
    classes = np.unique(y_train)
    seen, aucs, start = [], [], 0
    for end in ends:
        estimator.partial_fit(X_train[start:end], y_train[start:end], classes=classes)
        start = end
        try:
            scores = estimator.decision_function(X_test)
            value = auc(y_test, scores)
        except ValueError:
            value = np.nan
        seen.append(end)
        aucs.append(value)
    return np.asarray(seen), np.asarray(aucs, dtype=float)


def time_per_instance(make, X, y, repeats=3):
    """Seconds per instance of one ``fit`` pass (best of ``repeats``, each on a fresh model).

    Parameters
    ----------
    make : callable
        ``make()`` returns a fresh estimator.
    X, y : arrays
    repeats : int

    Returns
    -------
    seconds : float
    """
    best = np.inf
    for _ in range(int(repeats)):
        est = make()
        t0 = time.perf_counter()
        est.fit(X, y)
        best = min(best, time.perf_counter() - t0)
    return best / X.shape[0]
