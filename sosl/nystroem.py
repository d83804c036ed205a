"""NystroemOAUCM: OAUC-M on a random-feature map of the Gaussian kernel, learned online.

The rows are mapped by a finite feature map z(x) whose inner products approximate the
Gaussian kernel, z(x) . z(x') ~ exp(-gamma ||x - x'||^2), and OAUC-M (Algorithm 1 of Luo,
Cheng & Zhang) runs on the mapped rows: the typed pass of :class:`sosl.OAUCM`,
:func:`sosl._core._linear.linear_pass`, with its O(D^2) class moments in the D-dimensional
feature space. The maps are :mod:`sosl._core._features` (NumPy reference
:mod:`sosl._core._features_ref`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from numpy.typing import ArrayLike

if TYPE_CHECKING:
    from typing_extensions import Self

from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ._base import BaseOnlineAUC, _model_lock
from ._capabilities import changes
from ._core import _features, _linear
from ._core._blas import one_blas_thread
from ._core._codes import Loss
from ._input import _finite_array
from ._typing import Auto, RandomState
from .exceptions import UnscaledInputWarning
from .kernels import _gamma_scale
from .linear import _NO_CONTEXT, BLAS_THREADED_P, _LinearSOSL, _same_labels
from .linear import state_bytes as _moment_bytes

__all__ = ["NystroemOAUCM"]

#: rows mapped at a time (the mapped block is rows x D doubles): the memory of a pass stays
#: bounded whatever the batch size
_BLOCK_VALUES = 1 << 21
#: largest |z| of a mapped row above which the learner warns (a Nystroem map amplifies the
#: near-null directions of the landmarks' Gram matrix)
_LARGE_FEATURE = 1e4


class NystroemOAUCM(BaseOnlineAUC):
    """OAUC-M in a random-feature space of the Gaussian kernel: a kernel AUC learner with a
    fixed cost per row.

    Each row x is mapped to z(x) in R^D with z(x) . z(x') ~ k(x, x') = exp(-gamma
    ||x - x'||^2), and OAUC-M (:class:`sosl.OAUCM`) is run on the mapped rows: with
    ``mu = y_t w.(z_t - zbar_t)`` and ``s2 = w' Sigma_t w`` over the other class's mapped
    rows,

        L_t(w) = lam/2 ||w||^2 + ((1 - mu) + sqrt((1 - mu)^2 + s2)) / 2,

    minimized by online gradient descent with step ``1/(lam t)``. Memory is O(D^2 + m p)
    and each row costs O(m p + D^2) whatever the length of the stream, where the budgeted
    kernel learners (:class:`sosl.OKAUCM`, :class:`sosl.KOIL`) pay O(B^2) for B support
    vectors per class and see only the last B rows of each class.

    The map:

    * ``method="nystroem"`` (default): the landmarks c_1..c_m are the first
      ``n_components`` rows of the stream, and z(x) = K^{-1/2} (k(x, c_1), ..., k(x, c_m))
      with K the landmarks' Gram matrix (Williams & Seeger); on the landmarks the map is
      exact, z(c_i) . z(c_j) = K_ij.
    * ``method="rff"``: random Fourier features z(x) = sqrt(2/D) cos(W' x + b), W drawn
      from N(0, 2 gamma), b from U(0, 2 pi) (Rahimi & Recht); D = ``n_components``.

    **Warm-up, then frozen.** The first ``n_components`` rows are kept as they come (the
    warm-up); ``gamma="scale"`` is computed from them (scikit-learn's rule,
    ``1 / (n_features Var(X))``), the map is built from them (Nystroem: they are the
    landmarks), then they are replayed, in their order, through OAUC-M in the feature
    space, and every later row is mapped and learned on arrival. The map never changes
    after that: OAUC-M's state is a sum over all the rows seen (the class means and
    covariances of the mapped rows), so rows mapped by two different maps would be summed
    in two different coordinate systems. Why the first rows: on a stream in random order
    they are a uniform sample of it, which is how scikit-learn's ``Nystroem`` picks its
    landmarks, and they cost nothing to choose (no random state, the same landmarks
    whatever the chunking of the stream, so ``fit`` equals ``partial_fit`` over any
    chunks). On a stream ordered by class or by time they are not representative: shuffle
    it, or choose the landmarks yourself and use ``sklearn.kernel_approximation`` with
    :class:`sosl.OAUCM`. During the warm-up the model has no map yet and scores every row
    0; ``fit`` on fewer rows than ``n_components`` builds the map from all its rows at the
    end of the call (a stream fed by ``partial_fit`` keeps waiting for the warm-up).

    Parameters
    ----------
    n_components : int, default=64
        Landmarks m (Nystroem) or random features D (rff), and the length of the warm-up.
        The cost of a row grows as m^2 (the map) plus D^2 (OAUC-M's moments), so the
        default is small: OAUC-M's second-order step gets from 64 landmarks the ranking a
        first-order learner gets from 200 (the measurements are in docs/performance.md);
        raise it for data whose boundary needs more of the kernel's spectrum.
    method : {"nystroem", "rff"}, default="nystroem"
        The feature map.
    gamma : float or "scale", default="scale"
        Kernel width of k(x, x') = exp(-gamma ||x - x'||^2); "scale" is
        ``1 / (n_features X.var())`` over the warm-up rows (1.0 for constant rows).
    lam : float, default=1e-4
        Tikhonov weight lambda of OAUC-M in the feature space (> 0 when ``eta=None``). The
        mapped rows have ||z(x)||^2 ~ k(x, x) = 1 whatever the scale of the input, so one
        default serves every data set; it is smaller than :class:`sosl.OAUCM`'s because
        the feature space has more directions to fit.
    eta : float or None, default=None
        None: the step 1/(lam t) of OAUC-M; a positive float: a constant step (OAUC-M_c).
    forgetting : float in (0, 1], default=1.0
        Forgetting factor of the class moments (as in :class:`sosl.OAUCM`).
    shuffle : bool, default=False
        Visit the rows of each batch in a random order.
    random_state : int, RandomState or None, default=None
        Seed of the random Fourier features (drawn when the warm-up ends, as
        ``sklearn.kernel_approximation.RBFSampler`` draws them: the same seed gives the
        same features) and of ``shuffle``.
    max_memory : int or "auto", default="auto"
        Largest state in bytes (as in :class:`sosl.OAUCM`; here about 32 D^2 + 8 m p).

    Attributes
    ----------
    gamma_ : float
        The kernel width in use (0.0 during the warm-up).
    components_ : ndarray of shape (m, n_features)
        Nystroem: the landmarks (the warm-up rows, filled as they arrive). rff: the
        warm-up rows until the map is built, then empty.
    normalization_ : ndarray of shape (m, m)
        Nystroem: K^{-1/2} (eigenvalues below 1e-12 raised to 1e-12, as scikit-learn does).
    random_weights_, random_offset_ : ndarray of shape (n_features, D) and (D,)
        rff: W and b.
    warm_signs_, warm_weights_ : ndarray of shape (m,)
        Labels (+1 / -1) and weights of the warm-up rows not yet learned (empty once the
        map is built).
    w_, means_, scatter_, scales_, weights_, counts_, max_abs_
        OAUC-M's state in the feature space (see :class:`sosl.OAUCM`; empty arrays during
        the warm-up).
    n_components_ : int
        D, the dimension of the feature space (0 during the warm-up).
    t_, n_seen_, classes_, n_features_in_
        As in :class:`sosl.OAUCM` (``t_`` counts the warm-up rows too).

    Notes
    -----
    Sparse rows (CSR) are accepted and densified a block of rows at a time: the landmarks
    are dense rows (m x n_features) and the map's cost per row is O(m p) anyway, so the
    learner suits dense or moderately wide data, not hashed text. Sample weights are those
    of :class:`sosl.OAUCM` in the feature space (a row of weight v counts v times in its
    class's moments and its loss term is scaled by v); a row of weight 0 is left out, and
    so never becomes a landmark; the landmarks and ``gamma="scale"`` do not weigh the
    warm-up rows.

    References
    ----------
    J. Luo, D. Cheng, B. Zhang. Online AUC Optimization Based on Second-order Surrogate
    Loss (Algorithm 1). C. Williams, M. Seeger. Using the Nystroem method to speed up
    kernel machines. NIPS 2001. A. Rahimi, B. Recht. Random features for large-scale
    kernel machines. NIPS 2007.

    Examples
    --------
    >>> import numpy as np
    >>> from sosl import NystroemOAUCM
    >>> from sosl.metrics import auc
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(2000, 2)); y = (np.hypot(*X.T) < 0.6).astype(int)
    >>> model = NystroemOAUCM(n_components=50).fit(X, y)
    >>> bool(auc(y, model.decision_function(X)) > 0.95)
    True
    """

    # sparse rows densified a block at a time; OAUC-M's weighted pass (see Notes); the
    # map's parts are derived from the state, rebuilt on demand; the rows a pass mapped
    # serve the scores of the same call only; a fit shorter than the warm-up builds its
    # map from all of its rows (the pass is told it has the fit's last rows)
    capabilities = changes(sparse_input="blocks", weighted=True, scratch=("_map_parts_",),
                           call_scratch=("_mapped_tail",), final_fit_pass=True)

    _loss = int(Loss.LOSS_M)
    _map_names = ("gamma_", "components_", "normalization_", "random_weights_",
                  "random_offset_", "warm_signs_", "warm_weights_")
    _moment_names = ("w_", "means_", "scatter_", "scales_", "weights_", "counts_", "max_abs_")
    _state_names = _map_names + _moment_names
    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "method": [StrOptions({"nystroem", "rff"})],
        "gamma": [Interval(Real, 0, None, closed="neither"), StrOptions({"scale"})],
        "lam": [Interval(Real, 0, None, closed="left")],
        "eta": [Interval(Real, 0, None, closed="neither"), None],
        "forgetting": [Interval(Real, 0, 1, closed="right")],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
        "max_memory": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
    }

    def __init__(self, n_components: int = 64, method: Literal["nystroem", "rff"] = "nystroem",
                 gamma: float | Literal["scale"] = "scale", lam: float = 1e-4,
                 eta: float | None = None, forgetting: float = 1.0, shuffle: bool = False,
                 random_state: RandomState = None, max_memory: int | Auto = "auto") -> None:
        self.n_components = n_components
        self.method = method
        self.gamma = gamma
        self.lam = lam
        self.eta = eta
        self.forgetting = forgetting
        self.shuffle = shuffle
        self.random_state = random_state
        self.max_memory = max_memory

    # OAUC-M's step schedule, read by its pass (``_LinearSOSL._run_pass``)
    _schedule = _LinearSOSL._schedule
    _beta = _LinearSOSL._beta

    def _check_params(self):
        _LinearSOSL._check_step(self)

    def _layout(self):
        return {"method": self.method, "n_components": int(self.n_components),
                "gamma": self.gamma if self.gamma == "scale" else float(self.gamma),
                "schedule": "1/(lam t)" if self.eta is None else "constant"}

    # -- state ---------------------------------------------------------------------------
    def _init_state(self, n_features):
        m = int(self.n_components)
        self._check_memory(
            _moment_bytes(m) + 8 * m * n_features,
            f"OAUC-M's moments in {m} dimensions and {m} rows of {n_features} features",
            "Lower n_components, or raise max_memory (bytes).")
        state = {"gamma_": 0.0, "components_": np.zeros((0, n_features)),
                 "normalization_": np.zeros((0, 0)),
                 "random_weights_": np.zeros((n_features, 0)),
                 "random_offset_": np.zeros(0), "warm_signs_": np.zeros(0),
                 "warm_weights_": np.zeros(0)}
        state.update(_moments(0))
        return state

    @property
    def n_components_(self):
        """D, the dimension of the feature space (0 during the warm-up)."""
        check_is_fitted(self, "classes_")
        return int(self.w_.shape[0])

    def _map(self, state, X):
        """The mapped rows of X (dense or CSR) under the frozen map of ``state``."""
        N = state["normalization_"]
        if N.shape[0]:
            C = state["components_"]
            parts = self.__dict__.get("_map_parts_")
            if parts is None or parts[0] is not C or parts[1] is not N:
                # the transposes and norms the map reads, laid out once per map
                parts = (C, N, _features.nystroem_parts(C, N))
                self.__dict__["_map_parts_"] = parts
            return _features.nystroem_map(X, parts[2], state["gamma_"])
        return _features.rff_map(X, state["random_weights_"], state["random_offset_"])

    def _freeze(self, state, replay=True):
        """Build the map from the warm-up rows, then (``replay``) learn them in their order."""
        B = state["components_"]
        gamma = _gamma_scale(B) if self.gamma == "scale" else float(self.gamma)
        state["gamma_"] = gamma
        if self.method == "nystroem":
            K = _features.rbf_to_landmarks(B, np.ascontiguousarray(B.T),
                                           _features.squared_norms(B), gamma)
            K = 0.5 * (K + K.T)
            np.fill_diagonal(K, 1.0)                      # k(c, c) = 1 exactly
            state["normalization_"] = _features.nystroem_normalization(K)
            D = B.shape[0]
        else:
            rng = check_random_state(self.random_state)
            state["random_weights_"], state["random_offset_"] = _features.draw_rff(
                rng, B.shape[1], int(self.n_components), gamma)
            D = int(self.n_components)
        state.update(_moments(D))
        signs, weights = state["warm_signs_"], state["warm_weights_"]
        state["warm_signs_"], state["warm_weights_"] = np.zeros(0), np.zeros(0)
        state["t_"] -= signs.shape[0]                 # the warm-up rounds, played below
        if replay:
            self._learn_mapped(state, B, signs, np.arange(B.shape[0], dtype=np.intp),
                               None if (weights == 1.0).all() else weights)
        if self.method == "rff":
            state["components_"] = np.zeros((0, B.shape[1]))

    def _learn_mapped(self, state, X, s, order, sw=None):
        """OAUC-M's typed pass over the mapped rows ``X[order]`` (weights ``sw[order]``),
        a block at a time (the first block takes the remainder, so the last one is a full
        block)."""
        n = order.shape[0]
        step = self._block_rows(state["w_"].shape[0])
        a = 0
        for b in range(n % step or step, n + 1, step):
            rows = order[a:b]
            contiguous = rows.shape[0] > 0 and rows[-1] - rows[0] == rows.shape[0] - 1 \
                and bool((np.diff(rows) == 1).all())
            Z = self._map(state, X[rows[0]:rows[-1] + 1] if contiguous else X[rows])
            _LinearSOSL._run_pass(self, state, Z, np.ascontiguousarray(s[rows]), None,
                                  None if sw is None else np.ascontiguousarray(sw[rows]))
            if b == n and contiguous and X.flags.c_contiguous:
                # the base scores the last rows of a fresh fit in-sample for the Platt
                # scaling: their mapped rows, the same bits as mapping them again
                self.__dict__["_mapped_tail"] = (X, int(rows[0]), Z)
            a = b

    @staticmethod
    def _block_rows(D):
        """Rows mapped at a time: at most about ``_BLOCK_VALUES`` mapped values."""
        return max(64, _BLOCK_VALUES // max(D, 1))

    def _cached_rows(self, Xq):
        """The mapped rows of ``Xq`` if it is a run of rows of the batch whose last block
        the pass mapped in this call (``_mapped_tail``), else None."""
        tail = self.__dict__.get("_mapped_tail")
        if tail is None or type(Xq) is not np.ndarray:
            return None
        X, r0, Z = tail
        if not (Xq is X or Xq.base is X or (X.base is not None and Xq.base is X.base)) \
                or not Xq.flags.c_contiguous or Xq.shape[1:] != X.shape[1:] or Xq.size == 0:
            return None
        offset = Xq.__array_interface__["data"][0] - X.__array_interface__["data"][0]
        row_bytes = X.strides[0]
        if offset % row_bytes:
            return None
        first = offset // row_bytes - r0
        if first < 0 or first + Xq.shape[0] > Z.shape[0]:
            return None
        return Z[first:first + Xq.shape[0]]

    def _warn_unscaled(self, R):
        self._warn_once("large features", UnscaledInputWarning,
                        f"mapped features reach |z| = {R:.3g}: the landmarks' Gram matrix is "
                        "nearly singular (near-duplicate landmarks or a small gamma); try a "
                        "larger gamma, fewer components or method='rff'.")

    def _run_pass(self, state, X, s, order, sw=None, final=False):
        m = int(self.n_components)
        if state["w_"].shape[0] == 0:                 # warm-up: keep the rows
            have = state["components_"].shape[0]
            take = order[:m - have]
            state["components_"] = np.concatenate([state["components_"], X[take]])
            state["warm_signs_"] = np.concatenate([state["warm_signs_"], s[take]])
            state["warm_weights_"] = np.concatenate(
                [state["warm_weights_"], np.ones(take.shape[0]) if sw is None else sw[take]])
            state["t_"] += take.shape[0]
            if state["components_"].shape[0] < m:
                if final:
                    # a fit shorter than the warm-up: the map is built from all of its
                    # rows, which are then learned in their order (the base's in-sample
                    # Platt scaling scores them under the new map, as a longer fit's)
                    self._freeze(state)
                return
            # warm-up rows all from this call: learned with the others, in one pass over
            # X (the same rounds, and the fit's in-sample scores can reuse the mapped rows)
            self._freeze(state, replay=have > 0)
            if have > 0:
                order = order[take.shape[0]:]
        if order.shape[0]:
            self._learn_mapped(state, X, s, order, sw)

    # -- one row at a time: the mapped row through OAUC-M's typed stepper -----------------
    _stepper_on = _LinearSOSL._stepper_on
    _new_stepper = _LinearSOSL._new_stepper

    def _one_mapped(self, x):
        """The mapped row of a dense float64 row of a model past its warm-up, or None when
        ``x`` does not suit the typed one-row paths (the general path then judges it)."""
        d = self.__dict__
        if not (type(x) is np.ndarray and x.dtype == np.float64 and x.ndim == 1
                and x.shape[0] == d["n_features_in_"] and x.flags.c_contiguous
                and d["w_"].shape[0] and _finite_array(x)):
            return None
        z = self._map(d, x.reshape(1, -1))[0]
        return z if _finite_array(z) else None

    def _learn_one_in_place(self, x, s):
        d = self.__dict__
        z = self._one_mapped(x)
        if z is None:
            return False
        t = d["t_"] + 1
        st = d.get("_stepper_") or self._stepper()
        with one_blas_thread() if z.shape[0] >= BLAS_THREADED_P else _NO_CONTEXT:
            R = st.step(z, s, t, d["max_abs_"])
        if R < 0.0:
            return False
        d["t_"] = t
        d["n_seen_"] += 1
        d["max_abs_"] = R
        if R > _LARGE_FEATURE:
            self._warn_unscaled(R)
        return True

    def partial_fit(self, X: ArrayLike, y: ArrayLike, classes: ArrayLike | None = None,
                    sample_weight: ArrayLike | None = None) -> Self:
        d = self.__dict__
        if (sample_weight is None and type(X) is np.ndarray and X.ndim == 2
                and X.shape[0] == 1 and X.dtype == np.float64 and "w_" in d
                and X.shape[1] == d["n_features_in_"] and d.get("_params_ok")
                and not self.shuffle and "feature_names_in_" not in d
                and (classes is None or _same_labels(classes, d["classes_"]))):
            y = np.asarray(y)
            if y.shape == (1,):             # one dense row: a learn_one round, the same bits
                self.learn_one(X[0], y[0])
                return self
        return super().partial_fit(X, y, classes, sample_weight)

    partial_fit.__doc__ = BaseOnlineAUC.partial_fit.__doc__

    def score_one(self, x: ArrayLike) -> float:
        d = self.__dict__
        with _model_lock(d):
            if d.get("_params_ok") and "w_" in d:
                z = self._one_mapped(x)
                if z is not None:
                    f = self._stepper().score(z)
                    if f == f and abs(f) != np.inf:
                        return f
            return super().score_one(x)

    score_one.__doc__ = BaseOnlineAUC.score_one.__doc__

    def _decision(self, X):
        d = self.__dict__
        out = np.zeros(X.shape[0])
        D = d["w_"].shape[0]
        if D == 0:
            return out
        Z = self._cached_rows(X)
        if Z is not None:
            _linear.decision_rows(Z, d["w_"], d["means_"], d["counts_"], out)
            return out
        step = self._block_rows(D)
        for a in range(0, X.shape[0], step):
            Z = self._map(d, X[a:a + step])
            _linear.decision_rows(Z, d["w_"], d["means_"], d["counts_"], out[a:a + step])
        return out

    def feature_map(self, X: ArrayLike) -> np.ndarray:
        """The mapped rows z(x) of X under the frozen map, shape (n_samples, D).

        Raises ``ValueError`` during the warm-up (no map yet).
        """
        with _model_lock(self.__dict__):
            check_is_fitted(self, "classes_")
            self._recheck_hyper()
            X = self._validate_X(X, reset=False)
            if self.w_.shape[0] == 0:
                raise ValueError(f"{type(self).__name__} is still in its warm-up "
                                 f"({self.components_.shape[0]} of {self.n_components} "
                                 "rows): no feature map yet")
            return self._map(self.__dict__, X)


def _moments(D):
    """A fresh OAUC-M state in D dimensions (``_LinearSOSL._init_state`` without its
    memory check, done once for the whole learner)."""
    return {"w_": np.zeros(D), "means_": np.zeros((2, D)), "scatter_": np.zeros((2, D, D)),
            "scales_": np.ones(2), "weights_": np.zeros(2),
            "counts_": np.zeros(2, dtype=np.int64), "max_abs_": 0.0}
