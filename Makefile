# The two commands of the README: `make app` and `make test`. Everything they need is
# installed here, into .venv (and Debian's chromium for the browser tests, when root).
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check -q

.PHONY: app test setup setup-dev browser java bench clean

$(VENV)/.installed: requirements.txt
	python3 -m venv $(VENV)
	$(PIP) install -r requirements.txt
	touch $@

$(VENV)/.installed-dev: requirements-dev.txt $(VENV)/.installed
	$(PIP) install -r requirements-dev.txt
	touch $@

# the optional Spark engine, so its tests run in CI (they skip with the reason without it)
$(VENV)/.installed-spark: requirements-spark.txt $(VENV)/.installed
	$(PIP) install -r requirements-spark.txt
	touch $@

setup: $(VENV)/.installed
setup-dev: $(VENV)/.installed-dev

## run the dashboard on the built-in dataset
app: $(VENV)/.installed
	$(PY) -m streamlit run app.py

## Debian's Chromium for the end-to-end tests (never a browser download)
browser:
	@if [ -x /usr/bin/chromium ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		(apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium) >/dev/null \
		|| echo "could not install chromium: the browser tests will be skipped"; \
	else echo "no /usr/bin/chromium and not root: the browser tests will be skipped"; fi

## Java for the Spark tests (Debian's; the machines come with Java 17)
java:
	@if command -v java >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		(apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q openjdk-17-jre-headless) >/dev/null \
		|| echo "could not install java: the Spark tests will be skipped"; \
	else echo "no java and not root: the Spark tests will be skipped"; fi

## run every test
test: $(VENV)/.installed-dev $(VENV)/.installed-spark browser java
	$(PY) -m pytest

## speed benchmark (prints a table)
bench: $(VENV)/.installed-dev
	$(PY) benchmarks/bench_scan.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
