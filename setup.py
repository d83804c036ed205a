"""Build script: the Cython extension list and one directive dict.

Every ``sosl/_core/_*.pyx`` file becomes an extension ``sosl._core._<stem>``.
Set ``SOSL_BOUNDSCHECK=1`` to compile with bounds and wraparound checks (debugging, at -O1,
Cython's performance hints not printed), ``SOSL_OPT="-O0 -g"`` to compile with other flags
than the default ``-O3 -g0`` (``-O1 -g0`` in a checked build; ``-g0`` drops the debug
information that Python's own CFLAGS ask for, which costs compile time and nothing a user
needs), ``SOSL_ONLY=_linear,_okauc`` to build a subset of the extensions, and
``SOSL_NATIVE=1``
to compile for this machine's processor (``-march=native``: faster, not portable; the
default build runs on any x86-64 or ARM processor of its platform), and ``SOSL_JOBS=N`` to
translate and compile N extensions at a time (default: one per available CPU; a command
line ``build_ext -j N`` still wins).
"""
import os
from glob import glob

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

CHECKS = os.environ.get("SOSL_BOUNDSCHECK", "0") == "1"
DIRECTIVES = {
    "language_level": 3,
    "boundscheck": CHECKS,
    "wraparound": CHECKS,
    "cdivision": True,
    "initializedcheck": CHECKS,
    # the checked build is read for its test results; its hundreds of hints about code that
    # the optimised build compiles without checks would bury them
    "show_performance_hints": not CHECKS,
}
NATIVE = os.environ.get("SOSL_NATIVE", "0") == "1"
OPT = (os.environ.get("SOSL_OPT") or ("-O1 -g0" if CHECKS else "-O3 -g0")).split()
ONLY = {s for s in os.environ.get("SOSL_ONLY", "").split(",") if s}
CPUS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
JOBS = max(1, int(os.environ.get("SOSL_JOBS") or CPUS or 1))

stems = sorted(os.path.splitext(os.path.basename(p))[0] for p in glob("sosl/_core/_*.pyx"))
extensions = [
    Extension(
        f"sosl._core.{stem}",
        [f"sosl/_core/{stem}.pyx"],
        include_dirs=[numpy.get_include(), "sosl/_core"],
        depends=glob("sosl/_core/*.h") + glob("sosl/_core/*.pxd"),
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        # after Python's CFLAGS, so these flags win; a checked build is for debugging:
        # compile it quickly (-O1) rather than fast
        extra_compile_args=OPT + (["-march=native"] if NATIVE else []),
    )
    for stem in stems
    if not ONLY or stem in ONLY
]

# both stages run in parallel: Cython's translation (nthreads) and the C compiles of
# build_ext (its parallel option, given here as a default)
setup(ext_modules=cythonize(extensions, compiler_directives=DIRECTIVES,
                            nthreads=JOBS if JOBS > 1 else 0),
      options={"build_ext": {"parallel": JOBS}})
