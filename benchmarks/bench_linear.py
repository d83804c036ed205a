"""Throughput of the linear second-order learners, as ratios measured in one run.

Everything runs on one thread (threadpoolctl limits BLAS to 1) and is timed in process
CPU time; A and B are interleaved and the minimum of ``--repeat`` runs is kept, so the
figures hold on a shared machine. Three tables:

1. **Whole-array fit** (``OAUCM(lam).fit``) at the (n, p) of ``--sizes``, beside
   scikit-learn's ``SGDClassifier(loss="hinge", shuffle=False).partial_fit`` on the same
   array, a new model per call: SGD visits the rows in the order given, as OAUC-M does
   (its default ``shuffle=True`` permutes them inside the call, extra work in another
   order; that figure is printed only as a labelled extra). Instances per second and the
   ratio to the in-order SGD; then the bounds of the machine measured in the same run: the
   achieved GFLOP/s of one OAUC-M step (counted as 3 p^2 flops: a symmetric matrix-vector
   product, 2 p^2, and a rank-one update of a triangle, p^2) as a fraction of the
   one-thread float64 ``numpy.dot`` rate of two 1000 x 1000 matrices (the practical flop
   peak), and the rate as a fraction of the DRAM bound of reading each row once (8 p bytes
   at the bandwidth of a one-thread copy of 64 MiB, read plus written bytes; the state's
   own traffic is not counted, so this bound is loose once the (2, p, p) scatter leaves
   the caches). The same DRAM bound is printed for the in-order SGD.
2. **partial_fit in chunks** (``--chunk`` rows per call, 1,000 by default) on the first
   size of ``--sizes``: instances per second of a model fed chunk by chunk (a fitted
   model's dense chunks take the typed batch path: one pass over the rows that scores each
   under the model before the call, plays its round and then its prequential Platt step),
   beside the whole-array fit of the same rows and the in-order SGD fed the same chunks;
   the ratio chunked / whole-array is what the calls and the Platt steps cost (aim: within
   10%; the whole-array fit calibrates once, in-sample, on at most 10,000 rows).
3. **Typed kernel against the NumPy reference** on a prefix of the same data.
4. **Memory of partial_fit** at the largest p: peak bytes numpy allocates during one call
   (tracemalloc), beside the model's own state.

Usage: ``python benchmarks/bench_linear.py [--sizes 200000x20,50000x100,10000x500,2000x2000]
[--repeat 3] [--ref-rows 300] [--chunk 1000]``
"""

import argparse
import tracemalloc

import numpy as np
from _timing import cpu_time, interleaved_min
from sklearn.linear_model import SGDClassifier
from threadpoolctl import threadpool_limits

from sosl import OAUCM
from sosl._core import _linear_ref as ref
from sosl._core._codes import Loss, Schedule


def dgemm_gflops(repeat=3, n=1000):
    rng = np.random.default_rng(0)
    A, B = rng.normal(size=(n, n)), rng.normal(size=(n, n))
    sec = min(cpu_time(lambda: A @ B) for _ in range(repeat))
    return 2.0 * n ** 3 / sec / 1e9


def copy_gbs(repeat=3, mib=64):
    """Bytes moved (read + written) per second by one-thread copies of ``mib`` MiB."""
    src = np.ones(mib * 2 ** 20 // 8)
    dst = np.empty_like(src)
    np.copyto(dst, src)                                  # touch the pages first
    sec = min(cpu_time(lambda: np.copyto(dst, src)) for _ in range(repeat))
    return 2.0 * src.nbytes / sec / 1e9


def data(n, p, seed=0, ir=1.0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, p)) / np.sqrt(p)
    score = X @ rng.normal(size=p) + 0.1 * rng.normal(size=n)
    y = (score > np.quantile(score, 1.0 - 1.0 / (1.0 + ir))).astype(int)
    return X, y


def fit_table(sizes, repeat, peak, bandwidth):
    print("\n## Whole-array fit, one thread (process CPU time, min of interleaved runs)\n")
    print("SGD = SGDClassifier(loss='hinge', alpha=1e-4, shuffle=False).partial_fit on the same "
          "rows in the same order, a new model per call; 'shuffled' is the default "
          "shuffle=True (rows permuted inside the call), an extra only. DRAM bound: 8 p bytes "
          f"per row at {bandwidth:.1f} GB/s.\n")
    print("| n | p | OAUCM.fit inst/s | SGD in order inst/s | OAUCM / SGD in order | GFLOP/s "
          "| of dgemm | OAUCM of DRAM bound | SGD of DRAM bound | extra: SGD shuffled inst/s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for n, p in sizes:
        X, y = data(n, p)
        model = OAUCM(lam=0.01)

        def sgd(shuffle):
            est = SGDClassifier(loss="hinge", alpha=1e-4, shuffle=shuffle, random_state=0)
            return lambda: est.partial_fit(X, y, classes=[0, 1])

        runs = [lambda: model.fit(X, y), lambda: sgd(False)(), lambda: sgd(True)()]
        t_m, t_s, t_sh = interleaved_min(runs, repeat)
        gflops = 3.0 * p * p * n / t_m / 1e9
        bound = bandwidth * 1e9 / (8.0 * p)              # rows/s when reading X is the limit
        print(f"| {n} | {p} | {n / t_m:,.0f} | {n / t_s:,.0f} | {t_s / t_m:.3g}x | "
              f"{gflops:.2f} | {gflops / peak:.1%} | {n / t_m / bound:.1%} | "
              f"{n / t_s / bound:.1%} | {n / t_sh:,.0f} |")


def chunk_table(n, p, chunk, repeat):
    print(f"\n## partial_fit in chunks of {chunk} rows against the whole-array fit (n = {n}, "
          f"p = {p})\n")
    print("Same rows, same order; SGD = SGDClassifier(loss='hinge', alpha=1e-4, "
          "shuffle=False).partial_fit fed the same chunks.\n")
    print("| fit inst/s | partial_fit inst/s | fit / partial_fit per row | SGD chunks inst/s "
          "| OAUCM chunks / SGD chunks |")
    print("|---|---|---|---|---|")
    X, y = data(n, p)
    cuts = list(range(0, n, chunk)) + [n]
    parts = [(X[a:b], y[a:b]) for a, b in zip(cuts[:-1], cuts[1:])]

    def chunks(make):
        def run():
            est = make()
            for Xc, yc in parts:
                est.partial_fit(Xc, yc, classes=[0, 1])
        return run

    model = OAUCM(lam=0.01)
    t_f, t_c, t_s = interleaved_min(
        [lambda: model.fit(X, y), chunks(lambda: OAUCM(lam=0.01)),
         chunks(lambda: SGDClassifier(loss="hinge", alpha=1e-4, shuffle=False,
                                      random_state=0))], repeat)
    print(f"| {n / t_f:,.0f} | {n / t_c:,.0f} | {t_c / t_f:.3f}x | {n / t_s:,.0f} | "
          f"{t_s / t_c:.3g}x |")


def reference_table(sizes, repeat, ref_rows):
    print(f"\n## Typed kernel against the NumPy reference ({ref_rows} rows)\n")
    print("| p | kernel inst/s | reference inst/s | kernel / reference |")
    print("|---|---|---|---|")
    for _, p in sizes:
        X, y = data(ref_rows, p)
        s = np.where(y == 1, 1.0, -1.0)
        order = np.arange(ref_rows, dtype=np.intp)

        def run_ref():
            ref.linear_pass(X, s, order, np.zeros(p), np.zeros((2, p)), np.zeros((2, p, p)),
                            np.zeros(2, dtype=np.int64), 0, 0.01, 0.0,
                            int(Schedule.STEP_INV_LAM_T), int(Loss.LOSS_M))
        model = OAUCM(lam=0.01)
        t_k, t_r = interleaved_min([lambda: model.fit(X, y), run_ref], max(1, repeat - 1))
        print(f"| {p} | {ref_rows / t_k:,.0f} | {ref_rows / t_r:,.0f} | {t_r / t_k:.0f}x |")


def memory_table(p, rows=200):
    X, y = data(rows, p)
    model = OAUCM(lam=0.01).fit(X[:rows // 2], y[:rows // 2])
    state = sum(v.nbytes for v in vars(model).values() if isinstance(v, np.ndarray))
    tracemalloc.start()
    model.partial_fit(X[rows // 2:], y[rows // 2:])
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"\n## Memory of one partial_fit call, p = {p} ({rows // 2} rows)\n")
    print(f"model state {state / 2**20:.1f} MiB; peak allocated during the call "
          f"{peak / 2**20:.1f} MiB ({peak / state:.1%} of the state)")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="200000x20,50000x100,10000x500,2000x2000",
                    help="comma-separated n x p pairs for the fit table")
    ap.add_argument("--repeat", type=int, default=3, help="interleaved repeats (min is kept)")
    ap.add_argument("--ref-rows", type=int, default=300, help="rows for the reference table")
    ap.add_argument("--chunk", type=int, default=1000, help="rows per partial_fit call")
    args = ap.parse_args(argv)
    try:
        sizes = [tuple(int(v) for v in item.lower().split("x")) for item in args.sizes.split(",")]
    except ValueError:
        ap.error(f"--sizes must look like 200000x20,2000x2000; got {args.sizes!r}")
    if args.chunk < 2 or args.repeat < 1:
        ap.error("--chunk must be >= 2 and --repeat >= 1")
    with threadpool_limits(limits=1):
        peak = dgemm_gflops()
        bandwidth = copy_gbs()
        print(f"one-thread float64 dgemm (1000 x 1000): {peak:.1f} GFLOP/s; one-thread copy "
              f"of 64 MiB: {bandwidth:.1f} GB/s (read + written)")
        fit_table(sizes, args.repeat, peak, bandwidth)
        chunk_table(*sizes[0], args.chunk, args.repeat)
        reference_table([s for s in sizes if s[1] <= 500], args.repeat, args.ref_rows)
        memory_table(max(p for _, p in sizes))


if __name__ == "__main__":
    main()
