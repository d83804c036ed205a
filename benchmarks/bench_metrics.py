"""Streaming AUC metrics and the river adapter, measured in one run (process CPU time).

Part 1, metric updates. Cost per update of :class:`sosl.metrics.StreamingAUC` (through its
Python ``update`` and through ``update_many``) and :class:`sosl.metrics.RollingAUC`, against
the bisection reference (:mod:`sosl._core._auc_ref`, O(n) per insertion), river's
``metrics.ROCAUC`` (approximate: 10 thresholds on a probability) and river's exact
``metrics.RollingROCAUC`` (compiled, Brzezinski & Stefanowski's sorted window), on streams
of n pairs with continuous scores. The rolling rows add one ``get()`` per update, as a
prequential curve does, and check that sosl and river agree on every window.

Part 2, the adapter inside river. ``progressive_val_score``'s test-then-train loop (predict
the row, update the metrics, learn the row) over ``make_imbalanced_stream`` (IR 10) with
``preprocessing.StandardScaler() | sosl.river.OAUCM(lam=...)`` against the same pipeline
ending in river's ``linear_model.LogisticRegression()``: river's ROCAUC (its default,
10-threshold approximation), the exact AUC of the same probabilities (StreamingAUC),
river's log loss, and rows per CPU second (min of interleaved repeats).

Run: ``python benchmarks/bench_metrics.py [--quick] [--seed S]``.
"""

import argparse
import sys
import time

import numpy as np
from river import linear_model, metrics, preprocessing, stream
from river import metrics as rm

import sosl.river as sr
from sosl._core import _auc_ref
from sosl.datasets import make_imbalanced_stream
from sosl.metrics import RollingAUC, StreamingAUC


def _cpu(fn, *args):
    t = time.process_time()
    out = fn(*args)
    return time.process_time() - t, out


def _streaming(sl, yl):
    m = StreamingAUC()
    for a, b in zip(sl, yl):
        m.update(b, a)
    return m.get()


def _many(s, y):
    return StreamingAUC().update_many(y, s).get()


def _reference(sl, yl):
    m = _auc_ref.AUCCounter()
    for a, b in zip(sl, yl):
        m.add(a, b)
    return m.get()


def _river_rocauc(s, yl):
    m = rm.ROCAUC()
    for a, b in zip((1 / (1 + np.exp(-s))).tolist(), yl):
        m.update(b, a)
    return m.get()


def _rolling(sl, yl, window):
    m, out = RollingAUC(window), np.empty(len(sl))
    for i, (a, b) in enumerate(zip(sl, yl)):
        m.update(b, a)
        out[i] = m.get()
    return out


def _river_rolling(sl, yl, window):
    m, out = rm.RollingROCAUC(window_size=window), np.empty(len(sl))
    for i, (a, b) in enumerate(zip(sl, yl)):
        m.update(b, a)
        out[i] = m.get()
    return out


def part_metrics(sizes, window, seed):
    print(f"\n== metric updates (us per update, process CPU; rolling window {window}) ==")
    print(f"{'n':>8} {'StreamingAUC':>13} {'update_many':>12} {'bisect ref':>11} "
          f"{'river ROCAUC':>13} | {'RollingAUC+get':>15} {'river Rolling+get':>18} "
          f"{'max |diff|':>10}")
    for n in sizes:
        rng = np.random.default_rng(seed)
        y = rng.random(n) < 0.2
        s = rng.normal(size=n) + y
        sl, yl = s.tolist(), y.tolist()
        t_s, a_s = _cpu(_streaming, sl, yl)
        t_m, a_m = _cpu(_many, s, y)
        t_ref, a_ref = _cpu(_reference, sl, yl) if n <= 200_000 else (np.nan, a_s)
        t_r, _ = _cpu(_river_rocauc, s, yl)
        t_w, c_w = _cpu(_rolling, sl, yl, window)
        t_rw, c_rw = _cpu(_river_rolling, sl, yl, window)
        assert a_s == a_m and abs(a_ref - a_s) < 1e-12
        full = np.arange(n) >= window - 1  # river's value while the window fills differs
        diff = np.abs(c_w[full] - c_rw[full]).max() if full.any() else np.nan
        us = 1e6 / n
        print(f"{n:>8} {t_s * us:>13.2f} {t_m * us:>12.2f} {t_ref * us:>11.2f} "
              f"{t_r * us:>13.2f} | {t_w * us:>15.2f} {t_rw * us:>18.2f} {diff:>10.1e}")


def part_river(n, seed, lams, repeats):

    p, ir, sep = 20, 10.0, 1.5
    X, y = make_imbalanced_stream(n, p, imbalance_ratio=ir, class_sep=sep, random_state=seed)
    y = y.astype(bool)
    print(f"\n== progressive validation in river: n={n} p={p} IR={ir:g} class_sep={sep} "
          f"seed={seed} ({y.sum()} positives) ==")
    makers = {"river LogisticRegression()": lambda: linear_model.LogisticRegression()}
    for lam in lams:
        makers[f"sosl.river.OAUCM(lam={lam:g})"] = lambda lam=lam: sr.OAUCM(lam=lam)

    def run(make):
        model = preprocessing.StandardScaler() | make()
        roc, ll, exact = metrics.ROCAUC(), metrics.LogLoss(), StreamingAUC()
        for x, t in stream.iter_array(X, y):
            proba = model.predict_proba_one(x)
            roc.update(t, proba)
            ll.update(t, proba)
            exact.update(t, proba.get(True, 0.0))
            model.learn_one(x, t)
        return roc.get(), exact.get(), ll.get()

    best = {name: np.inf for name in makers}
    result = {}
    for _ in range(repeats):  # interleaved: every model once per repeat
        for name, make in makers.items():
            dt, out = _cpu(run, make)
            best[name] = min(best[name], dt)
            result[name] = out
    base = best["river LogisticRegression()"]
    print(f"{'pipeline: StandardScaler() | ...':32s} {'ROCAUC()':>9} {'exact AUC':>10} "
          f"{'log loss':>9} {'rows/s':>9} {'time/LR':>8}")
    for name in makers:
        roc, ex, ll = result[name]
        print(f"{name:32s} {roc:>9.4f} {ex:>10.4f} {ll:>9.4f} {n / best[name]:>9,.0f} "
              f"{best[name] / base:>8.2f}")
    print("(ROCAUC() is river's 10-threshold approximation on the probability; exact AUC is "
          "the AUC of the same probabilities; time: min of interleaved repeats)")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.quick:
        part_metrics([1_000, 10_000], window=500, seed=args.seed)
        part_river(2_000, args.seed, lams=(0.01, 1.0), repeats=1)
    else:
        part_metrics([10_000, 100_000, 1_000_000], window=1000, seed=args.seed)
        part_river(10_000, args.seed, lams=(0.01, 0.1, 1.0), repeats=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
