"""Shared command line, saving, learner styles and CPU timing for the plot scripts.

:data:`STYLES` fixes one (colour, marker, line style) per learner, so that a learner looks
the same in every figure: the fourteen estimators of ``sosl.__all__`` (by the registry
names of :mod:`sosl.experiments`, see :data:`CLASS_NAMES`) each have their own colour and
their own marker; the registry's variants (``OAUC-M_c``, ``OAM_gra``, ``OKAUC-M_inf``) share
their base learner's colour with another marker and a dashed or dotted line; the batch
references and OAUC-M with forgetting have colours of their own.
"""

import argparse
import time
from pathlib import Path

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

__all__ = ["parser", "plt", "save", "STYLES", "CLASS_NAMES", "style", "plot_kw",
           "cpu_seconds_per_instance", "LEGEND_FONTSIZE"]

#: Font size of every legend of the plot scripts (readable at the saved size).
LEGEND_FONTSIZE = 8.5

#: The estimator classes of ``sosl.__all__`` -> the learner names used in the figures.
CLASS_NAMES = {
    "Perceptron": "Perceptron", "PAI": "PA-I", "OAM": "OAM", "OLUBAUC": "OL-UBAUC",
    "OAUCS": "OAUC-S", "OAUCM": "OAUC-M", "SOLAM": "SOLAM", "AdaOAM": "AdaOAM",
    "FTRLAUC": "FTRL-AUC", "SketchedOAUCM": "Sketched OAUC-M", "KOIL": "KOIL",
    "OKAUCM": "OKAUC-M", "OKAUCS": "OKAUC-S", "POLK": "POLK",
    "PartialOAUCM": "Partial OAUC-M",
}

# fourteen well-separated colours (tab10 and four darker ones), one per estimator
_BASE = {
    "Perceptron": ("#1f77b4", "H"), "PA-I": ("#ff7f0e", "s"), "OAM": ("#2ca02c", "^"),
    "OL-UBAUC": ("#d62728", "v"), "OAUC-S": ("#9467bd", "D"), "OAUC-M": ("#000000", "o"),
    "SOLAM": ("#8c564b", "P"), "AdaOAM": ("#e377c2", "X"), "FTRL-AUC": ("#7f7f7f", "*"),
    "Sketched OAUC-M": ("#bcbd22", "8"), "KOIL": ("#17becf", "<"),
    "OKAUC-M": ("#8b0000", ">"), "OKAUC-S": ("#000080", "p"), "POLK": ("#006d2c", "d"),
    "Partial OAUC-M": ("#b8860b", "h"),
}

#: learner name -> dict(color, marker, ls) for matplotlib.
STYLES = {name: {"color": c, "marker": m, "ls": "-"} for name, (c, m) in _BASE.items()}
STYLES.update({
    "OAUC-M_c": {"color": _BASE["OAUC-M"][0], "marker": "x", "ls": "--"},
    "OAUC-M forgetting": {"color": "#e7298a", "marker": "s", "ls": "--"},
    "OAM_gra": {"color": _BASE["OAM"][0], "marker": "x", "ls": "--"},
    "LogReg": {"color": "#555555", "marker": "+", "ls": ":"},
    "SVC": {"color": "#aa6600", "marker": "+", "ls": ":"},
    "OKAUC-M_inf": {"color": _BASE["OKAUC-M"][0], "marker": "x", "ls": ":"},
})


def style(name):
    """The fixed style of a learner (a registry or figure name, or a ``sosl`` class name).

    A name not in :data:`STYLES` (e.g. ``"OAUC-M forgetting 0.99"``) takes the style of the
    longest known name it starts with; KeyError when there is none.
    """
    name = CLASS_NAMES.get(name, name)
    if name in STYLES:
        return dict(STYLES[name])
    known = [k for k in STYLES if name.startswith(k)]
    if not known:
        raise KeyError(f"no plot style for learner {name!r}; add it to plots._common.STYLES")
    return dict(STYLES[max(known, key=len)])


def plot_kw(name, n_points, k=0, n_markers=8, **extra):
    """Keyword arguments of ``ax.plot`` for a learner's curve of ``n_points`` points.

    Markers are drawn at about ``n_markers`` points only, starting at an offset that
    depends on ``k`` (the curve's position in the figure), so that curves lying on top of
    each other still show their own markers side by side.
    """
    kw = style(name)
    step = max(1, int(n_points) // int(n_markers))
    kw.update(markevery=(k % step, step), ms=5, mfc="white", mew=1.1, lw=1.4)
    kw.update(extra)
    return kw


def cpu_seconds_per_instance(makes, X, y, repeats=5):
    """Process CPU seconds per instance of one ``fit`` pass, the minimum of ``repeats`` runs.

    ``makes`` is a list of callables each returning a fresh estimator; the contenders are
    run in turn (interleaved) ``repeats`` times, each run on a fresh model timed with
    :func:`time.process_time`, and the minimum per contender is divided by the number of rows.

    Returns
    -------
    seconds : ndarray of shape (len(makes),)
    """
    if int(repeats) < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats!r}")
    best = np.full(len(makes), np.inf)
    for _ in range(int(repeats)):
        for k, make in enumerate(makes):
            est = make()
            t0 = time.process_time()
            est.fit(X, y)
            best[k] = min(best[k], time.process_time() - t0)
    return best / X.shape[0]


def parser(description):
    """The arguments every plot script takes: --out, --seed, --quick."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--out", default="figures", help="output directory (created)")
    p.add_argument("--seed", type=int, default=0, help="seed of every random choice")
    p.add_argument("--quick", action="store_true", help="small and fast (used by the tests)")
    return p


def save(fig, out, stem):
    """Write ``<out>/<stem>.png`` and ``.pdf``; return both paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / f"{stem}.png", out / f"{stem}.pdf"]
    for p in paths:
        fig.savefig(p, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return [str(p) for p in paths]
