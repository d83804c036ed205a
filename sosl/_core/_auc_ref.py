"""Reference of the streaming AUC core: sorted lists and bisection, one line per formula.

Same methods as :mod:`sosl._core._auc` (``add``, ``remove``, ``get``, ``u2``, ``n_pos``,
``n_neg``, ``partial_auc``, ``average_precision``), so the two can be compared exactly
(``u2`` is an integer; the two threshold metrics to rounding) after every update. The
positives and negatives are held in two sorted lists; the counts below and at a score come
from ``bisect``, and an insertion costs O(n) (list insertion) instead of the treap's
expected O(log n). See the typed core for the symbols.
"""

from bisect import bisect_left, bisect_right, insort
from collections import deque

__all__ = ["AUCCounter", "RollingAUCCounter"]


class AUCCounter:
    """Exact AUC of the held (score, class) pairs; ties between classes count one half."""

    def __init__(self):
        self._sorted = ([], [])  # scores of the negatives, of the positives
        self.u2 = 0

    @property
    def n_pos(self):
        return len(self._sorted[1])

    @property
    def n_neg(self):
        return len(self._sorted[0])

    def _below_and_at(self, c, x):
        """Held elements of class c with score < x and with score = x."""
        held = self._sorted[c]
        lo = bisect_left(held, x)
        return lo, bisect_right(held, x) - lo

    def _credit(self, c, x):
        """Twice the U-pairs an element (x, c) forms with the held opposite class."""
        if c == 1:
            less, equal = self._below_and_at(0, x)
            return 2 * less + equal                                           # credit +
        less, equal = self._below_and_at(1, x)
        return 2 * (self.n_pos - less - equal) + equal                        # credit -

    def add(self, x, positive):
        c = 1 if positive else 0
        self.u2 += self._credit(c, x)
        insort(self._sorted[c], x)

    def remove(self, x, positive):
        c = 1 if positive else 0
        held = self._sorted[c]
        i = bisect_left(held, x)
        if i == len(held) or held[i] != x:
            raise KeyError(f"no element of class {c} with score {x!r} is held")
        del held[i]
        self.u2 -= self._credit(c, x)

    def get(self):
        if self.n_pos == 0 or self.n_neg == 0:
            return float("nan")
        return self.u2 / (2.0 * self.n_neg * self.n_pos)

    def _groups_desc(self):
        """(p, q): positives and negatives at each distinct held score, largest score first."""
        for x in sorted(set(self._sorted[0]) | set(self._sorted[1]), reverse=True):
            yield self._below_and_at(1, x)[1], self._below_and_at(0, x)[1]

    @staticmethod
    def _segment2(a, p, q, w):
        """Twice the area (times P N) of the first w of q negatives of a group's ROC segment."""
        return w * (2 * a + p * w / q)                                        # segment

    @staticmethod
    def _mcclish(pa, m):
        return 0.5 * (1 + (pa - m * m / 2) / (m - m * m / 2))                # McClish

    def partial_auc(self, max_fpr):
        if self.n_pos == 0 or self.n_neg == 0:
            return float("nan")
        cut = max_fpr * self.n_neg  # L
        a = b = 0
        area2 = 0.0
        for p, q in self._groups_desc():
            if b >= cut:
                break
            if q > 0:
                area2 += self._segment2(a, p, q, min(q, cut - b))
            a, b = a + p, b + q
        return self._mcclish(area2 / (2.0 * self.n_pos * self.n_neg), max_fpr)

    @staticmethod
    def _precision(a, b, p, q):
        """Precision at a group's threshold, A and B counting the groups above it."""
        return (a + p) / (a + p + b + q)

    def average_precision(self):
        if self.n_pos == 0:
            return float("nan")
        a = b = 0
        total = 0.0
        for p, q in self._groups_desc():
            total += p / self.n_pos * self._precision(a, b, p, q)             # AP
            a, b = a + p, b + q
        return total


class RollingAUCCounter(AUCCounter):
    """Exact AUC of the last ``window`` pairs added."""

    def __init__(self, window):
        if window < 1:
            raise ValueError(f"window must be >= 1, got {window}")
        super().__init__()
        self.window = int(window)
        self._ring = deque()

    def add(self, x, positive):
        if len(self._ring) == self.window:
            AUCCounter.remove(self, *self._ring.popleft())
        self._ring.append((x, bool(positive)))
        AUCCounter.add(self, x, positive)
