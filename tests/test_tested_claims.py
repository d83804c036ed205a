"""Every claim in sosl/ that something is tested names its test, and that test exists.

A claim is a parenthesis holding the word, ``(... tested ...: tests/test_x.py::test_y)``, or a
bare ``(tests/test_x.py::test_y)``;
any other use of the word "tested" in the package must be listed in ``NOT_A_CLAIM``."""

import ast
import functools
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]
TEST_ID = re.compile(r"(tests/[\w/]+\.py)::(\w+)")
CLAIM = re.compile(r"\([^()]*\btested\b[^()]*\)|\(tests/[\w/]+\.py::\w+\)")
WORD = re.compile(r"\btested\b")
#: uses of the word that claim nothing (file name, text of the line)
NOT_A_CLAIM = {
    ("estimate.py", "tested = {"),                  # a variable
    ("estimate.py", "not in tested"),
    ("_polk.pyx", "tested, max_i |(K G)_ic"),       # "one column of G is tested" (checked)
}


@functools.lru_cache(maxsize=None)
def _test_names(path):
    tree = ast.parse((ROOT / path).read_text())
    return {node.name for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _problems(name, text):
    """What is wrong with the claims of one file's text (empty when all is well)."""
    problems = []
    claimed = set()
    for match in CLAIM.finditer(text):
        ids = TEST_ID.findall(match.group())
        if not ids:
            problems.append(f"{name}: {match.group()!r} names no test")
        for path, func in ids:
            if not (ROOT / path).is_file():
                problems.append(f"{name}: {path} does not exist")
            elif func not in _test_names(path) or not func.startswith("test"):
                problems.append(f"{name}: {path} has no test function {func}")
        claimed.update(range(match.start(), match.end()))
    for match in WORD.finditer(text):
        if match.start() in claimed:
            continue
        line = text[text.rfind("\n", 0, match.start()) + 1:text.find("\n", match.start())]
        if not any(name == n and part in line for n, part in NOT_A_CLAIM):
            problems.append(f"{name}: 'tested' outside a claim naming its test: {line.strip()!r}")
    return problems


def test_every_tested_claim_names_an_existing_test():
    problems, n_claims = [], 0
    for path in sorted((ROOT / "sosl").rglob("*")):
        if path.suffix in (".py", ".pyx", ".pxd", ".h"):
            text = path.read_text()
            n_claims += len(CLAIM.findall(text))
            problems += _problems(path.name, text)
    assert problems == []
    assert n_claims >= 15


def test_the_check_catches_bad_claims():
    assert _problems("x.py", "equal to the reference (tested).")
    assert _problems("x.py", "equal (tested at rtol 1e-12).")
    assert _problems("x.py", "equal (tests/test_linear.py::test_no_such_test_function).")
    assert _problems("x.py", "equal (tests/test_no_such_file.py::test_x).")
    assert _problems("x.py", "equal to it, as tested elsewhere.")
    good = ("equal (tested at rtol 1e-12: "
            "tests/_core/test_losses.py::test_unknown_code_raises_everywhere)")
    assert _problems("x.py", good) == []
