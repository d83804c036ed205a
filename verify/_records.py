"""Records of ``python -m verify``: one verified claim per row, its printed line, the report.

A check module builds each row with one of the constructors below, which fix the kind of
the claim and compute the ratio and the outcome from the numbers (a module never sets the
outcome by hand):

* :func:`upper_bound` -- the claim ``measured <= bound``;
* :func:`lower_bound` -- the claim ``measured >= bound``;
* :func:`identity`    -- the claim ``|measured - theory| <= atol + rtol |theory|``.

The ``ratio`` column (:data:`RATIO_LEGEND`, printed at the top of the report) is
``measured / bound`` for both kinds of bound and ``|measured - theory| / (atol + rtol
|theory|)``, the error in units of the allowed error, for identities. An upper bound or an
identity passes when its ratio is at most 1, a lower bound when it is at least 1 (for a
positive bound); a ratio far below 1 on an upper bound shows how loose the bound is.

A row with ``negative=True`` is a negative control (a wrong constant, a broken assumption,
a mutated learner) and is as expected only when it FAILs.

Each row also has an ``evidence`` (:data:`EVIDENCES`, :data:`EVIDENCE_LEGEND`):
``"measured"`` when one side of the claim is produced by running the library (or the
library's functions) on data, so that a wrong library can make it fail; ``"derivation"``
when both sides are formulas or constants (a sympy simplification, an identity such as
H_T <= 1 + ln T, a constant in the code read back against its derivation): such a row
pins verify's own algebra and constants but cannot fail by measuring the library. The
report and the summary count the two apart.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
import time
from pathlib import Path

__all__ = ["Record", "upper_bound", "lower_bound", "identity", "emit", "progress",
           "save_figure", "figure_caption", "FIGURE_CAPTIONS", "use_agg", "format_line",
           "write_report", "summary_counts",
           "summary_text", "RATIO_LEGEND", "EVIDENCE_LEGEND", "KINDS", "EVIDENCES"]

KINDS = ("upper bound", "lower bound", "identity")
EVIDENCES = ("measured", "derivation")

EVIDENCE_LEGEND = (
    "The `evidence` column: `measured` rows run the library (its estimators, passes or "
    "loss functions) on data, so a wrong library can make them fail; `derivation` rows "
    "compare formulas or constants only (sympy simplifications, identities such as "
    "H_T <= 1 + ln T, a constant in verify's code read back against its derivation): they "
    "pin verify's own algebra and constants and cannot fail by measuring the library.")

RATIO_LEGEND = (
    "The `ratio` column: for an upper bound (`measured <= bound`) it is measured / bound, "
    "and the row passes when ratio <= 1 (a ratio of 0.01 means the bound is 100x loose on "
    "that data); for a lower bound (`measured >= bound`) it is measured / bound, passing "
    "when ratio >= 1; for an identity (`|measured - theory| <= atol + rtol |theory|`) it is "
    "|measured - theory| / (atol + rtol |theory|), the error in units of the allowed error, "
    "passing when ratio <= 1 (0 when both are 0, inf when the allowed error is 0 and the "
    "error is not). Negative controls are expected to FAIL, i.e. to have a ratio on the "
    "wrong side of 1.")


@dataclasses.dataclass
class Record:
    """One verified claim.

    Attributes
    ----------
    name : str            short label of the row, e.g. ``"Theorem 6 regret"``
    statement : str       the claim with its threshold, in words
    measured : float      the measured value
    threshold : float     the bound or theory value it is compared with
    kind : str            ``"upper bound"``, ``"lower bound"`` or ``"identity"``
                          (``"error"`` for a check that crashed)
    ratio : float         see :data:`RATIO_LEGEND`
    sizes : str           problem sizes, e.g. ``"T=10000 p=30"``
    seed : int | None
    outcome : str         ``"PASS"``, ``"FAIL"`` or ``"ERROR"``
    negative : bool       True for a negative control (expected outcome FAIL)
    note : str            how it was measured, anything a reader needs
    check : str           NAME of the module that produced it (set by the runner)
    headline : bool       quoted in the closing note of the report
    figures : list[str]   figure file names (relative to the output directory)
    evidence : str        ``"measured"`` or ``"derivation"`` (see :data:`EVIDENCE_LEGEND`)
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
    evidence: str = "measured"

    @property
    def ok(self):
        """True when the row is as it should be (negative controls must FAIL)."""
        if self.outcome not in ("PASS", "FAIL"):
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


def error_record(title, statement, note, seed=None):
    """The row of a check that crashed or could not be imported (fails the run)."""
    return Record(title, statement, math.nan, math.nan, "error", math.nan, seed=seed,
                  outcome="ERROR", note=note)


def _ratio(num, den):
    num, den = float(num), float(den)
    if den == 0.0:
        return 0.0 if num == 0.0 else math.copysign(math.inf, num)
    return num / den


def _outcome(holds):
    return "PASS" if bool(holds) else "FAIL"


def _evidence(evidence):
    if evidence not in EVIDENCES:
        raise ValueError(f"evidence must be one of {EVIDENCES}, got {evidence!r}")
    return evidence


def upper_bound(name, statement, measured, bound, *, sizes="", seed=None, negative=False,
                note="", headline=False, figures=None, evidence="measured"):
    """Record the claim ``measured <= bound`` (ratio = measured / bound)."""
    measured, bound = float(measured), float(bound)
    return Record(name, statement, measured, bound, "upper bound", _ratio(measured, bound),
                  sizes, seed, _outcome(measured <= bound), negative, note,
                  headline=headline, figures=list(figures or []),
                  evidence=_evidence(evidence))


def lower_bound(name, statement, measured, bound, *, sizes="", seed=None, negative=False,
                note="", headline=False, figures=None, evidence="measured"):
    """Record the claim ``measured >= bound`` (ratio = measured / bound)."""
    measured, bound = float(measured), float(bound)
    return Record(name, statement, measured, bound, "lower bound", _ratio(measured, bound),
                  sizes, seed, _outcome(measured >= bound), negative, note,
                  headline=headline, figures=list(figures or []),
                  evidence=_evidence(evidence))


def identity(name, statement, measured, theory, *, rtol=0.0, atol=0.0, sizes="", seed=None,
             negative=False, note="", headline=False, figures=None, evidence="measured"):
    """Record ``|measured - theory| <= atol + rtol |theory|``.

    The ratio is the error over the allowed error (<= 1 passes).
    """
    measured, theory = float(measured), float(theory)
    allowed = atol + rtol * abs(theory)
    err = abs(measured - theory)
    holds = err <= allowed and math.isfinite(err)
    return Record(name, statement, measured, theory, "identity", _ratio(err, allowed), sizes,
                  seed, _outcome(holds), negative, note, headline=headline,
                  figures=list(figures or []), evidence=_evidence(evidence))


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


_SYMBOL = {"upper bound": "<=", "lower bound": ">=", "identity": "~="}


def format_line(r):
    """One printed line: name, sizes, measured vs threshold, ratio, seed, outcome."""
    tag = r.outcome
    if r.negative:
        tag = f"{r.outcome} (negative control, expected FAIL{'' if r.ok else ' -- UNEXPECTED'})"
    elif not r.ok:
        tag = f"{r.outcome} <<<"
    sizes = f"  {r.sizes}" if r.sizes else ""
    seed = f"  seed {r.seed}" if r.seed is not None else ""
    sym = _SYMBOL.get(r.kind, "vs")
    ev = "  [derivation]" if r.evidence == "derivation" else ""
    return (f"{r.name:<44s}{sizes}  measured {_fmt(r.measured)} {sym} {_fmt(r.threshold)}"
            f"  ratio {_fmt(r.ratio)}{seed}{ev}  {tag}")


def summary_counts(records):
    """Counts of the rows by evidence and role: a dict with the keys ``rows``,
    ``measured``, ``measured_negative``, ``derivation``, ``derivation_negative``
    (positive rows and negative controls apart) and ``errors`` (crashed checks)."""
    out = {"rows": len(records), "errors": sum(r.outcome == "ERROR" for r in records)}
    for ev in EVIDENCES:
        rows = [r for r in records if r.evidence == ev and r.outcome != "ERROR"]
        out[ev] = sum(not r.negative for r in rows)
        out[f"{ev}_negative"] = sum(r.negative for r in rows)
    return out


def summary_text(records):
    """One sentence: how many measured checks and derivations, with their negative controls."""
    c = summary_counts(records)
    text = (f"{c['rows']} rows: {c['measured']} measured checks (+ {c['measured_negative']} "
            f"negative controls) and {c['derivation']} derivations (+ "
            f"{c['derivation_negative']} negative controls)")
    if c["errors"]:
        text += f", {c['errors']} errors"
    return text


_EMITTED = []


def emit(record):
    """Print the record's line now (stdout) and return it."""
    print(format_line(record), flush=True)
    _EMITTED.append(record)
    return record


def emitted_since(n):
    """The records emitted after the first ``n`` (used by the runner after a crash)."""
    return _EMITTED[n:]


def n_emitted():
    return len(_EMITTED)


_LAST_PROGRESS = [0.0]


def progress(label, i=None, n=None, every=2.0):
    """Progress of a long check on stderr, at most once every ``every`` seconds."""
    now = time.monotonic()
    if i is not None and n is not None and i < n - 1 and now - _LAST_PROGRESS[0] < every:
        return
    _LAST_PROGRESS[0] = now
    frac = f" {i + 1}/{n}" if (i is not None and n is not None) else ""
    print(f"  .. {label}{frac}", file=sys.stderr, flush=True)


def use_agg():
    """Select the Agg backend (call before importing pyplot) and the figures' one style
    table (``plots._common.RC``)."""
    import matplotlib
    matplotlib.use("Agg", force=True)
    from plots._common import apply_style
    apply_style()


#: Caption of every figure saved by :func:`save_figure` in this process, by file name.
FIGURE_CAPTIONS = {}


def save_figure(fig, out_dir, stem, caption=""):
    """Save a matplotlib figure as ``<out_dir>/<stem>.png`` and return the file name.

    ``caption`` (one or two sentences: what is plotted and how it was computed) is
    written under the figure in ``report.md`` (:data:`FIGURE_CAPTIONS`).
    """
    import matplotlib.pyplot as plt
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    name = f"{stem}.png"
    fig.savefig(out_dir / name, dpi=110, bbox_inches="tight")
    plt.close(fig)
    if caption:
        FIGURE_CAPTIONS[name] = " ".join(str(caption).split())
    return name


def figure_caption(name, records):
    """The caption of figure ``name``: the one given to :func:`save_figure`, else a
    sentence naming the rows (and checks) that show it."""
    if FIGURE_CAPTIONS.get(name):
        return FIGURE_CAPTIONS[name]
    rows = [r for r in records if name in r.figures]
    what = "; ".join(f"{r.name} ({r.statement})" for r in rows) or "no row"
    checks = ", ".join(dict.fromkeys(r.check for r in rows if r.check)) or "-"
    return f"Figure of the check(s) {checks}, drawn from the numbers of the row(s): {what}."


# ---------------------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------------------
def _md_escape(s):
    return str(s).replace("|", "\\|").replace("\n", " ")


def write_report(records, timings, out_dir, *, profile, seed, argv=None, wall=None):
    """Write ``report.md`` and ``results.json`` into ``out_dir``; return their paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    n_fail = sum(not r.ok for r in records)
    n_neg = sum(r.negative for r in records)
    payload = {
        "profile": profile, "seed": seed, "argv": argv, "wall_seconds": wall,
        "timings_seconds": timings, "all_ok": n_fail == 0, "ratio_legend": RATIO_LEGEND,
        "evidence_legend": EVIDENCE_LEGEND, "counts": summary_counts(records),
        "records": [r.to_dict() for r in records],
        "figure_captions": {f: figure_caption(f, records)
                            for f in dict.fromkeys(f for r in records for f in r.figures)},
    }
    (out_dir / "results.json").write_text(json.dumps(payload, indent=1, default=str))

    verdict = "ALL CHECKS AS EXPECTED" if n_fail == 0 else f"{n_fail} ROW(S) NOT AS EXPECTED"
    lines = ["# sosl verification report", "",
             f"Profile `{profile}`, seed {seed}, wall time "
             f"{'-' if wall is None else f'{wall:.1f} s'}. Command: `{' '.join(argv or [])}`.", "",
             f"**{verdict}** -- {summary_text(records)}; {n_neg} negative controls in all "
             "(each must FAIL).", "", RATIO_LEGEND, "", EVIDENCE_LEGEND, "",
             "| check | claim | sizes | measured | kind | threshold | ratio | seed | evidence "
             "| outcome |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in records:
        out = r.outcome
        if r.negative:
            out = f"{r.outcome} (negative control{'' if r.ok else ', UNEXPECTED'})"
        elif not r.ok:
            out = f"**{r.outcome}**"
        lines.append("| " + " | ".join(_md_escape(x) for x in (
            r.name, r.statement, r.sizes, _fmt(r.measured), r.kind, _fmt(r.threshold),
            _fmt(r.ratio), "-" if r.seed is None else r.seed, r.evidence, out)) + " |")
    lines += ["", "## Notes", ""]
    for r in records:
        if r.note:
            lines.append(f"- **{_md_escape(r.name)}**: {_md_escape(r.note)}")
    figs = [f for r in records for f in r.figures]
    if figs:
        lines += ["", "## Figures", ""]
        for i, f in enumerate(dict.fromkeys(figs), 1):
            lines += [f"![{f}]({f})", "",
                      f"*Figure {i} ({_md_escape(f)}).* {_md_escape(figure_caption(f, records))}",
                      ""]
    heads = [r for r in records if r.headline]
    lines += ["", "## Closing note: measured figures", ""]
    for r in heads:
        lines.append(f"- {r.name}: measured {_fmt(r.measured)} vs {_fmt(r.threshold)} "
                     f"(ratio {_fmt(r.ratio)}, {r.sizes}) -- {r.outcome}")
    if timings:
        lines += ["", "Time per check: " + ", ".join(f"{k} {v:.1f} s" for k, v in timings.items())]
    (out_dir / "report.md").write_text("\n".join(lines) + "\n")
    return out_dir / "report.md", out_dir / "results.json"
