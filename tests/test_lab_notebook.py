"""The code is not a lab notebook: no comment or docstring in ``sosl/`` carries run figures.

A comment says what the code does and why. Timings (``84.1 ns``, ``1.2 us``), speed-ups
(``1.1x faster``, ``0.92-0.93x``), dates, host processors, sessions, run counts and the
story of dropped experiments belong in ``docs/performance.md`` and in commit bodies. This
test reads every comment and docstring of the ``.py``, ``.pyx``, ``.pxd``, ``.pyi`` and
``.h`` files of the package (code and string literals that are not docstrings are not
read) and lists each line that matches one of the patterns below.
"""

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "sosl"
SUFFIXES = {".py", ".pyx", ".pxd", ".pyi", ".h"}

_MONTHS = ("January|February|March|April|May|June|July|August|September|October|"
           "November|December")
_COUNT = (r"(?:\d+|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|"
          r"fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty)")
_ORDINAL = (r"(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|"
            r"\d+(?:st|nd|rd|th))")

# name -> pattern; each one is shown to catch a line of the kind it names and to pass the
# legitimate text of test_no_false_positives below
PATTERNS = {
    "timing": re.compile(r"\d(?:[\d.,]*\d)?\s*(?:-\s*\d[\d.]*\s*)?(?:ns|us|µs|μs|ms)\b"),
    "throughput": re.compile(r"\d[\d.]*\s*[kM]\s*rows\s*/\s*s\b"),
    "speed-up": re.compile(r"\b\d+(?:\.\d+)?\s*x\s+(?:faster|slower|the speed|as fast)\b"
                           r"|\b\d+\.\d+\s*(?:-\s*\d+\.\d+\s*)?x\b", re.I),
    "from-to figure": re.compile(r"\d[\d.]*\s*->\s*\d[\d.]*\s*(?:ns|us|ms|s)\b"),
    "date": re.compile(rf"\b\d{{1,2}}\s+(?:{_MONTHS})\b|\b(?:{_MONTHS})\s+(?:\d{{1,2}},?\s+)?"
                       r"\d{4}\b|\b20\d\d-\d\d-\d\d\b"),
    "host": re.compile(r"\b(?:EPYC|Xeon|Zen\s*\d|Ryzen|Skylake|Cascade\s*Lake|Ice\s*Lake|"
                       r"Sapphire\s*Rapids|Haswell|Broadwell|Graviton|Apple\s*M\d|"
                       r"Core\s*i[3579])\b"),
    "session": re.compile(rf"\b(?:{_ORDINAL}|earlier|later|latest|previous|last|this|that|same)"
                          r"\s+sessions?\b|\bsessions?\s+\d", re.I),
    "run count": re.compile(rf"\b(?:in|of|over|across)\s+(?:min\s+of\s+)?{_COUNT}\s+"
                            r"(?:\w+\s+){0,2}(?:runs|repeats)\b"
                            r"|\b(?:in|from)\s+run\s+\d+\b|\brun\s+\d+\s+of\b|\bmin\s+of\s+\d+\b"
                            rf"|performance\.md,\s*{_ORDINAL}\s+round\b", re.I),
    "dropped experiment": re.compile(r"\b(?:did\s+not\s+pay|what\s+did\s+pay|(?:was|were)\s+"
                                     r"(?:measured\s+and\s+)?dropped|all\s+were\s+dropped|"
                                     r"A/B\s+run|C\s+probe)\b", re.I),
}


def _python_text(path, source):
    """(line, text) of every comment and docstring of a Python (or Cython) file."""
    out = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                out.append((tok.start[0], tok.string))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        for k, line in enumerate(source.splitlines(), 1):
            if "#" in line:
                out.append((k, line[line.index("#"):]))
    try:
        tree = ast.parse(source)
    except SyntaxError:
        tree = None
    if tree is not None:
        nodes = [tree, *(n for n in ast.walk(tree)
                         if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))]
        for node in nodes:
            body = getattr(node, "body", [])
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                first = body[0].lineno
                out += [(first + k, ln) for k, ln in enumerate(body[0].value.value.splitlines())]
    else:  # Cython: every triple-quoted string opening a statement is read as a docstring
        for m in re.finditer(r'^[ \t]*[rRuU]?("""|\'\'\')(.*?)\1', source, re.S | re.M):
            first = source[:m.start()].count("\n") + 1
            out += [(first + k, ln) for k, ln in enumerate(m.group(2).splitlines())]
    return sorted(out)


def _c_text(source):
    """(line, text) of every /* */ and // comment of a C header."""
    out = []
    for m in re.finditer(r"/\*.*?\*/|//[^\n]*", source, re.S):
        first = source[:m.start()].count("\n") + 1
        out += [(first + k, ln) for k, ln in enumerate(m.group(0).splitlines())]
    return out


def comment_lines(path):
    source = path.read_text(encoding="utf-8")
    return _c_text(source) if path.suffix == ".h" else _python_text(path, source)


def offenders(text_lines):
    """(line, pattern name, text) of each line that matches a pattern."""
    hits = []
    for line, text in text_lines:
        for name, pattern in PATTERNS.items():
            if pattern.search(text):
                hits.append((line, name, text.strip()))
                break
    return hits


def _files():
    return sorted(p for p in PACKAGE.rglob("*") if p.suffix in SUFFIXES and p.is_file())


def test_no_run_figures_in_comments_or_docstrings():
    report = []
    for path in _files():
        for line, name, text in offenders(comment_lines(path)):
            report.append(f"{path.relative_to(ROOT)}:{line}: [{name}] {text[:110]}")
    assert not report, ("comments and docstrings that read like a lab notebook (move the "
                        "figures to docs/performance.md):\n" + "\n".join(report))


def test_simd_header_opens_with_a_short_design_block():
    source = (PACKAGE / "_core" / "_simd.h").read_text()
    assert source.startswith("/*")
    assert source[:source.index("*/")].count("\n") + 1 <= 15


OFFENDING = [
    "# 84.1 -> 81.3 ns a row of 1,000-row chunks at p = 20",
    "    took 0.54 us on the host",
    "#: measured 1.1x faster at p = 20 than the v3 clone",
    "ran at 0.92-0.93x the four-wide sweep",
    "(bench_linear_ab.py, 2026-12-02, min of 7 interleaved runs)",
    "The labels' order costs more than the count (2 December, fifth session)",
    "the 2-core Zen 4 EPYC under load",
    "an Intel Xeon with AVX-512",
    "measured in run 3 of the evening",
    "1.02-1.07x at p = 20 in four later, noisier ones; in fifteen idle runs",
    "All were dropped.",
    "an exp of our own did not pay",
    "fit at 9.0 to 11.6 M rows/s",
    "(docs/performance.md, fourth round)",
    "the earlier sessions ran on another host",
]

LEGITIMATE = [
    "Eq. (14): w_{t+1} = w_t - eta_t g_t, with eta_t = 1/(lam t)",
    "the step 1 / (lam t) of round t; a round reads one row",
    "max_iter : int, number of passes over the data (each pass is one run over the rows)",
    "AVX-512 gives the four-wide code 32 vector registers; x86-64-v3 has 16",
    "Sums are kept in four interleaved partial sums (no reordering of additions).",
    "rows with a zero weight are dropped from the moments",
    "timeout : float, seconds to wait for the workers",
    "O(p^2) memory: 2p^2 + 3p + 3 numbers per merge",
    "the second round of the merge reads the moments of every block",
    "Returns a dict {0: 1 - p, 1: p}; the x axis is the number of rows seen.",
    "budget policy: the 3 oldest support vectors are replaced first (KOMP)",
    "shape (n_samples, n_features); dtype float64, C order",
    "scores four rows at a time under the old w (same bits as the one-row dot)",
    "see Luo, Cheng & Zhang (2023), Theorem 5",
    "hash into 2**18 buckets; 0x1f masks the low five bits",
    "executor() opens a session on one backend (one backend session per run)",
    "each fitted once on the inner-CV training size of run 0 (its first split)",
]


@pytest.mark.parametrize("text", OFFENDING)
def test_each_kind_of_offender_is_caught(text):
    assert offenders([(1, text)]), text


@pytest.mark.parametrize("text", LEGITIMATE)
def test_no_false_positives(text):
    assert not offenders([(1, text)]), offenders([(1, text)])


def test_the_reader_finds_comments_and_docstrings_only(tmp_path):
    py = tmp_path / "m.py"
    py.write_text('"""Module doc: 12 ns a row."""\nX = "3 ns"  # took 5 us\n'
                  'def f():\n    """Fine."""\n    return "7 ms"\n')
    hits = offenders(comment_lines(py))
    assert [(h[0], h[1]) for h in hits] == [(1, "timing"), (2, "timing")]
    pyx = tmp_path / "m.pyx"
    pyx.write_text('cdef double f(double[::1] w) noexcept nogil:\n'
                   '    """One round (2 December)."""\n    return w[0]  # EPYC\n')
    assert [h[1] for h in offenders(comment_lines(pyx))] == ["date", "host"]
    h = tmp_path / "m.h"
    h.write_text('/* fine\n * ran at 61 ns */\nstatic int x = 3; // the fifth session\n')
    assert [(k[0], k[1]) for k in offenders(comment_lines(h))] == [(2, "timing"), (3, "session")]
    assert len(_files()) > 50
