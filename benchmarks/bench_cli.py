"""``sosl learn`` against Vowpal Wabbit on the same rows in the same order, one pass.

Three jobs, each file generated under a temporary directory (never committed):

* ``libsvm``: a dense LIBSVM file of ``--rows`` rows x 50 features (a noisy linear
  label, seed 0); sosl reads it as LIBSVM, VW the same rows in its own text format
  (``-1 |f 1:0.5 2:...``, ``--loss_function logistic -b 18``).
* ``text``: ``--text-rows`` generated messages (``label<TAB>words``; each class leans on its
  own words), hashed into 2^18 columns by both tools.
* ``stdin``: the ``libsvm`` job with the file piped to standard input.
* ``corpus`` (with ``--corpus FILE[:POSITIVE]``): a real ``label<TAB>text`` file, e.g. the
  SMS spam collection of the shared data, hashed into 2^18 columns by both tools.
* ``tiny``: the first 10 rows of the ``libsvm`` file (start-up: imports and set-up).

sosl reads the LIBSVM width from the rows as they come (no ``--n-features``); a ``--before``
checkout is given ``--n-features 51``, which spares it a scan of the file.

Each tool reports progressive validation (each row scored before it is learned): the AUC
is computed here from the per-row predictions each writes with ``-p`` (the first row, which
no model has seen, left out). Timing: process CPU seconds (user + system) and peak RSS of
each command as a child process (GNU ``time``), the contenders interleaved, min of
``--repeat`` runs. ``--before DIR`` adds the command lines of another sosl checkout (e.g. the
main branch) on the ``libsvm`` job, each ``--blocks`` value run the same way, so that
before/after ratios come from one run. VW runs through its Python package
(``python -m vowpalwabbit``, the ``bench`` extra); without it the script times sosl alone.

    python benchmarks/bench_cli.py [--rows 2000000] [--text-rows 200000] [--repeat 3]
                                   [--before /path/to/main] [--jobs libsvm,text,stdin,tiny]
                                   [--corpus $SOSL_DATA_DIR/highdim/SMSSpamCollection:spam]
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

ROOT = Path(__file__).resolve().parents[1]
HAM = "ok see you later lunch home call mum tonight sure thanks meeting".split()
SPAM = "free win prize cash claim urgent call text offer now winner".split()


def run(cmd, env, stdin_path=None):
    """(CPU seconds, peak RSS in MiB) of one child process, from GNU time (``%U %S %M``):
    the child's own figures, not those of this script's fork."""
    stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
    with tempfile.NamedTemporaryFile("r", suffix=".time") as rec:
        try:
            # cwd: not a checkout, whose sosl/ `python -m` would import first
            proc = subprocess.run(["/usr/bin/time", "-f", "%U %S %M", "-o", rec.name, *cmd],
                                  env=env, stdin=stdin, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, cwd=tempfile.gettempdir())
        finally:
            if stdin_path:
                stdin.close()
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(map(str, cmd))} failed:\n"
                             f"{proc.stderr.decode()[-2000:]}")
        user, system, rss_kib = rec.read().split()[-3:]
    return float(user) + float(system), float(rss_kib) / 1024.0


def make_libsvm(path, vw_path, n, p, seed=0):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=p)
    feats = " ".join(f"{j + 1}:%.6g" for j in range(p))
    with open(path, "w") as f, open(vw_path, "w") as g:
        for a in range(0, n, 50000):
            X = rng.normal(size=(min(50000, n - a), p))
            y = np.where(X @ w + 2.0 * rng.normal(size=X.shape[0]) > 0, 1, -1)
            body = [feats % tuple(row) for row in X.tolist()]
            f.write("".join(f"{lab} {b}\n" for lab, b in zip(y.tolist(), body)))
            g.write("".join(f"{lab} |f {b}\n" for lab, b in zip(y.tolist(), body)))


def make_text(path, vw_path, n, seed=0):
    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i}" for i in range(20000)] + HAM + SPAM)
    with open(path, "w") as f, open(vw_path, "w") as g:
        for _ in range(n):
            spam = rng.random() < 0.2
            own = SPAM if spam else HAM
            words = list(rng.choice(vocab, size=rng.integers(5, 30)))
            words += list(rng.choice(own, size=rng.integers(0, 3)))
            rng.shuffle(words)
            text = " ".join(words)
            f.write(f"{'spam' if spam else 'ham'}\t{text}\n")
            g.write(f"{1 if spam else -1} |w {text}\n")


def make_corpus(src, positive, path, vw_path):
    """A user's ``label<TAB>text`` file (e.g. the SMS spam collection) as the two tools
    read it: whitespace runs made one space; for VW the label as +1/-1 and ``:``/``|``
    (its syntax) made spaces. Returns the number of rows."""
    n = 0
    with open(src, encoding="utf-8") as f, open(path, "w", encoding="utf-8") as g, \
            open(vw_path, "w", encoding="utf-8") as h:
        for line in f:
            label, _, text = line.rstrip("\n").partition("\t")
            text = " ".join(text.split())
            g.write(f"{label}\t{text}\n")
            vw_text = text.replace(":", " ").replace("|", " ")
            h.write(f"{1 if label == positive else -1} |w {vw_text}\n")
            n += 1
    return n


def prog_auc(pred_path, labels):
    pred = np.loadtxt(pred_path, usecols=0)
    return roc_auc_score(labels[1:], pred[1:])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--text-rows", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--before", default=None, help="a sosl checkout to time as 'before'")
    ap.add_argument("--jobs", default="libsvm,text,stdin,tiny")
    ap.add_argument("--blocks", default="1,1000", help="--block values of the sosl runs")
    ap.add_argument("--tmp", default=None, help="where the generated files go (kept)")
    ap.add_argument("--corpus", default=None, metavar="FILE[:POSITIVE]",
                    help="adds the job 'corpus': a label<TAB>text file of your own (the "
                         "positive label after a colon, default spam)")
    args = ap.parse_args()

    py = sys.executable
    tmp = Path(args.tmp or tempfile.mkdtemp(prefix="bench_cli_"))
    tmp.mkdir(parents=True, exist_ok=True)
    env_after = dict(os.environ, PYTHONPATH=str(ROOT))
    env_before = dict(os.environ, PYTHONPATH=str(args.before)) if args.before else None
    have_vw = subprocess.run([py, "-c", "import vowpalwabbit"], capture_output=True
                             ).returncode == 0
    jobs = args.jobs.split(",")
    corpus_rows, corpus_positive = 0, "spam"
    corpus, corpus_vw = tmp / "corpus.tsv", tmp / "corpus.vw"
    if args.corpus:
        src, _, corpus_positive = args.corpus.partition(":")
        corpus_positive = corpus_positive or "spam"
        corpus_rows = make_corpus(src, corpus_positive, corpus, corpus_vw)
        jobs.append("corpus")
    blocks = [int(b) for b in args.blocks.split(",")]

    svm, svm_vw = tmp / f"rows{args.rows}.svm", tmp / f"rows{args.rows}.vw"
    txt, txt_vw = tmp / f"text{args.text_rows}.tsv", tmp / f"text{args.text_rows}.vw"
    if ({"libsvm", "stdin", "tiny"} & set(jobs)) and not svm_vw.exists():
        make_libsvm(svm, svm_vw, args.rows, 50)
    tiny, tiny_vw = tmp / "tiny.svm", tmp / "tiny.vw"
    if "tiny" in jobs:
        for src, dst in ((svm, tiny), (svm_vw, tiny_vw)):
            with open(src) as f, open(dst, "w") as g:
                g.writelines(f.readline() for _ in range(10))
    if "text" in jobs and not txt_vw.exists():
        make_text(txt, txt_vw, args.text_rows)

    def vw(data, out, stdin=False):
        cmd = [py, "-m", "vowpalwabbit", "--loss_function", "logistic", "-b", "18",
               "--quiet", "-p", str(out)]
        return cmd + ["-d", "/dev/stdin" if stdin else str(data)]

    contenders = []            # (job, name, cmd, env, stdin file, predictions file, rows)
    for job in jobs:
        if job == "libsvm" or job == "stdin":
            rows, data = args.rows, svm
            src = "-" if job == "stdin" else str(data)
            for b in blocks:
                pred = tmp / f"{job}_after_{b}.pred"
                contenders.append((job, f"sosl learn --block {b}",
                                   [py, "-m", "sosl", "learn", src,
                                    "--progress", "0", "-q", "--block", str(b), "-p",
                                    str(pred)], env_after,
                                   data if job == "stdin" else None, pred, rows))
            for b in blocks if job == "libsvm" and env_before is not None else ():
                pred = tmp / f"{job}_before_{b}.pred"
                contenders.append((job, f"before: sosl learn --block {b}",
                                   [py, "-m", "sosl", "learn", str(data), "--n-features", "51",
                                    "--progress", "0", "-q", "--block", str(b), "-p",
                                    str(pred)], env_before, None, pred, rows))
            if have_vw:
                pred = tmp / f"{job}_vw.pred"
                contenders.append((job, "vw --loss_function logistic -b 18",
                                   vw(svm_vw, pred, job == "stdin"), env_after,
                                   svm_vw if job == "stdin" else None, pred, rows))
        elif job == "tiny":
            contenders.append((job, "sosl learn", [py, "-m", "sosl", "learn", str(tiny), "-q"],
                               env_after, None, None, 10))
            if env_before is not None:
                contenders.append((job, "before: sosl learn",
                                   [py, "-m", "sosl", "learn", str(tiny), "-q"], env_before,
                                   None, None, 10))
            if have_vw:
                contenders.append((job, "vw --loss_function logistic -b 18",
                                   [py, "-m", "vowpalwabbit", "--loss_function", "logistic",
                                    "-b", "18", "--quiet", "-d", str(tiny_vw)], env_after,
                                   None, None, 10))
        elif job in ("text", "corpus"):
            data, data_vw, positive, rows = ((txt, txt_vw, "spam", args.text_rows)
                                             if job == "text" else
                                             (corpus, corpus_vw, corpus_positive, corpus_rows))
            sides = [("", env_after)] + ([("before: ", env_before)] if env_before else [])
            for tag, env in sides:
                for b in blocks:
                    pred = tmp / f"{job}_{'before' if tag else 'after'}_{b}.pred"
                    contenders.append((job, f"{tag}sosl learn --block {b}",
                                       [py, "-m", "sosl", "learn", str(data), "--positive",
                                        positive, "-b", "18", "--progress", "0", "-q",
                                        "--block", str(b), "-p", str(pred)], env, None, pred,
                                       rows))
            if have_vw:
                pred = tmp / f"{job}_vw.pred"
                contenders.append((job, "vw --loss_function logistic -b 18",
                                   vw(data_vw, pred), env_after, None, pred, rows))

    best = {i: (np.inf, np.inf) for i in range(len(contenders))}
    t0 = time.time()
    for _ in range(args.repeat):                         # interleaved, min of repeats
        for i, (_job, _name, cmd, env, stdin, _pred, _rows) in enumerate(contenders):
            cpu, rss = run(cmd, env, stdin)
            best[i] = (min(best[i][0], cpu), min(best[i][1], rss))

    labels = {}
    print(f"process CPU seconds and peak RSS, min of {args.repeat}, interleaved "
          f"({time.time() - t0:.0f} s wall); progressive AUC from each tool's -p file")
    print(f"{'job':<7} {'command':<36} {'cpu_s':>8} {'rss_MiB':>8} {'rows/s':>10} "
          f"{'prog_auc':>9} {'vw/this cpu':>11}")
    vw_cpu = {c[0]: best[i][0] for i, c in enumerate(contenders) if c[1].startswith("vw")}
    for i, (job, name, _cmd, _env, _stdin, pred, rows) in enumerate(contenders):
        if job not in labels:
            src = {"text": txt_vw, "tiny": tiny_vw, "corpus": corpus_vw}.get(job, svm_vw)
            with open(src, encoding="utf-8") as f:
                labels[job] = np.array([ln.split(" ", 1)[0] == "1" for ln in f], dtype=int)
        cpu, rss = best[i]
        auc = prog_auc(pred, labels[job]) if pred is not None else float("nan")
        ratio = vw_cpu[job] / cpu if job in vw_cpu else float("nan")
        print(f"{job:<7} {name:<36} {cpu:>8.2f} {rss:>8.1f} {rows / cpu:>10.0f} "
              f"{auc:>9.4f} {ratio:>11.2f}")
    print("vw/this cpu: VW's CPU seconds over this command's (1.0 = as fast as VW)")


if __name__ == "__main__":
    main()
