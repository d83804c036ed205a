# cython: language_level=3
"""Python view of the option codes declared in ``_kcodes.pxd`` (one ``IntEnum`` per enum)."""
