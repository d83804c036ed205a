"""PartialOAUCM: one-pass partial-AUC learning (FPR <= max_fpr, optionally TPR >= min_tpr)
on OAUC-M's class moments, and the FPR budget held on the stream."""
from __future__ import annotations

from typing import TYPE_CHECKING

from numpy.typing import ArrayLike

if TYPE_CHECKING:
    from typing_extensions import Self

import contextlib
import math
from numbers import Integral, Real

import numpy as np
from scipy.special import ndtri
from scipy.stats import beta as beta_dist
from scipy.stats import binom
from sklearn.utils._param_validation import Interval, StrOptions

from ._base import BaseOnlineAUC, _model_lock
from ._capabilities import changes
from ._core import _partial
from ._core._blas import one_blas_thread
from ._typing import Auto, RandomState
from .linear import BLAS_MIN_P, OAUCM, _LinearSOSL, _max_abs

__all__ = ["PartialOAUCM", "budget_rank"]

#: largest share of the kept negatives' scores the budget reservoir holds by default
_BUDGET_SIZE = 500

#: OAUC-M's default lambda; ``lam="auto"`` divides it by the kept shares (see ``_lam``)
AUTO_LAM = 1e-2


def budget_rank(m: int, max_fpr: float, window: int, confidence: float) -> tuple[int, float]:
    """The rank k (1 = the largest) of the budget threshold among ``m`` kept negative
    scores, and the tail share q it aims at.

    q is the largest tail share for which a window of ``window`` negatives exceeds
    ``max_fpr`` with probability at most ``(1 - confidence) / 2`` (binomial); k is the
    largest rank whose order statistic leaves a tail share above q with probability at
    most ``(1 - confidence) / 2`` (the tail share above the k-th largest of m exchangeable
    scores is Beta(k, m + 1 - k)). Returns (0, q) when m is too small for any rank: the
    threshold is then +inf (nothing is flagged).
    """
    delta = 0.5 * (1.0 - confidence)
    cap = math.floor(max_fpr * window)
    lo, hi = 0.0, max_fpr
    for _ in range(60):                     # bisection on q: P(Bin(window, q) > cap) <= delta
        mid = 0.5 * (lo + hi)
        if binom.sf(cap, window, mid) <= delta:
            lo = mid
        else:
            hi = mid
    q = lo
    ks = np.arange(1, m + 1)
    ok = beta_dist.sf(q, ks, m + 1 - ks) <= delta if m > 0 else np.zeros(0, bool)
    k = int(ks[ok].max()) if ok.any() else 0
    return k, q


class PartialOAUCM(OAUCM):
    """PartialOAUCM: one-pass partial-AUC maximization on OAUC-M's class moments.

    Learns for the corner of the ROC curve a system runs at: false-positive rate at most
    ``max_fpr`` (beta) and, if ``min_tpr`` (alpha) is given, true-positive rate at least
    ``min_tpr``. Each positive pays the worst case, over every negative distribution with
    the kept mean and covariance, of the average pairwise hinge loss over the top beta of
    the negatives (a CVaR); each negative counts only when it is in the top beta of the
    negatives (two-way: each positive only when in the lowest 1 - alpha of the positives)::

        L_t(w) = lam/2 ||w||^2 + sel_t psi_beta(mu, s2),
        psi_beta = 1 - mu + sigma sqrt((1 - beta)/beta)   if 1 - mu >= c*(beta, sigma)
                 = psi_M(mu, s2) / beta                   otherwise,

    with mu, s2 as in :class:`sosl.OAUCM` and sel_t in {0, 1/beta} the own-class selection
    (derivation, convexity and the O(ln T) regret with step 1/(lam t):
    docs/user_guide/partial_auc.md). ``max_fpr=1`` with ``min_tpr=None`` is OAUC-M.

    Parameters
    ----------
    max_fpr : float in (0, 1], default=0.05
        beta: the share of the negatives (highest-scored) whose ranking is learned.
    min_tpr : float in [0, 1) or None, default=None
        alpha: if given, only the lowest-scored ``1 - min_tpr`` of the positives count
        (two-way partial AUC).
    lam : float or "auto", default="auto"
        Tikhonov weight (> 0 with ``eta=None``). ``"auto"``: ``1e-2 / (max_fpr * g)``
        with ``g = 1 - min_tpr`` (1 one-way). psi_beta's gradient carries factors up to
        ``1 / (max_fpr * g)`` that psi_M's does not, so the step ``1/(lam t)`` at a fixed
        lam is that much longer than OAUC-M's; "auto" gives back OAUC-M's effective step
        at its default lam (and is OAUC-M's ``lam=1e-2`` at ``max_fpr=1``). A number is
        used as given.
    eta : float or None, default=None
        None: the step 1/(lam t); a float: a constant step.
    forgetting, shuffle, random_state, max_memory
        As in :class:`sosl.OAUCM`.
    budget_confidence : float in (0, 1), default=0.95
        The FPR budget (:meth:`predict_at_budget`) keeps a window of ``budget_window``
        negatives at or under ``max_fpr`` with about this probability.
    budget_window : int, default=1000
        Number of negatives in the window the budget's promise is stated for.

    Attributes
    ----------
    coef_, w_, intercept_, means_, covariances_, counts_, t_, n_seen_, classes_, \
n_features_in_
        As in :class:`sosl.OAUCM` (the same state; a fitted model merges as OAUC-M's).
    budget_scores_ : ndarray of shape (budget_size,)
        The last negatives' scores, standardized by the negatives' score mean and spread
        under the model that scored them (a ring buffer; the first ``budget_filled_``
        entries are in use, ``budget_next_`` is the next one written).
    budget_threshold_ : float
        The score threshold of ``predict_at_budget(X)`` under the current model.

    References
    ----------
    J. Luo, D. Cheng, B. Zhang (OAUC-M, Lemma 2); D. Zhu, G. Li, B. Wang, X. Wu, T. Yang,
    When AUC meets DRO (ICML 2022); Z. Yang et al., When All We Need is a Piece of the Pie
    (ICML 2021, two-way partial AUC).

    Examples
    --------
    >>> import numpy as np
    >>> from sosl import PartialOAUCM
    >>> from sosl.metrics import partial_auc
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 3)); y = (X[:, 0] + 0.3 * rng.normal(size=2000) > 1.5)
    >>> model = PartialOAUCM(max_fpr=0.05).fit(X, y.astype(int))
    >>> bool(partial_auc(y, model.decision_function(X), max_fpr=0.05) > 0.9)
    True
    """

    capabilities = changes(platt_in_pass=False, pass_takes_identity=True)
    # OAUC-M's arrays and the FPR budget's ring buffer (a longer tuple than the base's)
    _state_names = _LinearSOSL._state_names + (  # type: ignore[assignment]
        "budget_scores_", "budget_next_", "budget_filled_")
    _parameter_constraints = {
        **{k: v for k, v in _LinearSOSL._parameter_constraints.items() if k != "detector"},
        # a fixed factor only: forgetting="auto" (sosl.drift) drives OAUC-M's pass, not this one
        "forgetting": [Interval(Real, 0, 1, closed="right")],
        "lam": [Interval(Real, 0, None, closed="left"), StrOptions({"auto"})],
        "max_fpr": [Interval(Real, 0, 1, closed="right")],
        "min_tpr": [Interval(Real, 0, 1, closed="left"), None],
        "budget_confidence": [Interval(Real, 0, 1, closed="neither")],
        "budget_window": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, max_fpr: float = 0.05, min_tpr: float | None = None,
                 lam: float | Auto = "auto", eta: float | None = None, forgetting: float = 1.0,
                 shuffle: bool = False, random_state: RandomState = None,
                 max_memory: int | Auto = "auto", budget_confidence: float = 0.95,
                 budget_window: int = 1000) -> None:
        self.max_fpr = max_fpr
        self.min_tpr = min_tpr
        self.lam = lam  # type: ignore[assignment]  # OAUC-M's lam is a number; here also "auto"
        self.eta = eta
        self.forgetting = forgetting
        self.shuffle = shuffle
        self.random_state = random_state
        self.max_memory = max_memory
        self.budget_confidence = budget_confidence
        self.budget_window = budget_window

    def _check_params(self):
        if self.eta is None and not isinstance(self.lam, str) and self.lam == 0:
            raise ValueError("lam must be > 0 when eta=None (the step is 1/(lam t))")

    def _lam(self):
        """The numeric lambda: ``lam``, or under ``lam="auto"`` OAUC-M's default divided
        by the kept shares (max_fpr, and 1 - min_tpr two-way), the largest factor
        psi_beta and the own-class selection put on the gradient."""
        if isinstance(self.lam, str):
            frac, _ = self._fractions()
            return AUTO_LAM / (float(frac[0]) * float(frac[1]))
        return float(self.lam)

    def _fractions(self):
        """(frac, zq): the share of each class kept (row 0 negative) and the normal cut."""
        frac = np.array([float(self.max_fpr),
                         1.0 if self.min_tpr is None else 1.0 - float(self.min_tpr)])
        return frac, ndtri(1.0 - frac)

    def _layout(self):
        return {**super()._layout(), "objective": "partial AUC"}

    def _init_state(self, n_features):
        state = super()._init_state(n_features)
        state["budget_scores_"] = np.zeros(_BUDGET_SIZE)
        state["budget_next_"] = 0
        state["budget_filled_"] = 0
        return state

    def _backup_names(self, X):
        # the no-copy argument of OAUC-M with G scaled by the largest weight a row's loss
        # can take (psi_beta's gradient is at most 3 R sqrt(p) / beta, times 1 / gamma for
        # the own-class selection): G = 3 / (beta gamma), H = 0
        frac, _ = self._fractions()
        names = super()._backup_names(X)
        if len(names) == len(self._state_names):
            return self._state_names
        p = X.shape[1]
        R = max(self.max_abs_, _max_abs(X))
        eta_max = (1.0 / (self._lam() * (self.t_ + 1)) if self.eta is None
                   else float(self.eta))
        W = float(np.linalg.norm(self.w_)) + X.shape[0] * eta_max * 3.0 * R * math.sqrt(p) \
            / (frac[0] * frac[1])
        if not 2.0 * R * math.sqrt(p) * W <= 1e150:
            return self._state_names
        return ("w_", "means_", "scales_", "weights_", "counts_", "budget_scores_")

    def _run_pass(self, state, X, s, order, sw=None, pre=None):
        p = X.shape[1]
        frac, zq = self._fractions()
        stats = np.array([state["max_abs_"], -1.0])
        work = np.empty(4 * p)
        n = X.shape[0] if order is None else order.shape[0]
        z = np.empty(n)
        # each round's p x p products are too small to share between threads (as OAUC-M's)
        with one_blas_thread() if p >= BLAS_MIN_P else contextlib.nullcontext():
            state["t_"] = _partial.partial_pass(
                X, s, order, state["w_"], state["means_"], state["scatter_"],
                state["scales_"], state["weights_"], state["counts_"], state["t_"],
                self._lam(), 0.0 if self.eta is None else float(self.eta),
                self._schedule(), float(self.forgetting), frac, zq, work, stats, sw, z)
        if stats[1] >= 0:
            raise ValueError("Input X contains NaN or infinity.")
        signs = s if order is None else s[order]
        self._record_negatives(state, z[(signs < 0) & np.isfinite(z)])
        state["max_abs_"] = float(stats[0])
        if state["max_abs_"] > 1e4:
            self._warn_unscaled(state["max_abs_"])

    # -- the FPR budget --------------------------------------------------------------------
    @staticmethod
    def _negative_spread(w, means, scatter, scales, weights):
        """(w.xbar-, sqrt(w' Sigma- w)) from the kernel's scaled scatter of the negatives."""
        if weights[0] <= 0:
            return 0.0, 0.0
        C = np.triu(scatter[0])
        Sw = (C @ w + np.triu(C, 1).T @ w) * (scales[0] / weights[0])
        return float(w @ means[0]), math.sqrt(max(float(w @ Sw), 0.0))

    @staticmethod
    def _record_negatives(state, z):
        """Push the negatives' standardized scores (each under the model before its own
        round, from the pass) into the budget's ring buffer."""
        if z.shape[0] == 0:
            return
        buf = state["budget_scores_"]
        size = buf.shape[0]
        z = z[-size:]
        at = (int(state["budget_next_"]) + np.arange(z.shape[0])) % size
        buf[at] = z
        state["budget_next_"] = int((int(state["budget_next_"]) + z.shape[0]) % size)
        state["budget_filled_"] = min(size, int(state["budget_filled_"]) + z.shape[0])

    @property
    def budget_threshold_(self):
        """Score threshold of the FPR budget under the current model (+inf if too few
        negatives were seen)."""
        kept = self.budget_scores_[:self.budget_filled_]
        k, _ = budget_rank(kept.shape[0], float(self.max_fpr), int(self.budget_window),
                           float(self.budget_confidence))
        if k == 0:
            return math.inf
        m, sd = self._negative_spread(self.w_, self.means_, self.scatter_, self.scales_,
                                      self.weights_)
        z_k = np.partition(kept, kept.shape[0] - k)[kept.shape[0] - k]   # k-th largest
        # decision_function adds the intercept; the threshold is on the same scale
        return m + sd * float(z_k) + self._intercept()

    @property
    def budget_moment_threshold_(self):
        """Score threshold of ``predict_at_budget(X, rule="moments")``: one-sided Chebyshev
        (Cantelli) on the negatives' moments under the current model, so that at most the
        tail share q of :func:`sosl.partial.budget_rank` of the negatives seen (any law with those
        moments) score above it."""
        _, q = budget_rank(0, float(self.max_fpr), int(self.budget_window),
                           float(self.budget_confidence))
        if self.counts_[0] < 2 or not q > 0.0:
            return math.inf
        m, sd = self._negative_spread(self.w_, self.means_, self.scatter_, self.scales_,
                                      self.weights_)
        return m + sd * math.sqrt((1.0 - q) / q) + self._intercept()

    def predict_at_budget(self, X: ArrayLike, rule: str = "quantile") -> np.ndarray:
        """Predicted labels under the FPR budget: ``classes_[1]`` where the score is above
        the budget's threshold (``predict`` keeps the threshold 0 of every learner).

        A method of its own rather than an argument of ``predict``: scikit-learn's tools
        call ``predict(X)`` alone, and the other learners have no budget to read.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        rule : {"quantile", "moments"}, default="quantile"
            ``"quantile"``: above :attr:`budget_threshold_` (read from the kept negatives'
            scores); ``"moments"``: above :attr:`budget_moment_threshold_`
            (distribution-free, from the current negatives' moments only; more
            conservative).

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        if rule not in ("quantile", "moments"):
            raise ValueError(f"rule must be 'quantile' or 'moments', got {rule!r}")
        with _model_lock(self.__dict__):            # the scores and the cut of one model
            scores = self.decision_function(X)
            cut = (self.budget_moment_threshold_ if rule == "moments"
                   else self.budget_threshold_)
            return self.classes_[(scores > cut).astype(np.intp)]

    # -- the typed one-row and batch paths of OAUC-M play psi_M: use the general path --
    def _learn_one_in_place(self, x, s):
        return False

    def partial_fit(self, X: ArrayLike, y: ArrayLike, classes: ArrayLike | None = None,
                    sample_weight: ArrayLike | None = None) -> Self:
        return BaseOnlineAUC.partial_fit(self, X, y, classes, sample_weight)

    partial_fit.__doc__ = BaseOnlineAUC.partial_fit.__doc__

    def score_one(self, x: ArrayLike) -> float:
        return BaseOnlineAUC.score_one(self, x)

    score_one.__doc__ = BaseOnlineAUC.score_one.__doc__
