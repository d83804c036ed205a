"""The one-row calls at p = 20: ``score_one`` and ``learn_one`` of OAUC-M, FTRL-AUC and the
capped SketchedOAUCM against ``float(x @ w + b)`` written by hand, this checkout against
another (``--baseline PATH``: a checkout with its extensions built), in one run.

Each side runs the same probe in a subprocess of its own (``PYTHONPATH`` set to its
checkout), the two alternating ``--repeat`` times; a probe measures process CPU time per
call over ``--rows`` rows, its contenders interleaved, the minimum of ``--inner`` runs,
and the minimum over the subprocesses is kept. ``learn_one`` continues a model fitted on
200 rows, unpickled afresh before each timed run (outside the timing). The ratio
``x @ w / score_one`` is measured within each process, so the two columns compare even on
a loaded host. On this checkout the probe also times the compiled calls with the lock
ignored (their ``lock=False`` test mutants), so the cost of thread safety is measured in
the same run: ``score_one`` and ``learn_one`` of OAUC-M, with and without it.

Usage: ``python benchmarks/bench_one_row.py [--baseline ../main] [--rows 3000]
[--repeat 5] [--inner 7]``
"""

import argparse
import json
import os
import subprocess
import sys

PROBE = r'''
import json, pickle, sys, time
import numpy as np
import scipy.sparse as sp
from sosl import FTRLAUC, OAUCM, SketchedOAUCM
n, inner = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(0)
p = 20
X = rng.uniform(-1, 1, size=(n + 200, p)) / np.sqrt(p)
y = (X @ rng.normal(size=p) + 0.1 * rng.normal(size=n + 200) > 0).astype(int)
rows, labels = list(X[200:]), list(y[200:])
fns = {}
for name, make in [("OAUCM", lambda: OAUCM(lam=0.01)), ("FTRLAUC", FTRLAUC),
                   ("SketchedOAUCM", lambda: SketchedOAUCM(rank=8, max_columns=20))]:
    m = make().fit(X[:200], y[:200])
    m.learn_one(X[0], y[0])                    # the lock and the stepper made
    m.score_one(X[0])
    blob = pickle.dumps(m)
    def score(m=m):
        f = m.score_one
        for x in rows:
            f(x)
    def learn(blob=blob):
        m = pickle.loads(blob)
        m.learn_one(X[0], y[0])
        f = m.learn_one
        t0 = time.process_time()
        for x, t in zip(rows, labels):
            f(x, t)
        return time.process_time() - t0
    fns[name + ".score_one"] = score
    fns[name + ".learn_one"] = learn
    if name == "OAUCM":
        w, b = m.coef_[0], m.intercept_[0]
        def hand():
            for x in rows:
                float(x @ w + b)
        fns["float(x @ w + b)"] = hand
        try:
            from sosl._core import _linear
            _linear.read_score(m.__dict__, X[0], lock=False)
        except (AttributeError, TypeError):
            _linear = None
        if _linear is not None:
            d = m.__dict__
            def read_locked(d=d):
                f = _linear.read_score
                for x in rows:
                    f(d, x)
            def read_unlocked(d=d):
                f = _linear.read_score
                for x in rows:
                    f(d, x, lock=False)
            def learn_locked(blob=blob):
                m = pickle.loads(blob)
                m.learn_one(X[0], y[0])
                d, f = m.__dict__, _linear.learn_row
                t0 = time.process_time()
                for x, t in zip(rows, labels):
                    f(d, x, t)
                return time.process_time() - t0
            def learn_unlocked(blob=blob):
                m = pickle.loads(blob)
                m.learn_one(X[0], y[0])
                d, f = m.__dict__, _linear.learn_row
                t0 = time.process_time()
                for x, t in zip(rows, labels):
                    f(d, x, t, lock=False)
                return time.process_time() - t0
            fns["read_score, lock checked"] = read_locked
            fns["read_score, lock=False"] = read_unlocked
            fns["learn_row, lock taken"] = learn_locked
            fns["learn_row, lock=False"] = learn_unlocked
best = dict.fromkeys(fns, float("inf"))
for _ in range(inner):
    for k, fn in fns.items():
        t0 = time.process_time()
        inside = fn()
        sec = inside if inside is not None else time.process_time() - t0
        best[k] = min(best[k], sec / n * 1e9)
print(json.dumps(best))
'''


def run(path, rows, inner):
    env = dict(os.environ, PYTHONPATH=path, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", PROBE, str(rows), str(inner)], env=env,
                         capture_output=True, text=True, check=True, cwd=path)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", default=None, help="another checkout, extensions built")
    ap.add_argument("--rows", type=int, default=3000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--inner", type=int, default=7)
    args = ap.parse_args()
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sides = {"this checkout": here}
    if args.baseline:
        sides = {"baseline": os.path.abspath(args.baseline), **sides}
    best = {k: {} for k in sides}
    for _ in range(args.repeat):
        for k, path in sides.items():
            for name, ns in run(path, args.rows, args.inner).items():
                best[k][name] = min(best[k].get(name, float("inf")), ns)
    names = list(best["this checkout"])
    print(f"## One-row calls, p = 20, ns per call (process CPU, min of {args.repeat} x "
          f"{args.inner} interleaved runs of {args.rows} rows)\n")
    print("| call | " + " | ".join(sides) + " |")
    print("|---|" + "---|" * len(sides))
    for name in names:
        cells = [f"{best[k][name]:.0f}" if name in best[k] else "" for k in sides]
        print(f"| {name} | " + " | ".join(cells) + " |")
    print()
    for k in sides:
        b = best[k]
        print(f"{k}: x @ w + b / OAUCM.score_one = "
              f"{b['float(x @ w + b)'] / b['OAUCM.score_one']:.2f}x")
    b = best["this checkout"]
    if "read_score, lock checked" in b:
        print(f"thread safety, this checkout: score_one's read "
              f"{b['read_score, lock checked'] - b['read_score, lock=False']:+.0f} ns, "
              f"learn_one's round {b['learn_row, lock taken'] - b['learn_row, lock=False']:+.0f}"
              " ns a call")


if __name__ == "__main__":
    main()
