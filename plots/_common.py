"""Shared command line and saving for the plot scripts."""

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

__all__ = ["parser", "plt", "save"]


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
