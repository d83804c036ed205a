"""The linear baselines' typed passes (``_baselines.pyx``: Perceptron, PA-I, OAM seq/gra,
OL-UBAUC, SOLAM, AdaOAM) against their NumPy references at rtol 1e-12, dense and CSR rows,
OAM's sparse slots, the midpoints; one mutant of each reference caught."""

import inspect

import numpy as np
import pytest
from helpers import assert_close_to_reference, mutant_of, sparsify

from sosl._core import _baselines as K
from sosl._core import _baselines_ref as R
from sosl._core._codes import OamUpdate, Schedule

RTOL = 1e-12
OAM_SEQ, OAM_GRA = int(OamUpdate.OAM_SEQ), int(OamUpdate.OAM_GRA)
INV_LAM_T, CONSTANT = int(Schedule.STEP_INV_LAM_T), int(Schedule.STEP_CONSTANT)


# -- streams -----------------------------------------------------------------------------
def _stream(kind, seed):
    """(X, s) of a named test stream; labels +-1.0."""
    rng = np.random.default_rng(seed)
    if kind == "random":
        X = rng.uniform(-1, 1, (300, 4))
        s = np.where(rng.random(300) < 0.3, 1.0, -1.0)
    elif kind == "one_class_first":       # 60 negatives before any positive
        X = rng.normal(size=(250, 3))
        s = np.where(rng.random(250) < 0.5, 1.0, -1.0)
        s[:60] = -1.0
    elif kind == "duplicates":            # rows repeated, also with both labels
        base = rng.normal(size=(15, 3))
        idx = rng.integers(0, 15, 250)
        X = base[idx].copy()
        s = np.where(rng.random(250) < 0.4, 1.0, -1.0)
    elif kind == "p1":
        X = rng.normal(size=(200, 1))
        s = np.where(X[:, 0] + 0.5 * rng.normal(size=200) > 0, 1.0, -1.0)
    elif kind == "single":                # a pass over one instance
        X = rng.normal(size=(1, 3))
        s = np.array([1.0])
    else:  # pragma: no cover
        raise ValueError(kind)
    return np.ascontiguousarray(X), s


STREAMS = ["random", "one_class_first", "duplicates", "p1", "single"]


# -- one runner per learner: fresh state, run a pass module (kernel or reference) -------
def _run(name, mod, X, s, order, t0=0, fn=None):
    p = X.shape[1]
    if name == "perceptron":
        st = {"w": np.zeros(p)}
        t = (fn or mod.perceptron_pass)(X, s, order, st["w"], t0)
    elif name == "pa1":
        st = {"w": np.zeros(p)}
        t = (fn or mod.pa1_pass)(X, s, order, st["w"], t0, 0.3)
    elif name in ("oam_seq", "oam_gra"):
        st = {"w": np.zeros(p), "B": np.zeros((2, 6, p)), "nB": np.zeros(2, np.int64),
              "N": np.zeros(2, np.int64), "rng": np.array([12345], np.uint64)}
        upd = OAM_SEQ if name == "oam_seq" else OAM_GRA
        args = (X, s, order, st["w"], st["B"], st["nB"], st["N"], st["rng"], t0, 0.2, upd)
        if fn is None and mod is K:
            t = K.oam_pass(*args, np.zeros(2 * p))
        else:
            t = (fn or R.oam_pass)(*args)
    elif name == "ubauc":
        st = {"w": np.zeros(p), "c": np.zeros(1), "N": np.zeros(2, np.int64)}
        t = (fn or mod.ubauc_pass)(X, s, order, st["w"], st["c"], st["N"], t0, 0.05,
                                   INV_LAM_T, 0.0)
    elif name == "ubauc_c":
        st = {"w": np.zeros(p), "c": np.zeros(1), "N": np.zeros(2, np.int64)}
        t = (fn or mod.ubauc_pass)(X, s, order, st["w"], st["c"], st["N"], t0, 0.05,
                                   CONSTANT, 0.1)
    elif name == "solam":
        st = {"v": np.zeros(p + 2), "v_avg": np.zeros(p + 2), "alpha": np.zeros(2),
              "G": np.zeros(1), "N": np.zeros(2, np.int64)}
        t = (fn or mod.solam_pass)(X, s, order, st["v"], st["v_avg"], st["alpha"], st["G"],
                                   st["N"], t0, 0.7, 2.0)
    elif name == "adaoam":
        st = {"w": np.zeros(p), "xbar": np.zeros((2, p)), "Sigma": np.zeros((2, p, p)),
              "N": np.zeros(2, np.int64), "G2": np.zeros(p)}
        args = (X, s, order, st["w"], st["xbar"], st["Sigma"], st["N"], st["G2"], t0, 0.01,
                0.2, 1e-3)
        t = K.adaoam_pass(*args, np.zeros(4 * p)) if (fn is None and mod is K) else \
            (fn or R.adaoam_pass)(*args)
    else:  # pragma: no cover
        raise ValueError(name)
    st["t"] = t
    return st


LEARNERS = ["perceptron", "pa1", "oam_seq", "oam_gra", "ubauc", "ubauc_c", "solam",
            "adaoam"]


@pytest.mark.parametrize("name", LEARNERS)
def test_kernel_equals_reference(name, edge_stream):
    kind, X, s = edge_stream                    # conftest.py: the edge cases of every pass
    X = np.ascontiguousarray(X)
    for order in (np.arange(X.shape[0], dtype=np.intp),
                  np.random.default_rng(7).permutation(X.shape[0]).astype(np.intp)):
        ker = _run(name, K, X, s, order, t0=4)
        ref = _run(name, R, X, s, order, t0=4)
        assert_close_to_reference(ker, ref, rtol=RTOL)
        assert ker["t"] == 4 + X.shape[0]
        floats = [np.asarray(v) for v in ker.values() if np.asarray(v).dtype.kind == "f"]
        assert any(np.any(v != 0.0) for v in floats), "the compared state is trivially zero"


def test_kernel_empty_order_is_a_no_op():
    X, s = _stream("random", 0)
    for name in LEARNERS:
        st = _run(name, K, X, s, np.zeros(0, dtype=np.intp), t0=9)
        assert st["t"] == 9
        assert not np.any(st["w" if "w" in st else "v"])


def test_oam_reservoir_replaces_and_matches():
    """Long stream, small buffer: replacements happen, draws are identical."""
    X, s = _stream("random", 11)
    order = np.arange(X.shape[0], dtype=np.intp)
    ker = _run("oam_seq", K, X, s, order)
    ref = _run("oam_seq", R, X, s, order)
    assert int(ker["rng"][0]) != 12345                     # the generator was used
    assert np.array_equal(ker["B"], ref["B"])
    # the buffers hold instances of their class only, not just the first ones seen
    for k, lab in ((0, -1.0), (1, 1.0)):
        rows = X[s == lab]
        assert all(any(np.array_equal(b, r) for r in rows) for b in ker["B"][k])
        assert not np.array_equal(ker["B"][k], rows[:6])


MUTANTS = {
    "perceptron": (R.perceptron_pass, "w += y * x", "w -= y * x"),
    "pa1": (R.pa1_pass, "tau = min(C, loss / sq)", "tau = loss / sq"),
    "oam_seq": (R.oam_pass, "C_t = C * max(1.0, N[o] / budget)", "C_t = C"),
    "oam_gra": (R.oam_pass, "active = y * Dw <= 1.0", "active = y * Dw <= 0.0"),
    "ubauc": (R.ubauc_pass, "omega = t / (2.0 * N[k])", "omega = 1.0"),
    "solam": (R.solam_pass, "al + gamma * g_al", "al - gamma * g_al"),
    "adaoam": (R.adaoam_pass, "g = g + 0.5 * (d_mu * a + 2.0 * d_s2 * Sw)",
               "g = g + 0.5 * d_mu * a"),
}


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_reference_is_caught(name):
    func, old, new = MUTANTS[name]
    bad = mutant_of(func, old, new)
    good = mutant_of(func, old, old)                          # recompiled, unchanged
    X, s = _stream("random", 5)
    order = np.arange(X.shape[0], dtype=np.intp)
    ker = _run(name, K, X, s, order)
    assert_close_to_reference(ker, _run(name, R, X, s, order, fn=good), rtol=RTOL)
    with pytest.raises(AssertionError):
        assert_close_to_reference(ker, _run(name, R, X, s, order, fn=bad), rtol=RTOL)


def test_adaoam_zero_delta_guard_matches_reference():
    """delta = 0 and all-zero gradients (one class first, w = 0): no 0/0, same as NumPy."""
    X, s = _stream("one_class_first", 8)
    order = np.arange(X.shape[0], dtype=np.intp)
    states = []
    for mod in (K, R):
        p = X.shape[1]
        st = [np.zeros(p), np.zeros((2, p)), np.zeros((2, p, p)), np.zeros(2, np.int64),
              np.zeros(p)]
        args = (X, s, order, *st, 0, 0.0, 0.3, 0.0)
        mod.adaoam_pass(*args, np.zeros(4 * p)) if mod is K else mod.adaoam_pass(*args)
        states.append(st)
    for a, b in zip(*states):
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=1e-14)
    assert np.all(np.isfinite(states[0][0])) and np.any(states[0][0] != 0)


def _csr(X):
    import scipy.sparse as sp
    A = sp.csr_matrix(X)
    A.sort_indices()
    return A.data, A.indices.astype(np.int32), A.indptr.astype(np.int32)


class _CsrModule:
    """Stands in for a pass module in :func:`_run`: runs the ``*_pass_csr`` kernels on X."""

    def __init__(self, X):
        self.csr, self.p = _csr(X), X.shape[1]

    def perceptron_pass(self, X, s, order, w, t0):
        return K.perceptron_pass_csr(*self.csr, s, order, w, t0)

    def pa1_pass(self, X, s, order, w, t0, C):
        return K.pa1_pass_csr(*self.csr, s, order, w, t0, C)

    def ubauc_pass(self, X, s, order, *args):
        return K.ubauc_pass_csr(*self.csr, s, order, *args)

    def solam_pass(self, X, s, order, *args):
        return K.solam_pass_csr(*self.csr, s, order, *args, np.full(2 * self.p, np.nan))

    def oam_pass(self, X, s, order, w, B, nB, N, rng, t0, C, update):
        """The sparse-buffer kernel on B's rows (fresh or not), written back densified."""
        Bi, Bv, Bn = _sparse_slots(B, nB, cap=int(np.diff(self.csr[2]).max()))
        t = K.oam_pass_csr(*self.csr, s, order, w, Bi, Bv, Bn, nB, N, rng, t0, C, update,
                           np.zeros(self.p), np.zeros(B.shape[1], np.uint8))
        B[...] = _dense_slots(Bi, Bv, Bn, self.p)
        return t


def _sparse_slots(B, nB, cap=None):
    """Sparse slots (Bi, Bv, Bn) holding the used rows of dense buffers B."""
    nnz = (B != 0).sum(axis=2)
    cap = cap or max(1, int(nnz.max()))
    Bi = np.zeros(B.shape[:2] + (cap,), np.int32)
    Bv = np.zeros(B.shape[:2] + (cap,))
    Bn = np.zeros(B.shape[:2], np.int64)
    for k in range(2):
        for q in range(nB[k]):
            cols = np.flatnonzero(B[k, q])
            Bi[k, q, :cols.shape[0]], Bv[k, q, :cols.shape[0]] = cols, B[k, q, cols]
            Bn[k, q] = cols.shape[0]
    return Bi, Bv, Bn


def _dense_slots(Bi, Bv, Bn, p):
    """Dense (2, budget, p) buffers from sparse slots."""
    B = np.zeros(Bi.shape[:2] + (p,))
    for k in range(2):
        for q in range(Bi.shape[1]):
            B[k, q, Bi[k, q, :Bn[k, q]]] = Bv[k, q, :Bn[k, q]]
    return B


SPARSE_LEARNERS = ["perceptron", "pa1", "oam_seq", "oam_gra", "ubauc", "ubauc_c", "solam"]


def _run_csr(name, X, s, order, t0=0, fn=None):
    mod = _CsrModule(X)
    if name.startswith("oam"):                       # _run calls K.oam_pass with work space
        return _run(name, R, X, s, order, t0=t0, fn=fn or mod.oam_pass)
    return _run(name, mod, X, s, order, t0=t0, fn=fn)


@pytest.mark.parametrize("kind", STREAMS)
@pytest.mark.parametrize("name", SPARSE_LEARNERS)
def test_csr_kernel_equals_dense_reference(name, kind):
    X, s = _stream(kind, seed=3)
    X = sparsify(X, seed=4)
    if X.shape[0] > 1:
        X[1] = 0.0                                          # an empty row
    for order in (np.arange(X.shape[0], dtype=np.intp),
                  np.random.default_rng(7).permutation(X.shape[0]).astype(np.intp)):
        ker = _run_csr(name, X, s, order, t0=4)
        assert_close_to_reference(ker, _run(name, R, X, s, order, t0=4), rtol=RTOL)
        assert_close_to_reference(ker, _run(name, K, X, s, order, t0=4), rtol=RTOL)
        floats = [np.asarray(v) for v in ker.values() if np.asarray(v).dtype.kind == "f"]
        assert any(np.any(v != 0.0) for v in floats), "the compared state is trivially zero"


@pytest.mark.parametrize("name", sorted(set(MUTANTS) & set(SPARSE_LEARNERS)))
def test_csr_kernel_catches_mutant_reference(name):
    func, old, new = MUTANTS[name]
    X, s = _stream("random", 5)
    X = sparsify(X, seed=6)
    order = np.arange(X.shape[0], dtype=np.intp)
    ker = _run_csr(name, X, s, order)
    assert_close_to_reference(ker, _run(name, R, X, s, order, fn=mutant_of(func, old, old)),
                              rtol=RTOL)
    with pytest.raises(AssertionError):
        assert_close_to_reference(ker, _run(name, R, X, s, order, fn=mutant_of(func, old, new)),
                                  rtol=RTOL)


def test_csr_rescaling_paths_equal_dense():
    """Shrinkage and projections strong enough that the CSR kernels fold their scale back
    into the weights many times within the pass (OL-UBAUC: factor 0.1 per round, so the
    scale passes 1e-9 every 9 rounds; SOLAM: radius 0.05, a projection in most rounds,
    also on dense rows)."""
    rng = np.random.default_rng(9)
    X = sparsify(rng.normal(size=(400, 6)), seed=10, density=0.5)
    s = np.where(rng.random(400) < 0.4, 1.0, -1.0)
    order = np.arange(400, dtype=np.intp)
    csr, p = _csr(X), X.shape[1]
    for mod in ("csr", R):
        st = [np.zeros(p), np.zeros(1), np.zeros(2, np.int64)]
        args = (*st, 0, 9.0, CONSTANT, 0.1)                 # 1 - eta lam = 0.1
        if mod == "csr":
            K.ubauc_pass_csr(*csr, s, order, *args)
            ker = st
        else:
            R.ubauc_pass(X, s, order, *args)
            ref = st
    for a, b in zip(ker, ref):
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=1e-14)
    assert np.any(ker[0] != 0)
    # SOLAM: CSR rows, dense rows (the dense round's own sweep and projection) and the
    # reference; a reference without the projection is told apart on the dense pass
    no_projection = mutant_of(R.solam_pass, "w_new *= R / nw", "w_new *= 1.0")
    out = {}
    for mod in ("csr", "dense", "ref", "mutant"):
        st = [np.zeros(p + 2), np.zeros(p + 2), np.zeros(2), np.zeros(1), np.zeros(2, np.int64)]
        if mod == "csr":
            K.solam_pass_csr(*csr, s, order, *st, 0, 2.0, 0.05, np.full(2 * p, np.nan))
        elif mod == "dense":
            K.solam_pass(np.ascontiguousarray(X), s, order, *st, 0, 2.0, 0.05)
        else:
            (R.solam_pass if mod == "ref" else no_projection)(X, s, order, *st, 0, 2.0, 0.05)
        out[mod] = st
    for mod in ("csr", "dense"):
        for a, b in zip(out[mod], out["ref"]):
            np.testing.assert_allclose(a, b, rtol=RTOL, atol=1e-14)
        assert np.isclose(np.linalg.norm(out[mod][0][:p]), 0.05)   # the ball's boundary
    with pytest.raises(AssertionError):
        for a, b in zip(out["dense"], out["mutant"]):
            np.testing.assert_allclose(a, b, rtol=RTOL, atol=1e-14)


# -- OAM's sparse buffers: kernel == reference on the slots, estimator behaviour ------------
def _oam_csr_stream(seed, n=400, p=30, max_len=7):
    """CSR rows of lengths 0..max_len (some empty, some repeated), labels +-1."""
    import scipy.sparse as sp
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        if i > 10 and rng.random() < 0.1:
            rows.append(rows[rng.integers(0, i)].copy())          # a duplicate row
            continue
        x = np.zeros(p)
        length = rng.integers(0, max_len + 1)
        x[rng.choice(p, size=length, replace=False)] = rng.uniform(-1, 1, length)
        rows.append(x)
    X = np.array(rows)
    s = np.where(X[:, 0] - X[:, 1] + 0.5 * rng.normal(size=n) > 0.2, 1.0, -1.0)
    s[:25] = -1.0                                                 # one class first
    A = sp.csr_matrix(X)
    return X, (A.data, A.indices.astype(np.int32), A.indptr.astype(np.int32)), s


def _slots_state(p, budget, cap, seed=99):
    return {"w": np.zeros(p), "Bi": np.zeros((2, budget, cap), np.int32),
            "Bv": np.zeros((2, budget, cap)), "Bn": np.zeros((2, budget), np.int64),
            "nB": np.zeros(2, np.int64), "N": np.zeros(2, np.int64),
            "rng": np.array([seed], np.uint64), "t": 0}


def _run_slots(fn, csr, s, order, st, update, C=0.2):
    """One pass of an ``oam_pass_csr`` (kernel or reference) on the slot state ``st``."""
    args = (*csr, s, order, st["w"], st["Bi"], st["Bv"], st["Bn"], st["nB"], st["N"],
            st["rng"], st["t"], C, update)
    if fn is K.oam_pass_csr:
        st["t"] = fn(*args, np.zeros(st["w"].shape[0]), np.zeros(st["Bi"].shape[1], np.uint8))
    else:
        st["t"] = fn(*args)
    return st


@pytest.mark.parametrize("update", [OAM_SEQ, OAM_GRA])
@pytest.mark.parametrize("budget", [1, 5, 40])
def test_oam_csr_kernel_equals_csr_reference(update, budget):
    """Slots, counts, generator bit for bit and w at rtol 1e-12, over two passes (the
    second continuing the first's state) on a stream with empty and duplicate rows and
    many reservoir replacements; and both equal the dense reference over the same rows."""
    X, csr, s = _oam_csr_stream(1)
    p, cap = X.shape[1], 8
    half = X.shape[0] // 2
    orders = [np.arange(half, dtype=np.intp),
              np.random.default_rng(2).permutation(np.arange(half, X.shape[0])).astype(np.intp)]
    ker, ref = _slots_state(p, budget, cap), _slots_state(p, budget, cap)
    dense = {"w": np.zeros(p), "B": np.zeros((2, budget, p)), "nB": np.zeros(2, np.int64),
             "N": np.zeros(2, np.int64), "rng": np.array([99], np.uint64), "t": 0}
    for order in orders:
        _run_slots(K.oam_pass_csr, csr, s, order, ker, update)
        _run_slots(R.oam_pass_csr, csr, s, order, ref, update)
        dense["t"] = R.oam_pass(X, s, order, dense["w"], dense["B"], dense["nB"], dense["N"],
                                dense["rng"], dense["t"], 0.2, update)
        assert_close_to_reference(ker, ref, rtol=RTOL)
        for name in ("Bi", "Bv", "Bn"):
            np.testing.assert_array_equal(ker[name], ref[name], err_msg=name)
        np.testing.assert_allclose(ker["w"], dense["w"], rtol=RTOL, atol=1e-14)
        np.testing.assert_array_equal(_dense_slots(ker["Bi"], ker["Bv"], ker["Bn"], p),
                                      dense["B"])
        for name in ("nB", "N", "rng"):
            np.testing.assert_array_equal(ker[name], dense[name], err_msg=name)
    assert ker["t"] == X.shape[0] and np.any(ker["w"] != 0)
    assert ker["N"].min() > 3 * budget                           # replacements happened
    first = [X[s == lab][:budget] for lab in (-1.0, 1.0)]
    B = _dense_slots(ker["Bi"], ker["Bv"], ker["Bn"], p)
    assert not all(np.array_equal(B[k], first[k]) for k in range(2))
    # the zeros after each slot's row: nothing is left of an earlier, longer occupant
    used = np.arange(cap) < ker["Bn"][..., None]
    assert not np.any(ker["Bi"][~used]) and not np.any(ker["Bv"][~used])


def _mutant_ref(changes):
    """R.oam_pass_csr with its helper _difference, each with the given line changes."""
    ns = dict(vars(R))
    for func in (R._difference, R.oam_pass_csr):
        src = inspect.getsource(func)
        for old, new in changes:
            if old in src:
                assert src.count(old) == 1, old
                src = src.replace(old, new)
        exec(compile(src, "<mutant>", "exec"), ns)
    return ns["oam_pass_csr"]


OAM_CSR_MUTANTS = {
    "difference": ("d[np.searchsorted(u, bi)] -= bv", "d[np.searchsorted(u, bi)] = -bv"),
    "weighting": ("C_t = C * max(1.0, N[o] / budget)", "C_t = C"),
    "stale slot": ("Bi[k, j], Bv[k, j] = 0, 0.0", "pass"),
    "active": ("active = y * Dw <= 1.0", "active = y * Dw < 0.0"),
}


@pytest.mark.parametrize("mutant", sorted(OAM_CSR_MUTANTS))
def test_oam_csr_kernel_catches_mutant_reference(mutant):
    X, csr, s = _oam_csr_stream(3)
    order = np.arange(X.shape[0], dtype=np.intp)
    update = OAM_GRA if mutant == "active" else OAM_SEQ
    ker = _run_slots(K.oam_pass_csr, csr, s, order, _slots_state(X.shape[1], 6, 8), update)

    def compare(fn):
        ref = _run_slots(fn, csr, s, order, _slots_state(X.shape[1], 6, 8), update)
        assert_close_to_reference(ker, ref, rtol=RTOL)

    compare(_mutant_ref([]))                                      # recompiled, unchanged
    with pytest.raises(AssertionError):
        compare(_mutant_ref([OAM_CSR_MUTANTS[mutant]]))


def test_oam_csr_row_longer_than_capacity_is_refused():
    X, csr, s = _oam_csr_stream(4)
    order = np.arange(X.shape[0], dtype=np.intp)
    for fn in (K.oam_pass_csr, R.oam_pass_csr):
        st = _slots_state(X.shape[1], 5, 3)
        with pytest.raises(ValueError, match="more than the buffer capacity 3"):
            _run_slots(fn, csr, s, order, st, OAM_SEQ)


def test_oam_midpoint_score_equals_reference_and_dense():
    """The sparse buffers' projected midpoint (minus OAM's intercept_): kernel == reference
    == the midpoint of the dense buffers' mean projections, and a mutant is caught."""
    X, csr, s = _oam_csr_stream(10)
    p = X.shape[1]
    st = _run_slots(K.oam_pass_csr, csr, s, np.arange(X.shape[0], dtype=np.intp),
                    _slots_state(p, 7, 8), OAM_SEQ)
    args = (st["w"], st["Bi"], st["Bv"], st["Bn"], st["nB"])
    ker = K.oam_midpoint_score(*args)
    B = _dense_slots(st["Bi"], st["Bv"], st["Bn"], p)
    dense = st["w"] @ (0.5 * (B[0, :7].mean(axis=0) + B[1, :7].mean(axis=0)))
    assert abs(ker) > 0.01
    np.testing.assert_allclose(ker, R.oam_midpoint_score(*args), rtol=RTOL)
    np.testing.assert_allclose(ker, dense, rtol=RTOL)
    bad = mutant_of(R.oam_midpoint_score, "sum(scores[0]) / nB[0]", "sum(scores[0]) / 7")
    st["nB"][0] = 5                                               # a partly filled buffer
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(K.oam_midpoint_score(*args), bad(*args), rtol=1e-6)
    np.testing.assert_allclose(K.oam_midpoint_score(*args), R.oam_midpoint_score(*args),
                               rtol=RTOL)


def test_dense_midpoints_equal_numpy():
    """OAM's dense-buffer midpoint and AdaOAM's intercept (the typed functions both the
    pass and the one-row round use) against NumPy, and a mutant (the whole buffer
    averaged instead of its filled rows) caught."""
    rng = np.random.default_rng(8)
    w, B = rng.normal(size=6), rng.normal(size=(2, 5, 6))
    nB = np.array([3, 5], np.int64)
    ref = 0.5 * (B[0, :3] @ w).mean() + 0.5 * (B[1, :5] @ w).mean()
    np.testing.assert_allclose(K.oam_midpoint_dense(w, B, nB), ref, rtol=1e-13)
    mutant = 0.5 * (B[0] @ w).mean() + 0.5 * (B[1] @ w).mean()
    assert not np.isclose(K.oam_midpoint_dense(w, B, nB), mutant, rtol=1e-6)
    means = rng.normal(size=(2, 6))
    np.testing.assert_allclose(K.adaoam_intercept(w, means), -w @ means.mean(axis=0),
                               rtol=1e-13)
