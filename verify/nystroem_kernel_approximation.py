"""NystroemOAUCM's feature maps approximate the Gaussian kernel as claimed.

Statements
----------
k(x, x') = exp(-gamma ||x - x'||^2), gamma = "scale" computed from the warm-up rows.

(a) Nystroem is exact on its landmarks (Williams & Seeger). With landmarks C, Gram matrix K
    and z(x) = K^{-1/2} k_C(x), z(c_i) . z(c_j) = (K K^{-1} K)_ij = K_ij. The learner
    raises eigenvalues of K below 1e-12 to 1e-12 (as scikit-learn does), which changes
    K K^{-1} K by at most 1e-12 per entry.
(b) Nystroem never over-estimates the kernel. For any rows x_1..x_n, with Z their mapped
    rows, Kxx - Z Z' = Kxx - Kxc K^{-1} Kcx is the Schur complement of the Gram matrix of
    (C, x_1..x_n), so it is positive semi-definite; in particular ||z(x)||^2 <= k(x, x) = 1.
(c) Random Fourier features concentrate (Rahimi & Recht). With z(x) = sqrt(2/D)
    cos(W' x + b), W ~ N(0, 2 gamma I), b ~ U(0, 2 pi), z(x) . z(x') is the mean of D
    independent terms 2 cos(w.x + b) cos(w.x' + b) in [-2, 2] with expectation k(x, x').
    Hoeffding's inequality and a union bound over the P = n(n+1)/2 pairs of n rows give,
    with probability at least 1 - delta,
    max_pairs |z(x) . z(x') - k(x, x')| <= eps = sqrt(8 ln(2 P / delta) / D).

Check (thresholds fixed before running)
---------------------------------------
The maps are those the learner runs: (a) and (b) read ``components_``, ``gamma_`` and
``feature_map`` of a fitted ``NystroemOAUCM`` (warm-up of m rows of a synthetic stream:
5 Gaussian features, two of them informative, features of different scales); the kernel
values come from the NumPy reference :func:`sosl._core._features_ref.rbf` (explicit
differences). (c) draws W, b with the learner's :func:`sosl._core._features.draw_rff` and
maps with :func:`sosl._core._features.rff_map` at a large D (the bound is loose at the
learner's default D = 200: eps = 0.8 there).

(a) identity: max |Z_C Z_C' - K| <= 1e-8 (the floor's 1e-12 plus the rounding of K^{-1/2},
    whose entries reach 1e6 when eigenvalues sit at the floor). Negative control (must
    FAIL): the map normalized by K^{-1} instead of K^{-1/2} (the square root dropped).
(b) lower bound: lambda_min(Kxx - Z Z') >= -1e-8 on n held-out rows, and
    max ||z(x)||^2 <= 1 + 1e-8. Negative control (must FAIL): random Fourier features of
    the same D in place of the Nystroem map (an unbiased estimate, not a projection: it
    over-estimates some directions).
(c) upper bound: the max error over the pairs of the warm-up rows <= eps, delta = 1e-3.
    Negative control (must FAIL): features scaled by sqrt(1/D) instead of sqrt(2/D) (they
    estimate k/2; the diagonal error is 1/2 > eps).
"""

import math

import numpy as np

from . import _records as H

NAME = "nystroem"
TITLE = "NystroemOAUCM: Nystroem exact on landmarks, never over, RFF Hoeffding bound"
ORDER = 97

DELTA = 1e-3
TOL = 1e-8


def stream(seed, n):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5)) * np.array([1.0, 2.0, 0.5, 1.0, 3.0])
    y = (np.hypot(X[:, 0], X[:, 1] / 2) + 0.3 * rng.normal(size=n) < 1.2).astype(int)
    return X, y


def nystroem_checks(seed, m, n_held):
    from sosl import NystroemOAUCM
    from sosl._core import _features_ref as ref
    X, y = stream(seed, m + n_held)
    model = NystroemOAUCM(n_components=m).fit(X[:m + 50], y[:m + 50])
    C, gamma = model.components_, model.gamma_
    K = ref.rbf(C, C, gamma)
    Zc = model.feature_map(C)
    err_a = float(np.abs(Zc @ Zc.T - K).max())
    # negative control: K^{-1} instead of K^{-1/2}
    lam, U = np.linalg.eigh(K)
    Kinv = (U / np.maximum(lam, 1e-12)) @ U.T
    Zbad = K @ Kinv.T
    err_a_neg = float(np.abs(Zbad @ Zbad.T - K).max())
    Xh = X[m:]
    Z = model.feature_map(Xh)
    Kxx = ref.rbf(Xh, Xh, gamma)
    low_b = float(np.linalg.eigvalsh(Kxx - Z @ Z.T).min())
    diag_b = float(np.einsum("ij,ij->i", Z, Z).max())
    from sosl._core import _features
    W, b = _features.draw_rff(np.random.RandomState(seed), X.shape[1], m, gamma)
    Zr = _features.rff_map(Xh, W, b)
    low_b_neg = float(np.linalg.eigvalsh(Kxx - Zr @ Zr.T).min())
    return err_a, err_a_neg, low_b, diag_b, low_b_neg, gamma


def rff_checks(seed, n, D):
    from sosl._core import _features
    from sosl._core import _features_ref as ref
    from sosl.kernels import _gamma_scale
    X, _ = stream(seed + 1, n)
    gamma = _gamma_scale(X)
    W, b = _features.draw_rff(np.random.RandomState(seed), X.shape[1], D, gamma)
    Z = _features.rff_map(X, W, b)
    K = ref.rbf(X, X, gamma)
    err = float(np.abs(Z @ Z.T - K).max())
    Zbad = Z / math.sqrt(2.0)                       # sqrt(1/D) instead of sqrt(2/D)
    err_neg = float(np.abs(Zbad @ Zbad.T - K).max())
    P = n * (n + 1) // 2
    eps = math.sqrt(8.0 * math.log(2.0 * P / DELTA) / D)
    return err, err_neg, eps


def run(profile, seed, out_dir):
    quick = profile == "quick"
    m, n_held = (60, 150) if quick else (200, 600)
    n_rff, D = (80, 2000) if quick else (200, 8000)
    recs = []
    err_a, err_a_neg, low_b, diag_b, low_b_neg, gamma = nystroem_checks(seed, m, n_held)
    sizes = f"m={m} landmarks, p=5, gamma='scale'={gamma:.3g}"
    recs.append(H.emit(H.identity(
        "Nystroem: exact on the landmarks", f"max |Z_C Z_C' - K| <= {TOL:g}", err_a, 0.0,
        atol=TOL, sizes=sizes, seed=seed, headline=True,
        note="the learner's components_ and feature_map; K from the NumPy reference")))
    recs.append(H.emit(H.identity(
        "Nystroem neg. control: K^{-1} for K^{-1/2}", f"max |Z_C Z_C' - K| <= {TOL:g}",
        err_a_neg, 0.0, atol=TOL, sizes=sizes, seed=seed, negative=True)))
    sizes_b = f"{sizes}, {n_held} held-out rows"
    recs.append(H.emit(H.lower_bound(
        "Nystroem: never over-estimates", f"lambda_min(Kxx - Z Z') >= -{TOL:g}", low_b, -TOL,
        sizes=sizes_b, seed=seed, note="Schur complement of the joint Gram matrix")))
    recs.append(H.emit(H.upper_bound(
        "Nystroem: ||z(x)||^2 <= k(x, x) = 1", f"max ||z(x)||^2 <= 1 + {TOL:g}", diag_b,
        1.0 + TOL, sizes=sizes_b, seed=seed)))
    recs.append(H.emit(H.lower_bound(
        "Nystroem neg. control: RFF in place of Nystroem", f"lambda_min(Kxx - Z Z') >= -{TOL:g}",
        low_b_neg, -TOL, sizes=sizes_b, seed=seed, negative=True,
        note="an unbiased estimate is not a projection: it over-estimates somewhere")))
    err, err_neg, eps = rff_checks(seed, n_rff, D)
    sizes_c = f"n={n_rff} rows, D={D}, delta={DELTA:g}"
    recs.append(H.emit(H.upper_bound(
        "RFF: Hoeffding + union bound", "max_pairs |z.z' - k| <= sqrt(8 ln(2P/delta)/D)",
        err, eps, sizes=sizes_c, seed=seed, headline=True,
        note="the learner's draw_rff and rff_map")))
    recs.append(H.emit(H.upper_bound(
        "RFF neg. control: sqrt(1/D) for sqrt(2/D)",
        "max_pairs |z.z' - k| <= sqrt(8 ln(2P/delta)/D)", err_neg, eps, sizes=sizes_c,
        seed=seed, negative=True)))
    return recs
