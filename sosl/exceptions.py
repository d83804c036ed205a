"""Warning categories of sosl (filter them with :mod:`warnings` by class)."""

__all__ = ["InconsistentVersionWarning"]


class InconsistentVersionWarning(UserWarning):
    """A model was unpickled by another version of sosl than the one that pickled it.

    The state layout may differ between versions; refit the model, or load it with the
    version named in the message. Attributes ``estimator_name``, ``original_version`` and
    ``current_version`` say which.
    """

    def __init__(self, *, estimator_name, original_version, current_version):
        self.estimator_name = estimator_name
        self.original_version = original_version
        self.current_version = current_version

    def __str__(self):
        return (f"Trying to unpickle a {self.estimator_name} pickled by sosl "
                f"{self.original_version} with sosl {self.current_version}. The fitted state "
                "may be laid out differently: refit the model, or load it with sosl "
                f"{self.original_version}.")
