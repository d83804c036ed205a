"""Drift and delayed labels: prequential AUC, pAUC, dip, recovery and false alarms.

For each stream of :func:`sosl.datasets.make_drift_stream` (class-conditional Gaussians,
positive rate 2%, seeds other than the ones ``forgetting="auto"`` was set on) and each
label delay, every contender is run through :func:`sosl.evaluate.prequential` (test then
train; with ``delay=d`` a row is learned once row ``i + d`` was scored) and reports

* ``auc``: the AUC of every prequential score of the stream (``StreamingAUC``);
* ``pauc``: the same at FPR <= 1% (McClish-standardized, ``StreamingAUC(max_fpr=0.01)``);
* ``dip`` and ``recover``: for each drift row, the fall of the rolling AUC (a window of
  ``--window`` rows) from its level at the drift, and the rows until it is back within
  0.01 of that level (:func:`sosl.evaluate.recovery`; the window's own lag included;
  ``nan``: not back before the next drift), as the mean over the stream's drifts;
* ``fa/M``: detections (``forgetting="auto"``) or resets (river with ADWIN) per million
  rows on the stationary stretches: outside ``[drift start, drift end + window)``;
* ``switches``: the rounds at which the lead of ``"auto"``'s two memories changed (the
  detector's and the fixed factor 0.99's, :mod:`sosl._drift_select`);
* ``cpu``: process CPU seconds of the run (scoring, learning, metrics).

Contenders: OAUCM with no forgetting, the fixed factors 0.99, 0.999, 0.9999, and
``forgetting="auto"`` (told the stream's delay: ``label_delay=d``); river's
``LogisticRegression`` (its defaults, fed dicts) without and with a reset of the model
whenever river's ``ADWIN`` (its defaults) sees a change in the model's prequential loss
``1 - p(true class)`` (a change that raises it; ADWIN also reports falls). river is an
optional extra (``pip install sosl[river]``); without it those rows are skipped.

Run: ``python benchmarks/bench_drift.py`` (about four minutes on two cores;
``--quick`` for a smoke run; ``--river`` adds river's SEA and rotating Hyperplane
generators made imbalanced (:func:`river_streams`); ``--text`` adds FTRLAUC with and
without ``"auto"`` on sparse text-like streams; ``--cost`` measures only the CPU time of
``"auto"`` against the plain pass for each learner that has it). Every contender sees the
same rows in the same order.
"""

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sosl import OAUCM  # noqa: E402
from sosl.datasets import make_drift_stream  # noqa: E402
from sosl.evaluate import prequential, recovery  # noqa: E402
from sosl.ftrl import FTRLAUC  # noqa: E402
from sosl.metrics import RollingAUC, StreamingAUC  # noqa: E402

try:
    from river import drift as river_drift
    from river import linear_model as river_linear
    from river.datasets import synth as river_synth
except ImportError:          # an optional extra
    river_linear = None


class RiverModel:
    """river's LogisticRegression through the one-row interface prequential uses, with an
    optional ADWIN on its prequential loss that replaces the model by a fresh one."""

    def __init__(self, adwin=False):
        self.model = river_linear.LogisticRegression()
        self.adwin = river_drift.ADWIN() if adwin else None
        self.resets = []
        self.n_learned = 0

    def learn_one(self, x, y, classes=None):
        if not hasattr(self, "classes_"):
            self.classes_ = np.asarray(classes)
        xd = dict(enumerate(x.tolist()))
        positive = bool(y == self.classes_[1])
        if self.adwin is not None:
            p = self.model.predict_proba_one(xd).get(True, 0.5)
            before = self.adwin.estimation
            self.adwin.update(1.0 - (p if positive else 1.0 - p))
            # ADWIN reports a change of the mean either way: reset on a rise of the loss
            if self.adwin.drift_detected and self.adwin.estimation > before:
                self.model = river_linear.LogisticRegression()
                self.resets.append(self.n_learned)
        self.model.learn_one(xd, positive)
        self.n_learned += 1

    def score_one(self, x):
        return self.model.predict_proba_one(dict(enumerate(x.tolist()))).get(True, 0.5)


def contenders(with_river, delay):
    out = [("OAUCM none", lambda: OAUCM(forgetting=1.0))]
    out += [(f"OAUCM {b}", lambda b=b: OAUCM(forgetting=b)) for b in (0.99, 0.999, 0.9999)]
    # "auto" is told the delay the stream has (a deployment knows its label pipeline)
    out.append(("OAUCM auto", lambda: OAUCM(forgetting="auto", label_delay=delay)))
    if with_river:
        out += [("river LR", lambda: RiverModel(False)),
                ("river LR+ADWIN", lambda: RiverModel(True))]
    return out


def streams(n, seed):
    """(name, X, y, drift rows, changing stretches) of the benchmark."""
    out = []
    for drift in ("abrupt", "gradual", "recurring", "none"):
        X, y, concept = make_drift_stream(n, 20, drift=drift, positive_rate=0.02,
                                          random_state=seed)
        rows = [] if drift == "none" else (np.flatnonzero(np.diff(concept)) + 1).tolist()
        if drift == "gradual":                 # one drift: the window's middle
            stretches = [(rows[0], rows[-1])]
            rows = [n // 2]
        else:
            stretches = [(r, r) for r in rows]
        out.append((drift, X, y, rows, stretches))
    return out


def _thinned(gen, n, rate, rng, scale=1.0):
    """``n`` rows of a river generator (dict rows, keys in sorted order, divided by
    ``scale``), its positive class (label True) thinned to about ``rate``: each positive
    is kept with probability ``q`` fixed from the generator's first 2,000 rows, every
    negative kept. Thinning one class is a prior shift only: the class-conditional
    distributions of the generator, and its drift, are unchanged."""
    rows = []
    it = iter(gen)
    head = [next(it) for _ in range(2000)]
    base = np.mean([bool(lab) for _, lab in head])
    q = rate * (1 - base) / (base * (1 - rate))
    for x, lab in _chain(head, it):
        if lab and rng.random() >= q:
            continue
        rows.append(([x[k] for k in sorted(x)], bool(lab)))
        if len(rows) == n:
            break
    X = np.asarray([r[0] for r in rows], dtype=np.float64) / scale
    y = np.asarray([r[1] for r in rows], dtype=np.int64)
    return X, y


def _chain(head, it):
    yield from head
    yield from it


def river_streams(n, seed):
    """river's generators made imbalanced (2% positives): SEA with its threshold moved at
    row n / 2 (variant 0 to 2: x0 + x1 <= 8, then <= 7; the ranking direction stays, so
    an AUC learner should lose nothing), and a rotating Hyperplane (5 of 10 weights
    drifting by 0.001 a row: a slow, continuous turn with no stationary stretch)."""
    rng = np.random.default_rng(seed)
    Xa, ya = _thinned(river_synth.SEA(variant=0, seed=seed), n // 2, 0.02, rng, scale=10.0)
    Xb, yb = _thinned(river_synth.SEA(variant=2, seed=seed + 1), n - n // 2, 0.02, rng,
                      scale=10.0)
    out = [("sea", np.vstack([Xa, Xb]), np.concatenate([ya, yb]), [n // 2],
            [(n // 2, n // 2)])]
    Xh, yh = _thinned(river_synth.Hyperplane(seed=seed, n_features=10, n_drift_features=5,
                                             mag_change=0.001, noise_percentage=0.05),
                      n, 0.02, rng)
    out.append(("hyperplane", Xh, yh, [], [(0, n)]))
    return out


def switches_of(model):
    sel = getattr(getattr(model, "drift_", None), "selector", None)
    return None if sel is None else list(sel.switches)


def detections_of(model):
    ctl = getattr(model, "drift_", None)
    if ctl is not None:
        return ctl.detections
    return getattr(model, "resets", None)


def false_alarms(events, stretches, n, window, delay):
    """Events outside the changing stretches (each widened by the window and the delay),
    per million rows of the stationary rest. Events are counted in rows learned; a row is
    learned ``delay`` rows after it is scored."""
    busy = [(a, b + window + delay) for a, b in stretches]
    calm = n - sum(min(n, b) - a for a, b in busy)
    bad = [e for e in events if not any(a <= e + delay < b for a, b in busy)]
    return (1e6 * len(bad) / calm if calm > 0 else math.nan), bad


def run(args):
    rows = []
    with_river = river_linear is not None and not args.no_river
    todo = streams(args.n, args.seed)
    if args.river and river_linear is not None:
        todo += river_streams(args.n, args.seed)
    todo = [t for t in todo if args.streams is None or t[0] in args.streams]
    for name, X, y, drifts, stretches in todo:
        for delay in args.delays:
            for label, make in contenders(with_river, delay):
                model = make()
                metrics = {"auc": StreamingAUC(), "pauc": StreamingAUC(max_fpr=0.01),
                           "rolling": RollingAUC(args.window)}
                t0 = time.process_time()
                res = prequential(model, X, y, metrics=metrics, every=args.every,
                                  classes=[0, 1], delay=delay)
                cpu = time.process_time() - t0
                dips, recs = [], []
                ends = drifts[1:] + [args.n]
                for at, until in zip(drifts, ends):
                    _, dip, rec = recovery(res.steps, res["rolling"], at, until)
                    dips.append(dip)
                    recs.append(rec)
                events = detections_of(model)
                fa = (false_alarms(events, stretches, args.n, args.window, delay)[0]
                      if events is not None else math.nan)
                rows.append({"stream": name, "delay": delay, "model": label,
                             "auc": res.final()["auc"], "pauc": res.final()["pauc"],
                             "dip": np.mean(dips) if dips else math.nan,
                             "recover": np.mean(recs) if recs else math.nan,
                             "fa": fa, "n_events": None if events is None else len(events),
                             "switches": switches_of(model), "cpu": cpu})
                r = rows[-1]
                print(f"{name:9s} d={delay:<6d} {label:15s} auc {r['auc']:.4f} pauc "
                      f"{r['pauc']:.4f} dip {r['dip']:.3f} recover {r['recover']:7.0f} "
                      f"fa/M {r['fa']:6.1f} events {r['n_events']} cpu {cpu:5.1f}s"
                      + ("" if r["switches"] is None else f" switches {r['switches']}"),
                      flush=True)
    return rows


def verdict(rows):
    """Per stream and delay: auto against the best fixed factor and against none."""
    print("\nauto against the fixed factors (target: >= best fixed - 0.002; > none on drift)")
    keys = sorted({(r["stream"], r["delay"]) for r in rows}, key=lambda k: (k[1], k[0]))
    for stream, delay in keys:
        by = {r["model"]: r["auc"] for r in rows if r["stream"] == stream
              and r["delay"] == delay}
        fixed = {k: v for k, v in by.items() if k.startswith("OAUCM 0.")}
        best = max(fixed, key=fixed.get)
        auto, none = by["OAUCM auto"], by["OAUCM none"]
        ok1 = auto >= fixed[best] - 0.002
        ok2 = stream in ("none", "sea") or auto > none
        print(f"{stream:9s} d={delay:<6d} auto {auto:.4f}  best fixed {best[6:]:6s} "
              f"{fixed[best]:.4f} ({auto - fixed[best]:+.4f} {'ok' if ok1 else 'MISS'})  "
              f"none {none:.4f} ({auto - none:+.4f} {'ok' if ok2 else 'MISS'})")


def text_runs(args):
    """``--text``: FTRLAUC with and without ``forgetting="auto"`` on sparse text-like
    streams (vocabulary 2,000, 2% positives), delay 0."""
    print("\nFTRLAUC on text-like streams (delay 0)")
    for drift in ("abrupt", "gradual", "recurring", "none"):
        X, y, _ = make_drift_stream(args.n, 2000, kind="text", drift=drift,
                                    positive_rate=0.02, random_state=args.seed)
        out = []
        for f in (1.0, "auto"):
            model = FTRLAUC(forgetting=f)
            res = prequential(model, X, y, every=args.n, classes=[0, 1],
                              metrics={"auc": StreamingAUC(),
                                       "pauc": StreamingAUC(max_fpr=0.01)})
            out.append((res.final()["auc"], res.final()["pauc"], res.cpu_seconds))
        det = model.drift_.detections
        print(f"{drift:9s} none auc {out[0][0]:.4f} pauc {out[0][1]:.4f} cpu {out[0][2]:.1f}s"
              f" | auto auc {out[1][0]:.4f} pauc {out[1][1]:.4f} cpu {out[1][2]:.1f}s "
              f"detections {det}", flush=True)


def cost(args):
    """``--cost``: process CPU seconds per 10,000 rows of ``forgetting="auto"`` against the
    plain learner on the abrupt stream (``fit`` of the whole stream, and ``learn_one`` row
    by row over its first 10,000 rows), the two interleaved, min of ``--repeats``."""
    import scipy.sparse as sp

    from sosl import OAUCS, PartialOAUCM
    from sosl.sketch import SketchedOAUCM

    n = args.n
    X, y, _ = make_drift_stream(n, 20, drift="abrupt", positive_rate=0.02,
                                random_state=args.seed)
    Xt, yt, _ = make_drift_stream(n, 2000, kind="text", drift="abrupt", positive_rate=0.02,
                                  random_state=args.seed)
    Xs = sp.csr_matrix(X)
    cases = [("OAUCM", OAUCM, X, y, 1.0), ("OAUCS", OAUCS, X, y, 1.0),
             ("PartialOAUCM", PartialOAUCM, X, y, 1.0),
             ("SketchedOAUCM", SketchedOAUCM, Xs, y, 1.0),
             ("FTRLAUC (text)", FTRLAUC, Xt, yt, 1.0)]
    print(f"\nCPU seconds per 10,000 rows, min of {args.repeats} (fixed -> auto)")
    m = min(10_000, n)
    for name, Est, A, b, plain in cases:
        best = {}
        for _ in range(args.repeats):
            for f in (plain, "auto"):
                t0 = time.process_time()
                Est(forgetting=f).fit(A, b)
                t_fit = (time.process_time() - t0) * 10_000 / n
                model = Est(forgetting=f)
                rows = [A[i] if not sp.issparse(A) else A[i:i + 1] for i in range(m)]
                t0 = time.process_time()
                model.learn_one(rows[0], b[0], classes=[0, 1])
                for i in range(1, m):
                    model.learn_one(rows[i], b[i])
                t_one = (time.process_time() - t0) * 10_000 / m
                old = best.get(f, (math.inf, math.inf))
                best[f] = (min(old[0], t_fit), min(old[1], t_one))
        print(f"{name:15s} fit {best[plain][0]:.3f} -> {best['auto'][0]:.3f} s   "
              f"learn_one {best[plain][1]:.3f} -> {best['auto'][1]:.3f} s", flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=60_000, help="rows per stream")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--delays", type=int, nargs="+", default=[0, 1000, 10_000])
    ap.add_argument("--window", type=int, default=5000, help="rolling AUC window (rows)")
    ap.add_argument("--every", type=int, default=250, help="rows between records")
    ap.add_argument("--no-river", action="store_true")
    ap.add_argument("--river", action="store_true",
                    help="also river's SEA and Hyperplane generators, made imbalanced")
    ap.add_argument("--streams", nargs="+", default=None,
                    help="only these streams (abrupt gradual recurring none sea hyperplane)")
    ap.add_argument("--text", action="store_true",
                    help="also FTRLAUC none/auto on sparse text-like streams")
    ap.add_argument("--quick", action="store_true", help="20,000 rows, delays 0 and 1000")
    ap.add_argument("--cost", action="store_true",
                    help="only the CPU cost of forgetting='auto' per learner")
    ap.add_argument("--repeats", type=int, default=3, help="repeats of --cost")
    args = ap.parse_args(argv)
    if args.quick:
        args.n, args.delays, args.window = 20_000, [0, 1000], 2000
    if args.cost:
        cost(args)
        return []
    if river_linear is None and not args.no_river:
        print("river is not installed: its rows are skipped (pip install sosl[river])")
    rows = run(args)
    verdict(rows)
    if args.text:
        text_runs(args)
    return rows


if __name__ == "__main__":
    main()
