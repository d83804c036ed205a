"""Throughput of the sparse first-order learners against SGDClassifier on the same CSR rows.

Matrices (all CSR, float64, sorted indices):

* ``sms_spam 2^20``: the SMS Spam Collection (:func:`sosl.datasets.load_sms_spam` from
  ``$SOSL_DATA_DIR``, default ``/work/shared/data``, checksum verified) through
  ``HashingVectorizer(n_features=2**20)`` (:func:`sosl.datasets.vectorize_texts`,
  l2-normalised rows), 5,574 rows;
* ``synthetic 2^14`` and ``synthetic 2^20``: the same row lengths and values, with the
  columns of each row drawn uniformly without replacement from p = 2^14 or 2^20 columns,
  so both have exactly the nnz of sms_spam and differ only in p. Without the text file the
  synthetic matrices get row lengths ~ 1 + Poisson(15) and values 1/sqrt(nnz).

For each matrix and learner (Perceptron, PA-I, OL-UBAUC, SOLAM and FTRL-AUC), one
estimator call over all rows in their order (``fit``, one online pass) is timed in process
CPU time; the learners and ``SGDClassifier(loss="hinge", shuffle=False).partial_fit`` on the
same matrix, a new model per call visiting the rows in the same order, are interleaved
within each repeat, and the minimum over the repeats is kept. Every ratio is to that
in-order SGD; SGD with its default ``shuffle=True`` (the rows permuted inside the call) is
timed too and printed as a labelled extra row, never as the peer. Two figures per matrix:

* ``call rows/s``: rows / CPU seconds of one call over the matrix as it is, the figure a
  user sees, including the O(p) work done once per call (allocating and copying the state,
  the finiteness check, forming ``w_``);
* ``row rows/s``: the marginal rate, ``(K - 1) n / (T(K) - T(1))`` with T(K) the time of a
  call over the matrix stacked K times (``--tile``): the cost of a row without the
  per-call O(p) part.

Each is printed with its ratio to SGD measured in the same run (target >= 0.5 at
p = 2^20), and per learner the ratio of the marginal rate at p = 2^14 to the one at
p = 2^20 on the synthetic matrices (1 when the cost of a row does not depend on p; above
1 from cache misses on the larger weight vector, which SGD shows as well). For scale, the
dense pass of the same learners over the first ``--dense-rows`` rows of the p = 2^14
matrix, densified, is timed as well (O(p) per row).

OAM (``update="seq"`` and ``"gra"``, ``buffer_size=100``) compares each row with the
buffered rows of the other class, so its cost per row is O(buffer_size x nnz), not O(nnz):
it is reported in a section of its own on the two synthetic matrices (same nnz, p = 2^14
and 2^20), with the marginal CPU microseconds per row (tile ``--oam-tile``, the buffers
full for all but the first rows), the ratio of the costs at the two p, and the model's
memory (bytes of its fitted arrays, split into the buffers and the p-long ``w_``)
beside the 2 x buffer_size x p x 8 bytes dense buffers would take.

Usage: ``python benchmarks/bench_sparse.py [--repeat 5] [--tile 20] [--seed 0]
[--dense-rows 400] [--oam-tile 4]``
"""

import argparse
import os
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import SGDClassifier

from sosl import FTRLAUC, OAM, OLUBAUC, PAI, SOLAM, Perceptron
from sosl.datasets import DataDirectoryError, DatasetNotFoundError, load_sms_spam, vectorize_texts

TARGET = 0.5
SGD = "SGD hinge"                   # SGDClassifier(loss="hinge", shuffle=False): the peer
SGD_SHUFFLED = "SGD shuf*"          # shuffle=True (the default): a labelled extra only


def _learners():
    return {"Perceptron": Perceptron(), "PA-I": PAI(C=1.0), "OL-UBAUC": OLUBAUC(lam=1e-4),
            "OL-UBAUC_c": OLUBAUC(lam=1e-4, eta=0.1), "SOLAM": SOLAM(eta=1.0, radius=10.0),
            "FTRL-AUC": FTRLAUC()}


def _oam_learners():
    return {"OAM_seq": OAM(C=1.0, update="seq", buffer_size=100, random_state=0),
            "OAM_gra": OAM(C=1.0, update="gra", buffer_size=100, random_state=0)}


def _memory(model):
    """Bytes of the fitted arrays: (buffers, w_, all)."""
    arrays = {name: getattr(model, name) for name in model._state_names}
    arrays = {name: a for name, a in arrays.items() if isinstance(a, np.ndarray)}
    buffers = sum(a.nbytes for name, a in arrays.items() if name.startswith("buffer_"))
    return buffers, arrays["w_"].nbytes, sum(a.nbytes for a in arrays.values())


def _oam_section(mats, tile, repeat):
    """OAM's marginal CPU time per row at p = 2^14 and 2^20 (same rows), and its memory."""
    labels = ["synthetic 2^14", "synthetic 2^20"]
    tiled = {label: (_canonical(sp.vstack([mats[label][0]] * tile)),
                     np.tile(mats[label][1], tile)) for label in labels}
    best = {}
    for _ in range(repeat):
        for label in labels:
            for name, est in _oam_learners().items():
                for K, (X, y) in ((1, mats[label]), (tile, tiled[label])):
                    sec = _cpu(lambda est=est, X=X, y=y: est.fit(X, y))
                    best[label, name, K] = min(best.get((label, name, K), np.inf), sec)
    n = mats[labels[0]][0].shape[0]
    print(f"\nOAM (buffer_size 100) on CSR rows: marginal CPU us per row, "
          f"(T(K) - T(1)) / ((K - 1) n), K = {tile}; model memory after the pass")
    print(f"{'learner':<9} {'us/row 2^14':>12} {'us/row 2^20':>12} {'2^20/2^14':>10}"
          f" {'buffers 2^14':>13} {'buffers 2^20':>13} {'w_ 2^20':>11}"
          f" {'dense buffers 2^20':>19}")
    for name in _oam_learners():
        us = [1e6 * (best[label, name, tile] - best[label, name, 1]) / ((tile - 1) * n)
              for label in labels]
        mem = []
        for label in labels:
            model = _oam_learners()[name].fit(*mats[label])
            mem.append(_memory(model))
        p = mats[labels[1]][0].shape[1]
        dense = 2 * 100 * p * 8
        print(f"{name:<9} {us[0]:>12.2f} {us[1]:>12.2f} {us[1] / us[0]:>10.2f}"
              f" {mem[0][0] / 2**20:>10.2f} MB {mem[1][0] / 2**20:>10.2f} MB"
              f" {mem[1][1] / 2**20:>8.2f} MB {dense / 2**30:>16.2f} GB")


def _sms(data_dir):
    try:
        texts, y = load_sms_spam(data_dir)
    except DatasetNotFoundError:
        return None
    return vectorize_texts(texts, "hashing", 2 ** 20), y


def _canonical(X):
    X = sp.csr_matrix(X, dtype=np.float64)
    X.sum_duplicates()
    X.sort_indices()
    return X


def _synthetic(template, p, rng):
    """Rows of the template's lengths and values, at random distinct columns of p."""
    indptr, data = template.indptr, template.data
    cols = [np.sort(rng.choice(p, size=hi - lo, replace=False))
            for lo, hi in zip(indptr[:-1], indptr[1:])]
    indices = np.concatenate(cols).astype(np.int32)
    return sp.csr_matrix((data.copy(), indices, indptr.copy()), shape=(template.shape[0], p))


def _fallback(rng, n=5574):
    lengths = 1 + rng.poisson(15, n)
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    data = np.repeat(1.0 / np.sqrt(lengths), lengths)
    X = sp.csr_matrix((data, np.zeros(indptr[-1], np.int32), indptr), shape=(n, 1))
    y = (rng.random(n) < 0.134).astype(int)
    return X, y


def _cpu(fn):
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def _times(mats, repeat):
    """CPU seconds of one call per (matrix, learner), interleaved, min over repeats."""
    best = {}
    for _ in range(repeat):
        for label, (X, y) in mats.items():
            runs = {name: (lambda est=est, X=X, y=y: est.fit(X, y))
                    for name, est in _learners().items()}
            for name, shuffle in ((SGD, False), (SGD_SHUFFLED, True)):
                runs[name] = lambda shuffle=shuffle, X=X, y=y: SGDClassifier(
                    loss="hinge", shuffle=shuffle, random_state=0).partial_fit(X, y,
                                                                               classes=[0, 1])
            for name, run in runs.items():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    sec = _cpu(run)
                best[label, name] = min(best.get((label, name), np.inf), sec)
    return best


def _table(title, labels, names, rate):
    print(f"\n{title}")
    print(f"{'learner':<11}" + "".join(f" {label:>16} {'/SGD':>5}" for label in labels))
    for name in names:
        cells = "".join(f" {rate(label, name):>16.3g} "
                        f"{rate(label, name) / rate(label, SGD):>5.2f}" for label in labels)
        print(f"{name:<11}{cells}")
    print(f"/SGD: to {SGD} = SGDClassifier(loss='hinge', shuffle=False).partial_fit, the same "
          f"rows in the same order; {SGD_SHUFFLED}: shuffle=True, an extra, not the peer")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--tile", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dense-rows", type=int, default=400)
    parser.add_argument("--oam-tile", type=int, default=4)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    data_dir = os.environ.get("SOSL_DATA_DIR", "/work/shared/data")
    try:
        sms = _sms(data_dir)
    except DataDirectoryError as err:
        print(f"bench_sparse: {err}", file=sys.stderr)
        return 2
    mats = {}
    if sms is not None:
        mats["sms_spam 2^20"] = sms
        template, y = sms
    else:
        print(f"(no SMSSpamCollection under {data_dir}/highdim: synthetic row lengths)")
        template, y = _fallback(rng)
    for e in (14, 20):
        mats[f"synthetic 2^{e}"] = (_synthetic(template, 2 ** e, rng), y)
    n = template.shape[0]
    print(f"rows {n}, nnz {template.nnz} ({template.nnz / n:.1f} per row); process CPU time, "
          f"min of {args.repeat} interleaved runs; tile K = {args.tile}; "
          f"target: >= {TARGET}x SGD at p = 2^20")
    tiled = {label: (_canonical(sp.vstack([X] * args.tile)), np.tile(yy, args.tile))
             for label, (X, yy) in mats.items()}
    t1 = _times(mats, args.repeat)
    tk = _times(tiled, args.repeat)
    names = list(_learners()) + [SGD, SGD_SHUFFLED]
    labels = list(mats)
    _table("call rows/s: one call over the matrix, per-call O(p) work included", labels, names,
           lambda label, name: n / t1[label, name])

    def marginal(label, name):
        # nan when noise made T(K) <= T(1): no marginal rate can be read off that pair
        extra = tk[label, name] - t1[label, name]
        return (args.tile - 1) * n / extra if extra > 0 else float("nan")

    _table(f"row rows/s: marginal rate, (K - 1) n / (T(K) - T(1)), K = {args.tile}", labels,
           names, marginal)
    print("\nper-row cost against p (synthetic, same nnz): marginal rate(2^14) / rate(2^20); "
          "fixed per-call CPU ms at 2^14 and 2^20 (T(1) - n / marginal rate)")
    for name in names:
        r = marginal("synthetic 2^14", name) / marginal("synthetic 2^20", name)
        fixed = [1e3 * (t1[f"synthetic 2^{e}", name] - n / marginal(f"synthetic 2^{e}", name))
                 for e in (14, 20)]
        print(f"  {name:<11} {r:5.2f}   fixed {fixed[0]:7.2f} ms  {fixed[1]:7.2f} ms")
    X14, y14 = mats["synthetic 2^14"]
    m = min(args.dense_rows, n)
    Xd = np.ascontiguousarray(X14[:m].toarray())
    yd = y14[:m]
    print(f"\ndense pass over the first {m} rows of synthetic 2^14, densified (before sparse "
          "input, the only way in):")
    for name, est in _learners().items():
        sec = min(_cpu(lambda est=est: est.fit(Xd, yd)) for _ in range(3))
        sparse_rate = marginal("synthetic 2^14", name)
        print(f"  {name:<11} {m / sec:>10.3g} rows/s dense   (CSR marginal: {sparse_rate:.3g} "
              f"rows/s, {sparse_rate / (m / sec):.0f}x)")
    _oam_section(mats, args.oam_tile, args.repeat)


if __name__ == "__main__":
    sys.exit(main())
