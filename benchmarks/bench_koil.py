"""Throughput of KOIL and POLK, measured in one run and printed with ratios.

KOIL: updates/second of the Cython pass at budget N+ = N- = B (default 100 + 100) for
p = 20 (and the other ``--dims``), both buffer policies, in steady state: the buffers are
filled by a warm-up pass first, then the Cython pass and the NumPy reference are timed
from copies of the same state, interleaved, in process CPU time (min of 3 runs each; the
reference on ``--ref-T`` rows, scaled). The ratio printed is Cython / NumPy reference,
both measured in this run. The budgets vary at p = 20 (per-step cost O(B p + B_o B):
~linear to quadratic in B).

For orientation only (not measured here, other hardware, not a ratio): a figure of about
680 updates/s per core at 100 + 100, p = 20 has been given for the authors' public C++
KOIL code (github.com/JunjieHu/koil); it is printed as a citation under the table.

POLK: updates/second of ``POLK.fit`` on a 2-D and a 20-D stream (constant step, default
budget), with the model order reached; its cost is driven by the O(M^3) factorization
inside KOMP, so the model order is printed beside the rate.

With ``--auc DATASET ...`` it also reports KOIL's test AUC on a dataset of ``$SOSL_DATA_DIR``
(features scaled to [-1, 1]) by 4 x 5-fold cross-validation, budgets 100 + 100,
(C, gamma) chosen by an inner 3-fold CV on each training split, rows visited in a seeded
random order (``shuffle=True``); this is the protocol of the paper's Table 3.

Usage: ``python benchmarks/bench_koil.py [--T 20000] [--ref-T 1000] [--polk-T 5000]
[--auc fourclass diabetes ...] [--skip-speed]``
"""

import argparse
import copy
import time

import numpy as np

from sosl import KOIL, POLK
from sosl._core import _koil, _koil_ref

#: outside figure, cited (not measured, not used in any ratio): authors' C++ KOIL code
CPP_KOIL_CITATION = ("cited, not measured: ~680 updates/s per core at 100 + 100, p = 20, "
                     "for the authors' public C++ KOIL code (github.com/JunjieHu/koil)")


def _data(T, p, seed=0, pos_rate=0.3):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(T, p))
    score = np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2 % p] + 0.3 * rng.normal(size=T)
    y = (score > np.quantile(score, 1 - pos_rate)).astype(int)
    return X, y


def _koil_rates(p, B, policy, T, ref_T, warm=2000):
    X, y = _data(warm + T, p, seed=p + B)
    s = np.where(y == 1, 1.0, -1.0)
    model = KOIL(budget=B, policy=policy, gamma=1.0 / p, random_state=0)
    model.fit(X[:warm], y[:warm])                          # fills both buffers
    state0 = {name: copy.deepcopy(getattr(model, name))
              for name in model._state_names + ("t_",)}
    order = np.arange(warm, warm + T, dtype=np.intp)

    lay = model._layout_
    t_cy = t_ref = np.inf
    for _ in range(3):                    # interleaved, min of 3: the machine is shared
        st = copy.deepcopy(state0)
        t0 = time.process_time()
        _koil.koil_pass(*model._pass_args(st, X, s, order, lay))
        t_cy = min(t_cy, time.process_time() - t0)
        st = copy.deepcopy(state0)
        t0 = time.process_time()
        _koil_ref.koil_pass(*model._pass_args(st, X, s, order[:ref_T], lay))
        t_ref = min(t_ref, (time.process_time() - t0) * T / ref_T)
    return T / t_cy, T / t_ref


def koil_table(T, ref_T, dims, budgets):
    print(f"\nKOIL, steady state (buffers full), T={T} timed rows "
          f"(reference on {ref_T} rows, scaled), updates/second")
    print(f"{'p':>4} {'N+ + N-':>9} {'policy':<7} {'cython/s':>10} {'numpy ref/s':>12} "
          f"{'cy/ref':>7}")
    for p in dims:
        for B in budgets:
            for policy in ("rs++", "fifo++"):
                cy, nr = _koil_rates(p, B, policy, T, ref_T)
                print(f"{p:>4} {f'{B}+{B}':>9} {policy:<7} {cy:>10.0f} {nr:>12.0f} "
                      f"{cy / nr:>7.1f}", flush=True)
    print(f"  ({CPP_KOIL_CITATION})")


def polk_table(T):
    print(f"\nPOLK.fit, constant step eta=0.1, eps = eta^1.5, hinge loss, T={T}")
    print(f"{'p':>4} {'gamma':>6} {'updates/s':>10} {'final M':>8} {'max M':>6}")
    for p, gamma in ((2, 2.0), (20, 0.05)):
        X, y = _data(T, p, seed=7)
        model = POLK(eta=0.1, gamma=gamma)
        t0 = time.process_time()
        model.fit(X, y)
        dt = time.process_time() - t0
        print(f"{p:>4} {gamma:>6} {T / dt:>10.0f} {model.model_orders_[-1]:>8} "
              f"{model.model_orders_.max():>6}", flush=True)


def auc_table(name, n_repeats=4):
    import os

    from sklearn.model_selection import GridSearchCV, RepeatedStratifiedKFold, StratifiedKFold

    from sosl.datasets import load_dataset
    from sosl.metrics import auc
    X, y = load_dataset(name, data_dir=os.environ.get("SOSL_DATA_DIR"))
    p = X.shape[1]
    grid = {"C": [0.01, 0.1, 1.0, 10.0, 100.0],
            "gamma": [g / p for g in (0.5, 2.0, 8.0, 32.0, 128.0)]}
    outer = RepeatedStratifiedKFold(n_splits=5, n_repeats=n_repeats, random_state=0)
    scores, chosen = [], []
    t0 = time.perf_counter()
    for k, (tr, te) in enumerate(outer.split(X, y)):
        search = GridSearchCV(KOIL(budget=100, eta=0.05, shuffle=True, random_state=k), grid,
                              scoring="roc_auc",
                              cv=StratifiedKFold(3, shuffle=True, random_state=k))
        search.fit(X[tr], y[tr])
        scores.append(auc(y[te], search.decision_function(X[te])))
        chosen.append((search.best_params_["C"], search.best_params_["gamma"]))
    scores = np.array(scores)
    print(f"\nKOIL on {name}: {n_repeats} x 5-fold, budgets 100+100, eta=0.05, (C, gamma) by "
          f"inner 3-fold CV over C in {grid['C']}, gamma * p in (0.5, 2, 8, 32, 128)")
    print(f"  test AUC mean {scores.mean():.4f} +- {scores.std():.4f} over {len(scores)} folds "
          f"({time.perf_counter() - t0:.0f} s); most chosen (C, gamma): "
          f"{max(set(chosen), key=chosen.count)}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--T", type=int, default=20_000)
    parser.add_argument("--ref-T", type=int, default=1000)
    parser.add_argument("--polk-T", type=int, default=5000)
    parser.add_argument("--dims", type=int, nargs="+", default=[20])
    parser.add_argument("--budgets", type=int, nargs="+", default=[50, 100, 200, 400])
    parser.add_argument("--auc", nargs="+", default=None, help="dataset names for the AUC table")
    parser.add_argument("--skip-speed", action="store_true", help="only the AUC table")
    args = parser.parse_args(argv)
    for name in args.auc or ():
        auc_table(name)
    if args.skip_speed:
        return
    koil_table(args.T, args.ref_T, args.dims, args.budgets)
    polk_table(args.polk_T)


if __name__ == "__main__":
    main()
