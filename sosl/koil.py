"""KOIL: kernelized online imbalanced learning with fixed budgets (Hu et al.), the kernel
baseline of the second-order learners."""

from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions

from ._base import BaseOnlineAUC, _canonical_csr, _finite_array
from ._core import _koil
from ._core._codes import KoilPolicy
from ._core._kfun_ref import KERNEL_CODES, KERNEL_NAMES, budget_pair
from .kernels import (
    KERNEL_CONSTRAINTS,
    _slots_to_csr,
    _SparseStorage,
    _widen_slots,
    layout_expansion,
)

__all__ = ["KOIL"]

_POLICIES = {"rs++": int(KoilPolicy.POLICY_RS), "fifo++": int(KoilPolicy.POLICY_FIFO)}


def _philox_uniforms(seed, t0, m):
    """Uniforms of rounds t0+1..t0+m: round t uses Philox block t of key ``seed``.

    Four doubles per block, two used; the stream is the same whatever the chunking of
    the ``partial_fit`` calls, so ``fit`` equals ``partial_fit`` over any chunks.
    """
    bitgen = np.random.Philox(key=seed)
    bitgen.advance(t0)
    return np.random.Generator(bitgen).random(4 * m).reshape(m, 4)[:, :2].copy()


#: the state arrays of the slots of either storage (the rest is shared)
_DENSE_SLOTS = ("buffer_",)
_SPARSE_SLOTS = ("buffer_ind_", "buffer_val_", "buffer_nnz_")
_SHARED = ("alpha_", "gram_", "buffer_scores_", "n_buffer_", "n_class_seen_", "fifo_head_",
           "seed_", "intercept_")


class KOIL(_SparseStorage, BaseOnlineAUC):  # type: ignore[override]
    """KOIL: online kernel AUC maximization with two fixed-budget support-vector buffers.

    f = sum_i alpha_i k(x_i, .) over a positive and a negative buffer. At round t the
    new instance is paired with the opposite-class support vectors x_i whose pairwise
    hinge loss max(0, 1 - y_t (f(x_t) - f(x_i))) is positive; only the ``n_neighbors``
    of them nearest to x_t (kernel-induced distance) are used, and one gradient step
    is taken on

        L_t(f) = 1/2 ||f||_H^2 + C sum_{i in S_t} max(0, 1 - y_t (f(x_t) - f(x_i))),

    i.e. alpha <- (1 - eta) alpha, alpha_i <- alpha_i - eta C y_t (i in S_t), and x_t enters
    its own buffer with weight eta C y_t |S_t|. A full buffer is maintained by reservoir
    sampling (``"rs++"``) or first-in-first-out (``"fifo++"``), and the weight that
    leaves the buffer is added to the nearest remaining support vector of the same
    class ("compensation").

    Parameters
    ----------
    eta : float, default=0.05
        Step size eta, 0 < eta < 1 (the weights decay by 1 - eta each round).
    C : float, default=1.0
        Weight C of the pairwise hinge losses.
    n_neighbors : int, default=10
        k, the number of nearest violating opposite support vectors updated per round.
    budget : int or (int, int), default=100
        Buffer budgets; an int gives both buffers that size, a pair is (N+, N-).
    policy : {"rs++", "fifo++"}, default="rs++"
        Buffer maintenance with weight compensation: reservoir sampling or FIFO.
    kernel : {"gaussian", "rbf", "linear", "poly"}, default="gaussian"
        Kernel, see :mod:`sosl.kernels`.
    gamma : float or "scale", default=1.0
        Gaussian exp(-gamma ||x - x'||^2) (gamma = 1/sigma^2); poly: inner-product scale.
        ``"scale"``: 1 / (n_features * X.var()) over the first batch of a fit (as
        ``sklearn.svm.SVC``), computed once and frozen with the fitted layout.
    degree : int, default=3
        Degree of the polynomial kernel.
    coef0 : float, default=1.0
        Constant of the polynomial kernel.
    shuffle : bool, default=False
        Visit the rows of each batch in a random order.
    random_state : int, RandomState or None, default=None
        Seeds the reservoir sampling (and the shuffling). A fixed seed makes every
        run, and ``fit`` versus ``partial_fit`` over any chunks, identical.

    Attributes
    ----------
    support_vectors_ : ndarray or scipy.sparse.csr_matrix of shape (n_SV, n_features)
        The support vectors, negative buffer first (a copy of the filled slots); a CSR
        matrix for a model fitted on sparse input.
    dual_coef_ : ndarray of shape (n_SV,)
        Their weights alpha_i.
    intercept_ : float
        Offset used by ``predict`` only (AUC ignores it): minus the midpoint of the mean
        scores of the two buffers.
    buffer_ : ndarray of shape (N- + N+, n_features)
        All slots: ``[0, N-)`` negative, ``[N-, N- + N+)`` positive. A model fitted on
        sparse input has ``buffer_ind_``, ``buffer_val_``, ``buffer_nnz_`` instead (see
        Notes).
    alpha_ : ndarray of shape (N- + N+,)
        Slot weights (0 on empty slots).
    gram_ : ndarray of shape (N- + N+, N- + N+)
        Cached Gram matrix of the slots.
    buffer_scores_ : ndarray of shape (N- + N+,)
        f at every filled slot, kept up to date (recomputed from ``gram_`` every 1024
        rounds to bound the rounding drift).
    n_buffer_, n_class_seen_, fifo_head_ : ndarray of int of shape (2,)
        Filled slots, instances seen and oldest slot of each buffer (row 0 negative).
    seed_ : int
        Key of the Philox stream of the reservoir-sampling draws.
    t_, n_seen_, classes_, n_features_in_
        Rounds played, instances seen, labels (``classes_[1]`` is positive), features.

    Notes
    -----
    Choices where the KOIL paper and the public code leave room (stated here once):

    * "Nearest" (for the k neighbours and for the compensation target) is the
      kernel-induced distance k(x, x) + k(x', x') - 2 k(x, x'); for the Gaussian kernel
      it orders like the largest kernel value used by the authors' code. Ties go to
      the lower slot (negative buffer first, then insertion slot).
    * The k neighbours are chosen among the violators only (opposite SVs with positive
      pairwise loss), all of them if fewer than k; the authors' code does the same
      (it also skips SVs whose weight is exactly 0; here every stored SV is a candidate).
    * The regularizer weight is 1 (decay 1 - eta) and C scales the losses, as in the
      paper's objective 1/2 ||f||^2 + C sum loss.
    * A round with no violator (a_t = 0) stores nothing, except while a buffer is
      empty: the first instance of a class, or any instance while the other buffer is
      empty, enters with weight eta C y_t so that both buffers get started.
    * RS++ admits x_t with probability N_c / n_c (n_c: instances of its class seen,
      including those not stored) into a uniformly drawn slot; a rejected x_t hands
      its weight to its nearest same-class SV. FIFO++ always admits x_t.
    * The compensation target is searched among the SVs of the same buffer after the
      replacement (so it may be x_t itself), as in the authors' code.
    * ``intercept_`` replaces the paper's threshold search on the buffers (used for
      accuracy only; AUC does not depend on it).

    Sparse input: when the first call of a fit (``fit``, or the first ``partial_fit`` /
    ``learn_one``) receives a ``scipy.sparse`` matrix, the slots are sparse for the rest
    of the fit: slot j keeps ``buffer_nnz_[j]`` entries at the increasing feature
    positions ``buffer_ind_[j, :buffer_nnz_[j]]`` (int32) with values
    ``buffer_val_[j, :buffer_nnz_[j]]``; the slot width L = ``buffer_ind_.shape[1]`` is
    widened before a pass to the largest nnz of its rows. The pass
    (:func:`sosl._core._koil.koil_pass_csr`) and ``decision_function`` evaluate the kernel
    by merging sorted index lists, O(B (nnz(x_t) + L)) per round whatever the number of
    features, and ``support_vectors_`` is a ``scipy.sparse.csr_matrix``. Later dense
    input to such a model is converted to CSR; a model fitted dense densifies later
    sparse input a block of rows at a time. Both give the model fitted on the same rows
    in the other format, to rounding (tested at rtol 1e-12:
    tests/test_koil.py::test_sparse_fitted_model_equals_dense_fitted).

    Per round: O((N+ + N-) p) kernel evaluations for x_t and O(k (N+ + N-)) to keep f on
    the buffers up to date through the cached Gram matrix (the authors' code re-evaluates
    f on the opposite buffer, O(N_o (N+ + N-) p)).

    References
    ----------
    J. Hu, H. Yang, I. King, M. R. Lyu, A. M.-C. So. Kernelized Online Imbalanced
    Learning with Fixed Budgets. AAAI 2015. Extended as J. Hu, H. Yang, M. R. Lyu, I. King,
    A. M.-C. So, Online Nonlinear AUC Maximization for Imbalanced Data Sets, IEEE TNNLS,
    2018. The authors' public code (github.com/JunjieHu/koil) was read to settle the
    details listed in the Notes; no code was taken from it.

    Examples
    --------
    >>> import numpy as np
    >>> from sosl import KOIL
    >>> from sosl.metrics import auc
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(600, 2)); y = (X[:, 0] ** 2 + X[:, 1] ** 2 < 0.4).astype(int)
    >>> model = KOIL(budget=50, gamma=2.0, random_state=0).fit(X, y)
    >>> bool(auc(y, model.decision_function(X)) > 0.9), model.support_vectors_.shape[0] <= 100
    (True, True)
    """

    _one_row_by_copy = True       # learn_one: the pass on copies, without the general path

    _storage_names = _DENSE_SLOTS + _SPARSE_SLOTS

    @property
    def _state_names(self):
        lay = getattr(self, "_layout_", None) or self._layout()
        return (_SPARSE_SLOTS if lay.get("storage") == "csr" else _DENSE_SLOTS) + _SHARED

    def __init__(self, eta=0.05, C=1.0, n_neighbors=10, budget=100, policy="rs++",
                 kernel="gaussian", gamma=1.0, degree=3, coef0=1.0, shuffle=False,
                 random_state=None):
        self.eta = eta
        self.C = C
        self.n_neighbors = n_neighbors
        self.budget = budget
        self.policy = policy
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.shuffle = shuffle
        self.random_state = random_state

    _parameter_constraints = {
        "eta": [Interval(Real, 0, 1, closed="neither")],
        "C": [Interval(Real, 0, None, closed="neither")],
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "budget": [Interval(Integral, 1, None, closed="left"), tuple, list],
        "policy": [StrOptions(set(_POLICIES))],
        **KERNEL_CONSTRAINTS,
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
    }

    # -- parameters ----------------------------------------------------------------------
    def _check_params(self):
        budget_pair(self.budget)

    def _layout(self):
        """Budgets (N-, N+) in slot order, buffer policy, kernel and its parameters (they
        define the cached Gram matrix and scores)."""
        return {"budgets": budget_pair(self.budget), "policy": _POLICIES[self.policy],
                "kernel": KERNEL_CODES[self.kernel], "gamma": self._gamma(),
                "gamma_scale": self.gamma == "scale",
                "degree": float(self.degree), "coef0": float(self.coef0),
                "storage": self._storage()}

    # -- state ---------------------------------------------------------------------------
    def _init_state(self, n_features):
        lay = self._layout()
        B = int(sum(lay["budgets"]))
        if lay["storage"] == "csr":
            slots = {"buffer_ind_": np.zeros((B, 1), dtype=np.int32),
                     "buffer_val_": np.zeros((B, 1)),
                     "buffer_nnz_": np.zeros(B, dtype=np.int32)}
        else:
            slots = {"buffer_": np.zeros((B, n_features))}
        return {
            **slots,
            "alpha_": np.zeros(B),
            "gram_": np.zeros((B, B)),
            "buffer_scores_": np.zeros(B),
            "n_buffer_": np.zeros(2, dtype=np.int64),
            "n_class_seen_": np.zeros(2, dtype=np.int64),
            "fifo_head_": np.zeros(2, dtype=np.int64),
            "seed_": int(check_random_state(self.random_state).randint(0, 2**31 - 1)),
            "intercept_": 0.0,
        }

    def _pass_args(self, state, X, s, order, lay):
        """Arguments of ``koil_pass`` (dense state) or ``koil_pass_csr`` (sparse slots; X
        then CSR) for the layout ``lay`` (shared with the tests)."""
        U = _philox_uniforms(state["seed_"], state["t_"], order.shape[0])
        k_nn = int(self.n_neighbors)
        work = np.zeros(2 * state["alpha_"].shape[0] + 2 * k_nn)
        if "buffer_" in state:
            head = (X, s, order, U, state["buffer_"])
        else:
            head = (X.data, X.indices, X.indptr, s, order, U, state["buffer_ind_"],
                    state["buffer_val_"], state["buffer_nnz_"])
        return head + (state["alpha_"], state["gram_"],
                       state["buffer_scores_"], state["n_buffer_"], state["n_class_seen_"],
                       state["fifo_head_"], np.array(lay["budgets"], dtype=np.int64),
                       state["t_"], float(self.eta), float(self.C), k_nn, lay["policy"],
                       lay["kernel"], lay["gamma"], lay["degree"], lay["coef0"], work)

    def _run_pass(self, state, X, s, order):
        lay = self._layout_
        message = (f"KOIL: the {KERNEL_NAMES[lay['kernel']]} kernel overflowed on this batch "
                   "(kernel values or scores are not finite); scale the features. The model "
                   "was left unchanged.")
        run = _koil.koil_pass
        if lay.get("storage") == "csr":
            X = _canonical_csr(X)
            state["buffer_ind_"], state["buffer_val_"] = _widen_slots(
                state["buffer_ind_"], state["buffer_val_"], X)
            run = _koil.koil_pass_csr
        try:
            state["t_"] = run(*self._pass_args(state, X, s, order, lay))
        except FloatingPointError as exc:
            raise FloatingPointError(f"{message} ({exc})") from None
        if not (_finite_array(state["gram_"]) and _finite_array(state["buffer_scores_"])):
            raise FloatingPointError(message)
        state["intercept_"] = self._midpoint(state, lay)

    @staticmethod
    def _midpoint(state, lay):
        """-(mean f on B- + mean f on B+)/2 from the cached scores (0 until both are filled)."""
        n = state["n_buffer_"]
        if np.any(n == 0):
            return 0.0
        off = lay["budgets"][0]
        f = state["buffer_scores_"]
        return float(-0.5 * (f[:n[0]].mean() + f[off:off + n[1]].mean()))

    def _filled(self):
        n = self.n_buffer_
        off = self._layout_["budgets"][0]
        return np.concatenate([np.arange(n[0]), np.arange(off, off + n[1])])

    @property
    def support_vectors_(self):
        """The stored support vectors (negative buffer first); CSR for sparse slots."""
        if self._layout_.get("storage") != "csr":
            return self.buffer_[self._filled()]
        return _slots_to_csr(self.buffer_ind_, self.buffer_val_, self.buffer_nnz_,
                             self._filled(), self.n_features_in_)

    @property
    def dual_coef_(self):
        """The weights of :attr:`support_vectors_`."""
        return self.alpha_[self._filled()]

    def _decision(self, X):
        sv = self.support_vectors_
        out = np.full(X.shape[0], self.intercept_)
        if sv.shape[0] == 0:
            return out
        return out + layout_expansion(X, sv, self.dual_coef_, self._layout_)
