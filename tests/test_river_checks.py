"""river's own ``check_estimator`` on every adapter with its DEFAULT parameters.

river runs ~30 checks on two short streams of its Phishing dataset (9 numeric features):
keys that appear and disappear between rows, shuffled key order, pickling, cloning,
purity of the inference calls, bounded memory over 2,500 rows, ... POLK and KOIL are
marked slow (``make test`` runs them): POLK's estimator alone costs ~5 ms per row on these
rows with its default parameters, and KOIL's checks took ~17 s (POLK's ~60 s) on a loaded
2-core machine.
"""

import pytest

river = pytest.importorskip("river", reason="river is not installed (pip install 'sosl[river]')")

from river import checks  # noqa: E402

import sosl  # noqa: E402
import sosl.river as sr  # noqa: E402

_SLOW = {"POLK", "KOIL"}
LEARNERS = [pytest.param(n, marks=pytest.mark.slow) if n in _SLOW else n
            for n in sosl.__all__ if n != "__version__"]


@pytest.mark.parametrize("name", LEARNERS)
def test_river_check_estimator_on_the_default_parameters(name):
    model = getattr(sr, name)()
    assert model._unit_test_skips() == set()          # no check is skipped
    checks.check_estimator(model)


def test_the_checks_catch_an_adapter_that_refuses_new_keys():
    # the index of OAUCM holds 3 keys here; Phishing's rows hold 9: the checks fail on it
    with pytest.raises(ValueError, match="max_features=3"):
        checks.check_estimator(sr.OAUCM(max_features=3))
