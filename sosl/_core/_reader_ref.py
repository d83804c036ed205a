"""Reference of :mod:`sosl._core._reader`: ``parse_libsvm`` with the same rules, line by
line; ``count_lines`` and ``format_scores`` as Python writes them.

Each line is split at ``#`` and at white space; a first token without ``:`` is the label;
every other token is ``index:value`` (a digits-only index within int64, a finite number)
or ``qid:...`` (skipped). The kernel reads numbers with ``strtod``'s rounding; Python's
``float`` rounds the same way (both are correctly rounded).
"""

import math

import numpy as np

OK, BAD = 0, 1
_INT64_MAX = 2**63 - 1


def parse_libsvm(block, y, indptr, idx, val, out):
    """Same signature, outputs and status as the kernel."""
    rows = nnz = 0
    top = -1
    indptr[0] = 0
    for line, text in enumerate(block.split(b"\n")):
        tokens = text.split(b"#", 1)[0].split()
        if not tokens:
            continue
        if b":" not in tokens[0]:
            try:
                label = float(tokens[0])
            except ValueError:
                label = math.nan
            if not math.isfinite(label) or b"_" in tokens[0]:
                out[:] = [rows, nnz, line, top]
                return BAD
            y[rows], tokens = label, tokens[1:]
        else:
            y[rows] = np.nan
        for tok in tokens:
            name, _, value = tok.partition(b":")
            if name == b"qid":
                continue
            try:
                v = float(value) if value[:1].strip() and b"_" not in value else math.nan
            except ValueError:
                v = math.nan
            if not (name.isdigit() and int(name) <= _INT64_MAX and math.isfinite(v)):
                out[:] = [rows, nnz, line, top]
                return BAD
            idx[nnz], val[nnz] = int(name), v
            top = max(top, int(name))
            nnz += 1
        rows += 1
        indptr[rows] = nnz
    out[:] = [rows, nnz, -1, top]
    return OK


def count_lines(block):
    """The number of ``\\n`` bytes in ``block``."""
    return block.count(b"\n")


def format_scores(v):
    """One line ``f"{x:.10g}\\n"`` per value."""
    return "".join(f"{x:.10g}\n" for x in np.asarray(v).tolist())
