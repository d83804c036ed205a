"""The command line's streaming reader: bytes in, blocks of (X, y, weights) out.

Input comes from a file or standard input, gzip, bzip2 or xz compressed or not (told by
the first bytes, not the name), and is read in chunks of whole lines, once. Each chunk
becomes one matrix:

* LIBSVM with indexed columns and numeric labels: the compiled pass
  :func:`sosl._core._reader.parse_libsvm` (a chunk it cannot read is read again line by line
  here, so that the message names the line), handed out as plain CSR arrays
  (``Rows``) to the command line's engine, which runs without SciPy, or as the matrix
  the estimators take;
* ``label<TAB>text``: hashed by the compiled :func:`sosl._core._reader.hash_words`, which
  gives scikit-learn's ``HashingVectorizer`` columns and values (text that is not ASCII is
  tokenized here first, with that vectorizer's lowercasing and token pattern);
* LIBSVM hashed, CSV and Vowpal Wabbit's text format: line by line here (VW's names and
  hashed LIBSVM columns through scikit-learn's ``FeatureHasher``).

Whether a file is labelled is decided once, by its first row; a later row that differs
(a missing field, a missing label) is an error naming its line.
"""

import bz2
import gzip
import io
import itertools
import lzma
import math
import os
import re
import sys
import warnings

import numpy as np

#: indexed LIBSVM input with at most this many columns is handed to the learner as dense rows
DENSE_MAX = 1000
#: the largest column index the sparse passes take (int32 indices)
MAX_INDEX = 2**31 - 2
_POSITIVE_TOKENS = {"1", "+1", "1.0", "+1.0", "true", "yes"}
_NEGATIVE_TOKENS = {"0", "-1", "0.0", "-1.0", "false", "no"}
#: scikit-learn's default token pattern (HashingVectorizer's), for text that is not ASCII
_TOKEN = re.compile(r"(?u)\b\w\w+\b")
_MAGIC = ((b"\x1f\x8b", lambda f: gzip.GzipFile(fileobj=f)), (b"BZh", bz2.BZ2File),
          (b"\xfd7zXZ\x00", lzma.LZMAFile))


class UsageError(Exception):
    """A mistake of the caller: reported on one line, exit status 2."""


# ---------------------------------------------------------------------------------------
# bytes
# ---------------------------------------------------------------------------------------
def open_input(path):
    """A binary stream of the input's lines, decompressed when its first bytes say so."""
    if path == "-":
        raw = sys.stdin.buffer if hasattr(sys.stdin, "buffer") else None
        if raw is None:                       # a text stream (tests hand one in)
            raw = io.BytesIO(sys.stdin.read().encode("utf-8"))
    else:
        if not os.path.exists(path):
            raise UsageError(f"{path}: no such file")
        if os.path.isdir(path):
            raise UsageError(f"{path}: is a directory")
        raw = open(path, "rb")
    stream = raw if isinstance(raw, io.BufferedReader) or hasattr(raw, "peek") \
        else io.BufferedReader(raw)  # type: ignore[type-var]  # a binary stream
    head = stream.peek(8)[:8]
    for magic, opener in _MAGIC:
        if head.startswith(magic):
            return opener(stream)
    return stream


def read_chunks(stream, rows, name):
    """(number of the first line, bytes of whole lines) until the end.

    The first chunk holds ``rows`` lines; the later ones about as many (as many bytes as
    ``rows`` lines of the first chunk, cut after the last line end: no object per line).
    The first chunk is checked to be text: a NUL byte or bytes that are not UTF-8 make it
    binary input, refused here rather than read as rows of nonsense.
    """
    from ._core._reader import count_lines

    try:
        lines = list(itertools.islice(stream, rows))
        if not lines:
            return
        block = b"".join(lines)
        head = block[:65536]
        try:
            head.decode("utf-8")
            text = b"\x00" not in head
        except UnicodeDecodeError as e:
            text = e.start > len(head) - 4     # a character cut at the end
        if not text:
            raise UsageError(f"{name}: binary input, not lines of text (LIBSVM, CSV, "
                             "label<TAB>text or VW; .gz/.bz2/.xz are read as such)")
        yield 1, block
        first_line = 1 + len(lines)
        size = max(1 << 12, len(block) // len(lines) * rows)
        tail = b""
        while True:
            data = stream.read(size)
            if not data:
                if tail:                          # a last line without its line end
                    yield first_line, tail
                return
            if tail:
                data = tail + data
            cut = data.rfind(b"\n") + 1
            if cut == 0:                          # no line end yet: a line longer than size
                tail = data
                continue
            block, tail = (data, b"") if cut == len(data) else (data[:cut], data[cut:])
            yield first_line, block
            first_line += count_lines(block)
    except (OSError, EOFError, lzma.LZMAError) as e:
        if isinstance(e, OSError) and not isinstance(e, (gzip.BadGzipFile,)) \
                and e.errno is not None:
            raise
        raise UsageError(f"{name}: corrupt compressed input ({e})") from None


def text_lines(block, first_line):
    """(line number, line) of the non-blank lines of a chunk, line ends removed."""
    text = block.decode("utf-8", errors="replace")
    for k, line in enumerate(text.split("\n")):
        line = line.rstrip("\r")
        if line.strip():
            yield first_line + k, line


def _csr(X):
    import scipy.sparse as sp

    X = sp.csr_matrix(X, dtype=np.float64)
    X.sum_duplicates()
    X.sort_indices()
    return X


class Rows:
    """CSR rows as plain arrays: float64 values, int32 column indices (sorted within a row,
    no repeats), int32 row pointers, and the shape. What the compiled LIBSVM pass hands to
    the engine; :meth:`matrix` gives the form the estimators take."""

    __slots__ = ("data", "indices", "indptr", "shape")

    def __init__(self, data, indices, indptr, shape):
        self.data, self.indices, self.indptr, self.shape = data, indices, indptr, shape

    def matrix(self):
        """The rows as the estimators get them: dense up to ``DENSE_MAX`` columns, else a
        canonical SciPy CSR matrix."""
        import scipy.sparse as sp

        X = sp.csr_matrix((self.data, self.indices, self.indptr), shape=self.shape)
        return X.toarray() if self.shape[1] <= DENSE_MAX else X


def _canonical(data, idx, indptr):
    """CSR arrays with the columns of each row sorted and repeats summed (NumPy only)."""
    n = indptr.shape[0] - 1
    if idx.shape[0] > 1:
        step = np.diff(idx) > 0
        inner = indptr[1:-1]
        step[inner[(inner > 0) & (inner < idx.shape[0])] - 1] = True   # a new row starts
        if step.all():
            return data, idx, indptr
    else:
        return data, idx, indptr
    rows = np.repeat(np.arange(n), np.diff(indptr))
    order = np.lexsort((idx, rows))
    rows, idx, data = rows[order], idx[order], data[order]
    new = np.ones(rows.shape[0], dtype=bool)
    new[1:] = (rows[1:] != rows[:-1]) | (idx[1:] != idx[:-1])
    starts = np.flatnonzero(new)
    data = np.add.reduceat(data, starts)
    idx, rows = idx[starts], rows[starts]
    indptr = np.zeros(n + 1, dtype=indptr.dtype)
    np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
    return data, idx, indptr


def csr_arrays(X):
    """(values, int32 indices, int32 row pointers) of the rows ``X`` (``Rows``, a
    dense array or a SciPy CSR matrix), in canonical form; a dense array gives its non-zero
    entries."""
    if isinstance(X, Rows):
        return X.data, X.indices, X.indptr
    if isinstance(X, np.ndarray):
        rows, cols = np.nonzero(X)
        indptr = np.zeros(X.shape[0] + 1, dtype=np.int32)
        np.cumsum(np.bincount(rows, minlength=X.shape[0]), out=indptr[1:])
        return X[rows, cols], cols.astype(np.int32), indptr
    return (X.data, X.indices.astype(np.int32, copy=False),
            X.indptr.astype(np.int32, copy=False))


def _is_number(s):
    try:
        float(s)
    except ValueError:
        return False
    return True


# ---------------------------------------------------------------------------------------
# features: how a chunk of lines becomes a matrix, saved with the model
# ---------------------------------------------------------------------------------------
class FeatureSpec:
    """The input format and feature mapping a model was trained with.

    Parameters
    ----------
    fmt : {"libsvm", "csv", "text", "vw"}
        Input format.
    hash_bits : int or None
        Hash the features into ``2**hash_bits`` columns (text and VW always; LIBSVM when
        given). None indexes them (LIBSVM column = index, CSV column = field position).
    n_features : int or None
        Number of columns of indexed input (LIBSVM: largest index + 1; CSV: fields - 1).
        Indexed LIBSVM rows of at most ``DENSE_MAX`` columns reach the learner dense, wider
        ones (and hashed ones) as CSR rows.
    grow : bool
        Indexed LIBSVM only: the width is not fixed but grows as rows arrive
        (``n_features`` is then the largest index read so far + 1, at least 1; the state
        grows with it). Not saved: a model file has a fixed width.
    positive : str or None
        The label token of the positive class; None reads labels as 1/+1 (positive) and
        0/-1 (negative).
    delimiter : str
        CSV field separator.
    label_col : int
        CSV column holding the label (negative counts from the end).
    ngram : int
        Text: word n-grams of length 1 to ``ngram`` are hashed.
    """

    def __init__(self, fmt, hash_bits=None, n_features=None, positive=None, delimiter=",",
                 label_col=0, ngram=1, grow=False):
        self.fmt = fmt
        self.hash_bits = hash_bits
        self.grow = grow and fmt == "libsvm" and hash_bits is None
        self.n_features = 1 if self.grow and n_features is None else n_features
        self.positive = positive
        self.delimiter = delimiter
        self.label_col = label_col
        self.ngram = ngram
        self._hasher = None
        #: whether the input is labelled: decided by its first row
        self.labelled = None
        #: the label tokens of the input seen so far (for an unseen --positive)
        self.seen_labels = set()
        self.header_checked = False
        self._fast = True          # the compiled pass has not declined a readable chunk
        self._raw = False          # hand out Rows (the engine) rather than matrices

    def state(self):
        """The spec as a plain dict (what the model file stores)."""
        return {k: getattr(self, k) for k in ("fmt", "hash_bits", "n_features", "positive",
                                              "delimiter", "label_col", "ngram")}

    @classmethod
    def from_state(cls, state):
        return cls(**state)

    @property
    def columns(self):
        return 2 ** self.hash_bits if self.hash_bits is not None else self.n_features

    def describe(self):
        if self.hash_bits is not None:
            return f"{self.fmt}, hashed to 2^{self.hash_bits} columns"
        if self.grow:
            return f"{self.fmt}, indexed columns (as many as the largest index + 1)"
        return f"{self.fmt}, {self.n_features} indexed columns"

    # labels ------------------------------------------------------------------------------
    def _decide(self, has_label, where, required):
        """Fix whether the input is labelled from its first row; check every later row."""
        if self.labelled is None:
            if required and not has_label:
                raise UsageError(f"{where}: the row has no label")
            self.labelled = has_label
        elif has_label != self.labelled:
            raise UsageError(f"{where}: the row has no label, the first row had one"
                             if self.labelled else
                             f"{where}: the row has a label, the first row had none")

    def label(self, token, where):
        """1 for the positive class, 0 for the negative one."""
        if len(self.seen_labels) < 64:
            self.seen_labels.add(token)
        if self.positive is not None:
            return 1 if token == self.positive else 0
        t = token.lower()
        if t in _POSITIVE_TOKENS:
            return 1
        if t in _NEGATIVE_TOKENS:
            return 0
        try:
            value = float(t)
        except ValueError:
            value = None
        if value == 1.0:
            return 1
        if value == 0.0 or value == -1.0:
            return 0
        raise UsageError(f"{where}: label {token!r} is not 1/+1 or 0/-1; name the positive "
                         "class with --positive LABEL")

    # chunks ------------------------------------------------------------------------------
    def transform(self, block, first_line, required, raw=False):
        """Parse a chunk of whole lines: (X, y, weights or None), or None if it has no row.

        ``y[i]`` is 1, 0, or -1 for an unlabelled input. A compiled pass reads indexed
        LIBSVM and numeric CSV; a chunk it declines is read line by line, which names the
        line of an error. When the line-by-line reading succeeds where the pass declined
        (labels that are words, say), later chunks go to it directly. ``raw``: the compiled
        LIBSVM pass hands out ``Rows`` (for the engine), else the estimators' matrix.
        """
        self._raw = raw
        declined = False
        if self._fast:
            fast = None
            if self.fmt == "libsvm" and self.hash_bits is None:
                fast, declined = self._libsvm_fast(block, required, raw), True
            elif self.fmt == "csv" and self.header_checked:
                fast, declined = self._csv_fast(block, required), True
            if fast is not None:
                return fast
        parsed = self._lines(block, first_line, required)
        if declined and parsed is not None:
            self._fast = False
        return parsed

    def _lines(self, block, first_line, required):
        lines = list(text_lines(block, first_line))
        if not lines:
            return None
        if self.fmt == "csv" and not self.header_checked:
            self.header_checked = True
            if self._is_header(lines[0][1]):
                lines = lines[1:]
                if not lines:
                    return None
        parse = {"text": self._text, "libsvm": self._libsvm, "csv": self._csv,
                 "vw": self._vw}[self.fmt]
        return parse(lines, required)

    def _is_header(self, line):
        fields = [f.strip() for f in line.split(self.delimiter)]
        if len(fields) == self.n_features + 1:
            fields.pop(self.label_col)
        return not all(_is_number(f) for f in fields)

    def _libsvm_fast(self, block, required, raw=False):
        """The compiled pass on indexed LIBSVM with numeric labels; None to read the chunk
        line by line instead (a token or a label the pass does not take, or an error, which
        the line-by-line reader then names)."""
        from ._core._reader import OK, parse_libsvm

        # room for every row and entry the block can hold, without counting: a row takes a
        # token and a line end (2 bytes), an entry "i:v" and a separator (4 bytes)
        n_lines = (len(block) + 1) // 2 + 1
        n_colons = (len(block) + 1) // 4 + 1
        y = np.empty(n_lines)
        indptr = np.empty(n_lines + 1, dtype=np.int64)
        idx = np.empty(n_colons, dtype=np.int64)
        val = np.empty(n_colons)
        out = np.empty(4, dtype=np.int64)
        if parse_libsvm(block, y, indptr, idx, val, out) != OK:
            return None
        rows, nnz, _, top = (int(v) for v in out)
        if rows == 0:
            return None
        if top > MAX_INDEX:
            return None                        # the line-by-line reader names the row
        if top >= self.n_features and not self.grow:
            return None                        # the line-by-line reader names the row
        y = y[:rows]
        has = ~np.isnan(y)
        if self.labelled is None and not (has.all() or not has.any()):
            return None
        if self.labelled is None:
            if required and not has[0]:
                return None
            self.labelled = bool(has[0])
        if not (has == self.labelled).all():
            return None
        if self.labelled:
            labels = self._numeric_labels(y)
            if labels is None:
                return None
        else:
            labels = np.full(rows, -1, dtype=np.int64)
        if top >= self.n_features:             # grow: the width follows the rows
            self.n_features = top + 1
        data, idx, ptr = _canonical(val[:nnz], idx[:nnz].astype(np.int32),
                                    indptr[:rows + 1].astype(np.int32))
        X = Rows(data, idx, ptr, (rows, self.n_features))
        return (X if raw else X.matrix()), labels, None

    def _csv_fast(self, block, required):
        """NumPy's compiled text reader on a CSV chunk of numbers; None to read it line by
        line (a ragged row, a word, a label other than 1/+1/0/-1 without --positive)."""
        p = self.n_features
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")            # an empty chunk warns
                A = np.loadtxt(io.BytesIO(block), delimiter=self.delimiter, ndmin=2,
                               dtype=np.float64, comments=None)
        except (ValueError, UserWarning):
            return None
        if A.shape[0] == 0 or not np.isfinite(A).all():
            return None
        if self.labelled is None:
            if A.shape[1] not in (p, p + 1) or (required and A.shape[1] == p):
                return None
            self.labelled = A.shape[1] == p + 1
        if A.shape[1] != (p + 1 if self.labelled else p):
            return None
        if not self.labelled:
            return np.ascontiguousarray(A), np.full(A.shape[0], -1, dtype=np.int64), None
        col = self.label_col % (p + 1)
        labels = self._numeric_labels(A[:, col])
        if labels is None:
            return None
        return np.ascontiguousarray(np.delete(A, col, axis=1)), labels, None

    def _numeric_labels(self, y):
        """0/1 labels from numeric label values, or None if one is not a label."""
        if self.positive is not None:
            try:
                pos = float(self.positive)
            except ValueError:
                return None
            labels = (y == pos).astype(np.int64)
        else:
            one, zero = y == 1.0, (y == 0.0) | (y == -1.0)
            if not (one | zero).all():
                return None
            labels = one.astype(np.int64)
        if len(self.seen_labels) < 64:
            self.seen_labels.update(f"{v:g}" for v in np.unique(y))
        return labels

    def _text(self, lines, required):
        texts, y = [], np.empty(len(lines), dtype=np.int64)
        for k, (number, line) in enumerate(lines):
            where = f"line {number}"
            label, sep, text = line.partition("\t")
            self._decide(bool(sep), where, required)
            if not self.labelled:
                y[k] = -1
                texts.append(line)
                continue
            if not sep:
                raise UsageError(f"{where}: no TAB between label and text (text input is "
                                 "label<TAB>text)")
            y[k] = self.label(label, where)
            texts.append(text)
        joined = "\n".join(texts)
        if joined.isascii():
            return self._hashed_words(joined.encode("ascii"), len(texts)), y, None
        # other text: scikit-learn's analyzer (lowercase, then its token pattern) here,
        # the tokens of each document joined by spaces and hashed by the same kernel
        tokens = "\n".join(" ".join(_TOKEN.findall(t.lower())) for t in texts)
        return self._hashed_words(tokens.encode("utf-8"), len(texts), True), y, None

    def _hashed_words(self, block, n_docs, tokens_given=False):
        """The compiled HashingVectorizer (:func:`sosl._core._reader.hash_words`: the same
        columns and values as scikit-learn's ``HashingVectorizer(n_features,
        ngram_range=(1, ngram))``) on ``n_docs`` documents."""
        from ._core._reader import hash_words

        cap = self.ngram * ((len(block) + 1) // 3 + 2)
        val, idx = np.empty(cap), np.empty(cap, dtype=np.int32)
        ptr = np.empty(n_docs + 1, dtype=np.int32)
        nnz = hash_words(block, 2 ** self.hash_bits, self.ngram, val, idx, ptr,
                         tokens_given)
        X = Rows(val[:nnz].copy(), idx[:nnz].copy(), ptr, (n_docs, 2 ** self.hash_bits))
        if self._raw:
            return X
        import scipy.sparse as sp

        return sp.csr_matrix((X.data, X.indices, X.indptr), shape=X.shape)

    def _libsvm(self, lines, required):
        y = np.empty(len(lines), dtype=np.int64)
        indices: list[int] = []
        data: list[float] = []
        indptr, pairs = [0], []
        for k, (number, line) in enumerate(lines):
            where = f"line {number}"
            body = line.split("#", 1)[0].split()
            label = None
            if body and ":" not in body[0]:
                label, body = body[0], body[1:]
            self._decide(label is not None, where, required)
            y[k] = self.label(label, where) if label is not None else -1
            row = []
            for tok in body:
                name, sep, value = tok.partition(":")
                if not sep:
                    raise UsageError(f"{where}: {tok!r} is not index:value")
                if name == "qid":
                    continue
                try:
                    idx, val = int(name), float(value)
                except ValueError:
                    raise UsageError(f"{where}: {tok!r} is not index:value with an integer "
                                     "index and a number") from None
                if idx < 0:
                    raise UsageError(f"{where}: negative feature index {idx}")
                if self.hash_bits is None and idx > MAX_INDEX:
                    raise UsageError(f"{where}: feature index {idx} is larger than "
                                     f"{MAX_INDEX}, the largest column sosl indexes; pass "
                                     "--hash-bits to hash the indices")
                if not math.isfinite(val):
                    raise UsageError(f"{where}: feature {idx} has the non-finite value {value}")
                if self.hash_bits is None and idx >= self.n_features and not self.grow:
                    raise UsageError(f"{where}: feature index {idx} is beyond the model's "
                                     f"{self.n_features} columns; pass --n-features or "
                                     "--hash-bits")
                row.append((idx, val))
            if self.hash_bits is not None:
                pairs.append([(str(i), v) for i, v in row])
            else:
                indices.extend(i for i, _ in row)
                data.extend(v for _, v in row)
                indptr.append(len(indices))
        if self.hash_bits is not None:
            if self._hasher is None:
                from sklearn.feature_extraction import FeatureHasher
                self._hasher = FeatureHasher(n_features=2 ** self.hash_bits, input_type="pair")
            return _csr(self._hasher.transform(pairs)), y, None
        import scipy.sparse as sp

        if self.grow and indices:
            self.n_features = max(self.n_features, max(indices) + 1)
        X = _csr(sp.csr_matrix((np.asarray(data, dtype=np.float64),
                                np.asarray(indices, dtype=np.int64),
                                np.asarray(indptr, dtype=np.int64)),
                               shape=(len(lines), self.n_features)))
        return (X.toarray() if self.n_features <= DENSE_MAX else X), y, None

    def _csv(self, lines, required):
        y = np.empty(len(lines), dtype=np.int64)
        X = np.empty((len(lines), self.n_features), dtype=np.float64)
        p = self.n_features
        for k, (number, line) in enumerate(lines):
            where = f"line {number}"
            fields = [f.strip() for f in line.split(self.delimiter)]
            if self.labelled is None and len(fields) in (p, p + 1):
                self._decide(len(fields) == p + 1, where, required)
            want = p + 1 if self.labelled else p
            if len(fields) != want:
                lacks = (f"it lacks {want - len(fields)} field(s)" if len(fields) < want
                         else f"it has {len(fields) - want} field(s) too many")
                what = f"a label and {p} features" if self.labelled else f"{p} features"
                raise UsageError(f"{where}: {len(fields)} fields, expected {want} ({what}); "
                                 + lacks)
            if self.labelled:
                y[k] = self.label(fields.pop(self.label_col), where)
            else:
                y[k] = -1
            try:
                X[k] = [float(f) for f in fields]
            except ValueError:
                raise UsageError(f"{where}: a feature is not a number") from None
            if not np.isfinite(X[k]).all():
                raise UsageError(f"{where}: a feature is NaN or infinite")
        return X, y, None

    def _vw(self, lines, required):
        """Vowpal Wabbit's text format: ``label [importance] ['tag]|ns f[:v] ... |ns2 ...``.

        Each feature ``f`` of namespace ``ns`` is hashed as the string ``ns^f`` (value 1
        unless ``f:v``), VW's own scoping of names by namespace; the importance weight is
        the row's sample weight.
        """
        y = np.empty(len(lines), dtype=np.int64)
        w = np.ones(len(lines))
        pairs = []
        for k, (number, line) in enumerate(lines):
            where = f"line {number}"
            head, bar, rest = line.partition("|")
            if not bar:
                raise UsageError(f"{where}: no '|' before the features (VW input is "
                                 "label [weight] |namespace features)")
            head_tokens = [t for t in head.split() if not t.startswith("'")]
            self._decide(bool(head_tokens), where, required)
            if head_tokens:
                y[k] = self.label(head_tokens[0], where)
                if len(head_tokens) > 1:
                    try:
                        w[k] = float(head_tokens[1])
                    except ValueError:
                        raise UsageError(f"{where}: importance weight {head_tokens[1]!r} is "
                                         "not a number") from None
                    if not (math.isfinite(w[k]) and w[k] >= 0):
                        raise UsageError(f"{where}: importance weight {head_tokens[1]} is "
                                         "not finite and >= 0")
            else:
                y[k] = -1
            row = []
            for group in ("|" + rest).split("|")[1:]:
                tokens = group.split()
                if not tokens:
                    continue
                ns = "" if group[:1].isspace() else tokens.pop(0).split(":", 1)[0]
                for tok in tokens:
                    name, sep, value = tok.rpartition(":")
                    if not sep:
                        name, value = tok, "1"
                    try:
                        v = float(value)
                    except ValueError:
                        raise UsageError(f"{where}: feature {tok!r} has a value that is "
                                         "not a number") from None
                    if not math.isfinite(v):
                        raise UsageError(f"{where}: feature {tok!r} is not finite")
                    row.append((f"{ns}^{name}", v))
            pairs.append(row)
        if self._hasher is None:
            from sklearn.feature_extraction import FeatureHasher
            self._hasher = FeatureHasher(n_features=2 ** self.hash_bits, input_type="pair",
                                         alternate_sign=False)
        return _csr(self._hasher.transform(pairs)), y, (None if (w == 1).all() else w)


def max_index(path, rows):
    """The largest feature index of a LIBSVM file (a pass of the compiled reader)."""
    from ._core._reader import OK, parse_libsvm

    top = 0
    with open_input(path) as stream:
        for first, block in read_chunks(stream, rows, path):
            n_lines, n_colons = block.count(b"\n") + 1, block.count(b":")
            out = np.empty(4, dtype=np.int64)
            status = parse_libsvm(block, np.empty(n_lines),
                                  np.empty(n_lines + 1, dtype=np.int64),
                                  np.empty(n_colons, dtype=np.int64), np.empty(n_colons), out)
            if status != OK or out[3] > MAX_INDEX:   # read line by line: name the line
                for number, line in text_lines(block, first):
                    for tok in line.split("#", 1)[0].split()[1:]:
                        name = tok.partition(":")[0]
                        if name == "qid":
                            continue
                        if not name.isdigit():
                            raise UsageError(f"line {number}: {tok!r} is not index:value")
                        if int(name) > MAX_INDEX:
                            raise UsageError(f"line {number}: feature index {name} is larger "
                                             f"than {MAX_INDEX}, the largest column sosl "
                                             "indexes; pass --hash-bits to hash the indices")
                        top = max(top, int(name))
                continue
            top = max(top, int(out[3]))
    return top
