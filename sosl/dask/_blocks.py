"""Row blocks of :class:`sosl.dask.Parallel`: the input cut into blocks, and the tasks that
read one block (its rows checked, its labels, its class moments) and reduce the moments
of all blocks by the fixed trees of :mod:`sosl.state`.

The tasks are module-level functions: picklable for distributed workers.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from .. import state as _state


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


def _as_block(X, j, check_finite=True):
    """A block as float64 C-contiguous ndarray or canonical CSR; pandas frames densified.

    ``check_finite=False`` skips the scan of a dense block for non-finite values (the
    moments round finds them in its own read: :func:`_summary`).

    Arrays that arrive from another worker can sit at an address that is not a multiple
    of 8 (``flags.aligned`` False); OpenBLAS then takes another path and rounds
    differently, so such blocks are copied: the result must not depend on where a block
    was computed (measured: a dgemv on a deserialized block differed in the last bits).
    """
    from .._core._linear import finite_max_abs
    from .._input import _canonical_csr
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
        Xs, ys = _split_frame(dask, X, y)
    elif dask.is_dask_collection(X) and hasattr(X, "chunks"):
        Xs, ys = _split_array(dask, X, y)
    elif dask.is_dask_collection(X):
        raise TypeError(f"X must be a dask array or dask dataframe, got {type(X).__name__}")
    else:
        Xs, ys = [X], [y]                               # in memory: one block
    if len(Xs) != len(ys):
        raise ValueError(f"X has {len(Xs)} blocks, y {len(ys)}: give them the same row blocks")
    if not Xs:
        raise ValueError("X has no blocks")
    return Xs, ys


def _split_frame(dask, X, y):
    """The partitions of a dask dataframe X and of its labels (a column of X or a series)."""
    if isinstance(y, str):                          # the label is a column of X
        if y not in X.columns:
            raise ValueError(f"label column {y!r} is not a column of X (columns: "
                             f"{list(X.columns)[:8]})")
        X, y = X.drop(columns=[y]), X[y]
    Xs = list(X.to_delayed())                       # a dask dataframe: its partitions
    if not (dask.is_dask_collection(y) and hasattr(y, "to_delayed")):
        raise TypeError("with a dask dataframe X, y must be a dask series or array")
    return Xs, list(np.ravel(y.to_delayed()))


def _split_array(dask, X, y):
    """The row blocks of a 2-D dask array X (whole rows each) and the matching blocks of
    y (a dask array rechunked to X's rows, another dask collection, or y in memory)."""
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
        return Xs, list(y.to_delayed())
    if dask.is_dask_collection(y):
        return Xs, list(np.ravel(y.to_delayed()))
    y = np.asarray(y)
    bounds = np.cumsum((0,) + X.chunks[0])
    if np.isnan(bounds).any() or y.shape[0] != bounds[-1]:
        raise ValueError("y in memory needs X with known block sizes and as many rows")
    bounds = bounds.astype(np.int64)
    return Xs, [y[a:b] for a, b in zip(bounds[:-1], bounds[1:])]

