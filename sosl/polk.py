"""POLK: parsimonious online learning with kernels (Koppel et al.), as a sosl classifier."""
from __future__ import annotations

from numbers import Integral, Real
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, StrOptions

from ._base import BaseOnlineAUC
from ._capabilities import Capabilities, Domain
from ._core import _polk_driver
from ._core._codes import PolkBudget, PolkLoss, PolkSchedule
from ._core._komp_prune import single_thread_blas
from ._core._kparams import layout_kernel_spec, step_spec
from ._core._polk import STATUS_DONE, STATUS_REBUILD, PolkStepper
from ._core._polk_driver import memory_need, polk_run, polk_spec
from ._input import _canonical_csr
from ._typing import Auto, KernelName, RandomState
from .exceptions import GrowthWarning
from .kernels import KERNEL_CONSTRAINTS, _SparseStorage, layout_expansion

__all__ = ["POLK"]

#: POLK warns once when its dictionary holds at least this many atoms and over half the rows
_GROWTH_ATOMS = 500

_LOSSES = {"hinge": int(PolkLoss.LOSS_HINGE), "logistic": int(PolkLoss.LOSS_LOGISTIC),
           "square": int(PolkLoss.LOSS_SQUARE)}
_SCHEDULES = {"constant": int(PolkSchedule.POLK_STEP_CONSTANT),
              "diminishing": int(PolkSchedule.POLK_STEP_DIMINISHING)}


class POLK(_SparseStorage, BaseOnlineAUC):
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
    gamma : float or "scale", default=1.0
        Gaussian exp(-gamma ||x - x'||^2), gamma = 1/sigma^2 (the POLK paper writes
        exp(-||x - x'||^2 / (2 c^2)), i.e. gamma = 1/(2 c^2)); poly: inner-product scale.
        ``"scale"``: 1 / (n_features * X.var()) over the first batch of a fit (as
        ``sklearn.svm.SVC``), computed once and frozen with the fitted layout.
    degree : int, default=3
        Degree of the polynomial kernel.
    coef0 : float, default=1.0
        Constant of the polynomial kernel.
    shuffle : bool, default=False
        Visit the rows of each batch in a random order.
    random_state : int, RandomState or None, default=None
        Seed of the shuffling.
    max_memory : int or "auto", default="auto"
        Largest state, in bytes, the learner may grow to (checked before each growth,
        counting the transactional copy). "auto" is half the memory available at the time.
        Past it ``MemoryError`` names the size.

    Attributes
    ----------
    support_vectors_ : ndarray or scipy.sparse.csr_matrix of shape (M, n_features)
        The dictionary D_t (its size M is the current model order); a CSR matrix for a
        model fitted on sparse input.
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
    (:mod:`sosl._core._polk`, driven by :mod:`sosl._core._polk_driver`) keeps the inverse
    Gram matrix of the dictionary from round to round (bordered with the new instance,
    downdated at each removal) instead of factorizing the (M+1) x (M+1) Gram matrix every
    round as the NumPy reference :mod:`sosl._core._polk_ref` does (O(M^3)); both give the
    same dictionaries and weights to rounding
    (tests/_core/test_polk.py::test_fast_pass_equals_reference). Rounds where an atom is
    numerically in the span of the others (e.g. a repeated instance) are played by the
    rank-revealing typed KOMP on the recomputed Gram matrix, which then costs O(M^3), as
    do the occasional rebuilds of the inverse from a fresh factorization (when its drift
    is detected); with an ill-conditioned dictionary these can dominate.
    The decision function has no offset: ``predict`` is sign(f), as in the paper.

    One row at a time: ``learn_one`` on a dense row of a model fitted on dense input plays
    the typed round (:class:`sosl._core._polk.PolkStepper`) on buffers the model keeps
    between calls, with room to grow (doubled when full), so a row costs O(M p + M^2) and
    copies nothing of the state; the fitted attributes are then views of those buffers,
    updated in place by the next row (copy them to keep a snapshot). The round writes
    outside the state until its result is known to be finite, so a declined or refused row
    leaves the model as it was; the result equals ``partial_fit`` on the row bit for bit.

    Sparse input: when the first call of a fit (``fit``, or the first ``partial_fit`` /
    ``learn_one``) receives a ``scipy.sparse`` matrix, the dictionary is sparse for the
    rest of the fit: ``support_vectors_`` is a CSR matrix and the typed pass
    (:func:`sosl._core._polk.polk_fast_pass_csr`) keeps the atoms in sparse slots as wide
    as the longest row seen, computing every kernel value by merging sorted index lists,
    so a round costs O(M (nnz(x_t) + L) + M^2) and the model holds nothing of length
    n_features. Later dense input to such a model is converted to CSR; a model fitted
    dense densifies later sparse input a block of rows at a time. Both give the model
    fitted on the same rows in the other format, to rounding (tested at rtol 1e-12:
    tests/test_polk.py::test_sparse_fit_equals_dense_fit_in_chunks_and_pickled).
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

    capabilities = Capabilities(
        domains=(Domain("model_orders_", "nonneg"), Domain("projection_errors_", "nonneg"),
                 Domain("projection_budgets_", "nonneg")),
        # CSR rows once the storage is sparse; learn_one on sparse rows: the pass on copies
        sparse_input="storage", one_row_by_copy=True)

    _state_names = ("support_vectors_", "dual_coef_", "gram_", "model_orders_",
                    "projection_errors_", "projection_budgets_", "_gram_inv")
    _gram_inv = None        # inverse of gram_ kept by the typed pass (None: rebuilt when needed)

    def __init__(self, loss: Literal["hinge", "logistic", "square"] = "hinge",
                 lam: float = 1e-3, eta: float = 0.1,
                 schedule: Literal["constant", "diminishing"] = "constant",
                 epsilon: float | None = None, parsimony: float = 1.0,
                 kernel: KernelName = "gaussian", gamma: float | Literal["scale"] = 1.0,
                 degree: int = 3, coef0: float = 1.0, shuffle: bool = False,
                 random_state: RandomState = None, max_memory: int | Auto = "auto") -> None:
        self.max_memory = max_memory
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

    _parameter_constraints = {
        "loss": [StrOptions(set(_LOSSES))],
        "lam": [Interval(Real, 0, None, closed="neither")],
        "eta": [Interval(Real, 0, None, closed="neither")],
        "schedule": [StrOptions(set(_SCHEDULES))],
        "epsilon": [Interval(Real, 0, None, closed="left"), None],
        "parsimony": [Interval(Real, 0, None, closed="neither")],
        **KERNEL_CONSTRAINTS,
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
        "max_memory": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
    }

    def _check_params(self):
        if self.eta * self.lam >= 1.0:
            raise ValueError(f"POLK: eta must be < 1/lam (eta * lam = {self.eta * self.lam!r} "
                             ">= 1)")

    def _layout(self):
        """Kernel and its parameters (they define the cached Gram matrix and its inverse) and
        the step schedule."""
        return self._kernel_layout(schedule=_SCHEDULES[self.schedule])

    def _init_state(self, n_features):
        csr = self._layout()["storage"] == "csr"
        return {
            "support_vectors_": (sp.csr_matrix((0, n_features)) if csr
                                 else np.zeros((0, n_features))),
            "dual_coef_": np.zeros(0),
            "gram_": np.zeros((0, 0)),
            "model_orders_": np.zeros(0, dtype=np.int64),
            "projection_errors_": np.zeros(0),
            "projection_budgets_": np.zeros(0),
            "_gram_inv": np.zeros((0, 0)),
        }

    def _run_pass(self, state, X, s, order):
        if self._layout_.get("storage") == "csr":
            X = _canonical_csr(X)
        D, w, Kdd, G, t, orders, errors, budgets = polk_run(
            X, s, order, state["support_vectors_"], state["dual_coef_"], state["gram_"],
            state["_gram_inv"], state["t_"], *self._specs(),  # type: ignore[misc]  # 3 specs
            max_bytes=self._memory_limit()[0])
        state["support_vectors_"] = D
        state["dual_coef_"] = w
        state["gram_"] = Kdd
        state["_gram_inv"] = G
        state["t_"] = t
        state["model_orders_"] = np.concatenate([state["model_orders_"], orders])
        M = D.shape[0]
        if M >= _GROWTH_ATOMS and M > 0.5 * t:
            self._growth_warning(M, t)
        state["projection_errors_"] = np.concatenate([state["projection_errors_"], errors])
        state["projection_budgets_"] = np.concatenate([state["projection_budgets_"], budgets])

    # -- one row at a time: the typed round on buffers kept from call to call ---------------
    def _specs(self):
        """The (step, KOMP, kernel) bundles of the typed pass for the frozen layout."""
        lay = self._layout_
        eps_rule = PolkBudget.POLK_EPS_PAPER if self.epsilon is None else PolkBudget.POLK_EPS_FIXED
        epsilon = 0.0 if self.epsilon is None else float(self.epsilon)
        return (step_spec(self.eta, self.lam, lay["schedule"], _LOSSES[self.loss]),
                polk_spec(eps_rule, epsilon, self.parsimony), layout_kernel_spec(lay))

    def _new_stepper(self, atoms=0, rounds=0):
        """Buffers for at least ``atoms`` atoms and ``rounds`` history entries (by default
        the current ones plus room to grow, doubling), filled with the model's state; the
        stepper on them, published, or None when the state has no usable inverse Gram
        matrix or the buffers would exceed the memory limit (the general path then runs
        and reports it)."""
        d = self.__dict__
        G = d["_gram_inv"]
        D = d["support_vectors_"]
        if G is None or not isinstance(D, np.ndarray):
            return None
        M, p = D.shape
        n = d["model_orders_"].shape[0]
        cap = max(atoms, 2 * M, M + 32)
        max_bytes = self._memory_limit()[0]
        if max_bytes is not None and memory_need(cap, 8 * p) > max_bytes:
            cap = max(atoms, M + 1)
            if memory_need(cap, 8 * p) > max_bytes:
                return None
        hcap = max(rounds, 2 * n, n + 4096)
        Db = np.zeros((cap, p))
        wb = np.zeros(cap)
        Kb, Gb = np.zeros((cap, cap)), np.zeros((cap, cap))
        Db[:M], wb[:M], Kb[:M, :M], Gb[:M, :M] = D, d["dual_coef_"], d["gram_"], G
        hist = []
        for name, dtype in (("model_orders_", np.int64), ("projection_errors_", np.float64),
                            ("projection_budgets_", np.float64)):
            h = np.zeros(hcap, dtype=dtype)
            h[:n] = d[name]
            hist.append(h)
        st = PolkStepper(Db, wb, Kb, Gb, np.zeros((cap, cap)), *hist, np.empty(7 * cap),
                         np.empty(cap, dtype=np.intp), M, n, *self._specs())
        st.publish(d)
        d["_stepper_"] = st
        return st

    def _learn_one_in_place(self, x, s):
        """Round t on one finite dense row: the typed round of the pass
        (:class:`sosl._core._polk.PolkStepper`) on buffers the model keeps, with capacity
        to grow (doubling), so a round costs O(M p + M^2) and allocates nothing. The round
        writes outside the state until its result is known to be finite, then commits;
        every round it declines (an atom numerically in the span of the others, a
        non-finite result, full buffers past the memory limit) leaves the state as it was
        and goes to the general path. Same rounds, bits and Platt step as ``partial_fit``
        on the row (tested: tests/test_polk_one_row.py::test_learn_one_typed_equals_partial_fit).
        Sparse rows and models fitted on sparse input take the pass on copies."""
        d = self.__dict__
        st: Any = d.get("_stepper_")
        status = -3 if st is None or type(x) is not np.ndarray else st.learn(d, x, s)
        if status == -3 or status == -2:           # no buffers yet, or full ones: (re)build
            if type(x) is not np.ndarray or d["_layout_"].get("storage") == "csr":
                return self._learn_one_by_copy(x, s)
            st = self._new_stepper(*(() if status == -3 else (2 * st.M, 2 * st.n)))
            if st is None:
                return self._learn_one_by_copy(x, s) if status == -3 else False
            status = st.learn(d, x, s)
        if status != STATUS_DONE and status != STATUS_REBUILD:
            return False
        M, t = st.M, d["t_"]
        if status == STATUS_REBUILD:               # as the driver: a fresh inverse, or none
            with single_thread_blas():            # as in the driver: the same bits
                G = _polk_driver.inverse_if_well_posed(st.K[:M, :M].copy())
            if G is None:
                d["_gram_inv"] = None
                self._forget_stepper()
            else:
                st.G[:M, :M] = G
        if M >= _GROWTH_ATOMS and M > 0.5 * t:
            self._growth_warning(M, t)
        return True

    def _growth_warning(self, M, t):
        self._warn_once("growth", GrowthWarning,
                        f"the dictionary keeps {M} atoms after {t} rounds: the model, "
                        "its memory and its cost per row grow with the stream. Raise "
                        "epsilon (or parsimony) to keep fewer atoms.")

    def _decision(self, X):
        if self.support_vectors_.shape[0] == 0:
            return np.zeros(X.shape[0])
        return layout_expansion(X, self.support_vectors_, self.dual_coef_, self._layout_)
