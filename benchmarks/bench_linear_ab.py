"""A/B of two builds of the linear kernel: ``linear_pass`` of a kept ``_linear*.so`` against
the one ``sosl`` imports, on the same rows in the same order, interleaved.

Copy the extension aside before changing ``_linear.pyx`` or ``_simd.h``
(``cp sosl/_core/_linear*.so /tmp/old_linear.so``), rebuild, then run this script: for each
p it prints the nanoseconds per row of both builds (process CPU time, the minimum of
``--repeat`` interleaved runs, so the figure holds on a shared machine), the speed ratio
new / old, and the largest relative difference of the final w (a change of the order of
floating-point operations shows as ~1e-16; a wrong kernel as much more). Both passes are
the estimator's own-loop or BLAS path as ``OAUCM.fit`` takes it (blas_min_p 32, kmax 16
below it, one BLAS thread), psi_M with eta_t = 1 / (lam t).

With ``--chunk N`` the pass timed is instead ``Stepper.batch`` over consecutive chunks of
N rows (``partial_fit``'s path on a fitted model: each row also scored under the w before
its chunk, for the Platt step).

Usage: ``python benchmarks/bench_linear_ab.py --old /tmp/old_linear.so
[--dims 4,8,13,16,20,24,31,50,100] [--rows 100000] [--repeat 7] [--chunk 1000]``
"""

import argparse
import importlib.util
import os
import sys
import time

# the checkout this script lives in, ahead of any installed sosl: run as a script, its
# sys.path starts with benchmarks/, and a venv with sosl installed from another checkout
# (an editable install of the main tree) would otherwise time that checkout's build
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from sosl._core import _linear as new  # noqa: E402
from sosl._core._losses import loss_constants  # noqa: E402
from sosl.linear import _SAFE_ABS, _SAFE_MARGIN, BLAS_MIN_P, KMAX, SMALL_KMAX  # noqa: E402


def load(path):
    """The extension at ``path`` as a module object of its own (not put in sys.modules)."""
    spec = importlib.util.spec_from_file_location("sosl._core._linear", path)
    if spec is None or spec.loader is None:
        raise FileNotFoundError(path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def data(n, p, seed=0):
    """bench_linear's rows: uniform features, balanced labels from a noisy linear score."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, p)) / np.sqrt(p)
    score = X @ rng.normal(size=p) + 0.1 * rng.normal(size=n)
    return X, np.where(score > np.median(score), 1.0, -1.0)


def one_pass(mod, X, s):
    """CPU seconds of one fresh pass, and the final w."""
    n, p = X.shape
    kmax = min(KMAX if p >= BLAS_MIN_P else SMALL_KMAX, n)
    w, xbar, C = np.zeros(p), np.zeros((2, p)), np.zeros((2, p, p))
    scale, W, N = np.ones(2), np.zeros(2), np.zeros(2, dtype=np.int64)
    work, stats = np.empty(3 * p + 2 * kmax * p), np.array([0.0, -1.0])
    t0 = time.process_time()
    mod.linear_pass(X, s, None, w, xbar, C, scale, W, N, 0, 0.01, 0.0, 0, 0, 1.0, BLAS_MIN_P,
                    work, stats, None, None, None)
    return time.process_time() - t0, w


def batch_pass(mod, X, s, chunk):
    """CPU seconds of ``Stepper.batch`` over fresh state, chunk after chunk, and the final w."""
    n, p = X.shape
    kmax = KMAX if p >= BLAS_MIN_P else SMALL_KMAX
    w, xbar, C = np.zeros(p), np.zeros((2, p)), np.zeros((2, p, p))
    scale, W, N = np.ones(2), np.zeros(2), np.zeros(2, dtype=np.int64)
    st = mod.Stepper(w, xbar, C, scale, W, N, 0.01, 0.0, 0, 0, 1.0, BLAS_MIN_P, _SAFE_ABS,
                     _SAFE_MARGIN, loss_constants(0)[1], np.array([1.0, 0.0]))
    t, R = 0, 0.0
    t0 = time.process_time()
    for k in range(0, n, chunk):
        R = st.batch(X[k:k + chunk], s[k:k + chunk], t, R, kmax, False)
        if R < 0:
            raise RuntimeError(f"Stepper.batch declined a chunk ({R})")
        t += min(chunk, n - k)
    return time.process_time() - t0, w


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", required=True, help="path of the kept _linear extension")
    ap.add_argument("--dims", default="4,8,13,16,20,24,31,50,100")
    ap.add_argument("--rows", type=int, default=100000)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--chunk", type=int, default=0,
                    help="time Stepper.batch over chunks of this many rows")
    args = ap.parse_args(argv)
    try:
        dims = [int(v) for v in args.dims.split(",")]
        old = load(args.old)
    except (ValueError, OSError, ImportError) as exc:
        print(f"bench_linear_ab: {exc}", file=sys.stderr)
        return 2
    print(f"old: {args.old}\nnew: {new.__file__}\n")
    print("| p | old ns/row | new ns/row | new / old speed | max rel. diff of w |")
    print("|---|---|---|---|---|")
    with threadpool_limits(limits=1):
        for p in dims:
            X, s = data(args.rows if p < 50 else args.rows // 5, p)
            best = {"old": np.inf, "new": np.inf}
            w = {}
            for _ in range(args.repeat):
                for name, mod in (("old", old), ("new", new)):
                    sec, w[name] = (batch_pass(mod, X, s, args.chunk) if args.chunk
                                    else one_pass(mod, X, s))
                    best[name] = min(best[name], sec)
            n = X.shape[0]
            diff = np.max(np.abs(w["new"] - w["old"])) / np.max(np.abs(w["old"]))
            print(f"| {p} | {best['old'] / n * 1e9:.1f} | {best['new'] / n * 1e9:.1f} | "
                  f"{best['old'] / best['new']:.3f}x | {diff:.1e} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
