"""One idea per function (issue 41 item 2): at most four functions of ``sosl/`` over a
McCabe complexity of 15, measured by ruff's C901 rule (the repository's linter)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

import sosl

pytest.importorskip("ruff")

ROOT = Path(sosl.__file__).parent
MAX_COMPLEXITY = 15
#: functions allowed over the mark (a count, not a list: whichever they are)
MAX_OVER = 4


def _over(path):
    """``{"file:function": complexity}`` of the functions under ``path`` over the mark."""
    out = subprocess.run(
        [sys.executable, "-m", "ruff", "check", str(path), "--select", "C901",
         "--config", f"lint.mccabe.max-complexity = {MAX_COMPLEXITY}",
         "--output-format", "json", "--no-cache", "--exit-zero", "--isolated"],
        capture_output=True, text=True, check=True).stdout
    return {f"{Path(d['filename']).name}:{d['message'].split('`')[1]}":
            int(d["message"].rsplit("(", 1)[1].split(" ")[0]) for d in json.loads(out)}


def test_few_functions_are_over_the_complexity_mark():
    over = _over(ROOT)
    assert len(over) <= MAX_OVER, over


def test_the_measure_sees_a_complex_function(tmp_path):
    body = "".join(f"    if x == {i}:\n        return {i}\n" for i in range(MAX_COMPLEXITY))
    (tmp_path / "m.py").write_text(f"def f(x):\n{body}    return -1\n\n\n"
                                   "def g(x):\n    return x\n")
    assert _over(tmp_path) == {"m.py:f": MAX_COMPLEXITY + 1}
