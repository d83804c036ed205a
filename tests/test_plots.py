"""Each plot script runs in --quick mode and writes a non-blank PNG and a PDF."""

import importlib

import numpy as np
import pytest

SCRIPTS = ["losses", "learning_curve", "auc_comparison", "runtime", "regret"]


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
