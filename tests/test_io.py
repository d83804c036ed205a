"""The safe model file (sosl.io): round trips of every public learner, refusal of
truncated, altered and pickled files without running them, atomic writes."""

import json
import os
import pickle
import zipfile

import numpy as np
import pytest

import sosl
from sosl import io as sio
from sosl.exceptions import PickleLoadWarning
from sosl.state import from_state

LEARNERS = [n for n in sosl.__all__ if n != "__version__"]


def _data(n=260, p=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    return X, (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int)


@pytest.mark.parametrize("name", LEARNERS)
def test_round_trip_continues_as_without_it(name, tmp_path):
    X, y = _data()
    a = getattr(sosl, name)().fit(X[:180], y[:180])
    path = tmp_path / "m.npz"
    sio.save(a, path, meta={"rows": 180, "spec": {"hash_bits": [18, "x"]},
                            "vocab": np.arange(3)})
    b = sio.load(path)
    state, meta = sio.load_state(path)
    assert np.array_equal(meta.pop("vocab"), np.arange(3))
    assert meta == {"rows": 180, "spec": {"hash_bits": [18, "x"]}}
    assert state.learner == name and type(b) is type(a)
    assert np.array_equal(a.decision_function(X), b.decision_function(X))
    a.partial_fit(X[180:], y[180:])
    b.partial_fit(X[180:], y[180:])
    assert np.array_equal(a.decision_function(X), b.decision_function(X))
    assert np.array_equal(a.predict_proba(X), b.predict_proba(X))
    assert a.t_ == b.t_ and a.n_seen_ == b.n_seen_


def test_state_methods_and_string_classes(tmp_path):
    X, y = _data()
    labels = np.where(y == 1, "spam", "ham")
    a = sosl.OAUCM().partial_fit(X, labels, classes=["spam", "ham"])   # positive first
    path = tmp_path / "s.npz"
    sio.save(a.get_state(), path)
    st = sio.load_state(path)[0]
    b = from_state(st)
    assert b.classes_.tolist() == ["spam", "ham"]
    assert np.array_equal(a.predict(X), b.predict(X))
    assert st.layout == a._layout_ and st.params == a.get_params()


def test_tuple_layout_survives(tmp_path):
    X, y = _data()
    a = sosl.OKAUCM(budget=(20, 30)).fit(X, y)
    sio.save(a, tmp_path / "k.npz")
    st, _ = sio.load_state(tmp_path / "k.npz")
    assert st.layout["budgets"] == a._layout_["budgets"]
    assert type(st.layout["budgets"]) is type(a._layout_["budgets"])


def test_truncated_file_is_refused(tmp_path):
    X, y = _data()
    path = tmp_path / "m.npz"
    sio.save(sosl.OAUCM().fit(X, y), path)
    raw = path.read_bytes()
    for cut in (len(raw) // 3, len(raw) - 30, 10):
        bad = tmp_path / f"cut{cut}.npz"
        bad.write_bytes(raw[:cut])
        with pytest.raises(ValueError, match="truncated|not a sosl"):
            sio.load(bad)


def _rewrite(path, out, edit_header=None, edit_arrays=None):
    with np.load(path, allow_pickle=False) as npz:
        members = {k: npz[k] for k in npz.files}
    header = json.loads(members.pop("header").tobytes())
    if edit_header:
        edit_header(header)
    if edit_arrays:
        edit_arrays(members)
    members["header"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    with open(out, "wb") as fh:
        np.savez(fh, **members)


@pytest.mark.parametrize("what", ["array", "params", "checksum", "t"])
def test_altered_file_is_refused(what, tmp_path):
    X, y = _data()
    path = tmp_path / "m.npz"
    sio.save(sosl.OAUCM().fit(X, y), path)
    edits = {
        "array": dict(edit_arrays=lambda m: m.__setitem__("a.w_", m["a.w_"] * 1.0001)),
        "params": dict(edit_header=lambda h: h["params"].__setitem__("lam", 0.5)),
        "checksum": dict(edit_header=lambda h: h.__setitem__("checksum", "0" * 64)),
        "t": dict(edit_header=lambda h: h.__setitem__("t", h["t"] + 1)),
    }
    out = tmp_path / "bad.npz"
    _rewrite(path, out, **edits[what])
    with pytest.raises(ValueError, match="checksum mismatch"):
        sio.load_state(out)
    _rewrite(path, out)                     # the same rewrite without an edit loads
    assert sio.load(out).t_ == len(y)


class _Payload:
    """Unpickling this creates the marker file: the code a crafted model file would run."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _load_paths():
    return {
        "io.load": lambda p: sio.load(p),
        "io.load_state": lambda p: sio.load_state(p),
        "from_state of what was read": lambda p: from_state(sio.load_state(p)[0]),
    }


@pytest.mark.parametrize("route", list(_load_paths()))
@pytest.mark.parametrize("kind", ["pickle", "joblib", "bundle", "npz object array"])
def test_crafted_payload_is_refused_and_never_runs(route, kind, tmp_path):
    import joblib
    marker = tmp_path / "ran"
    path = tmp_path / "model.bin"
    evil = _Payload(marker)
    if kind == "pickle":
        path.write_bytes(pickle.dumps(evil, protocol=4))
    elif kind == "joblib":
        joblib.dump(evil, path, compress=3)
    elif kind == "bundle":                  # shaped like the command line's old model file
        joblib.dump({"kind": "sosl-model", "model": evil, "features": None}, path)
    else:                                   # a zip that looks like ours, an object array
        header = np.frombuffer(json.dumps({"format": "sosl-state"}).encode(), dtype=np.uint8)
        with open(path, "wb") as fh:
            np.savez(fh, header=header, **{"a.w_": np.array([evil], dtype=object)})
    with pytest.raises(ValueError) as err:
        _load_paths()[route](path)
    assert not marker.exists()
    if kind != "npz object array":
        assert "pickle" in str(err.value) and "allow_pickle=True" in str(err.value)
    # the check itself can see the payload run: a plain pickle.load creates the marker
    if kind == "pickle":
        pickle.loads(path.read_bytes())
        assert marker.exists()


def test_trusted_pickle_reads_with_a_warning(tmp_path):
    import joblib
    X, y = _data()
    a = sosl.FTRLAUC().fit(X, y)
    path = tmp_path / "old.joblib"
    joblib.dump({"kind": "sosl-model", "model": a, "rows_seen": 260}, path)
    with pytest.warns(PickleLoadWarning, match="pickle"):
        st, meta = sio.load_state(path, allow_pickle=True)
    assert meta["rows_seen"] == 260
    assert np.array_equal(from_state(st).decision_function(X), a.decision_function(X))
    pickle_path = tmp_path / "old.pkl"
    pickle_path.write_bytes(pickle.dumps(a))
    with pytest.warns(PickleLoadWarning):
        b = sio.load(pickle_path, allow_pickle=True)
    assert np.array_equal(b.decision_function(X), a.decision_function(X))


def test_unstorable_parameter_is_refused_and_nothing_written(tmp_path):
    X, y = _data()
    a = sosl.PAI(random_state=np.random.RandomState(0)).fit(X, y)
    path = tmp_path / "m.npz"
    with pytest.raises(ValueError, match="random_state.*RandomState"):
        sio.save(a, path)
    with pytest.raises(ValueError, match="meta"):
        sio.save(sosl.PAI().fit(X, y), path, meta={"f": object()})
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("exc", [KeyboardInterrupt, OSError])
def test_write_is_atomic_and_cleans_up(exc, tmp_path, monkeypatch):
    X, y = _data()
    path = tmp_path / "m.npz"
    sio.save(sosl.OAUCM().fit(X[:100], y[:100]), path)
    before = path.read_bytes()

    def boom(*args, **kwargs):
        raise exc("interrupted while writing")
    monkeypatch.setattr(np, "savez", boom)
    with pytest.raises(exc):
        sio.save(sosl.OAUCM().fit(X, y), path)
    assert os.listdir(tmp_path) == ["m.npz"]       # no temporary file left behind
    assert path.read_bytes() == before
    assert zipfile.is_zipfile(path)


def test_not_a_model_file(tmp_path):
    path = tmp_path / "x.npz"
    path.write_bytes(b"label,x1\n1,2\n")
    with pytest.raises(ValueError, match="not a sosl model file"):
        sio.load(path)
    with open(path, "wb") as fh:                    # an npz, but not ours
        np.savez(fh, w=np.zeros(3))
    with pytest.raises(ValueError, match="no sosl header"):
        sio.load(path)


def test_saved_file_has_the_mode_of_an_ordinary_file(tmp_path):
    from sosl import OAUCM
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    y = (X[:, 0] > 0).astype(int)
    old = os.umask(0o022)
    try:
        sio.save(OAUCM().fit(X, y), tmp_path / "m.npz")
    finally:
        os.umask(old)
    assert (tmp_path / "m.npz").stat().st_mode & 0o777 == 0o644
