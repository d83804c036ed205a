"""Kernel online AUC learners with second-order surrogate losses: OKAUC-M, OKAUC-S.

Section 5 of Luo, Cheng & Zhang (Algorithms 2-4, eqs. 20-28). The classifier is a kernel
expansion over a positive and a negative buffer of support vectors; the loss of x_t
compares f_t(x_t) with the mean and variance of f_t over the buffer of the other class.
The typed pass is :func:`sosl._core._kernel.kernel_pass`, its NumPy reference
:func:`sosl._core._kernel_ref.kernel_pass`.
"""

import numpy as np

from ._base import BaseOnlineAUC, check_scalar_param
from ._core import _kernel
from ._core._kernel_ref import (
    LOSS_M,
    LOSS_S,
    STEP_CONSTANT,
    STEP_INV_LAM_T,
    TRANSFER_MIN_ABS,
    TRANSFER_OPTIMAL,
)
from .kernels import budget_pair, kernel_matrix, validate_kernel_params

__all__ = ["OKAUCM", "OKAUCS"]

#: weight-transfer rule name -> code of the pass (eq. 28)
TRANSFER_CODES = {"optimal": TRANSFER_OPTIMAL, "min_abs": TRANSFER_MIN_ABS}
BUDGET_POLICIES = ("fifo", "komp")
_FIFO_STATE = ("sv_buf_", "alpha_buf_", "gram_buf_", "f_buf_", "capacity_", "counts_", "heads_")
_KOMP_STATE = ("pool_x_", "pool_gram_", "pool_beta_", "pool_f_", "pool_buf_", "pool_label_",
               "pool_age_", "capacity_", "counts_", "komp_budget_")
#: with budget_policy="komp", KOMP runs every KOMP_PERIOD rounds (rounds t = 0 mod period)
KOMP_PERIOD = 10


def _grow(state, caps_new):
    """Copy the slot arrays into larger blocks (infinite-buffer mode); returns a new state."""
    c0, c1 = (int(c) for c in state["capacity_"])
    d0, d1 = caps_new
    M, p = d0 + d1, state["sv_buf_"].shape[1]
    old = np.r_[0:c0, c0:c0 + c1]
    new = np.r_[0:c0, d0:d0 + c1]
    out = dict(state)
    out["sv_buf_"] = np.zeros((M, p))
    out["sv_buf_"][new] = state["sv_buf_"][old]
    for name in ("alpha_buf_", "f_buf_"):
        out[name] = np.zeros(M)
        out[name][new] = state[name][old]
    out["gram_buf_"] = np.zeros((M, M))
    out["gram_buf_"][np.ix_(new, new)] = state["gram_buf_"][np.ix_(old, old)]
    out["capacity_"] = np.array([d0, d1], dtype=np.int64)
    return out


def _komp_pass(est, state, X, s, order):
    """``budget_policy="komp"``: Algorithm 2 with a KOMP-compressed expansion (NumPy, per round).

    The *pool* holds every vector that is in a comparison buffer or in the expansion of f
    (weight != 0), with its Gram matrix and f on it. Round t: eqs. (20)-(27) exactly as
    in the FIFO pass (the comparison set S_t is the opposite comparison buffer); x_t joins
    the pool and its comparison buffer; a full buffer releases its oldest vector from the
    buffer only (its weight stays in f); then :func:`sosl.komp.komp_prune` compresses the
    expansion; pool vectors that are in no buffer and carry no weight are dropped. KOMP
    runs every ``KOMP_PERIOD`` rounds with the error budget epsilon * (sum of eta_t since
    its last run): the same total error budget as a run every round with budget
    epsilon * eta_t, at about a tenth of the cost.
    """
    from .komp import komp_prune                          # C2's reusable KOMP
    from ._core._kernel_ref import kernel_row, loss_coefficients
    code, gamma, degree, coef0 = est._kernel_args()
    lam = float(est.lam)
    eps = 0.01 if est.epsilon is None else float(est.epsilon)
    caps = state["capacity_"]
    Z, G, beta, f = state["pool_x_"], state["pool_gram_"], state["pool_beta_"], state["pool_f_"]
    buf, lab, age = state["pool_buf_"], state["pool_label_"], state["pool_age_"]
    t = state["t_"]
    acc = float(state["komp_budget_"])
    for i in order:
        t += 1
        x, y = X[i], s[i]
        own = 1 if y > 0 else 0
        eta_t = float(est.eta) if est.eta is not None else 1.0 / (lam * t)
        kx = kernel_row(Z, x, code, gamma, degree, coef0)
        kxx = float(kernel_row(x[None, :], x, code, gamma, degree, coef0)[0])
        fx = float(beta @ kx)                                              # eq. (20)
        S = np.flatnonzero(buf == 1 - own)
        decay = 1.0 - lam * eta_t                                          # eq. (22)
        a_new, d = 0.0, np.zeros(0)
        if S.size:
            mu = f[S].mean()                                               # eq. (21)
            s2 = ((f[S] - mu) ** 2).mean()
            b = 1.0 - y * (fx - mu)                                        # eq. (23)
            a_new, d = loss_coefficients(est._loss, y, eta_t, b, s2, f[S], mu)   # (26)/(27)
        f = decay * f + d @ G[S] + a_new * kx
        fx = decay * fx + d @ kx[S] + a_new * kxx
        beta = decay * beta
        beta[S] += d
        # x_t joins the pool and its comparison buffer (FIFO on the buffer only)
        Z = np.vstack([Z, x])
        G = np.block([[G, kx[:, None]], [kx[None, :], np.array([[kxx]])]])
        beta, f = np.r_[beta, a_new], np.r_[f, fx]
        buf, lab, age = np.r_[buf, own], np.r_[lab, own], np.r_[age, t]
        mine = np.flatnonzero(buf == own)
        if mine.size > caps[own]:
            buf[mine[np.argmin(age[mine])]] = -1
        # KOMP on the expansion, error budget epsilon * (sum of eta_t since the last run)
        acc += eps * eta_t
        if t % KOMP_PERIOD:
            continue
        D = np.flatnonzero(beta != 0.0)
        budget, acc = acc, 0.0
        if D.size:
            kept, w = komp_prune(G[np.ix_(D, D)], beta[D], budget)
            if kept.size < D.size:
                beta[D] = 0.0
                beta[D[kept]] = w
                f = G[:, D[kept]] @ w
        live = (buf >= 0) | (beta != 0.0)
        if not live.all():
            Z, G, beta, f = Z[live], G[np.ix_(live, live)], beta[live], f[live]
            buf, lab, age = buf[live], lab[live], age[live]
    state.update(pool_x_=Z, pool_gram_=G, pool_beta_=beta, pool_f_=f, pool_buf_=buf,
                 pool_label_=lab, pool_age_=age, t_=t, komp_budget_=acc,
                 counts_=np.array([np.sum(buf == 0), np.sum(buf == 1)], dtype=np.int64))


class _KernelSOSL(BaseOnlineAUC):
    """Shared state and pass of the kernel second-order learners (Algorithm 2)."""

    _loss = LOSS_M
    budget_policy = "fifo"

    @property
    def _state_names(self):
        return _KOMP_STATE if self.budget_policy == "komp" else _FIFO_STATE

    # -- parameters --------------------------------------------------------------------------
    def _validate_params_(self):
        check_scalar_param(self.lam, "lam", low=0.0, include_low=self.eta is not None)
        check_scalar_param(self.eta, "eta", low=0.0, allow_none=True)
        if self.eta is None and self.lam == 0:
            raise ValueError("lam must be > 0 when eta=None (the step is 1/(lam t))")
        validate_kernel_params(self.kernel, self.gamma, self.degree, self.coef0)
        budget_pair(self.budget, allow_none=True)
        if self.transfer not in TRANSFER_CODES:
            raise ValueError(f"transfer must be one of {sorted(TRANSFER_CODES)}, got {self.transfer!r}")

    def _kernel_args(self):
        code, gamma, degree, coef0 = validate_kernel_params(self.kernel, self.gamma, self.degree,
                                                            self.coef0)
        return code, gamma, degree, coef0

    # -- state -------------------------------------------------------------------------------
    def _init_state(self, n_features):
        caps = budget_pair(self.budget, allow_none=True) or (0, 0)
        if self.budget_policy == "komp":
            return {
                "pool_x_": np.zeros((0, n_features)), "pool_gram_": np.zeros((0, 0)),
                "pool_beta_": np.zeros(0), "pool_f_": np.zeros(0),
                "pool_buf_": np.zeros(0, dtype=np.int64), "pool_label_": np.zeros(0, dtype=np.int64),
                "pool_age_": np.zeros(0, dtype=np.int64),
                "capacity_": np.array(caps, dtype=np.int64), "counts_": np.zeros(2, dtype=np.int64),
                "komp_budget_": 0.0,
            }
        M = caps[0] + caps[1]
        return {
            "sv_buf_": np.zeros((M, n_features)),
            "alpha_buf_": np.zeros(M),
            "gram_buf_": np.zeros((M, M)),
            "f_buf_": np.zeros(M),
            "capacity_": np.array(caps, dtype=np.int64),
            "counts_": np.zeros(2, dtype=np.int64),
            "heads_": np.zeros(2, dtype=np.int64),
        }

    def _ensure_capacity(self, state, s):
        """Infinite-buffer mode: make room for every instance of the batch (no removal)."""
        if self.budget is not None:
            return state
        need = state["counts_"] + np.array([np.sum(s < 0), np.sum(s > 0)], dtype=np.int64)
        caps = state["capacity_"]
        if np.all(need <= caps):
            return state
        new = tuple(int(max(n, 2 * c)) if n > c else int(c) for n, c in zip(need, caps))
        return _grow(state, new)

    def _run_pass(self, state, X, s, order):
        if self.budget_policy == "komp":
            _komp_pass(self, state, X, s, order)
            self._set_public(state)
            return
        grown = self._ensure_capacity(state, s)
        state.update(grown)
        code, gamma, degree, coef0 = self._kernel_args()
        schedule = STEP_INV_LAM_T if self.eta is None else STEP_CONSTANT
        eta = 0.0 if self.eta is None else float(self.eta)
        M = state["alpha_buf_"].shape[0]
        state["t_"] = _kernel.kernel_pass(
            X, s, order, state["sv_buf_"], state["alpha_buf_"], state["gram_buf_"],
            state["f_buf_"], state["capacity_"], state["counts_"], state["heads_"],
            state["t_"], float(self.lam), schedule, eta, self._loss, code, gamma, degree, coef0,
            TRANSFER_CODES[self.transfer], np.zeros(3 * M), np.zeros((0, 2)),
        )
        self._set_public(state)

    @staticmethod
    def _occupied(state):
        c0 = int(state["capacity_"][0])
        n0, n1 = (int(n) for n in state["counts_"])
        return np.r_[0:n0, c0:c0 + n1]

    def _set_public(self, state):
        """Fitted attributes derived from the buffers (recomputed after every pass)."""
        if self.budget_policy == "komp":
            D = np.flatnonzero(state["pool_beta_"] != 0.0)
            state["support_vectors_"] = state["pool_x_"][D].copy()
            state["dual_coef_"] = state["pool_beta_"][D].copy()
            lab = state["pool_label_"][D]
            state["n_support_"] = np.array([np.sum(lab == 0), np.sum(lab == 1)], dtype=np.int64)
            state["model_order_"] = int(D.shape[0])
            buf, f = state["pool_buf_"], state["pool_f_"]
            if np.any(buf == 0) and np.any(buf == 1):
                state["intercept_"] = float(-0.5 * (f[buf == 0].mean() + f[buf == 1].mean()))
            else:
                state["intercept_"] = 0.0
            return
        occ = self._occupied(state)
        n0 = int(state["counts_"][0])
        state["support_vectors_"] = state["sv_buf_"][occ].copy()
        state["dual_coef_"] = state["alpha_buf_"][occ].copy()
        state["n_support_"] = state["counts_"].copy()
        f = state["f_buf_"][occ]
        if n0 == 0 or n0 == occ.shape[0]:
            state["intercept_"] = 0.0
        else:
            state["intercept_"] = float(-0.5 * (f[:n0].mean() + f[n0:].mean()))

    def _decision(self, X):
        code, gamma, degree, coef0 = self._kernel_args()
        if self.support_vectors_.shape[0] == 0:
            return np.full(X.shape[0], self.intercept_)
        out = np.empty(X.shape[0])
        step = max(1, 2_000_000 // max(1, self.support_vectors_.size))
        for a in range(0, X.shape[0], step):
            K = kernel_matrix(X[a:a + step], self.support_vectors_, self.kernel, gamma,
                              self.degree, coef0)
            out[a:a + step] = K @ self.dual_coef_
        return out + self.intercept_

    def hilbert_norm(self):
        """||f||_H of the current classifier, sqrt(alpha' K alpha) over the support vectors."""
        if self.budget_policy == "komp":
            b = self.pool_beta_
            return float(np.sqrt(max(b @ self.pool_gram_ @ b, 0.0)))
        occ = self._occupied({"capacity_": self.capacity_, "counts_": self.counts_})
        a = self.alpha_buf_[occ]
        return float(np.sqrt(max(a @ self.gram_buf_[np.ix_(occ, occ)] @ a, 0.0)))


_OKAUCM_HEAD = """OKAUC-M: online kernel AUC maximization with the second-order hinge surrogate psi_M.

    f_t(x) = sum_i alpha_i k(x_i, x) runs over a positive and a negative buffer of past
    instances. At round t the new instance is compared with the buffer S_t of the other
    class through mu_t and sigma_t^2, the mean and variance of f_t on S_t (eq. 21):

        L_t(f) = lam/2 ||f||_H^2 + ((1 - m) + sqrt((1 - m)^2 + sigma_t^2)) / 2,
        m = y_t (f(x_t) - mu_t),

    and one functional gradient step f_{t+1} = f_t - eta_t grad L_t(f_t) gives the new
    weights of eq. (26): x_t gets a weight, the weights of S_t move, all decay by
    (1 - lam eta_t). x_t then enters its own buffer; a full buffer drops its oldest
    vector and hands its weight to one remaining vector (eq. 28). Each round costs
    O(B p + B^2) for budgets B (the Gram matrix of the buffers and f on them are cached).

    Parameters
    ----------
    lam : float, default=1e-2
        Tikhonov weight lambda (> 0; may be 0 only with a constant ``eta``).
    eta : float or None, default=None
        None gives eta_t = 1/(lam t) (OKAUC-M, Theorem 8); a positive float a constant step.
    budget_policy : {"fifo", "komp"}, default="fifo"
        "fifo": the paper's Algorithm 4. "komp": see Notes.
    epsilon : float or None, default=None
        Relative error budget of ``budget_policy="komp"`` (ignored by "fifo"): KOMP may
        change f by at most epsilon * eta_t in Hilbert norm per round (summed over the
        rounds between two compressions). None gives 0.01. With eta_t = 1/(lam t) the
        errors injected over the whole run, each damped by the later decays, sum to at
        most epsilon / lam, i.e. epsilon / (sqrt 2 + 1/2) of the bound of Lemma 7 on
        ||f||_H.
"""
_OKAUCM_TAIL = """    Notes
    -----
    Rounds before any instance of the other class has arrived carry only the regularizer
    (psi is undefined without a comparison set); x_t still enters its buffer, with weight
    0. Where A_t = 0 (b_t = 0 and sigma_t = 0) the one-sided derivative is used:
    Psi_t / sqrt(A_t) -> 1/2 and the sigma term vanishes. ``budget=None`` is the exact
    algorithm analysed by Lemma 7 and Theorem 8 (see ``verify/lemma7_theorem8_kernel.py``).

    ``budget_policy="komp"`` (beyond the paper) separates the two roles a buffer plays.
    The *comparison buffers* (budgets N+ and N-, FIFO) only define S_t, mu_t and
    sigma_t^2; the *expansion* of f is a dictionary of its own, compressed by
    destructive kernel orthogonal matching pursuit with pre-fitting
    (:func:`sosl.komp.komp_prune`, as in POLK) instead of eq. (28). A vector leaving its
    comparison buffer keeps its weight; KOMP drops dictionary elements and re-fits the
    remaining weights by least squares in H (the multi-vector version of eq. (28)) while
    the error ||f - f_new||_H stays within epsilon * (sum of eta_t since the last
    compression). KOMP runs every ``sosl.kernel.KOMP_PERIOD`` = 10 rounds. The model
    order (``model_order_``, the number of support vectors) is then set by epsilon, not by
    the budgets; the buffers stay at N+ + N- vectors (``counts_``). This path is NumPy
    code (no Cython pass; O(M^3) per compression for M pool vectors): 100-300 updates/s
    at budgets 100 + 100, against tens of thousands for FIFO
    (``benchmarks/bench_kernel.py --komp-compare``). With budgets larger than the
    stream and epsilon = 0 it coincides with the FIFO pass (tested). The fitted state is
    then ``pool_x_, pool_gram_, pool_beta_, pool_f_`` (vectors, Gram matrix, weights, f)
    with ``pool_buf_`` (comparison buffer of each vector: 0, 1, or -1 for none),
    ``pool_label_``, ``pool_age_`` and ``komp_budget_`` (error budget carried over).

    References
    ----------
    J. Luo, D. Cheng, B. Zhang. Online AUC Optimization Based on Second-order Surrogate
    Loss. Section 5, Algorithms 2-4, Lemma 7 and Theorem 8.

    Examples
    --------
    >>> import numpy as np
    >>> from sosl import OKAUCM
    >>> from sosl.metrics import auc
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(400, 2)); y = (np.hypot(X[:, 0], X[:, 1]) < 0.6).astype(int)
    >>> model = OKAUCM(lam=1e-3, gamma=4.0, budget=50).fit(X, y)
    >>> bool(auc(y, model.decision_function(X)) > 0.95)
    True
    """

_OKAUCS_HEAD = """OKAUC-S: online kernel AUC maximization with the second-order square surrogate psi_S.

    Same buffers and comparison statistics as :class:`OKAUCM`, with the loss

        L_t(f) = lam/2 ||f||_H^2 + ((1 - m)^2 + sigma_t^2) / 2,   m = y_t (f(x_t) - mu_t),

    the average pairwise square loss of f against the buffer S_t (halved), and the
    weight update of eq. (27) (the exact functional gradient of this L_t).

    The linear :class:`~sosl.OAUCS` minimizes the unhalved loss lam/2 ||w||^2 + psi_S, so
    with ``kernel="linear"`` and ``budget=None``, ``OKAUCS(lam / 2, eta=2 * eta)`` takes
    exactly the steps of ``OAUCS(lam, eta)`` (tested). (:class:`OKAUCM` and
    :class:`~sosl.OAUCM` share one convention: same ``lam`` and ``eta``, same steps.)

    Parameters
    ----------
    lam : float, default=1e-2
        Tikhonov weight lambda (>= 0; > 0 when ``eta=None``).
    eta : float or None, default=1e-2
        Constant step; None gives 1/(lam t).
"""
_OKAUCS_TAIL = """    References
    ----------
    J. Luo, D. Cheng, B. Zhang, Section 5.2, eq. (27).

    Examples
    --------
    >>> import numpy as np
    >>> from sosl import OKAUCS
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(300, 2)); y = (X[:, 0] * X[:, 1] > 0).astype(int)
    >>> OKAUCS(gamma=2.0, budget=(30, 40)).fit(X, y).n_support_.tolist()
    [40, 30]
    """

_SHARED_DOC = """
    kernel : {"gaussian", "rbf", "linear", "poly"}, default="gaussian"
        The kernel k. "rbf" is an alias of "gaussian".
    gamma : float, default=1.0
        Gaussian: k(x, x') = exp(-gamma ||x - x'||^2), i.e. ``gamma = 1 / sigma^2`` for the
        paper's exp(-||x - x'||^2 / sigma^2) (``sosl.kernels.gamma_from_sigma``); poly: the
        scale of the inner product.
    degree : int, default=3
        Degree of the polynomial kernel (gamma x.x' + coef0)^degree.
    coef0 : float, default=1.0
        Constant of the polynomial kernel.
    budget : int, pair of int (N+, N-) or None, default=100
        Capacity of the positive and the negative buffer (N+ and N- of the paper; one int
        sets both). None keeps every instance (infinite buffer, the setting of Lemma 7 and
        Theorem 8); memory and per-round cost then grow as O(t^2) and O(t p + t^2).
    transfer : {"optimal", "min_abs"}, default="optimal"
        Which remaining vector r of the buffer receives the weight of the removed oldest
        vector j (eq. 28). "optimal" takes the r maximizing k(x_r, x_j)^2 / k(x_r, x_r),
        the minimizer over (r, Delta) of ||alpha_j k(., x_j) - Delta k(., x_r)||_H stated in
        the paper; "min_abs" the literal text of eq. (28), r = argmin |k(x_r, x_j)|. Either
        way Delta = alpha_j k(x_r, x_j) / k(x_r, x_r).
    shuffle : bool, default=False
        Visit the rows of each batch in a random order.
    random_state : int, RandomState or None, default=None
        Seed of the shuffling (used only with ``shuffle=True``).

    Attributes
    ----------
    support_vectors_ : ndarray of shape (n_SV, n_features)
        The vectors of the negative buffer, then those of the positive buffer (slot order).
    dual_coef_ : ndarray of shape (n_SV,)
        Their weights alpha_i in f(x) = sum_i alpha_i k(x_i, x) (eq. 20).
    n_support_ : ndarray of shape (2,)
        Sizes of the negative and the positive buffer.
    intercept_ : float
        Minus the midpoint of the mean of f over the two buffers: the decision threshold
        of ``predict`` (AUC ignores it); 0 until both buffers are non-empty.
    t_, n_seen_ : int
        Rounds played since the start of ``fit`` (or the first ``partial_fit``).
    classes_ : ndarray of shape (2,)
        The labels; ``classes_[1]`` is the positive class.
    n_features_in_ : int
        Number of features.
    sv_buf_, alpha_buf_, gram_buf_, f_buf_, capacity_, counts_, heads_ : ndarrays
        The internal state: buffer slots, their weights, their cached Gram matrix, f on
        them (kept up to date), capacities, fill counts and FIFO heads (row/entry 0 is the
        negative buffer). See :mod:`sosl._core._kernel_ref`.
"""


class OKAUCM(_KernelSOSL):
    # docstring: _OKAUCM_DOC (assembled below, shares the parameter list with OKAUCS)

    _loss = LOSS_M

    def __init__(self, lam=1e-2, eta=None, kernel="gaussian", gamma=1.0, degree=3, coef0=1.0,
                 budget=100, transfer="optimal", budget_policy="fifo", epsilon=None,
                 shuffle=False, random_state=None):
        self.lam = lam
        self.eta = eta
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.budget = budget
        self.transfer = transfer
        self.budget_policy = budget_policy
        self.epsilon = epsilon
        self.shuffle = shuffle
        self.random_state = random_state

    def _validate_params_(self):
        super()._validate_params_()
        if self.budget_policy not in BUDGET_POLICIES:
            raise ValueError(f"budget_policy must be one of {BUDGET_POLICIES}, "
                             f"got {self.budget_policy!r}")
        check_scalar_param(self.epsilon, "epsilon", low=0.0, include_low=True, allow_none=True)
        if self.budget_policy == "komp" and self.budget is None:
            raise ValueError("budget_policy='komp' needs finite buffers (budget is None)")


class OKAUCS(_KernelSOSL):
    # docstring: assembled below from _OKAUCS_HEAD, _SHARED_DOC, _OKAUCS_TAIL

    _loss = LOSS_S

    def __init__(self, lam=1e-2, eta=1e-2, kernel="gaussian", gamma=1.0, degree=3, coef0=1.0,
                 budget=100, transfer="optimal", shuffle=False, random_state=None):
        self.lam = lam
        self.eta = eta
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.budget = budget
        self.transfer = transfer
        self.shuffle = shuffle
        self.random_state = random_state


OKAUCM.__doc__ = _OKAUCM_HEAD + _SHARED_DOC + "\n" + _OKAUCM_TAIL
OKAUCS.__doc__ = _OKAUCS_HEAD + _SHARED_DOC + "\n" + _OKAUCS_TAIL
