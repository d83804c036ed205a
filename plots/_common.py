"""Shared command line, saving, learner styles and CPU timing for the plot scripts.

:data:`STYLES` fixes one (colour, marker, line style) per learner, so that a learner looks
the same in every figure: the fourteen estimators of ``sosl.__all__`` (by the registry
names of :mod:`sosl.experiments`, see :data:`CLASS_NAMES`) each have their own colour and
their own marker; the registry's variants (``OAUC-M_c``, ``OAM_gra``, ``OKAUC-M_inf``) share
their base learner's colour with another marker and a dashed or dotted line; the batch
references and OAUC-M with forgetting have colours of their own.

:data:`RC` is the one style table of every figure, here and in ``verify/`` (which applies it
through :func:`apply_style`): fonts, grid, and a cycle of fourteen colours each with its
own marker, so that up to fourteen unnamed series (a verify check's datasets x parameters)
stay apart. :func:`legend_outside` puts a legend of many entries beside the axes, never
over the data.
"""

import argparse
import time
from pathlib import Path
from typing import Any, cast

import matplotlib
import numpy as np
from cycler import cycler

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

__all__ = ["parser", "plt", "save", "STYLES", "CLASS_NAMES", "style", "plot_kw",
           "cpu_seconds_per_instance", "LEGEND_FONTSIZE", "RC", "SERIES", "apply_style",
           "legend_outside"]

#: Font size of every legend of the plot scripts (readable at the saved size).
LEGEND_FONTSIZE = 8.5

#: The estimator classes of ``sosl.__all__`` -> the learner names used in the figures.
CLASS_NAMES = {
    "Perceptron": "Perceptron", "PAI": "PA-I", "OAM": "OAM", "OLUBAUC": "OL-UBAUC",
    "OAUCS": "OAUC-S", "OAUCM": "OAUC-M", "SOLAM": "SOLAM", "AdaOAM": "AdaOAM",
    "FTRLAUC": "FTRL-AUC", "SketchedOAUCM": "Sketched OAUC-M", "KOIL": "KOIL",
    "OKAUCM": "OKAUC-M", "OKAUCS": "OKAUC-S", "POLK": "POLK",
    "NystroemOAUCM": "Nystroem OAUC-M", "PartialOAUCM": "Partial OAUC-M",
}

# sixteen well-separated colours (tab10, four darker ones, an orange and a gold), one per
# estimator
_BASE = {
    "Perceptron": ("#1f77b4", "H"), "PA-I": ("#ff7f0e", "s"), "OAM": ("#2ca02c", "^"),
    "OL-UBAUC": ("#d62728", "v"), "OAUC-S": ("#9467bd", "D"), "OAUC-M": ("#000000", "o"),
    "SOLAM": ("#8c564b", "P"), "AdaOAM": ("#e377c2", "X"), "FTRL-AUC": ("#7f7f7f", "*"),
    "Sketched OAUC-M": ("#bcbd22", "8"), "KOIL": ("#17becf", "<"),
    "OKAUC-M": ("#8b0000", ">"), "OKAUC-S": ("#000080", "p"), "POLK": ("#006d2c", "d"),
    "Nystroem OAUC-M": ("#ff8c00", "h"), "Partial OAUC-M": ("#b8860b", "x"),
}

#: (colour, marker) of the k-th unnamed series, k < 16: the learners' colours and markers in
#: a fixed order, every pair distinct
SERIES = list(_BASE.values())

#: the matplotlib settings of every figure of sosl (plots/ and verify/)
RC = {
    "font.size": 9.5,
    "axes.titlesize": 10,
    "axes.labelsize": 9.5,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.6,
    "legend.fontsize": LEGEND_FONTSIZE,
    "legend.framealpha": 0.9,
    "lines.linewidth": 1.4,
    "lines.markersize": 4,
    "savefig.dpi": 120,
    "savefig.bbox": "tight",
    "axes.prop_cycle": (cycler(color=[c for c, _ in SERIES])
                        + cycler(marker=[m for _, m in SERIES])),
}


def apply_style():
    """Apply :data:`RC` to matplotlib (the plot scripts do it on import; verify on use)."""
    matplotlib.rcParams.update(cast(Any, RC))     # matplotlib types the keys as literals


def legend_outside(ax, **kw):
    """A legend to the right of ``ax``, outside the data area (for many entries)."""
    kw = {"loc": "upper left", "bbox_to_anchor": (1.02, 1.0), "borderaxespad": 0.0, **kw}
    return ax.legend(**kw)


apply_style()

#: learner name -> dict(color, marker, ls) for matplotlib.
STYLES = {name: {"color": c, "marker": m, "ls": "-"} for name, (c, m) in _BASE.items()}
STYLES.update({
    "OAUC-M_c": {"color": _BASE["OAUC-M"][0], "marker": "x", "ls": "--"},
    "OAUC-M forgetting": {"color": "#e7298a", "marker": "s", "ls": "--"},
    "OAUC-M forgetting auto": {"color": "#1b9e77", "marker": "^", "ls": "-"},
    "OAM_gra": {"color": _BASE["OAM"][0], "marker": "x", "ls": "--"},
    "LogReg": {"color": "#555555", "marker": "+", "ls": ":"},
    "SVC": {"color": "#aa6600", "marker": "+", "ls": ":"},
    "OKAUC-M_inf": {"color": _BASE["OKAUC-M"][0], "marker": "x", "ls": ":"},
})

# registry names of sosl.experiments written differently from the figure name
_ALIASES = {"SketchedOAUC-M": "Sketched OAUC-M"}


def style(name):
    """The fixed style of a learner (a registry or figure name, or a ``sosl`` class name).

    A name not in :data:`STYLES` (e.g. ``"OAUC-M forgetting 0.99"``) takes the style of the
    longest known name it starts with; KeyError when there is none.
    """
    name = CLASS_NAMES.get(name, _ALIASES.get(name, name))
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
