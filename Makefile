# `make run` and `make test` each create .venv when missing and install what they need.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
DEMO_DB ?= data/evalcore.duckdb

.PHONY: run test demo bench schema clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check -e '.[embeddings,dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/evalcore demo --db $(DEMO_DB)

run: demo
	$(VENV)/bin/evalcore runs --db $(DEMO_DB)

test: $(STAMP)
	$(PY) -m pytest

schema: $(STAMP)
	$(PY) -m evalcore.report.schema

bench: $(STAMP)
	$(PY) bench/bench_scoring.py

clean:
	rm -rf $(VENV)
