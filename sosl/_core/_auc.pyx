# cython: language_level=3
"""Typed core of the streaming AUC metrics: an order-statistics treap over the scores.

The AUC of a set of scored pairs is the Wilcoxon-Mann-Whitney statistic

    AUC = U / (n_pos n_neg),   U = #{(i, j): s_i > s_j} + #{(i, j): s_i = s_j} / 2,

over all pairs of a positive i and a negative j. The core keeps ``U2 = 2 U`` as an exact
integer. When a positive with score x arrives, its pairs with the negatives already held add

    U2 += 2 #{neg < x} + #{neg = x}                                            (credit +)

and a negative with score x adds ``2 #{pos > x} + #{pos = x}`` (credit -); removing an
element subtracts the same credit. The counts come from a treap (a binary search tree on
the distinct scores, heap-ordered on random priorities, so its expected depth is
O(log n)) whose nodes carry the number of positives and negatives at their score and the
same two counts summed over their subtree. One update is therefore an expected O(log n)
walk (down to count, down again to insert, pulling the aggregates back up), and ``get`` is
O(1).

The same treap answers the two threshold metrics, which do not decompose into per-element
credits. Let group g (the distinct scores in decreasing order) hold p_g positives and q_g
negatives, and A, B the positives and negatives above it.

* Partial AUC up to a false-positive rate m (scikit-learn's ``roc_auc_score(max_fpr=m)``):
  the ROC curve crosses group g on the straight segment from (B/N, A/P) to
  ((B+q)/N, (A+p)/P); of it, the part left of the cut L = m N negatives has width
  w = min(q, L - B) and area ``w (2A + p w / q) / (2 P N)``                   (segment)
  Summed over the groups wholly left of the cut, these areas are ``U2(top) / (2 P N)``, with
  U2(top) twice the Mann-Whitney U of the elements in those groups (a negative's positives
  above it are all among them). Each node also carries ``u2``, that statistic of its
  subtree, kept by

      u2 = u2(left) + u2(right) + cnt[1] cnt[0]
           + 2 (cnt[1] sub[0](left) + sub[1](right) cnt[0] + sub[1](right) sub[0](left))  (u2)

  so one descent from the root finds the group the cut crosses and U2 of everything above
  it, and ``partial_auc`` costs an expected O(log n) like an update. The area ``pa`` is
  standardized as McClish does: ``(1 + (pa - m^2/2) / (m - m^2/2)) / 2``          (McClish)
* Average precision (``average_precision_score``): each group with positives adds its
  recall step times the precision at its threshold, ``AP += (p / P) (A + p) / (A + p + B + q)``
  (AP), over all groups, so the walk is O(distinct scores).

The NumPy/Python reference with the same methods is :mod:`sosl._core._auc_ref` (sorted
lists and bisection, O(n) per insertion).

Symbols
-------
=======  ===========================================  ====================================
symbol   meaning                                      public name
=======  ===========================================  ====================================
U2       twice the Mann-Whitney U (ties count 1)      ``StreamingAUC.get() * 2 n+ n-``
n[c]     number of held elements of class c           ``n_neg`` (c = 0), ``n_pos`` (c = 1)
cnt[c]   elements of class c at a node's score        -
sub[c]   elements of class c in a node's subtree      -
u2       U2 of a node's subtree                       -
L        the cut m N, in negatives                    ``max_fpr * n_neg``
A, B     positives, negatives above a group           -
=======  ===========================================  ====================================
"""

from libc.stdlib cimport free, malloc, realloc

import numpy as np

__all__ = ["AUCCounter", "RollingAUCCounter"]


cdef struct Node:
    double key
    long long cnt[2]
    long long sub[2]
    long long u2
    int left
    int right
    unsigned long long prio


cdef struct Walk:
    long long a         # A: positives above the current group
    long long b         # B: negatives above the current group
    double ap           # sum over groups of p (A + p) / (A + p + B + q)


cdef class AUCCounter:
    """Exact AUC of every (score, class) added and not removed; expected O(log n) per call.

    Node 0 is a null sentinel whose counts stay zero, so the children of a leaf need no
    test. Freed nodes are kept on a free list (linked through ``left``) for reuse.
    """

    cdef Node* nodes
    cdef int cap
    cdef int used
    cdef int free_head
    cdef int root
    cdef unsigned long long rng
    cdef long long n[2]
    cdef long long _u2

    def __cinit__(self, *args, **kwargs):
        self.cap = 64
        self.nodes = <Node*> malloc(self.cap * sizeof(Node))
        if self.nodes == NULL:
            raise MemoryError()
        self.nodes[0].key = 0.0
        self.nodes[0].cnt[0] = 0
        self.nodes[0].cnt[1] = 0
        self.nodes[0].sub[0] = 0
        self.nodes[0].sub[1] = 0
        self.nodes[0].u2 = 0
        self.nodes[0].left = 0
        self.nodes[0].right = 0
        self.nodes[0].prio = 0
        self.used = 1
        self.free_head = 0
        self.root = 0
        self.rng = 0x9E3779B97F4A7C15ULL
        self.n[0] = 0
        self.n[1] = 0
        self._u2 = 0

    def __dealloc__(self):
        free(self.nodes)

    # -- tree primitives -------------------------------------------------------------------
    cdef inline void _pull(self, int t) noexcept nogil:
        cdef Node* a = &self.nodes[t]
        cdef Node* lo = &self.nodes[a.left]
        cdef Node* hi = &self.nodes[a.right]
        a.sub[0] = a.cnt[0] + lo.sub[0] + hi.sub[0]
        a.sub[1] = a.cnt[1] + lo.sub[1] + hi.sub[1]
        a.u2 = (lo.u2 + hi.u2 + a.cnt[1] * a.cnt[0]                                      # u2
                + 2 * (a.cnt[1] * lo.sub[0] + hi.sub[1] * a.cnt[0] + hi.sub[1] * lo.sub[0]))

    cdef void _split(self, int t, double x, int* l, int* r) noexcept nogil:
        """Split subtree t into keys < x (l) and keys > x (r); x is not a key of t."""
        if t == 0:
            l[0] = 0
            r[0] = 0
            return
        if self.nodes[t].key < x:
            self._split(self.nodes[t].right, x, &self.nodes[t].right, r)
            l[0] = t
        else:
            self._split(self.nodes[t].left, x, l, &self.nodes[t].left)
            r[0] = t
        self._pull(t)

    cdef int _merge(self, int a, int b) noexcept nogil:
        """Join two treaps, every key of a below every key of b."""
        if a == 0:
            return b
        if b == 0:
            return a
        if self.nodes[a].prio > self.nodes[b].prio:
            self.nodes[a].right = self._merge(self.nodes[a].right, b)
            self._pull(a)
            return a
        self.nodes[b].left = self._merge(a, self.nodes[b].left)
        self._pull(b)
        return b

    cdef int _new_node(self, double x) except -1:
        cdef int k
        cdef Node* grown
        cdef unsigned long long z
        if self.free_head != 0:
            k = self.free_head
            self.free_head = self.nodes[k].left
        else:
            if self.used == self.cap:
                grown = <Node*> realloc(self.nodes, 2 * self.cap * sizeof(Node))
                if grown == NULL:
                    raise MemoryError()
                self.nodes = grown
                self.cap *= 2
            k = self.used
            self.used += 1
        # splitmix64: a deterministic stream of priorities
        self.rng += 0x9E3779B97F4A7C15ULL
        z = self.rng
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
        self.nodes[k].key = x
        self.nodes[k].cnt[0] = 0
        self.nodes[k].cnt[1] = 0
        self.nodes[k].sub[0] = 0
        self.nodes[k].sub[1] = 0
        self.nodes[k].u2 = 0
        self.nodes[k].left = 0
        self.nodes[k].right = 0
        self.nodes[k].prio = (z ^ (z >> 31)) | 1ULL
        return k

    cdef int _count(self, double x, long long* less, long long* equal) noexcept nogil:
        """Per class, the held elements with score < x and = x; returns the node of x or 0."""
        cdef int t = self.root
        cdef Node* a
        less[0] = 0
        less[1] = 0
        equal[0] = 0
        equal[1] = 0
        while t != 0:
            a = &self.nodes[t]
            if x < a.key:
                t = a.left
            elif x > a.key:
                less[0] += self.nodes[a.left].sub[0] + a.cnt[0]
                less[1] += self.nodes[a.left].sub[1] + a.cnt[1]
                t = a.right
            else:
                less[0] += self.nodes[a.left].sub[0]
                less[1] += self.nodes[a.left].sub[1]
                equal[0] = a.cnt[0]
                equal[1] = a.cnt[1]
                return t
        return 0

    cdef inline long long _credit(self, int c, long long* less, long long* equal) noexcept nogil:
        """Twice the U-pairs an element of class c forms with the held opposite class."""
        if c == 1:
            return 2 * less[0] + equal[0]                                     # credit +
        return 2 * (self.n[1] - less[1] - equal[1]) + equal[1]                # credit -

    cdef void _bump(self, int t, double x, int c) noexcept nogil:
        """One more element of class c at the existing key x of subtree t; re-pull the path."""
        if x < self.nodes[t].key:
            self._bump(self.nodes[t].left, x, c)
        elif x > self.nodes[t].key:
            self._bump(self.nodes[t].right, x, c)
        else:
            self.nodes[t].cnt[c] += 1
        self._pull(t)

    cdef int _place(self, int t, int k) noexcept nogil:
        """Subtree t with the new node k (a key not in t) put in; returns the subtree's root."""
        cdef double x = self.nodes[k].key
        if t == 0:
            return k
        if self.nodes[k].prio > self.nodes[t].prio:
            self._split(t, x, &self.nodes[k].left, &self.nodes[k].right)
            self._pull(k)
            return k
        if x < self.nodes[t].key:
            self.nodes[t].left = self._place(self.nodes[t].left, k)
        else:
            self.nodes[t].right = self._place(self.nodes[t].right, k)
        self._pull(t)
        return t

    cdef int _drop(self, int t, double x, int c) noexcept nogil:
        """One element of class c fewer at the held key x of subtree t (a node left empty is
        merged away and freed); returns the subtree's new root."""
        cdef int m
        if x < self.nodes[t].key:
            self.nodes[t].left = self._drop(self.nodes[t].left, x, c)
        elif x > self.nodes[t].key:
            self.nodes[t].right = self._drop(self.nodes[t].right, x, c)
        else:
            self.nodes[t].cnt[c] -= 1
            if self.nodes[t].cnt[0] == 0 and self.nodes[t].cnt[1] == 0:
                m = self._merge(self.nodes[t].left, self.nodes[t].right)
                self.nodes[t].left = self.free_head
                self.free_head = t
                return m
        self._pull(t)
        return t

    cdef int _insert(self, double x, int c) except -1:
        cdef long long less[2]
        cdef long long equal[2]
        cdef int found = self._count(x, less, equal)
        cdef int k
        self._u2 += self._credit(c, less, equal)
        self.n[c] += 1
        if found != 0:
            self._bump(self.root, x, c)
            return 0
        k = self._new_node(x)  # may move self.nodes: take no pointer into it before this
        self.nodes[k].cnt[c] = 1
        self._pull(k)
        self.root = self._place(self.root, k)
        return 0

    cdef int _delete(self, double x, int c) except -1:
        cdef long long less[2]
        cdef long long equal[2]
        cdef int found = self._count(x, less, equal)
        if found == 0 or equal[c] == 0:
            raise KeyError(f"no element of class {c} with score {x!r} is held")
        self.n[c] -= 1
        self._u2 -= self._credit(c, less, equal)
        self.root = self._drop(self.root, x, c)
        return 0

    # -- Python-visible methods ----------------------------------------------------------
    def add(self, double x, bint positive):
        """Add one element: score ``x`` (finite; not checked) of the positive class or not."""
        self._insert(x, 1 if positive else 0)

    def remove(self, double x, bint positive):
        """Remove one held element; KeyError if no such element is held."""
        self._delete(x, 1 if positive else 0)

    def add_many(self, const double[::1] x, const unsigned char[::1] positive):
        """Add ``x[i]`` with class ``positive[i] != 0`` for every i, in order."""
        cdef Py_ssize_t i
        for i in range(x.shape[0]):
            self._insert(x[i], 1 if positive[i] else 0)

    def get(self):
        """U / (n_pos n_neg), or NaN while one class is absent."""
        if self.n[0] == 0 or self.n[1] == 0:
            return float("nan")
        return self._u2 / (2.0 * <double> self.n[0] * <double> self.n[1])

    @property
    def u2(self):
        """Twice the Mann-Whitney U of the held elements (an exact integer)."""
        return self._u2

    @property
    def n_pos(self):
        return self.n[1]

    @property
    def n_neg(self):
        return self.n[0]

    cdef void _walk_ap(self, int t, Walk* st) noexcept nogil:
        """Every group of subtree t from the largest score down."""
        cdef long long p
        if t == 0:
            return
        self._walk_ap(self.nodes[t].right, st)
        p = self.nodes[t].cnt[1]
        st.a += p
        st.b += self.nodes[t].cnt[0]
        if p > 0:
            st.ap += p * (<double> st.a / <double> (st.a + st.b))            # AP
        self._walk_ap(self.nodes[t].left, st)

    def partial_auc(self, double max_fpr):
        """McClish-standardized area under the ROC curve left of ``max_fpr`` in (0, 1] (not
        checked), or NaN while one class is absent; an expected O(log n) descent."""
        cdef double m = max_fpr
        cdef double cut, w, tail2 = 0.0, pa
        cdef long long a = 0, b = 0, u2 = 0     # A, B and U2 of the elements above subtree t
        cdef long long a_hi, b_hi, u2_hi, p, q
        cdef int t = self.root
        cdef Node* nd
        cdef Node* hi
        if self.n[0] == 0 or self.n[1] == 0:
            return float("nan")
        cut = m * <double> self.n[0]                                          # L
        while t != 0:
            nd = &self.nodes[t]
            hi = &self.nodes[nd.right]
            # above t's own key: everything above the subtree, and its right subtree
            a_hi = a + hi.sub[1]
            b_hi = b + hi.sub[0]
            u2_hi = u2 + hi.u2 + 2 * a * hi.sub[0]
            if b_hi > cut:                      # the cut crosses a group right of t
                t = nd.right
                continue
            p = nd.cnt[1]
            q = nd.cnt[0]
            if b_hi + q > cut:                  # the cut crosses t's group
                w = cut - b_hi
                tail2 = w * (2.0 * a_hi + p * w / q)                          # segment, cut
                u2 = u2_hi
                break
            a = a_hi + p                        # t's group lies wholly left of the cut
            b = b_hi + q
            u2 = u2_hi + p * q + 2 * a_hi * q
            t = nd.left
        pa = (<double> u2 + tail2) / (2.0 * <double> self.n[0] * <double> self.n[1])
        return 0.5 * (1.0 + (pa - 0.5 * m * m) / (m - 0.5 * m * m))          # McClish

    @property
    def tree_u2(self):
        """U2 of the whole treap from the node aggregates (equals ``u2``); for tests."""
        return self.nodes[self.root].u2

    def average_precision(self):
        """Average precision of the held elements, or NaN with no positive; O(distinct scores)."""
        cdef Walk st
        if self.n[1] == 0:
            return float("nan")
        st.a = 0
        st.b = 0
        st.ap = 0.0
        self._walk_ap(self.root, &st)
        return st.ap / <double> self.n[1]

    def depth(self):
        """Height of the treap (0 when empty); for tests and benchmarks."""
        return self._height(self.root)

    cdef int _height(self, int t):
        if t == 0:
            return 0
        return 1 + max(self._height(self.nodes[t].left), self._height(self.nodes[t].right))

    def items(self):
        """The distinct held scores in increasing order with their (negative, positive) counts."""
        keys, counts = [], []
        self._inorder(self.root, keys, counts)
        return np.asarray(keys, dtype=np.float64), np.asarray(counts, dtype=np.int64).reshape(-1, 2)

    cdef void _inorder(self, int t, list keys, list counts):
        if t == 0:
            return
        self._inorder(self.nodes[t].left, keys, counts)
        keys.append(self.nodes[t].key)
        counts.append((self.nodes[t].cnt[0], self.nodes[t].cnt[1]))
        self._inorder(self.nodes[t].right, keys, counts)

    def __reduce__(self):
        keys, counts = self.items()
        return (_rebuild_counter, (keys, counts))


def _rebuild_counter(keys, counts):
    core = AUCCounter()
    _refill(core, keys, counts)
    return core


cdef void _refill(AUCCounter core, keys, counts):
    cdef Py_ssize_t i
    cdef long long _j
    for i in range(len(keys)):
        for _j in range(counts[i, 0]):
            core._insert(keys[i], 0)
        for _j in range(counts[i, 1]):
            core._insert(keys[i], 1)


cdef class RollingAUCCounter(AUCCounter):
    """Exact AUC of the last ``window`` elements added: a ring buffer over an AUCCounter.

    Adding to a full window first removes the oldest element, so each call is two
    expected O(log window) walks.
    """

    cdef double* ring_x
    cdef unsigned char* ring_c
    cdef Py_ssize_t _window
    cdef Py_ssize_t head
    cdef Py_ssize_t size

    def __cinit__(self, Py_ssize_t window, *args, **kwargs):
        if window < 1:
            raise ValueError(f"window must be >= 1, got {window}")
        self._window = window
        self.ring_x = <double*> malloc(window * sizeof(double))
        self.ring_c = <unsigned char*> malloc(window * sizeof(unsigned char))
        if self.ring_x == NULL or self.ring_c == NULL:
            raise MemoryError()
        self.head = 0
        self.size = 0

    def __dealloc__(self):
        free(self.ring_x)
        free(self.ring_c)

    cdef int _push(self, double x, int c) except -1:
        cdef Py_ssize_t slot
        if self.size == self._window:
            self._delete(self.ring_x[self.head], self.ring_c[self.head])
            slot = self.head
            self.head = (self.head + 1) % self._window
        else:
            slot = (self.head + self.size) % self._window
            self.size += 1
        self.ring_x[slot] = x
        self.ring_c[slot] = c
        self._insert(x, c)
        return 0

    def add(self, double x, bint positive):
        """Add one element, dropping the oldest one when the window is full."""
        self._push(x, 1 if positive else 0)

    def add_many(self, const double[::1] x, const unsigned char[::1] positive):
        """Add ``x[i]`` with class ``positive[i] != 0`` for every i, in order."""
        cdef Py_ssize_t i
        for i in range(x.shape[0]):
            self._push(x[i], 1 if positive[i] else 0)

    def remove(self, double x, bint positive):
        raise TypeError("a rolling window removes its oldest element itself")

    @property
    def window(self):
        return self._window

    def held(self):
        """The held (score, positive) pairs, oldest first."""
        idx = [(self.head + i) % self._window for i in range(self.size)]
        xs = np.asarray([self.ring_x[i] for i in idx], dtype=np.float64)
        cs = np.asarray([self.ring_c[i] for i in idx], dtype=np.uint8)
        return xs, cs

    def __reduce__(self):
        xs, cs = self.held()
        return (_rebuild_rolling, (self._window, xs, cs))


def _rebuild_rolling(window, xs, cs):
    core = RollingAUCCounter(window)
    core.add_many(np.ascontiguousarray(xs, dtype=np.float64),
                  np.ascontiguousarray(cs, dtype=np.uint8))
    return core
