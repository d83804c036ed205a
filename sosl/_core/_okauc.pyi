# Stub of the compiled module _okauc: the signatures of its module-level functions,
# written from the .pyx by tools/write_stubs.py (array arguments as NumPy arrays of
# the memoryview's dtype; return values and the other names typed as Any).
from typing import Any

import numpy as np
import numpy.typing as npt

def kernel_pass(
    X: npt.NDArray[np.float64], s: npt.NDArray[np.float64], order: npt.NDArray[np.intp],
    SV: npt.NDArray[np.float64], alpha: npt.NDArray[np.float64], G: npt.NDArray[np.float64],
    fb: npt.NDArray[np.float64], cap: npt.NDArray[np.int64], count: npt.NDArray[np.int64],
    head: npt.NDArray[np.int64], t0: int, step: Any, kern: Any, transfer: int,
    work: npt.NDArray[np.float64], trace: npt.NDArray[np.float64],
) -> Any: ...
def kernel_pass_csr(
    data: npt.NDArray[np.float64], indices: npt.NDArray[np.int32], indptr: npt.NDArray[np.int32],
    s: npt.NDArray[np.float64], order: npt.NDArray[np.intp], sv_ind: npt.NDArray[np.int32],
    sv_val: npt.NDArray[np.float64], sv_nnz: npt.NDArray[np.int32], alpha: npt.NDArray[np.float64],
    G: npt.NDArray[np.float64], fb: npt.NDArray[np.float64], cap: npt.NDArray[np.int64],
    count: npt.NDArray[np.int64], head: npt.NDArray[np.int64], t0: int, step: Any, kern: Any,
    transfer: int, work: npt.NDArray[np.float64], trace: npt.NDArray[np.float64],
) -> Any: ...
def __getattr__(name: str) -> Any: ...
