# Stub of the compiled module _koil: the signatures of its module-level functions,
# written from the .pyx by tools/write_stubs.py (array arguments as NumPy arrays of
# the memoryview's dtype; return values and the other names typed as Any).
from typing import Any

import numpy as np
import numpy.typing as npt

def koil_pass(
    X: npt.NDArray[np.float64], s: npt.NDArray[np.float64], order: npt.NDArray[np.intp],
    U: npt.NDArray[np.float64], buf: npt.NDArray[np.float64], alpha_mv: npt.NDArray[np.float64],
    gram: npt.NDArray[np.float64], f_mv: npt.NDArray[np.float64], n_buf: npt.NDArray[np.int64],
    n_seen: npt.NDArray[np.int64], head: npt.NDArray[np.int64], budgets: npt.NDArray[np.int64],
    t0: int, eta: float, C: float, k_nn: int, policy: int, kern: Any, work: npt.NDArray[np.float64],
) -> Any: ...
def koil_pass_csr(
    data: npt.NDArray[np.float64], indices: npt.NDArray[np.int32], indptr: npt.NDArray[np.int32],
    s: npt.NDArray[np.float64], order: npt.NDArray[np.intp], U: npt.NDArray[np.float64],
    buf_ind: npt.NDArray[np.int32], buf_val: npt.NDArray[np.float64],
    buf_nnz: npt.NDArray[np.int32], alpha_mv: npt.NDArray[np.float64],
    gram: npt.NDArray[np.float64], f_mv: npt.NDArray[np.float64], n_buf: npt.NDArray[np.int64],
    n_seen: npt.NDArray[np.int64], head: npt.NDArray[np.int64], budgets: npt.NDArray[np.int64],
    t0: int, eta: float, C: float, k_nn: int, policy: int, kern: Any, work: npt.NDArray[np.float64],
) -> Any: ...
def philox_uniforms(seed: int, t0: int, m: int) -> Any: ...
def koil_midpoint(f: npt.NDArray[np.float64], n_buf: npt.NDArray[np.int64], off: int) -> Any: ...
def __getattr__(name: str) -> Any: ...
