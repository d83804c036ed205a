"""POLK: parsimonious online learning with kernels (Koppel et al.), as a sosl classifier."""

import numpy as np

from ._base import BaseOnlineAUC, check_scalar_param
from ._core import _polk_ref
from .kernels import kernel_matrix, validate_kernel_params
from .komp import _inverse_pd, single_thread_blas

try:
    from ._core import _polk
except ImportError:                                  # pragma: no cover - extension not built
    _polk = None

__all__ = ["POLK"]

# Which pass POLK runs: "cython" (typed pass with the inverse Gram matrix kept across rounds,
# sosl._core._polk) or "numpy" (the reference sosl._core._polk_ref, O(M^3) per round).
_BACKEND = "cython"
_RTOL = 1e-10        # rank threshold of the reference projection (komp_prune's default rtol)
_SAFETY = 100.0      # the typed pass plays a round only if every squared distance of an atom
                     # to the span of the others exceeds _SAFETY * _RTOL * max_i K_ii
_DRIFT_TOL = 1e-11   # G is rebuilt when a column fails max_i |(K G)_ic - delta_ic| <= tol,
_DRIFT_REL = 1e-11   # tol = max(_DRIFT_TOL, _DRIFT_REL * max K_ii * max G_jj) (a fresh inverse
                     # reaches about 1e-15 * max K_ii * max G_jj)
_RETRY = 16          # with no usable inverse, G is rebuilt after the rounds t % _RETRY == 0

_LOSSES = {"hinge": _polk_ref.LOSS_HINGE, "logistic": _polk_ref.LOSS_LOGISTIC,
           "square": _polk_ref.LOSS_SQUARE}
_SCHEDULES = {"constant": _polk_ref.STEP_CONSTANT, "diminishing": _polk_ref.STEP_DIMINISHING}


class POLK(BaseOnlineAUC):
    """POLK: kernel functional SGD with sparse KOMP projections in function space.

    Minimizes the regularized expected risk over a reproducing kernel Hilbert space,

        min_f  E[ l(f(x), y) ] + lam/2 ||f||_H^2,

    by functional stochastic gradient steps
    f~_{t+1} = (1 - eta_t lam) f_t - eta_t l'(f_t(x_t), y_t) k(x_t, .), each followed by a
    projection onto a smaller dictionary found by destructive kernel orthogonal matching
    pursuit (:func:`sosl.komp.komp_prune`) with error budget eps_t, so that
    ||f_{t+1} - f~_{t+1}||_H <= eps_t. With a constant step and eps = K eta^{3/2} the model
    order (dictionary size) stays bounded (Koppel et al., Section 4: the finite model
    order result stated after Theorem 4). Not an AUC learner:
    it is the pointwise-loss source of the KOMP projection used in sosl.

    Parameters
    ----------
    loss : {"hinge", "logistic", "square"}, default="hinge"
        Instantaneous loss l(z, y) with y in {-1, +1}; square is (z - y)^2 / 2.
    lam : float, default=1e-3
        Tikhonov weight lambda (> 0).
    eta : float, default=0.1
        Step size eta (constant schedule) or its initial value (diminishing). Must
        satisfy eta < 1/lam.
    schedule : {"constant", "diminishing"}, default="constant"
        ``"constant"``: eta_t = eta (Theorem 4); ``"diminishing"``: eta_t =
        eta / (1 + lam eta t), O(1/t) (Theorem 3).
    epsilon : float or None, default=None
        KOMP budget eps_t. None gives the paper's choice, ``parsimony * eta**1.5``
        (constant step) or ``parsimony * eta_t**2`` (diminishing step); a float >= 0
        is used as a fixed budget (0 disables the compression in practice).
    parsimony : float, default=1.0
        The parsimony constant K of eps = K eta^{3/2} (ignored if ``epsilon`` is given).
    kernel : {"gaussian", "rbf", "linear", "poly"}, default="gaussian"
        Kernel, see :mod:`sosl.kernels`.
    gamma : float, default=1.0
        Gaussian exp(-gamma ||x - x'||^2), gamma = 1/sigma^2 (the POLK paper writes
        exp(-||x - x'||^2 / (2 c^2)), i.e. gamma = 1/(2 c^2)); poly: inner-product scale.
    degree : int, default=3
        Degree of the polynomial kernel.
    coef0 : float, default=1.0
        Constant of the polynomial kernel.
    shuffle : bool, default=False
        Visit the rows of each batch in a random order.
    random_state : int, RandomState or None, default=None
        Seed of the shuffling.

    Attributes
    ----------
    support_vectors_ : ndarray of shape (M, n_features)
        The dictionary D_t (its size M is the current model order).
    dual_coef_ : ndarray of shape (M,)
        The weights w_t: f(x) = sum_i dual_coef_[i] k(support_vectors_[i], x).
    gram_ : ndarray of shape (M, M)
        Cached Gram matrix of the dictionary.
    model_orders_ : ndarray of int of shape (t_,)
        Model order M_{t+1} after each round since the start of ``fit``.
    projection_errors_ : ndarray of shape (t_,)
        ||f~_{t+1} - f_{t+1}||_H of each KOMP projection.
    projection_budgets_ : ndarray of shape (t_,)
        The budget eps_t used by each projection (``projection_errors_ <= projection_budgets_``).
    t_, n_seen_, classes_, n_features_in_
        Rounds played, instances seen, labels (``classes_[1]`` is y = +1), features.

    Notes
    -----
    Each round costs O(M p + M^2), plus O(M^2) per removed element: the typed pass
    (:mod:`sosl._core._polk`) keeps the inverse Gram matrix of the dictionary from round
    to round (bordered with the new instance, downdated at each removal) instead of
    factorizing the (M+1) x (M+1) Gram matrix every round as the NumPy reference
    :mod:`sosl._core._polk_ref` does (O(M^3)); both give the same dictionaries and weights
    to rounding (tested). Rounds where an atom is numerically in the span of the others
    (e.g. a repeated instance) are played by the reference, which then costs O(M^3), as do
    the occasional rebuilds of the inverse from a fresh factorization (when its drift is
    detected); with an ill-conditioned dictionary these can dominate.
    The decision function has no offset: ``predict`` is sign(f), as in the paper.
    Departures: see :mod:`sosl.komp` for the numerical-rank guard of the projection; the
    diminishing step is eta / (1 + lam eta t), a concrete O(1/t) choice below 1/lam.

    References
    ----------
    A. Koppel, G. Warnell, E. Stump, A. Ribeiro. Parsimonious Online Learning with
    Kernels via Sparse Projections in Function Space. JMLR 20(3), 2019 (Algorithms 1-2).
    P. Vincent, Y. Bengio. Kernel Matching Pursuit. Machine Learning 48, 2002.

    Examples
    --------
    >>> import numpy as np
    >>> from sosl import POLK
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(400, 2)); y = (X[:, 0] ** 2 + X[:, 1] ** 2 < 0.5).astype(int)
    >>> model = POLK(eta=0.2, gamma=2.0).fit(X, y)
    >>> bool(model.score(X, y) > 0.85), bool(model.model_orders_.max() < 400)
    (True, True)
    """

    _state_names = ("support_vectors_", "dual_coef_", "gram_", "model_orders_",
                    "projection_errors_", "projection_budgets_", "_gram_inv")
    _gram_inv = None        # inverse of gram_ kept by the typed pass (None: rebuilt when needed)

    def __init__(self, loss="hinge", lam=1e-3, eta=0.1, schedule="constant", epsilon=None,
                 parsimony=1.0, kernel="gaussian", gamma=1.0, degree=3, coef0=1.0,
                 shuffle=False, random_state=None):
        self.loss = loss
        self.lam = lam
        self.eta = eta
        self.schedule = schedule
        self.epsilon = epsilon
        self.parsimony = parsimony
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.shuffle = shuffle
        self.random_state = random_state

    def _validate_params_(self):
        if not isinstance(self.loss, str) or self.loss not in _LOSSES:
            raise ValueError(f"loss must be one of {sorted(_LOSSES)}, got {self.loss!r}")
        if not isinstance(self.schedule, str) or self.schedule not in _SCHEDULES:
            raise ValueError(f"schedule must be one of {sorted(_SCHEDULES)}, got {self.schedule!r}")
        lam = check_scalar_param(self.lam, "lam", low=0.0)
        eta = check_scalar_param(self.eta, "eta", low=0.0)
        if eta * lam >= 1.0:
            raise ValueError(f"eta must be < 1/lam (eta * lam = {eta * lam!r} >= 1)")
        check_scalar_param(self.epsilon, "epsilon", low=0.0, include_low=True, allow_none=True)
        check_scalar_param(self.parsimony, "parsimony", low=0.0)
        validate_kernel_params(self.kernel, self.gamma, self.degree, self.coef0)

    def _kern(self):
        return {"kernel": self.kernel, "gamma": self.gamma, "degree": self.degree,
                "coef0": self.coef0}

    def _init_state(self, n_features):
        return {
            "support_vectors_": np.zeros((0, n_features)),
            "dual_coef_": np.zeros(0),
            "gram_": np.zeros((0, 0)),
            "model_orders_": np.zeros(0, dtype=np.int64),
            "projection_errors_": np.zeros(0),
            "projection_budgets_": np.zeros(0),
            "_gram_inv": np.zeros((0, 0)),
        }

    def _run_pass(self, state, X, s, order):
        eps_rule = _polk_ref.EPS_PAPER if self.epsilon is None else _polk_ref.EPS_FIXED
        epsilon = 0.0 if self.epsilon is None else float(self.epsilon)
        args = (float(self.lam), float(self.eta), _SCHEDULES[self.schedule], eps_rule, epsilon,
                float(self.parsimony), _LOSSES[self.loss], self._kern())
        D, w, Kdd = state["support_vectors_"], state["dual_coef_"], state["gram_"]
        # small dense LAPACK calls every round: threaded BLAS only adds contention here
        with single_thread_blas():
            if _BACKEND == "cython" and _polk is not None:
                D, w, Kdd, G, t, orders, errors, budgets = _fast_polk_pass(
                    X, s, order, D, w, Kdd, state["_gram_inv"], state["t_"], *args)
            elif _BACKEND in ("cython", "numpy"):
                D, w, Kdd, t, orders, errors, budgets = _polk_ref.polk_pass(
                    X, s, order, D, w, Kdd, state["t_"], *args)
                G = None                            # rebuilt by the typed pass if it runs later
            else:
                raise ValueError("sosl.polk._BACKEND must be 'cython' or 'numpy', "
                                 f"got {_BACKEND!r}")
        state["support_vectors_"] = D
        state["dual_coef_"] = w
        state["gram_"] = Kdd
        state["_gram_inv"] = G
        state["t_"] = t
        state["model_orders_"] = np.concatenate([state["model_orders_"], orders])
        state["projection_errors_"] = np.concatenate([state["projection_errors_"], errors])
        state["projection_budgets_"] = np.concatenate([state["projection_budgets_"], budgets])

    def _decision(self, X):
        if self.support_vectors_.shape[0] == 0:
            return np.zeros(X.shape[0])
        out = np.empty(X.shape[0])
        step = 512                                  # bounds the (rows, M, p) temporary
        for a in range(0, X.shape[0], step):
            out[a:a + step] = kernel_matrix(X[a:a + step], self.support_vectors_,
                                            **self._kern()) @ self.dual_coef_
        return out


def _gram(D, kern, block=64):
    """kernel_matrix(D, D) by row blocks (bounds the (rows, M, p) temporary)."""
    K = np.empty((D.shape[0], D.shape[0]))
    for a in range(0, D.shape[0], block):
        K[a:a + block] = kernel_matrix(D[a:a + block], D, **kern)
    return K


def _inverse_if_well_posed(K):
    """G = K^{-1} if every squared distance 1/G_jj exceeds ``_SAFETY * _RTOL * max K_ii``.

    Returns None when K is (numerically) too close to singular for the typed pass: the
    reference then plays the rounds until the dictionary is well posed again.
    """
    if K.shape[0] == 0:
        return np.zeros((0, 0))
    scale = float(np.max(np.diag(K)))
    if not scale > 0.0:
        return None
    try:
        G = _inverse_pd(K)
    except np.linalg.LinAlgError:
        return None
    d = np.diag(G)
    if not (np.all(np.isfinite(G)) and np.all(d > 0.0)
            and np.all(d * (_SAFETY * _RTOL * scale) < 1.0)):
        return None
    return G


def _fast_polk_pass(X, s, order, D, w, Kdd, G, t0, lam, eta, schedule, eps_rule, epsilon,
                    parsimony, loss, kern):
    """Same rounds and outputs as :func:`sosl._core._polk_ref.polk_pass`, with the typed pass.

    ``G`` is the inverse Gram matrix of ``D`` kept from the previous pass, or None (no
    usable inverse: the dictionary is too close to singular). The rounds the typed pass
    :func:`sosl._core._polk.polk_fast_pass` declines (an atom numerically in the span of
    the others) are played by the reference :func:`sosl._core._polk_ref.polk_step` on the
    Gram matrix recomputed as the reference computes it; G is then rebuilt by a fresh
    factorization, right away after a declined round, and, while the dictionary stays
    ill-posed, only after rounds t with t % ``_RETRY`` == 0 (the decisions depend on the
    state and t only, so ``fit`` and chunked ``partial_fit`` calls play the same rounds).
    The buffers of the typed pass grow by doubling (at most to the largest order possible).

    Returns
    -------
    D, w, Kdd, G, t, orders, errors, budgets
        As :func:`sosl._core._polk_ref.polk_pass`, plus the inverse G (or None) after ``t``.
    """
    code, gamma, degree, coef0 = validate_kernel_params(kern["kernel"], kern["gamma"],
                                                        kern["degree"], kern["coef0"])
    X = np.ascontiguousarray(X, dtype=np.float64)
    s = np.ascontiguousarray(s, dtype=np.float64)
    order = np.ascontiguousarray(order, dtype=np.intp)
    n_rounds = order.shape[0]
    M, p = D.shape
    orders = np.empty(n_rounds, dtype=np.int64)
    errors = np.empty(n_rounds)
    budgets = np.empty(n_rounds)
    if G is not None and G.shape != (M, M):
        G = None

    def allocate(cap):
        Db, wb = np.zeros((cap, p)), np.zeros(cap)
        Kb, Gb = np.zeros((cap, cap)), np.zeros((cap, cap))
        Db[:M], wb[:M], Kb[:M, :M] = D, w, Kdd
        if G is not None:
            Gb[:M, :M] = G
        return Db, wb, Kb, Gb, np.empty(4 * cap), np.empty(cap, dtype=np.intp)

    Db, wb, Kb, Gb, work, iwork = allocate(M + max(1, min(n_rounds, max(M, 32))))
    r = 0
    while r < n_rounds:
        if G is not None:
            status, r, M = _polk.polk_fast_pass(
                X, s, order, r, Db, wb, Kb, Gb, M, t0, lam, eta, schedule, eps_rule, epsilon,
                parsimony,
                loss, code, gamma, degree, coef0, _RTOL, _SAFETY, _DRIFT_TOL, _DRIFT_REL,
                orders, errors, budgets, work, iwork)
            if status == _polk.STATUS_DONE:
                break
            if status == _polk.STATUS_GROW:
                D, w, Kdd, G = Db[:M], wb[:M], Kb[:M, :M], Gb[:M, :M]
                Db, wb, Kb, Gb, work, iwork = allocate(min(2 * Db.shape[0], M + n_rounds - r))
                continue
            if status == _polk.STATUS_REBUILD:
                G = _inverse_if_well_posed(Kb[:M, :M].copy())
                if G is not None:
                    Gb[:M, :M] = G
                continue
            retry = True                            # STATUS_FALLBACK: round r declined
        else:
            retry = (t0 + r + 1) % _RETRY == 0
        # round r by the reference
        D, w = Db[:M].copy(), wb[:M].copy()
        Kdd = _gram(D, kern)
        t = t0 + r + 1
        eta_t = _polk_ref.step_size(t, eta, lam, schedule)
        eps_t = _polk_ref.komp_budget(eta_t, eps_rule, epsilon, parsimony, schedule)
        i = order[r]
        D, w, Kdd, _, err = _polk_ref.polk_step(D, w, Kdd, X[i], s[i], eta_t, lam, eps_t,
                                                loss, kern)
        M = D.shape[0]
        orders[r], errors[r], budgets[r] = M, err, eps_t
        r += 1
        G = _inverse_if_well_posed(Kdd) if retry else None
        if M + 1 > Db.shape[0]:
            Db, wb, Kb, Gb, work, iwork = allocate(max(M, min(2 * Db.shape[0], M + n_rounds - r)))
        else:
            Db[:M], wb[:M], Kb[:M, :M] = D, w, Kdd
            if G is not None:
                Gb[:M, :M] = G
    D, w, Kdd = Db[:M].copy(), wb[:M].copy(), Kb[:M, :M].copy()
    G = Gb[:M, :M].copy() if G is not None else None
    return D, w, Kdd, G, t0 + n_rounds, orders, errors, budgets
