"""The linear online baselines of the paper's Table 2, plus SOLAM.

* :class:`Perceptron` and :class:`PAI` -- accuracy-oriented online classifiers;
* :class:`OAM` -- online AUC maximization with reservoir-sampled buffers
  (``update='seq'`` is OAM_seq, ``update='gra'`` is OAM_gra);
* :class:`OLUBAUC` -- online learning on a univariate bound of the AUC risk
  (a reconstruction, see its docstring);
* :class:`SOLAM` -- stochastic online AUC maximization, O(p) time and memory per round;
* :class:`AdaOAM` -- one-pass square-loss AUC gradient with AdaGrad steps, O(p^2).

All share the API of :class:`sosl.OAUCM`: one online pass per ``fit``/``partial_fit``
in the order given, ``classes_[1]`` positive, transactional state, pickling mid-stream.
Each runs a typed kernel of :mod:`sosl._core._baselines` beside its NumPy reference in
:mod:`sosl._core._baselines_ref`.

Sparse input: Perceptron, PA-I, OL-UBAUC, SOLAM and OAM accept scipy.sparse matrices in
``fit``, ``partial_fit``, ``decision_function`` and ``learn_one`` (converted once to CSR)
and learn the same model as from the same rows given dense (up to rounding, tested at
rtol 1e-12: tests/test_baselines.py::test_sparse_input_equals_dense). Perceptron, PA-I,
OL-UBAUC and SOLAM then cost O(nnz(x_t)) per row instead
of O(p): their weights are held as a scale times a vector during a pass, so the shrinkage
of OL-UBAUC and the projection of SOLAM multiply one number, and SOLAM's average of the
iterates is updated only on the row's columns. A call still does O(p) work once (copying
the state so that a failed call leaves the model unchanged, and forming ``w_``). OAM,
first called on sparse rows, keeps its buffers as sparse rows and costs
O(buffer_size x nnz) per row and no O(p) work per call (see its Notes). AdaOAM (O(p^2)
state) accepts sparse input a densified block at a time.

Rows so large that a score w.x, a squared norm or a scalar of the state is not finite in
double precision raise ``FloatingPointError`` (in training and in scoring) and leave the
model as it was.

``learn_one`` on a fitted model plays the row without the general path's re-validation:
OAM (dense buffers), SOLAM and AdaOAM run a typed round on the live state
(``oam_one``, ``solam_one``, ``adaoam_one`` of :mod:`sosl._core._baselines`: the pass's
round on one row, saving the O(p) values it writes and restoring them if one comes out
non-finite; AdaOAM's O(p^2) covariance update is made last, once it cannot overflow, so
nothing O(p^2) is copied); the other learners, and CSR rows, play the round on copies of
the state. Either way the result equals ``partial_fit`` on the row bit for bit.
"""

from ._baseline_core import _LinearBaseline, _RowLocalBaseline  # noqa: F401 (tests reach them here)
from ._baselines_first_order import PAI, Perceptron
from ._baselines_moments import OLUBAUC, SOLAM, AdaOAM
from ._baselines_oam import OAM

__all__ = ["Perceptron", "PAI", "OAM", "OLUBAUC", "SOLAM", "AdaOAM"]
