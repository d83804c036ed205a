"""The README's sequence: run the experiments with their defaults, then plot what they wrote."""

import pytest

from plots import auc_comparison
from sosl.experiments.__main__ import main as cli_main

TINY = ["--datasets", "default", "--algorithms", "OAUC-M", "OAM", "--repeats", "1",
        "--folds", "2", "--inner-folds", "2", "--quiet"]


def test_plot_reads_what_the_runner_wrote_with_both_defaults(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert cli_main([*TINY, "--grid", "quick"]) == 0      # no --out: the runner's default
    assert (tmp_path / "results" / "table2_quick.csv").exists()
    capsys.readouterr()
    paths = auc_comparison.main(["--out", str(tmp_path / "figures")])  # no --results, --grid
    assert sorted(p.rsplit(".", 1)[1] for p in paths) == ["pdf", "png"]
    assert all(p.startswith(str(tmp_path / "figures" / "auc_comparison_quick")) for p in paths)
    # a second grid run later is the one plotted by default; the first stays reachable
    assert cli_main([*TINY, "--grid", "sparse"]) == 0
    assert auc_comparison.main(["--out", "figures"])[0].endswith("auc_comparison_sparse.png")
    assert auc_comparison.main(["--out", "figures", "--grid", "quick"])[0].endswith(
        "auc_comparison_quick.png")


def test_plot_without_results_is_one_clear_error(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stop:
        auc_comparison.main(["--out", "figures"])
    err = capsys.readouterr().err.strip().splitlines()
    assert stop.value.code == 2 and len(err) == 1
    assert "no table2_<grid>.csv" in err[0] and "results" in err[0]
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "table2_quick.csv").write_text("table,dataset\n")
    with pytest.raises(SystemExit) as stop:
        auc_comparison.main(["--out", "figures", "--grid", "coarse"])
    err = capsys.readouterr().err.strip().splitlines()
    assert stop.value.code == 2 and len(err) == 1
    assert "grids with tables there: quick" in err[0]
