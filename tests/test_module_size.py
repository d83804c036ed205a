"""One idea per module (issue 41 item 2): no ``.py`` module of ``sosl/`` over 800 lines.

No exceptions: a module that grows past the mark is split by idea (moving whole functions
and classes, the old import path re-exporting them).
"""

from pathlib import Path

import sosl

ROOT = Path(sosl.__file__).parent
MAX_LINES = 800


def _lines(path):
    with open(path, "rb") as fh:
        return sum(1 for _ in fh)


def _over(root, limit=MAX_LINES):
    return {p.relative_to(root).as_posix(): n for p in sorted(root.rglob("*.py"))
            if (n := _lines(p)) > limit}


def test_no_module_over_800_lines():
    assert _over(ROOT) == {}


def test_the_count_sees_a_long_module(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "long.py").write_text("x = 1\n" * (MAX_LINES + 1))
    (tmp_path / "short.py").write_text("x = 1\n" * MAX_LINES)
    assert _over(tmp_path) == {"pkg/long.py": MAX_LINES + 1}
