# cython: language_level=3
"""Python view of ``_losses.pxd``: the compiled loss and its constants, for the estimators
(which may not import a ``*_ref`` module) and for the test that the .pxd and its NumPy twin
:mod:`sosl._core._losses_ref` agree. No per-loss branch lives here: a new loss is written in
the .pxd and the reference only."""

import numpy as np

from libc.math cimport isnan

from sosl._core._losses cimport curvature_bound, grad_bound, loss_grad, loss_scale

__all__ = ["loss_constants", "loss_value_grad", "loss_value_grad_rows"]


def loss_constants(int loss):
    """``(scale, G, H)`` of the ``Loss`` code ``loss`` (see ``_losses.pxd``).

    Raises
    ------
    ValueError
        If ``loss`` is not a code the .pxd knows.
    """
    cdef double scale = loss_scale(loss)
    if isnan(scale):
        raise ValueError(f"unknown Loss code {loss}: no branch for it in _losses.pxd")
    return scale, grad_bound(loss), curvature_bound(loss)


def loss_value_grad(int loss, double mu, double s2):
    """``(psi, d psi/d mu, d psi/d s2)`` at one point, from the .pxd's ``loss_grad``."""
    cdef double d_mu, d_s2, value
    loss_constants(loss)                # raises for an unknown code
    value = loss_grad(loss, mu, s2, &d_mu, &d_s2)
    return value, d_mu, d_s2


def loss_value_grad_rows(int loss, const double[::1] mu, const double[::1] s2):
    """``(psi, d psi/d mu, d psi/d s2)`` at every point ``(mu[i], s2[i])``: three new arrays
    of ``mu``'s length, from the .pxd's ``loss_grad`` (the batch objective of
    ``sosl.dask.Parallel(solver="lbfgs")`` evaluates it on a block's rows).

    Raises
    ------
    ValueError
        If ``loss`` is not a code the .pxd knows, or ``mu`` and ``s2`` differ in length.
    """
    cdef Py_ssize_t i, n = mu.shape[0]
    loss_constants(loss)                # raises for an unknown code
    if s2.shape[0] != n:
        raise ValueError(f"mu has {n} entries and s2 {s2.shape[0]}")
    value = np.empty(n)
    d_mu = np.empty(n)
    d_s2 = np.empty(n)
    cdef double[::1] v = value, dm = d_mu, ds = d_s2
    with nogil:
        for i in range(n):
            v[i] = loss_grad(loss, mu[i], s2[i], &dm[i], &ds[i])
    return value, d_mu, d_s2
