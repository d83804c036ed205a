"""Command line: ``python -m verify [--quick] [--only NAMES] [--out DIR] [--seed N]``."""

import argparse
import sys
import time

from ._harness import _select, discover, run_checks
from ._records import summary_text, write_report


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    ap = argparse.ArgumentParser(prog="python -m verify", description=__doc__)
    ap.add_argument("--quick", action="store_true",
                    help="small sizes, whole suite in about a minute (used by the tests)")
    ap.add_argument("--only", default=None,
                    help="comma-separated check names or module names (substring match)")
    ap.add_argument("--out", default="verify_out", help="output directory (default verify_out/)")
    ap.add_argument("--seed", type=int, default=0, help="base random seed (default 0)")
    args = ap.parse_args(argv)
    if args.only is not None and not _select(discover(), args.only):
        names = ", ".join(c.name for c in discover())
        print(f"python -m verify: --only {args.only!r} matches no check (checks: {names})",
              file=sys.stderr)
        return 2
    profile = "quick" if args.quick else "default"
    t0 = time.perf_counter()
    records, timings = run_checks(profile, args.seed, args.out, args.only)
    wall = time.perf_counter() - t0
    report, results = write_report(records, timings, args.out, profile=profile, seed=args.seed,
                                   argv=["python", "-m", "verify"] + argv, wall=wall)
    bad = [r for r in records if not r.ok]
    print(f"\n{summary_text(records)}; {len(bad)} not as expected, wall {wall:.1f} s; "
          f"wrote {report} and {results}")
    for r in bad:
        print(f"  NOT AS EXPECTED: [{r.check}] {r.name}: {r.outcome} {r.note[:200]}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
