# Stub of the compiled module (PartialOAUCM's pass): the names typed as Any for mypy.
from typing import Any

def __getattr__(name: str) -> Any: ...
