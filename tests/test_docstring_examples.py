"""The examples in the public docstrings run and print what they claim."""

import doctest
import importlib

import pytest

MODULES = ["sosl.linear", "sosl.metrics", "sosl.kernel", "sosl.kernels", "sosl.baselines",
           "sosl.koil", "sosl.polk", "sosl.komp", "sosl.datasets"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
    if name in ("sosl.linear", "sosl.metrics"):
        assert result.attempted > 0
