"""Streaming use, one event at a time: throughput, scoring latency, river, drift.

Timings are process CPU time on one thread, the contenders interleaved, the minimum of
``--repeat`` runs kept; every ratio is against a peer measured in the same run.

1. **One row at a time** at p = 20 and p = 100: ``OAUCM.learn_one`` (the typed one-row
   path), ``OAUCM.partial_fit`` on one row, river's ``LogisticRegression.learn_one`` on dict
   rows, Vowpal Wabbit's ``learn`` (if the ``vowpalwabbit`` package is installed) and
   scikit-learn's ``SGDClassifier(loss="hinge", shuffle=False).partial_fit`` on one row,
   the rows in the same order as every other contender (on one row ``shuffle`` changes no
   order, so there is no shuffled extra). Targets, stated before the run: ``learn_one``
   >= 2x river at p = 20 and >= 1x at p = 100.
2. **Scoring one row**: ``OAUCM.score_one`` against ``x @ coef_[0] + intercept_[0]`` written by
   hand. Target: <= 2 us at p = 20.
3. **Inside river**: ``progressive_val_score`` of ``StandardScaler() | sosl.river.OAUCM`` and
   of ``StandardScaler() | LogisticRegression()`` on one imbalanced stream (IR 10), with
   river's ``ROCAUC()`` and the exact AUC of the same predictions. Target: a higher ROCAUC.
4. **Drift**: the AUC of the prequential (test-then-train) scores of the 2000 rows after
   an abrupt drift (``RollingAUC(2000)`` at that point), for OAUC-M with forgetting,
   without, and for a fresh OAUC-M started at the drift; and the AUC over a stationary stream with
   and without forgetting. Targets: after the drift, forgetting within 1 point of the fresh
   model; on the stationary stream, within 0.5 points of no forgetting.

5. **One sparse row at a time, p = 2^20**: ``learn_one`` on CSR rows of the SMS Spam
   Collection hashed to 2^20 columns (``$SOSL_DATA_DIR``, default ``/work/shared/data``;
   without it, synthetic rows of 1 + Poisson(12) values at random columns) for
   ``SketchedOAUCM`` (rank 32; also with the whole sketch copied for the transaction of
   each call, the control of its one-row partial backup), ``FTRLAUC`` and ``OAM``
   (buffer_size 100), each continuing
   a model fitted on the first ``--sparse-prefix`` rows (unpickled afresh before each
   timed run, outside the timing); rows/s and the ratio to FTRLAUC in the same run.
   ``--sparse-only`` runs this table alone.

6. **Every learner, one dense row at a time, p = 20**: ``learn_one`` and ``score_one`` in
   us/row for each learner with its default parameters, continuing a model fitted on 200
   rows (unpickled afresh before each timed run); the ratio is to ``OAUCM.learn_one`` in
   the same run. OAUC-M and OAUC-S take the typed one-row path (also without a contracting
   step: the guarded round of ``sosl._core._linear.Stepper``); OKAUC-M and OKAUC-S run
   their pass on the live FIFO buffers (``_learn_one_in_place``); FTRLAUC and the capped
   SketchedOAUCM play their typed one-row round on the row's non-zero entries (dense rows
   as well as CSR rows, table 5); POLK plays its typed round (``_polk.PolkStepper``) on
   capacity buffers kept in the model, O(M p + M^2) per row and no copy of the state; the
   others take the general path (validation, copies of the state the round writes, the
   pass on one row). Below the table, the sketch's batch
   per-row cost: ``SketchedOAUCM().fit`` on ``--sketch-batch-rows`` rows of the same
   stream (p = 20), CPU time / rows, timed in the same interleaved runs, and the ratio of
   its ``learn_one`` to it. Targets, stated before the run: ``learn_one`` < 20 us and
   < 5x that per-row cost.
   ``--learners-only`` runs this table alone.

Usage: ``python benchmarks/bench_streaming.py [--rows 20000] [--repeat 3] [--quick]
[--sparse-only] [--learners-only] [--sparse-rows 1000] [--sparse-prefix 2000]
[--learner-rows 300] [--sketch-batch-rows 20000]``
"""

import argparse
import os
import pickle
import time

import numpy as np
from _timing import interleaved_min
from sklearn.linear_model import SGDClassifier
from sklearn.metrics import roc_auc_score
from threadpoolctl import threadpool_limits

from sosl import FTRLAUC, OAM, OAUCM
from sosl.datasets import (
    DatasetNotFoundError,
    load_sms_spam,
    make_drifting_stream,
    make_imbalanced_stream,
    vectorize_texts,
)
from sosl.evaluate import prequential
from sosl.metrics import RollingAUC
from sosl.sketch import SketchedOAUCM

try:
    import river
    from river import linear_model as river_linear
    from river import preprocessing as river_pre
except ImportError:                                     # optional benchmark dependency
    river = None
try:
    import vowpalwabbit
except ImportError:                                     # optional benchmark dependency
    vowpalwabbit = None


def stream(n, p, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, p)) / np.sqrt(p)
    y = (X @ rng.normal(size=p) + 0.1 * rng.normal(size=n) > 0.3).astype(int)
    return X, y


def one_row_table(n, repeat):
    print("\n## One row at a time (rows/s; process CPU time, min of interleaved runs)\n")
    print("| p | OAUCM.learn_one | OAUCM.partial_fit(1 row) | river LR.learn_one | VW learn "
          "| SGD partial_fit(1 row, shuffle=False, same order) | learn_one / river | target |")
    print("|---|---|---|---|---|---|---|---|")
    for p in (20, 100):
        X, y = stream(n, p)
        rows = list(X)
        dicts = [dict(enumerate(x.tolist())) for x in X]
        n_slow = max(200, n // 20)                      # the one-row partial_fit calls are slow

        def learn_one():
            m = OAUCM(lam=0.01)
            m.learn_one(rows[0], y[0], classes=[0, 1])
            for i in range(1, n):
                m.learn_one(rows[i], y[i])

        def partial_fit():
            m = OAUCM(lam=0.01)
            for i in range(n_slow):
                m.partial_fit(X[i:i + 1], y[i:i + 1], classes=[0, 1])

        def river_lr():
            m = river_linear.LogisticRegression()
            for i in range(n):
                m.learn_one(dicts[i], bool(y[i]))

        vw_lines = [f"{1 if y[i] else -1} | " + " ".join(f"f{j}:{v:.6g}" for j, v in
                                                       enumerate(X[i])) for i in range(n)]

        def vw():
            model = vowpalwabbit.Workspace("--quiet --loss_function logistic")
            for line in vw_lines:
                model.learn(line)
            model.finish()

        def sgd():
            m = SGDClassifier(loss="hinge", shuffle=False)
            for i in range(n_slow):
                m.partial_fit(X[i:i + 1], y[i:i + 1], classes=[0, 1])

        fns = [learn_one, partial_fit] + ([river_lr] if river else []) + \
              ([vw] if vowpalwabbit else []) + [sgd]
        times = iter(interleaved_min(fns, repeat))
        t_l1, t_pf = next(times), next(times)
        t_rv = next(times) if river else None
        t_vw = next(times) if vowpalwabbit else None
        t_sgd = next(times)
        def fmt(t, k=n):
            return f"{k / t:,.0f}" if t else "n/a"

        target = 2.0 if p == 20 else 1.0
        ratio = (n / t_l1) / (n / t_rv) if t_rv else float("nan")
        print(f"| {p} | {fmt(t_l1)} | {fmt(t_pf, n_slow)} | {fmt(t_rv)} | {fmt(t_vw)} | "
              f"{fmt(t_sgd, n_slow)} | {ratio:.2f}x | >= {target:.0f}x "
              f"{'PASS' if ratio >= target else 'MISS'} |")


def score_one_table(n, repeat):
    X, y = stream(n, 20)
    m = OAUCM(lam=0.01).fit(X, y)
    rows = list(X)
    w, b = m.coef_[0], m.intercept_[0]

    def typed():
        for x in rows:
            m.score_one(x)

    def by_hand():
        for x in rows:
            float(x @ w + b)

    t_s, t_h = interleaved_min([typed, by_hand], repeat)
    us = t_s / n * 1e6
    print(f"\n## Scoring one row, p = 20\n\nscore_one {us:.2f} us; "
          f"x @ coef_[0] + intercept_[0] by hand {t_h / n * 1e6:.2f} us "
          f"(target <= 2 us: {'PASS' if us <= 2 else 'MISS'})")


def river_table(n):
    print(f"\n## Inside river: progressive_val_score, IR 10, {n} rows, p = 20\n")
    if river is None:
        print("river is not installed (pip install 'sosl[river]'): skipped")
        return
    from river import metrics
    from river import stream as river_stream

    import sosl.river
    X, y = make_imbalanced_stream(n, 20, imbalance_ratio=10, class_sep=1.5, random_state=0)
    print("| pipeline | ROCAUC() | exact AUC of the same probabilities | rows/s |")
    print("|---|---|---|---|")
    out = {}
    for name, model in [("StandardScaler() then sosl.river.OAUCM(lam=1)",
                         river_pre.StandardScaler() | sosl.river.OAUCM(lam=1.0)),
                        ("StandardScaler() then LogisticRegression()",
                         river_pre.StandardScaler() | river_linear.LogisticRegression())]:
        probs = []
        metric = metrics.ROCAUC()
        t0 = time.process_time()
        for x, t in river_stream.iter_array(X, y.astype(bool)):
            p1 = model.predict_proba_one(x).get(True, 0.0)
            metric.update(t, model.predict_proba_one(x))
            probs.append(p1)
            model.learn_one(x, t)
        sec = time.process_time() - t0
        exact = roc_auc_score(y, probs)
        out[name] = metric.get()
        print(f"| {name} | {metric.get():.4f} | {exact:.4f} | {n / sec:,.0f} |")
    a, b = out.values()
    print(f"\ntarget: sosl's ROCAUC above LogisticRegression's: {'PASS' if a > b else 'MISS'}")


def drift_table(n, beta):
    print(f"\n## Drift: abrupt at row {n // 2} of {n}, IR 5, p = 5 (forgetting beta = {beta})\n")
    X, y, _ = make_drifting_stream(n, 5, drift="abrupt", drift_at=n // 2, imbalance=5.0,
                                   random_state=1)
    after = slice(n // 2, n // 2 + 2000)

    rows = {}
    for name, model in [("no forgetting", OAUCM(lam=0.01)),
                        (f"forgetting {beta}", OAUCM(lam=0.01, forgetting=beta))]:
        res = prequential(model, X, y, metrics=[RollingAUC(2000)], classes=[0, 1])
        rows[name] = roc_auc_score(y[after], res.scores[after])
    fresh = prequential(OAUCM(lam=0.01), X[n // 2:], y[n // 2:], metrics=[RollingAUC(2000)],
                        classes=[0, 1])
    # the fresh model has no score for its very first row: the window starts one row later
    rows["fresh model at the drift"] = roc_auc_score(y[after][1:], fresh.scores[1:2000])
    Xs, ys = make_imbalanced_stream(n, 5, imbalance_ratio=5, class_sep=2.0, random_state=2)
    stationary = {}
    for name, model in [("no forgetting", OAUCM(lam=0.01)),
                        (f"forgetting {beta}", OAUCM(lam=0.01, forgetting=beta))]:
        res = prequential(model, Xs, ys, metrics=[RollingAUC(2000)], classes=[0, 1])
        stationary[name] = roc_auc_score(ys[n // 2:], res.scores[n // 2:])
    print("| learner | AUC, 2000 rows after the drift | AUC, second half of a stationary "
          "stream |")
    print("|---|---|---|")
    for name, v in rows.items():
        st = stationary.get(name)
        print(f"| {name} | {v:.4f} | {'' if st is None else f'{st:.4f}'} |")
    forget = f"forgetting {beta}"
    gap = rows["fresh model at the drift"] - rows[forget]
    cost = stationary["no forgetting"] - stationary[forget]
    print(f"\nafter the drift, fresh - forgetting = {100 * gap:+.2f} points (target <= 1): "
          f"{'PASS' if gap <= 0.01 else 'MISS'}; stationary, no forgetting - forgetting = "
          f"{100 * cost:+.2f} points (target <= 0.5): {'PASS' if cost <= 0.005 else 'MISS'}")


def _sparse_rows(n, p, seed=0):
    """CSR rows of sms_spam hashed to p columns, or synthetic rows of the same kind."""
    import scipy.sparse as sp
    try:
        texts, y = load_sms_spam(os.environ.get("SOSL_DATA_DIR", "/work/shared/data"))
        return vectorize_texts(texts, "hashing", p)[:n], np.asarray(y)[:n], "sms_spam"
    except DatasetNotFoundError:
        rng = np.random.default_rng(seed)
        lengths = 1 + rng.poisson(12, n)
        cols = np.concatenate([np.sort(rng.choice(p, k, replace=False)) for k in lengths])
        indptr = np.concatenate([[0], np.cumsum(lengths)])
        X = sp.csr_matrix((np.repeat(1 / np.sqrt(lengths), lengths), cols, indptr),
                          shape=(n, p))
        return X, (rng.random(n) < 0.13).astype(int), "synthetic"


class _WholeSketchBackup(SketchedOAUCM):
    """SketchedOAUCM whose one-row calls copy the whole sketch for the transaction, as its
    multi-row calls do (the control of the partial backup)."""

    def _sketch_rows_at_stake(self):
        return None


def sparse_one_row_table(rows, prefix, repeat):
    p = 2 ** 20
    X, y, source = _sparse_rows(prefix + rows, p)
    print(f"\n## One sparse row at a time, p = 2^20 ({source}; rows/s of learn_one on rows "
          f"{prefix}..{prefix + rows - 1}, after fit on the first {prefix}; process CPU "
          f"time, min of {repeat} interleaved runs)\n")
    learners = {"SketchedOAUCM(rank=32)": SketchedOAUCM(lam=1e-3, rank=32),
                "SketchedOAUCM(rank=32), whole sketch copied": _WholeSketchBackup(lam=1e-3,
                                                                                  rank=32),
                "FTRLAUC": FTRLAUC(), "OAM(buffer_size=100)": OAM(random_state=0),
                "OAM_gra(buffer_size=100)": OAM(update="gra", random_state=0)}
    blobs = {name: pickle.dumps(est.fit(X[:prefix], y[:prefix]))
             for name, est in learners.items()}
    one = [X[i] for i in range(prefix, prefix + rows)]
    labels = y[prefix:prefix + rows]
    best = dict.fromkeys(learners, np.inf)
    for _ in range(repeat):
        for name, blob in blobs.items():
            model = pickle.loads(blob)
            t0 = time.process_time()
            for x, label in zip(one, labels):
                model.learn_one(x, label)
            best[name] = min(best[name], time.process_time() - t0)
    print("| learner | learn_one rows/s | / FTRLAUC |")
    print("|---|---|---|")
    for name, sec in best.items():
        print(f"| {name} | {rows / sec:,.0f} | {best['FTRLAUC'] / sec:.2f} |")


def learners_table(n, repeat, batch_rows=20000):
    import sosl
    X, y = stream(n + 200, 20, seed=3)
    Xb, yb = stream(batch_rows, 20, seed=3)
    names = [k for k in sosl.__all__ if isinstance(getattr(sosl, k), type)
             and hasattr(getattr(sosl, k), "learn_one")]
    start = {k: pickle.dumps(getattr(sosl, k)().fit(X[:200], y[:200])) for k in names}
    # rows with |x_j| up to 2: eta (lam + 10 R^2 p) > 2, OAUC-S's step does not contract
    # and every round is a guarded one (before, each took the general path)
    wide = "OAUCS on rows in [-2, 2]"
    Xw = X * 2.0 * np.sqrt(20)
    names.insert(names.index("OAUCS") + 1, wide)
    start[wide] = pickle.dumps(sosl.OAUCS().fit(Xw[:200], y[:200]))
    rows, labels = list(X[200:]), y[200:].tolist()
    rows_of = {k: rows for k in names}
    rows_of[wide] = list(Xw[200:])
    models = {}

    def learn(k):
        def run():
            m = models[k]
            for x, t in zip(rows_of[k], labels):
                m.learn_one(x, t)
        return run

    def score(k):
        def run():
            m = models[k]
            for x in rows_of[k]:
                m.score_one(x)
        return run

    def sketch_batch():
        SketchedOAUCM().fit(Xb, yb)

    best = {k: [np.inf, np.inf] for k in names}
    batch = np.inf
    for _ in range(repeat):
        for k in names:
            models[k] = pickle.loads(start[k])
            best[k][0] = min(best[k][0], interleaved_min([learn(k)], 1)[0])
            best[k][1] = min(best[k][1], interleaved_min([score(k)], 1)[0])
        batch = min(batch, interleaved_min([sketch_batch], 1)[0])
    ref = best["OAUCM"][0]
    print(f"\n## Every learner, one dense row at a time, p = 20 ({n} rows after 200; us/row, "
          "process CPU time, min of interleaved runs)\n")
    print("| learner | learn_one us | score_one us | learn_one / OAUCM.learn_one |")
    print("|---|---|---|---|")
    for k in names:
        print(f"| {k} | {best[k][0] / n * 1e6:.1f} | {best[k][1] / n * 1e6:.2f} | "
              f"{best[k][0] / ref:.1f} |")
    one = best["SketchedOAUCM"][0] / n * 1e6
    per_row = batch / batch_rows * 1e6
    print(f"\nSketchedOAUCM batch per-row cost: fit on {batch_rows} rows of the same stream "
          f"{per_row:.2f} us/row; learn_one {one:.1f} us = {one / per_row:.2f}x it (target "
          f"< 5x: {'PASS' if one < 5 * per_row else 'MISS'}; learn_one < 20 us: "
          f"{'PASS' if one < 20 else 'MISS'})")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=20000, help="rows per one-row timing")
    ap.add_argument("--repeat", type=int, default=3, help="interleaved repeats (min kept)")
    ap.add_argument("--beta", type=float, default=0.99,
                    help="forgetting factor of table 4 (0.99: the best of 0.995, 0.99, 0.98 on "
                    "this stream)")
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    ap.add_argument("--sparse-only", action="store_true", help="only table 5")
    ap.add_argument("--learners-only", action="store_true", help="only table 6")
    ap.add_argument("--learner-rows", type=int, default=300, help="rows timed in table 6")
    ap.add_argument("--sketch-batch-rows", type=int, default=20000,
                    help="rows of the sketch's batch fit below table 6")
    ap.add_argument("--sparse-rows", type=int, default=1000, help="rows timed in table 5")
    ap.add_argument("--sparse-prefix", type=int, default=2000,
                    help="rows fitted before table 5's timing")
    args = ap.parse_args(argv)
    if args.rows < 100 or args.repeat < 1 or not 0 < args.beta <= 1 or args.learner_rows < 1 \
            or args.sketch_batch_rows < 1:
        ap.error("--rows must be >= 100, --repeat >= 1, --beta in (0, 1], --learner-rows "
                 "and --sketch-batch-rows >= 1")
    if args.sparse_rows < 1 or args.sparse_prefix < 1 or \
            args.sparse_rows + args.sparse_prefix > 5574:
        ap.error("--sparse-rows and --sparse-prefix must be >= 1 and sum to at most 5574")
    n = 2000 if args.quick else args.rows
    with threadpool_limits(limits=1):
        if args.sparse_only:
            sparse_one_row_table(args.sparse_rows, args.sparse_prefix, args.repeat)
            return
        if args.learners_only:
            learners_table(args.learner_rows, args.repeat, args.sketch_batch_rows)
            return
        one_row_table(n, 1 if args.quick else args.repeat)
        score_one_table(n, 1 if args.quick else args.repeat)
        river_table(2000 if args.quick else 10000)
        drift_table(8000, args.beta)
        sparse_one_row_table(200 if args.quick else args.sparse_rows,
                             500 if args.quick else args.sparse_prefix,
                             1 if args.quick else args.repeat)
        learners_table(50 if args.quick else args.learner_rows, 1 if args.quick else args.repeat,
                       2000 if args.quick else args.sketch_batch_rows)


if __name__ == "__main__":
    main()
