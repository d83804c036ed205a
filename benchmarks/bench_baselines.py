"""Throughput of the linear baselines: Cython kernel vs NumPy reference, one run.

For each learner (Perceptron, PA-I, OAM_seq, OAM_gra with buffers of 100, OL-UBAUC,
SOLAM, AdaOAM) and p in {10, 36, 100}: instances/second of the Cython pass over T = 10^5
instances, of the NumPy reference over a smaller T (its time is per instance, so the
rates compare directly), and their ratio. Both start from the state after an untimed
pass over 1000 instances (full OAM buffers). Best of ``--repeat`` runs for Cython.

Usage: ``python benchmarks/bench_baselines.py [--T 100000] [--repeat 3] [--seed 0]``
"""

import argparse
import time

import numpy as np

from sosl._core import _baselines as K
from sosl._core import _baselines_ref as R
from sosl._core._codes import OamUpdate, Schedule

BUDGET = 100


def _state(name, p):
    if name in ("Perceptron", "PA-I"):
        return {"w": np.zeros(p)}
    if name.startswith("OAM"):
        return {"w": np.zeros(p), "B": np.zeros((2, BUDGET, p)), "nB": np.zeros(2, np.int64),
                "N": np.zeros(2, np.int64), "rng": np.array([1], np.uint64)}
    if name == "OL-UBAUC":
        return {"w": np.zeros(p), "c": np.zeros(1), "N": np.zeros(2, np.int64)}
    if name == "AdaOAM":
        return {"w": np.zeros(p), "xbar": np.zeros((2, p)), "Sigma": np.zeros((2, p, p)),
                "N": np.zeros(2, np.int64), "G2": np.zeros(p)}
    return {"v": np.zeros(p + 2), "v_avg": np.zeros(p + 2), "alpha": np.zeros(2),
            "G": np.zeros(1), "N": np.zeros(2, np.int64)}


def _call(name, mod, X, s, order, st):
    p = X.shape[1]
    if name == "Perceptron":
        return mod.perceptron_pass(X, s, order, st["w"], 0)
    if name == "PA-I":
        return mod.pa1_pass(X, s, order, st["w"], 0, 0.1)
    if name.startswith("OAM"):
        upd = int(OamUpdate.OAM_SEQ if name == "OAM_seq" else OamUpdate.OAM_GRA)
        args = (X, s, order, st["w"], st["B"], st["nB"], st["N"], st["rng"], 0, 0.01, upd)
        return mod.oam_pass(*args, np.zeros(2 * p)) if mod is K else mod.oam_pass(*args)
    if name == "OL-UBAUC":
        return mod.ubauc_pass(X, s, order, st["w"], st["c"], st["N"], 0, 0.01,
                              int(Schedule.STEP_INV_LAM_T), 0.0)
    if name == "AdaOAM":
        args = (X, s, order, st["w"], st["xbar"], st["Sigma"], st["N"], st["G2"], 0, 0.01,
                0.1, 1e-8)
        return mod.adaoam_pass(*args, np.zeros(4 * p)) if mod is K else mod.adaoam_pass(*args)
    return mod.solam_pass(X, s, order, st["v"], st["v_avg"], st["alpha"], st["G"], st["N"],
                          0, 1.0, 10.0)


def _rate(name, mod, X, s, repeat, warm):
    """Instances/second of ``mod``'s pass over (X, s), after an untimed Cython warm-up
    pass over ``warm`` (fills the OAM buffers, so both are timed in the steady state)."""
    order = np.arange(X.shape[0], dtype=np.intp)
    best = np.inf
    for _ in range(repeat):
        st = _state(name, X.shape[1])
        _call(name, K, warm[0], warm[1], np.arange(warm[0].shape[0], dtype=np.intp), st)
        t0 = time.process_time()
        _call(name, mod, X, s, order, st)
        best = min(best, time.process_time() - t0)
    return X.shape[0] / best


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--T", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    names = ["Perceptron", "PA-I", "OAM_seq", "OAM_gra", "OL-UBAUC", "SOLAM", "AdaOAM"]
    # reference sizes: buffered learners loop in Python over the buffer
    t_ref = {"OAM_seq": 300, "OAM_gra": 2000}
    print(f"T = {args.T} (Cython), best of {args.repeat}; OAM buffers {BUDGET} + {BUDGET}")
    print(f"{'learner':<11} {'p':>4} {'Cython inst/s':>14} {'NumPy inst/s':>13} "
          f"{'T_ref':>6} {'ratio':>8}")
    for name in names:
        for p in (10, 36, 100):
            rng = np.random.default_rng(args.seed)
            X = rng.uniform(-1, 1, (args.T, p))
            s = np.where(X[:, 0] + 0.5 * rng.normal(size=args.T) > 0.3, 1.0, -1.0)
            warm = (X[:1000], s[:1000])
            fast = _rate(name, K, X, s, args.repeat, warm)
            n_ref = min(args.T, t_ref.get(name, 5000))
            slow = _rate(name, R, X[:n_ref], s[:n_ref], 1, warm)
            print(f"{name:<11} {p:>4} {fast:>14.3g} {slow:>13.3g} {n_ref:>6} "
                  f"{fast / slow:>7.0f}x", flush=True)


if __name__ == "__main__":
    main()
