"""Throughput of the linear learners, measured in one run and printed as ratios.

For p in {2, 10, 36, 100} and T instances (default 10^5) it times, over the same data:

* the Cython pass of OAUC-M, OAUC-M_c and OAUC-S (``estimator.fit``, one call);
* the NumPy reference of the same pass (on a prefix, scaled to T; it is O(T) exactly);
* scikit-learn's ``SGDClassifier(loss='hinge').partial_fit`` on the whole array in one call;

and prints instances/second with the ratios Cython/reference and Cython/SGD, plus the
per-step cost growth in p (the Cython time per instance divided by p^2 should be flat
for large p). A second table times streaming use: ``partial_fit`` called with one row at
a time, for OAUC-M and for scikit-learn's SGDClassifier.

Usage: ``python benchmarks/bench_linear.py [--T 100000] [--ref-T 3000] [--stream-T 20000]``
"""

import argparse
import time

import numpy as np
from sklearn.linear_model import SGDClassifier

from sosl import OAUCM, OAUCS
from sosl._core import _linear_ref as ref


def _best_of(fn, repeat=3):
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _data(T, p, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(T, p)) / np.sqrt(p)
    y = (X @ rng.normal(size=p) + 0.1 * rng.normal(size=T) > 0.2).astype(int)
    return X, y


def batch_table(T, ref_T, dims):
    rows = []
    for p in dims:
        X, y = _data(T, p)
        s = np.where(y == 1, 1.0, -1.0)
        learners = [("OAUC-M", OAUCM(lam=0.01), ref.LOSS_M, -1.0),
                    ("OAUC-M_c", OAUCM(lam=0.01, eta=0.01), ref.LOSS_M, 0.01),
                    ("OAUC-S", OAUCS(lam=0.01, eta=0.01), ref.LOSS_S, 0.01)]
        sgd = SGDClassifier(loss="hinge", alpha=1e-4, learning_rate="optimal")
        t_sgd = _best_of(lambda: sgd.partial_fit(X, y, classes=[0, 1]))
        for name, est, loss, eta in learners:
            t_cy = _best_of(lambda: est.fit(X, y))
            Xr, sr = X[:ref_T], s[:ref_T]

            def run_ref():
                p_ = Xr.shape[1]
                ref.linear_pass(Xr, sr, np.arange(ref_T, dtype=np.intp), np.zeros(p_),
                                np.zeros((2, p_)), np.zeros((2, p_, p_)),
                                np.zeros(2, dtype=np.int64), 0, 0.01, eta, loss)
            t_ref = _best_of(run_ref, repeat=1) * T / ref_T
            rows.append((p, name, T / t_cy, T / t_ref, t_ref / t_cy, t_sgd / t_cy,
                         1e9 * t_cy / T / p ** 2))
        print(f"  p={p} done", flush=True)
    print(f"\nBatch pass, T={T} (reference timed on {ref_T} rows and scaled), instances/second")
    print(f"{'p':>4} {'learner':<9} {'cython/s':>11} {'numpy ref/s':>12} {'cy/ref':>8} "
          f"{'cy/SGD':>7} {'ns/(step p^2)':>14}")
    for p, name, cy, nr, r1, r2, per in rows:
        print(f"{p:>4} {name:<9} {cy:>11.0f} {nr:>12.0f} {r1:>8.1f} {r2:>7.2f} {per:>14.2f}")
    return rows


def stream_table(T, p=10):
    X, y = _data(T, p, seed=1)
    est = OAUCM(lam=0.01).partial_fit(X[:2], np.array([0, 1]))
    rows = [X[i:i + 1] for i in range(2, T)]
    labels = [y[i:i + 1] for i in range(2, T)]
    t0 = time.perf_counter()
    for xi, yi in zip(rows, labels):
        est.partial_fit(xi, yi)
    t_ours = time.perf_counter() - t0
    sgd = SGDClassifier(loss="hinge").partial_fit(X[:2], np.array([0, 1]), classes=[0, 1])
    n_sgd = min(T, 5000)
    t0 = time.perf_counter()
    for xi, yi in zip(rows[:n_sgd], labels[:n_sgd]):
        sgd.partial_fit(xi, yi)
    t_sgd = (time.perf_counter() - t0) * len(rows) / n_sgd
    print(f"\nStreaming, partial_fit with one row at a time, p={p}, {len(rows)} calls")
    print(f"  OAUC-M        {len(rows) / t_ours:>10.0f} instances/s")
    print(f"  SGDClassifier {len(rows) / t_sgd:>10.0f} instances/s  (timed on {n_sgd} calls)")
    print(f"  ratio OAUC-M / SGDClassifier: {t_sgd / t_ours:.1f}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--T", type=int, default=100_000)
    parser.add_argument("--ref-T", type=int, default=3000)
    parser.add_argument("--stream-T", type=int, default=20_000)
    parser.add_argument("--dims", type=int, nargs="+", default=[2, 10, 36, 100])
    args = parser.parse_args(argv)
    batch_table(args.T, args.ref_T, args.dims)
    stream_table(args.stream_T)


if __name__ == "__main__":
    main()
