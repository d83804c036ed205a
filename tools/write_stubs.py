"""Write ``sosl/_core/<stem>.pyi`` from the module-level ``def`` functions of ``<stem>.pyx``.

``python tools/write_stubs.py _kfun _okauc ...`` from the root of a checkout. Array
arguments become NumPy arrays of the memoryview's dtype, scalars their Python type, typed
objects (``KernelSpec``) and return values ``Any``; a module ``__getattr__`` types every
other name (classes, constants) as ``Any``. ``tests/test_stubs.py`` checks that each stub
names the compiled function's parameters in order: rerun this after changing a signature.
"""
import re
import sys
from pathlib import Path

ELEM = {"double": "np.float64", "int": "np.int32", "int32_t": "np.int32",
        "long long": "np.int64",
        "int64_t": "np.int64", "Py_ssize_t": "np.intp", "intp_t": "np.intp",
        "unsigned char": "np.uint8", "uint8_t": "np.uint8", "char": "np.int8",
        "signed char": "np.int8", "float": "np.float32", "uint64_t": "np.uint64",
        "bint": "np.uint8"}
SCALAR = {"double": "float", "float": "float", "int": "int", "long": "int", "long long": "int",
          "Py_ssize_t": "int", "int64_t": "int", "int32_t": "int", "uint64_t": "int",
          "bint": "bool", "object": "Any", "str": "str", "list": "list[Any]",
          "dict": "dict[Any, Any]", "tuple": "tuple[Any, ...]", "unsigned long long": "int",
          "size_t": "int"}

def split_args(s):
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur)
    return [a.strip() for a in out]

def arg_stub(a):
    default = None
    if "=" in a:
        a, default = [x.strip() for x in a.split("=", 1)]
    a = re.sub(r"\bconst\s+", "", a)
    a = re.sub(r"\bnot None\b", "", a).strip()
    m = re.match(r"^(.*?)(\[[^\]]*\])\s+(\w+)$", a)
    if m:
        base, name = m.group(1).strip(), m.group(3)
        t = f"npt.NDArray[{ELEM.get(base, 'Any')}]"
    else:
        parts = a.rsplit(None, 1)
        if len(parts) == 1:
            name, t = parts[0], "Any"
        else:
            base, name = parts
            t = SCALAR.get(base.strip(), "Any")
    if default is not None:
        if default == "None" and t != "Any":
            t = f"{t} | None"
        return f"{name}: {t} = ..."
    return f"{name}: {t}"

def functions(src):
    pattern = r"^(?:cp)?def\s+(\w+)\s*\((.*?)\)\s*(?:noexcept\s*)?:"
    for m in re.finditer(pattern, src, re.S | re.M):
        name, args = m.group(1), " ".join(m.group(2).split())
        if name.startswith("_"):
            continue
        yield name, [arg_stub(a) for a in split_args(args) if a]

def main(stem):
    src = Path(f"sosl/_core/{stem}.pyx").read_text()
    lines = [f"# Stub of the compiled module {stem}: the signatures of its module-level "
             "functions,",
             "# written from the .pyx by tools/write_stubs.py (array arguments as NumPy arrays of",
             "# the memoryview's dtype; return values and the other names typed as Any).",
             "from typing import Any", "", "import numpy as np", "import numpy.typing as npt", ""]
    for name, args in functions(src):
        one = f"def {name}({', '.join(args)}) -> Any: ..."
        if len(one) <= 100:
            lines.append(one)
        else:
            lines.append(f"def {name}(")
            cur = "   "
            for a in args:
                piece = f" {a},"
                if len(cur) + len(piece) > 100:
                    lines.append(cur)
                    cur = "   "
                cur += piece
            lines.append(cur)
            lines.append(") -> Any: ...")
    lines.append("def __getattr__(name: str) -> Any: ...")
    Path(f"sosl/_core/{stem}.pyi").write_text("\n".join(lines) + "\n")

if __name__ == "__main__":
    for stem in sys.argv[1:]:
        main(stem)
