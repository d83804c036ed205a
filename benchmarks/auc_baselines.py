"""Mean test AUC of the linear baselines beside the paper's Table 2, from one run.

Protocol (the paper's, at a smaller scale): features scaled to [-1, 1]; ``--repeats``
independent stratified 5-fold partitions; on each training part the hyper-parameters
are chosen from a small grid by stratified 3-fold inner cross-validation (AUC), the
learner is refitted on the whole training part in one online pass (rows in a seeded
random order, ``shuffle=True``: several LIBSVM files are sorted by class) and scored by
the exact AUC on the test fold. breast_cancer is scikit-learn's (malignant positive);
the other datasets come from ``--data-dir`` (default ``$SOSL_DATA_DIR``) through
:func:`sosl.datasets.load_dataset` (positive label per the registry / MANIFEST.tsv).

Usage::

    nice python benchmarks/auc_baselines.py --datasets breast_cancer diabetes german australian
"""

import argparse
import csv
import os
import time
from collections import Counter

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import GridSearchCV, StratifiedKFold

from sosl import OAM, OLUBAUC, PAI, SOLAM, AdaOAM, Perceptron
from sosl.datasets import load_dataset, scale_features
from sosl.metrics import auc


def _pow2(lo, hi, step=2):
    return [2.0 ** k for k in range(lo, hi + 1, step)]


#: name -> (estimator factory given a seed, grid, paper Table 2 column or None)
LEARNERS = {
    "Perceptron": (lambda rs: Perceptron(shuffle=True, random_state=rs), {}, "Perceptron"),
    "PA-I": (lambda rs: PAI(shuffle=True, random_state=rs), {"C": _pow2(-10, 2)}, "PA-I"),
    "OAM_seq": (lambda rs: OAM(update="seq", shuffle=True, random_state=rs),
                {"C": _pow2(-16, 0)}, None),
    "OAM_gra": (lambda rs: OAM(update="gra", shuffle=True, random_state=rs),
                {"C": _pow2(-16, 0)}, "OAM"),
    "OL-UBAUC*": (lambda rs: OLUBAUC(shuffle=True, random_state=rs),
                  {"lam": _pow2(-10, 2)}, "OL-UBAUC"),
    "SOLAM": (lambda rs: SOLAM(shuffle=True, random_state=rs),
              {"eta": [0.01, 0.1, 1.0, 10.0], "radius": [0.1, 1.0, 10.0]}, None),
    "AdaOAM": (lambda rs: AdaOAM(shuffle=True, random_state=rs),
               {"lam": _pow2(-10, -2, 4), "eta": [0.01, 0.1, 1.0]}, None),
}


def _load(name, data_dir):
    if name == "breast_cancer":
        data = load_breast_cancer()
        return scale_features(data.data), (data.target == 0).astype(np.int64)
    return load_dataset(name, data_dir=data_dir)


def _paper_table(data_dir):
    path = os.path.join(data_dir, "PAPER_TABLES.tsv")
    table = {}
    if os.path.exists(path):
        with open(path) as fh:
            rows = (line for line in fh if not line.startswith("#"))
            for row in csv.DictReader(rows, delimiter="\t"):
                if row["table"] == "2":
                    table[row["dataset"], row["algorithm"]] = (float(row["auc_mean"]),
                                                               float(row["auc_std"]))
    return table


def evaluate(name, X, y, repeats, seed):
    """{learner: (list of test AUCs, Counter of chosen parameters)}."""
    out = {key: ([], Counter()) for key in LEARNERS}
    for rep in range(repeats):
        outer = StratifiedKFold(5, shuffle=True, random_state=seed + rep)
        for fold, (tr, te) in enumerate(outer.split(X, y)):
            rs = seed + 100 * rep + fold
            for key, (make, grid, _) in LEARNERS.items():
                if grid:
                    inner = StratifiedKFold(3, shuffle=True, random_state=rs)
                    # a grid point whose pass diverges (FloatingPointError) scores 0
                    search = GridSearchCV(make(rs), grid, scoring="roc_auc", cv=inner,
                                          error_score=0.0)
                    search.fit(X[tr], y[tr])
                    model = search.best_estimator_
                    chosen = tuple(sorted(search.best_params_.items()))
                else:
                    model, chosen = make(rs).fit(X[tr], y[tr]), ()
                out[key][0].append(auc(y[te], model.decision_function(X[te])))
                out[key][1][chosen] += 1
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+",
                        default=["breast_cancer", "diabetes", "german", "australian"])
    parser.add_argument("--repeats", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-dir", default=os.environ.get("SOSL_DATA_DIR",
                                                             "/work/shared/data"))
    args = parser.parse_args(argv)
    paper = _paper_table(args.data_dir)
    print(f"test AUC (%), mean +- std over {args.repeats} x 5-fold, inner 3-fold grid search; "
          f"seed {args.seed}")
    print(f"{'dataset':<14} {'learner':<11} {'AUC':>14} {'paper Table 2':>14}  most chosen")
    for name in args.datasets:
        X, y = _load(name, args.data_dir)
        t0 = time.perf_counter()
        res = evaluate(name, X, y, args.repeats, args.seed)
        for key, (aucs, chosen) in res.items():
            col = LEARNERS[key][2]
            ref = paper.get((name, col)) if col else None
            ref_txt = f"{ref[0]:6.2f} +- {ref[1]:4.2f}" if ref else "-"
            best = ", ".join(f"{k}={v:g}" for k, v in chosen.most_common(1)[0][0]) or "-"
            a = 100 * np.asarray(aucs)
            print(f"{name:<14} {key:<11} {a.mean():6.2f} +- {a.std():4.2f} {ref_txt:>14}  {best}")
        print(f"# {name}: n={X.shape[0]} p={X.shape[1]} positives={int(y.sum())} "
              f"({time.perf_counter() - t0:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
