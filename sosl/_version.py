"""The version of sosl, in one place (read by pyproject.toml and ``sosl.__version__``)."""

__version__ = "0.2.0"
