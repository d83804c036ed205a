"""sosl's river adapter on a real text stream: SMS spam through ``BagOfWords()``.

Timings are process CPU time (``time.process_time``), the contenders interleaved, the
minimum of ``--repeat`` runs kept; every ratio is against river's own
``LogisticRegression`` measured in the same run, on the same messages in the same order.

1. **Progressive validation** over the 5,574 messages of the SMS Spam Collection (positive
   'spam', read by ``sosl.datasets.load_sms_spam`` from ``$SOSL_DATA_DIR``): for each
   message ``predict_proba_one`` then ``learn_one`` of ``BagOfWords() | model`` (the
   tokenizer runs inside each pipeline, twice per message, as in
   ``river.evaluate.progressive_val_score``), for ``model`` = ``sosl.river.FTRLAUC()``
   (defaults: feature hashing into 2^20 columns, one-row CSR matrices) and river's
   ``LogisticRegression()``. The probabilities are collected inside the timed loop; river's
   ``metrics.ROCAUC()`` (approximate: a fixed grid of thresholds) is replayed on them
   afterwards, beside the exact AUC of the same probabilities
   (``sklearn.metrics.roc_auc_score``). The tokenizer alone (two ``transform_one`` per
   message) is timed in the same rounds, to show what the models add. Target, stated
   before the run: the adapter's pipeline within 3x the CPU time of river's.
2. **One row**: ``learn_one`` and ``predict_proba_one`` per message on the ``BagOfWords``
   dicts (tokenized once, outside the timing), each model continuing from the state it
   had after the first ``--prefix`` messages (unpickled afresh before each timed run,
   outside the timing): the adapter, the wrapped ``sosl.FTRLAUC`` on the adapter's CSR
   rows (made outside the timing: the adapter's own cost is the difference) and river's
   ``LogisticRegression``.
3. ``--all``: every ``sosl.river`` learner with its default parameters, one progressive
   pass each (no repeats): CPU seconds and the exact AUC, or the error a learner raises
   (OAUCM, OAUCS and AdaOAM index at most 128 keys by default and say so).

Usage: ``python benchmarks/bench_river.py [--repeat 3] [--prefix 3000] [--all]``
"""

import argparse
import os
import pickle
import sys

import numpy as np
from _timing import cpu_time, interleaved_min
from sklearn.metrics import roc_auc_score
from threadpoolctl import threadpool_limits

import sosl
from sosl.datasets import DatasetNotFoundError, load_sms_spam

try:
    from river import feature_extraction, linear_model, metrics
except ImportError:  # pragma: no cover
    print("river is not installed (pip install 'sosl[river]')", file=sys.stderr)
    raise SystemExit(2) from None

import sosl.river as sr


def progressive(model, texts, labels, probs=None):
    """Probabilities of the positive label, each predicted before its message is learned
    (appended to ``probs`` as they come, if given)."""
    probs = [] if probs is None else probs
    for text, label in zip(texts, labels):
        probs.append(model.predict_proba_one(text).get(True, 0.0))
        model.learn_one(text, label)
    return probs


def river_rocauc(labels, probs):
    metric = metrics.ROCAUC()
    for label, p in zip(labels, probs):
        metric.update(label, {False: 1.0 - p, True: p})
    return metric.get()


def pipelines_table(texts, labels, repeat):
    n = len(texts)
    print(f"\n## Progressive validation, SMS spam: {n} messages, {sum(labels)} spam, "
          f"BagOfWords() | model\n")
    makers = {"sosl.river.FTRLAUC()": sr.FTRLAUC,
              "river LogisticRegression()": linear_model.LogisticRegression}
    out = {}

    def run(name):
        def fn():
            out[name] = progressive(feature_extraction.BagOfWords() | makers[name](), texts,
                                    labels)
        return fn

    def tokenize_only():
        bow = feature_extraction.BagOfWords()
        for text in texts:                        # as the pipelines do: predict, then learn
            bow.transform_one(text)
            bow.transform_one(text)

    times = interleaved_min([run(name) for name in makers] + [tokenize_only], repeat)
    print("| model | CPU s (min of %d) | us/message | x river LR | ROCAUC() | exact AUC |"
          % repeat)
    print("|---|---|---|---|---|---|")
    base = times[1]
    for (name, sec) in zip(makers, times):
        probs = out[name]
        print(f"| {name} | {sec:.3f} | {1e6 * sec / n:.1f} | {sec / base:.2f} | "
              f"{river_rocauc(labels, probs):.4f} | {roc_auc_score(labels, probs):.4f} |")
    print(f"| (BagOfWords alone, twice per message) | {times[2]:.3f} | "
          f"{1e6 * times[2] / n:.1f} | {times[2] / base:.2f} | | |")
    ratio = times[0] / base
    print(f"\ntarget: within 3x river LogisticRegression's CPU time: {ratio:.2f}x "
          f"{'PASS' if ratio <= 3 else 'MISS'}")


def one_row_table(texts, labels, repeat, prefix):
    bow = feature_extraction.BagOfWords()
    xs = [bow.transform_one(t) for t in texts]
    head, tail = slice(0, prefix), slice(prefix, len(xs))
    n = len(xs) - prefix
    adapter, lr = sr.FTRLAUC(), linear_model.LogisticRegression()
    for x, label in zip(xs[head], labels[head]):
        adapter.learn_one(x, label)
        lr.learn_one(x, label)
    rows = [adapter._row(x, learn=False)[0] for x in xs[tail]]
    targets = [int(label) for label in labels[tail]]
    blobs = {"adapter": pickle.dumps(adapter), "estimator": pickle.dumps(adapter.estimator_),
             "lr": pickle.dumps(lr)}
    models = {}

    def fresh():
        for key, blob in blobs.items():
            models[key] = pickle.loads(blob)

    def learn(key, inputs, ys):
        def fn():
            m = models[key]
            for x, t in zip(inputs, ys):
                m.learn_one(x, t)
        return fn

    def predict(key, inputs):
        def fn():
            m = models[key]
            for x in inputs:
                m.predict_proba_one(x)
        return fn

    contenders = [("adapter", xs[tail], labels[tail]), ("estimator", rows, targets),
                  ("lr", xs[tail], labels[tail])]
    best_learn = [np.inf] * 3
    best_predict = [np.inf] * 3
    for _ in range(repeat):
        for k, (key, inputs, ys) in enumerate(contenders):
            fresh()
            best_learn[k] = min(best_learn[k], cpu_time(learn(key, inputs, ys)))
            best_predict[k] = min(best_predict[k], cpu_time(predict(key, inputs)))
    print(f"\n## One row: messages {prefix}..{len(xs)} ({n}) as BagOfWords dicts, models "
          f"continuing from the first {prefix}\n")
    print("| call | learn_one us/row | predict_proba_one us/row | learn_one x river LR |")
    print("|---|---|---|---|")
    names = ["sosl.river.FTRLAUC() on the dict",
             "sosl.FTRLAUC on the adapter's CSR row (made outside the timing)",
             "river LogisticRegression() on the dict"]
    for name, tl, tp in zip(names, best_learn, best_predict):
        print(f"| {name} | {1e6 * tl / n:.1f} | {1e6 * tp / n:.1f} | "
              f"{tl / best_learn[2]:.2f} |")


def all_learners(texts, labels):
    print("\n## Every sosl.river learner, defaults, one progressive pass (no repeats)\n")
    print("| model | CPU s | exact AUC |")
    print("|---|---|---|")
    for name in [n for n in sosl.__all__ if n != "__version__"]:
        model = feature_extraction.BagOfWords() | getattr(sr, name)()
        probs = []

        def fn(model=model, probs=probs):
            progressive(model, texts, labels, probs)
        try:
            sec = cpu_time(fn)
        except ValueError as exc:
            print(f"| {name} | refused at message {len(probs)}: {str(exc)[:90]}... | |")
            continue
        print(f"| {name} | {sec:.2f} | {roc_auc_score(labels, probs):.4f} |")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--prefix", type=int, default=3000)
    ap.add_argument("--all", action="store_true", help="every learner, one pass each")
    args = ap.parse_args(argv)
    if args.repeat < 1 or args.prefix < 1:
        ap.error("--repeat and --prefix must be >= 1")
    data_dir = os.environ.get("SOSL_DATA_DIR", "/work/shared/data")
    try:
        texts, y = load_sms_spam(data_dir)
    except DatasetNotFoundError as exc:
        print(f"bench_river: {exc}", file=sys.stderr)
        return 2
    labels = [bool(v) for v in y]
    if args.prefix >= len(texts):
        ap.error(f"--prefix must be below {len(texts)}")
    with threadpool_limits(1):
        pipelines_table(texts, labels, args.repeat)
        one_row_table(texts, labels, args.repeat, args.prefix)
        if args.all:
            all_learners(texts, labels)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
