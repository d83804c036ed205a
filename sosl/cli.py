"""The ``sosl`` command line: train and score online AUC learners on a stream of rows.

``sosl learn`` reads labelled rows (LIBSVM, CSV, or ``label<TAB>text`` lines) from a file or
standard input, turns each chunk of rows into a matrix (feature hashing or column indices),
makes one online pass with any sosl learner and prints progressive-validation figures: each
row is scored by the model as it stands *before* the model learns it, and the AUC and
average precision of those scores are reported every ``--progress`` rows. ``-f`` saves the
model together with the feature setup it was trained with; ``-i`` continues training a
saved model. ``sosl score`` writes one score per input row with a saved model.

The commands follow Vowpal Wabbit's habits (``vw -d train -f model``, ``vw -t -i model``)::

    sosl learn train.txt --format text --positive spam --hash-bits 18 -f model.joblib
    sosl learn more.txt -i model.joblib -f model.joblib      # continue training
    sosl score test.txt -i model.joblib --out scores.txt

Misuse (a bad option, a missing file, an unknown learner or parameter, a malformed line)
prints one line ``sosl: error: ...`` on standard error and exits with status 2; a failure
while learning (e.g. a model too large for memory) exits with status 1.

Model files are joblib pickles: load only files you trust.
"""

import argparse
import ast
import math
import os
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp

__all__ = ["main", "LEARNERS", "FeatureSpec"]

#: the learners ``--learner`` accepts (case-insensitive), by class name
LEARNERS = ("OAUCM", "OAUCS", "SketchedOAUCM", "FTRLAUC", "OKAUCM", "OKAUCS", "Perceptron",
            "PAI", "OAM", "OLUBAUC", "SOLAM", "AdaOAM", "KOIL", "POLK")
FORMATS = ("auto", "libsvm", "csv", "text")
MODEL_FILE_KIND = "sosl-cli-model"
MODEL_FILE_LAYOUT = 1
#: indexed LIBSVM input with at most this many columns is handed to the learner as dense rows
DENSE_MAX = 1000
_POSITIVE_TOKENS = {"1", "+1", "1.0", "+1.0", "true", "yes"}
_NEGATIVE_TOKENS = {"0", "-1", "0.0", "-1.0", "false", "no"}


class UsageError(Exception):
    """A mistake of the caller: reported on one line, exit status 2."""


# ---------------------------------------------------------------------------------------
# features: how a chunk of lines becomes a matrix, saved with the model
# ---------------------------------------------------------------------------------------
class FeatureSpec:
    """The input format and feature mapping a model was trained with.

    Parameters
    ----------
    fmt : {"libsvm", "csv", "text"}
        Input format.
    hash_bits : int or None
        Hash the features into ``2**hash_bits`` columns (text always; LIBSVM when given).
        None indexes them (LIBSVM column = index, CSV column = field position).
    n_features : int or None
        Number of columns of indexed input (LIBSVM: largest index + 1; CSV: fields - 1).
        Indexed LIBSVM rows of at most ``DENSE_MAX`` columns reach the learner dense, wider
        ones (and hashed ones) as CSR rows.
    positive : str or None
        The label token of the positive class; None reads labels as 1/+1 (positive) and
        0/-1 (negative).
    delimiter : str
        CSV field separator.
    label_col : int
        CSV column holding the label (negative counts from the end).
    ngram : int
        Text: word n-grams of length 1 to ``ngram`` are hashed.
    """

    def __init__(self, fmt, hash_bits=None, n_features=None, positive=None, delimiter=",",
                 label_col=0, ngram=1):
        self.fmt = fmt
        self.hash_bits = hash_bits
        self.n_features = n_features
        self.positive = positive
        self.delimiter = delimiter
        self.label_col = label_col
        self.ngram = ngram
        self._hasher = None

    def state(self):
        """The spec as a plain dict (what the model file stores)."""
        return {k: getattr(self, k) for k in ("fmt", "hash_bits", "n_features", "positive",
                                              "delimiter", "label_col", "ngram")}

    @classmethod
    def from_state(cls, state):
        return cls(**state)

    @property
    def columns(self):
        return 2 ** self.hash_bits if self.hash_bits is not None else self.n_features

    def describe(self):
        if self.hash_bits is not None:
            return f"{self.fmt}, hashed to 2^{self.hash_bits} columns"
        return f"{self.fmt}, {self.n_features} indexed columns"

    # labels ------------------------------------------------------------------------------
    def label(self, token, where, required):
        """1 for the positive class, 0 for the negative one, None for an absent label."""
        if token is None or token == "":
            if required:
                raise UsageError(f"{where}: the row has no label")
            return None
        if self.positive is not None:
            return 1 if token == self.positive else 0
        t = token.lower()
        if t in _POSITIVE_TOKENS:
            return 1
        if t in _NEGATIVE_TOKENS:
            return 0
        try:
            value = float(t)
        except ValueError:
            value = None
        if value == 1.0:
            return 1
        if value == 0.0 or value == -1.0:
            return 0
        raise UsageError(f"{where}: label {token!r} is not 1/+1 or 0/-1; name the positive "
                         "class with --positive LABEL")

    # chunks ------------------------------------------------------------------------------
    def transform(self, lines, first_line, required):
        """Parse a chunk of lines: (X, y) with y[i] in {0, 1} or -1 for no label."""
        if self.fmt == "text":
            return self._text(lines, first_line, required)
        if self.fmt == "libsvm":
            return self._libsvm(lines, first_line, required)
        return self._csv(lines, first_line, required)

    def _text(self, lines, first_line, required):
        texts, y = [], np.empty(len(lines), dtype=np.int64)
        for k, line in enumerate(lines):
            label, sep, text = line.partition("\t")
            if not sep:
                if required:
                    raise UsageError(f"line {first_line + k}: no TAB between label and text "
                                     "(text input is label<TAB>text)")
                label, text = None, line
            lab = self.label(label, f"line {first_line + k}", required)
            y[k] = -1 if lab is None else lab
            texts.append(text)
        if self._hasher is None:
            from sklearn.feature_extraction.text import HashingVectorizer
            self._hasher = HashingVectorizer(n_features=2 ** self.hash_bits,
                                             ngram_range=(1, self.ngram))
        return _csr(self._hasher.transform(texts)), y

    def _libsvm(self, lines, first_line, required):
        y = np.empty(len(lines), dtype=np.int64)
        indptr, indices, data, pairs = [0], [], [], []
        for k, line in enumerate(lines):
            where = f"line {first_line + k}"
            body = line.split("#", 1)[0].split()
            label = None
            if body and ":" not in body[0]:
                label, body = body[0], body[1:]
            lab = self.label(label, where, required)
            y[k] = -1 if lab is None else lab
            row = []
            for tok in body:
                name, sep, value = tok.partition(":")
                if not sep:
                    raise UsageError(f"{where}: {tok!r} is not index:value")
                if name == "qid":
                    continue
                try:
                    idx, val = int(name), float(value)
                except ValueError:
                    raise UsageError(f"{where}: {tok!r} is not index:value with an integer "
                                     "index and a number") from None
                if idx < 0:
                    raise UsageError(f"{where}: negative feature index {idx}")
                if not math.isfinite(val):
                    raise UsageError(f"{where}: feature {idx} has the non-finite value {value}")
                if self.hash_bits is None and idx >= self.n_features:
                    raise UsageError(f"{where}: feature index {idx} is beyond the model's "
                                     f"{self.n_features} columns; pass --n-features or "
                                     "--hash-bits")
                row.append((idx, val))
            if self.hash_bits is not None:
                pairs.append([(str(i), v) for i, v in row])
            else:
                indices.extend(i for i, _ in row)
                data.extend(v for _, v in row)
                indptr.append(len(indices))
        if self.hash_bits is not None:
            if self._hasher is None:
                from sklearn.feature_extraction import FeatureHasher
                self._hasher = FeatureHasher(n_features=2 ** self.hash_bits, input_type="pair")
            return _csr(self._hasher.transform(pairs)), y
        X = _csr(sp.csr_matrix((np.asarray(data, dtype=np.float64),
                                np.asarray(indices, dtype=np.int64),
                                np.asarray(indptr, dtype=np.int64)),
                               shape=(len(lines), self.n_features)))
        return (X.toarray() if self.n_features <= DENSE_MAX else X), y

    def _csv(self, lines, first_line, required):
        y = np.empty(len(lines), dtype=np.int64)
        X = np.empty((len(lines), self.n_features), dtype=np.float64)
        for k, line in enumerate(lines):
            where = f"line {first_line + k}"
            fields = [f.strip() for f in line.split(self.delimiter)]
            if len(fields) == self.n_features:          # no label column
                label = None
            elif len(fields) == self.n_features + 1:
                label = fields.pop(self.label_col)
            else:
                raise UsageError(f"{where}: {len(fields)} fields, expected "
                                 f"{self.n_features + 1} (a label and {self.n_features} "
                                 "features)")
            lab = self.label(label, where, required)
            y[k] = -1 if lab is None else lab
            try:
                X[k] = [float(f) for f in fields]
            except ValueError:
                raise UsageError(f"{where}: a feature is not a number") from None
            if not np.isfinite(X[k]).all():
                raise UsageError(f"{where}: a feature is NaN or infinite")
        return X, y


def _csr(X):
    X = sp.csr_matrix(X, dtype=np.float64)
    X.sum_duplicates()
    X.sort_indices()
    return X


# ---------------------------------------------------------------------------------------
# reading lines
# ---------------------------------------------------------------------------------------
def _open(path):
    if path == "-":
        return sys.stdin
    if not os.path.exists(path):
        raise UsageError(f"{path}: no such file")
    if os.path.isdir(path):
        raise UsageError(f"{path}: is a directory")
    return open(path, encoding="utf-8", errors="replace", newline="")


def _lines(stream):
    """Non-empty lines without their line end, numbered from 1 (blank lines are skipped)."""
    for number, line in enumerate(stream, start=1):
        line = line.rstrip("\r\n")
        if line.strip():
            yield number, line


def _chunks(numbered, size):
    chunk = []
    for item in numbered:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _sniff(line):
    """Guess the format of one line."""
    if "\t" in line:
        return "text"
    tokens = line.split("#", 1)[0].split()
    if tokens and all(":" in t for t in tokens[1:]) and len(tokens) > 1:
        return "libsvm"
    if len(tokens) == 1 and "," not in line:
        return "libsvm"                      # a label alone: a row of zeros
    if "," in line:
        return "csv"
    raise UsageError(f"cannot tell the format of the line {line[:40]!r}; pass --format")


def _is_number(s):
    try:
        float(s)
    except ValueError:
        return False
    return True


def _peek(numbered):
    """The first item of an iterator and an iterator that yields it again."""
    try:
        first = next(numbered)
    except StopIteration:
        return None, iter(())

    def again():
        yield first
        yield from numbered
    return first, again()


def _new_spec(args, first_line, path):
    """The feature spec of a new model, from the options and the first line of the input."""
    fmt = args.format
    if fmt == "auto":
        ext = os.path.splitext(path)[1].lower()
        fmt = {".csv": "csv", ".svm": "libsvm", ".libsvm": "libsvm",
               ".tsv": "text"}.get(ext) or _sniff(first_line)
    bits = args.hash_bits
    if fmt == "text" and bits is None:
        bits = 18
    if fmt == "csv" and bits is not None:
        raise UsageError("--hash-bits applies to text and libsvm input; CSV columns are "
                         "indexed by position")
    if bits is not None and args.n_features is not None:
        raise UsageError("give --hash-bits or --n-features, not both")
    spec = FeatureSpec(fmt, hash_bits=bits, positive=args.positive, delimiter=args.delimiter,
                       label_col=args.label_col, ngram=args.ngram)
    if fmt == "csv":
        fields = first_line.split(args.delimiter)
        spec.n_features = len(fields) - 1
        if spec.n_features < 1:
            raise UsageError("CSV input needs a label and at least one feature per line")
        if not (-len(fields) <= args.label_col < len(fields)):
            raise UsageError(f"--label-col {args.label_col} is outside the {len(fields)} "
                             "fields of the first line")
    elif fmt == "libsvm" and bits is None:
        if args.n_features is None:
            if path == "-":
                raise UsageError("LIBSVM input from standard input needs --n-features P "
                                 "(largest index + 1) or --hash-bits B")
            spec.n_features = _max_index(path) + 1
        else:
            spec.n_features = args.n_features
    return spec


def _max_index(path):
    """The largest feature index of a LIBSVM file (one pass before learning)."""
    top = 0
    with _open(path) as f:
        for number, line in _lines(f):
            for tok in line.split("#", 1)[0].split()[1:]:
                name = tok.partition(":")[0]
                if name != "qid":
                    try:
                        top = max(top, int(name))
                    except ValueError:
                        raise UsageError(f"line {number}: {tok!r} is not index:value") from None
    return top


def _csv_header(first, numbered, spec):
    """Drop a header line (a first line whose feature fields are not numbers)."""
    if first is None or spec.fmt != "csv":
        return numbered
    fields = [f.strip() for f in first[1].split(spec.delimiter)]
    if len(fields) == spec.n_features + 1:
        fields.pop(spec.label_col)
    if all(_is_number(f) for f in fields):
        return numbered
    next(numbered)
    return numbered


# ---------------------------------------------------------------------------------------
# learners and their parameters
# ---------------------------------------------------------------------------------------
def _learner_class(name):
    import sosl

    by_lower = {n.lower(): n for n in LEARNERS}
    key = name.replace("-", "").replace("_", "").lower()
    if key not in by_lower:
        raise UsageError(f"unknown learner {name!r}; choose one of {', '.join(LEARNERS)}")
    return getattr(sosl, by_lower[key])


def _parse_params(items):
    params = {}
    for item in items or ():
        for part in item.split(","):
            key, sep, value = part.partition("=")
            key = key.strip()
            if not sep or not key.isidentifier():
                raise UsageError(f"--param {part!r} is not NAME=VALUE")
            try:
                params[key] = ast.literal_eval(value.strip())
            except (ValueError, SyntaxError):
                params[key] = value.strip()          # a string option, e.g. loss=m
    return params


def _set_params(model, params):
    if not params:
        return
    valid = model.get_params()
    for key in params:
        if key not in valid:
            raise UsageError(f"{type(model).__name__} has no parameter {key!r}; it takes "
                             f"{', '.join(sorted(valid))}")
    model.set_params(**params)
    try:
        model._validate_params()
    except (ValueError, TypeError) as e:
        raise UsageError(f"bad parameter for {type(model).__name__}: {_one_line(e)}") from None


def _one_line(e):
    return " ".join(str(e).split())


# ---------------------------------------------------------------------------------------
# model files
# ---------------------------------------------------------------------------------------
def _load_model_file(path):
    import joblib

    import sosl

    if not os.path.isfile(path):
        raise UsageError(f"{path}: no such model file")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            bundle = joblib.load(path)
    except Exception as e:           # a truncated or foreign file: say so, not a traceback
        raise UsageError(f"{path}: not a sosl model file ({type(e).__name__}: "
                         f"{_one_line(e)})") from None
    if not isinstance(bundle, dict) or bundle.get("kind") != MODEL_FILE_KIND:
        raise UsageError(f"{path}: not a model file written by `sosl learn`")
    if bundle.get("layout") != MODEL_FILE_LAYOUT:
        raise UsageError(f"{path}: model file layout {bundle.get('layout')} is not "
                         f"{MODEL_FILE_LAYOUT} (written by sosl {bundle.get('sosl_version')})")
    for w in caught:
        print(f"sosl: warning: {_one_line(w.message)}", file=sys.stderr)
    if bundle.get("sosl_version") != sosl.__version__ and not caught:
        print(f"sosl: warning: {path} was written by sosl {bundle.get('sosl_version')}, this "
              f"is sosl {sosl.__version__}", file=sys.stderr)
    return bundle


def _save_model_file(path, model, spec, rows):
    import joblib

    import sosl

    bundle = {"kind": MODEL_FILE_KIND, "layout": MODEL_FILE_LAYOUT,
              "sosl_version": sosl.__version__, "learner": type(model).__name__,
              "model": model, "features": spec.state(), "rows_seen": int(rows)}
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        joblib.dump(bundle, tmp)
        os.replace(tmp, path)
    except OSError as e:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise UsageError(f"{path}: cannot write the model ({e.strerror or e})") from None


# ---------------------------------------------------------------------------------------
# progressive validation
# ---------------------------------------------------------------------------------------
class _Progress:
    """The prequential figures (streaming AUC and average precision) and the report lines."""

    def __init__(self, every, out):
        from .metrics import StreamingAUC, StreamingAveragePrecision

        self.every = every
        self.out = out
        self.auc = StreamingAUC()
        self.ap = StreamingAveragePrecision()
        self.rows = self.scored = 0
        self.next_report = every if every else None
        self.start = time.process_time()
        self.header = False
        self.reported = 0

    def add(self, label, score):
        self.auc.update(label, score)
        self.ap.update(label, score)
        self.scored += 1

    def add_many(self, labels, scores):
        self.auc.update_many(labels, scores)
        self.ap.update_many(labels, scores)
        self.scored += len(labels)

    def line(self, final=False):
        self.reported = self.rows
        if self.out is None:
            return
        if not self.header:
            print(f"{'rows':>10} {'scored':>10} {'auc':>8} {'avg_prec':>8} {'cpu_s':>8} "
                  f"{'rows/s':>10}", file=self.out)
            self.header = True
        cpu = time.process_time() - self.start
        rate = self.rows / cpu if cpu > 0 else float("inf")
        print(f"{self.rows:>10} {self.scored:>10} {self.auc.get():>8.4f} "
              f"{self.ap.get():>8.4f} {cpu:>8.2f} {rate:>10.0f}"
              + ("  (final)" if final else ""), file=self.out)
        self.out.flush()


def _learn_chunk(model, X, y, progress, classes, block):
    """Test-then-train over the rows of one chunk.

    With ``block == 1`` each row is scored, then learned (``score_one`` / ``learn_one``).
    With a larger block, each block of rows is scored by the model as it stood before the
    block (``decision_function``), then learned by one ``partial_fit``: the model is the
    same (sosl's learners give the same state for any split of a stream into calls), the
    progressive scores are those of a model up to ``block - 1`` rows older, and the pass
    runs at the speed of the typed batch path.
    """
    sparse = sp.issparse(X)
    start = 0
    if not hasattr(model, "classes_"):           # the first row: nothing to score it with
        model.learn_one(X[0:1] if sparse else X[0], int(y[0]), classes=classes)
        progress.rows += 1
        start = 1
    if block == 1:
        for i in range(start, X.shape[0]):
            row = X[i:i + 1] if sparse else X[i]
            progress.add(int(y[i]), model.score_one(row))
            model.learn_one(row, int(y[i]))
            progress.rows += 1
            if progress.next_report is not None and progress.rows >= progress.next_report:
                progress.line()
                progress.next_report += progress.every
        return
    for lo in range(start, X.shape[0], block):
        Xb, yb = X[lo:lo + block], y[lo:lo + block]
        progress.add_many(yb, np.ravel(model.decision_function(Xb)))
        model.partial_fit(Xb, yb)
        progress.rows += Xb.shape[0]
        if progress.next_report is not None and progress.rows >= progress.next_report:
            progress.line()
            while progress.next_report <= progress.rows:
                progress.next_report += progress.every


# ---------------------------------------------------------------------------------------
# the commands
# ---------------------------------------------------------------------------------------
def _cmd_learn(args):
    params = _parse_params(args.param)
    if args.progress < 0:
        raise UsageError(f"--progress must be >= 0, got {args.progress}")
    stream = _open(args.data)
    rows_before = 0
    if args.model is not None:
        bundle = _load_model_file(args.model)
        model = bundle["model"]
        spec = FeatureSpec.from_state(bundle["features"])
        rows_before = bundle["rows_seen"]
        if args.learner is not None and _learner_class(args.learner) is not type(model):
            raise UsageError(f"--learner {args.learner} does not match the model file's "
                             f"{type(model).__name__}")
        for opt, value, saved in (("--hash-bits", args.hash_bits, spec.hash_bits),
                                  ("--n-features", args.n_features, spec.n_features),
                                  ("--positive", args.positive, spec.positive)):
            if value is not None and value != saved:
                raise UsageError(f"{opt} {value} differs from the model file's {saved}: the "
                                 "features must be mapped as in the first run")
        if args.format not in ("auto", spec.fmt):
            raise UsageError(f"--format {args.format} differs from the model file's {spec.fmt}")
        _set_params(model, params)
        numbered = _lines(stream)
        first, numbered = _peek(numbered)
    else:
        model = _learner_class(args.learner or "FTRLAUC")()
        _set_params(model, params)
        numbered = _lines(stream)
        first, numbered = _peek(numbered)
        if first is None:
            raise UsageError(f"{args.data}: no rows to learn from")
        spec = _new_spec(args, first[1], args.data)
        numbered = _csv_header(first, numbered, spec)
    out = None if args.quiet else sys.stdout
    if out is not None:
        print(f"sosl learn: {type(model).__name__} on {spec.describe()}"
              + (f", continuing {args.model} ({rows_before} rows)" if args.model else ""),
              file=out)
    progress = _Progress(args.progress, out)
    try:
        for chunk in _chunks(numbered, args.chunk):
            X, y = spec.transform([line for _, line in chunk], chunk[0][0], required=True)
            _learn_chunk(model, X, y, progress, classes=[0, 1], block=args.block)
    finally:
        if stream is not sys.stdin:
            stream.close()
    if progress.rows == 0:
        raise UsageError(f"{args.data}: no rows to learn from")
    if progress.reported != progress.rows:
        progress.line(final=True)
    if args.final_model is not None:
        _save_model_file(args.final_model, model, spec, rows_before + progress.rows)
    return 0


def _cmd_score(args):
    bundle = _load_model_file(args.model)
    model, spec = bundle["model"], FeatureSpec.from_state(bundle["features"])
    if args.format not in ("auto", spec.fmt):
        raise UsageError(f"--format {args.format} differs from the model file's {spec.fmt}")
    if args.proba and not hasattr(model, "predict_proba"):
        raise UsageError(f"{type(model).__name__} has no predict_proba")
    stream = _open(args.data)
    out = sys.stdout
    if args.out is not None:
        try:
            out = open(args.out, "w", encoding="utf-8")
        except OSError as e:
            raise UsageError(f"{args.out}: cannot write ({e.strerror or e})") from None
    from .metrics import StreamingAUC, StreamingAveragePrecision

    auc, ap, rows = StreamingAUC(), StreamingAveragePrecision(), 0
    try:
        numbered = _csv_header(*_peek(_lines(stream)), spec)
        for chunk in _chunks(numbered, args.chunk):
            X, y = spec.transform([line for _, line in chunk], chunk[0][0], required=False)
            if args.proba:
                s = model.predict_proba(X)[:, 1]
            else:
                s = np.ravel(model.decision_function(X))
            out.write("".join(f"{v:.10g}\n" for v in s))
            known = y >= 0
            if known.any():
                auc.update_many(y[known], s[known])
                ap.update_many(y[known], s[known])
            rows += X.shape[0]
    finally:
        if stream is not sys.stdin:
            stream.close()
        if out is not sys.stdout:
            out.close()
    if not args.quiet:
        msg = f"sosl score: {rows} rows scored"
        if auc.n_pos + auc.n_neg:
            msg += (f", {auc.n_pos + auc.n_neg} labelled: auc {auc.get():.4f}, average "
                    f"precision {ap.get():.4f}")
        print(msg, file=sys.stderr)
    return 0


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``sosl: error: ...`` and exit status 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not a positive integer")
    return value


def _hash_bits(text):
    value = _positive_int(text)
    if value > 31:
        raise argparse.ArgumentTypeError(f"{value} bits is more than 31 (2^31 columns is the "
                                         "most the sparse passes index)")
    return value


def build_parser():
    """The argument parser of ``sosl`` (its ``learn`` and ``score`` sub-commands)."""
    import sosl

    parser = _Parser(prog="sosl", description="Train and score sosl's online AUC learners on "
                     "a stream of rows (LIBSVM, CSV or label<TAB>text), from a file or stdin.")
    parser.add_argument("--version", action="version", version=f"sosl {sosl.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="{learn,score}", parser_class=_Parser)
    sub.required = True

    def common(p):
        p.add_argument("data", nargs="?", default="-",
                       help="input file, '-' for standard input (the default)")
        p.add_argument("--format", choices=FORMATS, default="auto",
                       help="input format (auto: from the extension or the first line; a TAB "
                            "means text, index:value tokens LIBSVM, commas CSV)")
        p.add_argument("--chunk", type=_positive_int, default=1000,
                       help="rows parsed and vectorized together (default 1000); the result "
                            "does not depend on it")
        p.add_argument("-q", "--quiet", action="store_true", help="no report")

    learn = sub.add_parser("learn", help="one online pass over labelled rows",
                           description="One online pass over labelled rows with progressive "
                           "validation: each row is scored before it is learned.")
    common(learn)
    learn.add_argument("--learner", default=None,
                       help=f"learner class (default FTRLAUC): {', '.join(LEARNERS)}")
    learn.add_argument("-p", "--param", action="append", metavar="NAME=VALUE",
                       help="a learner parameter, e.g. --param lam=0.01 (repeat, or "
                            "comma-separate)")
    learn.add_argument("-b", "--hash-bits", type=_hash_bits, default=None,
                       help="hash features into 2^B columns (text: default 18; LIBSVM: "
                            "indexed unless given)")
    learn.add_argument("--n-features", type=_positive_int, default=None,
                       help="LIBSVM columns (largest index + 1); default: one scan of the "
                            "file")
    learn.add_argument("--positive", default=None,
                       help="label of the positive class (default: 1/+1 positive, 0/-1 "
                            "negative)")
    learn.add_argument("--delimiter", default=",", help="CSV field separator (default ,)")
    learn.add_argument("--label-col", type=int, default=0,
                       help="CSV column of the label (default 0; -1 is the last)")
    learn.add_argument("--ngram", type=_positive_int, default=1,
                       help="text: hash word n-grams of length 1..N (default 1)")
    learn.add_argument("--progress", type=int, default=1000, metavar="N",
                       help="report every N rows (default 1000; 0: only at the end)")
    learn.add_argument("--block", type=_positive_int, default=1, metavar="B",
                       help="score each block of B rows with the model as it stood before "
                            "the block, then learn the block in one call (default 1: row by "
                            "row); the same model, faster, progressive scores up to B - 1 "
                            "rows staler")
    learn.add_argument("-i", "--model", default=None,
                       help="continue training this model file (its features are reused)")
    learn.add_argument("-f", "--final-model", default=None, metavar="PATH",
                       help="write the trained model (joblib) here")
    learn.set_defaults(func=_cmd_learn)

    score = sub.add_parser("score", help="score rows with a saved model",
                           description="Write one score per input row (the decision value, "
                           "or P(positive) with --proba).")
    common(score)
    score.add_argument("-i", "--model", required=True, help="model file written by sosl learn")
    score.add_argument("-o", "--out", default=None, help="write the scores here, not stdout")
    score.add_argument("--proba", action="store_true",
                       help="write P(positive | x) instead of the decision value")
    score.set_defaults(func=_cmd_score)
    return parser


def main(argv=None):
    """Run ``sosl`` with the arguments ``argv`` (default ``sys.argv[1:]``).

    Returns
    -------
    status : int
        0 on success, 2 on misuse (argparse errors exit with 2 as well), 1 when learning
        fails.
    """
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except UsageError as e:
        print(f"sosl: error: {e}", file=sys.stderr)
        return 2
    except (ValueError, TypeError) as e:       # the estimators' own checks of input/params
        print(f"sosl: error: {_one_line(e)}", file=sys.stderr)
        return 2
    except BrokenPipeError:                     # e.g. `sosl score ... | head`
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())   # no second error when stdout is flushed
        return 0
    except (MemoryError, ArithmeticError, OSError) as e:
        print(f"sosl: error: {type(e).__name__}: {_one_line(e)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("sosl: interrupted", file=sys.stderr)
        return 130
