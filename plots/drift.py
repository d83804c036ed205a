"""Rolling AUC over a drifting imbalanced stream, with the drift rows and the detections.

The stream is :func:`sosl.datasets.make_drift_stream` (Gaussian classes, positive rate
``--rate``; ``--drift recurring`` by default: the separating direction turns at a quarter,
half and three quarters of the stream and turns back in between). OAUC-M with no
forgetting, with ``forgetting=0.99`` and with ``forgetting="auto"`` are run test-then-train by
:func:`sosl.evaluate.prequential` (with ``--delay`` rows of label delay). The figure draws
each learner's rolling AUC (:class:`sosl.metrics.RollingAUC`), the drift rows as dotted
vertical lines, the rows where ``"auto"`` detected a change (``drift_.detections``,
counted in rows learned, placed at the row then being scored) as triangles on its curve:
filled where it answered, open where the label delay rule left the change unanswered
(``"auto"`` is told the delay: ``label_delay=--delay``), and the rows where the lead of
its two memories changed (``drift_.selector.switches``) as open diamonds.
"""

import sys

import numpy as np

from sosl import OAUCM
from sosl.datasets import make_drift_stream
from sosl.evaluate import prequential
from sosl.metrics import RollingAUC, StreamingAUC

from ._common import LEGEND_FONTSIZE, legend_outside, parser, plot_kw, plt, save, style

LEARNERS = {
    "OAUC-M": lambda d: OAUCM(),
    "OAUC-M forgetting 0.99": lambda d: OAUCM(forgetting=0.99),
    "OAUC-M forgetting auto": lambda d: OAUCM(forgetting="auto", label_delay=d),
}


def main(argv=None):
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=None, help="rows (default 60000; quick 6000)")
    p.add_argument("--rate", type=float, default=0.02, help="positive rate")
    p.add_argument("--window", type=int, default=None,
                   help="rolling AUC window (default 5000; quick 1000)")
    p.add_argument("--delay", type=int, default=0, help="label delay in rows")
    p.add_argument("--drift", choices=("abrupt", "gradual", "recurring"), default="recurring")
    args = p.parse_args(argv)
    n = args.n if args.n is not None else (6000 if args.quick else 60_000)
    window = args.window if args.window is not None else (1000 if args.quick else 5000)
    if n < 100 or window < 1 or not 0 < args.rate < 1 or args.delay < 0:
        p.error("need --n >= 100, --window >= 1, 0 < --rate < 1 and --delay >= 0")
    X, y, concept = make_drift_stream(n, 20, drift=args.drift, positive_rate=args.rate,
                                      random_state=args.seed)
    drifts = np.flatnonzero(np.diff(concept)) + 1
    every = max(1, n // 300)
    print(f"stream n={n} p=20 rate={args.rate:g} {args.drift} drifts at "
          f"{drifts.tolist() if args.drift != 'gradual' else [n // 2]} window={window} "
          f"delay={args.delay} seed={args.seed}")

    fig, ax = plt.subplots(figsize=(10.5, 4.8))
    lows = []
    for k, (name, make) in enumerate(LEARNERS.items()):
        model = make(args.delay)
        res = prequential(model, X, y, every=every, delay=args.delay,
                          metrics={"rolling": RollingAUC(window), "all": StreamingAUC()})
        rolling = np.asarray(res["rolling"], dtype=float)
        ax.plot(res.steps, rolling, **plot_kw(name, len(res.steps), 3 * k, n_markers=10,
                                              label=f"{name} (AUC {res['all'][-1]:.4f})"))
        lows.append(np.nanmin(rolling))
        line = f"{name:24s} prequential AUC {res['all'][-1]:.4f}"
        ctl = getattr(model, "drift_", None)
        if ctl is not None:
            held = set(ctl.unanswered)
            for answered in (True, False):
                rows = [t for t in ctl.detections if (t not in held) == answered]
                if not rows:
                    continue
                det = np.asarray(rows, dtype=np.int64) + args.delay
                idx = np.clip(np.searchsorted(res.steps, det), 0, len(res.steps) - 1)
                color = style(name)["color"]
                ax.plot(res.steps[idx], rolling[idx], ls="none", marker="v", ms=9,
                        color=color, mfc=color if answered else "white", zorder=6,
                        label="detections (\"auto\")" if answered
                        else "detections left unanswered (label delay)")
                line += (f"  {'answered' if answered else 'unanswered'} at rows "
                         f"{det.tolist()}")
            sel = getattr(ctl, "selector", None)
            if sel is not None and sel.switches:      # the lead of the two memories changed
                sw = np.asarray(sel.switches, dtype=np.int64) + args.delay
                idx = np.clip(np.searchsorted(res.steps, sw), 0, len(res.steps) - 1)
                ax.plot(res.steps[idx], rolling[idx], ls="none", marker="D", ms=7,
                        color=style(name)["color"], mfc="white", zorder=6,
                        label="lead changed (\"auto\": detector / 0.99 memory)")
                line += f"  lead changed at rows {sw.tolist()}"
        print(line)
    for i, d in enumerate(drifts if args.drift != "gradual" else [n // 2]):
        ax.axvline(d, color="0.4", lw=0.9, ls=":", label="drift" if i == 0 else None)
    lo = max(0.0, np.floor(20 * min(lows)) / 20 - 0.05) if np.isfinite(min(lows)) else 0.3
    ax.set(xlabel="rows scored (test-then-train)", ylabel=f"rolling AUC ({window} rows)",
           ylim=(lo, 1.0), title=f"{args.drift.capitalize()} drift, {100 * args.rate:g}% "
           f"positives, label delay {args.delay} (seed {args.seed})")
    ax.grid(alpha=0.3)
    legend_outside(ax, fontsize=LEGEND_FONTSIZE)
    paths = save(fig, args.out, "drift")
    print("\n".join(paths))
    return paths


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
