# Stub of the compiled module _polk: the signatures of its module-level functions,
# written from the .pyx by tools/write_stubs.py (array arguments as NumPy arrays of
# the memoryview's dtype; return values and the other names typed as Any).
from typing import Any

import numpy as np
import numpy.typing as npt

def polk_loss_derivative(z: float, y: float, loss: int) -> Any: ...
def polk_step_and_budget(t: int, step: Any, polk: Any) -> Any: ...
def polk_fast_pass(
    X: npt.NDArray[np.float64], s: npt.NDArray[np.float64], order: npt.NDArray[np.intp], r0: int,
    D: npt.NDArray[np.float64], w: npt.NDArray[np.float64], K: npt.NDArray[np.float64],
    G: npt.NDArray[np.float64], G2: npt.NDArray[np.float64], M: int, t_start: int, step: Any,
    polk: Any, kern: Any, orders: npt.NDArray[np.int64], errors: npt.NDArray[np.float64],
    budgets: npt.NDArray[np.float64], work: npt.NDArray[np.float64], iwork: npt.NDArray[np.intp],
) -> Any: ...
def polk_fast_pass_csr(
    data: npt.NDArray[np.float64], indices: npt.NDArray[np.int32], indptr: npt.NDArray[np.int32],
    s: npt.NDArray[np.float64], order: npt.NDArray[np.intp], r0: int, D_ind: npt.NDArray[np.int32],
    D_val: npt.NDArray[np.float64], D_nnz: npt.NDArray[np.int32], w: npt.NDArray[np.float64],
    K: npt.NDArray[np.float64], G: npt.NDArray[np.float64], G2: npt.NDArray[np.float64], M: int,
    t_start: int, step: Any, polk: Any, kern: Any, orders: npt.NDArray[np.int64],
    errors: npt.NDArray[np.float64], budgets: npt.NDArray[np.float64],
    work: npt.NDArray[np.float64], iwork: npt.NDArray[np.intp],
) -> Any: ...
def polk_sparse_kernel_row(
    D_ind: npt.NDArray[np.int32], D_val: npt.NDArray[np.float64], D_nnz: npt.NDArray[np.int32],
    M: int, xi: npt.NDArray[np.int32], xv: npt.NDArray[np.float64], kern: Any,
    out: npt.NDArray[np.float64],
) -> Any: ...
def __getattr__(name: str) -> Any: ...
