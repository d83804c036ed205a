"""FTRL-AUC against SGDClassifier(loss="hinge", shuffle=False) on the same hashed text rows.

Two corpora, each through ``HashingVectorizer(n_features=2**20)`` (l2-normalised rows,
:func:`sosl.datasets.vectorize_texts`), read from ``$SOSL_DATA_DIR/highdim`` (default
``/work/shared/data``):

* ``sms_spam``: the SMS Spam Collection (``label<TAB>text``, :func:`sosl.datasets.load_sms_spam`),
  spam positive;
* ``davidson``: the Davidson et al. tweets (``davidson_labeled_data.csv``, read with the
  csv module), class 0 (hate speech) positive against the rest; a larger vocabulary.

Each corpus is split once by a seeded permutation into 80 % training rows (kept in the
permuted order) and 20 % held-out rows. Both learners see the training rows in that same
order: ``SGDClassifier(loss="hinge", shuffle=False, random_state=0).partial_fit`` visits
them in the order given, as FTRL-AUC does. Timed, in process CPU time, the contenders
interleaved within each repeat and the minimum over ``--repeat`` repeats kept:

* ``fresh``: one call over the training rows on a new model (``FTRLAUC().fit`` against
  the first ``SGDClassifier.partial_fit(..., classes=[0, 1])``), allocation included;
* ``again``: one more call over the same rows on a model that has seen them
  (``partial_fit`` of both), the per-row cost without the allocation;
* ``chunks``: a new model fed the training rows ``--chunk`` at a time (``partial_fit`` of
  both), the per-call overhead of a stream.

Printed per corpus and mode: rows/s of both, their ratio (target >= 1.0), and the CPU
nanoseconds per stored entry; then the held-out AUC of both after the one ``fresh`` pass
(the decision function of each; AUC ignores the intercept).

What each figure holds: a fresh model allocates its state (FTRL-AUC three vectors of
2^20, 24 MiB; SGD one, 8 MiB), whose first touch costs page faults that vary with the
machine's memory state; SGD also does O(p) work in every call (it rescales and checks
its whole weight vector), FTRL-AUC none on a fitted model, which is what ``again`` and
``chunks`` show. SGD with hinge loss skips the update of a row whose margin is >= 1,
FTRL-AUC updates every row.

Usage: ``python benchmarks/bench_ftrl.py [--repeat 5] [--chunk 500] [--gamma 0.1] [--seed 0]``
"""

import argparse
import csv
import os
import sys
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import SGDClassifier

from sosl import FTRLAUC
from sosl.datasets import DataDirectoryError, DatasetNotFoundError, load_sms_spam, vectorize_texts
from sosl.metrics import auc

TARGET = 1.0
N_FEATURES = 2 ** 20


def _davidson(data_dir):
    path = os.path.join(data_dir, "highdim", "davidson_labeled_data.csv")
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    texts = [row["tweet"] for row in rows]
    y = np.array([int(row["class"]) == 0 for row in rows], dtype=np.int64)
    return texts, y


def _sms(data_dir):
    try:
        return load_sms_spam(data_dir)
    except DatasetNotFoundError:
        return None


def _split(X, y, seed):
    perm = np.random.default_rng(seed).permutation(X.shape[0])
    cut = int(0.8 * X.shape[0])
    tr, te = perm[:cut], perm[cut:]
    return X[tr], y[tr], X[te], y[te]


def _cpu(fn):
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def _sgd():
    return SGDClassifier(loss="hinge", shuffle=False, random_state=0)


def _contenders(X, y, gamma, chunk):
    """mode -> {learner: (setup, timed)}; setup builds what the timed call starts from."""
    classes = np.array([0, 1])
    pieces = [(X[a:a + chunk], y[a:a + chunk]) for a in range(0, X.shape[0], chunk)]

    def ftrl_chunks(m):
        for Xc, yc in pieces:
            m.partial_fit(Xc, yc, classes=classes)

    def sgd_chunks(m):
        for Xc, yc in pieces:
            m.partial_fit(Xc, yc, classes=classes)

    return {
        "fresh": {"FTRL-AUC": (lambda: FTRLAUC(gamma=gamma), lambda m: m.fit(X, y)),
                  "SGD hinge": (_sgd, lambda m: m.partial_fit(X, y, classes=classes))},
        "again": {"FTRL-AUC": (lambda: FTRLAUC(gamma=gamma).fit(X, y),
                               lambda m: m.partial_fit(X, y)),
                  "SGD hinge": (lambda: _sgd().partial_fit(X, y, classes=classes),
                                lambda m: m.partial_fit(X, y))},
        "chunks": {"FTRL-AUC": (lambda: FTRLAUC(gamma=gamma), ftrl_chunks),
                   "SGD hinge": (_sgd, sgd_chunks)},
    }


def _time(X, y, gamma, chunk, repeat):
    best = {}
    runs = _contenders(X, y, gamma, chunk)
    for _ in range(repeat):
        for mode, learners in runs.items():
            for name, (setup, timed) in learners.items():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    model = setup()
                    sec = _cpu(lambda model=model, timed=timed: timed(model))
                best[mode, name] = min(best.get((mode, name), np.inf), sec)
    return best


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--chunk", type=int, default=500)
    parser.add_argument("--gamma", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.repeat < 1 or args.chunk < 1 or not args.gamma > 0:
        print("bench_ftrl: --repeat and --chunk must be >= 1 and --gamma > 0", file=sys.stderr)
        return 2
    data_dir = os.environ.get("SOSL_DATA_DIR", "/work/shared/data")
    try:
        corpora = {"sms_spam": _sms(data_dir), "davidson": _davidson(data_dir)}
    except DataDirectoryError as err:
        print(f"bench_ftrl: {err}", file=sys.stderr)
        return 2
    corpora = {k: v for k, v in corpora.items() if v is not None}
    if not corpora:
        print(f"bench_ftrl: neither SMSSpamCollection nor davidson_labeled_data.csv under "
              f"{data_dir}/highdim", file=sys.stderr)
        return 2
    print(f"FTRLAUC(gamma={args.gamma}) against SGDClassifier(loss='hinge', shuffle=False)"
          f".partial_fit on the same training rows in the same order; hashed to 2^20 "
          f"columns; process CPU time, contenders interleaved, min of {args.repeat}; "
          f"target FTRL/SGD >= {TARGET}")
    print("\n| corpus | train rows | nnz | mode | FTRL rows/s | SGD rows/s (in order) | "
          "FTRL/SGD | FTRL ns/nnz | SGD ns/nnz |")
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|")
    aucs = {}
    for label, (texts, y) in corpora.items():
        X = vectorize_texts(texts, "hashing", N_FEATURES)
        Xtr, ytr, Xte, yte = _split(X, y, args.seed)
        best = _time(Xtr, ytr, args.gamma, args.chunk, args.repeat)
        n, nnz = Xtr.shape[0], Xtr.nnz
        for mode in ("fresh", "again", "chunks"):
            f, s = best[mode, "FTRL-AUC"], best[mode, "SGD hinge"]
            name = f"chunks of {args.chunk}" if mode == "chunks" else mode
            print(f"| {label} | {n} | {nnz} | {name} | {n / f:,.0f} | {n / s:,.0f} | "
                  f"{s / f:.2f} | {1e9 * f / nnz:.1f} | {1e9 * s / nnz:.1f} |")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            ftrl = FTRLAUC(gamma=args.gamma).fit(Xtr, ytr)
            sgd = _sgd().partial_fit(Xtr, ytr, classes=np.array([0, 1]))
        aucs[label] = (Xte.shape[0], int(yte.sum()), auc(yte, ftrl.decision_function(Xte)),
                       auc(yte, sgd.decision_function(Xte)))
    print("\nheld-out AUC after one pass over the training rows (same order):")
    print("| corpus | test rows | positives | FTRL-AUC | SGD hinge (in order) |")
    print("|---|---:|---:|---:|---:|")
    for label, (m, pos, a_f, a_s) in aucs.items():
        print(f"| {label} | {m} | {pos} | {a_f:.4f} | {a_s:.4f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
