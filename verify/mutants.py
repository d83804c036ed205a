"""verify's own mutation score: which planted errors do the verify checks catch?

Run as ``python -m verify.mutants [--only NAMES] [--list] [--seed N]`` (it is not part
of ``python -m verify``: it reruns the quick suite once per mutant, several minutes).

What it does
------------
1. A baseline run of every check at the quick size, with a counting wrapper around every
   function a mutant replaces (nothing mutated yet): all rows must be as expected, and the
   run records which checks call which function.
2. For each mutant of :data:`MUTANTS`: the library (or a verify constant) is changed in
   memory, the checks that reach the mutated code are rerun at the quick size, and the
   mutant is *caught* when at least one row is not as expected (a positive row FAILs, a
   negative control PASSes, or a check ERRORs). The mutation is then undone.
3. A mutant is *reachable* when the mutated function was called during its run (for a
   constant: when the module that reads it is among the checks run). The score is
   caught / reachable; unreachable mutants are listed apart.

The mutants
-----------
* losses (``sosl._core._losses_ref``; the function is replaced in every module of
  ``sosl`` and ``verify`` that imported it): psi_M's root scaled by 1.01, psi_M without
  its variance, psi_S's variance doubled, d psi_M/d s2 doubled, d psi_M/d mu with the
  wrong sign of b/A, d psi_S/d mu without its factor 2, ``grad_w`` without the 2 of
  d s2/d w, psi_M's one-sided derivative at the kink;
* the compiled learners (the ``_run_pass`` of ``sosl.OAUCM`` and ``sosl.OAUCS`` wrapped,
  the kernel itself untouched): the step counter ``t_`` shifted by one (1/(lam (t + 1))),
  the class moments not updated, the covariance not updated, the covariance normalized by
  N - 1 after each update (on whichever layout the state keeps: ``covariances_``, or
  ``scatter_`` with ``scales_``), the first row of a stream skipped; a mutant whose state
  keys the learner does not have is reported as not applicable, never as caught;
* the compiled learners under forgetting (``_run_pass`` of ``sosl.OAUCM`` and
  ``sosl.OAUCS`` wrapped): the forgetting factor applied twice to the covariance (the
  scale of the scatter multiplied by beta once more after each update, as if the kernel's
  ``scale *= beta`` ran twice); a no-op at beta = 1;
* routed passes (kind ``routed``): a compiled pass the estimators call through its module
  (``sosl._core._okauc.kernel_pass``, ``sosl._core._sketch.sketch_pass``) is replaced by
  its NumPy reference (which agrees with it to ~1e-12; tested) loaded from a copy of the
  reference's source with one line changed (:func:`patched_reference`): the eq. (28)
  transfer with its Delta halved (``delta = aj * ratio`` -> ``0.5 * aj * ratio``, every
  budgeted OKAUC-M/S), and the frequent-directions shrink by the smallest of the 2r
  eigenvalues instead of the (r+1)-th largest (``lam[r]`` -> ``lam[-1]``, SketchedOAUCM);
* the NumPy reference ``sosl._core._linear_ref`` (Welford update with a wrong sign):
  verify does not use it, so it must come out unreachable;
* bound constants: Theorem 6's C = 3 -> 3/sqrt(10) (18 -> 1.8) and C = 2 -> 1 (8 -> 2),
  Lemma 4's sharpened C = 2 -> 1.9, Theorem 5's smoothness 4 + lam -> 2 + lam, Theorem 5's
  square-root term 2 sqrt(...) -> sqrt(...), Lemma 7's norm constant divided by 3,
  Theorem 8's regret constant divided by 10.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from . import _harness as H
from . import _records as R

__all__ = ["Mutant", "MUTANTS", "score"]


@dataclasses.dataclass
class Mutant:
    """One planted error.

    name : short id; what : description; kind : 'loss', 'compiled', 'routed', 'reference'
    or 'constant'; target : (module, attribute) replaced; make : callable(original) -> the
    mutated object; checks : for constants, the check NAMEs that read it.
    """

    name: str
    what: str
    kind: str
    target: tuple
    make: object
    checks: tuple = ()


# --------------------------------------------------------------------------- replacing
class _Counter:
    def __init__(self, fn):
        self.fn, self.calls = fn, 0

    def __call__(self, *a, **k):
        self.calls += 1
        return self.fn(*a, **k)


def _modules():
    return [m for n, m in list(sys.modules.items())
            if m is not None and (n == "sosl" or n.startswith(("sosl.", "verify")))]


@contextlib.contextmanager
def _replaced(module, attr, new, everywhere=True):
    """Replace ``module.attr`` (and, for functions, every other name bound to it)."""
    import importlib
    mod = importlib.import_module(module)
    orig = getattr(mod, attr)
    undo = [(mod, attr)]
    if everywhere:
        undo = [(m, k) for m in _modules() for k, v in list(vars(m).items()) if v is orig]
    for m, k in undo:
        setattr(m, k, new)
    try:
        yield orig
    finally:
        for m, k in undo:
            setattr(m, k, orig)


@contextlib.contextmanager
def _replaced_method(classes, name, make):
    """Set ``cls.name = make(original)`` on each class; restore afterwards."""
    saved = []
    for cls in classes:
        own = name in cls.__dict__
        saved.append((cls, own, cls.__dict__.get(name)))
        setattr(cls, name, make(getattr(cls, name)))
    try:
        yield
    finally:
        for cls, own, val in saved:
            if own:
                setattr(cls, name, val)
            else:
                delattr(cls, name)


# --------------------------------------------------------------------------- loss mutants
def _m_psi_root(orig):
    def psi_m(mu, s2):
        b = 1.0 - np.asarray(mu, dtype=float)
        return 0.5 * (b + 1.01 * np.sqrt(b * b + np.maximum(s2, 0.0)))
    return psi_m


def _m_psi_hinge(orig):
    def psi_m(mu, s2):
        b = 1.0 - np.asarray(mu, dtype=float)
        return 0.5 * (b + np.abs(b)) + 0.0 * np.asarray(s2, dtype=float)
    return psi_m


def _m_psi_s_var(orig):
    def psi_s(mu, s2):
        return (1.0 - np.asarray(mu, dtype=float)) ** 2 + 2.0 * np.asarray(s2, dtype=float)
    return psi_s


def _loss_grad_variant(orig, which):
    def loss_grad(loss, mu, s2):
        val, d_mu, d_s2 = orig(loss, mu, s2)
        b = 1.0 - mu
        if loss == 0:
            A = math.sqrt(b * b + max(s2, 0.0))
            if which == "ds2" and A > 0:
                d_s2 = 2.0 * d_s2
            elif which == "dmu" and A > 0:
                d_mu = -0.5 * (1.0 - b / A)
            elif which == "kink" and A == 0:
                d_mu = -1.0
        elif which == "s_dmu":
            d_mu = -b
        return val, d_mu, d_s2
    return loss_grad


def _m_grad_w(orig):
    from sosl._core import _losses_ref as LR

    def grad_w(loss, w, a, Sigma):
        Sw = Sigma @ w
        _, d_mu, d_s2 = LR.loss_grad(loss, float(w @ a), float(w @ Sw))
        return d_mu * a + d_s2 * Sw
    return grad_w


# --------------------------------------------------------------------------- compiled path
# The estimators' state layout: the covariance is either kept as such ("covariances_") or
# as a scatter matrix with a scale and a weight per class (covariance = scales_ scatter_
# / weights_). The moment mutants act on whichever layout the state has.
_COV_LAYOUTS = (("covariances_",), ("scatter_", "scales_"))


def _cov_keys(state):
    for keys in _COV_LAYOUTS:
        if all(k in state for k in keys):
            return keys
    raise KeyError("no covariance in the learner's state")


def _per_row(orig, pre=None, post=None):
    def _run_pass(self, state, X, s, order):
        for i in order:
            if pre is not None:
                pre(state, X, s, int(i))
            orig(self, state, X, s, np.array([i], dtype=np.asarray(order).dtype))
            if post is not None:
                post(state, X, s, int(i))
    return _run_pass


def _c_step_shift(orig):
    def _run_pass(self, state, X, s, order):
        state["t_"] += 1
        try:
            orig(self, state, X, s, order)
        finally:
            state["t_"] -= 1
    return _run_pass


def _snapshot(state, skip):
    return {k: v.copy() for k, v in state.items()
            if isinstance(v, np.ndarray) and k not in skip}


def _c_no_moments(orig):
    box = {}

    def pre(state, X, s, i):
        box["snap"] = _snapshot(state, ("w_", "counts_"))

    def post(state, X, s, i):
        k = 1 if s[i] > 0 else 0
        if state["counts_"][k] > 1:         # the first instance still sets the moments
            for key, v in box["snap"].items():
                state[key][...] = v
    return _per_row(orig, pre, post)


def _c_no_cov(orig):
    box = {}

    def pre(state, X, s, i):
        box["snap"] = {k: state[k].copy() for k in _cov_keys(state)}

    def post(state, X, s, i):
        for key, v in box["snap"].items():
            state[key][...] = v
    return _per_row(orig, pre, post)


def _c_cov_nm1(orig):
    def post(state, X, s, i):
        k = 1 if s[i] > 0 else 0
        n = int(state["counts_"][k])
        if n > 1:
            key = _cov_keys(state)[-1]      # covariances_, or the scale of the scatter
            state[key][k] *= n / (n - 1.0)
    return _per_row(orig, None, post)


def _c_forget_twice(orig):
    def _run_pass(self, state, X, s, order):
        beta = float(self.forgetting)
        for i in order:
            orig(self, state, X, s, np.array([i], dtype=np.asarray(order).dtype))
            k = 1 if s[i] > 0 else 0
            if state["counts_"][k] > 1:         # an update that decayed the earlier ones
                state["scales_"][k] *= beta     # ... decays them once more
    return _run_pass


def applicable(m):
    """'' if the mutant can be applied to this library, else the reason."""
    if m.kind == "routed":
        return _routed_applicable(m)
    if m.kind != "compiled":
        return ""
    for Est in _estimators():
        state = Est()._init_state(2)
        state.setdefault("t_", 0)
        missing = [k for k in ("w_", "counts_") if k not in state]
        if m.name == "forget_twice":
            missing += [k for k in ("scales_",) if k not in state]
            if "forgetting" not in Est().get_params():
                missing.append("a forgetting parameter")
        if m.name in ("no_cov", "cov_nm1"):
            try:
                _cov_keys(state)
            except KeyError:
                missing.append("a covariance")
        if missing:
            return f"{Est.__name__}'s state has no {', '.join(missing)}"
    return ""


def _c_skip_first(orig):
    def _run_pass(self, state, X, s, order):
        if state["t_"] == 0 and len(order) > 1:
            order = order[1:]
        orig(self, state, X, s, order)
    return _run_pass


# --------------------------------------------------------------------------- routed passes
def patched_reference(module, old, new):
    """A fresh copy of the reference ``module`` whose source line containing ``old`` has it
    replaced by ``new`` (``old`` must occur exactly once; ``new=old`` gives the unchanged
    reference). The copy is not registered in ``sys.modules``."""
    import importlib.util
    import types
    spec = importlib.util.find_spec(module)
    src = Path(spec.origin).read_text()
    if src.count(old) != 1:
        raise LookupError(f"{module}: {old!r} occurs {src.count(old)} times, expected once")
    mod = types.ModuleType(f"{module}__mutant")
    mod.__package__ = module.rpartition(".")[0]
    mod.__file__ = spec.origin
    exec(compile(src.replace(old, new), spec.origin, "exec"), mod.__dict__)
    return mod


#: routed mutants: (reference module, text of the line, its mutated text)
_ROUTES = {
    "kernel_delta_half": ("sosl._core._okauc_ref", "delta = aj * ratio",
                          "delta = 0.5 * aj * ratio"),
    "fd_smallest": ("sosl._core._sketch_ref", "delta = max(lam[r], 0.0)",
                    "delta = max(lam[-1], 0.0)"),
}


def _routed_applicable(m):
    module, old, _ = _ROUTES[m.name]
    try:
        patched_reference(module, old, old)
    except (LookupError, ImportError) as exc:
        return str(exc)
    return ""


def kernel_pass_via(ref):
    """The typed ``_okauc.kernel_pass`` played by the reference module ``ref`` (same
    signature and state)."""
    def kernel_pass(X, s, order, SV, alpha, G, fb, cap, count, head, t0, *args):
        return ref.kernel_pass(np.asarray(X), np.asarray(s), np.asarray(order), SV, alpha, G,
                               fb, cap, count, head, int(t0), *args)
    return kernel_pass


def sketch_pass_via(ref):
    """The typed ``_sketch.sketch_pass`` (CSR rows, compact state of capacity >= m) played
    by the reference module ``ref`` (dense rows), one densified row at a time on views of
    the first m compact columns."""
    def sketch_pass(data, indices, indptr, s, order, colmap, m, st, t0, spec):
        w, xbar, B, nrows, N = (np.asarray(a) for a in (st.w, st.xbar, st.B, st.nrows, st.N))
        dA, dB, delta = np.asarray(st.dA), np.asarray(st.dB), np.asarray(st.delta)
        slot_col, nslots, cnt = np.asarray(st.slot_col), np.asarray(st.nslots), np.asarray(st.cnt)
        col_slot = np.asarray(st.col_slot)
        lam, eta, schedule, loss, family, r, K = (
            spec[k] for k in ("lam", "eta", "schedule", "loss", "family", "r", "K"))
        m, t = int(m), int(t0)
        data, indices, indptr = np.asarray(data), np.asarray(indices), np.asarray(indptr)
        s, colmap = np.asarray(s), np.asarray(colmap)
        if K is not None:
            # the bounded sketch's slots: uncapped (K >= m), every column takes the next
            # free slot when first seen, which is its compact index; a capped model is not
            # played by this route
            if int(K) < m:
                raise NotImplementedError("the routed sketch pass plays uncapped sketches")
            kt = int(nslots[0])
            for i in np.asarray(order):
                for j in colmap[indices[indptr[i]:indptr[i + 1]]]:
                    cnt[j] += 1
                    if col_slot[j] < 0:
                        slot_col[kt], col_slot[j] = j, kt
                        kt += 1
            nslots[0] = kt
        views = (w[:m], xbar[:, :m], B[:, :, :m])
        for i in np.asarray(order):
            x = np.zeros((1, m))
            a, b = indptr[i], indptr[i + 1]
            x[0, colmap[indices[a:b]]] = data[a:b]
            t = ref.sketch_pass(x, s[i:i + 1], np.zeros(1, dtype=np.intp), *views, nrows, N,
                                dA[:, :m], dB[:, :m], delta, t, lam, eta, schedule, loss,
                                family, r)
        return t
    return sketch_pass


def _routed(name, via):
    module, old, new = _ROUTES[name]

    def make(orig):
        return via(patched_reference(module, old, new))
    return make


# --------------------------------------------------------------------------- reference
def _r_welford(orig):
    def welford_update(x, xbar, Sigma, N):
        N = N + 1
        d_old = x - xbar
        xbar += d_old / N
        Sigma += (np.outer(d_old, x + xbar) - Sigma) / N
        return N
    return welford_update


def _t5_bound(orig):
    def bound(lam, T, Lstar):
        k = 2.0 + lam
        return 2.0 * k / lam + 2.0 * math.sqrt(k * T * Lstar / lam)
    return bound


def _t5_sqrt(orig):
    def bound(lam, T, Lstar):
        k = 4.0 + lam
        return 2.0 * k / lam + 1.0 * math.sqrt(k * T * Lstar / lam)
    return bound


MUTANTS = [
    Mutant("psi_m_root", "psi_M root scaled by 1.01", "loss",
           ("sosl._core._losses_ref", "psi_m"), _m_psi_root),
    Mutant("psi_m_hinge", "psi_M without its variance (the hinge)", "loss",
           ("sosl._core._losses_ref", "psi_m"), _m_psi_hinge),
    Mutant("psi_s_var", "psi_S with the variance doubled", "loss",
           ("sosl._core._losses_ref", "psi_s"), _m_psi_s_var),
    Mutant("dpsi_m_ds2", "d psi_M/d s2 doubled", "loss",
           ("sosl._core._losses_ref", "loss_grad"), lambda o: _loss_grad_variant(o, "ds2")),
    Mutant("dpsi_m_dmu", "d psi_M/d mu = -(1 - b/A)/2", "loss",
           ("sosl._core._losses_ref", "loss_grad"), lambda o: _loss_grad_variant(o, "dmu")),
    Mutant("dpsi_m_kink", "psi_M's one-sided derivative at the kink -1", "loss",
           ("sosl._core._losses_ref", "loss_grad"), lambda o: _loss_grad_variant(o, "kink")),
    Mutant("dpsi_s_dmu", "d psi_S/d mu without the factor 2", "loss",
           ("sosl._core._losses_ref", "loss_grad"), lambda o: _loss_grad_variant(o, "s_dmu")),
    Mutant("grad_w_sigma", "grad_w without the 2 of d s2/d w", "loss",
           ("sosl._core._losses_ref", "grad_w"), _m_grad_w),
    Mutant("step_shift", "compiled learners: step 1/(lam (t + 1))", "compiled",
           ("_run_pass",), _c_step_shift),
    Mutant("no_moments", "compiled learners: class moments not updated", "compiled",
           ("_run_pass",), _c_no_moments),
    Mutant("no_cov", "compiled learners: covariance not updated", "compiled",
           ("_run_pass",), _c_no_cov),
    Mutant("cov_nm1", "compiled learners: covariance normalized by N - 1", "compiled",
           ("_run_pass",), _c_cov_nm1),
    Mutant("skip_first", "compiled learners: first row of a stream skipped", "compiled",
           ("_run_pass",), _c_skip_first),
    Mutant("forget_twice", "compiled learners: forgetting factor applied twice to Sigma",
           "compiled", ("_run_pass",), _c_forget_twice),
    Mutant("kernel_delta_half", "budgeted kernel pass: eq. (28) Delta halved", "routed",
           ("sosl._core._okauc", "kernel_pass"), _routed("kernel_delta_half", kernel_pass_via)),
    Mutant("fd_smallest", "FD shrink by the smallest eigenvalue, not the (r+1)-th", "routed",
           ("sosl._core._sketch", "sketch_pass"), _routed("fd_smallest", sketch_pass_via)),
    Mutant("ref_welford", "NumPy reference: Welford update with x + xbar", "reference",
           ("sosl._core._linear_ref", "welford_update"), _r_welford),
    Mutant("t6_c18", "Theorem 6: C = 3 -> 3/sqrt(10) (18 -> 1.8)", "constant",
           ("verify._regret", "C_PAPER"), lambda o: 3.0 / math.sqrt(10.0),
           ("theorem6", "theorem6c")),
    Mutant("t6_c8", "Theorem 6: C = 2 -> 1 (8 -> 2)", "constant",
           ("verify._regret", "C_SHARP"), lambda o: 1.0, ("theorem6", "theorem6c")),
    Mutant("l4_csharp", "Lemma 4: sharpened C = 2 -> 1.9", "constant",
           ("verify.lemma4_gradient", "C_SHARP"), lambda o: 1.9, ("lemma4", "theorem6c")),
    Mutant("t5_smooth", "Theorem 5: smoothness 4 + lam -> 2 + lam", "constant",
           ("verify.theorem5_oaucs", "bound"), _t5_bound, ("theorem5",)),
    Mutant("t5_sqrt", "Theorem 5: square-root term 2 sqrt(.) -> sqrt(.)", "constant",
           ("verify.theorem5_oaucs", "bound"), _t5_sqrt, ("theorem5",)),
    Mutant("l7_norm", "Lemma 7: norm constant / 3", "constant",
           ("verify.lemma7_theorem8_kernel", "C_NORM"), lambda o: o / 3.0, ("kernel",)),
    Mutant("t8_regret", "Theorem 8: regret constant / 10", "constant",
           ("verify.lemma7_theorem8_kernel", "C_REGRET"), lambda o: o / 10.0, ("kernel",)),
]


# --------------------------------------------------------------------------- running
def _run(checks, seed, out):
    """Run the given discovered checks silently; return their records."""
    recs = []
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        for c in checks:
            recs.extend(H.run_one(c, "quick", seed, out))
    return recs


def _estimators():
    from sosl import OAUCM, OAUCS
    return (OAUCM, OAUCS)


@contextlib.contextmanager
def _applied(m, counter_box):
    """Apply mutant ``m``; ``counter_box['c']`` is the call counter (None for constants)."""
    if m.kind == "compiled":
        counter = counter_box["c"] = _Counter(None)      # one count over both classes

        def make(orig):
            mutated = m.make(orig)

            def _run_pass(self, state, X, s, order):
                counter.calls += 1
                if order is None:           # every row in order (sosl.linear's passes)
                    order = np.arange(X.shape[0], dtype=np.intp)
                return mutated(self, state, X, s, order)
            return _run_pass
        with _replaced_method(_estimators(), "_run_pass", make):
            yield
        return
    import importlib
    module, attr = m.target
    orig = getattr(importlib.import_module(module), attr)
    new = m.make(orig)
    if callable(new):
        new = _Counter(new)
        counter_box["c"] = new
    with _replaced(module, attr, new, everywhere=callable(orig)):
        yield


def baseline(checks, seed, out):
    """Instrumented unmutated run: (records, {target: set of check names calling it})."""
    import importlib
    reach = {}
    counters = {}
    stack = contextlib.ExitStack()
    with stack:
        for m in MUTANTS:
            if m.kind in ("loss", "reference", "routed"):
                key = m.target
                if key not in counters:
                    orig = getattr(importlib.import_module(key[0]), key[1])
                    counters[key] = _Counter(orig)
                    stack.enter_context(_replaced(key[0], key[1], counters[key]))
        run_c = {"c": _Counter(None)}                    # one count over both classes

        def make(orig):
            def _run_pass(self, *a):
                run_c["c"].calls += 1
                return orig(self, *a)
            return _run_pass
        stack.enter_context(_replaced_method(_estimators(), "_run_pass", make))
        recs = []
        for c in checks:
            before = {k: v.calls for k, v in counters.items()}
            before_run = run_c["c"].calls
            recs.extend(_run([c], seed, out))
            for k, v in counters.items():
                if v.calls > before[k]:
                    reach.setdefault(k, set()).add(c.name)
            if run_c["c"].calls > before_run:
                reach.setdefault(("_run_pass",), set()).add(c.name)
    return recs, reach


def score(only=None, seed=0, verbose=True):
    """Run the mutants; return a list of per-mutant result dicts and the score tuple."""
    checks = [c for c in H.discover() if c.run is not None]
    by_name = {c.name: c for c in checks}
    out = Path(tempfile.mkdtemp(prefix="verify_mutants_"))
    t0 = time.perf_counter()
    recs, reach = baseline(checks, seed, out)
    bad = [r for r in recs if not r.ok]
    if bad:
        raise RuntimeError("baseline run not clean: "
                           + "; ".join(f"[{r.check}] {r.name}: {r.outcome}" for r in bad))
    if verbose:
        print(f"baseline: {len(recs)} rows as expected ({time.perf_counter() - t0:.0f} s)",
              flush=True)
    mutants = [m for m in MUTANTS if not only or m.name in only]
    results = []
    for m in mutants:
        t1 = time.perf_counter()
        names = sorted(m.checks) if m.kind == "constant" else sorted(reach.get(m.target, ()))
        why = applicable(m)
        sel = [by_name[n] for n in names if n in by_name] if not why else []
        box = {"c": None}
        rows = []
        if sel:
            with _applied(m, box):
                rows = _run(sel, seed, out)
        calls = box["c"].calls if box["c"] is not None else (1 if sel else 0)
        reachable = bool(sel) and calls > 0
        failing = [f"[{r.check}] {r.name} ({r.outcome}{', neg.' if r.negative else ''})"
                   for r in rows if not r.ok]
        res = dict(name=m.name, what=m.what, kind=m.kind, checks=names, calls=calls, why=why,
                   reachable=reachable, caught=reachable and bool(failing), failing=failing,
                   seconds=time.perf_counter() - t1)
        results.append(res)
        if verbose:
            tag = ("CAUGHT" if res["caught"] else "survived") if reachable else (
                "not applicable" if why else "unreachable")
            print(f"{m.name:<13s} {tag:<11s} {m.what}; checks run: {', '.join(names) or '-'}; "
                  f"{len(failing)} row(s) failing ({res['seconds']:.0f} s)", flush=True)
            for f in failing[:4]:
                print(f"    {f}", flush=True)
    n_reach = sum(r["reachable"] for r in results)
    n_caught = sum(r["caught"] for r in results)
    return results, (n_caught, n_reach, len(results))


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m verify.mutants",
                                 description="verify's mutation score (see the module docstring)")
    ap.add_argument("--only", default=None, help="comma-separated mutant names")
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument("--seed", type=int, default=0, help="seed of the checks (default 0)")
    args = ap.parse_args(argv)
    if args.list:
        for m in MUTANTS:
            print(f"{m.name:<13s} {m.kind:<10s} {m.what}")
        return 0
    only = None
    if args.only:
        only = {k.strip() for k in args.only.split(",") if k.strip()}
        unknown = only - {m.name for m in MUTANTS}
        if unknown:
            print(f"python -m verify.mutants: unknown mutant(s): {', '.join(sorted(unknown))}",
                  file=sys.stderr)
            return 2
    from threadpoolctl import threadpool_limits
    R.use_agg()
    with threadpool_limits(1):
        t0 = time.perf_counter()
        results, (caught, reach, total) = score(only, args.seed)
    unreach = [r["name"] for r in results if not r["reachable"]]
    survived = [r["name"] for r in results if r["reachable"] and not r["caught"]]
    pct = 100.0 * caught / reach if reach else float("nan")
    print(f"\nverify mutation score: {caught}/{reach} reachable mutants caught ({pct:.0f}%); "
          f"{total - reach} unreachable ({', '.join(unreach) or 'none'}); survivors: "
          f"{', '.join(survived) or 'none'}; wall {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
