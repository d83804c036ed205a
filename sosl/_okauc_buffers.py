"""The state adapters of the kernel learners of :mod:`sosl.okauc`: budgeted FIFO buffers
(Algorithm 2) and the KOMP-compressed pool (Algorithm 4), each with dense or sparse
slots. An adapter knows its state arrays, creates them, runs the typed pass on them and
derives the public attributes; the estimator picks one from its frozen layout
(:func:`_adapter`)."""

from __future__ import annotations

import numpy as np

from ._core import _kbudget, _okauc
from ._core._codes import Transfer
from ._core._kparams import layout_kernel_spec
from ._input import _canonical_csr
from .kernels import (
    _slots_to_csr,
    _widen_slots,
)

__all__: list[str] = []

#: weight-transfer rule name -> code of the pass (eq. 28)
TRANSFER_CODES = {"optimal": int(Transfer.TRANSFER_OPTIMAL),
                  "min_abs": int(Transfer.TRANSFER_MIN_ABS)}
#: with budget_policy="komp", KOMP runs after the rounds t = 0 mod KOMP_PERIOD
KOMP_PERIOD = 10
#: error budget epsilon of budget_policy="komp" when epsilon=None
KOMP_EPSILON = 0.01


#: the per-slot arrays of the FIFO state (row q of each belongs to slot q)
_SLOT_ARRAYS = ("sv_buf_", "sv_ind_", "sv_val_", "sv_nnz_", "alpha_buf_", "f_buf_")


def _grow(state, caps_new):
    """Copy the slot arrays into larger blocks (infinite-buffer mode); returns a new state."""
    c0, c1 = (int(c) for c in state["capacity_"])
    d0, d1 = caps_new
    M = d0 + d1
    old = np.r_[0:c0, c0:c0 + c1]
    new = np.r_[0:c0, d0:d0 + c1]
    out = dict(state)
    for name in _SLOT_ARRAYS:
        if name in state:
            arr = state[name]
            out[name] = np.zeros((M,) + arr.shape[1:], dtype=arr.dtype)
            out[name][new] = arr[old]
    out["gram_buf_"] = np.zeros((M, M))
    out["gram_buf_"][np.ix_(new, new)] = state["gram_buf_"][np.ix_(old, old)]
    out["capacity_"] = np.array([d0, d1], dtype=np.int64)
    return out


def _room_for_batch(state, s, lay):
    """Infinite buffers (``budget=None``): grow the slots so the batch fits without removal."""
    if lay["budgets"] is None:
        need = state["counts_"] + np.array([np.sum(s < 0), np.sum(s > 0)], dtype=np.int64)
        caps = state["capacity_"]
        if np.any(need > caps):
            new = tuple(int(max(n, 2 * c)) if n > c else int(c) for n, c in zip(need, caps))
            state.update(_grow(state, new))


def _fifo_dense(lay):
    """Whether a layout keeps budgeted FIFO buffers of dense rows (``_okauc.Stepper``'s)."""
    return (lay["budgets"] is not None and lay["budget_policy"] == "fifo"
            and lay.get("storage") != "csr")


def _fifo_sparse(lay):
    """Whether a layout keeps budgeted FIFO buffers of sparse slots."""
    return (lay["budgets"] is not None and lay["budget_policy"] == "fifo"
            and lay.get("storage") == "csr")


class _FifoBuffers:
    """State and pass of Algorithm 4 (slot buffers, FIFO + eq. 28): ``_okauc.kernel_pass``."""

    names: tuple[str, ...] = ("sv_buf_", "alpha_buf_", "gram_buf_", "f_buf_", "capacity_",
                              "counts_", "heads_")
    kernel_arrays = ("gram_buf_", "f_buf_")

    @staticmethod
    def init_state(n_features, caps):
        caps = caps or (0, 0)
        M = caps[0] + caps[1]
        return {"sv_buf_": np.zeros((M, n_features)), "alpha_buf_": np.zeros(M),
                "gram_buf_": np.zeros((M, M)), "f_buf_": np.zeros(M),
                "capacity_": np.array(caps, dtype=np.int64),
                "counts_": np.zeros(2, dtype=np.int64), "heads_": np.zeros(2, dtype=np.int64)}

    @staticmethod
    def run(state, X, s, order, lay, step, transfer, epsilon):
        _room_for_batch(state, s, lay)
        M = state["alpha_buf_"].shape[0]
        state["t_"] = _okauc.kernel_pass(
            X, s, order, state["sv_buf_"], state["alpha_buf_"], state["gram_buf_"],
            state["f_buf_"], state["capacity_"], state["counts_"], state["heads_"],
            state["t_"], step, layout_kernel_spec(lay), transfer, np.zeros(3 * M),
            np.zeros((0, 2)))

    @staticmethod
    def occupied(state):
        c0 = int(state["capacity_"][0])
        counts = state["counts_"]
        n0, n1 = int(counts[0]), int(counts[1])
        if n0 == c0 or n1 == 0:                 # the occupied slots are adjacent
            return np.arange(n0 + n1 if n0 == c0 else n0)
        return np.concatenate((np.arange(n0), np.arange(c0, c0 + n1)))

    @staticmethod
    def support_vectors(state, occ):
        k = occ.shape[0]
        if k and occ[k - 1] == k - 1:           # slots 0 .. k-1: a contiguous copy
            return state["sv_buf_"][:k].copy()
        return state["sv_buf_"][occ].copy()

    @classmethod
    def public(cls, state):
        counts = state["counts_"]
        n0, n1 = int(counts[0]), int(counts[1])
        if cls is _FifoBuffers and (n0 == state["capacity_"][0] or n1 == 0):
            # the occupied slots are 0 .. k-1: slices (the same values, without the index)
            occ = slice(0, n0 + n1 if n0 == state["capacity_"][0] else n0)
            state["support_vectors_"] = state["sv_buf_"][occ].copy()
        else:
            occ = cls.occupied(state)
            state["support_vectors_"] = cls.support_vectors(state, occ)
        state["dual_coef_"] = state["alpha_buf_"][occ].copy()
        state["n_support_"] = counts.copy()
        f = state["f_buf_"][occ]
        if n0 == 0 or n0 == f.shape[0]:
            state["intercept_"] = 0.0
        else:
            # the class means of f (np.mean's sum and division, without its overhead)
            state["intercept_"] = float(-0.5 * (np.add.reduce(f[:n0]) / n0
                                                + np.add.reduce(f[n0:]) / (f.shape[0] - n0)))

    @classmethod
    def hilbert_norm2(cls, est):
        occ = cls.occupied({"capacity_": est.capacity_, "counts_": est.counts_})
        a = est.alpha_buf_[occ]
        return float(a @ est.gram_buf_[np.ix_(occ, occ)] @ a)


class _SparseFifoBuffers(_FifoBuffers):
    """Algorithm 4 with sparse slots, for models fitted on sparse rows: ``kernel_pass_csr``.

    Slot q keeps ``sv_nnz_[q]`` entries at the increasing feature positions
    ``sv_ind_[q, :sv_nnz_[q]]`` with values ``sv_val_[q, :sv_nnz_[q]]``. The slot width L
    (``sv_ind_.shape[1]``) starts at 1 and, before a pass, is widened (the slots are copied
    into wider arrays) to the largest nnz among the rows the pass visits; it never shrinks.
    Memory is O(M L + M^2) for M slots, independent of the number of features.
    """

    names = ("sv_ind_", "sv_val_", "sv_nnz_", "alpha_buf_", "gram_buf_", "f_buf_", "capacity_",
             "counts_", "heads_")

    @staticmethod
    def init_state(n_features, caps):
        caps = caps or (0, 0)
        M = caps[0] + caps[1]
        return {"sv_ind_": np.zeros((M, 1), dtype=np.int32), "sv_val_": np.zeros((M, 1)),
                "sv_nnz_": np.zeros(M, dtype=np.int32), "alpha_buf_": np.zeros(M),
                "gram_buf_": np.zeros((M, M)), "f_buf_": np.zeros(M),
                "capacity_": np.array(caps, dtype=np.int64),
                "counts_": np.zeros(2, dtype=np.int64), "heads_": np.zeros(2, dtype=np.int64)}

    @staticmethod
    def run(state, X, s, order, lay, step, transfer, epsilon):
        X = _canonical_csr(X)
        _room_for_batch(state, s, lay)
        state["sv_ind_"], state["sv_val_"] = _widen_slots(state["sv_ind_"], state["sv_val_"], X)
        M = state["alpha_buf_"].shape[0]
        state["t_"] = _okauc.kernel_pass_csr(
            X.data, X.indices, X.indptr, s, order, state["sv_ind_"], state["sv_val_"],
            state["sv_nnz_"], state["alpha_buf_"], state["gram_buf_"], state["f_buf_"],
            state["capacity_"], state["counts_"], state["heads_"], state["t_"], step,
            layout_kernel_spec(lay), transfer, np.zeros(3 * M), np.zeros((0, 2)))

    @staticmethod
    def support_vectors(state, occ):
        """None: the CSR matrix of the occupied slots is built when ``support_vectors_`` is
        read (:attr:`_KernelSOSL.support_vectors_`), not after every round: building it took
        most of a one-row round on full budgets, and the scores read the slots in place
        anyway."""
        return None

    @staticmethod
    def csr_of(d, n_features):
        """The occupied slots of the state ``d`` as a CSR matrix (canonical: the slot
        indices increase)."""
        return _slots_to_csr(d["sv_ind_"], d["sv_val_"], d["sv_nnz_"],
                             _SparseFifoBuffers.occupied(d), n_features)


class _KompBuffers:
    """State and pass of ``budget_policy="komp"``: ``_kbudget.komp_policy_pass``."""

    names: tuple[str, ...] = ("pool_x_", "pool_gram_", "pool_beta_", "pool_f_", "pool_buf_",
                              "pool_label_", "pool_age_", "capacity_", "counts_",
                              "komp_budget_")
    kernel_arrays = ("pool_gram_", "pool_f_")

    @staticmethod
    def init_state(n_features, caps):
        return {"pool_x_": np.zeros((0, n_features)), "pool_gram_": np.zeros((0, 0)),
                "pool_beta_": np.zeros(0), "pool_f_": np.zeros(0),
                "pool_buf_": np.zeros(0, dtype=np.int64),
                "pool_label_": np.zeros(0, dtype=np.int64),
                "pool_age_": np.zeros(0, dtype=np.int64),
                "capacity_": np.array(caps, dtype=np.int64),
                "counts_": np.zeros(2, dtype=np.int64), "komp_budget_": 0.0}

    @staticmethod
    def run(state, X, s, order, lay, step, transfer, epsilon):
        out = _kbudget.komp_policy_pass(
            X, s, order, state["pool_x_"], state["pool_gram_"], state["pool_beta_"],
            state["pool_f_"], state["pool_buf_"], state["pool_label_"], state["pool_age_"],
            state["capacity_"], state["t_"], float(state["komp_budget_"]), step,
            layout_kernel_spec(lay), epsilon, KOMP_PERIOD)
        for name, value in zip(("pool_x_", "pool_gram_", "pool_beta_", "pool_f_", "pool_buf_",
                                "pool_label_", "pool_age_", "t_", "komp_budget_"), out):
            state[name] = value
        buf = state["pool_buf_"]
        state["counts_"] = np.array([np.sum(buf == 0), np.sum(buf == 1)], dtype=np.int64)

    @classmethod
    def public(cls, state):
        D = np.flatnonzero(state["pool_beta_"] != 0.0)
        state["support_vectors_"] = cls.support_vectors(state, D)
        state["dual_coef_"] = state["pool_beta_"][D].copy()
        lab = state["pool_label_"][D]
        state["n_support_"] = np.array([np.sum(lab == 0), np.sum(lab == 1)], dtype=np.int64)
        state["model_order_"] = int(D.shape[0])
        buf, f = state["pool_buf_"], state["pool_f_"]
        if np.any(buf == 0) and np.any(buf == 1):
            state["intercept_"] = float(-0.5 * (f[buf == 0].mean() + f[buf == 1].mean()))
        else:
            state["intercept_"] = 0.0

    @staticmethod
    def support_vectors(state, D):
        """The pool vectors ``D`` (those with a weight)."""
        return state["pool_x_"][D].copy()

    @staticmethod
    def hilbert_norm2(est):
        b = est.pool_beta_
        return float(b @ est.pool_gram_ @ b)


class _SparseKompBuffers(_KompBuffers):
    """``budget_policy="komp"`` with a pool of sparse slots, for models fitted on sparse
    rows: ``_kbudget.komp_policy_pass_csr``.

    Pool vector q keeps ``pool_nnz_[q]`` entries at the increasing feature positions
    ``pool_ind_[q, :pool_nnz_[q]]`` with values ``pool_val_[q, :pool_nnz_[q]]``; the slot
    width is widened by the pass to the largest nnz among its rows and never shrinks.
    Memory is O(M L + M^2) for M pool vectors, independent of the number of features.
    """

    names = ("pool_ind_", "pool_val_", "pool_nnz_") + _KompBuffers.names[1:]

    @staticmethod
    def init_state(n_features, caps):
        state = _KompBuffers.init_state(n_features, caps)
        del state["pool_x_"]
        state.update(pool_ind_=np.zeros((0, 1), dtype=np.int32), pool_val_=np.zeros((0, 1)),
                     pool_nnz_=np.zeros(0, dtype=np.int32))
        return state

    @staticmethod
    def run(state, X, s, order, lay, step, transfer, epsilon):
        X = _canonical_csr(X)
        out = _kbudget.komp_policy_pass_csr(
            X.data, X.indices, X.indptr, s, order, state["pool_ind_"], state["pool_val_"],
            state["pool_nnz_"], state["pool_gram_"], state["pool_beta_"], state["pool_f_"],
            state["pool_buf_"], state["pool_label_"], state["pool_age_"], state["capacity_"],
            state["t_"], float(state["komp_budget_"]), step, layout_kernel_spec(lay), epsilon,
            KOMP_PERIOD)
        for name, value in zip(("pool_ind_", "pool_val_", "pool_nnz_", "pool_gram_",
                                "pool_beta_", "pool_f_", "pool_buf_", "pool_label_",
                                "pool_age_", "t_", "komp_budget_"), out):
            state[name] = value
        buf = state["pool_buf_"]
        state["counts_"] = np.array([np.sum(buf == 0), np.sum(buf == 1)], dtype=np.int64)

    @staticmethod
    def support_vectors(state, D):
        """The pool vectors ``D`` as a CSR matrix (canonical: the slot indices increase)."""
        return _slots_to_csr(state["pool_ind_"], state["pool_val_"], state["pool_nnz_"], D,
                             state["support_vectors_"].shape[1])


#: ``budget_policy`` -> state adapter (dense and sparse slots)
_ADAPTERS = {"fifo": _FifoBuffers, "komp": _KompBuffers}
_SPARSE_ADAPTERS = {"fifo": _SparseFifoBuffers, "komp": _SparseKompBuffers}
_PUBLIC = ("support_vectors_", "dual_coef_", "n_support_", "intercept_")
_ONE_ROW = np.zeros(1, dtype=np.intp)       # the pass order of a one-row call


def _adapter(lay):
    """The state adapter of a frozen layout (older layouts have no "storage": dense)."""
    if lay.get("storage") == "csr":
        return _SPARSE_ADAPTERS[lay["budget_policy"]]
    return _ADAPTERS[lay["budget_policy"]]
