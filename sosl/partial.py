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
from scipy.stats import beta as beta_dist
from scipy.stats import binom
from sklearn.utils._param_validation import Interval, StrOptions

from . import drift as _drift
from ._base import BaseOnlineAUC, _model_lock
from ._capabilities import changes
from ._core import _linear, _partial
from ._core._blas import one_blas_thread
from ._typing import Auto, Detector, RandomState
from .linear import BLAS_MIN_P, OAUCM, _LinearSOSL, _max_abs

__all__ = ["PartialOAUCM", "budget_rank"]

#: rows kept per class by the own-class selection's rings, and negative rows kept by the
#: FPR budget
_BUDGET_SIZE = 500

#: OAUC-M's default lambda; ``lam="auto"`` scales it by the mixed loss's per-round gradient
#: noise relative to OAUC-M's (see ``_lam``)
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

        L_t(w) = lam/2 ||w||^2 + (1 - rho) sel_t psi_beta(mu, s2) + rho psi_M(mu, s2),
        psi_beta = 1 - mu + sigma sqrt((1 - beta)/beta)   if 1 - mu >= c*(beta, sigma)
                 = psi_M(mu, s2) / beta                   otherwise,

    with mu, s2 as in :class:`sosl.OAUCM`, sel_t in {0, 1/beta} the own-class selection (a
    row counts when its standardized score is in the top beta of its class's last rows)
    and rho = ``auc_weight`` the share of OAUC-M's full-AUC loss in the mix (derivation,
    convexity and the O(ln T) regret with step 1/(lam t): docs/user_guide/partial_auc.md).
    The scores read, by default, the t-weighted average of the iterates
    ``wbar_T = sum_t t w_t / sum_t t`` (``average``). ``max_fpr=1`` with ``min_tpr=None``
    and ``average=False`` is OAUC-M.

    Parameters
    ----------
    max_fpr : float in (0, 1], default=0.05
        beta: the share of the negatives (highest-scored) whose ranking is learned.
    min_tpr : float in [0, 1) or None, default=None
        alpha: if given, only the lowest-scored ``1 - min_tpr`` of the positives count
        (two-way partial AUC).
    lam : float or "auto", default="auto"
        Tikhonov weight (> 0 with ``eta=None``). ``"auto"``:
        ``1e-2 * sqrt((1 - rho)^2 / b + 2 rho (1 - rho) + rho^2)`` with ``b = max_fpr * g``
        and ``g = 1 - min_tpr`` (1 one-way). The partial term's gradient is ``1 / b`` times
        larger on the share b of the rows it selects and 0 elsewhere, so its mean square
        per round is ``1 / b`` times psi_M's; "auto" scales OAUC-M's default lam by the root
        of the mix's mean square factor (the per-round step noise, not its worst case
        ``1 / b``), and is OAUC-M's ``lam=1e-2`` at ``max_fpr=1`` for any rho. A number
        is used as given.
    eta : float or None, default=None
        None: the step 1/(lam t); a float: a constant step.
    forgetting, shuffle, random_state, max_memory, detector, label_delay
        As in :class:`sosl.OAUCM`.
    budget_confidence : float in (0, 1), default=0.95
        The FPR budget (:meth:`predict_at_budget`) keeps a window of ``budget_window``
        negatives at or under ``max_fpr`` with about this probability.
    budget_window : int, default=1000
        Number of negatives in the window the budget's promise is stated for.
    auc_weight : float in [0, 1], default=0.5
        rho: the weight of OAUC-M's full-AUC loss psi_M beside the partial one. The partial
        term learns from about ``max_fpr`` of the negatives only; the full-AUC term keeps
        every row informative (a lower-variance estimate of the direction, which the
        partial term then bends toward the top of the ranking). 0: the partial loss alone.
    average : bool, default=True
        True: ``decision_function``, ``coef_``, ``intercept_`` and the FPR budget read the
        t-weighted average of the iterates, ``wbar_t = wbar_{t-1} + 2/(t+1) (w_t -
        wbar_{t-1})`` with t the round counter (Lacoste-Julien, Schmidt and Bach's average
        for a ``1/(lam t)`` step: it removes the late iterates' step noise the last iterate
        keeps); False: the last iterate ``w_``. The rounds always step from ``w_``; under
        ``forgetting="auto"`` a detected change restarts the average at ``w_``.

    Attributes
    ----------
    coef_, w_, intercept_, means_, covariances_, counts_, t_, n_seen_, classes_, \
n_features_in_
        As in :class:`sosl.OAUCM` (the same state; a fitted model merges as OAUC-M's),
        except that ``coef_`` and ``intercept_`` read the averaged weights under
        ``average=True`` (assigning ``coef_`` sets both ``w_`` and ``w_avg_``).
    w_avg_ : ndarray of shape (n_features,)
        The t-weighted average of the iterates ``w_`` (kept whatever ``average``).
    selection_scores_ : ndarray of shape (2, 500)
        Per class (row 0 negative), the last rows' standardized scores in their class
        (higher: a higher negative, a lower positive) under the model before each row's
        round: the rings the own-class selection ranks a row against
        (``selection_filled_[k]`` entries in use, ``selection_next_[k]`` written next).
    budget_rows_ : ndarray of shape (500, n_features)
        The last negative rows seen (a ring: the first ``budget_filled_`` in use,
        ``budget_next_`` written next); the FPR budget scores them under the current model.
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
    # OAUC-M's arrays, the selection rings and the FPR budget's rows (a longer tuple)
    _state_names = _LinearSOSL._state_names + (  # type: ignore[assignment]
        "w_avg_", "selection_scores_", "selection_next_", "selection_filled_",
        "budget_rows_", "budget_next_", "budget_filled_")
    _parameter_constraints = {
        **_LinearSOSL._parameter_constraints,
        "lam": [Interval(Real, 0, None, closed="left"), StrOptions({"auto"})],
        "max_fpr": [Interval(Real, 0, 1, closed="right")],
        "min_tpr": [Interval(Real, 0, 1, closed="left"), None],
        "auc_weight": [Interval(Real, 0, 1, closed="both")],
        "budget_confidence": [Interval(Real, 0, 1, closed="neither")],
        "budget_window": [Interval(Integral, 1, None, closed="left")],
        "average": ["boolean"],
    }

    def __init__(self, max_fpr: float = 0.05, min_tpr: float | None = None,
                 lam: float | Auto = "auto", eta: float | None = None,
                 forgetting: float | Auto = 1.0, shuffle: bool = False,
                 random_state: RandomState = None, max_memory: int | Auto = "auto",
                 budget_confidence: float = 0.95, budget_window: int = 1000,
                 auc_weight: float = 0.5, detector: Detector | None = None,
                 label_delay: int = 0, average: bool = True) -> None:
        self.max_fpr = max_fpr
        self.min_tpr = min_tpr
        self.auc_weight = auc_weight
        self.lam = lam  # type: ignore[assignment]  # OAUC-M's lam is a number; here also "auto"
        self.eta = eta
        self.forgetting = forgetting
        self.shuffle = shuffle
        self.random_state = random_state
        self.max_memory = max_memory
        self.budget_confidence = budget_confidence
        self.budget_window = budget_window
        self.detector = detector
        self.label_delay = label_delay
        self.average = average

    def __setstate__(self, state):
        # a fitted model pickled before the averaged weights were kept has no w_avg_ to
        # score with: refused rather than guessed
        if "w_" in state and "w_avg_" not in state:
            raise ValueError("this PartialOAUCM was saved without the state array 'w_avg_' "
                             "(the averaged weights its scores read): refit it")
        super().__setstate__(state)

    def _check_params(self):
        if self.eta is None and not isinstance(self.lam, str) and self.lam == 0:
            raise ValueError("lam must be > 0 when eta=None (the step is 1/(lam t))")
        super()._check_params()

    def _lam(self):
        """The numeric lambda: ``lam``, or under ``lam="auto"`` OAUC-M's default times the
        root mean square factor of the mixed loss's gradient per round, ``sqrt((1 - rho)^2
        / b + 2 rho (1 - rho) + rho^2)`` with ``b = max_fpr g``: the partial term's factor
        is ``1 / b`` on a share b of the rounds (psi_beta and the own-class selection) and 0
        elsewhere, psi_M's is 1 on every round."""
        if isinstance(self.lam, str):
            frac = self._fractions()
            b = float(frac[0]) * float(frac[1])
            rho = float(self.auc_weight)
            return AUTO_LAM * math.sqrt((1.0 - rho) ** 2 / b + 2.0 * rho * (1.0 - rho)
                                        + rho ** 2)
        return float(self.lam)

    def _gradient_factor(self):
        """The largest factor the mixed loss puts on a row's gradient relative to psi_M's,
        ``(1 - rho) / b + rho`` (the worst case, for the no-copy bound of the backup)."""
        frac = self._fractions()
        rho = float(self.auc_weight)
        return (1.0 - rho) / (float(frac[0]) * float(frac[1])) + rho

    def _fractions(self):
        """The share of each class kept (row 0 negative)."""
        return np.array([float(self.max_fpr),
                         1.0 if self.min_tpr is None else 1.0 - float(self.min_tpr)])

    def _layout(self):
        return {**super()._layout(), "objective": "partial AUC"}

    def _init_state(self, n_features):
        state = super()._init_state(n_features)
        state["w_avg_"] = np.zeros(n_features)
        state["selection_scores_"] = np.zeros((2, _BUDGET_SIZE))
        state["selection_next_"] = np.zeros(2, np.int64)
        state["selection_filled_"] = np.zeros(2, np.int64)
        state["budget_rows_"] = np.zeros((_BUDGET_SIZE, n_features))
        state["budget_next_"] = 0
        state["budget_filled_"] = 0
        return state

    def _backup_names(self, X):
        # the no-copy argument of OAUC-M with G scaled by the largest weight a row's loss
        # can take (psi_beta's gradient is at most 3 R sqrt(p) / beta, times 1 / gamma for
        # the own-class selection, mixed with psi_M's 3 R sqrt(p)): G = 3 times the mix's
        # factor, H = 0
        names = super()._backup_names(X)
        if len(names) == len(self._state_names):
            return self._state_names
        p = X.shape[1]
        R = max(self.max_abs_, _max_abs(X))
        eta_max = (1.0 / (self._lam() * (self.t_ + 1)) if self.eta is None
                   else float(self.eta))
        W = float(np.linalg.norm(self.w_)) + X.shape[0] * eta_max * 3.0 * R * math.sqrt(p) \
            * self._gradient_factor()
        if not 2.0 * R * math.sqrt(p) * W <= 1e150:
            return self._state_names
        # the budget's ring is written only at the slots this batch can reach: those are
        # saved and restored on failure instead of copying the whole ring
        size = self.budget_rows_.shape[0]
        slots = (int(self.budget_next_) + np.arange(min(X.shape[0], size))) % size
        return {**dict.fromkeys(("w_", "w_avg_", "means_", "scales_", "weights_", "counts_",
                                 "selection_scores_", "selection_next_",
                                 "selection_filled_")),
                "budget_rows_": slots}

    def _run_pass(self, state, X, s, order, sw=None, pre=None):
        p = X.shape[1]
        stats = np.array([state["max_abs_"], -1.0])
        work = np.empty(4 * p)

        def play(rows, t0, st=state, beta=None):
            # st, beta: the second candidate of forgetting="auto" (its own state)
            # each round's p x p products are too small to share between threads (as OAUC-M's)
            with one_blas_thread() if p >= BLAS_MIN_P else contextlib.nullcontext():
                t = _partial.partial_pass(
                    X, s, rows, st["w_"], st["means_"], st["scatter_"],
                    st["scales_"], st["weights_"], st["counts_"], t0,
                    self._lam(), 0.0 if self.eta is None else float(self.eta),
                    self._schedule(), self._beta() if beta is None else beta,
                    self._fractions(), float(self.auc_weight), st["selection_scores_"],
                    st["selection_next_"], st["selection_filled_"], work, stats, sw,
                    st["w_avg_"])
            if stats[1] >= 0:
                raise ValueError("Input X contains NaN or infinity.")
            signs = s if rows is None else s[rows]
            neg = np.flatnonzero(signs < 0)
            self._record_negatives(st, X, neg if rows is None else rows[neg])
            return t

        if self.forgetting == "auto":       # drift detected and answered, as OAUC-M's
            _drift.linear_auto_pass(self, state, X, s, order, pre, play)
        else:
            state["t_"] = play(order, state["t_"])
        state["max_abs_"] = float(stats[0])
        if state["max_abs_"] > 1e4:
            self._warn_unscaled(state["max_abs_"])

    # -- the scores: the averaged weights (average=True) or the last iterate -------------
    def _scored_weights(self):
        """The weights the scores read: ``w_avg_`` under ``average=True``, else ``w_``."""
        return self.w_avg_ if self.average else self.w_

    @property
    def coef_(self):
        """Weights of shape (1, n_features) the scores read: a view of ``w_avg_`` under
        ``average=True``, of ``w_`` otherwise (writes go through).

        Assigning an array of shape (1, n_features) or (n_features,) of finite numbers
        copies it into ``w_`` (the weights the next round starts from) and ``w_avg_`` (the
        average then continues from it); any other shape or value raises and leaves the
        model unchanged.
        """
        d = self.__dict__
        if d.get("w_") is None:
            return OAUCM.coef_.fget(self)  # type: ignore[attr-defined]  # raises NotFittedError
        return self._scored_weights()[None, :]

    @coef_.setter
    def coef_(self, value):
        with _model_lock(self.__dict__):
            OAUCM.coef_.fset(self, value)  # type: ignore[attr-defined]  # checks, writes w_
            self.w_avg_[...] = self.w_

    def _intercept(self):
        if self.counts_[0] == 0 or self.counts_[1] == 0:
            return 0.0
        return float(-0.5 * self._scored_weights() @ (self.means_[0] + self.means_[1]))

    def _decision(self, X):
        w = self._scored_weights()
        if type(X) is np.ndarray and X.dtype == np.float64 and X.flags.c_contiguous:
            out = np.empty(X.shape[0])
            _linear.decision_rows(X, w, self.means_, self.counts_, out)
            return out
        with np.errstate(over="ignore", invalid="ignore"):
            return X @ w + self._intercept()

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
    def _record_negatives(state, X, rows):
        """Push the negative rows ``X[rows]`` (in visit order) into the budget's ring."""
        if rows.shape[0] == 0:
            return
        buf = state["budget_rows_"]
        size = buf.shape[0]
        rows = rows[-size:]
        at = (int(state["budget_next_"]) + np.arange(rows.shape[0])) % size
        buf[at] = X[rows]
        state["budget_next_"] = int((int(state["budget_next_"]) + rows.shape[0]) % size)
        state["budget_filled_"] = min(size, int(state["budget_filled_"]) + rows.shape[0])

    @property
    def budget_threshold_(self):
        """Score threshold of the FPR budget under the current model (+inf if too few
        negatives were seen)."""
        n = int(self.budget_filled_)
        k, _ = budget_rank(n, float(self.max_fpr), int(self.budget_window),
                           float(self.budget_confidence))
        if k == 0:
            return math.inf
        kept = self.budget_rows_[:n] @ self._scored_weights()   # the kept negatives, now
        s_k = np.partition(kept, n - k)[n - k]           # k-th largest
        # decision_function adds the intercept; the threshold is on the same scale
        return float(s_k) + self._intercept()

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
        m, sd = self._negative_spread(self._scored_weights(), self.means_, self.scatter_,
                                      self.scales_, self.weights_)
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
