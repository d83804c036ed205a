# Stub of the compiled module _kbudget: the signatures of its module-level functions,
# written from the .pyx by tools/write_stubs.py (array arguments as NumPy arrays of
# the memoryview's dtype; return values and the other names typed as Any).
from typing import Any

import numpy as np
import numpy.typing as npt

def komp_policy_pass(
    X: npt.NDArray[np.float64], s: npt.NDArray[np.float64], order: npt.NDArray[np.intp], Z: Any,
    G: Any, beta: Any, f: Any, buf: Any, lab: Any, age: Any, cap: npt.NDArray[np.int64], t0: int,
    acc: float, step: Any, kern: Any, epsilon: float, period: int,
) -> Any: ...
def komp_policy_pass_csr(
    data: npt.NDArray[np.float64], indices: npt.NDArray[np.int32], indptr: npt.NDArray[np.int32],
    s: npt.NDArray[np.float64], order: npt.NDArray[np.intp], Z_ind: Any, Z_val: Any, Z_nnz: Any,
    G: Any, beta: Any, f: Any, buf: Any, lab: Any, age: Any, cap: npt.NDArray[np.int64], t0: int,
    acc: float, step: Any, kern: Any, epsilon: float, period: int,
) -> Any: ...
def __getattr__(name: str) -> Any: ...
