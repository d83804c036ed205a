"""Figures of the sosl project, one script per figure.

Each module has ``main(argv=None)`` with ``--out`` (directory), ``--seed`` and ``--quick``
(a small, fast version run by the tests) and writes a PNG and a PDF with matplotlib's Agg
backend. Run e.g. ``python -m plots.losses --out figures``. The scripts compute nothing
new: the numbers come from tested code in ``sosl`` (estimators, ``sosl.metrics``,
``sosl.experiments``) and ``verify``.

* :mod:`plots.regret` -- regret of OAUC-M vs T with the 18(1 + ln T)/lam bound (Theorem 6);
* :mod:`plots.learning_curve` -- test AUC vs instances seen for every algorithm;
* :mod:`plots.losses` -- psi_M, psi_S, the hinge and square losses, the sigma/2 envelope;
* :mod:`plots.auc_comparison` -- reproduced vs published AUC per dataset and algorithm;
* :mod:`plots.runtime` -- time per instance vs p (linear) and vs budget (kernel).
"""
