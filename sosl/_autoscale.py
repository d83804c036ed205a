"""The "auto" step and regularization defaults: a row scale read from the first row.

A first-order or second-order linear learner whose features are all multiplied by c needs
weights divided by c to give the same scores; its step size or its regularization must then
change with c too, so a fixed default suits one scale of the features only (raw word counts
and l2-normalised rows differ by one or two orders of magnitude). The ``"auto"`` value of a
scale-dependent hyper-parameter reads the scale from the data instead: the l2 norm of the
first row of a fit that holds a non-zero value (in the first batch: the first ``fit`` or
``partial_fit`` call, or the first ``learn_one`` row),

    s = max(1, ||x_first||_2)          (1 when every row of the first batch is zero),

frozen with the state in the layout (key ``"row_scale"``), and each learner maps it to
the numeric values its paper's algorithm runs with, chosen so that multiplying every
feature by c multiplies s by c and leaves the scores' order unchanged. An explicit number
bypasses all of this: the learner then runs as before, bit for bit.

The floor at 1: one row is a noisy estimate where rows have few features (a standardised
row of two features may have norm 0.25), and the numbers behind "auto" are those that suit
rows of norm about 1 (l2-normalised text, a few standardised features); rows larger than
that (counts, many binary features) are what defeats a fixed step. So the invariance holds
for rows of norm at least 1 (multiplying the features by c >= 1 then changes no score's
order); smaller rows run with the unit-scale numbers.
One row, rather than a statistic of the whole first batch, so that ``fit`` equals
``partial_fit`` over chunks of any size and ``learn_one`` row by row (a corpus whose row
norms spread widely gets a scale within that spread). The sum of squares is exactly
rounded (``math.fsum`` of the stored values), so a dense row and its sparse form give the
same s. Cost: O(k) for the k values of that row, once per fit.
"""

import math

import numpy as np

__all__ = ["row_scale", "csr_row_scale", "RowScaleMixin"]


def row_scale(X):
    """The l2 norm of the first row of X with a non-zero value (exactly rounded sum of
    squares), floored at 1.0 (also the value when there is no such row); X validated: a
    float array or a scipy sparse matrix."""
    # imported here: the command line's engine runs without SciPy
    import scipy.sparse as sp

    if sp.issparse(X):
        X = sp.csr_matrix(X)
        return csr_row_scale(X.data, X.indptr)
    for i in range(X.shape[0]):
        v = np.asarray(X[i])
        v = v[v != 0]
        if v.shape[0]:
            return _norm(v)
    return 1.0


def csr_row_scale(data, indptr):
    """:func:`row_scale` of the CSR rows with values ``data`` and row pointers ``indptr``
    (NumPy only)."""
    for i in range(indptr.shape[0] - 1):
        v = data[indptr[i]:indptr[i + 1]]
        v = v[v != 0]
        if v.shape[0]:
            return _norm(v)
    return 1.0


def _norm(v):
    s = math.sqrt(math.fsum((v * v).tolist()))
    return s if s > 1.0 and math.isfinite(s) else 1.0


class RowScaleMixin:
    """Freezes the row scale of the first fitted row in the layout when ``_auto_scaled()``.

    A subclass defines ``_auto_scaled()`` (whether one of its hyper-parameters is
    ``"auto"``) and reads the frozen scale with ``_row_scale()``; its ``_layout()`` adds
    ``self._scale_layout()``.
    """

    def _auto_scaled(self):  # pragma: no cover - overridden
        raise NotImplementedError

    def _first_batch(self, X):
        super()._first_batch(X)  # type: ignore[misc]  # a mixin: the learner's base class has it
        self.__dict__.pop("_layout_", None)      # a new fit: its own first batch and layout
        if self._auto_scaled():
            self.__dict__["_first_row_scale"] = row_scale(X)

    def _scale_layout(self):
        """``{"row_scale": s}`` under "auto" (s frozen, or read from the current first
        batch before the layout is frozen), else ``{}``: an explicit value keeps the layout
        it always had. A model fitted with explicit values whose hyper-parameter is now
        "auto" has no scale to read: ValueError (the base's layout check calls this)."""
        if not self._auto_scaled():
            return {}
        lay = self.__dict__.get("_layout_")
        if lay is not None:
            if "row_scale" in lay:
                return {"row_scale": lay["row_scale"]}
            raise ValueError(
                f"{type(self).__name__}: a hyper-parameter changed to 'auto' since the model "
                "was fitted with explicit values; 'auto' reads its scale from the first batch "
                "of a fit. Set the numbers back, or call fit() to start over.")
        return {"row_scale": float(self.__dict__.get("_first_row_scale", 1.0))}

    def _layout_inputs(self, layout):
        """What the first batch read, from a stored layout (see :mod:`sosl.state`)."""
        if "row_scale" in layout:
            self.__dict__["_first_row_scale"] = float(layout["row_scale"])

    def _row_scale(self):
        """The frozen row scale s (1.0 before any fit)."""
        return float(self._scale_layout().get("row_scale", 1.0))

    @property
    def row_scale_(self):
        """The row scale the "auto" values were derived from (None with explicit values)."""
        lay = self.__dict__.get("_layout_")
        if lay is None:
            raise AttributeError("row_scale_ is set by the first fit")
        return lay.get("row_scale")
