"""The per-block solvers of :class:`sosl.dask.Parallel`: the pass started from the other
blocks' moments (``moments="global"``/``"local"``), the fixed-moments pass
(``moments="fixed"``), the batch objective's block terms (``solver="lbfgs"``) and the
independent fit of learners merged by :func:`sosl.state.merge`; the Platt calibration of
their results.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone

from .. import state as _state
from ._blocks import _as_block, _as_labels, _block, _one_blas_thread, _permutation, _signs

_IN_SAMPLE_ROWS = 10_000            # as a fresh fit's Platt scaling (sosl._base)
_AUTO_ROWS = 5_000                  # n_epochs="auto": 2 epochs below this many rows per block
#: the fixed pass forms Sigma w with BLAS dsymv from this dimension on, below it with the
#: kernel's own loops (the learner's threshold is 32, where its rank-k updates decide):
#: benchmarks/bench_distributed.py (section 5) measures both: the own loops win below
#: this dimension, dsymv from about p = 128, the two are even in between
_FIXED_BLAS_MIN_P = 64
#: sparse rows of the fixed pass are densified this many values at a time (8 MB)
_FIXED_PIECE_VALUES = 1 << 20


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
            pieces: Any = [(X, s, order)]
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


def _passes(calls):
    """:func:`_block_pass` of each block of a group, in one task."""
    return [_block_pass(*c) for c in calls]


def _fixed_passes(calls):
    """:func:`_fixed_block_pass` of each block of a group, in one task."""
    return [_fixed_block_pass(*c) for c in calls]
