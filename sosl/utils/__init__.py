"""Utilities for users of sosl: :mod:`sosl.utils.estimator_checks`."""
