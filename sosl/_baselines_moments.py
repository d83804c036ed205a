"""The baselines of :mod:`sosl.baselines` that learn from running moments or bounds of the
pairwise risk instead of buffers: OL-UBAUC, SOLAM and AdaOAM."""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import StrOptions

from ._baseline_core import _COMMON, _MAX_MEMORY, _NON_NEGATIVE, _POSITIVE, _LinearBaseline
from ._capabilities import changes
from ._core import _baselines
from ._core._codes import Schedule
from ._typing import Auto, RandomState

__all__ = ["OLUBAUC", "SOLAM", "AdaOAM"]

class OLUBAUC(_LinearBaseline):
    """OL-UBAUC: online learning on a univariate (one-instance) bound of the AUC risk.

    Reconstruction (the online algorithm of Lyu & Ying could not be read in full; see
    Notes). For any threshold c, a mis-ranked pair has ``f(x+) <= c`` or
    ``f(x-) >= c``, so ``1 - AUC <= P(f <= c | +) + P(f >= c | -)``: a bound with one
    instance per term and each class weighted by the inverse of its frequency. Round t
    takes one subgradient step in ``(w, c)`` on

        lam/2 ||w||^2 + omega_t max(0, 1 - s_t (w.x_t - c)),  omega_t = t / (2 N_t^{s_t}),

    with eta_t = 1/(lam t) (``eta=None``; the step of the O(log T) regret bound for
    strongly convex losses, hence untuned as in the paper) or a constant ``eta``.

    Parameters
    ----------
    lam : float, default=1e-2
        Tikhonov weight lambda (> 0; may be 0 only with a constant ``eta``).
    eta : float or None, default=None
        None gives eta_t = 1/(lam t); a positive float a constant step.
    shuffle : bool, default=False
        Visit the rows of each batch in a seeded random order.
    random_state : int, RandomState or None, default=None
        Seed of the shuffling (used only with ``shuffle=True``).

    Attributes
    ----------
    coef_, w_ : ndarray of shape (1, n_features), (n_features,)
        The weights w after the last round (``coef_`` a view of ``w_``, as in
        :class:`Perceptron`).
    intercept_ : ndarray of shape (1,)
        ``-c``, minus the learned threshold (AUC ignores it).
    threshold_ : ndarray of shape (1,)
        The threshold c.
    counts_ : ndarray of shape (2,)
        Instances seen per class.
    t_, n_seen_, classes_, n_features_in_
        As in :class:`Perceptron`.

    Notes
    -----
    Lyu & Ying (2018) bound the AUC risk through the ranks of the predictions and show
    the ranking can be avoided, giving a univariate objective learned in O(p) time and
    memory per round. Their exact online update was not available to us; the
    class-balanced univariate hinge bound above has the same properties (one instance
    per term, linear cost, a threshold learned with w) and is the version implemented.
    Its AUC figures are therefore not those of the paper's OL-UBAUC column.

    On sparse rows the shrinkage ``w <- (1 - eta_t lam) w`` is applied lazily through a
    scale factor (``w = a u``, folded back into u when |a| < 1e-9), so a round costs
    O(nnz(x_t)); the threshold c is a scalar and the class counts are all the class
    statistics the learner keeps.

    References
    ----------
    S. Lyu, Y. Ying. A univariate bound of area under ROC. arXiv:1804.05981, 2018.

    Examples
    --------
    >>> import numpy as np
    >>> from sosl import OLUBAUC
    >>> from sosl.metrics import auc
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 3)); y = (X[:, 0] + 0.3 * rng.normal(size=400) > 1).astype(int)
    >>> model = OLUBAUC(lam=0.01).fit(X, y)
    >>> bool(auc(y, model.decision_function(X)) > 0.9)
    True
    """

    capabilities = dataclasses.replace(_LinearBaseline.capabilities, per_call_o_p=True,
                                       sparse_input=True)

    _state_names = ("w_", "intercept_", "threshold_", "counts_")
    _parameter_constraints: dict = {**_COMMON, "lam": [_NON_NEGATIVE], "eta": [_POSITIVE, None]}

    def __init__(self, lam: float = 1e-2, eta: float | None = None, shuffle: bool = False,
                 random_state: RandomState = None) -> None:
        self.lam = lam
        self.eta = eta
        self.shuffle = shuffle
        self.random_state = random_state

    def _check_params(self):
        if self.eta is None and self.lam == 0:
            raise ValueError(f"{type(self).__name__}: lam must be > 0 when eta is None "
                             "(the step is 1/(lam t))")

    def _layout(self):
        return {"schedule": int(Schedule.STEP_INV_LAM_T if self.eta is None
                                else Schedule.STEP_CONSTANT)}

    def _init_state(self, n_features):
        return {"w_": np.zeros(n_features), "intercept_": np.zeros(1),
                "threshold_": np.zeros(1), "counts_": np.zeros(2, dtype=np.int64)}

    def _pass(self, state, X, s, order):
        eta = 0.0 if self.eta is None else float(self.eta)
        args = (state["w_"], state["threshold_"], state["counts_"], state["t_"],
                float(self.lam), self._layout_["schedule"], eta)
        if sp.issparse(X):
            state["t_"] = _baselines.ubauc_pass_csr(X.data, X.indices, X.indptr, s, order,
                                                    *args)
        else:
            state["t_"] = _baselines.ubauc_pass(X, s, order, *args)
        state["intercept_"] = -state["threshold_"]


class SOLAM(_LinearBaseline):
    """SOLAM: stochastic online AUC maximization by a saddle-point formulation.

    The expected pairwise square loss, p(1-p) E[(1 - w.(x - x'))^2 | y = 1, y' = -1],
    equals ``min_{a,b} max_alpha E[F(w, a, b, alpha; x, y)]`` (Theorem 1 of the paper) with

        F = (1-p)(w.x - a)^2 [y=1] + p (w.x - b)^2 [y=-1]
            + 2(1 + alpha)(p w.x [y=-1] - (1-p) w.x [y=1]) - p(1-p) alpha^2,

    p the fraction of positives. Each round takes one projected stochastic gradient
    step, descent in v = (w, a, b) and ascent in alpha, with gamma_t = eta / sqrt(t)
    and the running estimate of p; the model is the gamma-weighted average of the
    iterates. O(p) time and memory per round; O(nnz(x_t)) time per round on sparse rows
    (see Notes).

    Parameters
    ----------
    eta : float, default=1.0
        Step constant zeta > 0 of gamma_t = zeta / sqrt(t).
    radius : float, default=10.0
        Radius R > 0 of the domain ``||w|| <= R, |a|, |b| <= R, |alpha| <= 2R``.
    shuffle : bool, default=False
        Visit the rows of each batch in a seeded random order.
    random_state : int, RandomState or None, default=None
        Seed of the shuffling (used only with ``shuffle=True``).

    Attributes
    ----------
    coef_, w_ : ndarray of shape (1, n_features), (n_features,)
        The averaged weights wbar (``v_avg_[:n_features]``) used to score (``coef_`` a
        view of ``w_``, as in :class:`Perceptron`; the next round recomputes them from
        ``v_avg_``).
    intercept_ : ndarray of shape (1,)
        ``-(abar + bbar) / 2``, the midpoint of the averaged class score means a and b
        (AUC ignores it).
    v_ : ndarray of shape (n_features + 2,)
        The current iterate (w, a, b).
    v_avg_ : ndarray of shape (n_features + 2,)
        Its gamma-weighted average (wbar, abar, bbar).
    alpha_ : ndarray of shape (2,)
        The dual iterate alpha and its weighted average.
    step_sum_ : ndarray of shape (1,)
        Sum of the steps gamma_1 + ... + gamma_t.
    counts_ : ndarray of shape (2,)
        Instances seen per class; p_hat = counts_[1] / t_.
    t_, n_seen_, classes_, n_features_in_
        As in :class:`Perceptron`.

    Notes
    -----
    The domain uses kappa = 1 (kappa = sup ||x|| in the paper; the features are assumed
    scaled) and the initial point is v = 0, alpha = 0, which the paper leaves free.
    p is estimated by the fraction of positives seen so far, including the current one.

    On sparse rows the pass keeps ``w = a u`` and the gamma-weighted sum of the iterates
    as ``c u - Q`` (scalars a, c; vectors u, Q changed only on the row's columns), so
    neither the average nor the projection onto ``||w|| <= R`` touches all p weights; the
    model is the same as on dense rows up to rounding. SOLAM keeps no per-feature class
    statistics (its class statistics a, b are the mean scores), so nothing else in a
    round depends on p.

    References
    ----------
    Y. Ying, L. Wen, S. Lyu. Stochastic online AUC maximization. NeurIPS 29, 2016.

    Examples
    --------
    >>> import numpy as np
    >>> from sosl import SOLAM
    >>> from sosl.metrics import auc
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 3)); y = (X[:, 0] + 0.3 * rng.normal(size=400) > 1).astype(int)
    >>> model = SOLAM(eta=0.5, radius=10.0).fit(X, y)
    >>> bool(auc(y, model.decision_function(X)) > 0.9)
    True
    """

    capabilities = dataclasses.replace(_LinearBaseline.capabilities, per_call_o_p=True,
                                       sparse_input=True)

    _state_names = ("w_", "intercept_", "v_", "v_avg_", "alpha_", "step_sum_", "counts_")
    _in_place_names = ("v_", "v_avg_", "alpha_", "step_sum_", "counts_")
    _parameter_constraints: dict = {**_COMMON, "eta": [_POSITIVE], "radius": [_POSITIVE]}

    def __init__(self, eta: float = 1.0, radius: float = 10.0, shuffle: bool = False,
                 random_state: RandomState = None) -> None:
        self.eta = eta
        self.radius = radius
        self.shuffle = shuffle
        self.random_state = random_state

    def _init_state(self, n_features):
        return {"w_": np.zeros(n_features), "intercept_": np.zeros(1),
                "v_": np.zeros(n_features + 2), "v_avg_": np.zeros(n_features + 2),
                "alpha_": np.zeros(2), "step_sum_": np.zeros(1),
                "counts_": np.zeros(2, dtype=np.int64)}

    def _pass(self, state, X, s, order):
        p = X.shape[1]
        args = (state["v_"], state["v_avg_"], state["alpha_"], state["step_sum_"],
                state["counts_"], state["t_"], float(self.eta), float(self.radius))
        if sp.issparse(X):
            state["t_"] = _baselines.solam_pass_csr(X.data, X.indices, X.indptr, s, order,
                                                    *args, np.empty(2 * p))
        else:
            state["t_"] = _baselines.solam_pass(X, s, order, *args)
        state["w_"] = state["v_avg_"][:p].copy()
        state["intercept_"] = np.array([-0.5 * (state["v_avg_"][p] + state["v_avg_"][p + 1])])

    def _learn_one_in_place(self, x, s):
        """A dense row: the typed round (:func:`sosl._core._baselines.solam_one`, the pass's
        body on one row) on the live state, which saves what it writes (O(p)) and restores
        it if a value is not finite (False is then returned: the general path reports it);
        ``w_`` is then updated in place. Bit for bit the general path's round. CSR rows
        take the round on copies."""
        if not self._typed_row(x):
            return super()._learn_one_in_place(x, s)
        d = self.__dict__
        p = x.shape[0]
        pre = self._raw_scores(x.reshape(1, p))
        v_avg = d["v_avg_"]
        t = _baselines.solam_one(x, s, d["v_"], v_avg, d["alpha_"], d["step_sum_"],
                                 d["counts_"], d["t_"], float(self.eta), float(self.radius),
                                 self._one_row_scratch(4 * p + 7))
        if t < 0:
            return False
        d["w_"][:] = v_avg[:p]
        d["intercept_"] = np.array([-0.5 * (v_avg[p] + v_avg[p + 1])])
        self._commit_one_row(pre, s, t)
        return True


class AdaOAM(_LinearBaseline):
    """AdaOAM: OPAUC's one-pass square-loss gradient with AdaGrad per-feature steps.

    Round t compares ``x_t`` with all earlier instances of the other class through their
    mean c and covariance S only: with ``a = s_t (x_t - c)`` the loss

        lam/2 ||w||^2 + 1/2 [(1 - w.a)^2 + w' S w]

    is the average pairwise square loss against them (halved), and its gradient g_t is
    applied with the diagonal AdaGrad scaling ``w_i -= eta g_ti / (delta + sqrt(sum_tau
    g_taui^2))``, which adapts each feature's step to the gradients seen so far.

    Parameters
    ----------
    lam : float, default=1e-2
        Tikhonov weight lambda >= 0.
    eta : float, default=0.1
        AdaGrad step eta > 0.
    delta : float, default=1e-8
        AdaGrad smoothing delta >= 0 added to the root of the summed squared gradients.
    shuffle : bool, default=False
        Visit the rows of each batch in a seeded random order.
    random_state : int, RandomState or None, default=None
        Seed of the shuffling (used only with ``shuffle=True``).
    max_memory : int or "auto", default="auto"
        Largest state, in bytes, the learner may allocate (two p x p covariances plus a
        transactional copy: about 32 p^2 bytes). "auto" is half the memory available when
        the state is created. A larger p raises ``MemoryError`` naming the size.

    Attributes
    ----------
    coef_, w_ : ndarray of shape (1, n_features), (n_features,)
        The weights w after the last round (``coef_`` a view of ``w_``, as in
        :class:`Perceptron`).
    intercept_ : ndarray of shape (1,)
        ``-w_ @ (means_[0] + means_[1]) / 2`` (0 until both classes are seen); AUC
        ignores it.
    means_ : ndarray of shape (2, n_features)
        Class means (row k for ``classes_[k]``).
    covariances_ : ndarray of shape (2, n_features, n_features)
        Class covariances (normalized by the count), updated in Welford's form.
    counts_ : ndarray of shape (2,)
        Instances seen per class.
    grad_sq_ : ndarray of shape (n_features,)
        Per-feature sum of the squared gradients.
    t_, n_seen_, classes_, n_features_in_
        As in :class:`Perceptron`.

    Notes
    -----
    The moment statistics make a round cost O(p^2) time and the model O(p^2) memory, like
    :class:`sosl.OAUCS`, whose loss is twice this one's. A feature whose gradients have
    all been 0 (with ``delta=0``) is not moved (0/0 guard).

    References
    ----------
    Y. Ding, P. Zhao, S. C. H. Hoi, Y.-S. Ong. An adaptive gradient method for online
    AUC maximization. AAAI 2015. W. Gao, L. Wang, R. Jin, S. Zhu, Z.-H. Zhou. One-pass
    AUC optimization. Artificial Intelligence, 2016.

    Examples
    --------
    >>> import numpy as np
    >>> from sosl import AdaOAM
    >>> from sosl.metrics import auc
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 3)); y = (X[:, 0] + 0.3 * rng.normal(size=400) > 1).astype(int)
    >>> model = AdaOAM(lam=0.01, eta=0.1).fit(X, y)
    >>> bool(auc(y, model.decision_function(X)) > 0.9)
    True
    """

    _state_names = ("w_", "intercept_", "means_", "covariances_", "counts_", "grad_sq_")
    _parameter_constraints: dict = {**_COMMON, "lam": [_NON_NEGATIVE], "eta": [_POSITIVE],
                                    "delta": [_NON_NEGATIVE],
                                    "max_memory": [_MAX_MEMORY, StrOptions({"auto"})]}
    #: sparse rows are densified a block at a time: the p x p state is dense anyway
    capabilities = changes(sparse_input="blocks")

    def __init__(self, lam: float = 1e-2, eta: float = 0.1, delta: float = 1e-8,
                 shuffle: bool = False, random_state: RandomState = None,
                 max_memory: int | Auto = "auto") -> None:
        self.lam = lam
        self.eta = eta
        self.delta = delta
        self.shuffle = shuffle
        self.random_state = random_state
        self.max_memory = max_memory

    def _init_state(self, n_features):
        # two p x p covariances, and a copy of them while a pass runs (the transaction)
        self._check_memory(
            32 * n_features * n_features + 64 * n_features,
            f"two dense {n_features} x {n_features} covariance matrices with their "
            "transactional copy",
            "Reduce the features, use a learner with O(p) state (sosl.SketchedOAUCM, "
            "sosl.FTRLAUC, sosl.SOLAM), or raise max_memory (bytes).")
        return {"w_": np.zeros(n_features), "intercept_": np.zeros(1),
                "means_": np.zeros((2, n_features)),
                "covariances_": np.zeros((2, n_features, n_features)),
                "counts_": np.zeros(2, dtype=np.int64), "grad_sq_": np.zeros(n_features)}

    def _pass(self, state, X, s, order):
        p = X.shape[1]
        state["t_"] = _baselines.adaoam_pass(
            X, s, order, state["w_"], state["means_"], state["covariances_"],
            state["counts_"], state["grad_sq_"], state["t_"], float(self.lam),
            float(self.eta), float(self.delta), np.zeros(4 * p))
        if np.any(state["counts_"] == 0):
            state["intercept_"] = np.zeros(1)
        else:                                    # non-finite: refused by the general path
            state["intercept_"] = np.array([_baselines.adaoam_intercept(state["w_"],
                                                                    state["means_"])])

    def _learn_one_in_place(self, x, s):
        """A dense row: the typed round (:func:`sosl._core._baselines.adaoam_one`) on the
        live state. It saves w, the squared gradients and the own class's mean (O(p)) and
        makes the O(p^2) covariance update last, once every value of the round is finite
        and the update cannot overflow, so nothing O(p^2) is copied; otherwise it restores
        what it wrote and False is returned (the general path then reports the problem or
        plays the round). Bit for bit the general path's round."""
        if not self._typed_row(x):
            return super()._learn_one_in_place(x, s)
        d = self.__dict__
        p = x.shape[0]
        pre = self._raw_scores(x.reshape(1, p))
        icpt = _baselines.adaoam_one(x, s, d["w_"], d["means_"], d["covariances_"],
                                     d["counts_"], d["grad_sq_"], float(self.lam),
                                     float(self.eta), float(self.delta),
                                     self._one_row_scratch(7 * p))
        if icpt != icpt:
            return False
        d["intercept_"] = np.array([icpt])
        self._commit_one_row(pre, s)
        return True


# pickles and the documentation name the public module
for _cls in (OLUBAUC, SOLAM, AdaOAM):
    _cls.__module__ = "sosl.baselines"
del _cls
