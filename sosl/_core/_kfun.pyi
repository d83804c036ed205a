# Stub of the compiled module _kfun: the signatures of its module-level functions,
# written from the .pyx by tools/write_stubs.py (array arguments as NumPy arrays of
# the memoryview's dtype; return values and the other names typed as Any).
from typing import Any

import numpy as np
import numpy.typing as npt

def set_scalar_path(scalar: bool) -> Any: ...
def exp_scaled(v: npt.NDArray[np.float64], c: float) -> Any: ...
def kernel_decision(
    X: npt.NDArray[np.float64], SV: npt.NDArray[np.float64], alpha: npt.NDArray[np.float64],
    kern: Any, out: npt.NDArray[np.float64], work: npt.NDArray[np.float64],
) -> Any: ...
def kernel_decision_csr(
    x_data: npt.NDArray[np.float64], x_ind: npt.NDArray[np.int32], x_ptr: npt.NDArray[np.int32],
    sv_data: npt.NDArray[np.float64], sv_ind: npt.NDArray[np.int32], sv_ptr: npt.NDArray[np.int32],
    alpha: npt.NDArray[np.float64], kern: Any, out: npt.NDArray[np.float64],
    work: npt.NDArray[np.float64],
) -> Any: ...
def kernel_decision_slots(
    x_data: npt.NDArray[np.float64], x_ind: npt.NDArray[np.int32], x_ptr: npt.NDArray[np.int32],
    ind: npt.NDArray[np.int32], val: npt.NDArray[np.float64], nnz: npt.NDArray[np.int32],
    slots: npt.NDArray[np.intp], alpha: npt.NDArray[np.float64], kern: Any,
    out: npt.NDArray[np.float64], work: npt.NDArray[np.float64],
) -> Any: ...
def __getattr__(name: str) -> Any: ...
