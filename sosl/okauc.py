"""Kernel online AUC learners with second-order surrogate losses: OKAUC-M, OKAUC-S.

Section 5 of Luo, Cheng & Zhang (Algorithms 2-4, eqs. 20-28). The classifier is a kernel
expansion over a positive and a negative buffer of support vectors; the loss of x_t
compares f_t(x_t) with the mean and variance of f_t over the buffer of the other class.
The typed pass is :func:`sosl._core._okauc.kernel_pass`, its NumPy reference
:func:`sosl._core._okauc_ref.kernel_pass`; ``OKAUCM(budget_policy="komp")`` runs
:func:`sosl._core._kbudget.komp_policy_pass` (reference :mod:`sosl._core._kbudget_ref`).
The two budget policies keep different state; the estimator picks the adapter
(``_FifoBuffers`` or ``_KompBuffers``) named by the frozen layout, so a policy switch on a
fitted model is refused rather than read into the other policy's arrays.

A model whose first ``fit``/``partial_fit`` call receives a sparse matrix stores its
support vectors sparsely (``_SparseFifoBuffers``, ``_SparseKompBuffers``) and runs
:func:`sosl._core._okauc.kernel_pass_csr` or :func:`sosl._core._kbudget.komp_policy_pass_csr`
on the CSR rows; see the class docstrings.
"""
from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Literal

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from sklearn.utils._param_validation import Interval, StrOptions

from ._base import BaseOnlineAUC, _model_lock
from ._capabilities import Capabilities, Domain
from ._core import _okauc
from ._core._calibration import platt_steps
from ._core._codes import Loss, Schedule
from ._core._kparams import KERNEL_NAMES, budget_pair, layout_kernel_spec, step_spec
from ._input import _canonical_csr, _canonical_row, _finite_array
from ._okauc_buffers import (
    _ONE_ROW,
    _PUBLIC,
    KOMP_EPSILON,
    KOMP_PERIOD,  # noqa: F401 (documented as sosl.okauc.KOMP_PERIOD)
    TRANSFER_CODES,
    _adapter,
    _fifo_dense,
    _fifo_sparse,
    _FifoBuffers,
    _KompBuffers,
    _SparseFifoBuffers,
    _SparseKompBuffers,
)
from ._typing import Auto, Budget, KernelName, RandomState
from .exceptions import GrowthWarning
from .kernels import (
    KERNEL_CONSTRAINTS,
    _slots_expansion,
    _SparseStorage,
    layout_expansion,
)

__all__ = ["OKAUCM", "OKAUCS"]

#: unbounded buffers (budget=None) warn once past this many instances
_GROWTH_INSTANCES = 10_000


class _KernelSOSL(_SparseStorage, BaseOnlineAUC):
    """Shared state and pass of the kernel second-order learners (Algorithm 2).

    The storage of the support vectors follows the first call of a fit
    (:class:`sosl.kernels._SparseStorage`): sparse slots (or a pool of sparse slots, for
    the KOMP policy) on sparse input, dense slots otherwise.
    """

    capabilities = Capabilities(
        domains=(Domain("counts_", "nonneg"), Domain("capacity_", "nonneg"),
                 Domain("heads_", "nonneg"), Domain("n_support_", "nonneg")),
        sparse_input="storage")                 # CSR rows once the slots are sparse

    _storage_names = tuple(dict.fromkeys(_FifoBuffers.names + _SparseFifoBuffers.names
                                         + _KompBuffers.names + _SparseKompBuffers.names))

    _loss = int(Loss.LOSS_M)
    budget_policy = "fifo"

    _parameter_constraints = {
        "lam": [Interval(Real, 0, None, closed="left")],
        "eta": [Interval(Real, 0, None, closed="neither"), None],
        **KERNEL_CONSTRAINTS,
        "budget": [Interval(Integral, 1, None, closed="left"), tuple, list, None],
        "transfer": [StrOptions(set(TRANSFER_CODES))],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
        "max_memory": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
    }

    @property
    def support_vectors_(self):
        """The support vectors (negative buffer first; CSR for sparse slots). With sparse
        FIFO slots the state holds None in their place after a round, and the CSR matrix
        is built from the slots on the first read (then kept until the next round)."""
        d = self.__dict__
        if "support_vectors_" not in d:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute "
                                 "'support_vectors_'")
        sv = d["support_vectors_"]
        if sv is None:
            sv = d["support_vectors_"] = _SparseFifoBuffers.csr_of(d, d["n_features_in_"])
        return sv

    @support_vectors_.setter
    def support_vectors_(self, value):
        self.__dict__["support_vectors_"] = value

    @property
    def _state_names(self):  # type: ignore[override]  # the names follow the layout
        lay = getattr(self, "_layout_", None) or self._layout()
        return _adapter(lay).names + _PUBLIC + (
            ("model_order_",) if lay["budget_policy"] == "komp" else ())

    # -- parameters --------------------------------------------------------------------------
    def _check_params(self):
        if self.eta is None and self.lam == 0:
            raise ValueError(f"{type(self).__name__}: lam must be > 0 when eta=None (the step "
                             "is 1/(lam t))")
        budget_pair(self.budget, allow_none=True)

    def _layout(self):
        """Budgets (N-, N+) in slot order, kernel and its parameters (they define the cached
        Gram matrix), budget policy, step schedule and the storage of the support vectors
        ("csr" when the first call of the fit was sparse)."""
        return self._kernel_layout(
            budgets=budget_pair(self.budget, allow_none=True), budget_policy=self.budget_policy,
            schedule=int(Schedule.STEP_INV_LAM_T if self.eta is None else Schedule.STEP_CONSTANT))

    # -- state -------------------------------------------------------------------------------
    def _init_state(self, n_features):
        lay = self._layout()
        state = _adapter(lay).init_state(n_features, lay["budgets"])
        sv = sp.csr_matrix((0, n_features)) if lay["storage"] == "csr" else np.zeros(
            (0, n_features))
        state.update(support_vectors_=sv, dual_coef_=np.zeros(0),
                     n_support_=np.zeros(2, dtype=np.int64), intercept_=0.0)
        if lay["budget_policy"] == "komp":
            state["model_order_"] = 0
        return state

    def _play(self, policy, state, X, s, order):
        """The rounds of ``order`` by the state adapter ``policy``, in place on ``state``."""
        lay = self._layout_
        eta = 0.0 if self.eta is None else float(self.eta)
        epsilon = KOMP_EPSILON if getattr(self, "epsilon", None) is None else float(self.epsilon)
        policy.run(state, X, s, order, lay, step_spec(eta, self.lam, lay["schedule"], self._loss),
                   TRANSFER_CODES[self.transfer], epsilon)

    def _run_pass(self, state, X, s, order):
        lay = self._layout_
        policy = _adapter(lay)
        if lay["budgets"] is None:
            self._check_unbounded_growth(state, X, s)
        self._play(policy, state, X, s, order)
        if not all(_finite_array(state[name]) for name in policy.kernel_arrays):
            raise FloatingPointError(
                f"{type(self).__name__}: the {KERNEL_NAMES[lay['kernel']]} kernel overflowed on "
                "this batch (kernel values or scores on the buffers are not finite); scale the "
                "features. The model was left unchanged.")
        policy.public(state)

    def _check_unbounded_growth(self, state, X, s):
        """``budget=None`` keeps every instance: refuse, before the buffers grow, a state
        (Gram matrix, support vectors and their transactional copy) past ``max_memory``."""
        need = state["counts_"] + np.array([np.sum(s < 0), np.sum(s > 0)], dtype=np.int64)
        caps = state["capacity_"]
        if not np.any(need > caps):
            return
        M = int(sum(max(int(n), 2 * int(c)) if n > c else int(c) for n, c in zip(need, caps)))
        if int(need.sum()) > _GROWTH_INSTANCES:
            self._warn_once("growth", GrowthWarning,
                            f"budget=None keeps all {int(need.sum())} instances: the Gram "
                            "matrix, the memory and the cost per row grow with the stream. "
                            "Set a budget (e.g. budget=100) for a stream.")
        row = (12 * int(np.diff(X.indptr).max(initial=1)) if sp.issparse(X)
               else 8 * X.shape[1])
        self._check_memory(
            2 * (8 * M * M + M * (row + 24)),
            f"a {M} x {M} Gram matrix and {M} support vectors (budget=None keeps every "
            "instance)",
            "Set a budget (budget=100 keeps 100 + 100 support vectors), or raise max_memory "
            "(bytes).")

    # -- one row at a time: the pass in place on the live buffers -------------------------
    def _new_stepper(self):
        """The typed one-row path (``_okauc.Stepper``) bound to the current FIFO buffers."""
        d = self.__dict__
        lay = d["_layout_"]
        eta = 0.0 if self.eta is None else float(self.eta)
        st = _okauc.Stepper(d["sv_buf_"], d["alpha_buf_"], d["gram_buf_"], d["f_buf_"],
                            d["capacity_"], d["counts_"], d["heads_"],
                            step_spec(eta, self.lam, lay["schedule"], self._loss),
                            layout_kernel_spec(lay), TRANSFER_CODES[self.transfer],
                            d["calibration_"])
        return st

    def _learn_one_in_place(self, x, s):
        """Round t on one dense row with budgeted FIFO buffers: the typed
        ``_okauc.Stepper`` once the occupied slots are adjacent, else
        :meth:`_learn_one_live`; both equal ``partial_fit`` on the row bit for bit."""
        d = self.__dict__
        lay = d["_layout_"]
        if _fifo_sparse(lay):
            # sparse slots: in place for a canonical row that fits the slot width (a wider
            # one widens the slots: the general path)
            return (_canonical_row(x, d["n_features_in_"])
                    and x.nnz <= d["sv_ind_"].shape[1] and self._learn_one_live(x, s))
        if not (type(x) is np.ndarray and _fifo_dense(lay)
                and x.dtype == np.float64 and x.ndim == 1 and x.flags.c_contiguous):
            return False
        t = self._stepper().step(x, s, d["t_"], d["intercept_"])
        if t < 0:
            return self._learn_one_live(x, s)
        d["t_"] = t
        d["n_seen_"] += 1
        _FifoBuffers.public(d)
        return True

    def score_one(self, x: ArrayLike) -> float:
        d = self.__dict__
        with _model_lock(d):
            # a dense float64 row on a fitted model with checked hyper-parameters: the
            # stepper's pre-score, which is decision_function's on the row, to the bit; a
            # row it declines (or an overflow) goes to the general path, which says why
            if (d.get("_params_ok") and "_layout_" in d and type(x) is np.ndarray
                    and x.dtype == np.float64 and x.ndim == 1 and x.flags.c_contiguous
                    and _fifo_dense(d["_layout_"])):
                f = self._stepper().score(x, d["intercept_"])
                if math.isfinite(f):
                    return f
            elif (d.get("_params_ok") and "_layout_" in d and _fifo_sparse(d["_layout_"])
                    and _canonical_row(x, d["n_features_in_"])):
                with np.errstate(over="ignore", invalid="ignore"):
                    f = float(self._decision_csr(x)[0])
                if math.isfinite(f):
                    return f
            return super().score_one(x)

    score_one.__doc__ = BaseOnlineAUC.score_one.__doc__

    def _learn_one_live(self, x, s):
        """Round t of Algorithms 2 and 4 on one row (dense, or a canonical CSR row that fits
        the sparse slots), on the model's own buffers.

        With budgeted FIFO buffers the round writes the weights and the scores on the
        buffers (O(M), copied first) and, in the Gram matrix and the support vectors, only
        the slot the row goes to (its class's next free slot, or its oldest one), whose
        row is saved (the Gram matrix is kept symmetric, so its column is that row). If
        anything comes out non-finite all of it is restored and False returned: the
        general path then reports the problem on the unchanged model. The pre-score for
        the Platt scaling, the pass, the checks and the public attributes are those of
        the general path, so the result equals ``partial_fit`` on the row bit for bit.
        """
        d = self.__dict__
        lay = d["_layout_"]
        policy: type[_FifoBuffers]
        if _fifo_sparse(lay):           # the caller checked: canonical, finite, fits a slot
            X, policy = x, _SparseFifoBuffers
            names: tuple[str, ...] = ("sv_ind_", "sv_val_", "sv_nnz_")
        elif (type(x) is np.ndarray and _fifo_dense(lay) and x.dtype == np.float64
                and x.ndim == 1 and x.shape[0] == self.n_features_in_
                and x.flags.c_contiguous and _finite_array(x)):
            X, policy, names = x.reshape(1, -1), _FifoBuffers, ("sv_buf_",)
        else:
            return False
        with np.errstate(over="ignore", invalid="ignore"):
            # a sparse row was checked canonical by the caller: the slots read directly
            f = self._decision_csr(X) if policy is _SparseFifoBuffers else self._decision(X)
        if not _finite_array(f):
            return False
        cap, cnt, head = d["capacity_"], d["counts_"], d["heads_"]
        own = 1 if s > 0 else 0
        n_own = int(cnt[own])
        slot = (0 if own == 0 else int(cap[0])) + (n_own if n_own < cap[own] else int(head[own]))
        G, alpha, fb = d["gram_buf_"], d["alpha_buf_"], d["f_buf_"]
        rows = tuple(d[name] for name in names)     # the slot's row: dense, or its entries
        saved = (alpha.copy(), fb.copy(), G[slot].copy(), cnt.copy(), head.copy(), d["t_"],
                 tuple(a[slot].copy() for a in rows))
        ok = False
        try:
            self._play(policy, d, X, np.array([s]), _ONE_ROW)
            ok = _finite_array(fb) and _finite_array(alpha) and _finite_array(G[slot])
        finally:
            if not ok:
                alpha[:], fb[:], G[slot], cnt[:], head[:] = saved[:5]
                G[:, slot] = saved[2]
                d["t_"] = saved[5]
                for a, row in zip(rows, saved[6]):
                    a[slot] = row
        if not ok:
            return False
        d["n_seen_"] += 1
        policy.public(d)
        platt_steps(f, np.array([s]), d["calibration_"])
        return True

    def _decision(self, X):
        lay = self._layout_
        if _fifo_sparse(lay):           # the slots read in place (the same bits)
            return self._decision_csr(_canonical_csr(X))
        if self.support_vectors_.shape[0] == 0:
            return np.full(X.shape[0], self.intercept_)
        out = layout_expansion(X, self.support_vectors_, self.dual_coef_, lay)
        return out + self.intercept_

    def _decision_csr(self, X):
        """Decision values of canonical CSR rows X against the sparse FIFO slots, read in
        place: those of ``support_vectors_`` and ``dual_coef_`` (the same slots, copied)."""
        d = self.__dict__
        occ = _SparseFifoBuffers.occupied(d)
        if occ.shape[0] == 0:
            return np.full(X.shape[0], self.intercept_)
        out = _slots_expansion(X, d["sv_ind_"], d["sv_val_"], d["sv_nnz_"], occ,
                               d["alpha_buf_"][occ], self._layout_)
        return out + self.intercept_

    def hilbert_norm(self) -> float:
        """||f||_H of the current classifier, sqrt(alpha' K alpha) over the support vectors."""
        policy = _adapter(self._layout_)
        return float(np.sqrt(max(policy.hilbert_norm2(self), 0.0)))


_OKAUCM_HEAD = """OKAUC-M: online kernel AUC maximization, second-order hinge surrogate psi_M.

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
    {sparse}
    Rounds before any instance of the other class has arrived carry only the regularizer
    (psi is undefined without a comparison set); x_t still enters its buffer, with weight
    0. Where A_t = 0 (b_t = 0 and sigma_t = 0) the one-sided derivative is used:
    Psi_t / sqrt(A_t) -> 1/2 and the sigma term vanishes. ``budget=None`` is the exact
    algorithm analysed by Lemma 7 and Theorem 8 (see ``verify/lemma7_theorem8_kernel.py``).

    ``budget_policy="komp"`` (beyond the paper) separates the two roles a buffer plays.
    The *comparison buffers* (budgets N+ and N-, FIFO) only define S_t, mu_t and
    sigma_t^2; the *expansion* of f is a dictionary of its own, compressed by
    destructive kernel orthogonal matching pursuit with pre-fitting
    (:func:`sosl.komp.komp_prune`, as in POLK) instead of eq. (28); the pass is
    :func:`sosl._core._kbudget.komp_policy_pass`, its NumPy reference
    :func:`sosl._core._kbudget_ref.komp_policy_pass`. A vector leaving its
    comparison buffer keeps its weight; KOMP drops dictionary elements and re-fits the
    remaining weights by least squares in H (the multi-vector version of eq. (28)) while
    the error ||f - f_new||_H stays within epsilon * (sum of eta_t since the last
    compression). KOMP runs every ``sosl.okauc.KOMP_PERIOD`` = 10 rounds. The model
    order (``model_order_``, the number of support vectors) is then set by epsilon, not by
    the budgets; the buffers stay at N+ + N- vectors (``counts_``). Its cost is that of
    the compressions, O(M^3) every ``KOMP_PERIOD`` rounds for M weighted pool vectors
    (the rounds themselves are a typed pass, O(M p + M |S_t|)): hundreds of updates/s at
    budgets 100 + 100, against tens of thousands for FIFO (``benchmarks/bench_kernel.py``,
    ``--komp-compare`` for AUC and model order). With budgets larger than the
    stream and epsilon = 0 it coincides with the FIFO pass
    (tests/test_okauc.py::test_komp_policy_without_overflow_equals_fifo_and_compresses).
    The fitted state is
    then ``pool_x_, pool_gram_, pool_beta_, pool_f_`` (vectors, Gram matrix, weights, f)
    with ``pool_buf_`` (comparison buffer of each vector: 0, 1, or -1 for none),
    ``pool_label_``, ``pool_age_`` and ``komp_budget_`` (error budget carried over). A
    model fitted on sparse input keeps its pool in sparse slots, ``pool_ind_``,
    ``pool_val_``, ``pool_nnz_`` in place of ``pool_x_`` (vector q: ``pool_nnz_[q]``
    entries at the increasing positions ``pool_ind_[q, :pool_nnz_[q]]``), and its rounds
    (:func:`sosl._core._kbudget.komp_policy_pass_csr`) take the kernel rows from merges
    of sorted index lists, O(M (nnz(x_t) + L) + M |S_t|); the compressions do not depend
    on the number of features.

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

_OKAUCS_HEAD = """OKAUC-S: online kernel AUC maximization, second-order square surrogate psi_S.

    Same buffers and comparison statistics as :class:`OKAUCM`, with the loss

        L_t(f) = lam/2 ||f||_H^2 + ((1 - m)^2 + sigma_t^2) / 2,   m = y_t (f(x_t) - mu_t),

    the average pairwise square loss of f against the buffer S_t (halved), and the
    weight update of eq. (27) (the exact functional gradient of this L_t).

    The linear :class:`~sosl.OAUCS` minimizes the unhalved loss lam/2 ||w||^2 + psi_S, so
    with ``kernel="linear"`` and ``budget=None``, ``OKAUCS(lam / 2, eta=2 * eta)`` takes
    exactly the steps of ``OAUCS(lam, eta)``
    (tests/test_okauc.py::test_linear_kernel_without_budget_is_the_linear_learner).
    (:class:`OKAUCM` and
    :class:`~sosl.OAUCM` share one convention: same ``lam`` and ``eta``, same steps.)

    Parameters
    ----------
    lam : float, default=1e-2
        Tikhonov weight lambda (>= 0; > 0 when ``eta=None``).
    eta : float or None, default=1e-2
        Constant step; None gives 1/(lam t).
"""
_OKAUCS_TAIL = """    Notes
    -----
    {sparse}
    References
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
    gamma : float or "scale", default=1.0
        Gaussian: k(x, x') = exp(-gamma ||x - x'||^2), i.e. ``gamma = 1 / sigma^2`` for the
        paper's exp(-||x - x'||^2 / sigma^2) (``sosl.kernels.gamma_from_sigma``); poly: the
        scale of the inner product.
        ``"scale"``: 1 / (n_features * X.var()) over the first batch of a fit (as
        ``sklearn.svm.SVC``), computed once and frozen with the fitted layout.
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
    max_memory : int or "auto", default="auto"
        Largest state, in bytes, the learner may grow to (checked before each growth,
        counting the transactional copy). "auto" is half the memory available at the time.
        Past it ``MemoryError`` names the size.

    Attributes
    ----------
    support_vectors_ : ndarray or scipy.sparse.csr_matrix of shape (n_SV, n_features)
        The vectors of the negative buffer, then those of the positive buffer (slot order);
        a CSR matrix when the model stores its support vectors sparsely (see Notes).
    dual_coef_ : ndarray of shape (n_SV,)
        Their weights alpha_i in f(x) = sum_i alpha_i k(x_i, x) (eq. 20).
    n_support_ : ndarray of shape (2,)
        Sizes of the negative and the positive buffer.
    intercept_ : float
        -(mean of f on the negative buffer + mean of f on the positive buffer) / 2, from
        the scores kept on the buffers (``budget_policy="komp"``: on the comparison
        buffers), so that ``predict`` cuts at the midpoint of the two class means (AUC
        ignores it); 0 until both buffers are non-empty.
    t_, n_seen_ : int
        Rounds played since the start of ``fit`` (or the first ``partial_fit``).
    classes_ : ndarray of shape (2,)
        The labels; ``classes_[1]`` is the positive class.
    n_features_in_ : int
        Number of features.
    sv_buf_, alpha_buf_, gram_buf_, f_buf_, capacity_, counts_, heads_ : ndarrays
        The internal state: buffer slots, their weights, their cached Gram matrix, f on
        them (kept up to date), capacities, fill counts and FIFO heads (row/entry 0 is the
        negative buffer). ``counts_`` is the number of occupied slots of each buffer
        (at most ``capacity_``), not the number of instances of each class seen, which
        ``counts_`` is in the linear learners. See :mod:`sosl._core._okauc_ref`. A model
        storing its support vectors sparsely has ``sv_ind_, sv_val_, sv_nnz_`` in place of
        ``sv_buf_`` (see Notes).
"""

_SPARSE_NOTE = """    Sparse input. When the first call of a fit (``fit``, or the first
    ``partial_fit`` / ``learn_one``) receives a ``scipy.sparse`` matrix, the model stores
    its support vectors sparsely for the rest of the fit (``budget_policy="komp"``: its
    pool, see below):
    slot q keeps its ``sv_nnz_[q]`` stored entries at the increasing feature positions
    ``sv_ind_[q, :sv_nnz_[q]]`` (int32) with values ``sv_val_[q, :sv_nnz_[q]]``; the slot
    width L = ``sv_ind_.shape[1]`` is widened before a pass to the largest nnz among the
    rows it visits. The pass (:func:`sosl._core._okauc.kernel_pass_csr`) and
    ``decision_function`` compute every kernel value from a merge of two sorted index
    lists, so a round costs O(M (nnz(x_t) + L) + M |S_t|) and the model holds
    O(M L + M^2) numbers, whatever the number of features; ``support_vectors_`` is then a
    ``scipy.sparse.csr_matrix``. Later dense input to such a model is converted to CSR
    (``partial_fit``, ``decision_function``, the one-row calls), with the same results as
    the same rows given sparse. A model fitted on dense input keeps dense support vectors
    and densifies later sparse input a block of rows at a time. Either way the fitted
    model equals, to rounding, the one fitted on the same rows in the other format
    (tested at rtol 1e-12: tests/test_okauc.py::test_sparse_fitted_model_equals_dense_fitted).
"""


class OKAUCM(_KernelSOSL):
    # docstring: _OKAUCM_DOC (assembled below, shares the parameter list with OKAUCS)

    _loss = int(Loss.LOSS_M)

    def __init__(self, lam: float = 1e-2, eta: float | None = None,
                 kernel: KernelName = "gaussian", gamma: float | Literal["scale"] = 1.0,
                 degree: int = 3, coef0: float = 1.0, budget: Budget | None = 100,
                 transfer: Literal["optimal", "min_abs"] = "optimal",
                 budget_policy: Literal["fifo", "komp"] = "fifo", epsilon: float | None = None,
                 shuffle: bool = False, random_state: RandomState = None,
                 max_memory: int | Auto = "auto") -> None:
        self.max_memory = max_memory
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

    _parameter_constraints = {
        **_KernelSOSL._parameter_constraints,
        "budget_policy": [StrOptions({"fifo", "komp"})],
        "epsilon": [Interval(Real, 0, None, closed="left"), None],
    }

    def _check_params(self):
        super()._check_params()
        if self.budget_policy == "komp" and self.budget is None:
            raise ValueError("OKAUCM: budget_policy='komp' needs finite comparison buffers "
                             "(budget is None)")


class OKAUCS(_KernelSOSL):
    # docstring: assembled below from _OKAUCS_HEAD, _SHARED_DOC, _OKAUCS_TAIL

    _loss = int(Loss.LOSS_S)

    def __init__(self, lam: float = 1e-2, eta: float | None = 1e-2,
                 kernel: KernelName = "gaussian", gamma: float | Literal["scale"] = 1.0,
                 degree: int = 3, coef0: float = 1.0, budget: Budget | None = 100,
                 transfer: Literal["optimal", "min_abs"] = "optimal", shuffle: bool = False,
                 random_state: RandomState = None, max_memory: int | Auto = "auto") -> None:
        self.max_memory = max_memory
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


OKAUCM.__doc__ = (_OKAUCM_HEAD + _SHARED_DOC + "\n"
                  + _OKAUCM_TAIL.replace("    {sparse}\n", _SPARSE_NOTE + "\n"))
OKAUCS.__doc__ = (_OKAUCS_HEAD + _SHARED_DOC + "\n"
                  + _OKAUCS_TAIL.replace("    {sparse}\n", _SPARSE_NOTE + "\n"))
