"""Time per ``POLK.fit``: typed pass (inverse Gram matrix kept) vs the NumPy reference.

Both are timed in one run on the same rows, in process CPU time (``POLK.fit`` and the
reference pass :func:`sosl._core._polk_ref.polk_pass` from an empty dictionary), and the
ratio reference/typed is printed with the final model order, whether the two runs kept
the same dictionary, their largest weight difference, and how many rounds the typed pass
handed to the rank-revealing round (numerically dependent atoms). Cases:

* german (``SOSL_DATA_DIR`` or ``--data``), large model orders: POLK(lam=2^-6, gamma=1)
  and POLK(lam=2^-10, gamma=16). The reference is O(M^3) per round and M grows with the
  rows here, so its time does not scale linearly in the rows: both backends are timed on
  the first ``--ref-rows`` rows (ratio measured), and the typed pass alone on ``--rows``;
* a small-order case (synthetic disc, 2 features, default POLK, M < 100);
* an ill-conditioned case (wide kernel, tiny budget) where many rounds fall back or
  rebuild the inverse.

Usage: ``python benchmarks/bench_polk.py [--rows 800] [--ref-rows 400] [--data DIR]``
(``--ref-rows 800`` reproduces the full reference timings: several minutes).
"""

import argparse
import os
import time
import types

import numpy as np

import sosl.polk
from sosl import POLK
from sosl._core import _polk_driver, _polk_ref
from sosl._core._kparams import KERNEL_CODES, kernel_spec, step_spec


def _disc(n, p, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, p))
    y = (np.sum(X ** 2, axis=1) < p / 3).astype(int)
    flip = rng.random(n) < 0.1
    y[flip] = 1 - y[flip]
    return X, y


def _fit(backend, params, X, y):
    """Fit once; returns (CPU seconds, fitted attributes, rounds with dependent atoms)."""
    if backend == "numpy":
        m = POLK(**params)
        s = np.where(y == 1, 1.0, -1.0)
        eps_rule = _polk_ref.EPS_PAPER if m.epsilon is None else _polk_ref.EPS_FIXED
        step = step_spec(m.eta, m.lam, sosl.polk._SCHEDULES[m.schedule],
                         sosl.polk._LOSSES[m.loss])
        polk = _polk_driver.polk_spec(eps_rule, 0.0 if m.epsilon is None else m.epsilon,
                                      m.parsimony)
        kern = kernel_spec(KERNEL_CODES[m.kernel], m.gamma, m.degree, m.coef0)
        t0 = time.process_time()
        D, w, _, _, orders, _, _ = _polk_ref.polk_pass(
            X, s, np.arange(X.shape[0], dtype=np.intp), np.zeros((0, X.shape[1])), np.zeros(0),
            np.zeros((0, 0)), 0, step, polk, kern)
        seconds = time.process_time() - t0
        return seconds, types.SimpleNamespace(support_vectors_=D, dual_coef_=w,
                                              model_orders_=orders), 0
    calls = []
    step = _polk_driver.dependent_round

    def counting(*args, **kwargs):
        calls.append(1)
        return step(*args, **kwargs)
    _polk_driver.dependent_round = counting
    try:
        t0 = time.process_time()
        model = POLK(**params).fit(X, y)
        seconds = time.process_time() - t0
    finally:
        _polk_driver.dependent_round = step
    return seconds, model, len(calls)


def _row(label, params, X, y, with_ref=True):
    t_fast, fast, n_ref_rounds = _fit("cython", params, X, y)
    out = {"case": label, "rows": X.shape[0], "M": int(fast.model_orders_[-1]),
           "fast_s": t_fast, "ref_rounds": n_ref_rounds}
    if with_ref:
        t_ref, ref, _ = _fit("numpy", params, X, y)
        same = np.array_equal(fast.support_vectors_, ref.support_vectors_)
        out.update(ref_s=t_ref, ratio=t_ref / t_fast, same=same,
                   dw=float(np.abs(fast.dual_coef_ - ref.dual_coef_).max()) if same else np.nan)
    print(f"{out['case']:<34} {out['rows']:>5} {out['M']:>5} {out['fast_s']:>9.3f} "
          + (f"{out['ref_s']:>9.2f} {out['ratio']:>8.1f} {str(out['same']):>6} {out['dw']:>9.1e}"
             if with_ref else f"{'-':>9} {'-':>8} {'-':>6} {'-':>9}")
          + f" {out['ref_rounds']:>7}", flush=True)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=800)
    parser.add_argument("--ref-rows", type=int, default=400)
    parser.add_argument("--data", default=os.environ.get("SOSL_DATA_DIR", "/work/shared/data"))
    args = parser.parse_args()
    print(f"{'case':<34} {'rows':>5} {'M':>5} {'typed s':>9} {'ref s':>9} {'ref/typ':>8} "
          f"{'same D':>6} {'max|dw|':>9} {'fallbk':>7}")
    try:
        from sosl.datasets import load_dataset
        X, y = load_dataset("german", args.data)
    except (OSError, ValueError) as exc:          # no data: synthetic cases only
        print(f"german not available ({exc}); skipping")
    else:
        for lam, gamma in [(2.0 ** -6, 1.0), (2.0 ** -10, 16.0)]:
            params = {"lam": lam, "gamma": gamma}
            label = f"german lam=2^{int(np.log2(lam))} gamma={gamma:g}"
            _row(label, params, X[:args.ref_rows], y[:args.ref_rows])
            if args.rows != args.ref_rows:
                _row(label, params, X[:args.rows], y[:args.rows], with_ref=False)
    X, y = _disc(3000, 2, 0)
    _row("disc p=2 default (small order)", {"eta": 0.1, "lam": 1e-3, "gamma": 2.0}, X, y)
    X, y = _disc(600, 5, 1)
    _row("disc p=5 gamma=.2 eps=1e-3 ill-cond",
         {"eta": 0.5, "lam": 1e-3, "gamma": 0.2, "epsilon": 1e-3}, X, y)


if __name__ == "__main__":
    main()
