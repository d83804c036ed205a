# cython: language_level=3
"""Typed core of the command line's LIBSVM reader: one pass over a block of whole lines.

A LIBSVM line is ``[label] index:value index:value ... [# comment]``. The pass splits the
block at ``\\n``, drops what follows ``#`` and skips lines with no token. The first token
of a line is its label when it holds no ``:`` (a finite number, read as ``strtod`` reads
it); a line without one gets the label NaN. Each other token is ``index:value`` with a
non-negative decimal index (digits only, within int64) and a finite number; ``qid:...``
tokens are skipped. Rows go out as CSR arrays in the order of the lines.

The pass stops at the first token it cannot read this way and reports the number of the
line (counted from 0 in the block, blank lines included); the caller then reads that block
with the line-by-line Python parser, whose message names the line and the problem. Nothing
here allocates: the caller sizes the outputs from the block (rows <= lines, entries <=
colons).

Two helpers of the stream around it: :func:`count_lines` (the ``\\n`` bytes of a block, for
line numbers) and :func:`format_scores` (``-p``'s lines: ``%.10g`` of each score, as
Python's ``f"{v:.10g}"`` writes it).

The NumPy/Python reference with the same signatures is :mod:`sosl._core._reader_ref`.

Symbols
-------
======  =================================================
symbol  meaning
======  =================================================
y       label of each row (NaN: the line has none)
indptr  CSR row pointers (rows + 1 values)
idx     column index of each stored entry
val     value of each stored entry
top     the largest index read (-1 if none)
======  =================================================
"""

from libc.math cimport isfinite, isnan, NAN, sqrt
from libc.stdio cimport snprintf
from libc.stdlib cimport free, malloc, qsort, strtod
from libc.string cimport memchr

cdef enum:
    S_OK = 0      # every line read
    S_BAD = 1     # a token the pass cannot read; its line is reported in ``out[2]``

OK = S_OK
BAD = S_BAD


cdef long long LLONG_MAX_10 = 922337203685477580   # (2^63 - 1) // 10
cdef double[23] POW10
POW10[0] = 1.0
for _e in range(1, 23):
    POW10[_e] = POW10[_e - 1] * 10.0


cdef inline bint _space(char c) noexcept nogil:
    return c == 32 or c == 9 or c == 13 or c == 11 or c == 12


cdef inline double _number(const char* p, char** stop) noexcept nogil:
    """``strtod``, with Clinger's fast path for plain decimals.

    A decimal ``[-+]digits[.digits][e[-+]digits]`` whose digits fit in 2^53 and whose
    power of ten is at most 22 in size is one exact integer and one exact power of ten, so
    one IEEE multiplication or division rounds it correctly: the bits ``strtod`` gives.
    Anything else (more digits, a larger exponent, inf, nan, hex) goes to ``strtod``.
    """
    cdef const char* q = p
    cdef bint neg = False, eneg = False
    cdef unsigned long long m = 0
    cdef int digits = 0, frac = 0, e = 0, ed = 0
    if q[0] == 45 or q[0] == 43:
        neg = q[0] == 45
        q += 1
    while 48 <= q[0] <= 57:
        m = m * 10 + <unsigned long long> (q[0] - 48)
        digits += 1
        q += 1
    if q[0] == 46:
        q += 1
        while 48 <= q[0] <= 57:
            m = m * 10 + <unsigned long long> (q[0] - 48)
            digits += 1
            frac += 1
            q += 1
    if digits == 0 or digits > 15:
        return strtod(p, stop)
    if q[0] == 101 or q[0] == 69:
        q += 1
        if q[0] == 45 or q[0] == 43:
            eneg = q[0] == 45
            q += 1
        while 48 <= q[0] <= 57 and ed < 4:
            e = e * 10 + (q[0] - 48)
            ed += 1
            q += 1
        if ed == 0 or ed == 4:
            return strtod(p, stop)
        if eneg:
            e = -e
    e -= frac
    if e < -22 or e > 22:
        return strtod(p, stop)
    stop[0] = <char*> q
    cdef double v = <double> m
    v = v * POW10[e] if e >= 0 else v / POW10[-e]
    return -v if neg else v


def parse_libsvm(bytes block, double[::1] y, long long[::1] indptr, long long[::1] idx,
                 double[::1] val, long long[::1] out):
    """Read the whole lines of ``block`` into CSR arrays (the module docstring's rules).

    ``y`` and ``indptr`` need room for one value per line (plus one), ``idx`` and ``val``
    for one per ``:`` of the block. ``out`` receives [rows, entries, bad line or -1, top].
    Returns OK or BAD.
    """
    cdef const char* s = block
    cdef Py_ssize_t n = len(block), i = 0, j, k
    cdef long long line = 0, rows = 0, nnz = 0, top = -1, index
    cdef const char* end
    cdef const char* eol
    cdef char* stop
    cdef double v
    cdef bint first
    cdef int status = S_OK
    indptr[0] = 0
    with nogil:
        while i < n:
            # one line: [i, j)
            eol = <const char*> memchr(s + i, 10, n - i)
            j = n if eol == NULL else eol - s
            k = i
            first = True
            while True:
                while k < j and _space(s[k]):
                    k += 1
                if k >= j or s[k] == 35:       # end of line or '#'
                    break
                if first:
                    first = False
                    # a label: a first token with no ':'
                    end = s + k
                    while end < s + j and not _space(end[0]) and end[0] != 35 \
                            and end[0] != 58:
                        end += 1
                    if end >= s + j or end[0] != 58:
                        v = _number(s + k, &stop)
                        if stop != end or not isfinite(v):
                            status = S_BAD
                            break
                        y[rows] = v
                        k = end - s
                        continue
                    y[rows] = NAN
                # index:value, read in one pass
                if s[k] == 113 and k + 3 < j and s[k + 1] == 105 and s[k + 2] == 100 \
                        and s[k + 3] == 58:    # qid: skipped
                    k += 4
                    while k < j and not _space(s[k]) and s[k] != 35:
                        k += 1
                    continue
                index = 0
                end = s + k
                while end < s + j and 48 <= end[0] <= 57:
                    if index > LLONG_MAX_10 or (index == LLONG_MAX_10 and end[0] > 55):
                        status = S_BAD        # beyond int64
                        break
                    index = index * 10 + (end[0] - 48)
                    end += 1
                if status != S_OK or end == s + k or end >= s + j or end[0] != 58:
                    status = S_BAD
                    break
                end += 1
                if end >= s + j or _space(end[0]):
                    status = S_BAD
                    break
                v = _number(end, &stop)
                if stop == end or not isfinite(v) or (
                        stop < s + j and not _space(stop[0]) and stop[0] != 35):
                    status = S_BAD
                    break
                if stop > s + j:               # strtod read past the line end
                    status = S_BAD
                    break
                idx[nnz] = index
                val[nnz] = v
                nnz += 1
                if index > top:
                    top = index
                k = stop - s
            if status != S_OK:
                break
            if not first:                      # the line held a token: a row
                rows += 1
                indptr[rows] = nnz
            line += 1
            i = j + 1
    out[0] = rows
    out[1] = nnz
    out[2] = line if status != S_OK else -1
    out[3] = top
    return status


def count_lines(bytes block):
    """The number of ``\\n`` bytes in ``block``."""
    cdef const char* s = block
    cdef const char* end = s + len(block)
    cdef const char* hit
    cdef Py_ssize_t n = 0
    with nogil:
        while s < end:
            hit = <const char*> memchr(s, 10, end - s)
            if hit == NULL:
                break
            n += 1
            s = hit + 1
    return n


def format_scores(const double[::1] v):
    """One line ``"%.10g\\n"`` per value (``inf``, ``-inf``, ``nan`` for the others), as
    ASCII text: the C library's ``%.10g`` and Python's ``.10g`` both round correctly and
    print the same digits, exponent and trailing-zero rule."""
    cdef Py_ssize_t n = v.shape[0], i, pos = 0
    cdef int k
    cdef double x
    cdef char* buf = <char*> malloc(32 * n + 1)
    if buf == NULL:
        raise MemoryError()
    try:
        with nogil:
            for i in range(n):
                x = v[i]
                if isfinite(x):
                    k = snprintf(buf + pos, 32, "%.10g\n", x)
                elif isnan(x):
                    k = snprintf(buf + pos, 32, "nan\n")
                elif x > 0:
                    k = snprintf(buf + pos, 32, "inf\n")
                else:
                    k = snprintf(buf + pos, 32, "-inf\n")
                pos += k
        return buf[:pos].decode("ascii")
    finally:
        free(buf)


# -- text: scikit-learn's HashingVectorizer on ASCII documents, without scikit-learn --------
cdef inline unsigned int _rotl(unsigned int x, int r) noexcept nogil:
    return (x << r) | (x >> (32 - r))


cdef int _murmur3(const unsigned char* key, Py_ssize_t n) noexcept nogil:
    """MurmurHash3 x86 32-bit of ``key[:n]`` with seed 0, as a signed int (scikit-learn's
    ``murmurhash3_bytes_s32``)."""
    cdef unsigned int h = 0, k
    cdef unsigned int c1 = 0xcc9e2d51, c2 = 0x1b873593, c3 = 0xe6546b64
    cdef unsigned int f1 = 0x85ebca6b, f2 = 0xc2b2ae35
    cdef Py_ssize_t i, blocks = n // 4
    for i in range(blocks):
        k = (<unsigned int> key[4 * i] | (<unsigned int> key[4 * i + 1] << 8)
             | (<unsigned int> key[4 * i + 2] << 16) | (<unsigned int> key[4 * i + 3] << 24))
        k = _rotl(k * c1, 15) * c2
        h = _rotl(h ^ k, 13) * 5 + c3
    k = 0
    i = 4 * blocks
    if n & 3 == 3:
        k ^= <unsigned int> key[i + 2] << 16
    if n & 3 >= 2:
        k ^= <unsigned int> key[i + 1] << 8
    if n & 3 >= 1:
        k ^= <unsigned int> key[i]
        h ^= _rotl(k * c1, 15) * c2
    h ^= <unsigned int> n
    h ^= h >> 16
    h *= f1
    h ^= h >> 13
    h *= f2
    h ^= h >> 16
    return <int> h


cdef inline bint _word(unsigned char c) noexcept nogil:
    return (48 <= c <= 57) or (65 <= c <= 90) or (97 <= c <= 122) or c == 95


cdef int _cmp_keys(const void* a, const void* b) noexcept nogil:
    cdef long long x = (<const long long*> a)[0], y = (<const long long*> b)[0]
    return (x > y) - (x < y)


def hash_words(bytes block, long long n_features, int ngram, double[::1] val,
               int[::1] idx, int[::1] indptr, bint tokens_given=False):
    """scikit-learn's ``HashingVectorizer(n_features, ngram_range=(1, ngram))`` on the
    ASCII documents of ``block``, one a line (``\\\\n``-separated; the caller checks
    ASCII): tokens are the runs of 2 or more of ``[A-Za-z0-9_]``, lowercased; word n-grams
    of 1 to ``ngram`` tokens joined by a space; each hashed (MurmurHash3, seed 0) to
    column ``|h| % n_features`` with value ``+1`` (``h >= 0``) or ``-1``; a row's values
    summed per column (columns sorted, zero sums kept) and divided by the row's l2 norm
    (sum of squares in column order; a zero row left as is).

    ``tokens_given=True``: the documents are already tokenized and lowercased (UTF-8
    tokens of 2 or more characters separated by single spaces, as the caller's regular
    expression found them): a token is a run of bytes other than the space, hashed as it
    is. ``indptr`` needs one value per document plus one; ``idx`` and ``val`` room for
    ``ngram`` entries per possible token (a token and a separator: 3 bytes). Returns the
    number of stored entries.
    """
    cdef const unsigned char* s = <const unsigned char*> (<const char*> block)
    cdef Py_ssize_t n = len(block), i = 0, j, a, b, t, u, m, q, r, nnz = 0, row = 0
    cdef Py_ssize_t n_tok, n_keys, kmax = (n + 1) // 3 + 2
    cdef Py_ssize_t* starts = <Py_ssize_t*> malloc(kmax * sizeof(Py_ssize_t))
    cdef Py_ssize_t* ends = <Py_ssize_t*> malloc(kmax * sizeof(Py_ssize_t))
    cdef long long* keys = <long long*> malloc(kmax * (ngram if ngram > 0 else 1)
                                               * sizeof(long long))
    cdef unsigned char* buf = <unsigned char*> malloc(n + 1)
    cdef int h
    cdef long long col
    cdef double v, total
    if starts == NULL or ends == NULL or keys == NULL or buf == NULL:
        _free4(starts, ends, keys, buf)
        raise MemoryError()
    indptr[0] = 0
    try:
        with nogil:
            while i <= n:
                # one document: [i, j)
                j = i
                while j < n and s[j] != 10:
                    j += 1
                n_tok = 0
                a = i
                while a < j:
                    if not (s[a] != 32 if tokens_given else _word(s[a])):
                        a += 1
                        continue
                    b = a
                    while b < j and (s[b] != 32 if tokens_given else _word(s[b])):
                        b += 1
                    if b - a >= 2:
                        starts[n_tok] = a
                        ends[n_tok] = b
                        n_tok += 1
                    a = b
                n_keys = 0
                for m in range(1, ngram + 1):
                    for t in range(n_tok - m + 1):
                        q = 0
                        for u in range(t, t + m):
                            if u > t:
                                buf[q] = 32
                                q += 1
                            for r in range(starts[u], ends[u]):
                                buf[q] = s[r] + 32 if 65 <= s[r] <= 90 else s[r]
                                q += 1
                        h = _murmur3(buf, q)
                        if h == -2147483648:
                            col = (2147483647 - (n_features - 1)) % n_features
                        else:
                            col = (h if h >= 0 else -h) % n_features
                        keys[n_keys] = 2 * col + (1 if h >= 0 else 0)
                        n_keys += 1
                qsort(keys, n_keys, sizeof(long long), _cmp_keys)
                a = nnz
                t = 0
                while t < n_keys:
                    col = keys[t] >> 1
                    v = 0.0
                    while t < n_keys and (keys[t] >> 1) == col:
                        v += 1.0 if keys[t] & 1 else -1.0
                        t += 1
                    idx[nnz] = <int> col
                    val[nnz] = v
                    nnz += 1
                total = 0.0
                for t in range(a, nnz):
                    total += val[t] * val[t]
                if total != 0.0:
                    total = sqrt(total)
                    for t in range(a, nnz):
                        val[t] /= total
                row += 1
                indptr[row] = <int> nnz
                i = j + 1
    finally:
        _free4(starts, ends, keys, buf)
    return nnz


cdef void _free4(void* a, void* b, void* c, void* d) noexcept:
    free(a)
    free(b)
    free(c)
    free(d)
