"""The estimator :class:`sosl.dask.Parallel` (see :mod:`sosl.dask` for what its fit does)."""

from __future__ import annotations

import copy
import dataclasses
from numbers import Integral, Real
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from .. import state as _state
from ._blocks import (
    _check_metas,
    _classes,
    _dask,
    _info_of,
    _known_rows,
    _label_scan,
    _merge_op,
    _meta_of,
    _moments_nbytes,
    _moments_of,
    _reduce_moments,
    _split,
    _summaries,
    _summary,
    _width,
)
from ._engine import _engine, _group_workers, _groups, _holders, _task, _within
from ._solvers import (
    _add_terms,
    _auto_epochs,
    _batch_objective,
    _block_terms,
    _fixed_codes,
    _fixed_passes,
    _independent_fit,
    _lbfgs_calibration,
    _mix_add,
    _mix_leaf,
    _passes,
    _prepared,
)

if TYPE_CHECKING:
    from numpy.typing import ArrayLike
    from typing_extensions import Self

    from .._base import BaseOnlineAUC
    from .._typing import RandomState

__all__ = ["Parallel"]

_CLIENT_MERGE_BYTES = 8 << 20        # merge the block moments on the client up to this size


class Parallel(MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Data-parallel fit of a sosl learner on Dask: one pass per block, merged exactly.

    See the module docstring for what the fit does. ``fit`` returns the wrapper; the
    merged plain estimator is ``estimator_``, to which ``decision_function``, ``predict``,
    ``predict_proba`` and ``predict_log_proba`` delegate (block by block, lazily, for a dask
    array). ``to_estimator()`` returns a copy of it to go on streaming.

    Parameters
    ----------
    estimator : sosl estimator
        The learner and its hyper-parameters: :class:`sosl.OAUCM` or :class:`sosl.OAUCS`
        (any step; the summed-gradient identity holds for ``eta=None``, a constant step
        uses the same t-weighted mix as parameter mixing), or
        :class:`sosl.SketchedOAUCM` / :class:`sosl.FTRLAUC` (``moments="local"``, one
        epoch). Its own ``shuffle`` must be False (use this wrapper's).
    n_epochs : int or "auto", default="auto"
        Passes over the data (iterative parameter mixing; each block continues its own
        step count). "auto": 2 when the blocks hold fewer than 5,000 rows on average,
        else 1 (see the module docstring for the measurements).
    moments : {"global", "local", "fixed"}, default="global"
        Start each block's pass from the exact moments of the other blocks, or from none
        ("local"), or play every row against the fixed moments of all rows ("fixed": no
        moment updates in the pass, the cheaper pass; forgetting=1.0; module docstring).
    shuffle : bool, default=False
        Visit the rows of each block in a random order (a seed per block and epoch drawn
        from ``random_state``); off: the rows of each block in their given order.
    random_state : int, RandomState or None, default=None
        Seed of the shuffling.
    solver : {"online", "lbfgs"}, default="online"
        "online": one pass per block and epoch, merged (the default). "lbfgs": minimize
        the batch objective on the exact global moments (module docstring) with L-BFGS,
        one pass over the blocks per evaluation; OAUC-M and OAUC-S only.
    max_iter : int, default=200
        Most L-BFGS iterations (``solver="lbfgs"``).
    timeout : float or None, default=None
        Seconds after which ``fit`` raises ``TimeoutError`` and leaves the wrapper as it
        was (unfitted, or fitted as before). Tasks already sent to the cluster are not
        stopped; their results are discarded. None: wait as long as the fit takes.

    Attributes
    ----------
    estimator_ : sosl estimator
        The merged model, a plain fitted sosl estimator.
    classes_ : ndarray of shape (2,)
        Sorted labels, as ``fit`` of the learner gives them.
    n_features_in_ : int
    block_rows_ : list of int
        Rows of each block.
    task_cpu_seconds_ : dict
        Thread CPU seconds spent in the tasks: ``"moments"`` and ``"passes"`` (sums over
        blocks and epochs, or L-BFGS evaluations), for benchmarks.
    n_iter_ : int
        Epochs played, or L-BFGS iterations.
    n_passes_ : int
        Passes over the blocks after the moments round (epochs, or L-BFGS evaluations).

    Examples
    --------
    >>> import numpy as np, dask.array as da
    >>> from sosl import OAUCM
    >>> from sosl.dask import Parallel
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(4000, 5)); y = (X[:, 0] + rng.normal(size=4000) > 1).astype(int)
    >>> model = Parallel(OAUCM(lam=1e-3)).fit(da.from_array(X, chunks=(1000, 5)),
    ...                                        da.from_array(y, chunks=1000))
    >>> model.n_iter_, model.estimator_.t_, model.estimator_.counts_.sum()   # small blocks
    (2, 8000, np.int64(4000))
    """

    def __init__(self, estimator: BaseOnlineAUC, n_epochs: int | Literal["auto"] = "auto",
                 moments: Literal["global", "local", "fixed"] = "global",
                 shuffle: bool = False, random_state: RandomState = None,
                 solver: Literal["online", "lbfgs"] = "online", max_iter: int = 200,
                 timeout: float | None = None) -> None:
        self.estimator = estimator
        self.n_epochs = n_epochs
        self.moments = moments
        self.shuffle = shuffle
        self.random_state = random_state
        self.solver = solver
        self.max_iter = max_iter
        self.timeout = timeout

    # -- checks ---------------------------------------------------------------------------
    def _check(self):
        from .._base import BaseOnlineAUC
        est = self.estimator
        if not isinstance(est, BaseOnlineAUC):
            raise TypeError(f"estimator must be a sosl learner, got {type(est).__name__}")
        from .._capabilities import REGISTRY
        name = type(est).__name__
        caps = type(est).capabilities
        if not caps.parallel:
            able = sorted(n for n, c in REGISTRY.items() if c.capabilities.parallel)
            raise TypeError(f"{name} has no mergeable state (see sosl.state); Parallel fits "
                            f"{', '.join(able)}")
        self._check_own_params()
        if getattr(est, "shuffle", False):
            raise ValueError("the estimator's own shuffle=True is not used by Parallel: set it "
                             "to False and pass shuffle=True (and random_state) to Parallel")
        if self._independent() and (self._mode() != "local"
                                    or self.n_epochs not in (1, "auto")
                                    or self.solver != "online"):
            raise ValueError(f"{name} is fitted with moments='local', n_epochs=1 and "
                             "solver='online' (one independent fit per block, then "
                             "sosl.state.merge)")
        if isinstance(getattr(est, "forgetting", 1.0), str):
            raise ValueError(f"{name}(forgetting={est.forgetting!r}) follows the changes of one "
                             "stream in its order; Parallel fits blocks apart: give forgetting "
                             "as a number")
        if self.moments == "fixed" and float(getattr(est, "forgetting", 1.0)) != 1.0:
            raise ValueError("moments='fixed' plays every row against the moments of all "
                             "rows, each row counted alike: it needs forgetting=1.0")
        if self.solver == "lbfgs":
            if self.moments != "global":
                raise ValueError("solver='lbfgs' minimizes the batch objective on the exact "
                                 "global moments: moments must be 'global'")
            if float(getattr(est, "forgetting", 1.0)) != 1.0:
                raise ValueError("solver='lbfgs' weighs every row alike: it needs "
                                 "forgetting=1.0")
        template = clone(est)
        template._check_hyper(fitted=False)             # bad hyper-parameters fail here
        why = caps.merge_refusal(template._layout())
        if why is not None:                             # refused before any block is read
            raise ValueError(f"Parallel merges one model per block, and {name} {why}; "
                             "set it on the estimator")
        return template

    def _check_own_params(self):
        """Parallel's own parameters (ValueError naming the first bad one)."""
        if self.timeout is not None and not (
                isinstance(self.timeout, Real) and not isinstance(self.timeout, bool)
                and float(self.timeout) > 0):
            raise ValueError(f"timeout must be None or a number of seconds > 0, got "
                             f"{self.timeout!r}")
        if not (isinstance(self.n_epochs, str) and self.n_epochs == "auto") and not (
                isinstance(self.n_epochs, Integral) and not isinstance(self.n_epochs, bool)
                and int(self.n_epochs) >= 1):
            raise ValueError(f"n_epochs must be 'auto' or an integer >= 1, got "
                             f"{self.n_epochs!r}")
        if self.solver not in ("online", "lbfgs"):
            raise ValueError(f"solver must be 'online' or 'lbfgs', got {self.solver!r}")
        if not (isinstance(self.max_iter, Integral) and not isinstance(self.max_iter, bool)
                and int(self.max_iter) >= 1):
            raise ValueError(f"max_iter must be an integer >= 1, got {self.max_iter!r}")
        if self.moments not in ("global", "local", "fixed"):
            raise ValueError(f"moments must be 'global', 'local' or 'fixed', got "
                             f"{self.moments!r}")
        if not isinstance(self.shuffle, (bool, np.bool_)):
            raise ValueError(f"shuffle must be a boolean, got {self.shuffle!r}")

    def _mode(self):
        """The moments mode: ``moments``, or a learner's only mode in place of the default."""
        modes = type(self.estimator).capabilities.parallel
        if self.moments == "global" and len(modes) == 1:
            return modes[0]
        return self.moments

    def _independent(self):
        """Whether the learner is fitted one model per block, then merged."""
        return "global" not in type(self.estimator).capabilities.parallel

    # -- fit ------------------------------------------------------------------------------
    def fit(self, X: Any, y: Any, classes: ArrayLike | None = None) -> Self:
        """Fit on the row blocks of ``X`` (dask array/dataframe, or a list of blocks).

        Parameters
        ----------
        X : dask array, dask dataframe, list of arrays, or one array
            Rows; dense or scipy.sparse blocks (all of one kind). A dask array chunked
            along the columns is rechunked to whole rows; a dask dataframe's partitions
            are the blocks (numeric columns). An in-memory array is one block. Blocks
            that come from a loader are read once per round (moments, then each epoch's
            pass): persist them first to read the source once.
        y : dask array / series (same row blocks), str, list of arrays, or array
            Labels, two distinct values over all blocks; with a dask dataframe ``X``, a
            column name takes the labels from that column (and drops it from the
            features).
        classes : array-like of shape (2,), optional
            ``[negative, positive]``; default: the sorted labels found.

        Returns
        -------
        self : Parallel
        """
        template_est = self._check()
        if self.timeout is None:
            fitted, info, cpu = self._compute(template_est, X, y, classes)
        else:
            fitted, info, cpu = _within(self.timeout, self._compute, template_est, X, y,
                                        classes)
        est, rows = fitted
        # everything computed: commit (a failure above leaves the wrapper as it was)
        self.estimator_ = est
        self.classes_ = est.classes_
        self.n_features_in_ = est.n_features_in_
        self.block_rows_ = rows
        self.task_cpu_seconds_ = cpu
        self.n_iter_ = info.get("n_iter", 1)
        self.n_passes_ = info.get("n_passes", 1)
        return self

    def _compute(self, template_est, X, y, classes):
        """``((est, rows), info, cpu)``: the merged model, computed; nothing assigned."""
        dask = _dask()
        from dask import delayed
        Xs, ys = _split(X, y)
        K = len(Xs)
        entropy = None
        if self.shuffle:
            rs = self.random_state
            entropy = (int(rs) if isinstance(rs, Integral) and not isinstance(rs, bool)
                       else int(check_random_state(rs).randint(2**31 - 1)))
        cpu = {"moments": 0.0, "passes": 0.0}
        info: dict = {}
        if self._independent():
            scan = dask.compute(*[delayed(_label_scan)(yb, j) for j, yb in enumerate(ys)])
            classes = _classes([u for u, _ in scan], classes, K)
            fitted = self._fit_independent(template_est, Xs, ys, classes, entropy, cpu)
        else:
            fitted = self._fit_linear(template_est, Xs, ys, classes, entropy, cpu, info,
                                      _width(X, y), _known_rows(X, Xs))
        return fitted, info, cpu

    def _fit_independent(self, template_est, Xs, ys, classes, entropy, cpu):
        dask = _dask()
        at = _holders(Xs)
        out = dask.compute(*[_task(at, j, _independent_fit, template_est, Xb, yb, classes,
                                   entropy, j)
                             for j, (Xb, yb) in enumerate(zip(Xs, ys))])
        metas = [m for _, m in out]
        _check_metas(metas)
        cpu["passes"] = sum(m["cpu"] for m in metas)
        return _state.from_state(_state.merge([s for s, _ in out])), [m["rows"] for m in metas]

    def _fit_linear(self, template_est, Xs, ys, classes, entropy, cpu, info, width=None,
                    known_rows=None):
        K = len(Xs)
        beta = float(getattr(template_est, "forgetting", 1.0))
        order_moments = entropy if beta < 1.0 else None   # the order matters with forgetting
        mode = self._mode()
        at, run = _engine(Xs, ys)
        groups = _groups(at)
        Xs, ys = run.Xs, run.ys
        # small states (K blocks x 2 p^2 numbers at most _CLIENT_MERGE_BYTES) are merged by
        # one task (_reduce_moments), where the in-cluster trees, slot maps and mixes add
        # ~8K tiny tasks (each costs the scheduler more than the merge it runs) and a chain
        # of 2 log2(K) transfers; the same trees and the same operations, so the same bits
        small = width is not None and K * _moments_nbytes(width) <= _CLIENT_MERGE_BYTES

        def op(a, b):
            return run.submit(None, _merge_op, a, b, beta)

        def moments_round(epoch, classes, find_classes):
            """``(ctxs, info, known)``: block j's pass context ``ctxs[j]`` (a task's
            ``(info, priors)``), the round's info (a task) and what the client already
            knows of it (None if nothing)."""
            if small:
                # one task per group: each block's labels and moments (slot 1: its top label)
                summ = [run.submit(_group_workers(at, g), _summaries,
                                   [(Xs[j], ys[j], beta, order_moments, epoch, j) for j in g])
                        for g in groups]
                (ctx,) = run.hold([run.submit(None, _reduce_moments, summ, classes,
                                              find_classes, beta, mode, K)])
                # the round's info (classes, p, rows, the global moments) before the pass
                # that waits on the same worker: the client's request ends with the passes
                out = [ctx] * K, run.submit(None, _info_of, ctx, priority=1), None
                if run.wait_rounds:
                    out = out[:2] + (run.gather([out[1]])[0],)
                return out
            summ = run.hold([run.submit(at[j] and [at[j][0]], _summary, Xs[j], ys[j], beta,
                                        order_moments, epoch, j) for j in range(K)])
            metas = run.gather([run.submit(None, _meta_of, s) for s in summ])
            if find_classes:
                classes = _classes([m["labels"] for m in metas], classes, K)
            p = _check_metas(metas)
            leaves = [run.submit(None, _moments_of, s, classes) for s in summ]
            total, priors = _state.tree_exclusive(leaves, op, None)
            known = {"classes": classes, "p": p, "rows": [m["rows"] for m in metas],
                     "cpu": sum(m["cpu"] for m in metas)}
            # a pass task gets only its own prior (and the total if it plays against it)
            head = dict(known, total=total if mode == "fixed" else None)
            ctxs = [(head, {j: priors[j] if mode == "global" else None}) for j in range(K)]
            return ctxs, dict(known, total=total), known

        ctxs, pending, known = moments_round(0, classes, True)
        proto = _state.LearnerState(
            learner=type(template_est).__name__,
            params=copy.deepcopy(template_est.get_params(deep=False)), classes=np.empty(0),
            n_features=0, layout=template_est._layout(), arrays={}, t=0, n_seen=0,
            calibration=np.array([1.0, 1.0]))
        if self.solver == "lbfgs":
            known = run.gather([pending])[0]
            template = dataclasses.replace(proto, classes=known["classes"],
                                           n_features=known["p"])
            cpu["moments"] += known["cpu"]
            return self._fit_lbfgs(template, run.blocks[0], run.blocks[1], known["total"],
                                   cpu, info), known["rows"]
        if self.n_epochs == "auto" and known_rows is None:
            if known is None:
                known = run.gather([pending])[0]
            known_rows = known["rows"]
        n_epochs = (_auto_epochs(known_rows) if self.n_epochs == "auto"
                    else int(self.n_epochs))
        info.update(n_iter=n_epochs, n_passes=n_epochs)
        if mode == "fixed":
            codes = _fixed_codes(template_est)

            def call(j, w_in, epoch):
                return (codes, Xs[j], ys[j], ctxs[j], w_in, steps[j], entropy, epoch, j)
            group_fn = _fixed_passes
        else:
            def call(j, w_in, epoch):
                return (proto, Xs[j], ys[j], ctxs[j], w_in, steps[j], entropy, epoch, j,
                        K == 1)
            group_fn = _passes
        steps = [0] * K                                 # each block's own step count
        w0, fresh = None, True
        for epoch in range(n_epochs):
            if epoch and beta < 1.0 and entropy is not None:
                ctxs, pending, known = moments_round(epoch, known["classes"], False)
                fresh = True
            w_in = None if w0 is None else run.value(w0)
            last = epoch == n_epochs - 1
            # one request: the pass tasks (their results, w, t, [A, H]: p + 4 numbers a
            # block, come to the client) and, in the last epoch or when the client knows
            # nothing of the round yet, the round's info (the global moments)
            *outs, got = run.gather([
                run.submit(_group_workers(at, g), group_fn, [call(j, w_in, epoch) for j in g])
                for g in groups] + [pending if last or known is None else None])
            if got is not None:
                known = got
            if fresh:
                cpu["moments"] += known["cpu"]
                fresh = False
            results = sorted((r for o in outs for r in o), key=lambda r: r["block"])
            cpu["passes"] += sum(r["cpu"] for r in results)
            steps = [r["t"] for r in results]
            if K == 1:                                  # no mixing: the pass's own bits
                w0, T, calib = results[0]["coef"], steps[0], results[0]["calibration"]
                continue
            T, S, sumH, sumHA, n, _ = _state.tree_reduce([_mix_leaf(r) for r in results],
                                                         _mix_add)
            w0 = S / T if T > 0 else S / n
            H = sumH - (K - 1)
            calib = np.array([max((sumHA - (K - 1)) / H, 1e-12), H])
        ctxs = pending = None                           # the cluster may free the round
        rows = known["rows"]
        if K == 1 and mode != "fixed":
            return _state.from_state(results[0]["state"]), rows
        template = dataclasses.replace(proto, classes=known["classes"], n_features=known["p"])
        assert w0 is not None                           # every epoch merged a w
        st = _state.linear_state(template, known["total"], w0, T, T, calib)
        return _state.from_state(st), rows

    def _fit_lbfgs(self, template, Xs, ys, total, cpu, info):
        """L-BFGS on the batch objective against the exact global moments (see the class
        docstring); each evaluation one pass over the blocks held in cluster memory."""
        dask = _dask()
        from dask import delayed
        from scipy.optimize import minimize
        moments = dask.compute(total)[0]
        at = _holders(Xs)
        prepared = dask.persist(*[_task(at, j, _prepared, Xb, yb, template.classes, j)
                                  for j, (Xb, yb) in enumerate(zip(Xs, ys))])
        n = int(moments.counts.sum())
        means = moments.means
        covs = moments.scatter / moments.weights[:, None, None]
        lam = float(template.params["lam"])
        loss = int(type(self.estimator)._loss)
        seen: dict[Any, Any] = {}

        def fun(w):
            w = np.ascontiguousarray(w, dtype=np.float64)
            m, s2 = means @ w, np.einsum("i,kij,j->k", w, covs, w)
            # the block sums (p + 6 numbers each) come to the client, added by the same
            # fixed tree whoever computed them: K tasks and one round trip an evaluation
            terms = _state.tree_reduce(
                dask.compute(*[delayed(_block_terms)(pj, w, m, s2, loss) for pj in prepared]),
                _add_terms)
            cpu["passes"] += terms[4]
            seen["evals"] = seen.get("evals", 0) + 1
            return _batch_objective(terms, n, means, covs, lam, w)

        res = minimize(fun, np.zeros(template.n_features), jac=True, method="L-BFGS-B",
                       options={"maxiter": self.max_iter})
        w = np.ascontiguousarray(res.x, dtype=np.float64)
        if not np.isfinite(w).all():
            raise FloatingPointError("L-BFGS gave non-finite weights; scale the features")
        cal = _state.tree_reduce(
            [_mix_leaf(r) for r in dask.compute(*[
                delayed(_lbfgs_calibration)(template, pj, moments, w, n, j)
                for j, pj in enumerate(prepared)])], _mix_add)
        K = len(prepared)
        H = cal[2] - (K - 1)
        calib = np.array([max((cal[3] - (K - 1)) / H, 1e-12), H])
        info.update(n_iter=int(res.nit), n_passes=seen.get("evals", 0))
        return _state.from_state(_state.linear_state(template, moments, w, n, n, calib))

    # -- delegation -----------------------------------------------------------------------
    def to_estimator(self) -> BaseOnlineAUC:
        """A copy of the merged plain estimator (to go on streaming with ``partial_fit``)."""
        check_is_fitted(self, "estimator_")
        return copy.deepcopy(self.estimator_)

    def _apply(self, method, X, two_columns=False):
        check_is_fitted(self, "estimator_")
        fn = getattr(self.estimator_, method)
        dask = _dask()
        if dask.is_dask_collection(X) and hasattr(X, "chunks"):
            if len(X.chunks[1]) > 1:
                X = X.rechunk({1: -1})
            if two_columns:
                return X.map_blocks(fn, chunks=(X.chunks[0], (2,)), dtype=float)
            return X.map_blocks(fn, drop_axis=1, dtype=None if method == "predict" else float,
                                meta=np.empty(0, dtype=self.classes_.dtype
                                              if method == "predict" else float))
        if dask.is_dask_collection(X):
            X = X.to_dask_array(lengths=True)
            return self._apply(method, X, two_columns)
        return fn(X)

    def decision_function(self, X: Any) -> Any:
        """``estimator_.decision_function`` (block by block for a dask array)."""
        return self._apply("decision_function", X)

    def predict(self, X: Any) -> Any:
        """``estimator_.predict`` (block by block for a dask array)."""
        return self._apply("predict", X)

    def predict_proba(self, X: Any) -> Any:
        """``estimator_.predict_proba`` (block by block for a dask array)."""
        return self._apply("predict_proba", X, two_columns=True)

    def predict_log_proba(self, X: Any) -> Any:
        """``estimator_.predict_log_proba`` (block by block for a dask array)."""
        return self._apply("predict_log_proba", X, two_columns=True)
