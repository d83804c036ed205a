"""Type aliases shared by the public signatures (annotations only; nothing here runs)."""
from __future__ import annotations

from typing import Any, Literal, Protocol, Union

import numpy as np

__all__ = ["Auto", "Budget", "Detector", "KernelName", "RandomState"]

#: the string option several size and step parameters accept
Auto = Literal["auto"]
#: ``random_state`` as scikit-learn takes it
RandomState = Union[int, np.random.RandomState, None]
#: a kernel name of :data:`sosl.kernels.KERNEL_CODES`
KernelName = Literal["linear", "gaussian", "rbf", "poly"]
#: a comparison budget: one size for both classes, or ``(negatives, positives)``
Budget = Union[int, "tuple[int, int]", "list[int]"]


class Detector(Protocol):
    """A change detector as ``forgetting="auto"`` reads it (``sosl.drift.Cusum``, river's)."""

    @property
    def drift_detected(self) -> bool: ...

    def update(self, x: float, /) -> Any: ...
