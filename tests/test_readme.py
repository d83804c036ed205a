"""Every Python block of the README and of the documentation pages runs alone, as written.

Each fenced ``python`` block is run in a fresh namespace, on its own: a block that reads a
name defined in another block fails here. Blocks written as ``>>>`` sessions are run as
doctests (their printed output must match); other blocks are executed as scripts.
"""

import doctest
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = sorted((ROOT / "docs").rglob("*.md"))
FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.S | re.M)
LINK = re.compile(r"\]\(([^)#\s]+)(#[^)]*)?\)")


def _blocks(path):
    return [(path, k, m.group(1), path.read_text()[:m.start()].count("\n") + 1)
            for k, m in enumerate(FENCE.finditer(path.read_text()))]


BLOCKS = [b for path in [README, *PAGES] for b in _blocks(path)]


def _run_alone(path, source, line):
    name = f"{path.relative_to(ROOT)}:{line}"
    if ">>>" not in source:
        exec(compile(source, name, "exec"), {"__name__": "__readme__"})
        return 0
    test = doctest.DocTestParser().get_doctest(source, {"__name__": "__readme__"}, name,
                                               str(path), line)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed"
    return result.attempted


@pytest.mark.parametrize("path,k,source,line", BLOCKS,
                         ids=[f"{b[0].relative_to(ROOT)}-{b[1]}" for b in BLOCKS])
def test_block_runs_alone(path, k, source, line):
    attempted = _run_alone(path, source, line)
    assert ">>>" not in source or attempted > 0


def test_the_blocks_are_found():
    assert len(_blocks(README)) >= 1
    assert len(BLOCKS) >= 5
    # a block that leans on an earlier one fails when run alone (the runner's own mutant)
    with pytest.raises(AssertionError):
        _run_alone(README, ">>> make_imbalanced_stream(10, 2)[0].shape\n(10, 2)\n", 1)


def test_readme_is_a_front_door():
    text = README.read_text()
    lines = text.splitlines()
    assert len(lines) <= 100
    # what it is, then install, then an example that ends by line 40
    assert lines.index("## Install") < lines.index("## Example") < 40
    first = FENCE.search(text)
    assert text[:first.end()].count("\n") + 1 <= 40
    # the performance table: at most 6 rows, one short cell each (no run history)
    perf = text.split("## Performance", 1)[1].split("\n## ", 1)[0]
    rows = [ln for ln in perf.splitlines() if ln.startswith("| ") and "---" not in ln][1:]
    assert 1 <= len(rows) <= 6
    assert max(len(cell) for row in rows for cell in row.split("|")) <= 60
    quick = text.split("## Quick start", 1)[1].split("```", 2)[1]
    assert [ln.split("#")[0].strip() for ln in quick.strip().splitlines()] == \
        ["make verify", "make test"]


@pytest.mark.parametrize("path", [README, *PAGES], ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(path):
    for target, _ in LINK.findall(path.read_text()):
        if "://" in target or target.startswith("mailto:"):
            continue
        resolved = (path.parent / target)
        # pages of the built site (api/, auto_examples/) exist only after `make docs`
        if resolved.suffix == ".rst" and ("auto_examples" in target or "api/" in target):
            continue
        assert resolved.exists(), f"{path.relative_to(ROOT)}: broken link {target}"


def test_changelog_entries_are_short():
    """Each CHANGELOG entry is at most three lines; the figures go to docs/performance.md."""
    entries, current = [], None
    for line in (ROOT / "CHANGELOG.md").read_text().splitlines():
        if line.startswith("- "):
            current = [line]
            entries.append(current)
        elif line.startswith("  ") and current is not None:
            current.append(line)
        else:
            current = None
    assert len(entries) >= 20
    long = [e[0] for e in entries if len(e) > 3]
    assert not long, long
