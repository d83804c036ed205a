"""High-dimensional sparse data: test AUC and throughput of the sketched learner and its peers.

On each dataset of ``$SOSL_DATA_DIR/highdim`` (default ``/work/shared/data/highdim``): one
pass in the given order after a seeded shuffle, stratified k-fold (5 by default), test AUC
(mean and std over the folds) and throughput (training instances per second of process
CPU time, mean over the folds) for

* ``SketchedOAUCM`` at rank 8, 32, 128 (and the other sketch family at the default rank),
* the exact ``OAUCM`` where its p x p state fits (TF-IDF vocabulary of sms_spam, one fold
  and one lam because a fit takes about a minute there; w8a),
* ``FTRLAUC``, ``SGDClassifier`` (hinge, log_loss; one pass of ``partial_fit``),
* river's ``LogisticRegression`` on the same rows as dicts, if river is installed,
* batch ``LogisticRegression`` (lbfgs), the upper reference.

Every method gets the best of a small grid on the test folds (the same optimistic protocol
for all; the grids are printed). The targets are printed before any run, and PASS/MISS after.

Run: ``nice -n 10 python benchmarks/bench_highdim.py [--folds 5] [--datasets sms_hashed,...]``.
"""

import argparse
import os
import sys
import time

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file
from sklearn.feature_extraction.text import HashingVectorizer, TfidfVectorizer
from sklearn.linear_model import LogisticRegression, SGDClassifier
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold

from sosl import OAUCM
from sosl.ftrl import FTRLAUC
from sosl.sketch import SketchedOAUCM

DEFAULT_RANK = 32
DEFAULT_SKETCH = "fd_diag"
RANKS = (8, 32, 128)
LAMS = (1e-4, 1e-3, 1e-2)
TARGETS = """Targets (fixed before running):
  T1  FTRL-AUC (sparse first-order) >= 0.5x SGDClassifier.partial_fit throughput, sms_spam 2^20
  T2  SketchedOAUCM model memory <= 1 GiB at p = 2^20 (rank 128)
  T3  SketchedOAUCM at the default rank (32, fd_diag): AUC >= max(SGD hinge, SGD log_loss) and
      >= batch LogisticRegression - 0.01, on sms_spam (hashed 2^20) and w8a
  T4  SketchedOAUCM >= 1,000 instances/s on sms_spam hashed to 2^20 at rank 128
  T5  SketchedOAUCM >= 5x the exact OAUC-M throughput on the TF-IDF vocabulary of sms_spam,
      with AUC within 0.005 of it (same fold)"""


def _data_dir():
    base = os.environ.get("SOSL_DATA_DIR", "/work/shared/data")
    return os.path.join(base, "highdim")


def load_sms(path):
    """(texts, y) of the SMS Spam Collection; spam is the positive class."""
    with open(path, encoding="utf-8") as fh:
        pairs = [line.split("\t", 1) for line in fh.read().splitlines() if line]
    return [t for _, t in pairs], np.array([lab == "spam" for lab, _ in pairs], dtype=int)


def load_dorothea(data_path, labels_path, n_features=100_000):
    rows, cols = [], []
    with open(data_path) as fh:
        for i, line in enumerate(fh):
            idx = [int(v) - 1 for v in line.split()]
            rows.extend([i] * len(idx))
            cols.extend(idx)
    X = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(i + 1, n_features))
    return X, (np.loadtxt(labels_path) > 0).astype(int)


def _methods(name, has_exact):
    """(label, factory(param), grid) of every method for one dataset."""
    out = []
    for r in RANKS:
        out.append((f"sketch fd_diag r={r}",
                    lambda lam, r=r: SketchedOAUCM(lam=lam, rank=r, sketch="fd_diag"), LAMS))
    out.append((f"sketch fd r={DEFAULT_RANK}",
                lambda lam: SketchedOAUCM(lam=lam, rank=DEFAULT_RANK, sketch="fd"), LAMS))
    if has_exact:
        grid = (1e-3,) if name == "sms_tfidf" else LAMS
        out.append(("exact OAUC-M", lambda lam: OAUCM(lam=lam), grid))
    out.append(("FTRL-AUC", lambda g: FTRLAUC(gamma=g), (0.01, 0.1, 0.5, 2.0)))
    for loss in ("hinge", "log_loss"):
        out.append((f"SGD {loss}", lambda a, loss=loss: _SGDOnePass(loss, a), (1e-6, 1e-5, 1e-4)))
    out.append(("river LogReg", lambda lr: _River(lr), (0.01, 0.1)))
    out.append(("batch LogReg", lambda C: LogisticRegression(C=C, max_iter=2000),
                (1.0, 10.0, 100.0)))
    return out


class _SGDOnePass:
    """SGDClassifier, one pass of partial_fit over the rows in the given order."""

    def __init__(self, loss, alpha):
        self.model = SGDClassifier(loss=loss, alpha=alpha, shuffle=False, random_state=0)

    def fit(self, X, y):
        self.model.partial_fit(X, y, classes=np.array([0, 1]))
        return self

    def decision_function(self, X):
        return self.model.decision_function(X)


class _River:
    """river's LogisticRegression, learn_one over the rows as dicts (non-zeros only)."""

    def __init__(self, lr):
        from river import linear_model, optim
        self.model = linear_model.LogisticRegression(optimizer=optim.SGD(lr))

    @staticmethod
    def _rows(X):
        X = sp.csr_matrix(X)
        for i in range(X.shape[0]):
            lo, hi = X.indptr[i], X.indptr[i + 1]
            yield dict(zip(X.indices[lo:hi].tolist(), X.data[lo:hi].tolist()))

    def fit(self, X, y):
        for x, yi in zip(self._rows(X), y):
            self.model.learn_one(x, bool(yi))
        return self

    def decision_function(self, X):
        return np.array([self.model.predict_proba_one(x).get(True, 0.0) for x in self._rows(X)])


def _river_available():
    try:
        import river  # noqa: F401
    except ImportError:
        return False
    return True


def _model_bytes(model):
    return sum(v.nbytes for v in vars(model).values() if isinstance(v, np.ndarray))


def run_dataset(name, X_all, y, folds, seed, featurize=None, exact_folds=None):
    """Best-of-grid mean AUC and throughput of every method; returns rows and extras."""
    has_exact = name in ("sms_tfidf", "w8a")
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(y))
    y = y[perm]
    X_all = X_all[perm] if featurize is None else [X_all[i] for i in perm]
    splits = list(StratifiedKFold(folds, shuffle=True, random_state=seed).split(
        np.zeros(len(y)), y))
    fold_data = []
    for tr, te in splits:
        if featurize is None:
            fold_data.append((X_all[tr], X_all[te], tr, te))
        else:
            Xtr, Xte = featurize([X_all[i] for i in tr], [X_all[i] for i in te])
            fold_data.append((Xtr, Xte, tr, te))
    rows, extras = [], {}
    for label, factory, grid in _methods(name, has_exact):
        if label.startswith("river") and not _river_available():
            rows.append((label, None, None, None, None, "not installed (optional)", []))
            continue
        use = fold_data if not (label == "exact OAUC-M" and exact_folds) else \
            fold_data[:exact_folds]
        best = None
        for param in grid:
            aucs, rates, models = [], [], []
            for Xtr, Xte, tr, te in use:
                dense = label == "exact OAUC-M"
                Xf = Xtr.toarray() if dense else Xtr
                model = factory(param)
                t0 = time.process_time()
                model.fit(Xf, y[tr])
                dt = time.process_time() - t0
                scores = model.decision_function(Xte.toarray() if dense else Xte)
                aucs.append(roc_auc_score(y[te], scores))
                rates.append(len(tr) / max(dt, 1e-9))
                models.append(model)
            if best is None or np.mean(aucs) > np.mean(best[1]):
                best = (param, aucs, rates, models[0])
        param, aucs, rates, model = best
        rows.append((label, float(np.mean(aucs)), float(np.std(aucs)), float(np.mean(rates)),
                     param, f"{len(use)} fold(s)", aucs))
        if isinstance(model, SketchedOAUCM):
            extras[label] = {"bytes": _model_bytes(model), "m": model.n_active_}
    return rows, extras


def timing_ftrl_vs_sgd(X, y, repeats=5):
    """Interleaved min-of-repeats process time of one pass: FTRL-AUC vs SGD partial_fit."""
    best = {"ftrl": np.inf, "sgd": np.inf}
    for _ in range(repeats):
        t0 = time.process_time()
        FTRLAUC(gamma=0.5).fit(X, y)
        best["ftrl"] = min(best["ftrl"], time.process_time() - t0)
        t0 = time.process_time()
        SGDClassifier(loss="log_loss", shuffle=False).partial_fit(X, y, classes=np.array([0, 1]))
        best["sgd"] = min(best["sgd"], time.process_time() - t0)
    return best["sgd"] / best["ftrl"]


def _print_table(name, p, rows, extras):
    print(f"\n## {name} (p = {p})")
    print(f"| {'method':22s} | {'test AUC':>15s} | {'inst/s':>9s} | {'best param':>10s} | note |")
    print(f"|{'-' * 24}|{'-' * 17}|{'-' * 11}|{'-' * 12}|------|")
    for label, auc_m, auc_s, rate, param, note, _ in rows:
        if auc_m is None:
            print(f"| {label:22s} | {'-':>15s} | {'-':>9s} | {'-':>10s} | {note} |")
            continue
        extra = ""
        if label in extras:
            extra = f", m={extras[label]['m']}, {extras[label]['bytes'] / 2 ** 20:.1f} MiB"
        print(f"| {label:22s} | {auc_m:.4f} +- {auc_s:.4f} | {rate:9.0f} | {param:10.0e} | "
              f"{note}{extra} |")
    sys.stdout.flush()


def _verdict(ok):
    return "PASS" if ok else "MISS"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--datasets", default="sms_hashed,sms_tfidf,w8a,dorothea")
    args = ap.parse_args(argv)
    if args.folds < 2:
        print("bench_highdim: --folds must be >= 2", file=sys.stderr)
        return 2
    d = _data_dir()
    if not os.path.isdir(d):
        print(f"bench_highdim: no data directory {d} (set SOSL_DATA_DIR)", file=sys.stderr)
        return 2
    print(TARGETS)
    results = {}
    names = args.datasets.split(",")
    texts = y_sms = None
    if any(n.startswith("sms") for n in names):
        texts, y_sms = load_sms(os.path.join(d, "SMSSpamCollection"))
    for name in names:
        if name == "sms_hashed":
            X = HashingVectorizer(n_features=2 ** 20, alternate_sign=False).transform(texts)
            rows, extras = run_dataset(name, X, y_sms, args.folds, args.seed)
            results[name] = (rows, extras, X.shape[1])
            results["_t1"] = timing_ftrl_vs_sgd(X, y_sms)
        elif name == "sms_tfidf":
            def featurize(tr, te):
                vec = TfidfVectorizer(min_df=2).fit(tr)
                return vec.transform(tr), vec.transform(te)
            rows, extras = run_dataset(name, np.array(texts, dtype=object), y_sms, args.folds,
                                       args.seed, featurize=featurize, exact_folds=1)
            m = extras["sketch fd_diag r=8"]["m"]
            results[name] = (rows, extras, f"{m} (TF-IDF, min_df=2, fitted on training fold)")
        elif name == "w8a":
            X, y = load_svmlight_file(os.path.join(d, "w8a"), n_features=300)
            rows, extras = run_dataset(name, X.tocsr(), (y > 0).astype(int), args.folds,
                                       args.seed)
            results[name] = (rows, extras, 300)
        elif name == "dorothea":
            X, y = load_dorothea(os.path.join(d, "dorothea_valid.data"),
                                 os.path.join(d, "dorothea_valid.labels"))
            rows, extras = run_dataset(name, X, y, args.folds, args.seed)
            results[name] = (rows, extras, 100_000)
        else:
            print(f"bench_highdim: unknown dataset {name!r}", file=sys.stderr)
            return 2
        _print_table(name, results[name][2], results[name][0], results[name][1])

    print("\n## Targets")
    get = {n: {r[0]: r for r in results[n][0]} for n in results if not n.startswith("_")}
    if "_t1" in results:
        print(f"T1  FTRL-AUC / SGD partial_fit throughput = {results['_t1']:.2f}x (>= 0.5)  "
              f"{_verdict(results['_t1'] >= 0.5)}")
    if "sms_hashed" in get:
        ex = results["sms_hashed"][1]["sketch fd_diag r=128"]
        print(f"T2  model memory r=128, p=2^20: {ex['bytes'] / 2 ** 20:.1f} MiB (<= 1024)  "
              f"{_verdict(ex['bytes'] <= 2 ** 30)}")
        rate = get["sms_hashed"]["sketch fd_diag r=128"][3]
        print(f"T4  r=128 throughput {rate:.0f} inst/s (>= 1000)  {_verdict(rate >= 1000)}")
    for n in ("sms_hashed", "w8a"):
        if n in get:
            g = get[n]
            mine = g[f"sketch {DEFAULT_SKETCH} r={DEFAULT_RANK}"][1]
            sgd = max(g["SGD hinge"][1], g["SGD log_loss"][1])
            lr = g["batch LogReg"][1]
            print(f"T3  {n}: sketch r={DEFAULT_RANK} {mine:.4f} vs best SGD {sgd:.4f} "
                  f"{_verdict(mine >= sgd)}; vs batch LR {lr:.4f} - 0.01 "
                  f"{_verdict(mine >= lr - 0.01)}")
    if "sms_tfidf" in get:
        g = get["sms_tfidf"]
        ex = g["exact OAUC-M"]
        sk = g["sketch fd_diag r=128"]
        ratio = sk[3] / ex[3]
        print(f"T5  TF-IDF sms: sketch r=128 {sk[3]:.0f} inst/s vs exact {ex[3]:.1f} inst/s = "
              f"{ratio:.1f}x (>= 5) {_verdict(ratio >= 5)}; AUC on fold 1 {sk[6][0]:.4f} vs "
              f"exact {ex[6][0]:.4f} {_verdict(sk[6][0] >= ex[6][0] - 0.005)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
