"""Loading and checking the registered datasets of Table 1."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ._checksum import sha256sum, verify_sha256
from ._errors import DatasetNotFoundError, IntegrityError, UnknownChecksumError
from ._paths import find_file
from ._preprocessing import positive_label, scale_features, to_unit_ball
from ._registry import DATASETS, info_of

if TYPE_CHECKING:
    from pathlib import Path

    from ._paths import StrPath

__all__ = ["load_libsvm", "load_default", "load_dataset", "available_datasets", "check_dataset",
           "find_dataset"]


def load_libsvm(path: StrPath, n_features: int | None = None) -> tuple[np.ndarray, np.ndarray]:
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


def load_default(scale: bool = True) -> tuple[np.ndarray, np.ndarray]:
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


def find_dataset(name: str, data_dir: StrPath | None = None) -> Path:
    """Path of the prepared file ``<name>.libsvm``: the first searched directory holding it."""
    info = info_of(name)
    unverifiable = info.sha256 is None and any(digest is None for _, digest in info.sources)
    return find_file(name, [info.filename], data_dir, unverifiable=unverifiable)[0]


def available_datasets(data_dir: StrPath | None = None) -> list[str]:
    """Names of the registered Table 1 datasets whose prepared file is present (registry order)."""
    out = []
    for name in DATASETS:
        try:
            find_dataset(name, data_dir)
        except DatasetNotFoundError:
            continue
        out.append(name)
    return out


def load_dataset(name: str, data_dir: StrPath | None = None, scale: bool = True,
                 unit_ball: bool = False, verify: bool = True,
                 positive_class: Any = None) -> tuple[np.ndarray, np.ndarray]:
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
    verify : bool, default=True
        Check the file's sha256 against the registry before reading it. Where the registry
        knows no checksum (``DatasetInfo.sha256 is None``) the file cannot be verified and
        the call is refused; ``verify=False`` reads the file unchecked.
    positive_class : float or None, default=None
        The original label to make the positive class instead of the registry's rule
        (e.g. another class of a one-vs-rest dataset); None keeps the rule.

    Returns
    -------
    X : ndarray of shape (n, p), float64
    y : ndarray of shape (n,), int in {0, 1}; 1 is the positive class of the registry's rule

    Raises
    ------
    UnknownDatasetError
        (a ValueError) for a name that is not registered.
    DatasetNotFoundError
        (a FileNotFoundError) if no searched directory holds the file.
    IntegrityError
        (a ValueError) if ``verify`` and the sha256 differs from the registry's, if a
        ``count=<k>`` rule matches no class, or if no row has the label
        ``positive_class``; :class:`UnknownChecksumError` (a subclass) if ``verify`` and no
        checksum is registered.
    """
    if name == "default" and positive_class is not None:
        raise ValueError("positive_class applies to a registered LIBSVM dataset, not to "
                         "'default' (whose positive class is the malignant one)")
    if name == "default":
        X, y = load_default(scale=scale)
    else:
        info = info_of(name, extra=("default",))
        path = find_dataset(name, data_dir)
        if verify:
            verify_sha256(name, path, info.sha256)
        X, labels = load_libsvm(path, n_features=info.n_features)
        uniq, counts = np.unique(labels, return_counts=True)
        if positive_class is None:
            pos = positive_label(info, uniq, counts)
        else:
            pos = float(positive_class)
            if pos not in uniq:
                raise IntegrityError(
                    f"dataset {name!r}: no row of {path} has the label {positive_class!r} asked "
                    f"for as the positive class; its labels: "
                    f"{', '.join(f'{v:g}' for v in uniq)}")
        y = (labels == pos).astype(np.int64)
        if scale:
            X = scale_features(X)
    if unit_ball:
        X = to_unit_ball(X)
    return X, y


def check_dataset(name: str, data_dir: StrPath | None = None,
                  checksum: bool = True) -> dict[str, Any]:
    """Check that the local prepared file matches the registry.

    Compares rows, features, positive count, the count of every original label (where
    registered) and, when ``checksum``, the sha256.

    Parameters
    ----------
    name : str
    data_dir : str or path-like or None
    checksum : bool, default=True
        Compare the sha256 too. Where the registry knows none the file cannot be verified
        and the call is refused; ``checksum=False`` checks shape and labels only.

    Returns
    -------
    report : dict
        ``path``, ``rows``, ``features``, ``n_positive``, ``ir``, ``label_counts``, ``sha256``.

    Raises
    ------
    DatasetNotFoundError
        (a FileNotFoundError) if the file is not found.
    IntegrityError
        (a ValueError) listing every mismatch, expected against found.
    UnknownChecksumError
        (an IntegrityError) if ``checksum`` and the registry knows no sha256 for the file.
    """
    info = info_of(name)
    path = find_dataset(name, data_dir)
    if checksum and info.sha256 is None:
        raise UnknownChecksumError(
            f"dataset {name!r}: the registry knows no sha256 for {info.filename}, so {path} "
            f"cannot be verified; pass checksum=False to check its shape and labels only")
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
        pos = positive_label(info, uniq, counts)
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
    if checksum and digest != info.sha256:
        problems.append(f"sha256: expected {info.sha256}, found {digest}")
    if problems:
        raise IntegrityError(f"dataset {name!r} at {path} does not match the registry: "
                             + "; ".join(problems))
    return {"path": str(path), "rows": X.shape[0], "features": info.n_features,
            "n_positive": n_pos, "ir": (X.shape[0] - n_pos) / n_pos, "label_counts": found,
            "sha256": digest}
