"""Throughput of the linear baselines: Cython kernel vs NumPy reference, one run.

For each learner (Perceptron, PA-I, OAM_seq, OAM_gra with buffers of 100, OL-UBAUC,
SOLAM, AdaOAM) and p in {10, 36, 100}: instances/second of the Cython pass over T = 10^5
instances, of the NumPy reference over a smaller T (its time is per instance, so the
rates compare directly), and their ratio. Both start from the state after an untimed
pass over 1000 instances (full OAM buffers). Best of ``--repeat`` runs for Cython.

With ``--against PATH[,PATH...]`` the script instead compares this build's Cython passes
with other builds of the same module (an A/B, e.g. an older commit's ``_baselines``
compiled under another module name with the flags of ``setup.py``): for each learner
and p, every pass runs on the same rows in the same order from the same warm state (an
untimed pass of this build over 1000 rows), the builds taking turns and the order of the
turns reversed every other repeat, ``--repeat`` times; it prints the minimum process CPU
time of each as instances/second and each later build's rate over the first's. Each
``PATH`` is a compiled extension file (``.so``/``.pyd``), loaded only when given (nothing
here needs an old commit otherwise); it must take the same arguments as this build's
dense passes (``oam_pass`` and ``adaoam_pass`` with their ``work`` arrays).

Usage: ``python benchmarks/bench_baselines.py [--T 100000] [--repeat 3] [--seed 0]
[--against PATH [--learners OAM_seq,OAM_gra] [--p 10,36,100]]``
"""

import argparse
import importlib.machinery
import importlib.util
import os
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
        return mod.oam_pass(*args) if mod is R else mod.oam_pass(*args, np.zeros(2 * p))
    if name == "OL-UBAUC":
        return mod.ubauc_pass(X, s, order, st["w"], st["c"], st["N"], 0, 0.01,
                              int(Schedule.STEP_INV_LAM_T), 0.0)
    if name == "AdaOAM":
        args = (X, s, order, st["w"], st["xbar"], st["Sigma"], st["N"], st["G2"], 0, 0.01,
                0.1, 1e-8)
        return mod.adaoam_pass(*args) if mod is R else mod.adaoam_pass(*args, np.zeros(4 * p))
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


NAMES = ["Perceptron", "PA-I", "OAM_seq", "OAM_gra", "OL-UBAUC", "SOLAM", "AdaOAM"]


def _load(path):
    """The compiled extension at ``path``, under the module name its file name gives."""
    name = os.path.basename(path).split(".")[0]
    loader = importlib.machinery.ExtensionFileLoader(name, path)
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def _data(T, p, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (T, p))
    s = np.where(X[:, 0] + 0.5 * rng.normal(size=T) > 0.3, 1.0, -1.0)
    return X, s


def _ab(name, mods, X, s, repeat, warm):
    """Min process CPU seconds of each module's pass over (X, s) in the given order, from
    the same warm state, the modules alternating which runs first."""
    order = np.arange(X.shape[0], dtype=np.intp)
    warm_order = np.arange(warm[0].shape[0], dtype=np.intp)
    best = [np.inf] * len(mods)
    for rep in range(repeat):
        turn = range(len(mods)) if rep % 2 == 0 else reversed(range(len(mods)))
        for k in turn:
            st = _state(name, X.shape[1])
            _call(name, K, warm[0], warm[1], warm_order, st)
            t0 = time.process_time()
            _call(name, mods[k], X, s, order, st)
            best[k] = min(best[k], time.process_time() - t0)
    return best


def ab_main(args):
    """The A/B of this build against the modules at ``args.against`` (comma-separated;
    the first is the baseline every ratio is taken against)."""
    others = [_load(path) for path in args.against.split(",")]
    mods = others + [K]
    labels = [f"B{i}" for i in range(len(others))] + ["this"]
    names = args.learners.split(",") if args.learners else NAMES
    ps = [int(v) for v in args.p.split(",")]
    for label, mod in zip(labels, mods):
        print(f"{label}: {mod.__file__}")
    print(f"T = {args.T}, min of {args.repeat} interleaved runs (process CPU time); "
          f"OAM buffers {BUDGET} + {BUDGET}; ratio = instances/s over B0's")
    print(f"{'learner':<11} {'p':>4} " + " ".join(f"{lab + ' inst/s':>12}" for lab in labels)
          + " " + " ".join(f"{lab + '/B0':>8}" for lab in labels[1:]))
    for name in names:
        for p in ps:
            X, s = _data(args.T, p, args.seed)
            t = _ab(name, mods, X, s, args.repeat, (X[:1000], s[:1000]))
            print(f"{name:<11} {p:>4} " + " ".join(f"{args.T / v:>12.4g}" for v in t) + " "
                  + " ".join(f"{t[0] / v:>8.3f}" for v in t[1:]), flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--T", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--against", metavar="PATH[,PATH...]", default=None,
                        help="compiled extensions of other _baselines builds to A/B against "
                             "(the first is the baseline of the ratios)")
    parser.add_argument("--learners", default="", help="comma-separated (A/B only)")
    parser.add_argument("--p", default="10,36,100", help="comma-separated (A/B only)")
    args = parser.parse_args(argv)
    if args.against is not None:
        for path in args.against.split(","):
            if not os.path.isfile(path):
                parser.error(f"--against: no such file: {path}")
        return ab_main(args)
    names = NAMES
    # reference sizes: buffered learners loop in Python over the buffer
    t_ref = {"OAM_seq": 300, "OAM_gra": 2000}
    print(f"T = {args.T} (Cython), best of {args.repeat}; OAM buffers {BUDGET} + {BUDGET}")
    print(f"{'learner':<11} {'p':>4} {'Cython inst/s':>14} {'NumPy inst/s':>13} "
          f"{'T_ref':>6} {'ratio':>8}")
    for name in names:
        for p in (10, 36, 100):
            X, s = _data(args.T, p, args.seed)
            warm = (X[:1000], s[:1000])
            fast = _rate(name, K, X, s, args.repeat, warm)
            n_ref = min(args.T, t_ref.get(name, 5000))
            slow = _rate(name, R, X[:n_ref], s[:n_ref], 1, warm)
            print(f"{name:<11} {p:>4} {fast:>14.3g} {slow:>13.3g} {n_ref:>6} "
                  f"{fast / slow:>7.0f}x", flush=True)


if __name__ == "__main__":
    main()
