# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
# The virtual environment is created on first use and re-installed only when pyproject.toml changes.
# `make demo` installs only what the demo needs (the package itself); `make test` adds `.[dev]`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DEMO_STAMP := $(VENV)/.installed-demo
STAMP := $(VENV)/.installed

.PHONY: demo test suite test-fast test-latest check lab sandbox bench clean system-deps

# Bytecode is cached (in __pycache__, which git ignores) even where the environment says not to:
# without it each pytest worker, kernel and subprocess compiles the package and rewrites every
# test module's asserts again, about 6 s per pytest process.
export PYTHONDONTWRITEBYTECODE :=

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(DEMO_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $(DEMO_STAMP)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP) $(DEMO_STAMP)

# The main job against the local sandbox: demo-output/report.html, and a summary on the terminal.
demo: $(DEMO_STAMP)
	$(BIN)/propertykit demo

# Everything, on both cores: `check` and the whole suite side by side (make -j2), the suite on
# two pytest-xdist workers. `--dist loadgroup` keeps the tests of each thing slow to make
# (JupyterLab, the Dask cluster, the 20,000-record frames, a module's report or page) on one
# worker, so each is made once; conftest.py gives those groups, and the markers, by fixture.
# Output is not synced: the suite's progress shows as it goes, check's few lines among it.
test: $(STAMP) system-deps
	@$(MAKE) --no-print-directory -j2 check suite

# The suite's temporary files (pytest's tmp_path, caches, journals, browser profiles) go to a RAM
# disk when there is one with room: a new SQLite cache costs about 50 ms of fsync on this disk and
# under 1 ms in RAM, and the suite opens hundreds. Elsewhere they stay where TMPDIR says.
RAM_TMP := $(shell df -k --output=avail /dev/shm 2>/dev/null | awk 'NR == 2 && $$1 > 4000000 {print "/dev/shm"}')

# One BLAS thread per process: numpy's OpenBLAS otherwise starts a thread per core for each
# linear-algebra call, and beside another pytest worker on two cores those threads mostly wait
# for each other (the repeat-sales index's 121 x 121 inverse: about 30 ms instead of about 1 ms).
# The suite alone (`make test` runs it beside `check`).
PYTEST := $(if $(RAM_TMP),TMPDIR=$(RAM_TMP) )OPENBLAS_NUM_THREADS=1 $(BIN)/python -m pytest -n 2 --dist loadgroup
suite: $(STAMP)
	$(PYTEST)

# The edit loop: everything but the slow, end-to-end, Redis and Dask tests (markers given in
# conftest.py by the fixtures a test uses), on both cores, each Hypothesis property on a sixth of
# its examples (tests/_hypothesis.py). `make test` runs them all, each property in full. The
# folders whose every test is marked e2e or dask (MARKED_FOLDERS in conftest.py) are not even
# collected: importing Dask and Playwright for tests left out costs each worker about a second.
test-fast: $(STAMP)
	$(PYTEST) -m "not slow and not e2e and not redis and not dask" --hypothesis-profile=fast \
		--ignore=tests/e2e --ignore=tests/on_dask --ignore=propertykit/dask

# The wire, client and frames tests on the newest requests-cache, pyarrow and pandas, past the
# upper bounds in pyproject.toml, in a venv of their own: run it before raising a bound.
LATEST := .venv-latest
test-latest:
	$(PYTHON) -m venv $(LATEST)
	$(LATEST)/bin/python -m pip install --quiet --upgrade pip
	$(LATEST)/bin/python -m pip install --quiet -e '.[dev]'
	$(LATEST)/bin/python -m pip install --quiet --upgrade requests-cache pyarrow pandas
	$(LATEST)/bin/python -m pip list | grep -iE '^(requests-cache|pyarrow|pandas) '
	$(LATEST)/bin/python -m pytest tests/wire tests/client tests/frames propertykit/wire propertykit/client propertykit/frames

check: $(STAMP)
	$(BIN)/ruff check propertykit tests benchmarks conftest.py
	$(BIN)/ruff format --check propertykit tests benchmarks
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/mkdocs build --strict --quiet --site-dir build/site

lab: $(STAMP)
	$(BIN)/jupyter lab notebooks/

sandbox: $(STAMP)
	$(BIN)/propertykit sandbox --port 8765

bench: $(STAMP)
	for b in benchmarks/*.py; do $(BIN)/python $$b || exit 1; done

# System packages some tests need (installed when missing and running as root).
system-deps:
	@bash scripts/system-deps.sh chromium redis-server poppler-utils

clean:
	rm -rf $(VENV) $(LATEST) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
