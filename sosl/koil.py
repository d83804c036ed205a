"""KOIL: kernelized online imbalanced learning with fixed budgets (Hu et al.), the kernel
baseline of the second-order learners."""
from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions

from ._base import BaseOnlineAUC, _model_lock
from ._capabilities import Capabilities, Domain
from ._core import _koil
from ._core._calibration import platt_steps
from ._core._codes import KoilPolicy
from ._core._kparams import KERNEL_NAMES, budget_pair, layout_kernel_spec
from ._input import _canonical_csr, _canonical_row, _finite_array
from ._typing import Budget, KernelName, RandomState
from .kernels import (
    KERNEL_CONSTRAINTS,
    _slots_expansion,
    _slots_to_csr,
    _SparseStorage,
    _widen_slots,
    layout_expansion,
)

__all__ = ["KOIL"]

#: ``policy`` name -> ``KoilPolicy`` code of the pass
_POLICY_CODES = {"rs++": int(KoilPolicy.POLICY_RS), "fifo++": int(KoilPolicy.POLICY_FIFO)}


def _philox_uniforms(seed, t0, m):
    """Uniforms of rounds t0+1..t0+m: round t uses Philox block t of key ``seed``.

    Four doubles per block, two used; the stream is the same whatever the chunking of
    the ``partial_fit`` calls, so ``fit`` equals ``partial_fit`` over any chunks. They are
    those of ``numpy.random.Philox(key=seed)`` advanced by t0 blocks, computed by the typed
    :func:`sosl._core._koil.philox_uniforms` (tested equal:
    tests/_core/test_koil.py::test_philox_uniforms_equal_an_advanced_fresh_generator): building
    a ``Philox`` draws OS entropy for a seed it then ignores, the cost of a one-row call.
    """
    return _koil.philox_uniforms(seed, t0, m)


_ONE_ROW = np.zeros(1, dtype=np.intp)       # the pass order of a one-row call

#: the state arrays of the slots of either storage (the rest is shared)
_DENSE_SLOTS = ("buffer_",)
_SPARSE_SLOTS = ("buffer_ind_", "buffer_val_", "buffer_nnz_")
_SHARED = ("alpha_", "gram_", "buffer_scores_", "n_buffer_", "n_class_seen_", "fifo_head_",
           "seed_", "intercept_")


class KOIL(_SparseStorage, BaseOnlineAUC):
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

    capabilities = Capabilities(
        domains=(Domain("n_buffer_", "nonneg"), Domain("n_class_seen_", "count"),
                 Domain("fifo_head_", "nonneg")),
        # CSR rows once the slots are sparse; learn_one on sparse slots: the pass on copies
        sparse_input="storage", one_row_by_copy=True)

    _storage_names = _DENSE_SLOTS + _SPARSE_SLOTS

    @property
    def _state_names(self):  # type: ignore[override]  # the names follow the layout
        lay = getattr(self, "_layout_", None) or self._layout()
        return (_SPARSE_SLOTS if lay.get("storage") == "csr" else _DENSE_SLOTS) + _SHARED

    def __init__(self, eta: float = 0.05, C: float = 1.0, n_neighbors: int = 10,
                 budget: Budget = 100, policy: Literal["rs++", "fifo++"] = "rs++",
                 kernel: KernelName = "gaussian", gamma: float | Literal["scale"] = 1.0,
                 degree: int = 3, coef0: float = 1.0, shuffle: bool = False,
                 random_state: RandomState = None) -> None:
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
        "policy": [StrOptions(set(_POLICY_CODES))],
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
        return self._kernel_layout(budgets=budget_pair(self.budget),
                                   policy=_POLICY_CODES[self.policy])

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

    def _pass_args(self, state, X, s, order, lay, U=None):
        """Arguments of ``koil_pass`` (dense state) or ``koil_pass_csr`` (sparse slots; X
        then CSR) for the layout ``lay`` (shared with the tests); ``U``: the uniforms of
        the rounds, when the caller has drawn them already."""
        if U is None:
            U = _philox_uniforms(state["seed_"], state["t_"], order.shape[0])
        k_nn = int(self.n_neighbors)
        work = np.zeros(2 * state["alpha_"].shape[0] + 2 * k_nn)
        head: tuple[Any, ...]
        if "buffer_" in state:
            head = (X, s, order, U, state["buffer_"])
        else:
            head = (X.data, X.indices, X.indptr, s, order, U, state["buffer_ind_"],
                    state["buffer_val_"], state["buffer_nnz_"])
        return head + (state["alpha_"], state["gram_"],
                       state["buffer_scores_"], state["n_buffer_"], state["n_class_seen_"],
                       state["fifo_head_"], np.array(lay["budgets"], dtype=np.int64),
                       state["t_"], float(self.eta), float(self.C), k_nn, lay["policy"],
                       layout_kernel_spec(lay), work)

    def _run_pass(self, state, X, s, order):
        lay = self._layout_
        message = (f"KOIL: the {KERNEL_NAMES[lay['kernel']]} kernel overflowed on this batch "
                   "(kernel values or scores are not finite); scale the features. The model "
                   "was left unchanged.")
        run: Any = _koil.koil_pass
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

    # -- one row at a time: the pass in place on the live buffers -----------------------
    def _new_stepper(self):
        """The typed one-row path (``_koil.Stepper``) bound to the current buffers."""
        d = self.__dict__
        lay = d["_layout_"]
        st = _koil.Stepper(d["buffer_"], d["alpha_"], d["gram_"], d["buffer_scores_"],
                           d["n_buffer_"], d["n_class_seen_"], d["fifo_head_"],
                           np.array(lay["budgets"], dtype=np.int64), float(self.eta),
                           float(self.C), int(self.n_neighbors), lay["policy"],
                           layout_kernel_spec(lay), d["calibration_"])
        return st

    def _learn_one_in_place(self, x, s):
        """Round t of KOIL on one row: the typed ``_koil.Stepper`` on a dense row once the
        filled slots are adjacent, else :meth:`_learn_one_live` (dense) or the pass on
        copies (sparse slots); each equals ``partial_fit`` on the row bit for bit."""
        d = self.__dict__
        lay = d["_layout_"]
        if lay.get("storage") == "csr":
            # sparse slots: in place for a canonical row that fits the slot width (a wider
            # one widens the slots: the pass on copies)
            if (_canonical_row(x, d["n_features_in_"])
                    and x.nnz <= d["buffer_ind_"].shape[1] and self._learn_one_live(x, s)):
                return True
            return self._learn_one_by_copy(x, s)
        if (type(x) is np.ndarray and x.dtype == np.float64 and x.ndim == 1
                and x.flags.c_contiguous):
            t = d["t_"] + 1
            b = self._stepper().step(x, s, t, d["seed_"], d["intercept_"])
            if b == b:                                  # NaN: the state as it was
                d["t_"] = t
                d["n_seen_"] += 1
                d["intercept_"] = b
                return True
        return self._learn_one_live(x, s)

    def score_one(self, x: ArrayLike) -> float:
        d = self.__dict__
        with _model_lock(d):
            # a dense float64 row on a fitted model with checked hyper-parameters: the
            # stepper's pre-score, which is decision_function's on the row, to the bit; a
            # row it declines (or an overflow) goes to the general path, which says why
            if d.get("_params_ok") and "_layout_" in d:
                if d["_layout_"].get("storage") != "csr":
                    if (type(x) is np.ndarray and x.dtype == np.float64 and x.ndim == 1
                            and x.flags.c_contiguous):
                        f = self._stepper().score(x, d["intercept_"])
                        if math.isfinite(f):
                            return f
                elif _canonical_row(x, d["n_features_in_"]):    # sparse slots, in place
                    f = float(self._decision_csr(x)[0])
                    if math.isfinite(f):
                        return f
            return super().score_one(x)

    score_one.__doc__ = BaseOnlineAUC.score_one.__doc__

    def _learn_one_live(self, x, s):
        """Round t of KOIL on one row (dense, or a canonical CSR row that fits the sparse
        slots), on the model's own buffers.

        The round writes the weights, the cached scores and the counters (O(B), copied
        first) and, in the Gram matrix and the buffer, at most the slot the row can go to:
        its class's next free slot, else its FIFO++ head or the slot RS++ draws from the
        round's uniforms (drawn once, here, and handed to the pass); that slot's row is
        saved (the Gram cache is kept symmetric: its column is that row). A kernel
        overflow the pass reports, or anything non-finite after it, restores all of it and
        returns False: the general path then reports the problem on the unchanged model.
        The pre-score for the Platt scaling, the pass, the intercept and the Platt step
        are those of the general path, so the result equals ``partial_fit`` on the row bit
        for bit (tested: tests/test_koil.py::test_learn_one_in_place_equals_partial_fit).
        """
        d = self.__dict__
        lay = d["_layout_"]
        p = d["n_features_in_"]
        sparse = lay.get("storage") == "csr"
        if sparse:                      # the caller checked: canonical, finite, fits a slot
            X = x
            with np.errstate(over="ignore", invalid="ignore"):
                pre = self._decision_csr(X)
        else:
            if not (type(x) is np.ndarray and x.dtype == np.float64 and x.ndim == 1
                    and x.shape[0] == p and x.flags.c_contiguous and _finite_array(x)):
                return False
            X = x.reshape(1, p)
            pre = self._raw_scores(X)
        budgets = lay["budgets"]
        c = 1 if s > 0 else 0
        alpha, f, gram = d["alpha_"], d["buffer_scores_"], d["gram_"]
        n_buf, n_seen, head = d["n_buffer_"], d["n_class_seen_"], d["fifo_head_"]
        U = _philox_uniforms(d["seed_"], d["t_"], 1)
        j = (0 if c == 0 else budgets[0]) + (
            int(n_buf[c]) if n_buf[c] < budgets[c]
            else int(U[0, 1] * budgets[c]) if lay["policy"] == _POLICY_CODES["rs++"]
            else int(head[c]))
        # the slot's row: dense, or its sparse entries and count
        slot = ((d["buffer_ind_"], d["buffer_val_"], d["buffer_nnz_"]) if sparse
                else (d["buffer_"],))
        saved = (alpha.copy(), f.copy(), gram[j].copy(), n_buf.copy(), n_seen.copy(),
                 head.copy(), d["t_"], d["intercept_"], tuple(a[j].copy() for a in slot))
        sign = np.array([s])
        ok = False
        try:
            run = _koil.koil_pass_csr if sparse else _koil.koil_pass
            t = run(*self._pass_args(d, X, sign, _ONE_ROW, lay, U))
            ok = _finite_array(alpha) and _finite_array(f) and _finite_array(gram[j])
        except FloatingPointError:
            pass
        finally:
            if not ok:
                alpha[:], f[:], gram[j], n_buf[:], n_seen[:], head[:] = saved[:6]
                gram[:, j] = saved[2]
                d["t_"], d["intercept_"] = saved[6], saved[7]
                for a, row in zip(slot, saved[8]):
                    a[j] = row
        if not ok:
            return False
        d["t_"] = t
        d["intercept_"] = self._midpoint(d, lay)
        d["n_seen_"] += 1
        if math.isfinite(pre[0]):
            platt_steps(pre, sign, d["calibration_"])
        return True

    @staticmethod
    def _midpoint(state, lay):
        """-(mean f on B- + mean f on B+)/2 from the cached scores (0 until both are filled)."""
        return _koil.koil_midpoint(state["buffer_scores_"], state["n_buffer_"],
                                   lay["budgets"][0])

    def _filled(self):
        n = self.n_buffer_
        off = self._layout_["budgets"][0]
        return np.concatenate([np.arange(n[0]), np.arange(off, off + n[1])])

    def _filled_rows(self):
        """The filled slots as a slice when they are adjacent (the negative buffer full or
        the positive one empty: a view, no copy), else as an index array."""
        n = self.n_buffer_
        off = self._layout_["budgets"][0]
        if n[0] == off or n[1] == 0:
            return slice(0, int(n[0] + n[1]) if n[0] == off else int(n[0]))
        return self._filled()

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
        if self._layout_.get("storage") == "csr":
            return self._decision_csr(_canonical_csr(X))
        rows = self._filled_rows()              # the filled slots in order, as a view if it can
        sv, coef = self.buffer_[rows], self.alpha_[rows]
        out = np.full(X.shape[0], self.intercept_)
        if sv.shape[0] == 0:
            return out
        return out + layout_expansion(X, sv, coef, self._layout_)

    def _decision_csr(self, X):
        """The decision values of canonical CSR rows X against the sparse slots, read in
        place (not as a copy of the support vectors)."""
        out = np.full(X.shape[0], self.intercept_)
        slots = self._filled()
        if slots.shape[0] == 0:
            return out
        return out + _slots_expansion(X, self.buffer_ind_, self.buffer_val_,
                                      self.buffer_nnz_, slots, self.alpha_[slots],
                                      self._layout_)
