"""Streaming AUC metrics and the river adapter, measured in one run (process CPU time).

Part 1, metric updates. Cost per update of :class:`sosl.metrics.StreamingAUC` (through its
Python ``update`` and through ``update_many``) and :class:`sosl.metrics.RollingAUC`, against
the bisection reference (:mod:`sosl._core._auc_ref`, O(n) per insertion), river's
``metrics.ROCAUC`` (approximate: 10 thresholds on a probability) and river's exact
``metrics.RollingROCAUC`` (compiled, Brzezinski & Stefanowski's sorted window), on streams
of n pairs with continuous scores. The rolling rows add one ``get()`` per update, as a
prequential curve does, and check that sosl and river agree on every window.

Part 2, threshold metrics (partial AUC up to FPR 0.1, average precision), one update and
one ``get()`` per pair as a prequential curve takes them: ``RollingAUC(w, max_fpr=0.1)`` and
``RollingAveragePrecision(w)`` (window w), ``StreamingAUC(max_fpr=0.1)`` and
``StreamingAveragePrecision`` (every pair so far), against scikit-learn recomputing the
same value from the held pairs (``roc_auc_score(max_fpr=0.1)``, ``average_precision_score``;
timed on 100 evenly spaced steps of the same stream, where the two values are also
compared). The scores have two decimals (ties; d ~ 800 distinct values): the streaming
average precision walks the d distinct scores at each ``get()``. river has no exact
counterpart of either metric.

Part 3, the adapter inside river. ``progressive_val_score``'s test-then-train loop (predict
the row, update the metrics, learn the row) over ``make_imbalanced_stream`` (IR 10) with
``preprocessing.StandardScaler() | sosl.river.OAUCM(lam=...)`` against the same pipeline
ending in river's ``linear_model.LogisticRegression()``: river's ROCAUC (its default,
10-threshold approximation), the exact AUC, partial AUC (FPR <= 0.1) and average precision
of the same probabilities (``sosl._river_metrics``), river's log loss, and rows per CPU
second (min of interleaved repeats).

Run: ``python benchmarks/bench_metrics.py [--quick] [--seed S]``.
"""

import argparse
import sys
import time

import numpy as np
from river import linear_model, metrics, preprocessing, stream
from river import metrics as rm
from sklearn.metrics import average_precision_score, roc_auc_score

import sosl.river as sr
from sosl._core import _auc_ref
from sosl._river_metrics import ExactAveragePrecision, ExactPartialROCAUC, ExactROCAUC
from sosl.datasets import make_imbalanced_stream
from sosl.metrics import (
    RollingAUC,
    RollingAveragePrecision,
    StreamingAUC,
    StreamingAveragePrecision,
)


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


def _curve(make, yl, sl):
    m, out = make(), np.empty(len(sl))
    for i, (a, b) in enumerate(zip(yl, sl)):
        m.update(a, b)
        out[i] = m.get()
    return out


def _sklearn_at(fn, y, s, steps, window):
    out = np.empty(len(steps))
    for k, i in enumerate(steps):
        lo = 0 if window is None else max(0, i + 1 - window)
        out[k] = fn(y[lo:i + 1], s[lo:i + 1])
    return out


def part_threshold(sizes, window, seed):
    pauc = lambda a, b: roc_auc_score(a, b, max_fpr=0.1)  # noqa: E731
    rows = [
        (f"RollingAUC({window}, max_fpr=0.1)", lambda: RollingAUC(window, max_fpr=0.1),
         pauc, window),
        (f"RollingAveragePrecision({window})", lambda: RollingAveragePrecision(window),
         average_precision_score, window),
        ("StreamingAUC(max_fpr=0.1)", lambda: StreamingAUC(max_fpr=0.1), pauc, None),
        ("StreamingAveragePrecision()", StreamingAveragePrecision, average_precision_score,
         None),
    ]
    print("\n== threshold metrics: us per update + get() (process CPU), against scikit-learn "
          "recomputing on the held pairs ==")
    print(f"{'n':>8} {'metric':36s} {'sosl':>9} {'sklearn':>10} {'sklearn/sosl':>12} "
          f"{'max |diff|':>10}")
    for n in sizes:
        rng = np.random.default_rng(seed)
        y = rng.random(n) < 0.05
        s = np.round(rng.normal(size=n) + 1.5 * y, 2)  # ties: two decimals
        yl, sl = y.tolist(), s.tolist()
        steps = np.unique(np.linspace(n // 10, n - 1, 100).astype(int))
        print(f"{n:>8} (stream: {y.sum()} positives, {np.unique(s).shape[0]} distinct scores)")
        for name, make, fn, win in rows:
            t_s, curve = _cpu(_curve, make, yl, sl)
            t_k, want = _cpu(_sklearn_at, fn, y, s, steps, win)
            us_s, us_k = t_s / n * 1e6, t_k / len(steps) * 1e6
            diff = np.abs(curve[steps] - want).max()
            print(f"{n:>8} {name:36s} {us_s:>9.2f} {us_k:>10.1f} {us_k / us_s:>12.0f} "
                  f"{diff:>10.1e}")


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
        roc, ll = metrics.ROCAUC(), metrics.LogLoss()
        exact = (ExactROCAUC(), ExactPartialROCAUC(max_fpr=0.1), ExactAveragePrecision())
        for x, t in stream.iter_array(X, y):
            proba = model.predict_proba_one(x)
            roc.update(t, proba)
            ll.update(t, proba)
            for m in exact:
                m.update(t, proba)
            model.learn_one(x, t)
        return (roc.get(), *(m.get() for m in exact), ll.get())

    best = {name: np.inf for name in makers}
    result = {}
    for _ in range(repeats):  # interleaved: every model once per repeat
        for name, make in makers.items():
            dt, out = _cpu(run, make)
            best[name] = min(best[name], dt)
            result[name] = out
    base = best["river LogisticRegression()"]
    print(f"{'pipeline: StandardScaler() | ...':32s} {'ROCAUC()':>9} {'exact AUC':>10} "
          f"{'pAUC 0.1':>9} {'AP':>7} {'log loss':>9} {'rows/s':>9} {'time/LR':>8}")
    for name in makers:
        roc, ex, pa, ap, ll = result[name]
        print(f"{name:32s} {roc:>9.4f} {ex:>10.4f} {pa:>9.4f} {ap:>7.4f} {ll:>9.4f} "
              f"{n / best[name]:>9,.0f} {best[name] / base:>8.2f}")
    print("(ROCAUC() is river's 10-threshold approximation on the probability; exact AUC, "
          "partial AUC (McClish, FPR <= 0.1) and average precision are those of the same "
          "probabilities; time: min of interleaved repeats, all five metrics included)")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.quick:
        part_metrics([1_000, 10_000], window=500, seed=args.seed)
        part_threshold([5_000], window=500, seed=args.seed)
        part_river(2_000, args.seed, lams=(0.01, 1.0), repeats=1)
    else:
        part_metrics([10_000, 100_000, 1_000_000], window=1000, seed=args.seed)
        part_threshold([20_000, 200_000], window=1000, seed=args.seed)
        part_river(10_000, args.seed, lams=(0.01, 0.1, 1.0), repeats=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
