"""Per-round cost of OKAUC-M (and KOIL, POLK) on CSR rows: sparse slots at p = 2^14 and
2^20 against the dense (densified) path at p = 2^14.

Rows: lengths 1 + Poisson(``--nnz`` - 1) and values 1/sqrt(length) (the shape of
l2-normalised bag-of-words rows), each at distinct columns drawn uniformly from p; the
matrices at p = 2^14 and p = 2^20 have exactly the same row lengths and values and differ
only in p. Labels are positive with probability 0.3. Gaussian kernel (gamma = 1), budgets
``--budget`` + ``--budget`` (FIFO, eq. 28), lam = 1e-2, eta = 1/(lam t).

A model is first warmed on ``--warm`` rows so that both buffers are full (every timed
round removes a vector and transfers its weight), then timed on the next rows. Two
figures, each the minimum over ``--repeat`` interleaved repeats of the process CPU time:

* ``pass us/round``: the typed pass alone on a copy of the warmed state:
  ``kernel_pass_csr`` (sparse slots, the merges of ``_kfun.pxd``) at both p, and the dense
  ``kernel_pass`` on the same rows densified at p = 2^14;
* ``partial_fit us/row``: the estimator call, which also scores the batch with the model
  before the call (the prequential Platt scaling) and copies the state: a model fitted on
  CSR (sparse slots) at both p, and a model fitted dense at p = 2^14 fed the CSR rows
  (densified by the base a block at a time, the path every CSR call took before the
  sparse slots).

The same three ``partial_fit`` figures are printed for ``KOIL(budget=--budget, gamma=1)``
(its buffers hold only the instances that changed the model, so they may not be full
after the warm-up; their fill is printed), and for ``POLK(eta=0.5, lam=1e-2, gamma=1)``
(hinge loss, constant step, budget eps = eta^{3/2}: its dictionary size is set by the
KOMP projections, not by a budget; the model orders after the warm-up and at the end are
printed).

The dense path is not run at p = 2^20: its support vectors alone would take
2 B p 8 bytes (1.7 GB at B = 100); the memory of each fitted model is printed. Ratios are
taken within the run. Expected: the sparse figures at 2^14 and 2^20 within ~1.3x of each
other (the cost depends on nnz, not on p; what remains is cache behaviour), and the dense
path slower by about p / (2 nnz).

Usage: ``python benchmarks/bench_kernel_sparse.py [--repeat 5] [--budget 100] [--nnz 16]
[--warm 600] [--rows 1500] [--dense-rows 300] [--seed 0]``
"""

import argparse
import pickle
import sys

import numpy as np
import scipy.sparse as sp

from sosl import KOIL, OKAUCM, POLK
from sosl._core import _okauc
from sosl._core._codes import Loss, Schedule, Transfer
from sosl._core._kparams import kernel_spec, step_spec
from sosl.kernels import KERNEL_CODES

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _timing import interleaved_min  # noqa: E402

LAM, GAMMA = 1e-2, 1.0


def _rows(lengths, p, rng):
    """CSR rows with the given lengths at distinct uniform columns of p; values 1/sqrt(len)."""
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    cols = np.concatenate([np.sort(rng.choice(p, size=k, replace=False)) for k in lengths])
    data = np.repeat(1.0 / np.sqrt(lengths), lengths)
    return sp.csr_matrix((data, cols.astype(np.int32), indptr), shape=(lengths.shape[0], p))


def _nbytes(model):
    total = sum(v.nbytes for v in vars(model).values() if isinstance(v, np.ndarray))
    sv = model.support_vectors_
    if sp.issparse(sv):
        total += sv.data.nbytes + sv.indices.nbytes + sv.indptr.nbytes
    return total


def _pass_args(m):
    return (m.alpha_buf_.copy(), m.gram_buf_.copy(), m.f_buf_.copy(), m.capacity_,
            m.counts_.copy(), m.heads_.copy())


def _tail(m, M):
    return (m.t_, step_spec(0.0, LAM, Schedule.STEP_INV_LAM_T, Loss.LOSS_M),
            kernel_spec(KERNEL_CODES["gaussian"], GAMMA, 3.0, 1.0),
            int(Transfer.TRANSFER_OPTIMAL), np.zeros(3 * M), np.zeros((0, 2)))


def _sparse_pass(m, X, s):
    order = np.arange(X.shape[0], dtype=np.intp)
    M = m.alpha_buf_.shape[0]
    L = max(m.sv_ind_.shape[1], int(np.diff(X.indptr).max()))
    ind = np.zeros((M, L), dtype=np.int32)
    val = np.zeros((M, L))
    ind[:, :m.sv_ind_.shape[1]] = m.sv_ind_
    val[:, :m.sv_val_.shape[1]] = m.sv_val_
    a, G, fb, cap, count, head = _pass_args(m)

    def run():
        _okauc.kernel_pass_csr(X.data, X.indices, X.indptr, s, order, ind.copy(), val.copy(),
                                m.sv_nnz_.copy(), a.copy(), G.copy(), fb.copy(), cap,
                                count.copy(), head.copy(), *_tail(m, M))
    return run


def _dense_pass(m, X, s):
    order = np.arange(X.shape[0], dtype=np.intp)
    M = m.alpha_buf_.shape[0]
    a, G, fb, cap, count, head = _pass_args(m)

    def run():
        _okauc.kernel_pass(X, s, order, m.sv_buf_.copy(), a.copy(), G.copy(), fb.copy(), cap,
                            count.copy(), head.copy(), *_tail(m, M))
    return run


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--budget", type=int, default=100)
    parser.add_argument("--nnz", type=int, default=16)
    parser.add_argument("--warm", type=int, default=600)
    parser.add_argument("--rows", type=int, default=1500)
    parser.add_argument("--dense-rows", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    for name in ("repeat", "budget", "nnz", "warm", "rows", "dense_rows"):
        if getattr(args, name) < 1:
            print(f"bench_kernel_sparse: --{name.replace('_', '-')} must be >= 1",
                  file=sys.stderr)
            return 2
    rng = np.random.default_rng(args.seed)
    n = args.warm + args.rows
    lengths = 1 + rng.poisson(args.nnz - 1, n)
    y = (rng.random(n) < 0.3).astype(int)
    s = np.where(y == 1, 1.0, -1.0)
    warm, rest = slice(0, args.warm), slice(args.warm, n)
    nd = min(args.dense_rows, args.rows)
    dense_rest = slice(args.warm, args.warm + nd)
    mats = {"2^14": _rows(lengths, 1 << 14, rng), "2^20": _rows(lengths, 1 << 20, rng)}
    kw = dict(lam=LAM, gamma=GAMMA, budget=args.budget)
    models = {p: OKAUCM(**kw).fit(X[warm], y[warm]) for p, X in mats.items()}
    X14 = mats["2^14"]
    dense_model = OKAUCM(**kw).fit(X14[warm].toarray(), y[warm])
    assert all(np.all(m.counts_ == args.budget) for m in models.values()), "buffers not full"
    Xd = X14[dense_rest].toarray()
    sr, sd = np.ascontiguousarray(s[rest]), np.ascontiguousarray(s[dense_rest])
    runs = {
        "pass, sparse slots, p=2^14": (_sparse_pass(models["2^14"], X14[rest], sr), args.rows),
        "pass, sparse slots, p=2^20": (_sparse_pass(models["2^20"], mats["2^20"][rest], sr),
                                       args.rows),
        "pass, dense slots, p=2^14": (_dense_pass(dense_model, Xd, sd), nd),
    }

    def fit_run(m, X, yy):
        copies = [_copy(m) for _ in range(args.repeat)]     # fresh warmed models, untimed

        def run():
            copies.pop().partial_fit(X, yy)
        return run

    runs["partial_fit, CSR model, p=2^14"] = (fit_run(models["2^14"], X14[rest], y[rest]),
                                              args.rows)
    runs["partial_fit, CSR model, p=2^20"] = (
        fit_run(models["2^20"], mats["2^20"][rest], y[rest]), args.rows)
    runs["partial_fit, dense model, CSR rows, p=2^14"] = (
        fit_run(dense_model, X14[dense_rest], y[dense_rest]), nd)
    kkw = dict(gamma=GAMMA, budget=args.budget, random_state=0)
    koil = {p: KOIL(**kkw).fit(X[warm], y[warm]) for p, X in mats.items()}
    koil_dense = KOIL(**kkw).fit(X14[warm].toarray(), y[warm])
    runs["KOIL partial_fit, CSR model, p=2^14"] = (fit_run(koil["2^14"], X14[rest], y[rest]),
                                                   args.rows)
    runs["KOIL partial_fit, CSR model, p=2^20"] = (
        fit_run(koil["2^20"], mats["2^20"][rest], y[rest]), args.rows)
    runs["KOIL partial_fit, dense model, CSR rows, p=2^14"] = (
        fit_run(koil_dense, X14[dense_rest], y[dense_rest]), nd)
    pkw = dict(eta=0.5, lam=LAM, gamma=GAMMA)
    polk = {p: POLK(**pkw).fit(X[warm], y[warm]) for p, X in mats.items()}
    polk_dense = POLK(**pkw).fit(X14[warm].toarray(), y[warm])
    runs["POLK partial_fit, CSR model, p=2^14"] = (fit_run(polk["2^14"], X14[rest], y[rest]),
                                                   args.rows)
    runs["POLK partial_fit, CSR model, p=2^20"] = (
        fit_run(polk["2^20"], mats["2^20"][rest], y[rest]), args.rows)
    runs["POLK partial_fit, dense model, CSR rows, p=2^14"] = (
        fit_run(polk_dense, X14[dense_rest], y[dense_rest]), nd)
    names = list(runs)
    best = interleaved_min([runs[k][0] for k in names], args.repeat)
    us = {k: 1e6 * b / runs[k][1] for k, b in zip(names, best)}
    print(f"OKAUC-M, Gaussian, budgets {args.budget} + {args.budget}, mean nnz "
          f"{lengths.mean():.1f}, {args.rows} timed rounds ({nd} on the dense path), "
          f"min CPU time of {args.repeat} interleaved repeats")
    print(f"{'':<50} {'us/round':>10}")
    for k in names:
        print(f"{k:<50} {us[k]:>10.2f}")
    for what in ("pass", "partial_fit", "KOIL partial_fit", "POLK partial_fit"):
        group = [k for k in names if k.startswith(what + ",")]
        sparse14, sparse20, dense = group
        print(f"{what}: sparse p=2^20 / sparse p=2^14 = {us[sparse20] / us[sparse14]:.2f}; "
              f"dense p=2^14 / sparse p=2^14 = {us[dense] / us[sparse14]:.1f}")
    print("KOIL buffers after the warm-up (N-, N+): "
          + ", ".join(f"p={p} {koil[p].n_buffer_.tolist()}" for p in koil))
    ends = {p: POLK(**pkw).fit(X[:args.warm + args.rows], y[:args.warm + args.rows])
            for p, X in mats.items()}
    print("POLK model order after the warm-up / after the timed rows: "
          + ", ".join(f"p={p} {polk[p].model_orders_[-1]} / {ends[p].model_orders_[-1]}"
                      for p in polk))
    print("fitted model memory (all arrays): "
          f"CSR p=2^14 {_nbytes(models['2^14']) / 1e6:.2f} MB, "
          f"CSR p=2^20 {_nbytes(models['2^20']) / 1e6:.2f} MB, "
          f"dense p=2^14 {_nbytes(dense_model) / 1e6:.1f} MB "
          f"(dense p=2^20 would hold {2 * args.budget * (1 << 20) * 8 / 1e9:.2f} GB of "
          "support vectors); KOIL: "
          f"CSR p=2^20 {_nbytes(koil['2^20']) / 1e6:.2f} MB, "
          f"dense p=2^14 {_nbytes(koil_dense) / 1e6:.1f} MB; POLK: "
          f"CSR p=2^20 {_nbytes(polk['2^20']) / 1e6:.2f} MB, "
          f"dense p=2^14 {_nbytes(polk_dense) / 1e6:.1f} MB")
    return 0


def _copy(m):
    return pickle.loads(pickle.dumps(m))


if __name__ == "__main__":
    sys.exit(main())
