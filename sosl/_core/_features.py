"""Random-feature maps of the Gaussian (RBF) kernel: Nystroem and random Fourier features.

The production maps of :class:`sosl.NystroemOAUCM`, in NumPy: a map is two matrix products
and one elementwise pass. The products are ``np.einsum`` loops, not BLAS: each entry of an
einsum product sums its terms in index order whatever the number of rows, so a row's
features are the same bits whether it is mapped alone or in a batch of any size, and
``fit`` equals ``partial_fit`` over any chunks bit for bit. BLAS picks its kernels and
blockings by the sizes of the call (OpenBLAS's small-matrix kernels, gemv for one row), and
its rows differed in the last bits from one batch size to another (see docs/performance.md
for the cost of the choice). The NumPy reference, written from the definitions, is
:mod:`sosl._core._features_ref`.

=========  ================================================  ==============================
symbol     meaning                                           estimator attribute
=========  ================================================  ==============================
``C``      landmarks c_1..c_m (rows)                          ``components_``
``gamma``  kernel width, k(x, c) = exp(-gamma ||x - c||^2)    ``gamma_``
``K``      Gram matrix of the landmarks, K_ij = k(c_i, c_j)   (not kept)
``N``      K^{-1/2} (eigenvalues clipped below at 1e-12)      ``normalization_``
``W``      random frequencies, sqrt(2 gamma) N(0, 1), p x D   ``random_weights_``
``b``      random phases, U(0, 2 pi), length D                ``random_offset_``
=========  ================================================  ==============================

Nystroem: z(x) = N k_C(x) with k_C(x) = (k(x, c_1), ..., k(x, c_m)), so that
z(c_i) . z(c_j) = K_ij on the landmarks and z(x) . z(x') approximates k(x, x') elsewhere
(Williams & Seeger, 2001). Random Fourier features: z(x) = sqrt(2 / D) cos(W' x + b), an
unbiased estimate of k(x, x') whose error shrinks as 1/sqrt(D) (Rahimi & Recht, 2007).
Both equal scikit-learn's ``Nystroem`` / ``RBFSampler`` transforms given the same landmarks
or random draws (tests/test_nystroem.py).

X may be a dense float64 array or a CSR matrix: the products read the sparse rows as they
are; only the (rows x m) results are dense.
"""

import numpy as np
import scipy.linalg
import scipy.sparse as sp

__all__ = ["EIG_FLOOR", "squared_norms", "nystroem_normalization", "rbf_to_landmarks",
           "nystroem_parts", "nystroem_map", "draw_rff", "rff_map"]

#: eigenvalues of K below this are raised to it before K^{-1/2} is formed (as scikit-learn's
#: Nystroem does), so a duplicate or nearly collinear landmark gives a bounded map
EIG_FLOOR = 1e-12


def squared_norms(X):
    """||x||^2 of each row of a dense array or a CSR matrix."""
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1)).ravel()
    return np.einsum("ij,ij->i", X, X)


def _rows_times(X, B):
    """X B for dense or CSR rows X and a dense C-contiguous B, row by row in a fixed order
    (einsum's loop; scipy's CSR product is a loop over each row's entries)."""
    if sp.issparse(X):
        return np.ascontiguousarray(X @ B)
    return np.einsum("ij,jk->ik", X, B)


def nystroem_normalization(K):
    """N = K^{-1/2} of a symmetric Gram matrix through its SVD, singular values clipped
    below at ``EIG_FLOOR``."""
    U, S, Vt = scipy.linalg.svd(K)
    S = np.maximum(S, EIG_FLOOR)
    return (U / np.sqrt(S)) @ Vt


def rbf_to_landmarks(X, CT, c_sq, gamma):
    """E_ij = exp(-gamma ||x_i - c_j||^2), with ||x - c||^2 = ||x||^2 - 2 x.c + ||c||^2
    (one matrix product; the rounding below zero of near-equal rows is clipped). ``CT`` is
    C transposed, C-contiguous, and ``c_sq`` = ``squared_norms(C)``."""
    E = _rows_times(X, CT)
    E *= -2.0
    E += squared_norms(X)[:, None]
    E += c_sq[None, :]
    np.maximum(E, 0.0, out=E)
    E *= -gamma
    np.exp(E, out=E)
    return E


def nystroem_parts(C, N):
    """What the map reads of the landmarks C and of N, laid out for it once:
    ``(C', ||c||^2, N')`` with both transposes C-contiguous."""
    return (np.ascontiguousarray(C.T), squared_norms(C), np.ascontiguousarray(N.T))


def nystroem_map(X, parts, gamma):
    """z(x) = N k_C(x) for each row (rows of the result), ``parts`` from
    :func:`nystroem_parts`."""
    CT, c_sq, NT = parts
    return np.einsum("ij,jk->ik", rbf_to_landmarks(X, CT, c_sq, gamma), NT)


def draw_rff(rng, n_features, n_components, gamma):
    """W = sqrt(2 gamma) N(0, 1) of shape (p, D), then b ~ U(0, 2 pi) of length D, drawn
    from the ``numpy.random.RandomState`` ``rng`` in that order."""
    W = np.sqrt(2.0 * gamma) * rng.normal(size=(n_features, n_components))
    b = rng.uniform(0.0, 2.0 * np.pi, size=n_components)
    return W, b


def rff_map(X, W, b):
    """z(x) = sqrt(2 / D) cos(W' x + b) for each row."""
    P = _rows_times(X, W)
    P += b[None, :]
    np.cos(P, out=P)
    P *= np.sqrt(2.0 / W.shape[1])
    return P
