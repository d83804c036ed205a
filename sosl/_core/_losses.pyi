# Stub of the compiled module _losses: the signatures of its module-level functions,
# written from the .pyx by tools/write_stubs.py (array arguments as NumPy arrays of
# the memoryview's dtype; return values and the other names typed as Any).
from typing import Any

import numpy as np
import numpy.typing as npt

def loss_constants(loss: int) -> Any: ...
def loss_value_grad(loss: int, mu: float, s2: float) -> Any: ...
def loss_value_grad_rows(
    loss: int, mu: npt.NDArray[np.float64], s2: npt.NDArray[np.float64],
) -> Any: ...
def __getattr__(name: str) -> Any: ...
