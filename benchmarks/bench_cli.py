"""``sosl learn`` on the SMS spam stream, beside Vowpal Wabbit on the same rows.

Both tools make one online pass over the 5,574 messages of ``highdim/SMSSpamCollection``
(under ``SOSL_DATA_DIR``) in file order, hashing words into 2^18 columns, and both report
progressive validation: each message is scored before it is learned. The progressive AUC
is computed here from those scores (sosl prints it; for VW it comes from the predictions
file ``-p``, which in training mode holds each example's prediction before its update).

Timing: process CPU seconds of each command run as a child process (user + system, from
``resource.getrusage(RUSAGE_CHILDREN)``), the contenders interleaved, min of ``--repeat``
runs. The start-up of each interpreter and its imports (``import sosl.cli`` and the
learner's class, which ``import sosl`` loads only on first use together with scikit-learn
and SciPy; ``import vowpalwabbit``; each timed the same way) is printed and taken off to
give the rows/s of the pass itself. Each sosl learner runs twice: row by row (``--block 1``,
each message scored then learned) and in blocks (``--block 100``: each block scored by the
model as it stood before it, then learned by one ``partial_fit``; the same final model). VW
runs through its Python package (``python -m vowpalwabbit``, the same engine as the ``vw``
binary); when it is not importable the script says so and times sosl alone. VW is not a
dependency of sosl: install it (``pip install vowpalwabbit``) only to run this comparison,
or point ``--vw-path`` at a directory holding the package.

    python benchmarks/bench_cli.py [--repeat 3] [--bits 18] [--learners FTRLAUC,PAI]
                                   [--block 100] [--vw-path DIR]
"""

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from sklearn.metrics import average_precision_score, roc_auc_score

ROOT = Path(__file__).resolve().parents[1]
TOKEN = re.compile(r"(?u)\b\w\w+\b")         # HashingVectorizer's default token pattern


def child_cpu(cmd, env, stdout=subprocess.DEVNULL):
    """CPU seconds (user + system) of one child process; its stdout text if captured."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(cmd, env=env, stdout=stdout, stderr=subprocess.PIPE, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, cmd))} failed:\n{proc.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, proc.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--bits", type=int, default=18)
    ap.add_argument("--learners", default="FTRLAUC,PAI")
    ap.add_argument("--block", type=int, default=100,
                    help="the --block of the second sosl run of each learner")
    ap.add_argument("--vw-path", default=os.environ.get("SOSL_VW_PATH"),
                    help="a directory to put on PYTHONPATH for `import vowpalwabbit`")
    args = ap.parse_args()

    data_dir = os.environ.get("SOSL_DATA_DIR")
    src = Path(data_dir or "") / "highdim" / "SMSSpamCollection"
    if not data_dir or not src.is_file():
        raise SystemExit("set SOSL_DATA_DIR to a folder holding highdim/SMSSpamCollection")
    lines = src.read_text(encoding="utf-8").splitlines()
    labels = np.array([ln.split("\t", 1)[0] == "spam" for ln in lines], dtype=int)
    n = len(lines)

    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(ROOT), args.vw_path, os.environ.get("PYTHONPATH")) if p))
    py = sys.executable
    have_vw = subprocess.run([py, "-c", "import vowpalwabbit"], env=env,
                             capture_output=True).returncode == 0

    tmp = Path(tempfile.mkdtemp(prefix="bench_cli_"))
    vw_data = tmp / "sms.vw"
    with open(vw_data, "w", encoding="utf-8") as f:
        for ln, lab in zip(lines, labels):
            words = TOKEN.findall(ln.split("\t", 1)[1].lower())
            f.write(f"{1 if lab else -1} |w {' '.join(words)}\n")

    contenders = {}
    for learner in args.learners.split(","):
        for block in (1, args.block):
            contenders[f"sosl learn --learner {learner} --block {block}"] = (
                [py, "-m", "sosl", "learn", str(src), "--format", "text", "--positive", "spam",
                 "--hash-bits", str(args.bits), "--learner", learner, "--progress", "0",
                 "--block", str(block), "-f", str(tmp / f"{learner}_{block}.joblib")],
                f"sosl {learner}")
    if have_vw:
        contenders["vw --loss_function logistic"] = (
            [py, "-m", "vowpalwabbit", "-d", str(vw_data), "-b", str(args.bits),
             "--loss_function", "logistic", "--quiet", "-p", str(tmp / "vw.pred"),
             "-f", str(tmp / "vw.model")], "vw")
        contenders["vw --loss_function hinge"] = (
            [py, "-m", "vowpalwabbit", "-d", str(vw_data), "-b", str(args.bits),
             "--loss_function", "hinge", "--quiet", "-p", str(tmp / "vw_hinge.pred"),
             "-f", str(tmp / "vw_hinge.model")], "vw")
    # what a sosl command imports before its first row: the CLI and the learner's class
    # (import sosl is lazy: the learner's module brings scikit-learn and SciPy)
    startup_cmds = {f"sosl {learner}": [py, "-c", f"import sosl.cli, sosl; sosl.{learner}"]
                    for learner in args.learners.split(",")}
    startup_cmds["vw"] = [py, "-c", "import vowpalwabbit"]

    best = {name: np.inf for name in contenders}
    startup = {k: np.inf for k in startup_cmds if k != "vw" or have_vw}
    outputs = {}
    inrun = {name: np.inf for name in contenders}       # the pass's CPU, as sosl reports it
    for _ in range(args.repeat):                        # interleaved, min of repeats
        for k in startup:
            startup[k] = min(startup[k], child_cpu(startup_cmds[k], env)[0])
        for name, (cmd, _tool) in contenders.items():
            cpu, out = child_cpu(cmd, env, stdout=subprocess.PIPE)
            best[name] = min(best[name], cpu)
            outputs[name] = out
            if _tool != "vw":
                final = [ln for ln in out.splitlines() if ln.endswith("(final)")][-1]
                inrun[name] = min(inrun[name], float(final.split()[4]))

    print(f"SMS spam: {n} rows ({labels.sum()} spam), words hashed to 2^{args.bits}, "
          f"one pass; process CPU seconds, min of {args.repeat}, interleaved")
    print("start-up CPU (interpreter + imports): "
          + ", ".join(f"{k} {v:.2f} s" for k, v in startup.items()))
    print(f"{'command':<44} {'cpu_s':>7} {'net_s':>7} {'rows/s':>9} {'net rows/s':>11} "
          f"{'prog. AUC':>9} {'prog. AP':>9} {'in-run rows/s':>13}")
    for name, (cmd, tool) in contenders.items():
        if tool != "vw":
            final = [ln for ln in outputs[name].splitlines() if ln.endswith("(final)")][-1]
            auc_v, ap_v = (float(v) for v in final.split()[2:4])
        else:
            pred = np.loadtxt(cmd[cmd.index("-p") + 1])
            auc_v = roc_auc_score(labels[1:], pred[1:])
            ap_v = average_precision_score(labels[1:], pred[1:])
        net = best[name] - startup[tool]
        print(f"{name:<44} {best[name]:>7.2f} {net:>7.2f} {n / best[name]:>9.0f} "
              f"{n / net if net > 0 else float('nan'):>11.0f} {auc_v:>9.4f} {ap_v:>9.4f} "
              f"{n / inrun[name] if np.isfinite(inrun[name]) else float('nan'):>13.0f}")
    print("in-run rows/s: the rows over the pass's own CPU seconds as `sosl learn` prints them "
          "(its final line; min of the repeats), free of the start-up's noise; VW prints none")
    if not have_vw:
        print("vw: not timed (the vowpalwabbit package is not importable; pip install "
              "vowpalwabbit, or pass --vw-path)")


if __name__ == "__main__":
    main()
