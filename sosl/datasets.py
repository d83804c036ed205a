"""Datasets of the SOSL paper: LIBSVM loading, a registry of Table 1, synthetic streams.

What is here
------------
* :func:`load_libsvm`, :func:`scale_features`, :func:`to_unit_ball` -- reading and the
  paper's preprocessing (every feature scaled to [-1, 1], Section 6.2) plus an optional
  projection into the unit ball that the regret analysis assumes (||x|| <= 1).
* :data:`DATASETS` -- one :class:`DatasetInfo` per dataset of the paper's Table 1: public
  source files, format, the rule that makes it binary (which label is the positive,
  minority class), whether train and test files are combined, the expected rows, features,
  positive count and imbalance ratio, and the sha256 of the prepared file where known.
* :func:`load_dataset`, :func:`available_datasets`, :func:`check_dataset`, :func:`download`
  -- a prepared file ``<name>.libsvm`` is looked up in, in this order, the ``data_dir``
  argument, the directory named by the environment variable ``SOSL_DATA_DIR``, and a user
  cache directory (``$XDG_CACHE_HOME/sosl`` or ``~/.cache/sosl``). Nothing is downloaded at
  import or test time; :func:`download` is the only function that touches the network.
* :func:`load_default` -- scikit-learn's bundled breast-cancer data (malignant = positive),
  the real dataset that works offline with no data directory.
* :func:`make_imbalanced_stream` -- a seeded synthetic imbalanced stream.

Labels returned by the loaders are ``y in {0, 1}`` with 1 the positive (minority) class, so
that ``classes_[1]`` of every sosl estimator is the positive class.
"""

import hashlib
import os
import shutil
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = [
    "DATASETS", "DatasetInfo", "available_datasets", "check_dataset", "download",
    "get_data_dir", "load_dataset", "load_default", "load_libsvm", "make_imbalanced_stream",
    "scale_features", "sha256sum", "to_unit_ball",
]

_LIBSVM_BIN = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary/"
_LIBSVM_MC = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/multiclass/"
_UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases/"


# --------------------------------------------------------------------------- preprocessing

def load_libsvm(path, n_features=None):
    """Read a LIBSVM/svmlight file into a dense array.

    Parameters
    ----------
    path : str or path-like
        The file.
    n_features : int or None, default=None
        Number of columns; None infers it from the largest feature index present (a
        trailing feature that is zero in every row would then be lost, so pass it when known).

    Returns
    -------
    X : ndarray of shape (n, n_features), float64, C-contiguous
    y : ndarray of shape (n,), float64
        The labels as written in the file.
    """
    from sklearn.datasets import load_svmlight_file

    X, y = load_svmlight_file(str(path), n_features=n_features, dtype=np.float64)
    return np.ascontiguousarray(X.toarray(), dtype=np.float64), np.asarray(y, dtype=np.float64)


def scale_features(X, feature_range=(-1.0, 1.0)):
    """Min-max scale every column to ``feature_range`` (the paper's preprocessing).

    Parameters
    ----------
    X : array-like of shape (n, p)
    feature_range : tuple (low, high), default=(-1, 1)

    Returns
    -------
    Xs : ndarray of shape (n, p), float64
        Scaled copy. A constant column has no range to scale and becomes 0 (the middle of
        the default range), so it carries no information into a linear score.
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D, got shape {X.shape}")
    low, high = map(float, feature_range)
    if not low < high:
        raise ValueError(f"feature_range must satisfy low < high, got {feature_range}")
    lo, hi = X.min(axis=0), X.max(axis=0)
    span = hi - lo
    const = span == 0
    Xs = low + (X - lo) * ((high - low) / np.where(const, 1.0, span))
    Xs[:, const] = 0.0
    return np.ascontiguousarray(Xs)


def to_unit_ball(X):
    """Divide every row by the largest row norm, so that all ``||x|| <= 1``.

    One common factor keeps the geometry (ratios of distances, linear separability) and is
    what the regret analysis (Theorem 6 assumes ||x|| <= 1) needs; per-row normalization
    would change the problem. An all-zero X is returned unchanged.

    Parameters
    ----------
    X : array-like of shape (n, p)

    Returns
    -------
    Xb : ndarray of shape (n, p), float64
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D, got shape {X.shape}")
    r = float(np.sqrt((X * X).sum(axis=1)).max()) if X.shape[0] else 0.0
    return np.ascontiguousarray(X / r if r > 0 else X.copy())


def make_imbalanced_stream(n_samples=1000, n_features=5, imbalance_ratio=5.0, class_sep=1.0,
                           random_state=None):
    """A seeded synthetic imbalanced stream: two Gaussian classes in random order.

    Negatives are N(-class_sep/2 * u, I), positives N(+class_sep/2 * u, I) with u a random
    unit vector, ``round(n_samples / (1 + imbalance_ratio))`` positives (at least one of
    each class), rows shuffled.

    Parameters
    ----------
    n_samples : int
    n_features : int
    imbalance_ratio : float, default=5.0
        Negatives per positive (the paper's IR), >= 1.
    class_sep : float, default=1.0
        Distance between the class means.
    random_state : int or None
        Seed of ``np.random.default_rng``.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,), int, in {0, 1}; 1 is the minority class
    """
    if int(n_samples) < 2 or int(n_features) < 1:
        raise ValueError(f"need n_samples >= 2 and n_features >= 1, got {n_samples}, {n_features}")
    if not imbalance_ratio >= 1:
        raise ValueError(f"imbalance_ratio must be >= 1, got {imbalance_ratio}")
    rng = np.random.default_rng(random_state)
    n, p = int(n_samples), int(n_features)
    n_pos = min(max(1, int(round(n / (1.0 + imbalance_ratio)))), n - 1)
    y = np.zeros(n, dtype=np.int64)
    y[:n_pos] = 1
    u = rng.normal(size=p)
    u /= np.linalg.norm(u)
    X = rng.normal(size=(n, p)) + np.outer(np.where(y == 1, 0.5, -0.5) * class_sep, u)
    perm = rng.permutation(n)
    return np.ascontiguousarray(X[perm]), y[perm]


def load_default(scale=True):
    """scikit-learn's bundled breast-cancer data: 569 x 30, malignant (212) = positive.

    Returns
    -------
    X : ndarray of shape (569, 30), scaled to [-1, 1] when ``scale``
    y : ndarray of shape (569,), int in {0, 1}, 1 = malignant
    """
    from sklearn.datasets import load_breast_cancer

    data = load_breast_cancer()
    y = (data.target == 0).astype(np.int64)  # sklearn codes malignant as 0
    X = np.asarray(data.data, dtype=np.float64)
    return (scale_features(X) if scale else np.ascontiguousarray(X)), y


# --------------------------------------------------------------------------- the registry

@dataclass(frozen=True)
class DatasetInfo:
    """One dataset of the paper's Table 1.

    Attributes
    ----------
    name : str
        Name used in the paper and as the prepared file's stem, ``<name>.libsvm``.
    sources : tuple of (url, sha256 or None)
        Public files; several are concatenated in order (train then test) when
        ``combined``. A known sha256 is verified by :func:`download`.
    fmt : str
        ``"libsvm"`` or ``"uci-csv"`` (comma separated, label in the last column).
    binarize : str
        Which original label becomes the positive class: ``"label=<v>"`` (that label),
        ``"count=<k>"`` (the one class with exactly k rows, used where the paper states only
        the imbalance ratio) or ``"min-label"`` (the smallest label, where all classes are
        the same size and the paper does not say).
    combined : bool
        Whether train and test files are combined to give the paper's instance count.
    n_rows, n_features, n_positive : int
        Expected shape and positive count of the prepared file.
    paper_ir : float
        The imbalance ratio printed in Table 1 (negatives / positives).
    sha256 : str or None
        Checksum of the prepared file (from the CI data manifest where known).
    label_counts : dict or None
        Expected count per original label, where known.
    label_map : dict or None
        For ``uci-csv``: text label -> numeric label written to the prepared file.
    note : str
        Departures from the paper and choices made.
    """

    name: str
    sources: tuple
    fmt: str
    binarize: str
    combined: bool
    n_rows: int
    n_features: int
    n_positive: int
    paper_ir: float
    sha256: str = None
    label_counts: dict = None
    label_map: dict = None
    note: str = ""

    @property
    def ir(self):
        """Imbalance ratio of the registered instance set (negatives / positives)."""
        return (self.n_rows - self.n_positive) / self.n_positive

    @property
    def filename(self):
        return f"{self.name}.libsvm"


def _info(name, sources, binarize, n_rows, n_features, n_positive, paper_ir, *, fmt="libsvm",
          sha256=None, label_counts=None, label_map=None, note=""):
    return DatasetInfo(name, tuple((u, None) if isinstance(u, str) else tuple(u) for u in sources),
                       fmt, binarize, len(sources) > 1, n_rows, n_features, n_positive, paper_ir,
                       sha256, label_counts, label_map, note)


#: Registry of the 18 datasets of Table 1, in the paper's order. The binarization rules of
#: the 12 datasets in the CI data directory follow its MANIFEST.tsv.
DATASETS = {d.name: d for d in [
    _info("splice", [_LIBSVM_BIN + "splice_scale"], "label=-1", 1000, 60, 483, 1.07,
          sha256="1763fde9e0d7aced354751581760b84d7e61f67e8a3b5e942aeab8866096f220",
          label_counts={-1: 483, 1: 517}, note="training file only (1000 rows as in the paper)"),
    _info("australian", [_LIBSVM_BIN + "australian"], "label=1", 690, 14, 307, 1.25,
          sha256="9eaea8e4a1bd7c0128c107d8611096c05724e4941001dd0a01a7da6561c5153f",
          label_counts={-1: 383, 1: 307}),
    _info("heart", [_LIBSVM_BIN + "heart"], "label=1", 270, 13, 120, 1.25,
          note="not in the CI data directory; +1 (presence, 120 rows) is the minority class"),
    _info("svmguide1", [_LIBSVM_BIN + "svmguide1", _LIBSVM_BIN + "svmguide1.t"], "label=0",
          7089, 4, 3089, 1.29,
          sha256="56923f9eab1b9a18e8fe7e6caf51f87ad4add14dab4ce5f2338be1dca263624e",
          label_counts={0: 3089, 1: 4000}, note="train and test files combined as in the paper"),
    _info("ionosphere", [_LIBSVM_BIN + "ionosphere_scale"], "label=-1", 351, 34, 126, 1.79,
          sha256="4461cc20beb1a4fad196ac4ee594fd2a7eeb9d7ea8c5f8c9e377aa3c9347eb3e",
          label_counts={-1: 126, 1: 225}),
    _info("fourclass", [_LIBSVM_BIN + "fourclass_scale"], "label=1", 862, 2, 307, 1.81,
          sha256="f7c10dfabc58245eba159ca33e06b54b30f2d2b766b77970f1ce6dcbbcfe17f9",
          label_counts={-1: 555, 1: 307}),
    _info("magic04", [_UCI + "magic/magic04.data"], "label=1", 19020, 10, 6688, 1.84,
          fmt="uci-csv", label_map={"g": 0, "h": 1},
          sha256="86e106b713fdc8e0c0ecbe762a1b23ae680fdbc9e15251a708e3f08f85c68218",
          label_counts={0: 12332, 1: 6688},
          note="UCI CSV converted to LIBSVM with g -> 0, h -> 1 (hadron, the minority, positive); "
               "the source lists the rows grouped by class, so always shuffle"),
    _info("diabetes", [_LIBSVM_BIN + "diabetes"], "label=-1", 768, 8, 268, 1.87,
          sha256="c5cad1a641b68758ed7c50116ec91bdbb1f5fa584274e1798f2c1458f0c87bd6",
          label_counts={-1: 268, 1: 500}),
    _info("german", [_LIBSVM_BIN + "german.numer"], "label=1", 1000, 24, 300, 2.33,
          sha256="2de7b80fb3f5216f16ccb5c47c4d8412cbee44191eb1c2801c5d2dfdbeb5a258",
          label_counts={-1: 700, 1: 300}, note="the numeric version german.numer"),
    _info("vehicle", [_LIBSVM_MC + "vehicle.scale"], "count=217", 846, 18, 217, 2.90,
          note="not in the CI data directory; IR 2.90 = 629/217 singles out the class with 217 "
               "rows (saab in the Statlog source) against the other three"),
    _info("svmguide3", [_LIBSVM_BIN + "svmguide3", _LIBSVM_BIN + "svmguide3.t"], "label=1",
          1284, 21, 337, 3.34,
          sha256="096fc9b514cd085a19a7c15ad3dbe1b7f8ba449b0ae8d14f91bda355562da048",
          label_counts={-1: 947, 1: 337},
          note="train and test combined (1284 rows as in the paper); the IR is 2.81, not the "
               "paper's 3.34, which no split of these files reproduces"),
    _info("segment", [_LIBSVM_MC + "segment.scale"], "label=1", 2310, 19, 330, 6.00,
          sha256="4ab83b73c98165d745f7743c4f27616cde18ea32fa478183191983c1eacfdaa7",
          label_counts={k: 330 for k in range(1, 8)},
          note="class 1 vs rest as in the CI manifest (all 7 classes have 330 rows, IR 6 for "
               "any); class 1 is almost linearly separable (OAUC-M AUC 99.7), while class 4 vs "
               "rest reproduces the paper's segment column (OAUC-M 87.9 vs 88.5, OAM 89.2 vs "
               "89.9, coarse grid), so the paper probably used class 4"),
    _info("svmguide2", [_LIBSVM_MC + "svmguide2"], "count=53", 391, 20, 53, 6.38,
          note="not in the CI data directory; IR 6.38 = 338/53 singles out the smallest of the "
               "three classes"),
    _info("satimage", [_LIBSVM_MC + "satimage.scale", _LIBSVM_MC + "satimage.scale.t"],
          "count=626", 6435, 36, 626, 9.28,
          note="not in the CI data directory; train + test = 6435 rows; IR 9.28 = 5809/626 "
               "singles out class 4 (damp grey soil)"),
    _info("vowel", [_LIBSVM_MC + "vowel.scale", _LIBSVM_MC + "vowel.scale.t"], "min-label",
          990, 10, 90, 10.00,
          note="not in the CI data directory; train + test = 990 rows, 11 classes of 90: any "
               "one-vs-rest gives IR 10; the paper does not say which, we take the smallest label"),
    _info("letter", [_LIBSVM_MC + "letter.scale"], "count=538", 15000, 16, 538, 26.88,
          note="not in the CI data directory; the 15000-row training file; IR 26.88 = "
               "14462/538 singles out the letter with 538 rows (checked on load)"),
    _info("shuttle", [_LIBSVM_MC + "shuttle"], "label=3", 43500, 9, 132, 44.89,
          sha256="fd7697dd19c56886d77a5b04e9acad88f3298db649c56d2cabfc0cf3af7e6151",
          label_counts={1: 34108, 2: 37, 3: 132, 4: 6748, 5: 2458, 6: 6, 7: 11},
          note="the unscaled 43500-row training file (= UCI shuttle.trn; features are "
               "scaled on load anyway). No class-vs-rest split gives the "
               "paper's IR 44.89; class 3 (132 rows, IR 328.5) is used, as in the CI manifest"),
    _info("poker", [_LIBSVM_MC + "poker"], "label=3", 25010, 10, 513, 47.75,
          sha256="ce70af97f7bcaa809c7922642a33da199bc650d1f9bd0d6099d635701c2aff36",
          label_counts={0: 12493, 1: 10599, 2: 1206, 3: 513, 4: 93, 5: 54, 6: 36, 7: 6, 8: 5, 9: 5},
          note="the 25010-row training file; class 3 (three of a kind) vs rest"),
]}


# --------------------------------------------------------------------------- data directory

def _cache_dir():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "sosl"


def get_data_dir(data_dir=None):
    """The data directory: ``data_dir`` if given, else ``$SOSL_DATA_DIR``, else the cache dir.

    Returns
    -------
    path : pathlib.Path
        Not created and not checked for existence.
    """
    if data_dir is not None:
        return Path(data_dir)
    env = os.environ.get("SOSL_DATA_DIR")
    if env:
        return Path(env)
    return _cache_dir()


def _info_of(name):
    try:
        return DATASETS[name]
    except KeyError:
        raise ValueError(f"unknown dataset {name!r}; registered: {', '.join(DATASETS)}") from None


def _find(name, data_dir=None):
    """Path of the prepared file: the first of data_dir / SOSL_DATA_DIR / cache that has it."""
    info = _info_of(name)
    if data_dir is not None:
        candidates = [Path(data_dir)]
    else:
        candidates = [Path(d) for d in (os.environ.get("SOSL_DATA_DIR"),) if d] + [_cache_dir()]
    for d in candidates:
        f = d / info.filename
        if f.is_file():
            return f
    where = ", ".join(str(d) for d in candidates)
    raise FileNotFoundError(
        f"dataset {name!r}: no file {info.filename} in {where}. Set SOSL_DATA_DIR to a directory "
        f"holding it, pass data_dir=, or fetch it with sosl.datasets.download({name!r}, data_dir)")


def available_datasets(data_dir=None):
    """Names of the registered datasets whose prepared file is present (registry order)."""
    out = []
    for name in DATASETS:
        try:
            _find(name, data_dir)
        except FileNotFoundError:
            continue
        out.append(name)
    return out


def _positive_label(info, labels, counts):
    kind, _, value = info.binarize.partition("=")
    if kind == "label":
        return float(value)
    if kind == "min-label":
        return float(labels.min())
    if kind == "count":
        hits = labels[counts == int(value)]
        if hits.shape[0] != 1:
            raise ValueError(f"dataset {info.name!r}: rule {info.binarize!r} matches {hits.shape[0]} "
                             f"classes (label counts {dict(zip(labels.tolist(), counts.tolist()))})")
        return float(hits[0])
    raise ValueError(f"dataset {info.name!r}: unknown binarization rule {info.binarize!r}")


def load_dataset(name, data_dir=None, scale=True, unit_ball=False):
    """Load a registered dataset as a binary problem with the minority class positive.

    Parameters
    ----------
    name : str
        A key of :data:`DATASETS` (or ``"default"`` for :func:`load_default`).
    data_dir : str or path-like or None
        Where ``<name>.libsvm`` is; default ``$SOSL_DATA_DIR``, then the user cache dir.
    scale : bool, default=True
        Scale every feature to [-1, 1] over the whole file (the paper's preprocessing).
    unit_ball : bool, default=False
        Afterwards divide by the largest row norm (see :func:`to_unit_ball`).

    Returns
    -------
    X : ndarray of shape (n, p), float64
    y : ndarray of shape (n,), int in {0, 1}; 1 is the positive class of the registry's rule
    """
    if name == "default":
        X, y = load_default(scale=scale)
    else:
        info = _info_of(name)
        X, labels = load_libsvm(_find(name, data_dir), n_features=info.n_features)
        uniq, counts = np.unique(labels, return_counts=True)
        y = (labels == _positive_label(info, uniq, counts)).astype(np.int64)
        if scale:
            X = scale_features(X)
    if unit_ball:
        X = to_unit_ball(X)
    return X, y


def sha256sum(path, chunk=1 << 20):
    """Hex sha256 of a file."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(chunk), b""):
            h.update(block)
    return h.hexdigest()


def check_dataset(name, data_dir=None, checksum=True):
    """Check that the local prepared file matches the registry.

    Compares rows, features, positive count, the count of every original label (where
    registered) and the sha256 (where registered and ``checksum``).

    Returns
    -------
    report : dict
        ``path``, ``rows``, ``features``, ``n_positive``, ``ir``, ``label_counts``, ``sha256``.

    Raises
    ------
    FileNotFoundError
        If the file is not found.
    ValueError
        Listing every mismatch, expected against found.
    """
    info = _info_of(name)
    path = _find(name, data_dir)
    X, labels = load_libsvm(path)
    uniq, counts = np.unique(labels, return_counts=True)
    found = {float(k): int(c) for k, c in zip(uniq, counts)}
    problems = []
    if X.shape[0] != info.n_rows:
        problems.append(f"rows: expected {info.n_rows}, found {X.shape[0]}")
    if X.shape[1] > info.n_features:
        problems.append(f"features: expected {info.n_features}, found {X.shape[1]}")
    n_pos = None
    try:
        pos = _positive_label(info, uniq, counts)
        n_pos = found.get(pos, 0)
        if n_pos != info.n_positive:
            problems.append(f"positive rows (rule {info.binarize}): expected {info.n_positive}, "
                            f"found {n_pos}")
    except ValueError as err:
        problems.append(str(err))
    if info.label_counts is not None:
        want = {float(k): int(v) for k, v in info.label_counts.items()}
        if want != found:
            problems.append(f"label counts: expected {want}, found {found}")
    digest = sha256sum(path) if checksum else None
    if checksum and info.sha256 is not None and digest != info.sha256:
        problems.append(f"sha256: expected {info.sha256}, found {digest}")
    if problems:
        raise ValueError(f"dataset {name!r} at {path} does not match the registry:\n  "
                         + "\n  ".join(problems))
    return {"path": str(path), "rows": X.shape[0], "features": info.n_features,
            "n_positive": n_pos, "ir": (X.shape[0] - n_pos) / n_pos, "label_counts": found,
            "sha256": digest}


# --------------------------------------------------------------------------- download

def _fetch(url, dest):
    """Copy ``url`` (http(s) or file://) to the path ``dest``. Replaceable in tests."""
    with urllib.request.urlopen(url, timeout=60) as r, open(dest, "wb") as f:
        shutil.copyfileobj(r, f)


def _csv_to_libsvm(src, dst, label_map):
    with open(src, encoding="ascii") as fin, open(dst, "w", encoding="ascii") as fout:
        for line in fin:
            parts = [t.strip() for t in line.strip().split(",")]
            if len(parts) < 2:
                continue
            label = label_map[parts[-1]] if label_map else parts[-1]
            feats = " ".join(f"{j}:{v}" for j, v in enumerate(parts[:-1], start=1)
                             if float(v) != 0.0)
            fout.write(f"{label} {feats}\n")


def download(name, data_dir=None, overwrite=False, verbose=True):
    """Fetch a dataset from its public source, verify it and write ``<name>.libsvm``.

    Each source file with a registered sha256 is verified before use (a mismatch raises and
    nothing is written); one without prints its computed sha256 so it can be pinned. The
    sources are concatenated (LIBSVM) or converted (UCI CSV), and the prepared file is then
    checked with :func:`check_dataset` (shape, label counts, sha256 where registered). The
    file appears in ``data_dir`` only if every check passes.

    This function is never called at import or test time. Plain ``urllib`` and ``hashlib``
    are used (pooch-style: known hash, verify, then move into place), so no extra
    dependency is needed.

    Parameters
    ----------
    name : str
    data_dir : str or path-like or None
        Target directory (created if needed); default as in :func:`get_data_dir`.
    overwrite : bool, default=False
        Replace an existing file; otherwise an existing file is only checked.
    verbose : bool, default=True

    Returns
    -------
    path : pathlib.Path
    """
    info = _info_of(name)
    target_dir = get_data_dir(data_dir)
    target_dir.mkdir(parents=True, exist_ok=True)
    target = target_dir / info.filename
    if target.exists() and not overwrite:
        check_dataset(name, target_dir)
        return target
    with tempfile.TemporaryDirectory(dir=target_dir) as tmp:
        parts = []
        for i, (url, want) in enumerate(info.sources):
            part = Path(tmp) / f"part{i}"
            _fetch(url, part)
            got = sha256sum(part)
            if want is not None and got != want:
                raise ValueError(f"dataset {name!r}: {url} has sha256 {got}, expected {want}; "
                                 "the public file changed or the download is corrupt")
            if want is None and verbose:
                print(f"{name}: {url} sha256 {got} (no registered checksum)")
            parts.append(part)
        prepared = Path(tmp) / info.filename
        if info.fmt == "uci-csv":
            _csv_to_libsvm(parts[0], prepared, info.label_map)
        else:
            with open(prepared, "wb") as out:
                for part in parts:
                    data = part.read_bytes()
                    out.write(data if data.endswith(b"\n") or not data else data + b"\n")
        check_dataset(name, tmp)
        os.replace(prepared, target)
    if verbose:
        print(f"{name}: wrote {target}")
    return target
