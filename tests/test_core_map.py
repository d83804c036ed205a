"""The ``_ref`` rule of ``sosl._core``: a NumPy reference is an oracle only.

Nothing in ``sosl/`` outside a ``_core/_*_ref.py`` module imports a ``*_ref`` module (the
references may import production code, never the other way round). Python files are read
with ``ast``; the Cython passes (``.pyx``, no ``ast``) by their import lines. Each check
keeps a mutant: a source that does import a reference must be caught.
"""

import ast
import re
from pathlib import Path

import pytest

import sosl

ROOT = Path(sosl.__file__).parent
_REF_FILE = re.compile(r"^_[a-z0-9_]*_ref\.py$")
_PYX_IMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+c?import\s+([\w, ()]+)|c?import\s+([\w.]+))",
                         re.M)


def _is_ref(name):
    return name.split(".")[-1].endswith("_ref")


def ref_imports(source):
    """Names of the ``*_ref`` modules a Python source imports (any form, any depth)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if any(_is_ref(p) for p in a.name.split("."))]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if any(_is_ref(p) for p in module.split(".") if p):
                found.append(module)
            else:                                   # from ._core import _kfun_ref
                found += [f"{module}.{a.name}" for a in node.names if _is_ref(a.name)]
    return found


def pyx_ref_imports(source):
    """The same for a Cython source, from its import lines."""
    found = []
    for frm, names, mod in _PYX_IMPORT.findall(source):
        if mod and any(_is_ref(p) for p in mod.split(".")):
            found.append(mod)
        elif frm and any(_is_ref(p) for p in frm.split(".")):
            found.append(frm)
        elif frm:
            found += [f"{frm}.{n}" for n in re.findall(r"\w+", names) if _is_ref(n)]
    return found


def _production_files(suffix):
    for path in sorted(ROOT.rglob(f"*{suffix}")):
        if path.parent.name == "_core" and _REF_FILE.match(path.name):
            continue                                # a reference may use another one
        yield path


def test_no_production_module_imports_a_reference():
    files = list(_production_files(".py"))
    assert len(files) > 20                           # the walk did find the package
    offenders = {str(p.relative_to(ROOT)): ref_imports(p.read_text()) for p in files}
    offenders = {k: v for k, v in offenders.items() if v}
    assert not offenders, offenders


def test_no_cython_pass_imports_a_reference():
    files = list(_production_files(".pyx"))
    assert len(files) >= 10
    offenders = {str(p.relative_to(ROOT)): pyx_ref_imports(p.read_text()) for p in files}
    offenders = {k: v for k, v in offenders.items() if v}
    assert not offenders, offenders


@pytest.mark.parametrize("source", [
    "from ._core._kfun_ref import KERNEL_CODES\n",
    "from ._core import _komp_ref\n",
    "from . import _okauc_ref as ref\n",
    "import sosl._core._ftrl_ref\n",
    "def f():\n    from ._ftrl_ref import ftrl_weights\n    return ftrl_weights\n",
])
def test_mutant_reference_import_is_caught(source):
    assert ref_imports(source)


@pytest.mark.parametrize("source", [
    "from sosl._core._kbudget_ref import komp_step\n",
    "from sosl._core cimport _losses_ref\n",
    "import sosl._core._sketch_ref as r\n",
])
def test_mutant_pyx_reference_import_is_caught(source):
    assert pyx_ref_imports(source)


def test_production_imports_are_not_flagged():
    src = ("from ._core._kparams import KERNEL_CODES\nfrom ._core import _kfun, _komp_np\n"
           "import numpy as np\nprefer_ref = 1\n")
    assert ref_imports(src) == []
    assert pyx_ref_imports("from sosl._core._kfun cimport (\n    KernelSpec,\n)\n") == []


def test_references_may_import_production_code():
    """The rule is one-way: the skipped files are exactly the ``_core/_*_ref.py`` ones."""
    skipped = {p.name for p in ROOT.rglob("*.py")} - {p.name for p in _production_files(".py")}
    assert skipped and all(_REF_FILE.match(n) for n in skipped)
    assert "_okauc_ref.py" in skipped and "_kparams.py" not in skipped
