"""sosl: online AUC maximization with second-order surrogate losses.

Public estimators (scikit-learn compatible binary classifiers trained by one online pass):

* :class:`OAUCM` -- OAUC-M (step 1/(lam t)) and OAUC-M_c (constant ``eta``), psi_M loss;
* :class:`OAUCS` -- OAUC-S (= OPAUC), psi_S loss;
* :class:`SketchedOAUCM` -- OAUC-M / OAUC-S with a frequent-directions sketch of each class
  covariance, for high-dimensional and sparse rows (O(r p) memory);
* :class:`FTRLAUC` -- FTRL-AUC, the first-order sparse baseline (O(k) per row);
* :class:`OKAUCM`, :class:`OKAUCS` -- kernel OKAUC-M / OKAUC-S with budgeted buffers;
* :class:`Perceptron`, :class:`PAI`, :class:`OAM`, :class:`OLUBAUC`, :class:`SOLAM`,
  :class:`AdaOAM` -- the linear online baselines (:mod:`sosl.baselines`);
* :class:`KOIL` -- the kernel baseline KOIL (k nearest opposite SVs, RS++ / FIFO++ buffers);
* :class:`POLK` -- parsimonious online learning with kernels (functional SGD + KOMP,
  :mod:`sosl.komp`);
* :class:`NystroemOAUCM` -- OAUC-M on a Nystroem or random-Fourier feature map of the
  Gaussian kernel;
* :class:`PartialOAUCM` -- one-pass partial-AUC learning (FPR <= ``max_fpr``, optionally
  TPR >= ``min_tpr``) on OAUC-M's class moments.

``import sosl`` is cheap: it loads none of the estimator modules (they need scikit-learn,
whose import is most of the cost of using sosl). Each public name is loaded on first use --
``sosl.OAUCM``, ``from sosl import OAUCM`` -- and so is each public submodule
(``sosl.metrics``, ``sosl.river``, ...), as if imported by name (PEP 562).
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from ._version import __version__

#: the module of each public estimator, loaded when the estimator is first asked for
_HOME: dict[str, str] = {
    "OAUCM": "linear", "OAUCS": "linear", "SketchedOAUCM": "sketch", "FTRLAUC": "ftrl",
    "OKAUCM": "okauc", "OKAUCS": "okauc", "Perceptron": "baselines", "PAI": "baselines",
    "OAM": "baselines", "OLUBAUC": "baselines", "SOLAM": "baselines", "AdaOAM": "baselines",
    "KOIL": "koil", "POLK": "polk", "PartialOAUCM": "partial", "NystroemOAUCM": "nystroem",
}
#: the public submodules, each importable as ``sosl.<name>`` without an import statement
_SUBMODULES = (
    "baselines", "cli", "dask", "datasets", "drift", "evaluate", "exceptions", "experiments",
    "ftrl", "io", "kernels", "koil", "komp", "linear", "metrics", "nystroem", "okauc",
    "partial", "polk", "river", "sketch", "state", "utils",
)

__all__ = ["OAUCM", "OAUCS", "SketchedOAUCM", "OKAUCM", "OKAUCS",
           "Perceptron", "PAI", "OAM", "OLUBAUC", "SOLAM", "AdaOAM", "FTRLAUC", "KOIL", "POLK",
           "PartialOAUCM", "NystroemOAUCM", "__version__"]

if _TYPE_CHECKING:  # what static analysers see: the eager imports the lazy ones stand for
    from .baselines import OAM, OLUBAUC, PAI, SOLAM, AdaOAM, Perceptron
    from .ftrl import FTRLAUC
    from .koil import KOIL
    from .linear import OAUCM, OAUCS
    from .nystroem import NystroemOAUCM
    from .okauc import OKAUCM, OKAUCS
    from .partial import PartialOAUCM
    from .polk import POLK
    from .sketch import SketchedOAUCM


def __getattr__(name):
    from importlib import import_module

    if name in _HOME:
        value = getattr(import_module(f"{__name__}.{_HOME[name]}"), name)
        globals()[name] = value             # later look-ups do not come back here
        return value
    if name in _SUBMODULES:
        return import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    # the same names whether or not anything has been loaded yet
    return sorted(set(globals()) | set(__all__) | set(_SUBMODULES))
