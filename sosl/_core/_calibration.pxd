# cython: language_level=3
"""One step of the online Platt scaling of a score (cimport, not an extension).

The probability of the positive class is sigmoid(A f) for a score f: a one-parameter
Platt scaling through the learner's own threshold, so that ``predict`` (f > 0) and the
most probable class always agree. A is fitted online by a Newton step per instance on
the logistic loss plus a quadratic prior of weight H around the previous value, taken in
theta = log A (H the curvature in theta accumulated so far): with u = A f,
q = sigmoid(u), g = (q - z) u, h = q (1 - q) u^2, H <- H + h, d = clip(g / H, -1, 1),
A <- max(A exp(-d), A_MIN). In theta the step does not depend on the scale of the scores
(multiplying every score by c divides A by c and leaves u, g, h and H as they were), and a
saturated row adds almost no curvature, so scores of another magnitude early in a stream
(a learner's first large steps) cannot freeze A, as the curvature q (1 - q) f^2 of a step in
A itself did. The NumPy twin, in that textbook form, is
:func:`sosl._core._calibration_ref.platt_steps`.

The typed step (written in C, ``_calibration.h``, and declared here) computes the Newton
ratio with one division. With e = exp(-|u|) and D = 1 + e, the logistic function is
q = n / D with n = 1 for u >= 0 and n = e below (the two branches of a sigmoid without
overflow, chosen by a select, not a branch); on both branches q (1 - q) = e / D^2, so
h = e u^2 / D^2. Multiplying the numerator and the denominator of the Newton ratio by D^2:

    (q - z) u / (H + h) = (n - z D) u D / (H D^2 + e u^2),

one division, while the division of the curvature update, H + e u^2 / D^2, runs beside
it. The two forms are equal in exact arithmetic, on both branches (tested:
tests/test_calibration.py::test_one_division_form_is_the_newton_step_symbolically); in
floating point they differ by rounding and agree with the textbook twin to 1e-12 over
20,000 steps on scores of every magnitude, a comparison that catches a step divided by the
old H (tested:
tests/test_calibration.py::test_one_division_step_equals_the_textbook_step_over_a_long_stream).
e u^2 is formed as (e u) u, which is 0 when exp underflows (u^2 alone may overflow).
Every learner that calibrates prequentially takes its steps from here, so its paths (one
row, a batch, the general pass) agree to the bit.
"""

cdef extern from "_calibration.h" nogil:
    # calib = [A, H]; f the score before the update, z = 1 for the positive class, else 0
    # (the step is written in C, once, so that the inlined pass of _simd.h inlines it too)
    void platt_step "sosl_platt_step" (double* calib, double f, double z) noexcept
