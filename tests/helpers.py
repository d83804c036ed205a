"""Helpers shared by several test files (imported as ``helpers``; see conftest.py): the
learners and their small settings, the state comparisons, the reference mutant, and the
stream builders used by more than one file (a builder used by one file stays in it)."""

import inspect

import numpy as np
import scipy.sparse as sp
from sklearn.base import ClassifierMixin

import sosl
from sosl import OAM, OLUBAUC, PAI, SOLAM, AdaOAM, Perceptron

#: every public learner of sosl
ESTIMATORS = [getattr(sosl, n) for n in sosl.__all__
              if inspect.isclass(getattr(sosl, n)) and issubclass(getattr(sosl, n),
                                                                  ClassifierMixin)]
#: small budgets and ranks, so that a test on every learner stays fast
KW = {"OKAUCM": dict(budget=20), "OKAUCS": dict(budget=20), "KOIL": dict(budget=20),
      "OAM": dict(buffer_size=20), "SketchedOAUCM": dict(rank=4), "POLK": dict(eta=0.3),
      "NystroemOAUCM": dict(n_components=20)}


def make(Est, **extra):
    """``Est`` with the small settings of ``KW`` and ``random_state=0`` where it has one."""
    kw = dict(KW.get(Est.__name__, {}))
    if "random_state" in inspect.signature(Est).parameters:
        kw["random_state"] = 0
    kw.update(extra)
    return Est(**kw)


def fitted_state(model):
    """The fitted attributes of ``model`` (public names ending in '_'), as read (an
    attribute built on its first read, such as the CSR ``support_vectors_`` of OKAUC's
    sparse slots, is built)."""
    return {k: getattr(model, k) for k in list(vars(model))
            if k.endswith("_") and not k.startswith("_")}


def same_state(a, b):
    """Whether two ``fitted_state`` dicts are equal byte for byte."""
    if a.keys() != b.keys():
        return False
    for k in a:
        u, v = a[k], b[k]
        if sp.issparse(u) or sp.issparse(v):
            if not (sp.issparse(u) and sp.issparse(v) and u.shape == v.shape
                    and (u != v).nnz == 0):
                return False
        elif isinstance(u, np.ndarray) or isinstance(v, np.ndarray):
            u, v = np.asarray(u), np.asarray(v)
            if u.shape != v.shape or u.dtype != v.dtype or u.tobytes() != v.tobytes():
                return False
        elif isinstance(u, float) and isinstance(v, float):
            if np.float64(u).tobytes() != np.float64(v).tobytes():
                return False
        elif isinstance(u, tuple) and isinstance(v, tuple):
            if not same_state(dict(enumerate(u)), dict(enumerate(v))):
                return False
        elif u != v:
            return False
    return True


# -- the two state comparisons -------------------------------------------------------------
# "the same state" (bit for bit: an equivalence of two runs of the same code, or a refused
# call) and "close to the reference" (a typed pass against its NumPy twin, to rounding) are
# different claims; each has its own name.
def assert_same_state(a, b):
    """Assert two ``fitted_state`` dicts are equal byte for byte, naming the first key
    that differs."""
    assert a.keys() == b.keys(), sorted(set(a) ^ set(b))
    for k in a:
        assert same_state({k: a[k]}, {k: b[k]}), f"'{k}' differs"


def assert_same_learned_state(a, b):
    """Assert two models hold the same learned state (``_state_names``, the counters, the
    calibration and the labels), byte for byte, naming the first array that differs."""
    for name in a._state_names + ("t_", "n_seen_", "calibration_", "classes_"):
        assert np.array_equal(np.asarray(getattr(a, name)), np.asarray(getattr(b, name))), name


def snapshot(model, skip=()):
    """Deep copy of every attribute of ``model`` (public or not) except ``skip``."""
    return {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in vars(model).items()
            if k not in skip}


def assert_unchanged(before, model, skip=()):
    """Assert ``model`` still holds the attributes of ``snapshot(model, skip)`` bit for bit
    (a NaN equals a NaN)."""
    after = {k: v for k, v in vars(model).items() if k not in skip}
    assert before.keys() == after.keys(), sorted(set(before) ^ set(after))
    for k, v in before.items():
        if isinstance(v, np.ndarray):
            np.testing.assert_array_equal(v, after[k], err_msg=k)
        else:
            assert v == after[k] or (v != v and after[k] != after[k]), k


def assert_close_to_reference(typed, ref, rtol=1e-12, atol=1e-14, names=None):
    """Assert a typed pass's state dict equals its reference's to rounding: float arrays
    within ``rtol``/``atol``, everything else exactly (all keys, or only ``names``)."""
    if names is None:
        assert typed.keys() == ref.keys(), sorted(set(typed) ^ set(ref))
    for k in ref if names is None else names:
        x, y = np.asarray(typed[k]), np.asarray(ref[k])
        if x.dtype.kind == "f":
            np.testing.assert_allclose(x, y, rtol=rtol, atol=atol, err_msg=k)
        else:
            np.testing.assert_array_equal(x, y, err_msg=k)


# -- stream builders shared by several files ---------------------------------------------
def label_runs(n, p, seed, q=0.4, shift=0.2):
    """Rows ``N(0, 1/p) + shift`` with labels in runs of one class (geometric lengths of
    parameter q: pending rank-one terms pile up) and alternations (one term a round), as
    float64 signs; for the linear kernel's own-loop tests."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) / np.sqrt(p) + shift
    runs = rng.geometric(q, size=n)
    s = np.repeat(np.tile([1.0, -1.0], n), np.resize(runs, 2 * n))[:n]
    return X, s


def sparse_stream(n=160, p=30, seed=0, grow=False):
    """Sparse rows (about 20% non-zeros; with ``grow`` the density rises along the stream,
    so later batches have rows with more stored entries) and labels that depend on them."""
    rng = np.random.default_rng(seed)
    density = np.linspace(0.05, 0.5, n)[:, None] if grow else 0.2
    X = rng.uniform(-1, 1, size=(n, p)) * (rng.random((n, p)) < density)
    X[3, 5] = 0.0                                           # an empty coordinate; plus a row
    X[7] = 0.0                                              # with no stored entry at all
    s = np.where(X[:, 0] - X[:, 1] + 0.5 * X[:, 2:6].sum(axis=1)
                 + 0.2 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, s


def noisy_ball(rng, n, p=2, noise=0.1):
    X = rng.uniform(-1, 1, size=(n, p))
    y = (np.sum(X ** 2, axis=1) < 0.5 * p / 2).astype(int)
    flip = rng.random(n) < noise
    y[flip] = 1 - y[flip]
    return X, y


def koil_stream(rng, n, p, pos_rate=0.3, dup=False, first_neg=0):
    X = rng.uniform(-1, 1, size=(n, p))
    if dup:
        X[n // 2:] = X[: n - n // 2]                      # every row repeated once
    score = X[:, 0] + 0.5 * np.sin(3 * X[:, -1]) + 0.3 * rng.normal(size=n)
    y = (score > np.quantile(score, 1 - pos_rate)).astype(int)
    y[:first_neg] = 0                                      # one class only for a while
    return X, y


def koil_sparse_stream(rng, n, p, grow=False):
    density = np.linspace(0.05, 0.6, n)[:, None] if grow else 0.25
    X = rng.uniform(-1, 1, size=(n, p)) * (rng.random((n, p)) < density)
    X[4] = 0.0                                             # a row without stored entries
    score = X[:, 0] - X[:, 1] + 0.4 * X[:, 2:].sum(axis=1) + 0.2 * rng.normal(size=n)
    y = (score > np.quantile(score, 0.7)).astype(int)
    return X, y


def slot_stream(n=240, p=500, seed=0):
    """Canonical CSR rows for the kernel learners' sparse slots: about 1% of the columns
    stored, plus one entry among the first five (so rows of different widths, some wider
    than the slots fitted on a prefix), and labels from those five columns."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, p, density=0.01, random_state=seed, format="csr")
    X.data = rng.normal(size=X.nnz)
    dense = sp.csr_matrix((rng.normal(size=n), (np.arange(n), rng.integers(0, 5, n))),
                          shape=(n, p))
    X = (X + dense).tocsr()
    X.sort_indices()
    y = (np.asarray(X[:, :5].sum(axis=1)).ravel() + 0.3 * rng.normal(size=n) > 0).astype(int)
    return X, y


def skewed_stream(seed, n=3000, p=6, pos=0.25):
    """Gaussian rows and labels from a noisy linear score, a fraction ``pos`` positive
    (the data-parallel fits' tests)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    score = X[:, 0] + 0.5 * X[:, 1] + rng.normal(size=n)
    y = (score > np.quantile(score, 1 - pos)).astype(int)
    return X, y


def labelled_linear(n=400, p=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, p))
    y = np.where(X @ np.arange(1, p + 1) + rng.normal(size=n) > 1.0, "pos", "neg")
    return X, y


# -- the linear baselines (tests/test_baselines*.py, tests/_core/test_baselines.py) -----
def mutant_of(func, old, new):
    """A mutant: the function ``func`` (of a reference module) recompiled in its module's
    namespace with one source fragment ``old`` replaced by ``new`` (it must occur once)."""
    src = inspect.getsource(func)
    assert src.count(old) == 1, old
    ns = dict(vars(inspect.getmodule(func)))
    exec(compile(src.replace(old, new), "<mutant>", "exec"), ns)
    return ns[func.__name__]


def sparsify(X, seed, density=0.4):
    """X with most entries set to 0 (each row keeps about ``density`` of its entries, and
    at least one)."""
    rng = np.random.default_rng(seed)
    keep = rng.random(X.shape) < density
    keep[np.arange(X.shape[0]), rng.integers(0, X.shape[1], X.shape[0])] = True
    return np.ascontiguousarray(X * keep)


def baseline_learners():
    return [Perceptron(), PAI(C=0.5), OAM(C=0.3, buffer_size=8, random_state=0),
            OAM(C=0.3, update="gra", buffer_size=8, random_state=0), OLUBAUC(lam=0.05),
            OLUBAUC(lam=0.01, eta=0.05), SOLAM(eta=0.5, radius=5.0),
            AdaOAM(lam=0.01, eta=0.1, delta=1e-3)]


def baseline_stream(seed=0, n=240, p=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = np.where(X[:, 0] - 0.5 * X[:, 1] + 0.5 * rng.normal(size=n) > 0.6, "pos", "neg")
    return X, y


def baseline_state(est):
    return {name: getattr(est, name) for name in est._state_names + ("t_", "n_seen_")}


def comparable_baseline_state(est):
    """The state of a fitted estimator with OAM's buffers dense whatever their storage, so
    that models with dense and with sparse buffers can be compared."""
    state = baseline_state(est)
    if isinstance(est, OAM):
        for name in OAM._DENSE_STORE + OAM._SPARSE_STORE:
            state.pop(name, None)
        B = est.buffers_
        if isinstance(B, tuple):
            dense = np.zeros((2, est.buffer_size, est.n_features_in_))
            for k in range(2):
                dense[k, :B[k].shape[0]] = B[k].toarray()
            B = dense
        state["buffers"] = B
    return state


def sketch_bundle(st):
    """The sketch kernel's ``SketchState`` of a state dict in the reference's names
    (``sosl._core._sketch_ref.capped_state``)."""
    from sosl._core import _sketch
    return _sketch.SketchState(st["w"], st["xbar"], st["B"], st["nrows"], st["N"], st["dA"],
                               st["dB"], st["delta"], st["col"], st["kt"], st["cnt"],
                               st["slot"], st["W"], st["ep"], st["S"], st["Pv"], st["Qm"],
                               st["RH"], st["epoch"])


def sketch_spec(lam, eta, schedule, loss, family, r, K):
    """The sketch kernel's ``SketchSpec`` of the reference's hyper-parameters."""
    return {"lam": lam, "eta": eta, "schedule": schedule, "loss": loss, "family": family,
            "r": r, "K": K}
