# The two commands of the README: `make app` and `make test`. Everything they need is
# installed here, into .venv (and Debian's chromium for the browser tests, when root).
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check -q

.PHONY: app test setup setup-dev browser bench clean

$(VENV)/.installed: requirements.txt
	python3 -m venv $(VENV)
	$(PIP) install -r requirements.txt
	touch $@

$(VENV)/.installed-dev: requirements-dev.txt $(VENV)/.installed
	$(PIP) install -r requirements-dev.txt
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

## run every test
test: $(VENV)/.installed-dev browser
	$(PY) -m pytest

## speed benchmark (prints a table)
bench: $(VENV)/.installed-dev
	$(PY) benchmarks/bench_scan.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
