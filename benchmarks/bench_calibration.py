"""Probabilities of the learners: the online Platt scaling against CalibratedClassifierCV.

For each dataset (three shared LIBSVM sets when ``SOSL_DATA_DIR`` is set, plus the embedded
breast-cancer set), 5-fold stratified: on each training fold, (a) the learner alone, its
``predict_proba`` coming from the online one-parameter Platt scaling it learns while it
trains, and (b) ``CalibratedClassifierCV(learner, method="sigmoid", cv=3)`` around the same
learner (scikit-learn's two-parameter Platt scaling, fitted on held-out inner folds, an
ensemble of 3 models). Both are scored on the test fold by Brier score and log loss (lower
is better), and by AUC (the ranking). The learners see each fold's rows once, in the
order given.

Usage: ``python benchmarks/bench_calibration.py [--datasets australian german diabetes]``
"""

import argparse
import os

import numpy as np
from sklearn.calibration import CalibratedClassifierCV
from sklearn.metrics import brier_score_loss, log_loss, roc_auc_score
from sklearn.model_selection import StratifiedKFold

from sosl import OAUCM, OKAUCM, Perceptron
from sosl.datasets import load_dataset, load_default

LEARNERS = {"OAUC-M": lambda: OAUCM(lam=2.0 ** -6), "Perceptron": Perceptron,
            "OKAUC-M": lambda: OKAUCM(lam=2.0 ** -6, gamma=1.0, budget=100)}


def evaluate(X, y, make, seed=0):
    rows = {"online Platt": [], "CalibratedClassifierCV": []}
    for train, test in StratifiedKFold(5, shuffle=True, random_state=seed).split(X, y):
        for name, model in [("online Platt", make()),
                            ("CalibratedClassifierCV",
                             CalibratedClassifierCV(make(), method="sigmoid", cv=3))]:
            model.fit(X[train], y[train])
            p = np.clip(model.predict_proba(X[test])[:, 1], 1e-15, 1 - 1e-15)
            rows[name].append((brier_score_loss(y[test], p), log_loss(y[test], p),
                               roc_auc_score(y[test], p)))
    return {k: np.mean(v, axis=0) for k, v in rows.items()}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=["australian", "german", "diabetes"],
                    help="shared datasets (read from SOSL_DATA_DIR)")
    args = ap.parse_args(argv)
    data = [("breast_cancer (embedded)", *load_default())]
    if os.environ.get("SOSL_DATA_DIR"):
        for name in args.datasets:
            X, y = load_dataset(name)
            data.append((name, X, y))
    else:
        print("SOSL_DATA_DIR is not set: only the embedded breast-cancer set is used")
    print("\n| dataset | learner | probabilities | Brier | log loss | AUC |")
    print("|---|---|---|---|---|---|")
    for dname, X, y in data:
        for lname, make in LEARNERS.items():
            for kind, (brier, ll, auc) in evaluate(X, y, make).items():
                print(f"| {dname} | {lname} | {kind} | {brier:.4f} | {ll:.4f} | {auc:.4f} |")


if __name__ == "__main__":
    main()
