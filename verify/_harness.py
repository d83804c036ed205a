"""Harness of ``python -m verify``: records, the one-line printer, discovery, the report.

How to add a check (read this if you write a new verify module)
---------------------------------------------------------------
1. Drop a module ``verify/<statement>.py`` (name by statement, e.g. ``polk_model_order.py``).
   Modules whose name starts with ``_`` are ignored. Nothing else has to be edited: the
   module is discovered by :func:`discover` and run by ``python -m verify``.
2. At module level define

   ``NAME``      short id used by ``--only`` (e.g. ``"polk"``);
   ``TITLE``     the statement in a few words (e.g. ``"POLK bounded model order"``);
   ``ORDER``     optional int, position in the table (Lemma 2 = 20, Theorem 6 = 60, ...);
   ``REQUIRES``  optional tuple of dotted names (``("sosl.POLK",)``); if one of them cannot
                 be imported the check prints one row "not available yet" (neither PASS
                 nor FAIL, the exit code is unaffected) and ``run`` is not called;
   ``run(profile, seed, out_dir) -> list[Record]``
                 ``profile`` is ``"quick"`` (whole suite <= 60 s, used by the tests) or
                 ``"default"`` (whole suite <= 10 min on 2 cores); ``seed`` an int to build
                 every ``np.random.default_rng`` from; ``out_dir`` a ``pathlib.Path`` where
                 figures go (write PNG with the Agg backend, see :func:`save_figure`).

3. Build each record with one of the constructors, which fix the kind and compute the
   ratio and the outcome from the numbers (never set ``outcome`` by hand):

   * :func:`upper_bound` -- ``measured <= bound`` (ratio = measured / bound);
   * :func:`lower_bound` -- ``measured >= bound`` (ratio = measured / bound);
   * :func:`identity`    -- ``|measured - theory| <= atol + rtol |theory|``
                            (ratio = |measured - theory| / allowed error);
   * :func:`criterion`   -- any other stated yes/no test, ``holds`` computed by you,
                            with the measured value and threshold it compares.

   State the threshold in the module docstring and in ``statement`` before running.
   Every check returns at least one record with ``negative=True``: a negative control (a
   wrong constant, a broken assumption, a mutated learner) that must come out FAIL. The
   run fails if a positive record FAILs or a negative control PASSes.
4. Call :func:`emit` on each record as soon as it is built (prints the line), and
   :func:`progress` in loops that take more than a few seconds.
5. Optional: set ``headline=True`` on the records whose numbers belong in the closing
   note of the report; append figure file names to ``Record.figures``.

An exception raised by ``run`` becomes one ERROR row (the run fails), so a broken check
never hides the others.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import math
import pkgutil
import sys
import time
import traceback
from pathlib import Path

__all__ = ["Record", "upper_bound", "lower_bound", "identity", "criterion", "emit",
           "progress", "save_figure", "discover", "run_checks", "write_report",
           "format_line", "PLANNED"]

PROFILES = ("quick", "default")

# Checks announced by the issue whose modules may not exist yet: shown as "not available yet".
PLANNED = {
    "lemma7_theorem8_kernel": ("kernel", "Lemma 7 / Theorem 8 (kernel learners, infinite buffer)",
                               80, ("sosl.OKAUCM",)),
    "polk_model_order": ("polk", "POLK bounded model order and KOMP error budget", 90,
                         ("sosl.POLK",)),
}


@dataclasses.dataclass
class Record:
    """One verified claim.

    Attributes
    ----------
    name : str            short label of the row, e.g. ``"Theorem 6 regret"``
    statement : str       the claim with its threshold, in words
    measured : float      the measured value
    threshold : float     the bound / theory value / threshold it is compared with
    kind : str            ``"upper bound"``, ``"lower bound"``, ``"identity"``, ``"criterion"``
                          or ``"not available"``
    ratio : float         measured / bound (bounds), error / allowed error (identities)
    sizes : str           problem sizes, e.g. ``"T=10000 p=30"``
    seed : int | None
    outcome : str         ``"PASS"``, ``"FAIL"``, ``"N/A"`` (not available) or ``"ERROR"``
    negative : bool       True for a negative control (expected outcome FAIL)
    note : str            how it was measured, anything a reader needs
    check : str           NAME of the module that produced it (set by the harness)
    headline : bool       quoted in the closing note of the report
    figures : list[str]   figure file names (relative to the output directory)
    """

    name: str
    statement: str
    measured: float
    threshold: float
    kind: str
    ratio: float
    sizes: str = ""
    seed: int | None = None
    outcome: str = "PASS"
    negative: bool = False
    note: str = ""
    check: str = ""
    headline: bool = False
    figures: list = dataclasses.field(default_factory=list)

    @property
    def ok(self):
        """True when the row is as it should be (negative controls must FAIL)."""
        if self.outcome in ("N/A",):
            return True
        if self.outcome == "ERROR":
            return False
        return (self.outcome == "FAIL") if self.negative else (self.outcome == "PASS")

    def to_dict(self):
        d = dataclasses.asdict(self)
        d["ok"] = self.ok
        for k in ("measured", "threshold", "ratio"):
            v = d[k]
            if isinstance(v, float) and not math.isfinite(v):
                d[k] = str(v)
        return d


def _ratio(num, den):
    num, den = float(num), float(den)
    if den == 0.0:
        return 0.0 if num == 0.0 else math.copysign(math.inf, num)
    return num / den


def _outcome(holds):
    return "PASS" if bool(holds) else "FAIL"


def upper_bound(name, statement, measured, bound, *, sizes="", seed=None, negative=False,
                note="", headline=False, figures=None):
    """Record the claim ``measured <= bound`` (ratio = measured / bound)."""
    measured, bound = float(measured), float(bound)
    return Record(name, statement, measured, bound, "upper bound", _ratio(measured, bound),
                  sizes, seed, _outcome(measured <= bound), negative, note,
                  headline=headline, figures=list(figures or []))


def lower_bound(name, statement, measured, bound, *, sizes="", seed=None, negative=False,
                note="", headline=False, figures=None):
    """Record the claim ``measured >= bound`` (ratio = measured / bound)."""
    measured, bound = float(measured), float(bound)
    return Record(name, statement, measured, bound, "lower bound", _ratio(measured, bound),
                  sizes, seed, _outcome(measured >= bound), negative, note,
                  headline=headline, figures=list(figures or []))


def identity(name, statement, measured, theory, *, rtol=0.0, atol=0.0, sizes="", seed=None,
             negative=False, note="", headline=False, figures=None):
    """Record ``|measured - theory| <= atol + rtol |theory|``.

    The ratio is the error over the allowed error (<= 1 passes).
    """
    measured, theory = float(measured), float(theory)
    allowed = atol + rtol * abs(theory)
    err = abs(measured - theory)
    holds = err <= allowed and math.isfinite(err)
    return Record(name, statement, measured, theory, "identity", _ratio(err, allowed), sizes,
                  seed, _outcome(holds), negative, note, headline=headline,
                  figures=list(figures or []))


def criterion(name, statement, measured, threshold, holds, *, ratio=None, sizes="", seed=None,
              negative=False, note="", headline=False, figures=None):
    """Record a stated yes/no test computed by the caller (``holds``)."""
    measured, threshold = float(measured), float(threshold)
    r = _ratio(measured, threshold) if ratio is None else float(ratio)
    return Record(name, statement, measured, threshold, "criterion", r, sizes, seed,
                  _outcome(holds), negative, note, headline=headline,
                  figures=list(figures or []))


def _fmt(v):
    if isinstance(v, str):
        return v
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    v = float(v)
    if v == 0.0:
        return "0"
    a = abs(v)
    if 0.999 < a < 1.001 and a != 1.0:     # near-tight ratios: show the digits that matter
        return f"{v:.12g}"
    if a >= 1e5 or a < 1e-3:
        return f"{v:.3e}"
    return f"{v:.4g}"


_SYMBOL = {"upper bound": "<=", "lower bound": ">=", "identity": "~=", "criterion": "vs"}


def format_line(r):
    """One printed line: name, sizes, measured vs threshold, ratio, seed, outcome."""
    if r.outcome == "N/A":
        return f"{r.name:<44s} not available yet ({r.note})"
    tag = r.outcome
    if r.negative:
        tag = f"{r.outcome} (negative control, expected FAIL{'' if r.ok else ' -- UNEXPECTED'})"
    elif not r.ok:
        tag = f"{r.outcome} <<<"
    sizes = f"  {r.sizes}" if r.sizes else ""
    seed = f"  seed {r.seed}" if r.seed is not None else ""
    sym = _SYMBOL.get(r.kind, "vs")
    return (f"{r.name:<44s}{sizes}  measured {_fmt(r.measured)} {sym} {_fmt(r.threshold)}"
            f"  ratio {_fmt(r.ratio)}{seed}  {tag}")


_EMITTED = []


def emit(record):
    """Print the record's line now (stdout) and return it."""
    print(format_line(record), flush=True)
    _EMITTED.append(record)
    return record


_LAST_PROGRESS = [0.0]


def progress(label, i=None, n=None, every=2.0):
    """Progress of a long check on stderr, at most once every ``every`` seconds."""
    now = time.monotonic()
    if i is not None and n is not None and i < n - 1 and now - _LAST_PROGRESS[0] < every:
        return
    _LAST_PROGRESS[0] = now
    frac = f" {i + 1}/{n}" if (i is not None and n is not None) else ""
    print(f"  .. {label}{frac}", file=sys.stderr, flush=True)


def save_figure(fig, out_dir, stem):
    """Save a matplotlib figure as ``<out_dir>/<stem>.png`` and return the file name."""
    import matplotlib.pyplot as plt
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    name = f"{stem}.png"
    fig.savefig(out_dir / name, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return name


def use_agg():
    """Select the Agg backend (call before importing pyplot)."""
    import matplotlib
    matplotlib.use("Agg", force=True)


# ---------------------------------------------------------------------------------------
# discovery
# ---------------------------------------------------------------------------------------
@dataclasses.dataclass
class Check:
    module: str
    name: str
    title: str
    order: int
    requires: tuple
    run: object = None          # callable or None when the module does not exist / import failed
    import_error: str = ""


def _importable(dotted):
    """True if ``a.b.C`` can be imported (module ``a.b``, attribute ``C``) or as a module."""
    try:
        importlib.import_module(dotted)
        return True
    except Exception:
        pass
    mod, _, attr = dotted.rpartition(".")
    if not mod:
        return False
    try:
        return hasattr(importlib.import_module(mod), attr)
    except Exception:
        return False


def missing_requirements(requires):
    return [d for d in requires if not _importable(d)]


def discover():
    """Every check module of the verify package, plus planned ones that do not exist yet."""
    import verify
    checks = []
    seen = set()
    for info in pkgutil.iter_modules(verify.__path__):
        if info.name.startswith("_"):
            continue
        seen.add(info.name)
        try:
            mod = importlib.import_module(f"verify.{info.name}")
        except Exception as exc:
            planned = PLANNED.get(info.name, (info.name, info.name, 99, ()))
            checks.append(Check(info.name, planned[0], planned[1], planned[2], planned[3],
                                None, f"import failed: {exc!r}"))
            continue
        if not hasattr(mod, "run"):
            continue
        checks.append(Check(info.name, getattr(mod, "NAME", info.name),
                            getattr(mod, "TITLE", info.name), int(getattr(mod, "ORDER", 50)),
                            tuple(getattr(mod, "REQUIRES", ())), mod.run))
    for module, (name, title, order, requires) in PLANNED.items():
        if module not in seen:
            checks.append(Check(module, name, title, order, requires, None,
                                "module not written yet"))
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
    use_agg()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    try:                                    # one BLAS thread even if numpy was imported first
        from threadpoolctl import threadpool_limits
        limiter = threadpool_limits(1)
    except Exception:
        limiter = None
    try:
        return _run_checks(profile, seed, out_dir, only)
    finally:
        if limiter is not None:
            limiter.restore_original_limits()


def _run_checks(profile, seed, out_dir, only):
    records, timings = [], {}
    for c in _select(discover(), only):
        print(f"== {c.title} [{c.name}]", flush=True)
        missing = missing_requirements(c.requires)
        if c.run is None and not missing and c.import_error.startswith("import failed"):
            rec = Record(c.title, "module import", math.nan, math.nan, "criterion", math.nan,
                         outcome="ERROR", note=c.import_error)
            rec.check = c.name
            emit(rec)
            records.append(rec)
            continue
        if c.run is None or missing:
            why = (f"requires {', '.join(missing)}" if missing else c.import_error)
            rec = Record(c.title, "not available yet", math.nan, math.nan, "not available",
                         math.nan, outcome="N/A", note=why)
            rec.check = c.name
            emit(rec)
            records.append(rec)
            continue
        t0 = time.perf_counter()
        n_before = len(_EMITTED)
        try:
            recs = list(c.run(profile, seed, out_dir))
            if not recs:
                raise RuntimeError("run() returned no record")
        except Exception as exc:
            tb = "".join(traceback.format_exc().splitlines(True)[-6:])
            rec = Record(c.title, "check crashed", math.nan, math.nan, "criterion", math.nan,
                         seed=seed, outcome="ERROR", note=f"{exc!r}\n{tb}")
            recs = _EMITTED[n_before:] + [rec]
            emit(rec)
        for r in recs:
            r.check = c.name
            if not any(r is e for e in _EMITTED):
                emit(r)
        timings[c.name] = time.perf_counter() - t0
        print(f"   ({c.name}: {timings[c.name]:.1f} s)", flush=True)
        records.extend(recs)
    return records, timings


# ---------------------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------------------
def _md_escape(s):
    return str(s).replace("|", "\\|").replace("\n", " ")


def write_report(records, timings, out_dir, *, profile, seed, argv=None, wall=None):
    """Write ``report.md`` and ``results.json`` into ``out_dir``; return their paths."""
    out_dir = Path(out_dir)
    n_fail = sum(not r.ok for r in records)
    n_neg = sum(r.negative for r in records)
    n_na = sum(r.outcome == "N/A" for r in records)
    payload = {
        "profile": profile, "seed": seed, "argv": argv, "wall_seconds": wall,
        "timings_seconds": timings, "all_ok": n_fail == 0,
        "records": [r.to_dict() for r in records],
    }
    (out_dir / "results.json").write_text(json.dumps(payload, indent=1, default=str))

    lines = ["# sosl verification report", "",
             f"Profile `{profile}`, seed {seed}, wall time "
             f"{'-' if wall is None else f'{wall:.1f} s'}. Command: `{' '.join(argv or [])}`.", "",
             f"**{'ALL CHECKS AS EXPECTED' if n_fail == 0 else f'{n_fail} ROW(S) NOT AS EXPECTED'}**"
             f" -- {len(records)} rows, {n_neg} negative controls (each must FAIL), "
             f"{n_na} not available yet.", "",
             "| check | claim | sizes | measured | kind | threshold | ratio | seed | outcome |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in records:
        out = r.outcome if r.outcome == "N/A" else r.outcome
        if r.outcome == "N/A":
            out = "not available yet"
        elif r.negative:
            out = f"{r.outcome} (negative control{'' if r.ok else ', UNEXPECTED'})"
        elif not r.ok:
            out = f"**{r.outcome}**"
        lines.append("| " + " | ".join(_md_escape(x) for x in (
            r.name, r.statement, r.sizes, _fmt(r.measured), r.kind, _fmt(r.threshold),
            _fmt(r.ratio), "-" if r.seed is None else r.seed, out)) + " |")
    lines += ["", "## Notes", ""]
    for r in records:
        if r.note:
            lines.append(f"- **{_md_escape(r.name)}**: {_md_escape(r.note)}")
    figs = [f for r in records for f in r.figures]
    if figs:
        lines += ["", "## Figures", ""]
        for f in dict.fromkeys(figs):
            lines.append(f"![{f}]({f})")
    heads = [r for r in records if r.headline]
    lines += ["", "## Closing note: measured figures", ""]
    for r in heads:
        lines.append(f"- {r.name}: measured {_fmt(r.measured)} vs {_fmt(r.threshold)} "
                     f"(ratio {_fmt(r.ratio)}, {r.sizes}) -- {r.outcome}")
    if timings:
        lines += ["", "Time per check: " + ", ".join(f"{k} {v:.1f} s" for k, v in timings.items())]
    (out_dir / "report.md").write_text("\n".join(lines) + "\n")
    return out_dir / "report.md", out_dir / "results.json"
