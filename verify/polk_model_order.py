"""POLK: bounded model order under a constant step, and every KOMP projection within budget.

Statement
---------
Koppel et al., "Parsimonious Online Learning with Kernels" (JMLR 2019), Section 4, the
finite model order result that follows Theorem 4 (constant step): on a
compact data domain, with a Lipschitz loss, a constant step eta and the KOMP budget
eps = K eta^{3/2}, the dictionary of POLK (Algorithm 2) stays finite for all t, with a
worst-case size given by a covering number of the data domain. Algorithm 1 (destructive
KOMP with pre-fitting) guarantees ||f~_{t+1} - f_{t+1}||_H <= eps_t at every round.

Check (thresholds fixed before running)
---------------------------------------
* Stream: x_t uniform on [-1, 1]^2 (compact), y_t = +1 inside the disc of radius^2 0.5,
  10% of the labels flipped (so the hinge loss keeps producing violations); hinge loss,
  Gaussian kernel gamma = 2, lam = 1e-3, constant eta = 0.1, eps = 1 * eta^{3/2};
  T = 20000 (quick: 4000).
* Boundedness criterion: the largest model order over the second half of the stream is
  at most 1.25 times the largest over the first half: max_{t > T/2} M_t <= 1.25
  max_{t <= T/2} M_t. A dictionary growing like t (or like any power t^a with
  a > log2(1.25) = 0.32) fails it.
* KOMP budget (upper bound): max_t ||f~_{t+1} - f_{t+1}||_H / eps <= 1 + 1e-9, the error
  recomputed from the returned weights as sqrt((w~ - w)' K (w~ - w)) on the full
  dictionary (:func:`sosl.komp.komp_error`), not taken from the greedy bookkeeping.
* Negative controls (must FAIL):
  - eps = 0 (no compression) on the same stream (T = 1000, quick: 400, to keep the
    O(M^3) rounds affordable): the dictionary grows linearly and fails the boundedness
    criterion;
  - KOMP without pre-fitting (the same elements removed but the remaining weights not
    re-fitted) on 200 fresh rounds continuing the positive run: the error then exceeds
    eps.
"""

import numpy as np

from . import _records as R

NAME = "polk"
TITLE = "POLK bounded model order and KOMP error budget"
ORDER = 90

GROWTH = 1.25
GAMMA, LAM, ETA, PARSIMONY = 2.0, 1e-3, 0.1, 1.0


def _stream(rng, T):
    X = rng.uniform(-1.0, 1.0, size=(T, 2))
    y = (np.sum(X ** 2, axis=1) < 0.5).astype(int)
    flip = rng.random(T) < 0.1
    y[flip] = 1 - y[flip]
    return X, y


def _growth(orders):
    """(max over the second half) / (max over the first half) of the model order."""
    half = orders.shape[0] // 2
    return orders[half:].max() / max(orders[:half].max(), 1)


def _no_prefit_ratio(model, X, y, rounds):
    """max error/eps of KOMP's removals when the kept weights are NOT re-fitted."""
    from sosl._core._polk_ref import loss_derivative
    from sosl.kernels import kernel_matrix
    from sosl.komp import komp_error, komp_prune
    D = model.support_vectors_
    w = model.dual_coef_
    eps = PARSIMONY * ETA ** 1.5
    worst = 0.0
    for t in range(rounds):
        x = X[t]
        s = 1.0 if y[t] == 1 else -1.0
        f_x = kernel_matrix(D, x[None, :], gamma=GAMMA)[:, 0] @ w
        w_tilde = np.append((1.0 - ETA * LAM) * w, -ETA * loss_derivative(f_x, s, 0))
        D_tilde = np.vstack([D, x[None, :]])
        K_tilde = kernel_matrix(D_tilde, D_tilde, gamma=GAMMA)
        kept, w_new = komp_prune(K_tilde, w_tilde, eps)
        worst = max(worst, komp_error(K_tilde, w_tilde, kept, w_tilde[kept]) / eps)
        D, w = D_tilde[kept], w_new
    return worst


def run(profile, seed, out_dir):
    from sosl import POLK
    quick = profile == "quick"
    T = 4000 if quick else 20000
    T_neg = 400 if quick else 1000
    rng = np.random.default_rng(seed)
    X, y = _stream(rng, T)
    recs = []

    model = POLK(loss="hinge", lam=LAM, eta=ETA, parsimony=PARSIMONY, gamma=GAMMA).fit(X, y)
    orders = model.model_orders_
    eps = PARSIMONY * ETA ** 1.5
    g = _growth(orders)
    recs.append(R.emit(R.upper_bound(
        "POLK model order bounded (const step)",
        f"max_(t>T/2) M_t <= {GROWTH} max_(t<=T/2) M_t, eps = K eta^1.5",
        g, GROWTH, sizes=f"T={T} p=2 final M={orders[-1]} max M={orders.max()}",
        seed=seed, headline=True,
        note=f"eta={ETA} lam={LAM} gamma={GAMMA} K={PARSIMONY}; measured = growth ratio")))
    err_ratio = float(np.max(model.projection_errors_ / eps))
    recs.append(R.emit(R.upper_bound(
        "POLK KOMP error <= eps every round", "max_t ||f~_{t+1} - f_{t+1}||_H / eps <= 1 + 1e-9",
        err_ratio, 1.0 + 1e-9, sizes=f"T={T}", seed=seed, headline=True,
        note="error recomputed from the returned weights on the full dictionary")))

    neg = POLK(loss="hinge", lam=LAM, eta=ETA, epsilon=0.0, gamma=GAMMA).fit(X[:T_neg], y[:T_neg])
    g_neg = _growth(neg.model_orders_)
    recs.append(R.emit(R.upper_bound(
        "POLK eps = 0: order must grow", f"same criterion, growth ratio <= {GROWTH}",
        g_neg, GROWTH, sizes=f"T={T_neg} final M={neg.model_orders_[-1]}",
        seed=seed, negative=True, note="no compression: the dictionary keeps every violation")))

    X_new, y_new = _stream(rng, 200)                          # fresh rounds (no duplicates of D)
    ratio_np = _no_prefit_ratio(model, X_new, y_new, 200)
    recs.append(R.emit(R.upper_bound(
        "KOMP without pre-fitting: error <= eps",
        "no re-fit of the kept weights must break the budget",
        ratio_np, 1.0 + 1e-9, sizes="200 rounds", seed=seed, negative=True,
        note="same removals as KOMP, kept weights left as they were")))

    try:
        R.use_agg()
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(5.5, 3.2))
        ax.plot(np.arange(1, T + 1), orders, label=f"eps = eta^1.5 = {eps:.3g}")
        ax.plot(np.arange(1, T_neg + 1), neg.model_orders_, label="eps = 0")
        ax.set_xlabel("t")
        ax.set_ylabel("model order M_t")
        ax.set_xscale("log")
        ax.legend()
        recs[0].figures.append(R.save_figure(
            fig, out_dir, "polk_model_order",
            caption="Model order M_t (dictionary size) of sosl.POLK against the round t "
                    "on the noisy disc stream, with the KOMP budget eps = eta^1.5 (bounded) "
                    "and the negative control eps = 0 (no pruning, grows with t)."))
    except ImportError:                                     # pragma: no cover - no matplotlib
        pass
    return recs
