"""The vectorised kernel arithmetic (``_vexp.h`` through ``sosl._core._kfun``).

exp(c v) and the kernel expansions of the typed module against their NumPy twins and libm,
on both code paths (AVX2 + FMA where the processor has them, scalar otherwise).
"""

import numpy as np
import pytest

from sosl._core import _kfun, _kfun_ref
from sosl.kernels import kernel_expansion, kernel_matrix

#: largest relative difference from libm's exp allowed: 2^-51 (measured on 10^7 arguments in
#: [-708, 0]: 2.2197e-16, just under 2^-52, on both paths)
EXP_RTOL = 2.0 ** -51


@pytest.fixture(params=[False, True], ids=["vector", "scalar"])
def path(request):
    _kfun.set_scalar_path(request.param)
    yield request.param
    _kfun.set_scalar_path(False)


def _args(rng, n=200_000):
    return np.concatenate([-rng.uniform(0, 1, n), -rng.uniform(0, 700, n),
                           -rng.exponential(1e-3, n), [0.0, -0.0, -707.9]])


def _rel(a, b):
    return np.max(np.abs(a - b) / b)


def test_exp_within_two_ulp_of_libm(path):
    v = _args(np.random.default_rng(0))
    out = v.copy()
    _kfun.exp_scaled(out, 1.0)
    assert _rel(out, np.exp(v)) <= EXP_RTOL
    assert _rel(_kfun_ref.exp_scaled(v, 1.0), np.exp(v)) <= EXP_RTOL


def test_exp_matches_its_numpy_twin(path):
    v = _args(np.random.default_rng(1)) / 3.0
    out = v.copy()
    _kfun.exp_scaled(out, 3.0)                         # the scale c enters as in the passes
    assert _rel(out, _kfun_ref.exp_scaled(v, 3.0)) <= EXP_RTOL


def test_exp_mutants_fail_the_bound():
    v = _args(np.random.default_rng(2))
    # a Taylor polynomial three degrees short, and float32 precision
    assert _rel(_kfun_ref.exp_scaled(v, 1.0, degree=10), np.exp(v)) > EXP_RTOL
    assert _rel(np.exp(v.astype(np.float32)).astype(np.float64), np.exp(v)) > EXP_RTOL


def test_exp_edges(path):
    v = np.array([0.0, -708.0, -708.5, -1e300, -np.inf, np.nan, -1e-300, -1.5, -2.0, -3.0,
                  -4.0, -5.0])
    out = v.copy()
    _kfun.exp_scaled(out, 1.0)
    assert out[0] == 1.0 and out[6] == 1.0
    assert out[1] == pytest.approx(np.exp(-708.0), rel=EXP_RTOL)
    assert np.all(out[2:5] == 0.0)
    assert np.isnan(out[5])
    assert _rel(out[7:], np.exp(v[7:])) <= EXP_RTOL    # the tail after the last 4-block
    _kfun.exp_scaled(np.empty(0), 1.0)                 # empty input is a no-op


@pytest.mark.parametrize("kernel", ["gaussian", "linear", "poly"])
@pytest.mark.parametrize("p", [1, 3, 4, 7, 20])
def test_expansion_matches_kernel_matrix(path, kernel, p):
    rng = np.random.default_rng(p)
    X, SV = rng.normal(size=(37, p)), rng.normal(size=(13, p))
    SV[0] = X[0]                                       # a zero distance
    a = rng.normal(size=13)
    got = kernel_expansion(X, SV, a, kernel, gamma=0.3, degree=2, coef0=0.5)
    want = kernel_matrix(X, SV, kernel, gamma=0.3, degree=2, coef0=0.5) @ a
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)


def test_expansion_mutant_fails():
    rng = np.random.default_rng(5)
    X, SV, a = rng.normal(size=(9, 4)), rng.normal(size=(6, 4)), rng.normal(size=6)
    want = kernel_matrix(X, SV, gamma=0.3) @ a
    wrong = kernel_expansion(X, SV[::-1], a, gamma=0.3)        # weights paired with other SVs
    assert not np.allclose(wrong, want, rtol=1e-12, atol=1e-13)


def test_expansion_rejects_bad_shapes():
    rng = np.random.default_rng(6)
    with pytest.raises(ValueError, match="do not fit together"):
        kernel_expansion(rng.normal(size=(3, 4)), rng.normal(size=(5, 3)), np.ones(5))
    with pytest.raises(ValueError, match="do not fit together"):
        kernel_expansion(rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), np.ones(4))
    out = kernel_expansion(np.zeros((2, 3)), np.zeros((0, 3)), np.zeros(0))
    assert np.array_equal(out, np.zeros(2))
