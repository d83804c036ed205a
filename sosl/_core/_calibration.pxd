# cython: language_level=3
"""One step of the online Platt scaling of a score (cimport, not an extension).

The probability of the positive class is sigmoid(A f) for a score f: a one-parameter
Platt scaling through the learner's own threshold, so that ``predict`` (f > 0) and the
most probable class always agree. A is fitted online by a Newton step per instance on
the logistic loss plus a quadratic prior of weight H around the previous A (H the curvature
accumulated so far): with q = sigmoid(A f), g = (q - z) f, h = q (1 - q) f^2,
H <- H + h, A <- max(A - g / H, A_MIN). The NumPy twin, in that textbook form, is
:func:`sosl._core._calibration_ref.platt_steps`.

The typed step (written in C, ``_calibration.h``, and declared here) computes the same two
updates with one division on the path from the old A to the new one (a step is a chain of
dependent operations, and the learners' passes run one per row beside their rounds, so its
length is what they pay). With u = A f,
e = exp(-|u|) and D = 1 + e, the logistic function is q = n / D with n = 1 for u >= 0 and
n = e below (the two branches of a sigmoid without overflow, chosen by a select, not a
branch); on both branches q (1 - q) = e / D^2, so h = e f^2 / D^2. Multiplying the
numerator and the denominator of the Newton step by D^2:

    (q - z) f / (H + h) = (n - z D) f D / (H D^2 + e f^2),

one division whose operands are ready a few products after exp, while the division of
the curvature update, H + e f^2 / D^2, runs beside it (the next step needs H only after
its own exp). The two forms are equal in exact arithmetic, on both branches (tested:
tests/test_calibration.py::test_one_division_form_is_the_newton_step_symbolically); in
floating point they differ by rounding, about 1e-16 relative per step, and agree with the
textbook twin to 1e-12 over 20,000 steps on scores of every magnitude, a comparison that
catches a step divided by the old H (tested:
tests/test_calibration.py::test_one_division_step_equals_the_textbook_step_over_a_long_stream).
e f^2 is formed as (e f) f, which is 0 when exp underflows (f^2 alone may overflow).
Every learner that calibrates prequentially takes its steps from here, so its paths (one
row, a batch, the general pass) agree to the bit.
"""

cdef extern from "_calibration.h" nogil:
    # calib = [A, H]; f the score before the update, z = 1 for the positive class, else 0
    # (the step is written in C, once, so that the inlined pass of _simd.h inlines it too)
    void platt_step "sosl_platt_step" (double* calib, double f, double z) noexcept
