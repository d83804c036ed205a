"""sosl: online AUC maximization with second-order surrogate losses.

Public estimators (scikit-learn compatible binary classifiers trained by one online pass):

* :class:`OAUCM` -- OAUC-M (step 1/(lam t)) and OAUC-M_c (constant ``eta``), psi_M loss;
* :class:`OAUCS` -- OAUC-S (= OPAUC), psi_S loss.
"""

from .linear import OAUCM, OAUCS

__version__ = "0.1.0"

__all__ = ["OAUCM", "OAUCS", "__version__"]
