"""Warning categories of sosl, in one place (filter them with :mod:`warnings` by class).

===================================  ==============================================================
category                             issued when
===================================  ==============================================================
:class:`GrowthWarning`               a model grows with the stream (POLK, unbounded kernel buffers)
:class:`UnscaledInputWarning`        a second-order learner sees features far from unit scale
:class:`InconsistentVersionWarning`  a model pickled by another version of sosl is loaded
:class:`UnverifiedDatasetWarning`    a dataset file is used without a matching checksum
:class:`CacheRepairWarning`          the experiments cache was repaired (a torn last line)
:class:`ExperimentWarning`           the runner found failed tasks or a grid-edge selection
:class:`PickleLoadWarning`           a model or state is read from a pickle (``allow_pickle=True``)
===================================  ==============================================================
"""

__all__ = ["CacheRepairWarning", "ExperimentWarning", "GrowthWarning",
           "InconsistentVersionWarning", "PickleLoadWarning", "UnscaledInputWarning",
           "UnverifiedDatasetWarning"]


class GrowthWarning(UserWarning):
    """A model whose memory and per-row cost grow with the stream (issued once per model):
    POLK keeping a large share of the rows as atoms, or ``budget=None`` buffers past
    10,000 instances. Raise the sparsification (POLK's ``epsilon``/``parsimony``) or set
    a budget."""


class UnscaledInputWarning(UserWarning):
    """Features far from unit scale (max |x| above 1e4) reached a learner whose default
    steps and regularization assume scaled features (issued once per model). Scale the
    features (e.g. ``sklearn.preprocessing.MaxAbsScaler``) or tune ``lam``/``eta``."""


class UnverifiedDatasetWarning(UserWarning):
    """A dataset file used without a matching registered checksum (``strict=False``)."""


class CacheRepairWarning(RuntimeWarning):
    """The cache was repaired: a torn last line cut off, or a missing header written."""


class ExperimentWarning(UserWarning):
    """The experiments runner's summary found inner-CV tasks that diverged, were invalid or
    failed, or a hyper-parameter selected at an edge of its grid."""


class PickleLoadWarning(UserWarning):
    """A model or state was read from a pickle or joblib file (``allow_pickle=True``,
    ``--trust-pickle``): reading it could run any code the file holds. Convert the file
    once with :func:`sosl.io.save` to the safe format, which loads without running code."""


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
