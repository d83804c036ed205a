"""scikit-learn's estimator checks that sosl's learners fail by design, with the reasons.

Pass them to scikit-learn's check runners, which then report these checks as expected
failures (and fail if one unexpectedly passes)::

    from sklearn.utils.estimator_checks import check_estimator, parametrize_with_checks
    from sosl.utils.estimator_checks import expected_failed_checks

    check_estimator(OAUCM(), expected_failed_checks=expected_failed_checks(OAUCM()))

    @parametrize_with_checks([OAUCM(), PAI()], expected_failed_checks=expected_failed_checks)
    def test_sklearn_compatible(estimator, check):
        check(estimator)

Every other check of scikit-learn passes for every public estimator
(``tests/test_estimator_checks.py`` runs them all). The failures are about sample weights
only: an online pass plays each row once, so a weight cannot stand for repeated rows.
"""

from __future__ import annotations

from typing import Any

__all__ = ["EXPECTED_FAILED_CHECKS", "expected_failed_checks"]

#: why a learner with a weighted update fails the weight-equivalence checks
ONLINE_PASS = ("an online pass: a row of weight 2 is one round whose loss term counts "
               "twice, not two rounds, so the model differs from the one of the row repeated "
               "(the class moments do equal those of repeated rows)")
#: why a learner without one fails every check that passes weights other than 0 and 1
NO_WEIGHTED_FORM = ("no weighted form of the update: weights other than 0 (the row left "
                    "out) and 1 are refused with a ValueError")

#: the checks failed by a learner that takes any non-negative weight
WEIGHTED: dict[str, str] = {
    "check_sample_weight_equivalence_on_dense_data": ONLINE_PASS,
    "check_sample_weight_equivalence_on_sparse_data": ONLINE_PASS,
}
#: the checks failed by a learner that takes only weights 0 and 1
UNWEIGHTED: dict[str, str] = {
    "check_sample_weights_list": NO_WEIGHTED_FORM,
    "check_sample_weights_not_overwritten": NO_WEIGHTED_FORM,
    "check_sample_weight_equivalence_on_dense_data": NO_WEIGHTED_FORM,
    "check_sample_weight_equivalence_on_sparse_data": NO_WEIGHTED_FORM,
}


def _takes_weights(cls: type) -> bool:
    """Whether the learner class has a weighted form of its update (its own declaration)."""
    caps = getattr(cls, "capabilities", None)
    return bool(caps is not None and caps.weighted)


def expected_failed_checks(estimator: Any) -> dict[str, str]:
    """``{check name: reason}`` of the checks ``estimator`` fails by design.

    The callable that ``parametrize_with_checks(expected_failed_checks=...)`` takes; give
    its value for one estimator to ``check_estimator(expected_failed_checks=...)``.
    An object that is not a sosl learner gets an empty dict.
    """
    cls = estimator if isinstance(estimator, type) else type(estimator)
    if not cls.__module__.startswith("sosl."):
        return {}
    return dict(WEIGHTED if _takes_weights(cls) else UNWEIGHTED)


def _table() -> dict[str, dict[str, str]]:
    import sosl

    return {name: expected_failed_checks(getattr(sosl, name))
            for name in sosl.__all__ if name != "__version__"}


#: ``{learner class name: {check name: reason}}`` for every public learner of sosl
EXPECTED_FAILED_CHECKS: dict[str, dict[str, str]] = _table()
