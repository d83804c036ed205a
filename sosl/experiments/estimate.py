"""What a run of the protocol would cost, measured before running it (``--estimate``).

For every (dataset, learner) of a run the estimate counts the tasks the cache in ``out``
does not hold yet (inner-CV tasks, the refits of the selected points and, with
``ceilings``, the oracle refits), then *times* real fits: ``points`` grid points drawn
with a fixed seed, each fitted once on the inner-CV training size of run 0 (its first
inner fold) and once on its whole training part, by the same code the tasks use
(:func:`sosl.experiments.protocol._fit_auc`: kernel training parts subsampled, the same
scaling and pass order). The estimate is then

    CPU s = mean inner fit x (CV tasks left x inner folds)
            + mean refit x (test refits left + oracle refits left),

process CPU time, so an idle n-core machine or cluster needs about that divided by n of
wall time. The spread between the timed points is printed beside the means: the cost of a
fit can vary by two orders of magnitude over a grid (an RBF SVC with a large C and a small
width against one with a small C), and a sample of a few points is a rough guide of the
order of magnitude, not a forecast to the minute. Nothing is written to ``out``.
"""

import time

import numpy as np
from sklearn.model_selection import StratifiedKFold

from .algorithms import grid_label, grid_points
from .protocol import _fit_auc, run_seed, train_part
from .runner import _params_key, get_data, plan

__all__ = ["estimate_run", "format_estimate"]


def _time_fit(spec, params, X, y, train, test, seed):
    c0 = time.process_time()
    _fit_auc(spec, params, X, y, train, test, seed)
    return time.process_time() - c0


def estimate_run(datasets, specs, grid, rows, cfg, points=3, ceilings=False):
    """Tasks left and measured fit costs of each (dataset, learner) of a run.

    Parameters
    ----------
    datasets : list of str
    specs : list of AlgorithmSpec
        The learners and batch references of the run, as ``run_experiment`` resolves them.
    grid : str
    rows : list of dict
        The cached rows (``runner.load_rows(out)``).
    cfg : dict
        ``seed``, ``n_repeats``, ``n_folds``, ``inner_folds``, ``max_points``, ``protocol``
        and ``data_dir``, as in the runner.
    points : int
        Grid points timed per learner (drawn without replacement, fixed seed).
    ceilings : bool
        Whether the run computes the oracle refits.

    Returns
    -------
    records : list of dict
        Per (dataset, learner): ``cv_left``, ``refits_left``, ``inner_s`` and ``refit_s``
        (the timed fits, lists; empty when nothing of that kind is left) and ``cpu_s``.
    """
    seed = cfg["seed"]
    mine = [r for r in rows if r["seed"] == seed]
    done = {(r["kind"], r["dataset"], r["algorithm"], int(r["run"]), r["params"], r["protocol"])
            for r in mine}
    tested = {(r["dataset"], r["algorithm"], int(r["run"]), r["grid"], r["protocol"])
              for r in mine if r["kind"] == "test"}
    records = []
    for d in datasets:
        X, y = get_data(d, cfg["data_dir"], cfg.get("verify", True))
        for s in specs:
            proto, n_runs, max_train = plan(d, s, {"reference_max_train": None, **cfg})
            pts = grid_points(s, grid, cfg["max_points"])
            keys = [_params_key(p) for p in pts]
            cv_left = sum((("cv", d, s.name, r, k, proto) not in done) for r in range(n_runs)
                          for k in keys)
            label = grid_label(s, grid, cfg["max_points"])
            refits = sum((d, s.name, r, label, proto) not in tested for r in range(n_runs))
            if ceilings:
                refits += sum((("oracle", d, s.name, r, k, proto) not in done)
                              for r in range(n_runs) for k in keys)
            rng = np.random.default_rng(run_seed(seed, d + "/" + s.name, 0, 7))
            sample = [pts[i] for i in rng.choice(len(pts), min(points, len(pts)),
                                                 replace=False)]
            train, test = train_part(y, d, 0, seed, cfg["n_repeats"], cfg["n_folds"],
                                     s.kernel, max_train)
            skf = StratifiedKFold(cfg["inner_folds"], shuffle=True,
                                  random_state=run_seed(seed, d, 0, 2))
            a, b = next(skf.split(np.zeros(train.shape[0]), y[train]))
            inner_s = [_time_fit(s, p, X, y, train[a], train[b], run_seed(seed, d, 0, 10))
                       for p in sample] if cv_left else []
            refit_s = [_time_fit(s, p, X, y, train, test, run_seed(seed, d, 0, 3))
                       for p in sample] if refits else []
            cpu = (float(np.mean(inner_s)) * cv_left * cfg["inner_folds"] if inner_s else 0.0) \
                + (float(np.mean(refit_s)) * refits if refit_s else 0.0)
            records.append({"dataset": d, "algorithm": s.name, "cv_left": cv_left,
                            "refits_left": refits, "inner_s": inner_s, "refit_s": refit_s,
                            "n_inner": int(a.shape[0]), "n_train": int(train.shape[0]),
                            "cpu_s": cpu})
    return records


def _fmt_times(values):
    if not values:
        return "-"
    lo, hi, mean = min(values), max(values), float(np.mean(values))
    return f"{mean:.3g} ({lo:.3g}-{hi:.3g})" if len(values) > 1 else f"{mean:.3g}"


def format_estimate(records, grid, points):
    """The markdown table of :func:`estimate_run` and its total."""
    lines = [f"Estimated cost of the run (grid `{grid}`; tasks not in the cache; fits timed on "
             f"{points} grid point(s) per learner, run 0; process CPU seconds)", "",
             "| dataset | algorithm | CV tasks left | refits left | rows per inner fit "
             "| s per inner fit, mean (min-max) | rows per refit | s per refit | est. CPU s |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in records:
        lines.append(f"| {r['dataset']} | {r['algorithm']} | {r['cv_left']} | "
                     f"{r['refits_left']} | {r['n_inner']} | {_fmt_times(r['inner_s'])} | "
                     f"{r['n_train']} | {_fmt_times(r['refit_s'])} | "
                     f"{r['cpu_s']:.3g} |")
    total = sum(r["cpu_s"] for r in records)
    lines += ["", f"Total: {total:.3g} CPU s = {total / 3600:.3g} CPU hours (on n idle cores, "
                  "about that divided by n of wall time)."]
    return "\n".join(lines)
