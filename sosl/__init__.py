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
  :mod:`sosl.komp`).
"""

from ._version import __version__
from .baselines import OAM, OLUBAUC, PAI, SOLAM, AdaOAM, Perceptron
from .ftrl import FTRLAUC
from .koil import KOIL
from .linear import OAUCM, OAUCS
from .okauc import OKAUCM, OKAUCS
from .polk import POLK
from .sketch import SketchedOAUCM

__all__ = ["OAUCM", "OAUCS", "SketchedOAUCM", "OKAUCM", "OKAUCS",
           "Perceptron", "PAI", "OAM", "OLUBAUC", "SOLAM", "AdaOAM", "FTRLAUC", "KOIL", "POLK",
           "__version__"]
