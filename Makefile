# The two commands of the README: `make app` and `make test`. Everything they need is
# installed here, into .venv (and Debian's chromium for the browser tests, when root).
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check -q

.PHONY: app test test-fast setup setup-dev browser java compiler kernels bench lock clean

# The packages come from the lock files (every package, transitive ones too, at one version, each file
# checked against its sha256: `make lock` writes them from requirements*.txt). The package itself is
# installed too (editable, from this checkout, without fetching build tools): its console script,
# package data and dependency list are then what every command uses
$(VENV)/.installed: requirements.lock pyproject.toml
	@echo "divergence: installing the packages into $(VENV) (a minute or two, once; pip is quiet meanwhile)"
	python3 -m venv $(VENV)
	$(PIP) install --require-hashes -r requirements.lock
	$(PIP) install --no-deps --no-build-isolation -e .
	touch $@

$(VENV)/.installed-dev: requirements-dev.lock $(VENV)/.installed
	@echo "divergence: installing the test tools (pytest, playwright, scikit-learn; under a minute, once)"
	$(PIP) install --require-hashes -r requirements.lock -r requirements-dev.lock
	touch $@

# the optional Spark engine, so its tests run in CI (they skip with the reason without it)
$(VENV)/.installed-spark: requirements-spark.lock $(VENV)/.installed
	@echo "divergence: installing pyspark for the Spark engine's tests (a large download, once)"
	$(PIP) install --require-hashes -r requirements.lock -r requirements-spark.lock
	touch $@

# the compiled kernels built ahead of time for this machine's CPU (divergence/kernels/_kernels*.so, not
# portable: it is built where it runs), so short jobs never load
# numba; rebuilt when a kernel's source changes. If the build fails (no C compiler) it says so
# and numba's JIT compiles the kernels on first use instead, as before.
KERNEL_SRC := $(shell find divergence -name "*.py")
# The package's bytecode is written here too, as `pip install` does: where PYTHONDONTWRITEBYTECODE
# is set, every short command-line job would otherwise compile its ~40 modules again (0.1 s).
$(VENV)/.kernels: $(VENV)/.installed $(KERNEL_SRC)
	@$(PY) -m divergence.kernels._aot --check >/dev/null 2>&1 || { $(MAKE) -s compiler; $(PY) -m divergence.kernels._aot --host \
		|| echo "the kernels were not built ahead of time: numba's JIT will compile them on first use"; }
	@$(PY) -m compileall -q divergence ui pages app.py >/dev/null || true
	@touch $@

## build the kernels ahead of time if they are missing or stale, whatever the stamp says
kernels: $(VENV)/.installed
	@rm -f $(VENV)/.kernels
	@$(MAKE) -s $(VENV)/.kernels

setup: $(VENV)/.kernels
setup-dev: $(VENV)/.installed-dev

## run the dashboard on the built-in dataset, on this machine only (http://localhost:8501).
## SERVE=host.example.com serves a team (every interface, with a warning; read docs/safety.md first);
## SERVE=127.0.0.2 or localhost stays loopback only (ui/serve.py);
## DATA_FOLDER=/srv/evals lets the Data page read local paths under that folder (none by default)
SERVE ?=
DATA_FOLDER ?=
app: $(VENV)/.kernels
	$(if $(DATA_FOLDER),DIVERGENCE_DATA_FOLDER="$(DATA_FOLDER)") $(PY) -m ui.serve "$(SERVE)"

## Debian's Chromium for the end-to-end tests (never a browser download), and strace, with which a
## test records every address a PNG export reaches
browser:
	@if [ -x /usr/bin/chromium ] && command -v strace >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		(apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium strace) >/dev/null \
		|| echo "could not install chromium and strace: the browser tests will be skipped"; \
	else echo "no /usr/bin/chromium or strace and not root: the tests that need them will be skipped"; fi

## a C compiler and Python's headers for the ahead-of-time kernels (Debian's, when root)
compiler:
	@if command -v gcc >/dev/null && [ -f "$$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["include"])')/Python.h" ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		(apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q gcc python3-dev) >/dev/null \
		|| echo "could not install gcc and python3-dev: the kernels will be compiled by numba on first use"; \
	else echo "no C compiler or Python headers and not root: the kernels will be compiled by numba on first use"; fi

## Java for the Spark tests (Debian's; the machines come with Java 17)
java:
	@if command -v java >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		(apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q openjdk-17-jre-headless) >/dev/null \
		|| echo "could not install java: the Spark tests will be skipped"; \
	else echo "no java and not root: the Spark tests will be skipped"; fi

## run every test, on every core (pytest-xdist; tests/conftest.py's HEAVY and xdist_group say which
## tests share a worker), the slowest 30 listed at the end
PYTEST_CORES ?= auto
test: $(VENV)/.installed-dev $(VENV)/.installed-spark $(VENV)/.kernels browser java
	$(PY) -m pytest -n $(PYTEST_CORES) --dist loadgroup --durations=30

## the fast tests only: no slow test (tests/conftest.py's SLOW says which and why) and no browser
test-fast: $(VENV)/.installed-dev $(VENV)/.kernels
	$(PY) -m pytest -m "not slow and not e2e" -q -n $(PYTEST_CORES) --dist loadgroup

## speed benchmark (prints a table)
bench: $(VENV)/.installed-dev $(VENV)/.kernels
	$(PY) benchmarks/speed/bench_scan.py

## after editing requirements*.txt: install each set into a new venv and write the *.lock files with
## every package's version and the sha256 of its files (.ci/lock.py; reads the package indexes)
lock:
	python3 .ci/lock.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
