"""Runner of ``python -m verify``: discovery of the check modules, running them, timings.

The rows themselves (the :class:`~verify._records.Record` type, its constructors, the
printed line, the report and its ``ratio`` column) live in :mod:`verify._records`.

How to add a check (read this if you write a new verify module)
---------------------------------------------------------------
1. Drop a module ``verify/<statement>.py`` (name by statement, e.g. ``polk_model_order.py``).
   Modules whose name starts with ``_`` are libraries and are not run. Nothing else has to
   be edited: the module is discovered by :func:`discover` and run by ``python -m verify``.
2. At module level define

   ``NAME``      short id used by ``--only`` (e.g. ``"polk"``);
   ``TITLE``     the statement in a few words (e.g. ``"POLK bounded model order"``);
   ``ORDER``     optional int, position in the table (Lemma 2 = 20, Theorem 6 = 60, ...);
   ``run(profile, seed, out_dir) -> list[Record]``
                 ``profile`` is ``"quick"`` (whole suite well under 2 minutes, used by the
                 tests) or ``"default"``; ``seed`` an int to build every
                 ``np.random.default_rng`` from; ``out_dir`` a ``pathlib.Path`` where
                 figures go (PNG with the Agg backend, see :func:`~verify._records.save_figure`).

3. Build each record with :func:`~verify._records.upper_bound`, ``lower_bound`` or
   ``identity``. State the threshold in the module docstring and in ``statement`` before
   running. Every check returns at least one record with ``negative=True``: a negative
   control that must come out FAIL. The run fails if a positive record FAILs or a
   negative control PASSes. Pass ``evidence="derivation"`` for a row that compares
   formulas or constants only (a sympy simplification, an identity, a constant read back
   against its derivation), so that the report counts it apart from the measured checks.
4. Call :func:`~verify._records.emit` on each record as soon as it is built (prints the
   line), and ``progress`` in loops that take more than a few seconds.

A module that fails to import and an exception raised by ``run`` each become one ERROR
row, which fails the run (a broken check never hides the others and never passes).
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import time
import traceback
from pathlib import Path

from . import _records as R

__all__ = ["Check", "discover", "run_checks", "PROFILES"]

PROFILES = ("quick", "default")


@dataclasses.dataclass
class Check:
    module: str
    name: str
    title: str
    order: int
    run: object = None          # callable, or None when the import failed
    import_error: str = ""


def discover():
    """Every check module of the verify package (import failures included, as such)."""
    import verify
    checks = []
    for info in pkgutil.iter_modules(verify.__path__):
        if info.name.startswith("_"):
            continue
        try:
            mod = importlib.import_module(f"verify.{info.name}")
        except Exception as exc:
            checks.append(Check(info.name, info.name, info.name, 99, None,
                                f"import failed: {exc!r}"))
            continue
        if not hasattr(mod, "run"):
            continue
        checks.append(Check(info.name, getattr(mod, "NAME", info.name),
                            getattr(mod, "TITLE", info.name), int(getattr(mod, "ORDER", 50)),
                            mod.run))
    checks.sort(key=lambda c: (c.order, c.module))
    return checks


def _select(checks, only):
    if not only:
        return checks
    keys = [k.strip().lower() for k in only.split(",") if k.strip()]
    return [c for c in checks
            if any(k == c.name.lower() or k == c.module.lower() or k in c.module.lower()
                   for k in keys)]


def run_checks(profile="default", seed=0, out_dir="verify_out", only=None):
    """Run the selected checks, print their lines, return ``(records, timings)``."""
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {PROFILES}, got {profile!r}")
    R.use_agg()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    from threadpoolctl import threadpool_limits
    with threadpool_limits(1):              # one BLAS thread even if numpy was imported first
        return _run_checks(profile, seed, out_dir, only)


def run_one(check, profile, seed, out_dir):
    """Run one discovered check; a crash becomes an ERROR row. Returns the records."""
    if check.run is None:
        rec = R.error_record(check.title, "module import", check.import_error)
        rec.check = check.name
        R.emit(rec)
        return [rec]
    n_before = R.n_emitted()
    try:
        recs = list(check.run(profile, seed, out_dir))
        if not recs:
            raise RuntimeError("run() returned no record")
    except Exception as exc:
        tb = "".join(traceback.format_exc().splitlines(True)[-6:])
        rec = R.error_record(check.title, "check crashed", f"{exc!r}\n{tb}", seed)
        recs = R.emitted_since(n_before) + [rec]
        R.emit(rec)
    emitted = R.emitted_since(n_before)
    for r in recs:
        r.check = check.name
        if not any(r is e for e in emitted):
            R.emit(r)
    return recs


def _run_checks(profile, seed, out_dir, only):
    records, timings = [], {}
    for c in _select(discover(), only):
        print(f"== {c.title} [{c.name}]", flush=True)
        t0 = time.perf_counter()
        records.extend(run_one(c, profile, seed, out_dir))
        timings[c.name] = time.perf_counter() - t0
        print(f"   ({c.name}: {timings[c.name]:.1f} s)", flush=True)
    return records, timings
