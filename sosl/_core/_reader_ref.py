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


def _murmur3(key):
    """MurmurHash3 x86 32-bit, seed 0, signed."""
    c1, c2, mask = 0xCC9E2D51, 0x1B873593, 0xFFFFFFFF

    def rotl(x, r):
        return ((x << r) | (x >> (32 - r))) & mask

    h, n = 0, len(key)
    for i in range(0, n - n % 4, 4):
        k = int.from_bytes(key[i:i + 4], "little")
        h ^= rotl(k * c1 & mask, 15) * c2 & mask
        h = (rotl(h, 13) * 5 + 0xE6546B64) & mask
    tail = key[n - n % 4:]
    if tail:
        k = int.from_bytes(tail, "little")
        h ^= rotl(k * c1 & mask, 15) * c2 & mask
    h ^= n
    h ^= h >> 16
    h = h * 0x85EBCA6B & mask
    h ^= h >> 13
    h = h * 0xC2B2AE35 & mask
    h ^= h >> 16
    return h - (1 << 32) if h >= 1 << 31 else h


def hash_words(block, n_features, ngram, val, idx, indptr, tokens_given=False):
    """Same signature and outputs as the kernel: the documents of ``block`` tokenized by
    the regular expression (or split at spaces when ``tokens_given``), n-grams joined by
    a space, hashed, summed per column, l2 normalised."""
    import re

    nnz = 0
    indptr[0] = 0
    for row, doc in enumerate(block.split(b"\n")):
        tokens = ([t for t in doc.split(b" ") if t] if tokens_given
                  else re.findall(rb"\b[A-Za-z0-9_]{2,}\b", doc.lower()))
        grams = [b" ".join(tokens[i:i + m]) for m in range(1, ngram + 1)
                 for i in range(len(tokens) - m + 1)]
        sums = {}
        for g in grams:
            h = _murmur3(g)
            col = (2**31 - n_features) % n_features if h == -2**31 else abs(h) % n_features
            sums[col] = sums.get(col, 0.0) + (1.0 if h >= 0 else -1.0)
        cols = sorted(sums)
        total = math.sqrt(sum(sums[c] * sums[c] for c in cols))
        for c in cols:
            idx[nnz], val[nnz] = c, sums[c] / total if total else sums[c]
            nnz += 1
        indptr[row + 1] = nnz
    return nnz
