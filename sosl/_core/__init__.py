"""Compiled kernels (``_*.pyx``) and their NumPy references (``_*_ref.py``)."""
