"""Model files that load without running code: plain arrays and a JSON header.

A fitted sosl learner is its hyper-parameters plus a handful of numeric arrays
(:class:`sosl.state.LearnerState`). :func:`save` writes them as a NumPy ``.npz`` archive:
one ``.npy`` member per state array and a member ``header`` holding UTF-8 JSON (format
version, learner name, parameters, classes, layout, ``t``, ``n_seen``, the Platt state,
feature names, the caller's ``meta`` and a SHA-256 checksum of all of it). Reading it
(:func:`load_state`, :func:`load`) uses ``np.load(..., allow_pickle=False)`` and
``json.loads`` only, accepts only boolean, integer, float and string arrays and JSON
parameters, and refuses a file whose checksum does not match (a truncated, cut or edited
file) with a ValueError. Nothing in the file is ever called or imported.

A pickle (or joblib) file can run any code while it is read. It is refused with a
ValueError saying how to convert it, unless the caller passes ``allow_pickle=True`` for a
file it trusts; that read issues :class:`sosl.exceptions.PickleLoadWarning`.

The write is atomic: the archive goes to a temporary file in the target's directory,
which replaces the target (``os.replace``) only once it is complete and flushed; any
failure, a ``KeyboardInterrupt`` included, removes the temporary file and leaves the old
target as it was.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import warnings
import zipfile
from typing import Any

import numpy as np

from ._version import __version__
from .exceptions import PickleLoadWarning
from .state import STATE_VERSION, LearnerState, from_state, get_state

__all__ = ["save", "load", "load_state", "FORMAT", "FORMAT_VERSION"]

#: the ``format`` field of every header this module writes
FORMAT = "sosl-state"
#: version of the file layout (the header fields and member names); readers refuse others
FORMAT_VERSION = 1

_HEADER = "header"
_PREFIX = "a."                       # member name prefix of the state arrays
_META = "m."                         # member name prefix of the numeric arrays of meta
_CLASSES = "classes"
#: array kinds a safe file may hold: bool, signed and unsigned integers, floats
_NUMERIC = frozenset("biuf")
#: leading bytes of the pickle and compressed-joblib files this reader recognises
_PICKLE_MAGIC = (b"\x80", b"\x78", b"\x1f\x8b", b"BZh", b"\xfd7zXZ", b"\x04\x22\x4d\x18")


# -- JSON: scalars, lists, dicts with string keys, and tuples tagged as such -------------
def _to_json(value: Any, where: str) -> Any:
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, np.integer)) and not isinstance(value, np.bool_):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (float, np.floating)):
        if not np.isfinite(value):
            raise ValueError(f"{where} is {value}: a safe model file holds finite numbers only")
        return float(value)
    if isinstance(value, tuple):
        return {"__tuple__": [_to_json(v, f"{where}[{i}]") for i, v in enumerate(value)]}
    if isinstance(value, list):
        return [_to_json(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise ValueError(f"{where} has a key that is not a string")
        return {k: _to_json(v, f"{where}[{k!r}]") for k, v in value.items()}
    raise ValueError(f"{where} is a {type(value).__name__}, which a safe model file cannot "
                     "hold (JSON numbers, strings, booleans, None, lists and dicts only; "
                     "e.g. give random_state as an int)")


def _from_json(obj: dict) -> Any:
    if set(obj) == {"__tuple__"} and isinstance(obj["__tuple__"], list):
        return tuple(obj["__tuple__"])
    return obj


def _dumps(header: dict) -> bytes:
    return json.dumps(header, sort_keys=True, allow_nan=False,
                      separators=(",", ":")).encode("utf-8")


def _digest(header: dict, arrays: dict[str, np.ndarray]) -> str:
    """SHA-256 of the header (without its checksum) and of every array's name, dtype,
    shape and bytes, in name order."""
    h = hashlib.sha256(_dumps({k: v for k, v in header.items() if k != "checksum"}))
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(f"\0{name}\0{a.dtype.str}\0{a.shape}\0".encode())
        h.update(a.tobytes())
    return h.hexdigest()


# -- writing ---------------------------------------------------------------------------
def _payload(state: LearnerState, meta: dict | None) -> tuple[dict, dict[str, np.ndarray]]:
    arrays: dict[str, np.ndarray] = {}
    scalars: dict[str, Any] = {}
    for name, value in state.arrays.items():
        if isinstance(value, np.ndarray):
            if value.dtype.kind not in _NUMERIC:
                raise ValueError(f"state array {name!r} has dtype {value.dtype}: a safe model "
                                 "file holds boolean, integer and float arrays only")
            arrays[_PREFIX + name] = value
        else:
            scalars[name] = _to_json(value, f"state value {name!r}")
    classes = np.asarray(state.classes)
    as_object = classes.dtype.kind == "O"
    if as_object:
        if not all(isinstance(c, str) for c in classes.tolist()):
            raise ValueError("classes of mixed or object types cannot be stored in a safe "
                             "model file (numbers, booleans or strings only)")
        classes = classes.astype(str)
    if classes.dtype.kind not in _NUMERIC | {"U"}:
        raise ValueError(f"classes of dtype {classes.dtype} cannot be stored in a safe file")
    arrays[_CLASSES] = classes
    names = state.feature_names
    header = {
        "format": FORMAT, "format_version": FORMAT_VERSION, "state_version": state.version,
        "sosl_version": __version__, "learner": state.learner,
        "params": _to_json(state.params, "parameter"),
        "classes_object": as_object, "n_features": int(state.n_features),
        "layout": _to_json(state.layout, "layout"), "scalars": scalars,
        "t": int(state.t), "n_seen": int(state.n_seen),
        "calibration": [float(v) for v in np.asarray(state.calibration).tolist()],
        "feature_names": None if names is None else [str(v) for v in np.asarray(names).tolist()],
    }
    if meta is not None and not isinstance(meta, dict):
        raise TypeError(f"meta must be a dict, got {type(meta).__name__}")
    plain = {}
    for key, value in ({} if meta is None else meta).items():
        if isinstance(value, np.ndarray) and value.dtype.kind in _NUMERIC:
            arrays[_META + str(key)] = value        # a numeric array of meta: a member
        else:
            plain[key] = value
    header["meta"] = _to_json(plain, "meta")
    header["checksum"] = _digest(header, arrays)
    return header, arrays


def save(obj: Any, path: str | os.PathLike, *, meta: dict | None = None) -> None:
    """Write a fitted sosl estimator or a :class:`~sosl.state.LearnerState` to ``path``.

    Parameters
    ----------
    obj : fitted sosl estimator or LearnerState
        An estimator is read under its lock (its ``get_state``).
    path : str or path-like
        The file to write (conventionally ``.npz``); replaced atomically.
    meta : dict, optional
        The caller's data (e.g. a feature specification), returned by :func:`load_state`:
        JSON values, and numeric NumPy arrays as top-level values.

    Raises
    ------
    ValueError
        A parameter or ``meta`` value that JSON cannot hold (e.g. a ``RandomState``), or a
        non-numeric state array; nothing is written.
    """
    state = obj if isinstance(obj, LearnerState) else _state_of(obj)
    header, arrays = _payload(state, meta)
    members: dict[str, Any] = {_HEADER: np.frombuffer(_dumps(header), dtype=np.uint8),
                               **arrays}
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp",
                               dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, allow_pickle=False, **members)
            fh.flush()
            os.fsync(fh.fileno())
        # mkstemp creates the file for its owner only; a model file gets the mode an
        # ordinary open() would give it (0o666 less the umask), as users expect to share it
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _umask() -> int:
    """The process's umask (read by setting it and setting it back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _state_of(est: Any) -> LearnerState:
    if not hasattr(est, "get_state"):
        raise TypeError(f"save takes a fitted sosl estimator or a LearnerState, got "
                        f"{type(est).__name__}")
    return est.get_state()


# -- reading ---------------------------------------------------------------------------
def _refuse_pickle(path: str, head: bytes) -> None:
    if head.startswith(_PICKLE_MAGIC):
        raise ValueError(
            f"{path} is a pickle/joblib file, which can run arbitrary code when read; sosl "
            "does not read it by default. If you trust the file, convert it once to the safe "
            "format: sosl.io.save(sosl.io.load(path, allow_pickle=True), 'model.npz') (or "
            "pass --trust-pickle to the sosl command).")
    raise ValueError(f"{path} is not a sosl model file (neither a sosl .npz nor a pickle)")


def _read_pickle(path: str) -> tuple[LearnerState, dict]:
    warnings.warn(PickleLoadWarning(
        f"reading {path} as a pickle (allow_pickle=True): this runs whatever code the file "
        "holds; convert it with sosl.io.save to the safe format"), stacklevel=3)
    import joblib  # reads plain pickles as well
    obj = joblib.load(path)
    meta: dict = {}
    if isinstance(obj, dict) and "model" in obj:         # the bundle of sosl's command line
        meta = {k: v for k, v in obj.items() if k != "model"}
        obj = obj["model"]
    if isinstance(obj, LearnerState):
        return obj, meta
    return get_state(obj), meta


def _check_json(value: Any, where: str) -> None:
    if value is None or isinstance(value, (bool, int, float, str)):
        return
    if isinstance(value, (list, tuple)):
        for v in value:
            _check_json(v, where)
        return
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        for v in value.values():
            _check_json(v, where)
        return
    raise ValueError(f"{where} holds a {type(value).__name__}, not JSON data")


def _field(header: dict, name: str, kind: type | tuple[type, ...]) -> Any:
    value = header.get(name)
    if not isinstance(value, kind) or isinstance(value, bool) and kind is int:
        raise ValueError(f"the model file's header field {name!r} is missing or malformed")
    return value


def load_state(path: str | os.PathLike, *,
               allow_pickle: bool = False) -> tuple[LearnerState, dict]:
    """Read a model file written by :func:`save`: ``(state, meta)``, running no code.

    Parameters
    ----------
    path : str or path-like
    allow_pickle : bool, default False
        Also read a pickle or joblib file (a model pickled by an older sosl or the
        command line's old ``.joblib`` files), with a :class:`PickleLoadWarning`. Only for
        files you trust: a pickle runs code while it is read.

    Raises
    ------
    ValueError
        Not a sosl model file; a pickle without ``allow_pickle``; a truncated or altered
        file (checksum mismatch); another format version; a non-numeric array.
    """
    path = os.fspath(path)
    with open(path, "rb") as fh:
        head = fh.read(8)
    if not head.startswith(b"PK\x03\x04"):
        if allow_pickle:
            return _read_pickle(path)
        _refuse_pickle(path, head)
    try:
        with np.load(path, allow_pickle=False) as npz:
            members = {name: npz[name] for name in npz.files}
    except (zipfile.BadZipFile, EOFError, OSError, KeyError, ValueError) as exc:
        raise ValueError(f"{path} is truncated or not a sosl model file ({exc})") from None
    raw = members.pop(_HEADER, None)
    if raw is None or raw.dtype != np.uint8 or raw.ndim != 1:
        raise ValueError(f"{path} has no sosl header: not a sosl model file")
    try:
        text = raw.tobytes().decode("utf-8")
        header = json.loads(text)                # as written: tuples still tagged
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: the model file's header is not valid JSON ({exc})") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise ValueError(f"{path} is not a sosl model file (format {header.get('format')!r})"
                         if isinstance(header, dict) else f"{path}: malformed header")
    if header.get("format_version") != FORMAT_VERSION:
        raise ValueError(f"{path} has file format version {header.get('format_version')}; "
                         f"this sosl reads version {FORMAT_VERSION}")
    for name, a in members.items():
        if a.dtype.kind not in _NUMERIC and not (name == _CLASSES and a.dtype.kind == "U"):
            raise ValueError(f"{path}: member {name!r} has dtype {a.dtype}, not a number")
    if header.get("checksum") != _digest(header, members):
        raise ValueError(f"{path}: checksum mismatch: the file was altered or damaged")
    header = json.loads(text, object_hook=_from_json)
    meta = dict(_field(header, "meta", dict))
    meta.update({k[len(_META):]: v for k, v in members.items() if k.startswith(_META)})
    return _state_from(header, members), meta


def _state_from(header: dict, members: dict[str, np.ndarray]) -> LearnerState:
    params = _field(header, "params", dict)
    layout = _field(header, "layout", dict)
    scalars = _field(header, "scalars", dict)
    for where, value in (("params", params), ("layout", layout), ("scalars", scalars)):
        _check_json(value, f"the header's {where}")
    arrays: dict[str, Any] = {k[len(_PREFIX):]: v for k, v in members.items()
                              if k.startswith(_PREFIX)}
    for name, value in scalars.items():
        if name in arrays or isinstance(value, (list, dict, str)) or value is None:
            raise ValueError(f"the header's state value {name!r} is malformed")
        arrays[name] = value
    if _CLASSES not in members:
        raise ValueError("the model file has no classes")
    classes = members[_CLASSES]
    if header.get("classes_object") is True:
        classes = classes.astype(object)
    calibration = _field(header, "calibration", list)
    names = header.get("feature_names")
    if names is not None and not (isinstance(names, list)
                                  and all(isinstance(v, str) for v in names)):
        raise ValueError("the header's feature_names must be a list of strings")
    version = _field(header, "state_version", int)
    if version != STATE_VERSION:
        raise ValueError(f"state version {version} is not supported by this sosl (it reads "
                         f"version {STATE_VERSION})")
    try:
        calib = np.array(calibration, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("the header's calibration is not two numbers") from None
    return LearnerState(
        learner=_field(header, "learner", str), params=params, classes=classes,
        n_features=_field(header, "n_features", int), layout=layout, arrays=arrays,
        t=_field(header, "t", int), n_seen=_field(header, "n_seen", int),
        calibration=calib,
        feature_names=None if names is None else np.array(names, dtype=object),
        version=version)


def load(path: str | os.PathLike, *, allow_pickle: bool = False) -> Any:
    """The fitted estimator stored in ``path`` (see :func:`load_state`), rebuilt with
    :func:`sosl.state.from_state`, which checks every array's shape and value domain."""
    state, _ = load_state(path, allow_pickle=allow_pickle)
    return from_state(state)
