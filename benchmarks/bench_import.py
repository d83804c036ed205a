"""Start-up cost of sosl: the CPU time of a fresh interpreter that imports it, beside its peers.

Each command runs in a new ``python`` process; its CPU time (user + system, read from the
process's resource usage when it exits, the subprocess counterpart of
``time.process_time``) is the figure. The commands are interleaved and each one's minimum
over ``--repeat`` runs is printed, with its ratio to ``import sklearn.base`` measured in the
same run: every estimator subclasses scikit-learn's ``BaseEstimator``, so that import is the
floor of anything that fits a model. ``--baseline DIR`` times each sosl command once more with
``PYTHONPATH=DIR`` (another checkout, e.g. an earlier commit with its extensions built) and
prints the ratio of this tree to that one.

Usage::

    python benchmarks/bench_import.py [--repeat 7] [--baseline DIR]
"""

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PEERS = [
    ("python (nothing)", ["-c", "pass"]),
    ("import numpy, scipy.sparse", ["-c", "import numpy, scipy.sparse"]),
    ("import sklearn.base", ["-c", "import sklearn.base"]),
]
SOSL = [
    ("import sosl", ["-c", "import sosl"]),
    ("sosl --version", ["-m", "sosl", "--version"]),
    ("from sosl.metrics import auc", ["-c", "from sosl.metrics import auc"]),
    ("from sosl import OAUCM", ["-c", "from sosl import OAUCM"]),
    ("from sosl import *", ["-c", "from sosl import *"]),
]


def cpu_seconds(args, root):
    """CPU time of ``python ARGS`` with ``root`` first on the path (run from a neutral folder)."""
    env = dict(os.environ, PYTHONPATH=str(root))
    proc = subprocess.Popen([sys.executable, *args], env=env, cwd=os.path.sep,
                            stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        raise SystemExit(f"bench_import: {' '.join(args)} failed (status {status})")
    return usage.ru_utime + usage.ru_stime


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--baseline", type=Path, help="another checkout to compare with")
    opts = parser.parse_args(argv)
    if opts.repeat < 1:
        parser.error("--repeat must be at least 1")
    if opts.baseline is not None and not (opts.baseline / "sosl" / "__init__.py").is_file():
        parser.error(f"--baseline {opts.baseline}: no sosl/__init__.py there")
    runs = [(name, args, ROOT, "") for name, args in PEERS + SOSL]
    if opts.baseline is not None:
        runs += [(name, args, opts.baseline, "baseline") for name, args in SOSL]
    times = {(name, tag): [] for name, _, _, tag in runs}
    for _ in range(opts.repeat):               # interleaved: each round runs every command
        for name, args, root, tag in runs:
            times[name, tag].append(cpu_seconds(args, root))
    best = {key: min(values) for key, values in times.items()}
    floor = best["import sklearn.base", ""]
    version = sys.version.split()[0]
    print(f"CPU time of a fresh interpreter, min of {opts.repeat} runs (python {version})")
    for name, _ in PEERS + SOSL:
        mine = best[name, ""]
        line = f"{name:<30} {mine * 1e3:7.0f} ms   {mine / floor:5.2f} x sklearn.base"
        if (name, "baseline") in best:
            line += (f"   baseline {best[name, 'baseline'] * 1e3:7.0f} ms"
                     f"   this/baseline {mine / best[name, 'baseline']:5.2f}")
        print(line)


if __name__ == "__main__":
    main()
