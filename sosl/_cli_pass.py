"""The command line's passes over a stream: progressive validation and its report.

:class:`_Pass` runs any estimator (test-then-train through its public calls, or
FTRLAUC's typed progressive pass); :class:`_EnginePass` runs the default learner's engine
(:mod:`sosl._engine`) on CSR arrays with the same rows, order, report lines and ``-p``
bytes; :class:`_Progress` keeps the prequential figures and prints the report.
"""

import time
from collections import deque
from typing import Any

import numpy as np

from ._engine import signs
from ._reader import csr_arrays

__all__ = ["_Progress", "_Pass", "_EnginePass", "_lines"]


class _Progress:
    """The prequential figures (AUC and average precision) and the report lines.

    By default in constant memory (:class:`sosl.metrics.BinnedAUC`, whose error bound the
    final line prints); ``exact`` keeps every score (the exact streaming metrics).
    """

    def __init__(self, every, out, exact=False):
        from .metrics import BinnedAUC, StreamingAUC, StreamingAveragePrecision

        self.every = every
        self.out = out
        self.exact = exact
        self.auc: Any
        self.ap: Any
        if exact:
            self.auc, self.ap = StreamingAUC(), StreamingAveragePrecision()
        else:
            self.auc = self.ap = BinnedAUC()
        self.rows = self.scored = 0
        self.next_report = every if every else None
        self.start = time.process_time()
        self.header = False
        self.reported = 0
        self.held_y, self.held_s = [], []

    def add_many(self, labels, scores):
        self.auc.update_many(labels, scores)
        if self.exact:
            self.ap.update_many(labels, scores)
        self.scored += len(labels)

    def add_one(self, label, score):
        """One row's pair, held until the next report (one metric update for many rows)."""
        self.held_y.append(label)
        self.held_s.append(score)
        if len(self.held_y) >= 4096:
            self.flush()

    def flush(self):
        if self.held_y:
            self.add_many(np.array(self.held_y, dtype=np.int64), np.array(self.held_s))
            self.held_y, self.held_s = [], []

    def figures(self):
        self.flush()
        ap = self.ap.get() if self.exact else self.ap.average_precision()
        return self.auc.get(), ap

    def tick(self, rows):
        self.rows += rows
        if self.next_report is not None and self.rows >= self.next_report:
            self.line()
            while self.next_report <= self.rows:
                self.next_report += self.every

    def line(self, final=False):
        self.reported = self.rows
        if self.out is None:
            return
        if not self.header:
            print(f"{'rows':>10} {'scored':>10} {'auc':>8} {'avg_prec':>8} {'cpu_s':>8} "
                  f"{'rows/s':>10}", file=self.out)
            self.header = True
        cpu = time.process_time() - self.start
        rate = self.rows / cpu if cpu > 0 else float("inf")
        auc, ap = self.figures()
        tail = ""
        if final:
            tail = "  (final" + ("" if self.exact else
                                 f"; auc binned, within {self.auc.error_bound():.1e}") + ")"
        print(f"{self.rows:>10} {self.scored:>10} {auc:>8.4f} {ap:>8.4f} {cpu:>8.2f} "
              f"{rate:>10.0f}" + tail, file=self.out)
        self.out.flush()


class _Pass:
    """Test-then-train over the rows of a stream, in blocks of ``block`` rows.

    With ``block == 1`` each row is scored, then learned (``score_one`` / ``learn_one``);
    a learner with a typed progressive pass (``_learn_block_prequential``, FTRLAUC) does
    the same for a whole chunk of rows in one call, as CSR rows (the same scores and model
    bit for bit as the per-row calls on them; weighted rows and ``delay`` keep those).
    With a larger block, each block of rows is scored by the model as it stood before the
    block (``decision_function``), then learned by one ``partial_fit``: the model is the
    same (sosl's learners give the same state for any split of a stream into calls), the
    progressive scores are those of a model up to ``block - 1`` rows older. Blocks run
    across the chunks the reader hands in, so the result does not depend on ``--chunk``.
    With ``learn=False`` (``-t``) the rows are scored only. With ``delay=D`` (row by row)
    row i is learned only once row i + D has been scored, as when labels arrive late; the
    rows still waiting at the end are learned then.
    """

    def __init__(self, model, block, progress, preds=None, learn=True, delay=0):
        self.model, self.block, self.progress = model, block, progress
        self.preds, self.learn, self.delay = preds, learn, delay
        self.waiting: deque = deque()
        self.pending = []
        self.classes = set()

    def feed(self, X, y, w):
        self.classes.update(np.unique(y).tolist())
        if self.block == 1:
            self._rows(X, y, w)
            return
        if isinstance(X, np.ndarray) and hasattr(self.model, "_learn_block_prequential"):
            # a learner whose typed pass takes CSR rows scores them as CSR rows, in block
            # mode as row by row (a dense product may round differently)
            import scipy.sparse as sp

            X = sp.csr_matrix(X)
        if self.pending:
            self.pending.append((X, y, w))
            X, y, w = _stack(self.pending)
            self.pending = []
        n = X.shape[0]
        lo = 0
        if self.learn and not hasattr(self.model, "classes_"):
            self._first(X, y, w)
            lo = 1
        full = lo + (n - lo) // self.block * self.block
        for a in range(lo, full, self.block):
            self._block(X[a:a + self.block], y[a:a + self.block],
                        None if w is None else w[a:a + self.block])
        if full < n:
            self.pending = [(X[full:], y[full:], None if w is None else w[full:])]

    def close(self):
        while self.waiting:                # --delay: the rows not learned yet, in order
            self._learn_row(*self.waiting.popleft())
        if self.pending:
            X, y, w = _stack(self.pending)
            self.pending = []
            self._block(X, y, w)

    def _first(self, X, y, w):
        if w is None:
            row = X[0:1] if not isinstance(X, np.ndarray) else X[0]
            if isinstance(X, np.ndarray) and hasattr(self.model, "_learn_block_prequential"):
                # the typed pass takes CSR rows: the first row's score is then summed as
                # the later ones' are
                import scipy.sparse as sp

                row = sp.csr_matrix(X[0:1])
            self.model.learn_one(row, int(y[0]), classes=[0, 1])
        else:
            self.model.partial_fit(X[0:1], y[0:1], classes=[0, 1], sample_weight=w[0:1])
        if self.preds is not None:
            self.preds.write("0\n")
        self.progress.tick(1)

    def _block(self, X, y, w):
        s = np.ravel(self.model.decision_function(X))
        self.progress.add_many(y, s)
        if self.preds is not None:
            self.preds.write(_lines(s))
        if self.learn:
            self.model.partial_fit(X, y, sample_weight=w)
        self.progress.tick(X.shape[0])

    #: False: every learner runs row by row (the reference the typed path must equal)
    typed_rows = True

    def _rows(self, X, y, w):
        model, progress, preds = self.model, self.progress, self.preds
        dense = isinstance(X, np.ndarray)
        start = 0
        if self.learn and not hasattr(model, "classes_"):
            self._first(X, y, w)
            start = 1
        if self.learn and not self.delay and w is None and hasattr(
                model, "_learn_block_prequential"):
            if dense:                    # CSR rows: the typed pass scores them bit for bit
                import scipy.sparse as sp  # as score_one does (a dense product may round
                X = sp.csr_matrix(X)       # differently)
                dense = False
            if self.typed_rows:
                self._typed_rows(X, y, start)
                return
        for i in range(start, X.shape[0]):
            row = X[i] if dense else X[i:i + 1]
            s = model.score_one(row)
            progress.add_one(int(y[i]), s)
            if preds is not None:
                preds.write(f"{s:.10g}\n")
            if self.learn:
                if self.delay:
                    self.waiting.append((X[i:i + 1], y[i:i + 1],
                                         None if w is None else w[i:i + 1]))
                    if len(self.waiting) > self.delay:
                        self._learn_row(*self.waiting.popleft())
                else:
                    self._learn_row(X[i:i + 1], y[i:i + 1], None if w is None else w[i:i + 1])
            progress.tick(1)

    def _typed_rows(self, X, y, lo):
        """Rows ``lo:`` scored, then learned, each in turn, in one typed pass per run of
        rows up to the next progress line (so the lines fall on the same rows)."""
        model, progress, preds = self.model, self.progress, self.preds
        n = X.shape[0]
        while lo < n:
            hi = n
            if progress.next_report is not None:
                hi = min(n, lo + max(1, progress.next_report - progress.rows))
            s = model._learn_block_prequential(X[lo:hi], y[lo:hi])
            progress.add_many(np.asarray(y[lo:hi], dtype=np.int64), s)
            if preds is not None:
                preds.write(_lines(s))
            progress.tick(hi - lo)
            lo = hi

    def _learn_row(self, X, y, w):
        if w is not None:
            self.model.partial_fit(X, y, sample_weight=w)
        else:
            self.model.learn_one(X[0] if isinstance(X, np.ndarray) else X, int(y[0]))


class _EnginePass:
    """:class:`_Pass` for the engine (:mod:`sosl._engine`): the same rows scored and
    learned in the same order, the same progress lines, ``-p`` bytes and model, with the
    chunks as CSR arrays and no estimator (``--block 1``: one typed pass per run of rows up
    to the next progress line; a larger block: scored, then learned, block by block across
    the chunks)."""

    def __init__(self, engine, spec, block, progress, preds=None, learn=True):
        self.engine, self.spec, self.block, self.progress = engine, spec, block, progress
        self.preds, self.learn = preds, learn
        self.pending = []
        self.classes = set()

    def feed(self, X, y, w):
        self.classes.update(np.unique(y).tolist())
        data, indices, indptr = csr_arrays(X)
        engine = self.engine
        if self.learn:
            engine.reserve(self.spec.columns)
        s = signs(y)
        lo = 0
        if self.learn and not engine.fitted:
            engine.first(data, indices, indptr, s)
            if self.preds is not None:
                self.preds.write("0\n")
            self.progress.tick(1)
            lo = 1
        if self.block == 1:
            self._rows(data, indices, indptr, y, s, lo)
            return
        n = indptr.shape[0] - 1
        if lo < n:
            self.pending.append(_slice(data, indices, indptr, y, lo, n))
        while sum(p[3].shape[0] for p in self.pending) >= self.block:
            self._block(*self._take(self.block))

    def close(self):
        if self.pending:
            self._block(*self._take(None))

    def _take(self, k):
        """The first ``k`` pending rows (all if None), as one CSR block."""
        data, indices, indptr, y = _concat(self.pending)
        n = indptr.shape[0] - 1
        k = n if k is None else k
        self.pending = [_slice(data, indices, indptr, y, k, n)] if k < n else []
        return _slice(data, indices, indptr, y, 0, k)

    def _block(self, data, indices, indptr, y):
        f = self.engine.scores(data, indices, indptr)
        self.progress.add_many(y, f)
        if self.preds is not None:
            self.preds.write(_lines(f))
        if self.learn:
            self.engine.learn(data, indices, indptr, signs(y), f)
        self.progress.tick(y.shape[0])

    def _rows(self, data, indices, indptr, y, s, lo):
        """Rows ``lo:`` scored, then learned, each in turn, in one typed pass per run of
        rows up to the next progress line (so the lines fall on the same rows)."""
        engine, progress, preds = self.engine, self.progress, self.preds
        n = indptr.shape[0] - 1
        while lo < n:
            hi = n
            if progress.next_report is not None:
                hi = min(n, lo + max(1, progress.next_report - progress.rows))
            if self.learn:
                f = engine.prequential(data, indices, indptr, s, lo, hi)
            else:
                a, b = indptr[lo], indptr[hi]
                f = engine.scores(data[a:b], indices[a:b], indptr[lo:hi + 1] - a)
            progress.add_many(y[lo:hi], f)
            if preds is not None:
                preds.write(_lines(f))
            progress.tick(hi - lo)
            lo = hi


def _lines(scores):
    """One line a score, ``%.10g``, as ``-p`` writes them."""
    from ._core._reader import format_scores

    return format_scores(np.ascontiguousarray(scores, dtype=np.float64))


def _slice(data, indices, indptr, y, lo, hi):
    a, b = indptr[lo], indptr[hi]
    return data[a:b], indices[a:b], indptr[lo:hi + 1] - a, y[lo:hi]


def _concat(parts):
    if len(parts) == 1:
        return parts[0]
    ptrs, offset = [parts[0][2]], parts[0][2][-1]
    for p in parts[1:]:
        ptrs.append(p[2][1:] + offset)
        offset += p[2][-1]
    return (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]),
            np.concatenate(ptrs), np.concatenate([p[3] for p in parts]))


def _stack(parts):
    import scipy.sparse as sp

    Xs = [p[0] for p in parts]
    X = np.concatenate(Xs) if isinstance(Xs[0], np.ndarray) else sp.vstack(Xs, format="csr")
    y = np.concatenate([p[1] for p in parts])
    ws = [p[2] for p in parts]
    w = None if all(v is None for v in ws) else np.concatenate(
        [np.ones(p[1].shape[0]) if v is None else v for p, v in zip(parts, ws)])
    return X, y, w
