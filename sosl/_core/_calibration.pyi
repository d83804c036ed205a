# Stub of the compiled module _calibration: the signatures of its module-level functions,
# written from the .pyx by tools/write_stubs.py (array arguments as NumPy arrays of
# the memoryview's dtype; return values and the other names typed as Any).
from typing import Any

import numpy as np
import numpy.typing as npt

def platt_steps(
    f: npt.NDArray[np.float64], s: npt.NDArray[np.float64], calib: npt.NDArray[np.float64],
) -> Any: ...
def __getattr__(name: str) -> Any: ...
