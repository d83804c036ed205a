# Stub of the compiled module _komp: the signatures of its module-level functions,
# written from the .pyx by tools/write_stubs.py (array arguments as NumPy arrays of
# the memoryview's dtype; return values and the other names typed as Any).
from typing import Any

import numpy as np
import numpy.typing as npt

def komp_core(
    K: npt.NDArray[np.float64], alpha: npt.NDArray[np.float64], eps2: float, rtol: float,
    kept: npt.NDArray[np.intp], w_out: npt.NDArray[np.float64], work: npt.NDArray[np.float64],
    iwork: npt.NDArray[np.intp],
) -> Any: ...
def __getattr__(name: str) -> Any: ...
