"""Datasets of the SOSL paper: registry, loading, checksums, download, synthetic streams.

What is here
------------
* The registry (:mod:`sosl.datasets._registry`, data in ``sosl/data/registry.tsv``):
  :data:`DATASETS`, one :class:`DatasetInfo` per dataset of the paper's Table 1 (public
  source files, format, the rule that makes it binary, whether train and test files are
  combined, the expected rows, features, positive count and imbalance ratio, and the sha256
  of the prepared file and of each source where known).
* Loading (:mod:`sosl.datasets._loaders`): :func:`load_dataset`, :func:`available_datasets`,
  :func:`check_dataset`, :func:`load_libsvm`, and :func:`load_default` (scikit-learn's
  bundled breast-cancer data, malignant = positive, the real dataset that works offline
  with no data directory). A prepared file ``<name>.libsvm`` is looked up in, in this order,
  the ``data_dir`` argument, the directory named by the environment variable
  ``SOSL_DATA_DIR``, and a user cache directory (``$XDG_CACHE_HOME/sosl`` or
  ``~/.cache/sosl``); see :func:`get_data_dir`.
* Download and checksums (:mod:`sosl.datasets._download`): :func:`download`,
  :func:`sha256sum`, :func:`verify_sha256` (``strict=False`` accepts an unverifiable file
  with an :class:`UnverifiedDatasetWarning` giving its sha256). Nothing is downloaded at
  import or test time; :func:`download` is the only function that touches the network.
* Preprocessing (:mod:`sosl.datasets._preprocessing`): :func:`scale_features` (every feature
  scaled to [-1, 1], the paper's Section 6.2), :func:`to_unit_ball` (the projection into the
  unit ball that the regret analysis assumes, ||x|| <= 1).
* Synthetic streams (:mod:`sosl.datasets._synthetic`): :func:`make_imbalanced_stream`,
  :func:`make_drifting_stream` (abrupt or gradual concept drift); and
  (:mod:`sosl.datasets._drift`) :func:`make_drift_stream`: rare positives (a rate that may
  move), abrupt, gradual or recurring drift at known rows, Gaussian or sparse text-like.
* Sparse and high-dimensional data (:mod:`sosl.datasets._highdim`): :data:`HIGHDIM_DATASETS`
  and :func:`load_highdim` (``sms_spam`` and ``davidson_hate`` as raw text with
  :func:`vectorize_texts`, ``w8a`` and ``dorothea_valid`` as scipy CSR), looked up in the
  ``highdim/`` folder of the data directory.
* Errors (:mod:`sosl.datasets._errors`): everything raised on purpose derives from
  :class:`DatasetError` and from the matching built-in exception.

Labels returned by the loaders are ``y in {0, 1}`` with 1 the positive (minority) class, so
that ``classes_[1]`` of every sosl estimator is the positive class.
"""

from ._download import UnverifiedDatasetWarning, download, sha256sum, verify_sha256
from ._drift import make_drift_stream
from ._errors import (
    DataDirectoryError,
    DatasetError,
    DatasetNotFoundError,
    DownloadError,
    IntegrityError,
    UnknownChecksumError,
    UnknownDatasetError,
)
from ._highdim import (
    find_highdim,
    load_davidson_hate,
    load_dorothea_valid,
    load_highdim,
    load_sms_spam,
    load_w8a,
    read_davidson_csv,
    read_sms_tsv,
    read_sparse_binary,
    text_vectorizer,
    vectorize_texts,
)
from ._loaders import available_datasets, check_dataset, load_dataset, load_default, load_libsvm
from ._paths import get_data_dir
from ._preprocessing import scale_features, to_unit_ball
from ._registry import DATASETS, HIGHDIM_DATASETS, DatasetInfo, HighDimInfo
from ._synthetic import make_drifting_stream, make_imbalanced_stream

__all__ = [
    "DATASETS", "DatasetInfo", "available_datasets", "check_dataset", "download",
    "get_data_dir", "load_dataset", "load_default", "load_libsvm", "make_imbalanced_stream",
    "make_drifting_stream", "make_drift_stream",
    "scale_features", "sha256sum", "to_unit_ball",
    "HIGHDIM_DATASETS", "HighDimInfo", "find_highdim", "load_highdim", "load_sms_spam",
    "load_w8a", "load_dorothea_valid", "read_sms_tsv", "read_sparse_binary", "text_vectorizer",
    "vectorize_texts", "load_davidson_hate", "read_davidson_csv",
    "DatasetError", "UnknownDatasetError", "DataDirectoryError", "DatasetNotFoundError",
    "IntegrityError", "UnknownChecksumError", "DownloadError", "UnverifiedDatasetWarning",
    "verify_sha256",
]
