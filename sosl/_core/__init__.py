"""Compiled passes (``_*.pyx``), their NumPy references (``_*_ref.py``) and their helpers.

The map, by file stem (the estimator module validates and allocates; the pass runs one
``nogil`` loop over a given sample order; the reference computes the same rounds in NumPy,
one line per equation, and a test compares the two to ~1e-12 with a mutant that must fail):

============ ============================= ============================= ================
stem         estimator (module)            shared .pxd cimported         tests
============ ============================= ============================= ================
_linear      OAUCM, OAUCS (linear)         _codes _losses _moments       test_linear
                                           _calibration _lock
_sketch      SketchedOAUCM (sketch)        _codes _losses _moments       test_sketch*
                                           _calibration _lock
_ftrl        FTRLAUC (ftrl)                -                             test_ftrl*
_baselines   OAM, OLUBAUC, SOLAM, AdaOAM,  _codes _losses _rows          test_baselines
             Perceptron, PAI (baselines)
_okauc       OKAUCM, OKAUCS, FIFO (okauc)  _codes _kfun _losses _moments test_okauc
_kbudget     OKAUCM budget_policy="komp"   _codes _kfun _losses _moments test_okauc
_koil        KOIL (koil)                   _codes _kfun                  test_koil
_polk        POLK (polk, _polk_driver)     _codes _kfun _komp_greedy     test_polk
_komp        komp_prune (_komp_prune)      _komp_greedy                  test_komp
_kfun        kernel expansions (kernels)   _kfun                         test_kfun
_auc         AUC (metrics)                 -                             test_metrics*
_calibration Platt scaling (_base)         _calibration                  test_calibration
_losses      the loss home (Python view)   _losses                       test_losses
_lock        model lock (_capabilities)    _lock                         test_lock
============ ============================= ============================= ================

Tests: a stem's pass-against-reference tests are ``tests/_core/test_<stem>.py`` where that
file exists (``_linear``, ``_baselines``, ``_okauc``, ``_koil``, ``_polk``, ``_komp``,
``_kfun``, ``_losses``, ``_blas``), its estimator tests ``tests/test_<stem>.py``; the
sketch, FTRL, AUC and calibration passes have theirs in their estimators' files. Every
learner also runs the one contract suite, ``tests/test_contract.py``.

Shared declarations: ``_codes.pxd`` (every option code; Python view ``_codes.pyx``),
``_losses.pxd`` (psi_M, psi_S and their partials; twin ``_losses_ref.py``),
``_moments.pxd`` (the round prologue; twin ``_moments_ref.py``), ``_rows.pxd`` (the row
view: dense or CSR rows and their primitives, one pass body for both formats; the
baselines cimport it, the kernel passes through ``_kfun.pxd``), ``_kfun.pxd`` (kernel
evaluation, the ``KernelSpec`` / ``StepSpec`` bundles, the support-vector slot stores),
``_komp_greedy.pxd`` (the KOMP removals), ``_calibration.pxd`` (one Platt step).

Production helpers in Python (never a ``*_ref`` module: a reference is an oracle only, and
``tests/test_core_map.py`` checks that nothing outside ``_core/_*_ref.py`` imports one):
``_kparams`` (kernel codes, checks, Gram matrices, the spec builders), ``_komp_prune`` and
``_komp_np`` (KOMP entry point, its NumPy/LAPACK core and helpers), ``_polk_driver``,
``_numeric`` (sigmoid, the FTRL closed form), ``_blas`` (one BLAS thread).
``_lock.pyx`` holds no numerical pass (the model lock and the test its typed readers
make, ``_lock.pxd``), hence no reference.

Adding a learner: its codes in ``_codes.pxd`` (+ the ``IntEnum`` in ``_codes.pyx``), the
pass ``_stem.pyx`` (cimporting the shared ``.pxd`` it needs), the reference
``_stem_ref.py`` with the same signature, the extension in ``setup.py``, the estimator
(a ``BaseOnlineAUC`` subclass: ``_layout``, ``_init_state``, ``_run_pass``, ``_decision``),
``tests/test_stem.py`` (pass == reference on fixed orders with a mutant) and a line in this
table. Adding a pairwise loss: its code in ``_codes.pxd`` / ``_codes.pyx``, its branch in
``_losses.pxd`` and ``_losses_ref.py``, and the estimators' option table.
"""
