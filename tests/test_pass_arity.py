"""No function of the compiled passes takes more than 25 arguments: a pass with more takes
parameter bundles (a ``cdef struct`` built from a dict, as ``StepSpec``, or a small class
binding the state arrays, as ``_sketch.SketchState``). The ``.pyx`` files are read as text
(no ``ast`` for Cython); a mutant source with a long signature must be caught."""

import re
from pathlib import Path

import pytest

import sosl

CORE = Path(sosl.__file__).parent / "_core"
MAX_ARGS = 25
# a def, cpdef or cdef function (not a cdef class, struct or variable) up to its "("
_HEAD = re.compile(r"^[ \t]*(?:def|cpdef|cdef)\b(?![ \t]+(?:class|struct|enum|extern|union)\b)"
                   r"[^(\n=:]*?\b(\w+)[ \t]*\(", re.M)


def _arguments(text):
    """The top-level comma-separated items of an argument list (brackets nest)."""
    items, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "[("
        depth -= ch in "])"
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
        else:
            cur += ch
    items.append(cur)
    return [a.strip() for a in items if a.strip() and a.strip() not in ("self", "cls")]


def signatures(source):
    """``(name, number of arguments)`` of every function defined in a Cython source."""
    out = []
    for m in _HEAD.finditer(source):
        i = j = m.end()
        depth = 1
        while depth:
            depth += source[j] in "(["
            depth -= source[j] in ")]"
            j += 1
        out.append((m.group(1), len(_arguments(source[i:j - 1]))))
    return out


def test_no_compiled_function_takes_more_than_25_arguments():
    files = sorted(CORE.glob("_*.pyx"))
    assert len(files) >= 10
    found = {p.name: signatures(p.read_text()) for p in files}
    assert sum(len(v) for v in found.values()) > 100        # the parser does see functions
    over = {f"{name}:{fn}": n for name, sigs in found.items() for fn, n in sigs
            if n > MAX_ARGS}
    assert not over, over


def test_the_signature_reader_counts_bundles_and_nested_brackets():
    src = ("cdef long long run_pass(const double[::1] data, const double[:, ::1] xbar,\n"
           "                        SketchState st, const SketchSpec* spec,\n"
           "                        Buffers* bf) except? -1:\n"
           "    cdef double f(x)\n"
           "cdef class Stepper:\n"
           "    def score(self, cnp.ndarray x, bint lock=True):\n")
    assert signatures(src) == [("run_pass", 5), ("f", 1), ("score", 2)]


@pytest.mark.parametrize("kind", ["def", "cpdef double", "cdef long long"])
def test_a_long_signature_is_caught(kind):
    """Mutant: the sketch pass's old 34 loose arguments."""
    args = ", ".join(f"double[::1] a{k}" for k in range(34))
    src = f"{kind} sketch_pass({args}):\n    pass\n"
    assert signatures(src) == [("sketch_pass", 34)]
    assert max(n for _, n in signatures(src)) > MAX_ARGS
