"""OAM of :mod:`sosl.baselines`: online AUC maximization with reservoir-sampled buffers."""

from __future__ import annotations

from numbers import Integral
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ._base import _blocks
from ._baseline_core import _COMMON, _MAX_MEMORY, _POSITIVE, _LinearBaseline
from ._capabilities import changes
from ._core import _baselines
from ._core._codes import OamUpdate
from ._input import _canonical_csr, _canonical_row
from ._typing import Auto, RandomState

__all__ = ["OAM"]

_OAM_UPDATES = {"seq": int(OamUpdate.OAM_SEQ), "gra": int(OamUpdate.OAM_GRA)}


class OAM(_LinearBaseline):
    """OAM: online AUC maximization with two reservoir-sampled buffers (OAM_seq, OAM_gra).

    Round t compares ``x_t`` with the buffered instances of the other class through the
    pairwise hinge loss ``max(0, 1 - s_t w.(x_t - x))`` and minimizes, approximately,

        1/2 ||w - w_t||^2 + C_t sum_{x in B^{other}} max(0, 1 - s_t w.(x_t - x)),
        C_t = C max(1, N_t^{other} / buffer_size),

    where the weight C_t makes the buffer stand for all N_t^{other} instances of its
    class seen so far. ``update='seq'`` takes one PA-style step per buffered instance,
    ``tau = min(C_t/2, loss / ||x_t - x||^2)``; ``update='gra'`` one gradient step
    ``w += (C_t/2) s_t sum_{active x} (x_t - x)`` evaluated at ``w_t``. Then ``x_t``
    enters its own class's buffer by reservoir sampling, so each buffer is a uniform
    sample of its class.

    Parameters
    ----------
    C : float, default=1.0
        Penalty C > 0 of the pairwise losses.
    update : {'seq', 'gra'}, default='seq'
        Sequential (OAM_seq) or gradient (OAM_gra) update of the classifier.
    buffer_size : int, default=100
        Capacity of each buffer (N_+ = N_-; 100 in the paper).
    shuffle : bool, default=False
        Visit the rows of each batch in a seeded random order.
    random_state : int, RandomState or None, default=None
        Seeds the reservoir sampling (and the shuffling with ``shuffle=True``). The
        generator state is kept in ``rng_state_``, so a pickled model continues the same
        random stream.
    max_memory : int or "auto", default="auto"
        Largest size, in bytes, of the sparse buffer slots (checked before they widen for
        a longer row, counting the transactional copy). "auto" is half the memory
        available at the time. Past it ``MemoryError`` names the size.

    Attributes
    ----------
    coef_, w_ : ndarray of shape (1, n_features), (n_features,)
        The weights w after the last round (``coef_`` a view of ``w_``, as in
        :class:`Perceptron`).
    intercept_ : ndarray of shape (1,)
        ``-w_ @ (mean(B^-) + mean(B^+)) / 2`` (0 until both buffers hold an
        instance): puts the ``predict`` threshold midway between the projected buffer
        means. AUC ignores it.
    buffers_ : ndarray of shape (2, buffer_size, n_features), or tuple of two sparse matrices
        The buffers, element k for ``classes_[k]``. A model whose first call
        (``fit`` or the first ``partial_fit``) received dense rows stores them dense:
        an array whose first ``buffer_fill_[k]`` rows of ``buffers_[k]`` are in use (the
        stored array itself, ``buffer_rows_``). A model whose first call received a
        scipy.sparse matrix stores them sparse, and ``buffers_`` is then a tuple of two
        ``scipy.sparse.csr_matrix`` of shapes ``(buffer_fill_[k], n_features)``, built on
        each access from the slots below (O(buffer_size x row length), never a dense
        array).
    buffer_rows_ : ndarray of shape (2, buffer_size, n_features) or None
        The dense buffers (None in a model with sparse buffers).
    buffer_indices_, buffer_values_ : ndarray of shape (2, buffer_size, capacity) or None
        The sparse buffers (None in a model with dense buffers): slot q of buffer k holds
        ``buffer_nnz_[k, q]`` sorted column indices (int32) and their values, followed by
        zeros. The capacity is the smallest power of two at least the longest row seen,
        so it grows by doubling and does not depend on how the rows were split into
        calls.
    buffer_nnz_ : ndarray of shape (2, buffer_size) or None
        Number of stored values of the row in each slot (sparse buffers).
    buffer_fill_ : ndarray of shape (2,)
        Number of instances in each buffer.
    counts_ : ndarray of shape (2,)
        Instances seen per class (N_t^-, N_t^+).
    rng_state_ : ndarray of shape (1,), uint64
        State of the splitmix64 generator of the reservoir sampling.
    t_, n_seen_, classes_, n_features_in_
        As in :class:`Perceptron`.

    Notes
    -----
    Reservoir sampling follows "Algorithm R": the k-th instance of a class (k >
    buffer_size) draws j uniform in {0, ..., k-1} and replaces slot j if j < buffer_size.
    The random numbers come from a splitmix64 generator seeded from ``random_state``
    (written identically in the kernel and the NumPy reference). A pair whose difference
    ``x_t - x`` is 0 (a duplicate) is skipped by the sequential update. Cost per round
    O(buffer_size p), memory O(buffer_size p) on dense rows.

    Sparse rows: the buffers keep the rows sparse and every difference ``x_t - x`` is
    formed on the union of the two rows' columns, so a round costs
    O(sum over the opposite buffer of nnz(x_t) + nnz(x)) and the buffers take
    O(buffer_size x longest row) memory, independent of p; only ``w_`` is p long. The
    model equals the one learned from the same rows given dense (up to the order of the
    sums, tested at rtol 1e-12: tests/test_baselines.py::test_sparse_input_equals_dense).
    A call on such a model saves, for the case it fails, the
    buffers and the entries of ``w_`` the call can change (the columns of its rows
    and of the buffered rows), so ``learn_one`` does no O(p) work either.

    The storage is chosen by the first call and kept: later calls may mix dense and
    sparse rows, which are converted to the model's storage (dense rows to CSR for
    sparse buffers, O(p) per row as a dense row costs anyway; sparse rows densified a
    block at a time for dense buffers), with the same result as the unconverted rows.

    References
    ----------
    P. Zhao, S. C. H. Hoi, R. Jin, T. Yang. Online AUC maximization. ICML 2011.

    Examples
    --------
    >>> import numpy as np
    >>> from sosl import OAM
    >>> from sosl.metrics import auc
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 3)); y = (X[:, 0] + 0.3 * rng.normal(size=400) > 1).astype(int)
    >>> model = OAM(C=0.1, random_state=0).fit(X, y)
    >>> bool(auc(y, model.decision_function(X)) > 0.9)
    True
    """

    _COMMON_STATE = ("w_", "intercept_", "buffer_fill_", "counts_", "rng_state_")
    _DENSE_STORE = ("buffer_rows_",)
    _SPARSE_STORE = ("buffer_indices_", "buffer_values_", "buffer_nnz_")
    _parameter_constraints: dict = {
        **_COMMON, "C": [_POSITIVE], "update": [StrOptions(set(_OAM_UPDATES))],
        "buffer_size": [Interval(Integral, 1, None, closed="left")],
        "max_memory": [_MAX_MEMORY, StrOptions({"auto"})]}
    capabilities = changes(sparse_input=True,
                           scratch=("_one_row_work", "_oam_work", "_one_row_act"))

    def __init__(self, C: float = 1.0, update: Literal["seq", "gra"] = "seq",
                 buffer_size: int = 100, shuffle: bool = False, random_state: RandomState = None,
                 max_memory: int | Auto = "auto") -> None:
        self.max_memory = max_memory
        self.C = C
        self.update = update
        self.buffer_size = buffer_size
        self.shuffle = shuffle
        self.random_state = random_state

    @property
    def _state_names(self):  # type: ignore[override]  # the names follow the storage
        # the buffer storage exists from the end of the first pass, which chose it
        if self.__dict__.get("buffer_values_") is not None:
            return self._COMMON_STATE + self._SPARSE_STORE
        if self.__dict__.get("buffer_rows_") is not None:
            return self._COMMON_STATE + self._DENSE_STORE
        return self._COMMON_STATE

    def _layout(self):
        return {"buffer_size": int(self.buffer_size), "update": _OAM_UPDATES[self.update]}

    def _init_state(self, n_features):
        seed = check_random_state(self.random_state).randint(0, np.iinfo(np.int64).max,
                                                             dtype=np.int64)
        state: dict[str, Any] = {
            "w_": np.zeros(n_features),
            "intercept_": np.zeros(1),
            "buffer_fill_": np.zeros(2, dtype=np.int64),
            "counts_": np.zeros(2, dtype=np.int64),
            "rng_state_": np.array([seed], dtype=np.uint64),
        }
        # the storage is created by the first pass, dense or sparse as its rows
        state.update(dict.fromkeys(self._DENSE_STORE + self._SPARSE_STORE))
        return state

    @property
    def buffers_(self):
        """The buffers: a dense (2, buffer_size, n_features) array, or a tuple of two CSR
        matrices (one row per buffered instance) for a model with sparse buffers."""
        check_is_fitted(self, "classes_")
        if self.__dict__.get("buffer_values_") is None:
            return self.buffer_rows_
        p = self.w_.shape[0]
        out = []
        for k in range(2):
            fill = int(self.buffer_fill_[k])
            nnz = self.buffer_nnz_[k, :fill]
            used = np.arange(self.buffer_indices_.shape[2]) < nnz[:, None]
            indptr = np.concatenate([[0], np.cumsum(nnz)]).astype(np.int64)
            out.append(sp.csr_matrix((self.buffer_values_[k, :fill][used],
                                      self.buffer_indices_[k, :fill][used], indptr),
                                     shape=(fill, p)))
        return tuple(out)

    def _backup_names(self, X):
        if self.t_ == 0 or self.__dict__.get("buffer_values_") is None:
            return super()._backup_names(X)
        backup = dict.fromkeys(self._state_names)
        if sp.issparse(X):
            # w changes only on the columns of the call's rows and of the buffered rows
            Bi, Bn = self.buffer_indices_, self.buffer_nnz_
            used = np.arange(Bi.shape[2]) < Bn[..., None]
            backup["w_"] = np.concatenate([X.indices, Bi[used]])
        return backup

    def _pass(self, state, X, s, order):
        budget = self._layout_["buffer_size"]
        p = state["w_"].shape[0]
        if state.get("buffer_rows_") is None and state.get("buffer_values_") is None:
            if sp.issparse(X):
                state["buffer_indices_"] = np.zeros((2, budget, 1), dtype=np.int32)
                state["buffer_values_"] = np.zeros((2, budget, 1))
                state["buffer_nnz_"] = np.zeros((2, budget), dtype=np.int64)
            else:
                state["buffer_rows_"] = np.zeros((2, budget, p))
        common = (state["buffer_fill_"], state["counts_"], state["rng_state_"], state["t_"],
                  float(self.C), self._layout_["update"])
        if state.get("buffer_values_") is not None:
            X = _canonical_csr(X)
            self._reserve(state, int(X.indptr[1] - X.indptr[0]) if X.shape[0] == 1
                          else int(np.diff(X.indptr).max()))
            gradient = self._layout_["update"] == _OAM_UPDATES["gra"]
            state["t_"] = _baselines.oam_pass_csr(
                X.data, X.indices, X.indptr, s, order, state["w_"],
                state["buffer_indices_"], state["buffer_values_"], state["buffer_nnz_"],
                *common, self._scratch(p) if gradient else np.zeros(0),
                np.zeros(budget, dtype=np.uint8))
        elif sp.issparse(X):
            for rows in _blocks(order, p):
                common = common[:3] + (state["t_"],) + common[4:]
                state["t_"] = _baselines.oam_pass(
                    X[rows].toarray(), np.ascontiguousarray(s[rows]),
                    np.arange(rows.shape[0], dtype=np.intp), state["w_"],
                    state["buffer_rows_"], *common, np.zeros(2 * p))
        else:
            state["t_"] = _baselines.oam_pass(X, s, order, state["w_"],
                                              state["buffer_rows_"], *common, np.zeros(2 * p))
        state["intercept_"] = np.array([self._threshold(state)])

    def _learn_one_in_place(self, x, s):
        """A dense row on a model with dense buffers: the typed round
        (:func:`sosl._core._baselines.oam_one`) on the live state, which saves w and the
        counts, and the slot the row replaces as it writes it, and restores them if a weight
        or the intercept is not finite (False is then returned: the general path reports
        it). The pre-score, the round and the intercept are the general path's, bit for
        bit. Other rows (sparse buffers, CSR rows) take the round on copies."""
        d = self.__dict__
        B = d.get("buffer_rows_")
        if B is None or not self._typed_row(x):
            if (d.get("buffer_values_") is not None and type(x) is not np.ndarray
                    and _canonical_row(x, d.get("n_features_in_"))):
                return self._learn_one_csr(x, s)
            return super()._learn_one_in_place(x, s)
        p = x.shape[0]
        pre = self._raw_scores(x.reshape(1, p))
        act = d.get("_one_row_act")
        if act is None or act.shape[0] != B.shape[1]:
            act = d["_one_row_act"] = np.zeros(B.shape[1], dtype=np.uint8)
        icpt = _baselines.oam_one(x, s, d["w_"], B, d["buffer_fill_"], d["counts_"],
                                  d["rng_state_"], float(self.C), d["_layout_"]["update"],
                                  self._one_row_scratch(4 * p), act)
        if icpt != icpt:
            return False
        d["intercept_"] = np.array([icpt])
        self._commit_one_row(pre, s)
        return True

    def _learn_one_csr(self, x, s):
        """A canonical one-row CSR matrix on a model with sparse buffers: the pass on the
        live ``w_`` (``_csr_round_in_place``), which it writes at the columns of the row and
        of the buffered rows (as ``_backup_names`` says), and on copies of the rest of the
        state (buffers, counts, generator: O(buffer_size x width), not O(p))."""
        d = self.__dict__
        Bi, Bn = d["buffer_indices_"], d["buffer_nnz_"]
        cols = np.concatenate([x.indices, Bi[np.arange(Bi.shape[2]) < Bn[..., None]]])
        return self._csr_round_in_place(x, s, cols,
                                        [n for n in self._state_names if n != "w_"])

    def _reserve(self, state, longest):
        """Grow the sparse slots to a power-of-two capacity of at least ``longest`` (every
        slot gets that width: one very long row widens them all, so the size is checked
        against ``max_memory`` first)."""
        cap = state["buffer_indices_"].shape[2]
        if longest <= cap:
            return
        new = 1 << (longest - 1).bit_length()
        slots = state["buffer_indices_"].shape[0] * state["buffer_indices_"].shape[1]
        self._check_memory(
            2 * 12 * slots * new,
            f"{slots} sparse buffer slots of width {new} (the longest row has {longest} "
            "non-zeros), with their transactional copy",
            "Use fewer or shorter rows (e.g. hash the features), a smaller buffer_size, or "
            "raise max_memory (bytes).")
        for name in ("buffer_indices_", "buffer_values_"):
            old = state[name]
            grown = np.zeros(old.shape[:2] + (new,), dtype=old.dtype)
            grown[:, :, :cap] = old
            state[name] = grown

    def _scratch(self, p):
        """The gradient update's p-long sum, all zero again when the pass returns: kept
        across calls, as a fresh array per call would fault its pages in again at large p
        (not pickled)."""
        work = self.__dict__.get("_oam_work")
        if work is None or work.shape[0] != p:
            work = np.zeros(p)
            self.__dict__["_oam_work"] = work
        return work

    @staticmethod
    def _threshold(state):
        # minus the midpoint of the buffers' mean scores, each the mean of the buffered
        # rows' scores w.x (O(buffered values) on sparse buffers, no p-long mean)
        fill = state["buffer_fill_"]
        if np.any(fill == 0):
            return 0.0
        w = state["w_"]
        with np.errstate(over="ignore", invalid="ignore"):   # checked by _run_pass
            if state.get("buffer_values_") is None:
                return -_baselines.oam_midpoint_dense(w, state["buffer_rows_"], fill)
            return -_baselines.oam_midpoint_score(
                w, state["buffer_indices_"], state["buffer_values_"], state["buffer_nnz_"],
                fill)


# pickles and the documentation name the public module
for _cls in (OAM,):
    _cls.__module__ = "sosl.baselines"
del _cls
