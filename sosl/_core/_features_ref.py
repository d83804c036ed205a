"""NumPy reference of the random-feature maps (:mod:`sosl._core._features`), from the
definitions: explicit differences instead of the norm expansion, an eigendecomposition
instead of the SVD. Dense rows only; symbols as in the production module.
"""

import numpy as np

EIG_FLOOR = 1e-12


def gamma_scale(X):
    """scikit-learn's gamma="scale": 1 / (p Var(X)) over every entry of X."""
    return 1.0 / (X.shape[1] * X.var())


def rbf(X, C, gamma):
    """k(x, c) = exp(-gamma ||x - c||^2) for every row x of X and c of C."""
    D2 = ((X[:, None, :] - C[None, :, :]) ** 2).sum(axis=2)     # ||x - c||^2
    return np.exp(-gamma * D2)


def nystroem_normalization(C, gamma):
    """N = K^{-1/2} with K = k(C, C), eigenvalues clipped below at EIG_FLOOR."""
    lam, U = np.linalg.eigh(rbf(C, C, gamma))                    # K = U diag(lam) U'
    return (U * (1.0 / np.sqrt(np.maximum(lam, EIG_FLOOR)))) @ U.T


def nystroem_map(X, C, gamma):
    """z(x) = K^{-1/2} k_C(x), one row per row of X (Williams & Seeger)."""
    return rbf(X, C, gamma) @ nystroem_normalization(C, gamma).T


def rff_map(X, W, b):
    """z(x) = sqrt(2 / D) cos(W' x + b) (Rahimi & Recht)."""
    return np.sqrt(2.0 / W.shape[1]) * np.cos(X @ W + b)
