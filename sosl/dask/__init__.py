"""Data-parallel fits on Dask: :class:`Parallel` (needs the ``dask`` extra).

``Parallel(estimator).fit(X, y)`` trains one sosl learner on a dask array (or dask
dataframe, or a list of blocks) whose row blocks live on different workers, and returns a
plain fitted estimator as ``estimator_`` that scores, pickles and goes on streaming with
``partial_fit``. ``dask_ml.wrappers.Incremental`` calls ``partial_fit`` block after block,
so a second worker adds nothing; here every block is played at the same time.

The fit of OAUC-M / OAUC-S (``moments="global"``, the default)
--------------------------------------------------------------
1. **Moments.** Each block computes the exact class moments of its rows (count, weight,
   mean, scatter; :func:`sosl.state.moments_of_rows`) and, in the same read, its labels
   (the two classes are found from them; no separate label scan). A fixed balanced tree
   of Chan merges (the up-sweep) gives the global moments; a down-sweep of the same tree
   hands each block ``j`` the exact moments of *all the other blocks* (those before it,
   then those after it), in ``O(log K)`` depth and one state of ``2 p^2 + O(p)`` numbers
   per block. Where the K block states are small (``8 K (2 p^2 + 2 p + 5)`` bytes at most
   8 MB: up to 200 blocks at p = 50) one task on a worker receives them all, finds the
   classes, checks the blocks and runs both trees (each merge costs the scheduler more as
   a task than it costs to compute); larger states are merged by the same trees of tasks
   on the workers, after a round trip that brings the labels to the client. The same
   merges in the same order: the same bits either way.
2. **One pass per block, started from those moments.** Block ``j`` plays its rows (in the
   given order, or shuffled with a seed of its own) on a learner whose class moments start
   as the moments of the other blocks, whose weights start at the current ``w`` (0 in the
   first epoch) and whose step counter is the block's own (0 in the first epoch). So every
   row of block j is played as if it were among the last rows of the stream, after all
   the other blocks' rows had updated the moments; at the end of the pass the block's
   moments are those of all the rows. With one block there are no other blocks and the
   fit is the sequential pass, bit for bit.
3. **The t-weighted merge of w** (a tree of sums ``(sum t_j, sum t_j w_j)`` on the
   client, which receives ``p + 4`` numbers a block): with the step
   ``1/(lam t)``, ``lam T w_{T+1} = -(sum of past gradients)``, so the model of the summed
   gradients is ``w = sum_j t_j w_j / sum_j t_j`` (see :mod:`sosl.state`). The merged model's
   moments are the exact global moments (each row counted once), ``t_`` is the total
   number of rounds played and its Platt scaling combines the blocks' (each learned as a
   fresh fit learns its own: in-sample, on the last 10,000 rows of the block's pass).
4. **Epochs** (``n_epochs > 1``, iterative parameter mixing): each block starts again from
   the merged ``w`` and the moments of the other blocks, *continuing its own step count*
   (a global step counter, every block restarting at the merged ``t``, makes each epoch's
   steps K times too small and stalls; a reset to 0 discards the merged ``w`` in one
   step). The identity of step 3 then holds for all the rounds of all epochs.
   ``n_epochs="auto"`` (the default) plays 2 epochs when the blocks hold fewer than 5,000
   rows on average and 1 otherwise (one block: 1, the sequential pass). Measured
   (``benchmarks/bench_distributed.py``, test AUC minus the sequential pass's): the loss of
   one epoch grows as blocks shrink, not with K as such: w8a shuffled -0.0010 / -0.0021 /
   -0.0035 at 2,186 / 1,093 / 546 rows per block, with 2 epochs -0.0006 / -0.0011 /
   -0.0019; blocks of 3,281 rows and more (the synthetic stream, K <= 64) lose at most
   0.0001 with one epoch. A second epoch is a second pass over the data, so "auto" pays
   it only where blocks are small (the whole fit is cheap) and the gain is measured.

``solver="lbfgs"``: the batch objective on the exact global moments
--------------------------------------------------------------------
After the moments round, scipy's L-BFGS-B minimizes, from ``w = 0``,

    F(w) = lam/2 ||w||^2 + (1/n) sum_i psi(s_i w.(x_i - xbar_{o(i)}), w' Sigma_{o(i)} w)

over all n rows, where ``s_i = +-1`` is row i's label sign, ``o(i)`` the other class and
``xbar_k``, ``Sigma_k`` the mean and (count-normalized) covariance of *all* rows of class
k; ``psi`` is the learner's loss (psi_M for OAUC-M, psi_S for OAUC-S,
:mod:`sosl._core._losses_ref`). This is the online learner's round loss with the moments of
the earlier rows replaced by those of every row. Each evaluation of ``F`` and its gradient
is one pass over the blocks, which are held in cluster memory for the fit: each block
returns ``sum psi``, ``X'(d_mu s)`` and four class sums, and the client adds the
covariance terms (``O(p^2)``). ``eta`` is not used; forgetting must be 1.0. The merged
model gets the exact global moments, ``t_ = n`` (it goes on streaming as a learner that has
played n rounds) and a Platt scaling learned per block as in step 3. ``n_passes_`` counts
the evaluations, ``n_iter_`` the L-BFGS iterations (at most ``max_iter``).

``moments="fixed"``: every row against the moments of all rows
-----------------------------------------------------------------
The moments round as above (only its up-sweep's root is used: the exact global class
moments ``xbar_k``, ``Sigma_k`` of all n rows), then, each epoch, one pass per block in
which every row meets the *fixed* global moments of the other class: round t of block j is

    w <- w - eta_t (lam w + psi'(s_t w.(x_t - xbar_o), w' Sigma_o w))

(the gradient of psi as in Algorithm 1, eq. 12 with eq. 14 / 13), with ``eta_t`` the
learner's schedule on the block's own step count, and the moments are not updated: a
round is a margin, ``Sigma_o w``, the loss and the step
(:func:`sosl._core._linear.fixed_pass`), where the learner's round also pays the
rank-one updates of its scatter. It is the stochastic counterpart of ``solver="lbfgs"``'s
objective ``F`` (each row's loss against the moments of all rows of the other class),
played in one pass per epoch. Then the t-weighted merge of w as in step 3; the merged
model gets the global moments, ``t_`` = the rounds played and the blocks' Platt scalings
combined (each block's learned in-sample on the last 10,000 rows of its pass, without the
prequential steps the learner's pass would take and then discard). Epochs continue each
block's step count against the same moments (no second moments round). With one block it
is one fixed-moment pass over all rows, *not* the sequential pass (whose early rows meet
the moments of the few rows before them). Forgetting must be 1.0 (every row counts alike).

When to use it: for speed. Its pass tasks cost a fraction of the in-memory pass (no
rank-one updates), so moments round plus pass cost less than the in-memory pass alone
(``benchmarks/bench_distributed.py``; figures in docs/performance.md); its test AUC
is within 0.0004 of ``"global"``'s in every cell of that benchmark's quality table
(4 datasets, K = 2, 8, 64, shuffled and file order, 1 and 2 epochs). The name says what
differs from ``"global"``: the same global moments, held fixed instead of played forward.

``moments="local"``: each block's pass starts from empty moments (it sees only its own
rows); the merged model still gets the exact global moments. Measured in
``benchmarks/bench_distributed.py``: 0.12-0.15 AUC below the sequential pass on w8a at
K = 64 (1,479 positives spread thin), where global moments stay within 0.004; on data with
many rows per block the two are within 0.001-0.01.

The result depends on the blocks (their number, sizes and order), the seed, and nothing
else: the trees are fixed by the block count, so 1 or 20 workers give the same bits.

Placement: on a ``distributed`` client, the tasks of a block that is already in cluster
memory (a persisted array or dataframe) are placed on a worker that holds it, a loose
restriction (any worker runs them if the holder is lost). Without it dask's placement was
seen moving whole blocks to the less busy worker of a loaded machine. Only the moments
(``2 p^2 + O(p)`` numbers per block), ``w`` and a few numbers per block travel.

Tasks and round trips: the blocks one worker holds form a group, and each round runs one
task per group (its blocks one after the other, in block order) instead of one per block;
a task has a fixed cost to the scheduler and its worker, paid per task, not per row.
When every block is already in cluster memory (a persisted array or dataframe), the
moments round, its reduction and the epoch's passes go out together as futures
(``client.submit``; building a ``delayed`` graph over the array's blocks costs the
client more) and the scheduler runs each pass task once the reduction it needs is done:
the client waits once an epoch, for the pass results (``p + 4`` numbers a block) and, in
the last epoch, the global moments. Blocks that tasks still have to load (an array or
dataframe that is not persisted) are loaded again by each round, and the client waits for
the moments round before it submits the passes, so that no block is kept in memory
between its moments task and its pass task. Speed figures: docs/performance.md.

States and moments travel between the client and the workers through Dask's own
transport, which pickles task arguments and results: the cluster is trusted as a whole, so
the safe file format of :mod:`sosl.io` (for files that may come from elsewhere) is not used
there. Save the merged model with :func:`sosl.io.save`.

Other learners: :class:`sosl.SketchedOAUCM` and :class:`sosl.FTRLAUC` are fitted with
``moments="local"`` and one epoch: one independent fit per block, then
:func:`sosl.state.merge` (frequent-directions merge of the sketches; FTRL's per-coordinate
rule). Learners without a merge (:mod:`sosl.state`) are refused.
"""

from __future__ import annotations

import copy
import dataclasses
import threading
import time
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from .. import state as _state

__all__ = ["Parallel"]

_CLIENT_MERGE_BYTES = 8 << 20        # merge the block moments on the client up to this size
_IN_SAMPLE_ROWS = 10_000            # as a fresh fit's Platt scaling (sosl._base)
_AUTO_ROWS = 5_000                  # n_epochs="auto": 2 epochs below this many rows per block
#: the fixed pass forms Sigma w with BLAS dsymv from this dimension on, below it with the
#: kernel's own loops (the learner's threshold is 32, where its rank-k updates decide):
#: benchmarks/bench_distributed.py (section 5) measures both: the own loops win below
#: this dimension, dsymv from about p = 128, the two are even in between
_FIXED_BLAS_MIN_P = 64
#: sparse rows of the fixed pass are densified this many values at a time (8 MB)
_FIXED_PIECE_VALUES = 1 << 20


def _dask():
    try:
        import dask
    except ImportError as exc:                          # pragma: no cover - extra missing
        raise ImportError("sosl.dask needs dask: pip install 'sosl[dask]'") from exc
    return dask


_CONTROLLER: list = []              # this process's threadpoolctl controller, made once


def _one_blas_thread():
    # threadpoolctl's limit, not sosl._core._blas: the tasks may run in several threads of
    # one process at once (processes=False); with the lean context there, a later POLK
    # test was seen 1e-15 off its reference (not with this one; the cause not pinned down).
    # One controller per process: threadpool_limits() rescans the loaded libraries on
    # every call, while the limit on a kept controller is cheap. Both
    # BLAS libraries (numpy's, and scipy's that the kernels and dsyrk use) are loaded
    # before it is made.
    if not _CONTROLLER:
        import scipy.linalg.blas  # noqa: F401
        from threadpoolctl import ThreadpoolController

        from .._core import _linear  # noqa: F401
        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0].limit(limits=1, user_api="blas")


# -- tasks (module level: picklable for distributed workers) --------------------------------
def _as_block(X, j, check_finite=True):
    """A block as float64 C-contiguous ndarray or canonical CSR; pandas frames densified.

    ``check_finite=False`` skips the scan of a dense block for non-finite values (the
    moments round finds them in its own read: :func:`_summary`).

    Arrays that arrive from another worker can sit at an address that is not a multiple
    of 8 (``flags.aligned`` False); OpenBLAS then takes another path and rounds
    differently, so such blocks are copied: the result must not depend on where a block
    was computed (measured: a dgemv on a deserialized block differed in the last bits).
    """
    from .._base import _canonical_csr
    from .._core._linear import finite_max_abs
    if sp.issparse(X):
        X = _canonical_csr(X)
        if not (X.data.flags.aligned and X.indices.flags.aligned and X.indptr.flags.aligned):
            X = X.copy()
        if X.nnz and not np.isfinite(X.data).all():
            _not_finite(j)
        return X
    try:
        if hasattr(X, "to_numpy"):
            X = X.to_numpy(dtype=np.float64)
        X = np.ascontiguousarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"block {j}: X must be numeric (dense columns of numbers): "
                         f"{exc}") from None
    if not X.flags.aligned:
        X = X.copy()
    if X.ndim != 2:
        raise ValueError(f"block {j}: X must be 2-D, got shape {X.shape}")
    if check_finite:
        R = finite_max_abs(X)
        if R != R:                                      # NaN: some value is not finite
            _not_finite(j)
    return X


def _not_finite(j):
    raise ValueError(f"block {j}: X contains NaN or infinity")


def _labels_of(y):
    """``np.unique(y)`` without the sort when y holds at most two distinct labels."""
    if y.shape[0] == 0:
        return np.unique(y)
    first = y[0]
    rest = y != first
    if not rest.any():
        return y[:1].copy()
    second = y[np.argmax(rest)]
    if not (rest & (y != second)).any():
        both = np.array([first, second], dtype=y.dtype)
        return both if both[0] < both[1] else both[::-1].copy()
    return np.unique(y)                                 # three or more: refused later


def _as_labels(y, j):
    if hasattr(y, "to_numpy"):
        y = y.to_numpy()
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1:
        raise ValueError(f"block {j}: y must be 1-D, got shape {y.shape}")
    return y


def _label_scan(y, j):
    y = _as_labels(y, j)
    return np.unique(y), y.shape[0]


def _permutation(entropy, epoch, j, n):
    return np.random.default_rng([entropy, epoch, j]).permutation(n)


def _ordered(X, y, entropy, epoch, j):
    if entropy is None:
        return X, y
    perm = _permutation(entropy, epoch, j, X.shape[0])
    return X[perm], y[perm]


def _signs(y, classes):
    return np.where(y == classes[1], 1.0, -1.0)


def _block(X, y, entropy, epoch, j, check_finite=True):
    """Block j's rows and label signs, checked against each other, in its pass order."""
    X = _as_block(X, j, check_finite)
    y = _as_labels(y, j)
    if X.shape[0] != y.shape[0]:
        raise ValueError(f"block {j}: X has {X.shape[0]} rows, y {y.shape[0]}")
    return _ordered(X, y, entropy, epoch, j)


def _summary(X, y, beta, entropy, epoch, j):
    """The map step of the moments, in the same read as the label scan: ``((labels, moments),
    meta)``, with the moments of the rows labelled ``labels[-1]`` in class slot 1 and the
    others in slot 0 (the client, once it has every block's labels, maps slots to classes:
    :func:`_moments_of`)."""
    t0 = time.thread_time()
    with _one_blas_thread():
        X, y = _block(X, y, entropy, epoch, j, check_finite=False)
        labels = _labels_of(y)
        s = np.where(y == labels[-1], 1.0, -1.0) if labels.shape[0] else np.zeros(0)
        mom = _state.moments_of_rows(X, s, beta)       # its max_abs is NaN if X is not finite
        if mom.max_abs != mom.max_abs:
            _not_finite(j)
    meta = {"block": j, "rows": X.shape[0], "p": X.shape[1], "labels": labels,
            "kind": "sparse" if sp.issparse(X) else "dense", "cpu": time.thread_time() - t0}
    return (labels, mom), meta


def _meta_of(summary):
    return summary[1]


def _summaries(calls):
    """:func:`_summary` of each block of a group (the blocks one worker holds), in one task."""
    return [_summary(*c) for c in calls]


def _passes(calls):
    """:func:`_block_pass` of each block of a group, in one task."""
    return [_block_pass(*c) for c in calls]


def _fixed_passes(calls):
    """:func:`_fixed_block_pass` of each block of a group, in one task."""
    return [_fixed_block_pass(*c) for c in calls]


def _reduce_moments(groups, classes, find_classes, beta, mode, K):
    """The reduction of the moments round, in one task on a worker: ``(info, priors)``.

    ``groups``: the :func:`_summaries` of every group. The classes are found from every
    block's labels (``find_classes``; checked against the user's ``classes``) or given,
    the blocks are checked for one p and one kind, the slots mapped to the classes, and
    the fixed trees of :mod:`sosl.state` merge the block moments in block order:
    ``info["total"]`` the moments of all rows; ``priors[j]`` block j's prior, the moments
    of all the other blocks (``mode="global"``: up-sweep and down-sweep) or None. The same
    trees, hence the same bits, wherever they run (client or worker).
    """
    summ = sorted((s for g in groups for s in g), key=lambda s: s[1]["block"])
    metas = [s[1] for s in summ]
    if find_classes:
        classes = _classes([m["labels"] for m in metas], classes, K)
    p = _check_metas(metas)
    leaves = [_moments_of(s, classes) for s in summ]

    def op(a, b):
        return _merge_op(a, b, beta)

    if mode == "global":
        total, priors = _state.tree_exclusive(leaves, op, None)
    else:
        total, priors = _state.tree_reduce(leaves, op), [None] * K
    info = {"classes": classes, "p": p, "rows": [m["rows"] for m in metas],
            "cpu": sum(m["cpu"] for m in metas), "total": total}
    return info, priors


def _info_of(ctx):
    return ctx[0]


def _check_metas(metas):
    """The blocks' common p; blocks of different p or of both kinds are refused."""
    ps = sorted({m["p"] for m in metas})
    if len(ps) > 1:
        by = {p: [m["block"] for m in metas if m["p"] == p][:5] for p in ps}
        raise ValueError(f"blocks of different numbers of features: {by} (features: "
                         "blocks); every block needs the same columns")
    kinds = sorted({m["kind"] for m in metas})
    if len(kinds) > 1:
        by = {k: [m["block"] for m in metas if m["kind"] == k][:5] for k in kinds}
        raise ValueError(f"mixed dense and sparse blocks: {by}; convert them to one kind")
    return ps[0]


def _moments_of(summary, classes):
    """The block's moments with slot k holding class ``classes[k]`` (a swap of the two slots
    when the block's top label is the negative class; exact)."""
    labels, mom = summary[0]
    if labels.shape[0] and labels[-1] != classes[1]:
        mom = _state.Moments(mom.counts[::-1].copy(), mom.weights[::-1].copy(),
                             mom.means[::-1].copy(), mom.scatter[::-1].copy(), mom.max_abs)
    return mom


def _moments_nbytes(p):
    """Bytes of one block's class moments at p features (two scatters, two means)."""
    return 8 * (2 * p * p + 2 * p + 5)


def _merge_op(a, b, beta):
    return _state.merge_moments(a, b, beta)


def _in_sample_calibration(est, X, s):
    """[A, H] learned as a fresh fit learns it: from the scores of the final model on the
    last ``_IN_SAMPLE_ROWS`` rows of the pass, in pass order (``sosl._base``)."""
    if X.shape[0] > _IN_SAMPLE_ROWS:
        X, s = X[-_IN_SAMPLE_ROWS:], s[-_IN_SAMPLE_ROWS:]
    return _calibration_of_scores(est._raw_scores(X), s)


def _calibration_of_scores(f, s):
    """[A, H] from the Platt steps on scores f with label signs s, in order (non-finite
    scores left out)."""
    from .._core._calibration import platt_steps
    calib = np.array([1.0, 1.0])
    if f.shape[0] > 1:
        keep = np.isfinite(f)
        if not keep.all():
            f, s = f[keep], s[keep]
        f, s = np.ascontiguousarray(f), np.ascontiguousarray(s)
    elif not np.isfinite(f[0]):
        return calib
    platt_steps(f, s, calib)
    return calib


def _block_pass(proto, X, y, ctx, w0, t0, entropy, epoch, j, keep_state):
    """One pass of block j from its prior moments (the moments of the other blocks, or
    none), the weights w0 and its own step count t0. ``ctx`` is the moments round's
    ``(info, priors)`` (:func:`_reduce_moments`): the classes and p in ``info``, block j's
    prior moments ``priors[j]``; ``proto`` the learner's state without them."""
    t_start = time.thread_time()
    info, priors = ctx
    template = dataclasses.replace(proto, classes=info["classes"], n_features=info["p"])
    others = priors[j]
    with _one_blas_thread():
        # the moments round read these rows and found them finite (partial_fit checks
        # them again): no third scan
        X, y = _block(X, y, entropy, epoch, j, check_finite=False)
        p = X.shape[1]
        moments = _state.empty_moments(p) if others is None else others
        w = np.zeros(p) if w0 is None else w0
        est = _state.from_state(_state.linear_state(template, moments, w, t0, t0, [1.0, 1.0]))
        if X.shape[0] == 0:                 # an empty block plays no round
            est.calibration_ = np.array([1.0, 1.0])
        else:
            # the learner's pass as its fit plays it (the state is this task's own: no
            # backup, no prequential Platt steps, no rescan of the rows the moments round
            # checked), then the in-sample Platt scaling of a fresh fit from [1, 1] on the
            # last rows of the pass: partial_fit's rounds to the bit, and the calibration
            # it would be given afterwards, with less CPU than partial_fit
            est._learn(X, _signs(y, template.classes), fresh=True)
        calib = est.calibration_
        out = {"block": j, "t": int(est.t_), "coef": est.w_.copy(), "calibration": calib,
               "max_abs": float(est.max_abs_),
               "state": _state.get_state(est) if keep_state else None}
    out["cpu"] = time.thread_time() - t_start
    return out


def _fixed_block_pass(codes, X, y, ctx, w0, t0, entropy, epoch, j):
    """One pass of block j against the fixed global moments (``moments="fixed"``; the
    classes and the moments of all rows, ``total``, from the round's ``ctx = (info, _)``):
    the kernel's :func:`sosl._core._linear.fixed_pass` from w0 and the block's own step
    count t0, then the block's Platt scaling, in-sample as a fresh fit learns it (the
    final model's scores on the last rows of the pass, in pass order). Shuffled rows are
    visited through an index order (no copy of a dense block); sparse rows are densified
    in pieces of ``_FIXED_PIECE_VALUES`` values."""
    from .._core._linear import decision_rows, fixed_pass
    t_start = time.thread_time()
    lam, eta, schedule, loss, blas_min_p = codes
    classes, total = ctx[0]["classes"], ctx[0]["total"]
    with _one_blas_thread():
        X = _as_block(X, j, check_finite=False)         # the moments round checked them
        y = _as_labels(y, j)
        if X.shape[0] != y.shape[0]:
            raise ValueError(f"block {j}: X has {X.shape[0]} rows, y {y.shape[0]}")
        n, p = X.shape
        s = _signs(y, classes)
        w = np.zeros(p) if w0 is None else np.array(w0, dtype=np.float64)
        calib = np.array([1.0, 1.0])
        t = t0
        if n:
            order = (None if entropy is None
                     else _permutation(entropy, epoch, j, n).astype(np.intp))
            W = np.where(total.weights > 0, total.weights, 1.0)
            Sigma = total.scatter / W[:, None, None]
            xbar, N = np.ascontiguousarray(total.means), total.counts
            work = np.empty(4 * p)
            pieces = [(X, s, order)]
            if sp.issparse(X):
                idx = np.arange(n, dtype=np.intp) if order is None else order
                step = max(1, _FIXED_PIECE_VALUES // max(p, 1))
                pieces = ((X[idx[a:a + step]].toarray(), s[idx[a:a + step]], None)
                          for a in range(0, n, step))
            finite = True
            for Xp, sp_, op in pieces:
                t, finite = fixed_pass(Xp, sp_, op, w, xbar, Sigma, N, t, lam, eta, schedule,
                                       loss, blas_min_p, work)
                if not finite:
                    raise FloatingPointError(
                        f"block {j}: the weights became non-finite during the pass (the "
                        "step size is probably too large for this data; try a smaller eta "
                        "or a larger lam, or scale the features)")
            last = np.arange(max(n - _IN_SAMPLE_ROWS, 0), n, dtype=np.intp)
            if order is not None:
                last = order[last]
            Xl = X[last]
            Xl = Xl.toarray() if sp.issparse(Xl) else np.ascontiguousarray(Xl)
            f = np.empty(Xl.shape[0])
            with np.errstate(over="ignore", invalid="ignore"):
                decision_rows(Xl, w, xbar, N, f)
            calib = _calibration_of_scores(f, np.ascontiguousarray(s[last]))
        out = {"block": j, "t": int(t), "coef": w, "calibration": calib}
    out["cpu"] = time.thread_time() - t_start
    return out


def _fixed_codes(est):
    """(lam, eta, schedule, loss, blas_min_p) of a linear learner, for the fixed pass."""
    return (float(est.lam), 0.0 if est.eta is None else float(est.eta), est._schedule(),
            int(est._loss), _FIXED_BLAS_MIN_P)


def _auto_epochs(rows):
    """``n_epochs="auto"``: 2 epochs when the blocks are small (on average fewer than
    ``_AUTO_ROWS`` rows), else 1 (see the class docstring for the measurements)."""
    if len(rows) == 1:                                  # one block: the sequential pass
        return 1
    return 2 if np.mean(rows) < _AUTO_ROWS else 1


def _mix_leaf(res):
    c = res["calibration"]
    return (res["t"], res["t"] * res["coef"], c[1], c[1] * c[0], 1, res["cpu"])


def _mix_add(a, b):
    return tuple(x + y for x, y in zip(a, b))


def _prepared(X, y, classes, j):
    """Block j checked and its label signs, held in memory for the L-BFGS evaluations."""
    X, y = _block(X, y, None, 0, j)
    s = _signs(y, classes)
    pos = (s > 0).astype(np.float64)                    # 1/0 class indicators, for dots
    return X, s, pos, 1.0 - pos


def _block_terms(prep, w, m, s2, loss):
    """Block sums of the batch objective at w: ``(sum psi, X' (d_mu s), A, B, cpu)``.

    Row i of class c (sign s_i) meets the other class o: ``mu_i = s_i (x_i.w - m_o)`` with
    ``m_o = w.xbar_o`` and ``s2_o = w' Sigma_o w`` (the client's, from the global moments).
    ``A[c] = sum_{i in c} d_mu_i s_i`` and ``B[c] = sum_{i in c} d_s2_i`` let the client
    finish the gradient: :func:`_batch_objective`.
    """
    # the loss of _losses.pxd at every row of the block (beside two BLAS/sparse products)
    from .._core._losses import loss_value_grad_rows
    t0 = time.thread_time()
    X, s, pos, neg = prep
    A, B = np.zeros(2), np.zeros(2)
    if X.shape[0] == 0:
        return 0.0, np.zeros(X.shape[1]), A, B, time.thread_time() - t0
    # few n-long temporaries, updated in place (in a dask worker each fresh one is an mmap
    # whose pages fault on first touch); the class sums as dots with the 1/0 indicators
    with _one_blas_thread():
        mu = np.ascontiguousarray(np.asarray(X @ w, dtype=np.float64).ravel())
        mu -= m[1]                                      # positives meet class 0, negatives 1
        mu -= (m[0] - m[1]) * pos
        mu *= s
        s2_o = s2[0] * pos
        s2_o += s2[1] * neg
        val, d_mu, d_s2 = loss_value_grad_rows(loss, mu, s2_o)
        d_mu *= s                                       # d_mu s
        u = np.asarray(X.T @ d_mu).ravel()
        A[0], A[1] = d_mu @ neg, d_mu @ pos
        B[0], B[1] = d_s2 @ neg, d_s2 @ pos
    return float(val.sum()), u, A, B, time.thread_time() - t0


def _add_terms(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3], a[4] + b[4])


def _batch_objective(terms, n, means, covs, lam, w):
    """``F(w)`` and its gradient from the summed block terms (see ``Parallel``, solver).

    ``grad = lam w + (1/n) [X'(d_mu s) - sum_c A_c xbar_o(c) + 2 sum_c B_c Sigma_o(c) w]``
    with ``o(c) = 1 - c``, the class row i of class c is compared with.
    """
    val, u, A, B = terms[:4]
    g = lam * w + (u - A[0] * means[1] - A[1] * means[0]
                   + 2.0 * (B[0] * (covs[1] @ w) + B[1] * (covs[0] @ w))) / n
    return 0.5 * lam * float(w @ w) + val / n, g


def _lbfgs_calibration(template, prep, moments, w, n, j):
    """Block j's Platt steps for the final w (as a fresh fit's: the last rows, in order)."""
    t0 = time.thread_time()
    X, s = prep[:2]
    with _one_blas_thread():
        est = _state.from_state(_state.linear_state(template, moments, w, n, n, [1.0, 1.0]))
        calib = (_in_sample_calibration(est, X, s) if X.shape[0]
                 else np.array([1.0, 1.0]))
    return {"t": X.shape[0], "coef": w, "calibration": calib, "cpu": time.thread_time() - t0}


def _independent_fit(template_est, X, y, classes, entropy, j):
    t_start = time.thread_time()
    with _one_blas_thread():
        X, y = _block(X, y, entropy, 0, j)
        if X.shape[0] == 0:
            raise ValueError(f"block {j} has no rows: {type(template_est).__name__} fits one "
                             "model per block and cannot fit an empty one (drop the block)")
        est = clone(template_est).partial_fit(X, y, classes=classes)
        st = _state.get_state(est)
    return st, {"block": j, "rows": X.shape[0], "p": X.shape[1],
                "kind": "sparse" if sp.issparse(X) else "dense",
                "cpu": time.thread_time() - t_start}


# -- placement --------------------------------------------------------------------------------
def _holders(Xs):
    """For each block, the workers of the current ``distributed`` client that already hold
    it in memory (None: no client, or the block is not computed yet)."""
    return _where(Xs)[0]


def _where(Xs, ys=()):
    """``(holders, client, stored)``: :func:`_holders` of the X blocks, the current
    ``distributed`` client (or None), and for each X block then each y block whether its
    own key is in cluster memory (a persisted array's chunk: no task computes it), in one
    query of the scheduler."""
    import sys
    none = [None] * len(Xs), None, [False] * (len(Xs) + len(ys))
    if "distributed" not in sys.modules:
        return none
    import distributed
    try:
        client = distributed.Client.current(allow_global=True)   # as_current() too
    except ValueError:                                  # no client: a local scheduler
        return none
    keys = []
    for Xb in Xs:
        if not hasattr(Xb, "key"):                      # an in-memory block
            return none[:1] + (client,) + none[2:]
        futs = distributed.futures_of(Xb)               # a task over one stored block
        keys.append(futs[0].key if len(futs) == 1 else Xb.key)
    own = [getattr(b, "key", None) for b in list(Xs) + list(ys)]
    who = client.sync(client.scheduler.who_has,
                      keys=list(dict.fromkeys(keys + [k for k in own if k is not None])))
    return ([sorted(who.get(k, ())) or None for k in keys], client,
            [k is not None and bool(who.get(k)) for k in own])


def _task(holders, j, fn, *args):
    """``delayed(fn)(*args)`` for block j, placed on the workers that hold it (None: no
    restriction; see :func:`_placement`)."""
    return _task_on(holders[j], fn, *args)


def _groups(holders):
    """The blocks in groups that run as one task a round: the blocks held by one worker
    (its first holder), in block order, and each block of unknown place alone. Each task
    has a fixed cost to the scheduler and its worker; a group's task runs its blocks one after the
    other, as the worker would have run their tasks, so the results are the same."""
    out, by = [], {}
    for j, h in enumerate(holders):
        if h is None:
            out.append([j])
        elif h[0] in by:
            by[h[0]].append(j)
        else:
            by[h[0]] = [j]
            out.append(by[h[0]])
    return out


def _group_workers(holders, group):
    """The worker a group's task goes to (its blocks' common holder), or None."""
    return None if holders[group[0]] is None else [holders[group[0]][0]]


def _placement(workers):
    """The keywords that send a task to ``workers`` (None: anywhere). A loose restriction:
    dask's own placement can pick another worker when one is busier (moving the block,
    tens of MB), which this prevents while a holder lives; if they are lost, any worker
    may run the task."""
    return {} if workers is None else {"workers": workers, "allow_other_workers": True}


def _task_on(workers, fn, *args, priority=0):
    """``delayed(fn)(*args)`` placed on ``workers`` (:func:`_placement`); a task of higher
    ``priority`` runs first among the ready tasks of its worker."""
    from dask import delayed
    where = _placement(workers)
    if priority:
        where["priority"] = priority
    with _dask().annotate(**where):
        return delayed(fn)(*args)


class _Graphs:
    """Rounds as dask graphs (``delayed``), for any scheduler: each :meth:`gather` is one
    ``dask.compute``; a held task (``dask.persist``) stays in cluster memory while
    referenced (with a local scheduler it is computed at once)."""

    def __init__(self, Xs, ys, holders):
        dask = _dask()
        self.Xs, self.ys = Xs, ys
        self.blocks = Xs, ys
        # blocks already in cluster or client memory: the passes can be submitted before
        # the moments round ends; blocks a task still has to load would then be held from
        # their moments task to their pass task, so for them the client waits for the
        # round (each round loads them again, as the fit's docstring says)
        self.wait_rounds = not all(h is not None or not dask.is_dask_collection(Xb)
                                   for h, Xb in zip(holders, Xs))

    @staticmethod
    def submit(workers, fn, *args, priority=0):
        return _task_on(workers, fn, *args, priority=priority)

    @staticmethod
    def hold(items):
        return list(_dask().persist(*items))

    @staticmethod
    def gather(items):
        return list(_dask().compute(*items))

    @staticmethod
    def value(x):
        from dask import delayed
        return delayed(x)                               # one key, shared by the tasks


class _Futures:
    """Rounds as futures of a ``distributed`` client, used when every X block is a future
    in cluster memory (a persisted array or dataframe): ``client.submit`` per task (a
    graph of ``delayed`` calls costs the client more per task to build), the dependencies
    left to the scheduler, so the moments round, its reduction and the passes go out at
    once and the client waits once. The same task functions as :class:`_Graphs`: the same bits."""

    wait_rounds = False

    def __init__(self, client, blocks, Xs, ys):
        self.client = client
        self.blocks = blocks
        self.Xs, self.ys = Xs, ys

    def submit(self, workers, fn, *args, priority=0):
        return self.client.submit(fn, *args, pure=False, priority=priority,
                                  **_placement(workers))

    @staticmethod
    def hold(items):
        return list(items)

    def gather(self, items):
        return self.client.gather(items)

    @staticmethod
    def value(x):
        return x                                        # small (w): in each task's message


def _engine(Xs, ys):
    """``(holders, engine)``: :func:`_holders` of the X blocks, and :class:`_Futures` when
    every X block is in the cluster memory of the current distributed client and every y
    block too or in the client's, else :class:`_Graphs`."""
    dask = _dask()
    holders, client, stored = _where(Xs, ys)
    K = len(Xs)
    if client is not None and all(stored[:K]) and all(
            ok or not dask.is_dask_collection(b) for ok, b in zip(stored[K:], ys)):
        from distributed import Future
        fx = [Future(b.key, client) for b in Xs]
        fy = [Future(b.key, client) if ok else b for ok, b in zip(stored[K:], ys)]
        return holders, _Futures(client, (Xs, ys), fx, fy)
    return holders, _Graphs(Xs, ys, holders)


# -- input ------------------------------------------------------------------------------------
def _classes(labels, classes, K):
    """The two classes, from the labels found in each block (and the user's ``classes``)."""
    found = np.unique(np.concatenate([np.asarray(u) for u in labels]))
    if found.shape[0] != 2:
        raise ValueError(f"the labels over all {K} blocks are {found.tolist()[:5]}: a "
                         "binary learner needs exactly two classes (a class missing from "
                         "every block cannot be learned)")
    if classes is None:
        return found
    classes = np.asarray(classes)
    if classes.shape != (2,) or set(classes.tolist()) != set(found.tolist()):
        raise ValueError(f"classes={classes.tolist()} differ from the labels found "
                         f"{found.tolist()}")
    return classes


def _width(X, y):
    """The number of feature columns, when X tells it without computing (else None)."""
    dask = _dask()
    if isinstance(X, (list, tuple)):
        if not X or any(dask.is_dask_collection(b) or not hasattr(b, "shape")
                        or len(b.shape) != 2 for b in X):
            return None                                 # delayed blocks: not known yet
        return max(int(b.shape[1]) for b in X)
    if dask.is_dask_collection(X) and not hasattr(X, "chunks") \
            and not hasattr(X, "columns"):
        return None
    if hasattr(X, "columns"):                           # a (dask) dataframe
        return len(X.columns) - (1 if isinstance(y, str) and y in X.columns else 0)
    shape = getattr(X, "shape", None)
    if shape is not None and len(shape) == 2 and not np.isnan(shape[1]):
        return int(shape[1])
    return None


def _known_rows(X, Xs):
    """Rows of each block when X tells them without computing (else None)."""
    dask = _dask()
    if dask.is_dask_collection(X) and hasattr(X, "chunks"):
        rows = X.chunks[0]
    elif isinstance(X, (list, tuple)) or not dask.is_dask_collection(X):
        rows = tuple(b.shape[0] if hasattr(b, "shape") and len(b.shape) == 2 else np.nan
                     for b in Xs)
    else:
        return None
    if len(rows) != len(Xs) or any(r != r for r in rows):
        return None
    return [int(r) for r in rows]


def _split(X, y):
    """Lists of row blocks of X and y (delayed objects or in-memory blocks)."""
    dask = _dask()
    if isinstance(X, (list, tuple)):
        if not isinstance(y, (list, tuple)) or len(X) != len(y):
            raise ValueError("a list of X blocks needs a list of y blocks of the same length")
        if not X:
            raise ValueError("Parallel.fit got no blocks: X and y are empty lists, there are "
                             "no rows to learn from")
        return list(X), list(y)
    if dask.is_dask_collection(X) and hasattr(X, "npartitions") and hasattr(X, "columns"):
        if isinstance(y, str):                          # the label is a column of X
            if y not in X.columns:
                raise ValueError(f"label column {y!r} is not a column of X (columns: "
                                 f"{list(X.columns)[:8]})")
            X, y = X.drop(columns=[y]), X[y]
        Xs = list(X.to_delayed())                       # a dask dataframe: its partitions
        if not (dask.is_dask_collection(y) and hasattr(y, "to_delayed")):
            raise TypeError("with a dask dataframe X, y must be a dask series or array")
        ys = list(np.ravel(y.to_delayed()))
    elif dask.is_dask_collection(X) and hasattr(X, "chunks"):
        if X.ndim != 2:
            raise ValueError(f"X must be a 2-D dask array, got {X.ndim} dimension(s)")
        if len(X.chunks[1]) > 1:
            X = X.rechunk({1: -1})                      # whole rows per block
        Xs = list(X.to_delayed()[:, 0])
        if dask.is_dask_collection(y) and hasattr(y, "chunks"):
            if y.ndim != 1:
                raise ValueError(f"y must be 1-D, got {y.ndim} dimensions")
            known = not any(np.isnan(c) for c in X.chunks[0] + y.chunks[0])
            if known and y.chunks[0] != X.chunks[0]:
                if y.shape[0] != X.shape[0]:
                    raise ValueError(f"X has {X.shape[0]} rows, y {y.shape[0]}")
                y = y.rechunk((X.chunks[0],))
            ys = list(y.to_delayed())
        elif dask.is_dask_collection(y):
            ys = list(np.ravel(y.to_delayed()))
        else:
            y = np.asarray(y)
            bounds = np.cumsum((0,) + X.chunks[0])
            if np.isnan(bounds).any() or y.shape[0] != bounds[-1]:
                raise ValueError("y in memory needs X with known block sizes and as many rows")
            bounds = bounds.astype(np.int64)
            ys = [y[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
    elif dask.is_dask_collection(X):
        raise TypeError(f"X must be a dask array or dask dataframe, got {type(X).__name__}")
    else:
        Xs, ys = [X], [y]                               # in memory: one block
    if len(Xs) != len(ys):
        raise ValueError(f"X has {len(Xs)} blocks, y {len(ys)}: give them the same row blocks")
    if not Xs:
        raise ValueError("X has no blocks")
    return Xs, ys


def _within(seconds, fn, *args):
    """``fn(*args)`` in a helper thread; TimeoutError if it has not returned in time (its
    result, if it comes later, is dropped: the caller assigns nothing)."""
    box: dict = {}

    def run():
        try:
            box["value"] = fn(*args)
        except BaseException as exc:                    # re-raised in the caller
            box["error"] = exc
    worker = threading.Thread(target=run, daemon=True, name="sosl-parallel-fit")
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        raise TimeoutError(f"Parallel.fit did not finish within timeout={seconds} s (a "
                           "worker paused over its memory limit waits without an error); "
                           "the wrapper is left as it was")
    if "error" in box:
        raise box["error"]
    return box["value"]


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

    def __init__(self, estimator, n_epochs="auto", moments="global", shuffle=False,
                 random_state=None, solver="online", max_iter=200, timeout=None):
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
        if self.timeout is not None and not (
                isinstance(self.timeout, Real) and not isinstance(self.timeout, bool)
                and self.timeout > 0):
            raise ValueError(f"timeout must be None or a number of seconds > 0, got "
                             f"{self.timeout!r}")
        if not (isinstance(self.n_epochs, str) and self.n_epochs == "auto") and not (
                isinstance(self.n_epochs, Integral) and not isinstance(self.n_epochs, bool)
                and self.n_epochs >= 1):
            raise ValueError(f"n_epochs must be 'auto' or an integer >= 1, got "
                             f"{self.n_epochs!r}")
        if self.solver not in ("online", "lbfgs"):
            raise ValueError(f"solver must be 'online' or 'lbfgs', got {self.solver!r}")
        if not (isinstance(self.max_iter, Integral) and not isinstance(self.max_iter, bool)
                and self.max_iter >= 1):
            raise ValueError(f"max_iter must be an integer >= 1, got {self.max_iter!r}")
        if self.moments not in ("global", "local", "fixed"):
            raise ValueError(f"moments must be 'global', 'local' or 'fixed', got "
                             f"{self.moments!r}")
        if not isinstance(self.shuffle, (bool, np.bool_)):
            raise ValueError(f"shuffle must be a boolean, got {self.shuffle!r}")
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
    def fit(self, X, y, classes=None):
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
        seen = {}

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
    def to_estimator(self):
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

    def decision_function(self, X):
        """``estimator_.decision_function`` (block by block for a dask array)."""
        return self._apply("decision_function", X)

    def predict(self, X):
        """``estimator_.predict`` (block by block for a dask array)."""
        return self._apply("predict", X)

    def predict_proba(self, X):
        """``estimator_.predict_proba`` (block by block for a dask array)."""
        return self._apply("predict_proba", X, two_columns=True)

    def predict_log_proba(self, X):
        """``estimator_.predict_log_proba`` (block by block for a dask array)."""
        return self._apply("predict_log_proba", X, two_columns=True)
