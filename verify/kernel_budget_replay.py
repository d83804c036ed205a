"""Algorithms 2-4 with budgeted buffers: FIFO removal and the eq. (28) weight transfer.

Statement
---------
OKAUC-M / OKAUC-S with budgets N+ and N- (Luo, Cheng & Zhang, Section 5, Algorithms 2-4)
keep two buffers of support vectors, f_t(x) = sum_i alpha_i k(x_i, x) (eq. 20). Round t
compares (x_t, y_t) with the buffer S_t of the other class through the mean mu_t and the
variance sigma_t^2 of f_t over S_t (eq. 21), with b_t = 1 - y_t (f_t(x_t) - mu_t),
A_t = b_t^2 + sigma_t^2 (eq. 23) and Psi_t = (b_t + sqrt(A_t)) / 2 (eq. 24); the new
weights are (eq. 26, OKAUC-M)

    alpha'_t     = eta_t y_t Psi_t / sqrt(A_t)                                (x_t itself)
    alpha'_i     = (1 - lam eta_t) alpha_i - eta_t (y_t Psi_t + (f_t(x_i) - mu_t)/2)
                   / (N_t sqrt(A_t))                                         (i in S_t)
    alpha'_i     = (1 - lam eta_t) alpha_i                                   (the others),

or, for OKAUC-S (psi_S / 2, eq. 27), alpha'_t = eta_t y_t b_t and
alpha'_i = (1 - lam eta_t) alpha_i - eta_t (y_t b_t + f_t(x_i) - mu_t) / N_t on S_t. Then
x_t enters its own buffer (Algorithm 4); when that buffer is full its oldest vector x_j
leaves first (FIFO) and its weight alpha'_j is moved onto one vector x_r of
I_{t+1} = I_t + {t} - {j}: f_{t+1} = f'_{t+1} - alpha'_j k(., x_j) + Delta k(., x_r) with

    Delta = alpha'_j k(x_r, x_j) / k(x_r, x_r)                                 (eq. 28)

and r the minimizer of ||alpha'_j k(., x_j) - Delta k(., x_r)||_H (the objective stated
above eq. 28; the library's ``transfer="optimal"``), or, read literally,
r = argmin_r |k(x_r, x_j)| (``transfer="min_abs"``).

This module writes those equations out again, independently of the library: f is a list
of (x_i, alpha_i) pairs per class, every value f(x) is a fresh kernel sum (no cached
Gram matrix, no cached scores), the Gaussian kernel exp(-gamma ||x - x'||^2) is computed
here, and the optimal r is found by evaluating the residual norm
alpha_j^2 k_jj - 2 alpha_j Delta k_rj + Delta^2 k_rr of every candidate.

Check (thresholds fixed before running)
---------------------------------------
On an 80-row Gaussian stream in p = 3 (35% positives; 200 rows in the default profile),
budgets N+ = 3, N- = 5, the library learner (``sosl.OKAUCM`` / ``sosl.OKAUCS``,
``partial_fit`` one row at a time, i.e. the typed pass the estimators run) and the replay
must hold the same support vectors after every round (same stream indices in each buffer)
with the same weights: max_t max_i |alpha_lib - alpha_replay| / max(1, max |alpha_replay|)
<= 1e-10 (identity; a different set of support vectors counts as an infinite error). Run
for OKAUC-M with the optimal r and with r = argmin |k|, and for OKAUC-S (constant step);
and, for OKAUC-M with the optimal r, ``fit`` on the whole stream at once, on dense and on
CSR rows (the batch pass and the sparse-slot pass), against the replay's final state.
The rows report how many removals and eq. (28) transfers the stream exercised (onto x_t
and onto an older vector); fewer than 5 transfers of each kind is an error of the check
itself. Negative controls (must FAIL the same identity against OKAUC-M, optimal r): the
replay with Delta halved, and the replay that drops x_j without any transfer.
"""

import math

import numpy as np

from . import _records as R

NAME = "budget"
TITLE = "Algorithms 2-4 with budgets: FIFO + eq. (28) transfer vs OKAUCM / OKAUCS"
ORDER = 85

BUDGET_POS = 3
BUDGET_NEG = 5
GAMMA = 1.0
TOL = 1e-10
MIN_TRANSFERS = 5


def gaussian(u, v, gamma=GAMMA):
    """k(u, v) = exp(-gamma ||u - v||^2)."""
    d = np.asarray(u, dtype=float) - np.asarray(v, dtype=float)
    return math.exp(-gamma * float(d @ d))


def replay(X, y, lam, *, loss="m", eta=None, rule="optimal", budgets=(BUDGET_POS, BUDGET_NEG),
           gamma=GAMMA, delta_factor=1.0, transfer=True):
    """Algorithms 2-4 from the paper's equations; the state after every round.

    Parameters
    ----------
    X : ndarray (T, p); y : ndarray (T,) of +-1
    lam : float; eta : float or None (None: eta_t = 1/(lam t))
    loss : 'm' (eq. 26, psi_M) or 's' (eq. 27, psi_S / 2)
    rule : 'optimal' (r minimizing the residual norm) or 'min_abs' (r = argmin |k(x_r, x_j)|)
    budgets : (N+, N-)
    delta_factor : float, Delta of eq. (28) multiplied by it (1: the algorithm; a negative
        control uses 1/2)
    transfer : bool, False drops x_j without moving its weight (a negative control)

    Returns
    -------
    states : list over rounds of {class: [(stream index, alpha), ...]} (FIFO order)
    counts : dict with the number of removals and of transfers onto x_t / an older vector
    """
    cap = {1: int(budgets[0]), -1: int(budgets[1])}
    buf = {1: [], -1: []}                      # FIFO lists of [index, x, alpha]
    counts = {"removals": 0, "onto x_t": 0, "onto an older vector": 0}
    states = []

    def f(x):                                                        # eq. (20)
        return sum(a * gaussian(xi, x, gamma) for c in (1, -1) for _, xi, a in buf[c])

    for t in range(1, X.shape[0] + 1):
        x, yt = X[t - 1], int(y[t - 1])
        eta_t = eta if eta is not None else 1.0 / (lam * t)
        S = buf[-yt]                                                 # S_t, the other class
        a_new, d = 0.0, []
        if S:
            fx = f(x)
            fS = [f(xi) for _, xi, _ in S]
            N = len(S)
            mu = sum(fS) / N                                         # eq. (21), mu_t
            s2 = sum((v - mu) ** 2 for v in fS) / N                  # eq. (21), sigma_t^2
            b = 1.0 - yt * (fx - mu)                                 # eq. (23), b_t
            if loss == "m":
                A = b * b + s2                                       # eq. (23), A_t
                Psi = 0.5 * (b + math.sqrt(A))                       # eq. (24)
                a_new = eta_t * yt * Psi / math.sqrt(A)              # eq. (26), i = t
                d = [-eta_t * (yt * Psi + 0.5 * (v - mu)) / (N * math.sqrt(A)) for v in fS]
            else:
                a_new = eta_t * yt * b                               # eq. (27), i = t
                d = [-eta_t * (yt * b + v - mu) / N for v in fS]
        decay = 1.0 - lam * eta_t
        for c in (1, -1):                                            # eqs. (26)/(27)
            for item in buf[c]:
                item[2] *= decay
        for item, di in zip(S, d):
            item[2] += di
        own = buf[yt]
        new = [t - 1, x, a_new]
        if len(own) >= cap[yt]:                                      # Algorithm 4, lines 3-8
            _, xj, aj = own.pop(0)                                   # FIFO: the oldest
            counts["removals"] += 1
            cands = own + [new]                                      # I_t + {t} - {j}
            best, best_res, best_delta = None, math.inf, 0.0
            for q, (_, xr, _) in enumerate(cands):
                krj, krr = gaussian(xr, xj, gamma), gaussian(xr, xr, gamma)
                delta = aj * krj / krr                               # eq. (28)
                if rule == "optimal":                                # objective above (28)
                    res = aj * aj * gaussian(xj, xj, gamma) - 2 * aj * delta * krj \
                        + delta * delta * krr
                else:                                                # eq. (28) as printed
                    res = abs(krj)
                if res < best_res:
                    best, best_res, best_delta = q, res, delta
            if transfer and best is not None:
                cands[best][2] += delta_factor * best_delta
                counts["onto x_t" if best == len(cands) - 1 else "onto an older vector"] += 1
        own.append(new)
        states.append({c: [(i, a) for i, _, a in buf[c]] for c in (1, -1)})
    return states, counts


def library_states(X, y, lam, *, loss="m", eta=None, rule="optimal",
                   budgets=(BUDGET_POS, BUDGET_NEG), gamma=GAMMA):
    """The library's buffers after every round: ``partial_fit`` one row at a time."""
    from sosl import OKAUCM, OKAUCS
    if loss == "m":
        model = OKAUCM(lam=lam, eta=eta, gamma=gamma, budget=tuple(budgets), transfer=rule)
    else:
        model = OKAUCS(lam=lam, eta=eta, gamma=gamma, budget=tuple(budgets), transfer=rule)
    index = {X[i].tobytes(): i for i in range(X.shape[0])}
    yy = np.where(y > 0, 1, 0)
    out = []
    for t in range(X.shape[0]):
        model.partial_fit(X[t:t + 1], yy[t:t + 1], classes=[0, 1])
        n0 = int(model.n_support_[0])
        sv, alpha = model.support_vectors_, model.dual_coef_
        st = {-1: {}, 1: {}}
        for q in range(sv.shape[0]):
            st[-1 if q < n0 else 1][index[np.ascontiguousarray(sv[q]).tobytes()]] = alpha[q]
        out.append(st)
    return out


def library_final(X, y, lam, *, sparse=False, budgets=(BUDGET_POS, BUDGET_NEG), gamma=GAMMA):
    """The buffers of ``OKAUCM(...).fit`` on the whole stream (one batch), dense or CSR rows."""
    import scipy.sparse as sp

    from sosl import OKAUCM
    model = OKAUCM(lam=lam, gamma=gamma, budget=tuple(budgets))
    model.fit(sp.csr_matrix(X) if sparse else X, np.where(y > 0, 1, 0))
    index = {X[i].tobytes(): i for i in range(X.shape[0])}
    sv = model.support_vectors_
    sv = sv.toarray() if sp.issparse(sv) else sv
    n0 = int(model.n_support_[0])
    st = {-1: {}, 1: {}}
    for q in range(sv.shape[0]):
        st[-1 if q < n0 else 1][index[np.ascontiguousarray(sv[q]).tobytes()]] = \
            model.dual_coef_[q]
    return st


def max_error(lib, rep):
    """max over rounds of max_i |alpha_lib - alpha_rep| / max(1, max |alpha_rep|)."""
    worst = 0.0
    for L, Rp in zip(lib, rep, strict=True):
        scale = max([1.0] + [abs(a) for c in (1, -1) for _, a in Rp[c]])
        for c in (1, -1):
            if set(L[c]) != {i for i, _ in Rp[c]}:
                return math.inf
            for i, a in Rp[c]:
                worst = max(worst, abs(L[c][i] - a) / scale)
    return worst


def stream(seed, T):
    rng = np.random.default_rng(seed)
    X = np.ascontiguousarray(rng.normal(size=(T, 3)) * 0.8)
    y = np.where(rng.random(T) < 0.35, 1, -1)
    y[:2] = (1, -1)
    return X, y


VARIANTS = (
    # name, loss, lam, eta, rule
    ("OKAUC-M, optimal r", "m", 0.1, None, "optimal"),
    ("OKAUC-M, r = argmin |k|", "m", 0.1, None, "min_abs"),
    ("OKAUC-S, optimal r, eta = 0.05", "s", 0.1, 0.05, "optimal"),
)


def run(profile, seed, out_dir):
    T = 80 if profile == "quick" else 200
    X, y = stream(seed, T)
    sizes = f"T={T} p=3 budgets N+={BUDGET_POS} N-={BUDGET_NEG}"
    recs = []
    lib_m = None
    for name, loss, lam, eta, rule in VARIANTS:
        lib = library_states(X, y, lam, loss=loss, eta=eta, rule=rule)
        rep, counts = replay(X, y, lam, loss=loss, eta=eta, rule=rule)
        if min(counts["onto x_t"], counts["onto an older vector"]) < MIN_TRANSFERS:
            raise RuntimeError(f"the stream exercised too few transfers: {counts}")
        if lib_m is None:
            lib_m = lib
        recs.append(R.emit(R.identity(
            f"Budgeted replay: {name}",
            f"every round, same support vectors and max |alpha_lib - alpha_replay| "
            f"(scaled) <= {TOL:g}", max_error(lib, rep), 0.0, atol=TOL, sizes=sizes, seed=seed,
            headline=loss == "m" and rule == "optimal",
            note=f"sosl partial_fit row by row vs Algorithms 2-4 and eq. (28) from the paper; "
                 f"{counts['removals']} removals, transfers onto x_t {counts['onto x_t']}, "
                 f"onto an older vector {counts['onto an older vector']}")))
    name, loss, lam, eta, rule = VARIANTS[0]
    rep_m, _ = replay(X, y, lam, loss=loss, eta=eta, rule=rule)
    e_batch = max(max_error([library_final(X, y, lam, sparse=sp_)], rep_m[-1:])
                  for sp_ in (False, True))
    recs.append(R.emit(R.identity(
        "Budgeted replay: batch fit, dense and CSR rows",
        f"OKAUCM fit on the whole stream (dense, then CSR): final support vectors and weights "
        f"== replay (scaled, <= {TOL:g})", e_batch, 0.0, atol=TOL, sizes=sizes, seed=seed,
        note="the batch pass and the sparse-slot pass (kernel_pass_csr)")))
    for label, kw in (("Delta of eq. (28) halved", {"delta_factor": 0.5}),
                      ("no transfer (x_j dropped)", {"transfer": False})):
        rep, _ = replay(X, y, lam, loss=loss, eta=eta, rule=rule, **kw)
        recs.append(R.emit(R.identity(
            f"Budgeted replay neg. control: {label}",
            f"same identity against OKAUC-M, optimal r (<= {TOL:g})", max_error(lib_m, rep),
            0.0, atol=TOL, sizes=sizes, seed=seed, negative=True)))
    return recs
