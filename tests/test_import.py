"""What ``import sosl`` loads, and that the lazy names (PEP 562) behave like eager ones.

``import sosl`` loads no estimator module (they need scikit-learn) and none of the optional
stacks (matplotlib, dask, river, ray, sympy); each public name and submodule is loaded on
first use. Every check runs in a fresh interpreter, since this process has imported
everything long ago.
"""

import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import sosl

ROOT = Path(__file__).resolve().parents[1]
#: never loaded by ``import sosl``: the optional stacks, and everything that the lazy names
#: stand for (scikit-learn among them: the estimators' base classes come from it)
NOT_LOADED = ("matplotlib", "dask", "distributed", "river", "ray", "sympy", "pandas",
              "sklearn", "joblib", "sosl.linear", "sosl.baselines", "sosl.okauc",
              "sosl.metrics", "sosl.datasets", "sosl.experiments", "sosl.cli", "sosl.river",
              "sosl.dask", "sosl.state")


def _fresh(code):
    """Run ``code`` in a new interpreter with this checkout first on the path; its last
    stdout line, parsed as JSON."""
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, env={"PYTHONPATH": str(ROOT),
                                                      "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def _loaded_after(statement):
    """Which of NOT_LOADED are in sys.modules after ``statement`` in a fresh interpreter."""
    return _fresh(f"import json, sys\n{statement}\n"
                  f"print(json.dumps([m for m in {NOT_LOADED!r} if m in sys.modules]))")


def test_import_sosl_loads_no_estimator_module_and_no_optional_stack():
    assert _loaded_after("import sosl") == []


@pytest.mark.parametrize("statement, expected", [
    # negative controls: the check sees a module that was loaded (here, on first use)
    ("import sosl; sosl.metrics", {"sosl.metrics"}),
    ("import sosl; sosl.OAUCM", {"sosl.linear", "sklearn"}),
])
def test_the_check_sees_what_a_statement_loads(statement, expected):
    assert expected <= set(_loaded_after(statement))


def test_the_command_line_and_the_metrics_start_without_scikit_learn():
    # `sosl --version` / `sosl --help` and the streaming metrics need no estimator
    loaded = set(_loaded_after("import sosl.cli, sosl.metrics"))
    assert "sklearn" not in loaded and "sosl.linear" not in loaded


def test_lazy_names_are_the_objects_of_their_modules():
    from sosl import baselines, ftrl, koil, linear, nystroem, okauc, partial, polk, sketch

    homes = {"linear": linear, "sketch": sketch, "ftrl": ftrl, "okauc": okauc,
             "baselines": baselines, "koil": koil, "polk": polk, "partial": partial,
             "nystroem": nystroem}
    assert set(sosl._HOME) | {"__version__"} == set(sosl.__all__)
    for name, home in sosl._HOME.items():
        assert getattr(sosl, name) is getattr(homes[home], name), name
    from sosl.metrics import auc

    assert sosl.metrics.auc is auc


def test_the_submodule_list_is_complete():
    found = {m.name for m in pkgutil.iter_modules(sosl.__path__) if not m.name.startswith("_")}
    assert found == set(sosl._SUBMODULES)


def test_unknown_names_raise_attribute_error():
    with pytest.raises(AttributeError, match="has no attribute 'NotALearner'"):
        sosl.NotALearner  # noqa: B018
    assert not hasattr(sosl, "NotALearner")
    with pytest.raises(ImportError, match="cannot import name 'NotALearner'"):
        from sosl import NotALearner  # noqa: F401


def test_dir_star_import_and_submodules_do_not_depend_on_what_is_loaded():
    code = ("import json, sosl\n"
            "before = [n for n in dir(sosl) if not n.startswith('_')]\n"
            "ns = {}\n"
            "exec('from sosl import *', ns)\n"
            "kinds = [type(getattr(sosl, n)).__name__ for n in sosl._SUBMODULES]\n"
            "after = [n for n in dir(sosl) if not n.startswith('_')]\n"
            "print(json.dumps([before, after, sorted(k for k in ns if k != '__builtins__'),"
            " kinds]))")
    before, after, star, kinds = _fresh(code)
    assert before == after
    assert set(sosl.__all__) - {"__version__"} <= set(before)
    assert set(sosl._SUBMODULES) <= set(before)
    assert sorted(star) == sorted(sosl.__all__)
    assert set(kinds) == {"module"}         # each sosl.<submodule> imported on first use
