"""Every figure (plots/ and verify/) takes its look from one table, ``plots._common.RC``."""

import matplotlib

matplotlib.use("Agg", force=True)

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from plots import _common  # noqa: E402
from verify import _records as R  # noqa: E402
from verify import theorem5_oaucs  # noqa: E402


def test_the_series_cycle_keeps_fourteen_series_apart():
    assert len(_common.SERIES) >= 14
    assert len(set(_common.SERIES)) == len(_common.SERIES)
    assert len({c for c, _ in _common.SERIES}) == len(_common.SERIES)
    cycle = list(_common.RC["axes.prop_cycle"])
    assert len(cycle) == len(_common.SERIES)


def test_verify_applies_the_table():
    matplotlib.rcParams.update({"legend.fontsize": 3.0, "axes.grid": False})
    R.use_agg()
    assert matplotlib.rcParams["legend.fontsize"] == _common.RC["legend.fontsize"]
    assert matplotlib.rcParams["axes.grid"] is True
    # the mutant: the default table of matplotlib has ten colours only
    with matplotlib.rc_context({"axes.prop_cycle": matplotlib.rcParamsDefault[
            "axes.prop_cycle"]}):
        colors = [d["color"] for d in matplotlib.rcParams["axes.prop_cycle"]]
        assert len(set(colors)) < 12


def _legend_box(fig, ax):
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    return ax.get_legend().get_window_extent(renderer), ax.get_window_extent(renderer)


def test_legend_outside_leaves_the_data_area_free():
    fig, ax = plt.subplots()
    for k in range(12):
        ax.plot(np.arange(5), np.arange(5) + k, label=f"series {k}")
    _common.legend_outside(ax)
    legend, axes = _legend_box(fig, ax)
    assert legend.x0 >= axes.x1
    ax.legend()                               # the mutant: the default placement is inside
    legend, axes = _legend_box(fig, ax)
    assert legend.x0 < axes.x1
    plt.close(fig)


@pytest.mark.parametrize("out", ["theorem5"])
def test_theorem5_figure_draws_its_twelve_series_apart(tmp_path, monkeypatch, out):
    saved = {}

    def keep(fig, out_dir, stem, caption=""):
        saved[stem] = fig
        return f"{stem}.png"

    monkeypatch.setattr(R, "save_figure", keep)
    theorem5_oaucs.run("quick", 0, tmp_path)
    fig = saved["theorem5_oaucs"]
    ax = fig.axes[0]
    series = [ln for ln in ax.get_lines() if not ln.get_label().startswith("_")]
    looks = {(ln.get_color(), ln.get_marker(), ln.get_linestyle()) for ln in series}
    assert len(series) >= 2 and len(looks) == len(series)
    legend, axes = _legend_box(fig, ax)
    assert legend.x0 >= axes.x1
    plt.close(fig)
