# Stub of the compiled module (no signatures yet): its names are typed as Any for mypy.
from typing import Any

def __getattr__(name: str) -> Any: ...
