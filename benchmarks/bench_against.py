"""This checkout's linear learner against another build of sosl, in one run.

The same timing code (public API only: ``OAUCM(lam).fit``, ``partial_fit`` of one row, and
scikit-learn's ``SGDClassifier(loss="hinge", shuffle=False).partial_fit`` as the common peer,
a new model per call visiting the rows in the order given, as OAUC-M does; the default
``shuffle=True``, which permutes the rows inside the call, is timed as a labelled extra; then
``OKAUCM(budget=100).fit`` and ``KOIL(budget=100).fit`` at p = 20, Gaussian kernel) runs in a
subprocess of each interpreter, the two alternating ``--repeat`` times, each measuring its
own process CPU time on one BLAS thread; the minimum of the repeats is kept. Each side's
ratio to SGD is measured in its own process, so the two columns are comparable even if
the interpreters differ.

Usage::

    python benchmarks/bench_against.py --baseline-python OLD_CHECKOUT/.venv/bin/python

(``make bench BASELINE_PYTHON=...`` does the same). OLD_CHECKOUT is any earlier clone of
this repository with its own ``.venv`` built by its ``make``.
"""

import argparse
import json
import subprocess
import sys
import tempfile

PROBE = r'''
import json, sys, time
import sosl
print("sosl from", sosl.__file__, file=sys.stderr)
import numpy as np
from threadpoolctl import threadpool_limits
from sklearn.linear_model import SGDClassifier
from sosl import OAUCM

def cpu(fn):
    t0 = time.process_time(); fn(); return time.process_time() - t0

def data(n, p, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, p)) / np.sqrt(p)
    score = X @ rng.normal(size=p) + 0.1 * rng.normal(size=n)
    return X, (score > np.quantile(score, 0.5)).astype(int)

out = {}
kernel_rows = int(sys.argv[2])
with threadpool_limits(1):
    for n, p in json.loads(sys.argv[1]):
        X, y = data(n, p)
        t_m = cpu(lambda: OAUCM(lam=0.01).fit(X, y))
        t_s = cpu(lambda: SGDClassifier(loss="hinge", alpha=1e-4, shuffle=False)
                  .partial_fit(X, y, classes=[0, 1]))
        t_sh = cpu(lambda: SGDClassifier(loss="hinge", alpha=1e-4, shuffle=True, random_state=0)
                   .partial_fit(X, y, classes=[0, 1]))
        m = OAUCM(lam=0.01).fit(X[:50], y[:50])
        k = min(2000, n - 50)
        t_1 = cpu(lambda: [m.partial_fit(X[i:i + 1], y[i:i + 1]) for i in range(50, 50 + k)])
        out[f"{n}x{p}"] = [n / t_m, n / t_s, k / t_1, n / t_sh]
    if kernel_rows:
        from sosl import KOIL, OKAUCM
        rng = np.random.default_rng(1)
        X = rng.uniform(-1, 1, size=(kernel_rows, 20))
        y = (np.sin(2.0 * X[:, 0]) + X[:, 1] * X[:, 2] > 0).astype(int)
        n_k = kernel_rows - 1000
        rates = []
        for make in (lambda: OKAUCM(lam=0.01, gamma=0.05, budget=100),
                     lambda: KOIL(gamma=0.05, budget=100)):
            rates.append(kernel_rows / cpu(lambda: make().fit(X, y)))
            m = make().fit(X[:1000], y[:1000])          # buffers full: every round evicts
            rates.append(n_k / cpu(lambda: m.partial_fit(X[1000:], y[1000:])))
        out["kernel"] = rates
print(json.dumps(out))
'''


def probe(python, sizes, kernel_rows):
    # run outside any checkout, so each interpreter imports its own installed sosl
    res = subprocess.run([python, "-c", PROBE, json.dumps(sizes), str(kernel_rows)],
                         capture_output=True, text=True, check=False, cwd=tempfile.gettempdir())
    if res.returncode != 0:
        raise SystemExit(f"bench_against: {python} failed: {res.stderr.strip().splitlines()[-1]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline-python", required=True,
                    help="the python of another checkout's .venv (the 'before' build)")
    ap.add_argument("--sizes", default="200000x20,50000x100,10000x500,2000x2000",
                    help="comma-separated n x p pairs")
    ap.add_argument("--repeat", type=int, default=3, help="alternating repeats (min kept)")
    ap.add_argument("--kernel-rows", type=int, default=8000,
                    help="rows of the kernel learners' fit (OKAUCM and KOIL, budget 100 + 100, "
                         "p = 20); 0 skips them")
    args = ap.parse_args(argv)
    try:
        sizes = [[int(v) for v in s.lower().split("x")] for s in args.sizes.split(",")]
    except ValueError:
        ap.error(f"--sizes must look like 200000x20,2000x2000; got {args.sizes!r}")
    best = {"before": {}, "now": {}}
    for _ in range(args.repeat):
        for side, python in (("before", args.baseline_python), ("now", sys.executable)):
            for key, vals in probe(python, sizes, args.kernel_rows).items():
                old = best[side].get(key, [0.0] * len(vals))
                best[side][key] = [max(a, b) for a, b in zip(old, vals)]   # max rate = min time
    print("SGD = SGDClassifier(loss='hinge', shuffle=False).partial_fit, the same rows in the "
          "same order; the shuffled (default) SGD is an extra, not the peer.\n")
    print("| n x p | fit before | fit now | now / before | before / SGD in order "
          "| now / SGD in order | partial_fit(1 row) before | now "
          "| extra: now / SGD shuffled |")
    print("|---|---|---|---|---|---|---|---|---|")
    for key in best["now"]:
        if key == "kernel":
            continue
        b, n = best["before"][key], best["now"][key]
        print(f"| {key} | {b[0]:,.0f}/s | {n[0]:,.0f}/s | {n[0] / b[0]:.2f}x | "
              f"{b[0] / b[1]:.2f}x | {n[0] / n[1]:.2f}x | {b[2]:,.0f}/s | {n[2]:,.0f}/s | "
              f"{n[0] / n[3]:.2f}x |")
    if args.kernel_rows:
        b, n = best["before"]["kernel"], best["now"]["kernel"]
        print(f"\nKernel learners, Gaussian, budget 100 + 100, p = 20, fit on {args.kernel_rows:,} "
              "rows (updates/s):\n")
        print("| learner | call | before | now | now / before |")
        print("|---|---|---|---|---|")
        calls = ("fit (whole stream)", "partial_fit (warm model, full buffers)")
        for j, name in enumerate(("OKAUCM", "OKAUCM", "KOIL", "KOIL")):
            print(f"| {name} | {calls[j % 2]} | {b[j]:,.0f}/s | {n[j]:,.0f}/s | "
                  f"{n[j] / b[j]:.2f}x |")


if __name__ == "__main__":
    main()
