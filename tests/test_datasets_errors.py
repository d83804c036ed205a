"""Clear errors: misspelled names, missing data directories, one exception family."""

import pytest

from sosl import datasets as ds


@pytest.mark.parametrize("call", [
    lambda: ds.load_dataset("fourclas"),
    lambda: ds.check_dataset("fourclas"),
    lambda: ds.download("fourclas", verbose=False),
])
def test_unknown_name_lists_close_matches_and_known_names(call, tmp_path, monkeypatch):
    monkeypatch.setenv("SOSL_DATA_DIR", str(tmp_path))
    with pytest.raises(ValueError) as err:
        call()
    msg = str(err.value)
    assert isinstance(err.value, ds.UnknownDatasetError)
    assert "'fourclas'" in msg and "did you mean 'fourclass'?" in msg
    assert all(name in msg for name in ds.DATASETS) and "\n" not in msg
    assert not any(tmp_path.iterdir())


def test_unknown_name_without_close_match():
    with pytest.raises(ds.UnknownDatasetError) as err:
        ds.load_dataset("zzzz")
    msg = str(err.value)
    assert "did you mean" not in msg and "Known datasets: splice," in msg and "default" in msg
    with pytest.raises(ds.UnknownDatasetError, match="did you mean 'poker'"):
        ds.load_dataset("Poker")
    with pytest.raises(TypeError, match="str"):
        ds.load_dataset(3)


@pytest.mark.parametrize("call", [
    lambda: ds.load_dataset("german"),
    lambda: ds.available_datasets(),
    lambda: ds.check_dataset("german"),
    lambda: ds.load_w8a(),
])
def test_missing_sosl_data_dir(call, monkeypatch, tmp_path):
    missing = tmp_path / "nonexistent"
    monkeypatch.setenv("SOSL_DATA_DIR", str(missing))
    with pytest.raises(ds.DataDirectoryError) as err:
        call()
    msg = str(err.value)
    assert msg.startswith(f"SOSL_DATA_DIR={missing}: no such directory") and "\n" not in msg
    assert err.value.variable == "SOSL_DATA_DIR" and err.value.path == str(missing)
    assert isinstance(err.value, FileNotFoundError) and isinstance(err.value, ds.DatasetError)
    assert not missing.exists()


def test_sosl_data_dir_is_a_file(monkeypatch, tmp_path):
    f = tmp_path / "file"
    f.write_text("")
    monkeypatch.setenv("SOSL_DATA_DIR", str(f))
    with pytest.raises(ds.DataDirectoryError, match="not a directory"):
        ds.available_datasets()


def test_missing_data_dir_argument(tmp_path):
    missing = tmp_path / "nope"
    with pytest.raises(ds.DataDirectoryError, match=r"nope \(the data_dir argument\): no such"):
        ds.load_dataset("german", missing)
    with pytest.raises(ds.DataDirectoryError) as err:
        ds.available_datasets(missing)
    assert err.value.variable == "data_dir"


def test_existing_directory_without_the_file(tmp_path, monkeypatch):
    monkeypatch.setenv("SOSL_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert ds.available_datasets() == []  # an empty directory is not an error
    with pytest.raises(ds.DatasetNotFoundError, match=r"'german'.*german\.libsvm.*SOSL_DATA_DIR"):
        ds.load_dataset("german")


def test_every_error_is_a_dataset_error():
    for cls in (ds.UnknownDatasetError, ds.DataDirectoryError, ds.DatasetNotFoundError,
                ds.IntegrityError, ds.UnknownChecksumError, ds.DownloadError):
        assert issubclass(cls, ds.DatasetError)
    assert issubclass(ds.DownloadError, OSError)
    assert issubclass(ds.UnknownChecksumError, ValueError)


def test_not_found_hint_says_how_to_fetch(tmp_path):
    with pytest.raises(ds.DatasetNotFoundError, match=r"download\('german', data_dir\)$"):
        ds.load_dataset("german", tmp_path)
    hint = r"download\('heart', data_dir, verify=False\)"
    with pytest.raises(ds.DatasetNotFoundError, match=hint):
        ds.load_dataset("heart", tmp_path)
