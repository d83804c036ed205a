"""Timing helpers shared by the benchmark scripts: process CPU time, interleaved minima."""

import time

import numpy as np


def cpu_time(fn):
    """Process CPU seconds of one call of ``fn`` (all threads of this process)."""
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def interleaved_min(fns, repeat):
    """Min CPU seconds of each function, the functions run in turn ``repeat`` times."""
    best = [np.inf] * len(fns)
    for _ in range(repeat):
        for k, fn in enumerate(fns):
            best[k] = min(best[k], cpu_time(fn))
    return best
