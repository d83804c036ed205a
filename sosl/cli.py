"""The ``sosl`` command line: train and score online AUC learners on a stream of rows.

``sosl learn`` reads labelled rows (LIBSVM, CSV, ``label<TAB>text`` or Vowpal Wabbit's
text format; plain, gzip, bzip2 or xz) from a file or standard input, turns each chunk of
rows into a matrix (:mod:`sosl._reader`: feature hashing or column indices),
makes one online pass with any sosl learner and prints progressive-validation figures: each
row is scored by the model as it stands *before* the model learns it, and the AUC and
average precision of those scores are reported every ``--progress`` rows. ``-f`` saves the
model together with the feature setup it was trained with; ``-i`` continues training a
saved model. ``sosl score`` writes one score per input row with a saved model.

The commands follow Vowpal Wabbit's habits (``vw -d train -f model``, ``vw -t -i model``)::

    sosl learn train.txt --format text --positive spam --hash-bits 18 -f model.npz
    sosl learn more.txt -i model.npz -f model.npz      # continue training
    sosl score test.txt -i model.npz --out scores.txt

Misuse (a bad option, a missing file, an unknown learner or parameter, a malformed line)
prints one line ``sosl: error: ...`` on standard error and exits with status 2; a failure
while learning (e.g. a model too large for memory) exits with status 1.

Model files hold the learner's state and the reader's settings as arrays and JSON
(:mod:`sosl.io`); reading one runs no code. An old pickled (joblib) model file is read only
with ``--trust-pickle``, with a warning.
"""

import argparse
import ast
import os
import sys
import warnings

import numpy as np

from ._cli_pass import _EnginePass, _lines, _Pass, _Progress
from ._engine import FTRLEngine
from ._ftrl_state import NAME as DEFAULT_LEARNER
from ._reader import (
    FeatureSpec,
    UsageError,
    csr_arrays,
    max_index,
    open_input,
    read_chunks,
    text_lines,
)

__all__ = ["main", "LEARNERS", "FeatureSpec"]


def _learner_names():
    """The learner names ``--learner`` accepts: the lazy name map of ``sosl`` (no import)."""
    import sosl

    return tuple(sosl._HOME)


LEARNERS = _learner_names()
FORMATS = ("auto", "libsvm", "csv", "text", "vw")
MODEL_FILE_KIND = "sosl-cli-model"
MODEL_FILE_LAYOUT = 1
#: False: the default learner runs through its estimator class too (the reference the
#: engine must equal, see tests/test_cli_engine.py)
_ENGINE = True


# ---------------------------------------------------------------------------------------
# the first line: the format and feature setup of a new model
# ---------------------------------------------------------------------------------------
def _sniff(line):
    """Guess the format of one line."""
    if "\t" in line:
        return "text"
    if "|" in line:
        return "vw"
    tokens = line.split("#", 1)[0].split()
    if tokens and all(":" in t for t in tokens[1:]) and len(tokens) > 1:
        return "libsvm"
    if len(tokens) == 1 and "," not in line:
        return "libsvm"                      # a label alone: a row of zeros
    if "," in line:
        return "csv"
    raise UsageError(f"cannot tell the format of the line {line[:40]!r}; pass --format")


def _new_spec(args, first_line, path, grow=False):
    """The feature spec of a new model, from the options and the first line of the input.

    ``grow``: the learner's state can grow with the rows (the engine), so indexed LIBSVM
    needs no width up front; otherwise it comes from --n-features or a scan of the file.
    """
    fmt = args.format
    if fmt == "auto":
        base = path[:-3] if path.endswith(".gz") else path[:-4] if path.endswith(
            (".bz2", ".xz")) else path
        ext = os.path.splitext(base)[1].lower()
        fmt = {".csv": "csv", ".svm": "libsvm", ".libsvm": "libsvm", ".vw": "vw",
               ".tsv": "text"}.get(ext) or _sniff(first_line)
    bits = args.hash_bits
    if fmt in ("text", "vw") and bits is None:
        bits = 18
    if fmt == "csv" and bits is not None:
        raise UsageError("--hash-bits applies to text, vw and libsvm input; CSV columns are "
                         "indexed by position")
    if bits is not None and args.n_features is not None:
        raise UsageError("give --hash-bits or --n-features, not both")
    spec = FeatureSpec(fmt, hash_bits=bits, positive=args.positive, delimiter=args.delimiter,
                       label_col=args.label_col, ngram=args.ngram,
                       grow=grow and args.n_features is None)
    if fmt == "csv":
        fields = first_line.split(args.delimiter)
        spec.n_features = len(fields) - 1
        if spec.n_features < 1:
            raise UsageError("CSV input needs a label and at least one feature per line")
        if not (-len(fields) <= args.label_col < len(fields)):
            raise UsageError(f"--label-col {args.label_col} is outside the {len(fields)} "
                             "fields of the first line")
    elif fmt == "libsvm" and bits is None and not spec.grow:
        if args.n_features is None:
            if path == "-":
                raise UsageError("LIBSVM input from standard input needs --n-features P "
                                 "(largest index + 1) or --hash-bits B")
            spec.n_features = max_index(path, args.chunk) + 1
        else:
            spec.n_features = args.n_features
    return spec


def _first(chunks):
    """The first chunk, its first non-blank line (or None) and the chunks again."""
    def again(first):
        yield first
        yield from chunks

    for number, block in chunks:
        for _, line in text_lines(block, number):
            return line, again((number, block))
    return None, iter(())

# ---------------------------------------------------------------------------------------
# learners and their parameters
# ---------------------------------------------------------------------------------------
def _learner_name(name):
    """The class name ``--learner NAME`` means (case, '-' and '_' ignored)."""
    by_lower = {n.lower(): n for n in LEARNERS}
    key = name.replace("-", "").replace("_", "").lower()
    if key not in by_lower:
        raise UsageError(f"unknown learner {name!r}; choose one of {', '.join(LEARNERS)}")
    return by_lower[key]


def _learner_class(name):
    import sosl

    return getattr(sosl, _learner_name(name))


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
def _load_state_file(path, trust_pickle=False):
    """(state, meta) of a model file; a pickle only with ``trust_pickle`` (and a warning)."""
    from . import io as sosl_io
    from ._version import __version__

    if not os.path.isfile(path):
        raise UsageError(f"{path}: no such model file")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            state, meta = sosl_io.load_state(path, allow_pickle=trust_pickle)
    except ValueError as e:
        text = _one_line(e).replace("pass --trust-pickle to the sosl command",
                                    "pass --trust-pickle")
        raise UsageError(f"{path}: {text}") from None
    except Exception as e:           # a foreign pickle read with --trust-pickle
        raise UsageError(f"{path}: not a sosl model file ({type(e).__name__}: "
                         f"{_one_line(e)})") from None
    if not isinstance(meta, dict) or meta.get("kind") != MODEL_FILE_KIND \
            or not isinstance(meta.get("features"), dict):
        raise UsageError(f"{path}: a sosl model but not one written by `sosl learn` (it has "
                         "no feature setup)")
    if meta.get("layout") != MODEL_FILE_LAYOUT:
        raise UsageError(f"{path}: model file layout {meta.get('layout')} is not "
                         f"{MODEL_FILE_LAYOUT} (written by sosl {meta.get('sosl_version')})")
    try:
        columns = FeatureSpec.from_state(meta["features"]).columns
    except (TypeError, ValueError):
        columns = None
    if columns != state.n_features:
        raise UsageError(f"{path}: the model's {state.n_features} features do not match its "
                         f"feature setup ({meta['features']})")
    for w in caught:
        print(f"sosl: warning: {_one_line(w.message)}", file=sys.stderr)
    if meta.get("sosl_version") != __version__ and not caught:
        print(f"sosl: warning: {path} was written by sosl {meta.get('sosl_version')}, this "
              f"is sosl {__version__}", file=sys.stderr)
    return state, meta


def _estimator_of(state, path):
    """The fitted estimator holding a model file's state (errors name the file)."""
    from .state import from_state

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = from_state(state)
    except ValueError as e:
        raise UsageError(f"{path}: {_one_line(e)}") from None
    except Exception as e:
        raise UsageError(f"{path}: not a sosl model file ({type(e).__name__}: "
                         f"{_one_line(e)})") from None
    for w in caught:
        print(f"sosl: warning: {_one_line(w.message)}", file=sys.stderr)
    return model


def _engine_of(state):
    """The engine holding a model file's state, or None (the estimator runs it)."""
    if not _ENGINE or state.learner != DEFAULT_LEARNER:
        return None
    return FTRLEngine.from_state(state)


def _save_model_file(path, model, spec, rows):
    """The learner's state and the reader's settings, in sosl's safe file format.

    :func:`sosl.io.save` writes a temporary file beside the target and renames it over the
    target: a reader sees the old model or the new one, and whatever stops the write (a
    full disk, SIGINT) removes the temporary file.
    """
    from . import io as sosl_io
    from ._version import __version__

    meta = {"kind": MODEL_FILE_KIND, "layout": MODEL_FILE_LAYOUT, "sosl_version": __version__,
            "features": spec.state(), "rows_seen": int(rows)}
    if isinstance(model, FTRLEngine):
        model = model.state()
    try:
        sosl_io.save(model, path, meta=meta)
    except OSError as e:
        raise UsageError(f"{path}: cannot write the model ({e.strerror or e})") from None


# ---------------------------------------------------------------------------------------
# the commands
# ---------------------------------------------------------------------------------------
def _data_path(args):
    if args.data_opt is not None:
        if args.data not in ("-", args.data_opt):
            raise UsageError(f"two inputs: {args.data} and -d {args.data_opt}")
        return args.data_opt
    return args.data


def _open_out(path):
    if path is None:
        return None
    try:
        return open(path, "w", encoding="utf-8")
    except OSError as e:
        raise UsageError(f"{path}: cannot write ({e.strerror or e})") from None


def _cmd_learn(args):
    params = _parse_params(args.param)
    if args.progress < 0:
        raise UsageError(f"--progress must be >= 0, got {args.progress}")
    path = _data_path(args)
    if args.test_only and args.model is None:
        raise UsageError("-t (test only) needs a model to test: -i MODEL")
    if args.delay and args.block != 1:
        raise UsageError("--delay works row by row: it needs --block 1")
    if args.test_only and args.final_model is not None:
        raise UsageError("-t (test only) learns nothing: no -f")
    stream = open_input(path)
    chunks = read_chunks(stream, args.chunk, path)
    rows_before = 0
    model = None
    # the default learner runs in the engine (no scikit-learn) unless it needs the
    # estimator: other parameters, --delay, VW input (importance weights)
    plain = _ENGINE and not args.delay and args.format != "vw"
    if args.model is not None:
        state, meta = _load_state_file(args.model, args.trust_pickle)
        spec = FeatureSpec.from_state(meta["features"])
        rows_before = int(meta.get("rows_seen", 0))
        name = state.learner
        if args.learner is not None and _learner_name(args.learner) != name:
            raise UsageError(f"--learner {args.learner} does not match the model file's "
                             f"{name}")
        for opt, value, saved in (("--hash-bits", args.hash_bits, spec.hash_bits),
                                  ("--n-features", args.n_features, spec.n_features),
                                  ("--positive", args.positive, spec.positive)):
            if value is not None and value != saved:
                raise UsageError(f"{opt} {value} differs from the model file's {saved}: the "
                                 "features must be mapped as in the first run")
        if args.format not in ("auto", spec.fmt):
            raise UsageError(f"--format {args.format} differs from the model file's {spec.fmt}")
        engine = _engine_of(state) if plain and not params and spec.fmt != "vw" else None
        if engine is None:
            model = _estimator_of(state, args.model)
            _set_params(model, params)
    else:
        name = _learner_name(args.learner or DEFAULT_LEARNER)
        engine = None
        if plain and name == DEFAULT_LEARNER and FTRLEngine.accepts(params):
            engine = FTRLEngine(params)
        if engine is None:
            model = _learner_class(name)()
            _set_params(model, params)
        first, chunks = _first(chunks)
        if first is None:
            raise UsageError(f"{path}: no rows to learn from")
        spec = _new_spec(args, first, path, grow=engine is not None)
        if engine is not None and spec.fmt == "vw":   # weighted rows: the estimator
            engine, model = None, _learner_class(name)()
    out = None if args.quiet else sys.stdout
    if out is not None:
        print(f"sosl {'test' if args.test_only else 'learn'}: {name} on "
              f"{spec.describe()}"
              + (f", continuing {args.model} ({rows_before} rows)" if args.model else ""),
              file=out)
    progress = _Progress(args.progress, out, exact=args.exact_auc)
    preds = _open_out(args.predictions)
    run: _Pass | _EnginePass
    if engine is not None:
        run = _EnginePass(engine, spec, args.block, progress, preds,
                          learn=not args.test_only)
    else:
        run = _Pass(model, args.block, progress, preds, learn=not args.test_only,
                    delay=args.delay)
    try:
        for number, block in chunks:
            parsed = spec.transform(block, number, required=True, raw=engine is not None)
            if parsed is not None:
                run.feed(*parsed)
        run.close()
    finally:
        if path != "-":
            stream.close()
        if preds is not None:
            preds.close()
    if progress.rows == 0:
        raise UsageError(f"{path}: no rows to learn from")
    if spec.positive is not None and spec.positive not in spec.seen_labels and not (
            _is_float(spec.positive) and any(_is_float(t) and float(t) == float(spec.positive)
                                              for t in spec.seen_labels)):
        raise UsageError(f"--positive {spec.positive}: no row has this label (labels seen: "
                         f"{', '.join(sorted(spec.seen_labels)[:10])})")
    if len(run.classes) < 2:
        which = "positive" if run.classes == {1} else "negative"
        raise UsageError(f"{path}: every row is {which}: the AUC needs both classes "
                         "(check the labels or --positive)")
    if progress.reported != progress.rows:
        progress.line(final=True)
    if args.final_model is not None:
        _save_model_file(args.final_model, model if engine is None else engine, spec,
                         rows_before + progress.rows)
    return 0


def _is_float(text):
    try:
        float(text)
    except (TypeError, ValueError):
        return False
    return True


def _cmd_score(args):
    state, meta = _load_state_file(args.model, args.trust_pickle)
    spec = FeatureSpec.from_state(meta["features"])
    if args.format not in ("auto", spec.fmt):
        raise UsageError(f"--format {args.format} differs from the model file's {spec.fmt}")
    engine = _engine_of(state)
    model = _estimator_of(state, args.model) if engine is None else None
    if args.proba and model is not None and not hasattr(model, "predict_proba"):
        raise UsageError(f"{type(model).__name__} has no predict_proba")
    path = _data_path(args)
    stream = open_input(path)
    out = _open_out(args.out or args.predictions) or sys.stdout
    from ._core._numeric import sigmoid
    from .metrics import BinnedAUC

    metric, rows = BinnedAUC(), 0
    try:
        for number, block in read_chunks(stream, args.chunk, path):
            parsed = spec.transform(block, number, required=False, raw=engine is not None)
            if parsed is None:
                continue
            X, y, _ = parsed
            if engine is not None:
                s = engine.scores(*csr_arrays(X))
                if args.proba:
                    s = sigmoid(engine.calibration[0] * s)
            elif model is None:                 # the engine and the estimator are exclusive
                raise AssertionError("no model to score with")
            elif args.proba:
                s = model.predict_proba(X)[:, 1]
            else:
                s = np.ravel(model.decision_function(X))
            out.write(_lines(s))
            if spec.labelled:
                metric.update_many(y, s)
            rows += X.shape[0]
    finally:
        if path != "-":
            stream.close()
        if out is not sys.stdout:
            out.close()
    if not args.quiet:
        msg = f"sosl score: {rows} rows scored"
        if spec.labelled:
            msg += f", {metric.n_pos + metric.n_neg} labelled: "
            if metric.n_pos and metric.n_neg:
                msg += (f"auc {metric.get():.4f}, average precision "
                        f"{metric.average_precision():.4f}")
            else:
                msg += "one class only, no auc"
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


def _non_negative_int(text):
    if text.strip() == "0":
        return 0
    return _positive_int(text)


def _hash_bits(text):
    value = _positive_int(text)
    if value > 31:
        raise argparse.ArgumentTypeError(f"{value} bits is more than 31 (2^31 columns is the "
                                         "most the sparse passes index)")
    return value


def build_parser():
    """The argument parser of ``sosl`` (its ``learn`` and ``score`` sub-commands)."""
    from ._version import __version__

    parser = _Parser(prog="sosl", description="Train and score sosl's online AUC learners on "
                     "a stream of rows (LIBSVM, CSV, label<TAB>text or VW's format, plain or "
                     ".gz/.bz2/.xz), from a file or stdin.")
    parser.add_argument("--version", action="version", version=f"sosl {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="{learn,score}", parser_class=_Parser)
    sub.required = True

    def common(p):
        p.add_argument("data", nargs="?", default="-",
                       help="input file, '-' for standard input (the default)")
        p.add_argument("-d", "--data", dest="data_opt", default=None, metavar="FILE",
                       help="the input file (as the positional argument; VW's -d)")
        p.add_argument("--format", choices=FORMATS, default="auto",
                       help="input format (auto: from the extension or the first line; a TAB "
                            "means text, '|' VW, index:value tokens LIBSVM, commas CSV)")
        p.add_argument("--chunk", type=_positive_int, default=1000,
                       help="lines parsed and vectorized together (default 1000); the result "
                            "does not depend on it")
        p.add_argument("-p", "--predictions", default=None, metavar="FILE",
                       help="write one score a row here (learn: each row's score before it "
                            "is learned)")
        p.add_argument("-q", "--quiet", action="store_true", help="no report")
        p.add_argument("--trust-pickle", action="store_true",
                       help="also read an old pickled (joblib) model file; a pickle runs "
                            "code when read: only for files you trust")

    learn = sub.add_parser("learn", help="one online pass over labelled rows",
                           description="One online pass over labelled rows with progressive "
                           "validation: each row is scored before it is learned.")
    common(learn)
    learn.add_argument("--learner", default=None,
                       help=f"learner class (default {DEFAULT_LEARNER}): {', '.join(LEARNERS)}")
    learn.add_argument("--param", action="append", metavar="NAME=VALUE",
                       help="a learner parameter, e.g. --param lam=0.01 (repeat, or "
                            "comma-separate)")
    learn.add_argument("-b", "--hash-bits", type=_hash_bits, default=None,
                       help="hash features into 2^B columns (text and vw: default 18; "
                            "LIBSVM: indexed unless given)")
    learn.add_argument("--n-features", type=_positive_int, default=None,
                       help="LIBSVM columns (largest index + 1); default: as the rows "
                            "come (the default learner) or one scan of the file")
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
    learn.add_argument("--exact-auc", action="store_true",
                       help="report the exact AUC of all rows (memory grows with the rows); "
                            "default: a binned AUC in constant memory, its error bound on "
                            "the final line")
    learn.add_argument("--block", type=_positive_int, default=1, metavar="B",
                       help="score each block of B rows with the model as it stood before "
                            "the block, then learn the block in one call (default 1: row by "
                            "row); the same model, faster, progressive scores up to B - 1 "
                            "rows staler")
    learn.add_argument("--delay", type=_non_negative_int, default=0, metavar="D",
                       help="learn each row only after the next D rows have been scored "
                            "(labels that arrive late; default 0; the first row is learned "
                            "at once, as nothing can score it)")
    learn.add_argument("-t", "--test-only", action="store_true",
                       help="score the rows with the -i model and report, learning nothing")
    learn.add_argument("-i", "--model", default=None,
                       help="continue training this model file (its features are reused)")
    learn.add_argument("-f", "--final-model", default=None, metavar="PATH",
                       help="write the trained model here")
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


def console_main():
    """The ``sosl`` program (console script and ``python -m sosl``): :func:`main` in a
    process of its own.

    scikit-learn probes for pandas (and through it pyarrow) when it is imported; the
    command line never hands it a DataFrame, and the probe costs the process about a
    third of its start-up and half its memory. In a process of its own the command marks
    them absent before scikit-learn is imported (not in :func:`main`, which a caller may
    run inside a process that uses them).
    """
    for name in ("pandas", "pyarrow"):
        if name not in sys.modules:
            sys.modules[name] = None  # type: ignore[assignment]  # later imports raise
    return main()


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
