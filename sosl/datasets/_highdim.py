"""Sparse and high-dimensional datasets, read from their original formats.

Public datasets registered in :data:`~sosl.datasets.HIGHDIM_DATASETS`:

* ``sms_spam`` -- 5,574 SMS messages, 747 spam; raw text, turned into a sparse matrix by
  :func:`vectorize_texts` (feature hashing into 2^20 columns by default, or TF-IDF).
* ``davidson_hate`` -- 24,783 tweets (Davidson et al., ICWSM 2017), hate speech (class 0,
  1,430 tweets) against offensive or neither (IR 16.3); raw text like ``sms_spam``, read
  from the authors' CSV (a header, quoted fields with newlines) by :func:`read_davidson_csv`.
  The tweets are openly offensive.
* ``w8a`` -- 49,749 web pages x 300 binary features, 1,479 positives (svmlight format).
* ``dorothea_valid`` -- 350 compounds x 100,000 binary features, 34 positives (the NIPS 2003
  sparse-binary format: a line of 1-based column indices per row, labels in another file).

Their files are looked up in ``<d>/highdim/`` and then in ``<d>`` itself, for each data
directory ``d`` in the usual order (the ``data_dir`` argument, else ``$SOSL_DATA_DIR``, then
the user cache directory). So ``SOSL_DATA_DIR`` names the same directory for every dataset
(the Table 1 files at its top, these in its ``highdim/`` folder), while ``data_dir=`` may
also point straight at a folder holding the files.

The sparse matrices are scipy CSR, float64, with sorted int32 column indices; labels are
``y in {0, 1}`` with 1 the positive (minority) class. No scaling is applied: the features
are binary, or scaled by the vectorizer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from ._checksum import verify_sha256
from ._errors import IntegrityError
from ._paths import HIGHDIM_SUBDIR, find_file
from ._registry import highdim_info_of

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

    from ._paths import StrPath

__all__ = ["find_highdim", "read_sms_tsv", "read_sparse_binary", "load_sms_spam",
           "read_davidson_csv", "load_davidson_hate", "text_vectorizer", "vectorize_texts",
           "load_w8a", "load_dorothea_valid", "load_highdim"]


def find_highdim(name: str, data_dir: StrPath | None = None) -> list[Path]:
    """Paths of a high-dimensional dataset's files (see the module notes for the lookup)."""
    info = highdim_info_of(name)
    return find_file(name, [f for f, _ in info.files], data_dir, subdir=HIGHDIM_SUBDIR)


def _located(name, data_dir, verify):
    info = highdim_info_of(name)
    paths = find_highdim(name, data_dir)
    if verify:
        for path, (_, digest) in zip(paths, info.files):
            verify_sha256(name, path, digest)
    return info, paths


def _canonical_csr(X):
    X = sp.csr_matrix(X, dtype=np.float64)
    X.sum_duplicates()
    X.sort_indices()
    if X.indices.dtype != np.int32 and X.shape[1] < 2**31 and X.nnz < 2**31:
        X.indices = X.indices.astype(np.int32)
        X.indptr = X.indptr.astype(np.int32)
    return X


def read_sms_tsv(path: StrPath) -> tuple[list[str], np.ndarray]:
    """Read ``label<TAB>text`` lines (UTF-8, no header, no quoting).

    Returns
    -------
    texts : list of str
    labels : ndarray of str, shape (n,)

    Raises
    ------
    IntegrityError
        (a ValueError) naming the first line without a tab.
    """
    with open(path, encoding="utf-8", newline="") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    texts, labels = [], []
    for i, line in enumerate(lines, start=1):
        label, sep, text = line.rstrip("\r").partition("\t")
        if not sep:
            raise IntegrityError(f"{path}: line {i} has no tab between label and text")
        labels.append(label)
        texts.append(text)
    return texts, np.array(labels, dtype=str)


def read_sparse_binary(path: StrPath, n_features: int) -> sp.csr_matrix:
    """Read the sparse-binary format: line i lists the 1-based columns where row i is 1.

    An empty line is a row of zeros.

    Parameters
    ----------
    path : str or path-like
    n_features : int
        Number of columns.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n, n_features), float64, values 1

    Raises
    ------
    IntegrityError
        (a ValueError) for an index outside 1..n_features or repeated within a row.
    """
    with open(path, encoding="ascii") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    rows = [np.array(line.split(), dtype=np.int64) for line in lines]
    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    indptr[1:] = np.cumsum([r.shape[0] for r in rows])
    cols = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    if cols.size and (cols.min() < 1 or cols.max() > n_features):
        raise IntegrityError(f"{path}: column indices must lie in 1..{n_features}, found "
                             f"{cols.min()}..{cols.max()}")
    X = sp.csr_matrix((np.ones(cols.shape[0]), cols - 1, indptr),
                      shape=(len(rows), int(n_features)))
    X = _canonical_csr(X)
    if X.nnz != cols.shape[0]:
        raise IntegrityError(f"{path}: {cols.shape[0] - X.nnz} repeated column indices")
    return X


def load_sms_spam(data_dir: StrPath | None = None,
                  verify: bool = True) -> tuple[list[str], np.ndarray]:
    """The SMS Spam Collection as raw texts and labels (1 = spam).

    Parameters
    ----------
    data_dir : str or path-like or None
        See the module notes; the file is ``SMSSpamCollection``.
    verify : bool, default=True
        Check the file's sha256 against the registry first.

    Returns
    -------
    texts : list of str, length 5574
    y : ndarray of shape (5574,), int in {0, 1}; 747 ones

    See Also
    --------
    vectorize_texts : the texts as a sparse matrix.
    """
    info, (path,) = _located("sms_spam", data_dir, verify)
    texts, labels = read_sms_tsv(path)
    return texts, (labels == info.positive_label).astype(np.int64)


def read_davidson_csv(path: StrPath) -> tuple[list[str], np.ndarray]:
    """Read the Davidson et al. CSV: a header, then one tweet per record.

    Fields are parsed by the :mod:`csv` module (tweets hold commas, quotes and newlines
    inside quoted fields); the columns used are ``class`` (0 hate speech, 1 offensive
    language, 2 neither) and ``tweet``, found by name in the header.

    Returns
    -------
    texts : list of str
    classes : ndarray of int64, shape (n,), in {0, 1, 2}

    Raises
    ------
    IntegrityError
        (a ValueError) for a header without ``class`` or ``tweet``, a record with another
        number of fields than the header, or a class outside 0, 1, 2 (naming the record).
    """
    import csv

    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header is None or "class" not in header or "tweet" not in header:
            raise IntegrityError(f"{path}: the header must name the columns 'class' and "
                                 f"'tweet', found {header!r}")
        ci, ti = header.index("class"), header.index("tweet")
        texts, classes = [], []
        for k, record in enumerate(reader, start=1):
            if len(record) != len(header):
                raise IntegrityError(f"{path}: record {k} (line {reader.line_num}) has "
                                     f"{len(record)} fields, the header {len(header)}")
            if record[ci] not in ("0", "1", "2"):
                raise IntegrityError(f"{path}: record {k} (line {reader.line_num}) has class "
                                     f"{record[ci]!r}, not 0, 1 or 2")
            classes.append(int(record[ci]))
            texts.append(record[ti])
    return texts, np.array(classes, dtype=np.int64)


def load_davidson_hate(data_dir: StrPath | None = None,
                       verify: bool = True) -> tuple[list[str], np.ndarray]:
    """The Davidson et al. tweets as raw texts and labels (1 = hate speech, class 0).

    Parameters
    ----------
    data_dir : str or path-like or None
        See the module notes; the file is ``davidson_labeled_data.csv``.
    verify : bool, default=True
        Check the file's sha256 against the registry first.

    Returns
    -------
    texts : list of str, length 24783
    y : ndarray of shape (24783,), int in {0, 1}; 1,430 ones (hate speech against the
        offensive and the neither tweets, IR 16.3)

    See Also
    --------
    vectorize_texts : the texts as a sparse matrix (hashed to 2^20 columns by default).
    """
    info, (path,) = _located("davidson_hate", data_dir, verify)
    texts, classes = read_davidson_csv(path)
    return texts, (classes == int(info.positive_label)).astype(np.int64)


def text_vectorizer(method: str = "hashing", n_features: int = 2**20, **kwargs: Any) -> Any:
    """An unfitted scikit-learn vectorizer for :func:`vectorize_texts`.

    Parameters
    ----------
    method : {"hashing", "tfidf"}, default="hashing"
        ``"hashing"``: :class:`~sklearn.feature_extraction.text.HashingVectorizer` with
        ``n_features`` columns (stateless: the same text always maps to the same row, so it
        is safe inside cross-validation). ``"tfidf"``:
        :class:`~sklearn.feature_extraction.text.TfidfVectorizer` keeping at most
        ``n_features`` terms (the most frequent); it learns a vocabulary and document
        frequencies, so fit it on training folds only.
    n_features : int, default=2**20
    **kwargs
        Passed to the vectorizer (e.g. ``ngram_range``, ``alternate_sign``, ``sublinear_tf``).
    """
    from sklearn.feature_extraction.text import HashingVectorizer, TfidfVectorizer

    if isinstance(n_features, bool) or not isinstance(n_features, (int, np.integer)) \
            or n_features < 1:
        raise ValueError(f"n_features must be a positive int, got {n_features!r}")
    if method == "hashing":
        return HashingVectorizer(n_features=int(n_features), **kwargs)
    if method == "tfidf":
        return TfidfVectorizer(max_features=int(n_features), **kwargs)
    raise ValueError(f"method must be 'hashing' or 'tfidf', got {method!r}")


def vectorize_texts(texts: Iterable[str], method: str = "hashing", n_features: int = 2**20,
                    **kwargs: Any) -> sp.csr_matrix:
    """Texts as a sparse matrix: ``text_vectorizer(...).fit_transform(texts)`` in CSR.

    Parameters
    ----------
    texts : sequence of str
    method, n_features, **kwargs
        As in :func:`text_vectorizer`.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (len(texts), columns), float64
        ``columns`` is ``n_features`` for hashing, the vocabulary size (<= ``n_features``)
        for TF-IDF. Rows are L2-normalized (both vectorizers' default).
    """
    return _canonical_csr(text_vectorizer(method, n_features, **kwargs).fit_transform(texts))


def load_w8a(data_dir: StrPath | None = None,
             verify: bool = True) -> tuple[sp.csr_matrix, np.ndarray]:
    """The LIBSVM w8a training file: 49,749 x 300 sparse binary, 1,479 positives.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (49749, 300), float64
    y : ndarray of shape (49749,), int in {0, 1}
    """
    from sklearn.datasets import load_svmlight_file

    info, (path,) = _located("w8a", data_dir, verify)
    X, labels = load_svmlight_file(str(path), n_features=info.n_features, dtype=np.float64)
    return _canonical_csr(X), (labels == float(info.positive_label)).astype(np.int64)


def load_dorothea_valid(data_dir: StrPath | None = None,
                        verify: bool = True) -> tuple[sp.csr_matrix, np.ndarray]:
    """The validation split of Dorothea: 350 x 100,000 sparse binary, 34 positives.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (350, 100000), float64
    y : ndarray of shape (350,), int in {0, 1}

    Raises
    ------
    IntegrityError
        (a ValueError) if the labels file has another number of rows than the data file.
    """
    info, (data, labels_file) = _located("dorothea_valid", data_dir, verify)
    X = read_sparse_binary(data, info.n_features)
    labels = np.loadtxt(labels_file, dtype=np.float64, ndmin=1)
    if labels.shape[0] != X.shape[0]:
        raise IntegrityError(f"dataset 'dorothea_valid': {X.shape[0]} rows in {data} but "
                             f"{labels.shape[0]} labels in {labels_file}")
    return X, (labels == float(info.positive_label)).astype(np.int64)


_LOADERS = {"sms_spam": load_sms_spam, "w8a": load_w8a, "dorothea_valid": load_dorothea_valid,
            "davidson_hate": load_davidson_hate}


def load_highdim(name: str, data_dir: StrPath | None = None,
                 verify: bool = True) -> tuple[Any, np.ndarray]:
    """Load a registered high-dimensional dataset by name.

    Parameters
    ----------
    name : {"sms_spam", "davidson_hate", "w8a", "dorothea_valid"}
    data_dir : str or path-like or None
    verify : bool, default=True
        Check every file's sha256 against the registry first.

    Returns
    -------
    X : scipy.sparse.csr_matrix, or list of str for ``sms_spam`` and ``davidson_hate``
        (raw texts; see :func:`vectorize_texts`)
    y : ndarray of int in {0, 1}
    """
    highdim_info_of(name)
    return _LOADERS[name](data_dir=data_dir, verify=verify)
