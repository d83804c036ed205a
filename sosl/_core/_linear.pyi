# Stub of the compiled module: fixed_pass typed, the other names typed as Any for mypy.
from typing import Any

import numpy as np
import numpy.typing as npt

def fixed_pass(
    X: npt.NDArray[np.float64], s: npt.NDArray[np.float64], order: npt.NDArray[np.intp] | None,
    w: npt.NDArray[np.float64], xbar: npt.NDArray[np.float64],
    Sigma: npt.NDArray[np.float64], N: npt.NDArray[np.int64], t0: int, lam: float,
    eta: float, schedule: int, loss: int, blas_min_p: int, work: npt.NDArray[np.float64],
    sw: npt.NDArray[np.float64] | None = ...,
) -> tuple[int, bool]: ...
def __getattr__(name: str) -> Any: ...
