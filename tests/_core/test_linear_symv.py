"""The own-loop path of ``_linear.pyx`` (p < 32): the sweep that applies the pending rank-one
terms and forms Sigma w over the padded upper triangle (``sosl_small_symv`` in ``_simd.h``),
and ``order=None``. Each agreement with the NumPy reference has a mutant it must catch."""

import numpy as np
import pytest
from helpers import label_runs

from sosl._core import _linear
from sosl._core import _linear_ref as ref
from sosl._core._codes import Loss, Schedule

LOSS_M = int(Loss.LOSS_M)
INV = int(Schedule.STEP_INV_LAM_T)
OWN_LOOPS = 10**9                  # blas_min_p: the own loops at every p


def _stream(n, p, seed):
    """Rows with runs of one class (pending terms pile up) and alternations (k = 1)."""
    return label_runs(n, p, seed)


def _kernel_state(p):
    return dict(w=np.zeros(p), xbar=np.zeros((2, p)), C=np.zeros((2, p, p)), scale=np.ones(2),
                W=np.zeros(2), N=np.zeros(2, dtype=np.int64))


def _kernel(st, X, s, t0, kmax, order="arange"):
    p = X.shape[1]
    if isinstance(order, str):
        order = np.arange(X.shape[0], dtype=np.intp)
    return _linear.linear_pass(X, s, order, st["w"], st["xbar"], st["C"], st["scale"],
                               st["W"], st["N"], t0, 0.05, 0.0, INV, LOSS_M, 1.0, OWN_LOOPS,
                               np.empty(3 * p + 2 * p * kmax))


def _as_reference(st):
    """The reference's state (covariances from the upper triangle) of a kernel state."""
    C = st["C"]
    U = np.triu(C) + np.transpose(np.triu(C, 1), (0, 2, 1))
    W = np.where(st["W"] > 0, st["W"], 1.0)
    return dict(w=st["w"].copy(), xbar=st["xbar"].copy(),
                Sigma=U * (st["scale"] / W)[:, None, None], N=st["N"].copy())


def _reference(rs, X, s, t0):
    order = np.arange(X.shape[0], dtype=np.intp)
    return ref.linear_pass(X, s, order, rs["w"], rs["xbar"], rs["Sigma"], rs["N"], t0, 0.05,
                           0.0, INV, LOSS_M)


@pytest.mark.parametrize("p", [1, 4, 6, 8, 20, 23, 31, 36])   # fused (p % 4 == 0) or not
@pytest.mark.parametrize("kmax", [0, 1, 5, 16])
def test_own_loops_equal_reference(p, kmax):
    """From a fresh state and then from a mid-stream one (pending terms flushed at the end
    of the first pass), kernel == reference to 1e-12 on the same rows."""
    X, s = _stream(240, p, seed=p)
    st = _kernel_state(p)
    t = _kernel(st, X[:120], s[:120], 0, kmax)
    rs = _as_reference(st)
    _kernel(st, X[120:], s[120:], t, kmax)
    _reference(rs, X[120:], s[120:], t)
    got = _as_reference(st)
    for key in ("w", "xbar", "Sigma"):
        np.testing.assert_allclose(got[key], rs[key], rtol=1e-12, atol=1e-14, err_msg=key)
    assert np.abs(rs["w"]).max() > 1e-3 and np.abs(rs["Sigma"]).max() > 1e-3


def _mid_stream(p, kmax):
    X, s = _stream(240, p, seed=100 + p)
    st = _kernel_state(p)
    t = _kernel(st, X[:120], s[:120], 0, kmax)
    return X[120:], s[120:], t, st


@pytest.mark.parametrize("p,entry", [(20, (1, 0)), (20, (14, 13)), (6, (5, 4)), (20, (10, 9)),
                                     (24, (19, 16)), (24, (23, 20))])
def test_mutant_diagonal_block_entry_is_caught(p, entry):
    """The sweep reads the lower half of the 4 x 4 diagonal blocks (and of the remainder
    block): a state wrong there only, the upper triangle intact, must be caught by the
    comparison with the reference (a sweep that skipped those entries, or an update that
    did not keep them, would be caught the same way), in the first, a middle and the last
    diagonal block."""
    X, s, t, st = _mid_stream(p, 5)
    rs = _as_reference(st)
    j, l = entry
    st["C"][:, j, l] *= 1.5                          # below the diagonal, inside the block
    np.testing.assert_array_equal(_as_reference(st)["Sigma"], rs["Sigma"])  # not upper
    _kernel(st, X, s, t, 5)
    _reference(rs, X, s, t)
    assert not np.allclose(st["w"], rs["w"], rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("p", [6, 20, 23])
def test_lower_triangle_outside_diagonal_blocks_is_never_read(p):
    """Garbage below the diagonal blocks changes no bit of the result, and stays as it was
    (the padded upper triangle is the whole state of the own loops)."""
    X, s, t, st = _mid_stream(p, 5)
    bad = {k: v.copy() for k, v in st.items()}
    rows, cols = np.tril_indices(p, -1)
    outside = (rows // 4) != (cols // 4)
    bad["C"][:, rows[outside], cols[outside]] = 1e30
    _kernel(st, X, s, t, 5)
    _kernel(bad, X, s, t, 5)
    for key in ("w", "xbar", "W", "N"):
        assert st[key].tobytes() == bad[key].tobytes(), key
    assert np.triu(st["C"]).tobytes() == np.triu(bad["C"]).tobytes()
    assert (bad["C"][:, rows[outside], cols[outside]] == 1e30).all()


def test_order_none_is_every_row_in_order():
    """``order=None`` gives the bits of ``order=arange(n)``; the mutant (reversed rows) not."""
    X, s = _stream(300, 20, seed=5)
    runs = {}
    for name, order in (("none", None), ("arange", "arange"),
                        ("reversed", np.arange(299, -1, -1, dtype=np.intp))):
        st = _kernel_state(20)
        runs[name] = (_kernel(st, X, s, 0, 16, order=order), st["w"].tobytes())
    assert runs["none"] == runs["arange"]
    assert runs["none"][1] != runs["reversed"][1]
    with pytest.raises(ValueError, match="one sign per row"):
        _kernel(_kernel_state(20), X, s[:10], 0, 16, order=None)


def test_signs01_and_the_chunk_path_refusing_other_labels():
    """The typed 0/1 signs equal 2 y - 1 and flag any other label; a chunk holding one
    raises as the general path does, with the model unchanged."""
    from sosl import OAUCM
    y = np.array([0, 1, 1, 0, 1], dtype=np.int64)
    out = np.empty(5)
    assert _linear.signs01(y, out) and out.tolist() == (2.0 * y - 1.0).tolist()
    for bad in (2, -1, 3, -2):
        assert not _linear.signs01(np.array([0, 1, bad], dtype=np.int64), np.empty(3))
    X, s = _stream(400, 6, seed=9)
    labels = (s > 0).astype(np.int64)
    m = OAUCM(lam=0.05).fit(X[:200], labels[:200])
    before = m.coef_.copy(), m.t_
    with pytest.raises(ValueError, match="not in classes"):
        m.partial_fit(X[200:300], np.where(labels[200:300] == 1, 2, 0))
    assert m.coef_.tobytes() == before[0].tobytes() and m.t_ == before[1]
    fast = OAUCM(lam=0.05).fit(X[:200], labels[:200]).partial_fit(X[200:], labels[200:])
    slow = OAUCM(lam=0.05).fit(X[:200], labels[:200]).partial_fit(X[200:], labels[200:]
                                                                  .astype(np.int32))
    assert fast.coef_.tobytes() == slow.coef_.tobytes()


@pytest.mark.parametrize("p", [4, 8, 12, 20, 28, 13])
def test_each_count_of_pending_terms_gives_the_bits_of_immediate_updates(p):
    """Runs of exactly k rows of one class, so that every read of a matrix applies k pending
    terms in the sweep: the sweep has copies for constant k = 1..4 and a loop for more, each
    giving the bits of immediate updates (kmax = 0) and the reference to 1e-12. Mutant: the
    same stream with one entry of one row changed by a relative 1e-13 (below the tolerance
    of the comparison with the reference) must change the bits of the scatter."""
    rng = np.random.default_rng(7 + p)
    for k in (1, 2, 3, 4, 5, 7):
        n = 24 * k
        X = rng.normal(size=(n, p)) / np.sqrt(p) + 0.1
        s = np.where((np.arange(n) // k) % 2 == 0, 1.0, -1.0)
        runs = {}
        for kmax in (0, k, 16):
            st = _kernel_state(p)
            _kernel(st, X, s, 0, kmax)
            runs[kmax] = (st["w"].tobytes(), st["C"].tobytes())
        assert runs[k] == runs[0] and runs[16] == runs[0], k
        rs = _as_reference(_kernel_state(p))
        _reference(rs, X, s, 0)
        st = _kernel_state(p)
        _kernel(st, X, s, 0, 16)
        np.testing.assert_allclose(st["w"], rs["w"], rtol=1e-12, atol=1e-14)
        Xm = X.copy()
        Xm[n // 2, p // 2] *= 1.0 + 1e-13
        st = _kernel_state(p)
        _kernel(st, Xm, s, 0, 16)
        assert st["C"].tobytes() != runs[0][1], k


def _same_pair(a, b):
    """Two ``_two_numbers`` answers agree: both None, or equal classes (value and dtype) and
    the same sign bits."""
    if a is None or b is None:
        return a is None and b is None
    return (a[0].dtype == b[0].dtype and a[0].tolist() == b[0].tolist()
            and a[1].tobytes() == b[1].tobytes())


def _label_cases():
    rng = np.random.default_rng(11)
    big = np.iinfo(np.int64)
    for lo, hi in [(0, 1), (-1, 1), (3, 7), (big.min, big.max), (-5, -4)]:
        z = rng.random(1003) < 0.3
        yield np.where(z, hi, lo).astype(np.int64)
        yield np.where(z, float(hi), float(lo))
    yield np.array([-np.inf, np.inf, np.inf])
    yield np.array([0.0, -0.0, 0.0])                 # one value (as np.unique sees it)
    yield np.array([2, 2, 2], dtype=np.int64)        # one value
    yield np.array([5], dtype=np.int64)              # one row
    yield np.array([0, 1, 2, 1], dtype=np.int64)     # a third value, adjacent to neither
    yield np.array([0, 2, 1, 2], dtype=np.int64)     # a third value in between
    yield np.array([0.0, 1.0, np.nan])               # NaN last: min and max never pick it
    yield np.array([np.nan, 0.0, 1.0])               # NaN first
    yield np.array([0.5, 1.5, 1.0])


def test_binary_signs_agree_with_the_numpy_reference():
    """The typed two-label pass (``_linear.binary_signs`` behind ``_input._two_numbers``)
    gives the classes and sign bits of the NumPy form on two-valued labels, and None where
    it does (one value, a third, a NaN); a mutant that swaps the two classes is caught."""
    from sosl._input import _two_numbers, _two_numbers_np
    for y in _label_cases():
        typed, numpy_ = _two_numbers(y), _two_numbers_np(y)
        assert _same_pair(typed, numpy_), y[:6]
        direct = _linear.binary_signs(y)
        assert (direct is None) == (numpy_ is None)
        if typed is not None:
            mutant = (typed[0][::-1].copy(), -typed[1])
            assert not _same_pair(mutant, numpy_)
    # arrays the typed pass does not take: the NumPy form answers for them
    y = np.array([0, 1, 1, 0, 1, 0], dtype=np.int64)
    for other in (y.astype(np.int32), y[::2], y.astype(bool), y.reshape(2, 3), y[:0]):
        assert _linear.binary_signs(other) is None
    assert _same_pair(_two_numbers(y.astype(np.int32)), _two_numbers_np(y.astype(np.int32)))
    assert _same_pair(_two_numbers(y[::2]), _two_numbers_np(y[::2]))
