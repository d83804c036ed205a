"""Each plot script runs in --quick mode and writes a non-blank PNG and a PDF."""

import importlib

import numpy as np
import pytest

SCRIPTS = ["losses", "learning_curve", "auc_comparison", "runtime", "regret", "prequential",
           "drift"]


@pytest.mark.parametrize("name", SCRIPTS)
def test_plot_script_quick(name, tmp_path, capsys):
    import matplotlib.image as mpimg

    mod = importlib.import_module(f"plots.{name}")
    paths = mod.main(["--quick", "--out", str(tmp_path), "--seed", "1"])
    assert sorted(p.rsplit(".", 1)[1] for p in paths) == ["pdf", "png"]
    png = next(p for p in paths if p.endswith(".png"))
    img = mpimg.imread(png)
    assert img.shape[0] > 200 and img.shape[1] > 300
    assert img[..., :3].std() > 0.05  # something was drawn
    pdf = next(p for p in paths if p.endswith(".pdf"))
    with open(pdf, "rb") as f:
        assert f.read(5) == b"%PDF-"
    assert capsys.readouterr().out  # each script prints the numbers it plots


def test_plot_scripts_take_the_common_options():
    for name in SCRIPTS:
        mod = importlib.import_module(f"plots.{name}")
        with pytest.raises(SystemExit):
            mod.main(["--help"])
        assert callable(mod.main) and mod.__doc__


def test_regret_plot_uses_verify(monkeypatch, tmp_path, capsys):
    """The regret figure draws what verify._regret.regret_curve returns."""
    from verify import _regret as verify_mod
    calls = []

    def fake(X, y, lam, T_grid):
        calls.append((X.shape, lam))
        assert np.linalg.norm(X, axis=1).max() <= 1 + 1e-12
        T = np.asarray(T_grid)
        return {"T": T, "regret": 0.5 * np.log(T), "bound18": 18 * (1 + np.log(T)) / lam,
                "bound8": 8 * (1 + np.log(T)) / lam}

    monkeypatch.setattr(verify_mod, "regret_curve", fake)
    from plots import regret

    regret.main(["--quick", "--out", str(tmp_path)])
    assert calls and calls[0][1] == 0.1
    assert "max ratio" in capsys.readouterr().out


def test_style_table_gives_every_learner_its_own_look():
    """Each estimator of sosl.__all__ has a style with its own colour and its own marker,
    and every entry of the table a distinct (colour, marker) pair."""
    import matplotlib.colors as mcolors

    import sosl
    from plots import _common as C

    classes = [n for n in sosl.__all__ if isinstance(getattr(sosl, n), type)]
    assert len(classes) >= 14 and set(classes) <= set(C.CLASS_NAMES)
    looks = [C.style(n) for n in classes]
    colours = [mcolors.to_hex(s["color"]) for s in looks]
    assert len(set(colours)) == len(classes), colours
    assert len({s["marker"] for s in looks}) == len(classes)
    pairs = [(mcolors.to_hex(s["color"]), s["marker"]) for s in C.STYLES.values()]
    assert len(set(pairs)) == len(pairs)
    # a class name and its figure name look the same; the registry's learners all have one
    assert C.style("OAUCM") == C.style("OAUC-M")
    from sosl.experiments import ALGORITHMS, REFERENCES
    for name in [*ALGORITHMS, *REFERENCES]:
        C.style(name)
    assert C.style("OAUC-M forgetting 0.99") == C.STYLES["OAUC-M forgetting"]
    with pytest.raises(KeyError, match="no plot style"):
        C.style("NotALearner")


def test_plot_kw_staggers_sparse_markers():
    from plots import _common as C

    a, b = C.plot_kw("OAUC-M", 40, 0), C.plot_kw("OAUC-S", 40, 1)
    assert a["markevery"] == (0, 5) and b["markevery"] == (1, 5)
    assert a["color"] != b["color"] and a["marker"] != b["marker"]


def test_cpu_timing_is_min_of_interleaved_process_time_runs(monkeypatch):
    """cpu_seconds_per_instance reads time.process_time around each fit, runs the
    contenders in turn on fresh models and keeps the minimum of the repeats."""
    from plots import _common as C

    clock, order = [0.0], []
    costs = {"a": iter([3.0, 1.0, 2.0]), "b": iter([5.0, 6.0, 4.0])}

    class Fake:
        def __init__(self, key):
            self.key, self.fitted = key, False

        def fit(self, X, y):
            assert not self.fitted  # a fresh model each run
            self.fitted = True
            order.append(self.key)
            clock[0] += next(costs[self.key])

    monkeypatch.setattr(C.time, "process_time", lambda: clock[0])
    monkeypatch.setattr(C.time, "perf_counter", lambda: 1e9)  # wall time must not be read
    X = np.zeros((10, 2))
    got = C.cpu_seconds_per_instance([lambda: Fake("a"), lambda: Fake("b")], X, None, repeats=3)
    assert order == ["a", "b"] * 3
    np.testing.assert_allclose(got, [0.1, 0.4])
    with pytest.raises(ValueError, match="repeats"):
        C.cpu_seconds_per_instance([lambda: Fake("a")], X, None, repeats=0)


def test_runtime_axes_say_cpu_time_and_repeats(tmp_path, capsys, monkeypatch):
    import matplotlib.pyplot as plt

    from plots import _common as C
    from plots import runtime

    labels, calls = [], []
    real_save = runtime.save

    def spy(fig, out, stem):
        labels.extend(ax.get_ylabel() for ax in fig.axes)
        labels.append(fig._suptitle.get_text())
        return real_save(fig, out, stem)

    real_time = C.cpu_seconds_per_instance

    def count(makes, X, y, repeats):
        calls.append(repeats)
        return real_time(makes, X, y, repeats)

    monkeypatch.setattr(runtime, "save", spy)
    monkeypatch.setattr(runtime, "cpu_seconds_per_instance", count)
    runtime.main(["--quick", "--out", str(tmp_path), "--repeats", "3"])
    plt.close("all")
    assert calls and set(calls) == {3}
    assert all("CPU" in t and "min of 3" in t for t in labels[:2]), labels
    assert "process_time" in labels[2]


def test_regret_axis_has_no_empty_half(monkeypatch, tmp_path, capsys):
    """All-positive regrets: a log y axis from the data; a negative regret: symlog whose
    lower end is at the data, not at -(upper end)."""
    from plots import regret
    from verify import _regret as verify_mod

    axes_seen = []
    real_save = regret.save
    monkeypatch.setattr(regret, "save",
                        lambda fig, out, stem: (axes_seen.extend(fig.axes),
                                                real_save(fig, out, stem))[1])
    for low in (0.5, -2.0):
        def fake(X, y, lam, T_grid, low=low):
            T = np.asarray(T_grid)
            return {"T": T, "regret": low + 0.1 * np.log(T), "bound18": 18 * (1 + np.log(T)) / lam,
                    "bound8": 8 * (1 + np.log(T)) / lam}

        monkeypatch.setattr(verify_mod, "regret_curve", fake)
        axes_seen.clear()
        regret.main(["--quick", "--out", str(tmp_path)])
        ax = axes_seen[0]
        bottom, top = ax.get_ylim()
        if low > 0:
            assert ax.get_yscale() == "log" and 0 < bottom <= low
        else:
            assert ax.get_yscale() == "symlog" and low * 2 <= bottom < low and top > 100
            assert -bottom < 0.1 * top  # the negative side is not a mirror of the positive
        legend = [t.get_text() for t in ax.get_legend().get_texts()]
        assert any("Theorem 6" in t for t in legend), legend


def test_learning_curve_is_linear_after_the_burn_in_in_fixed_styles(tmp_path, capsys,
                                                                     monkeypatch):
    import matplotlib.colors as mcolors

    from plots import _common as C
    from plots import learning_curve

    figs = []
    real_save = learning_curve.save
    monkeypatch.setattr(learning_curve, "save",
                        lambda fig, out, stem: (figs.append(fig), real_save(fig, out, stem))[1])
    learning_curve.main(["--quick", "--out", str(tmp_path), "--burn-in", "30"])
    axes = figs[0].axes[:2]
    lines = [ln for ax in axes for ln in ax.get_lines()]
    assert len(lines) == 4  # Perceptron, OAUC-M, OAUC-S | OKAUC-M
    for ax in axes:
        assert ax.get_xscale() == "linear" and "first 30 rows" in ax.get_xlabel()
    for ln in lines:
        name = ln.get_label().split(" (")[0]
        assert min(ln.get_xdata()) >= 30
        assert mcolors.to_hex(ln.get_color()) == mcolors.to_hex(C.style(name)["color"])
        assert ln.get_marker() == C.style(name)["marker"]
