"""The ``.pyi`` stubs of the compiled modules name each function's parameters as the
compiled function does (``tools/write_stubs.py`` writes them from the ``.pyx``)."""

import ast
import importlib
import inspect
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "sosl" / "_core"


def stub_signatures(text):
    """{function name: [parameter names]} of the module-level functions of a stub."""
    tree = ast.parse(text)
    return {node.name: [a.arg for a in node.args.args] for node in tree.body
            if isinstance(node, ast.FunctionDef) and node.name != "__getattr__"}


def mismatches(module, signatures):
    out = []
    for name, params in signatures.items():
        fn = getattr(module, name, None)
        if fn is None:
            out.append(f"{module.__name__}.{name}: not in the compiled module")
            continue
        compiled = list(inspect.signature(fn).parameters)
        if compiled != params:
            out.append(f"{module.__name__}.{name}: stub {params} != compiled {compiled}")
    return out


STUBS = sorted(p for p in CORE.glob("_*.pyi") if stub_signatures(p.read_text()))


def test_most_stubs_carry_signatures():
    assert len(STUBS) >= 8


@pytest.mark.parametrize("stub", STUBS, ids=lambda p: p.stem)
def test_stub_matches_the_compiled_module(stub):
    module = importlib.import_module(f"sosl._core.{stub.stem}")
    assert not mismatches(module, stub_signatures(stub.read_text()))


def test_a_stale_stub_is_caught():
    module = importlib.import_module("sosl._core._komp")
    sig = stub_signatures((CORE / "_komp.pyi").read_text())
    assert sig["komp_core"]
    stale = {"komp_core": sig["komp_core"][::-1]}          # the mutant: parameters reordered
    assert mismatches(module, stale)
    assert mismatches(module, {"komp_gone": []})
