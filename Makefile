# Set-up and everyday commands. Everything runs inside .venv, created on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test test-fast lint bench docs clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --no-compile -e '.[dev]'
	touch $(STAMP)

# Local by default: reachable from this machine only. `make run ADDRESS=0.0.0.0` serves it
# to others, which needs a data root (TSQ_DATA_ROOT) and a way people log in (TSQ_AUTH or an
# [auth] section in .streamlit/secrets.toml); see docs/serving.md.
ADDRESS ?= localhost

run: $(STAMP)
	$(BIN)/streamlit run app.py --server.address $(ADDRESS)

# Bytecode is compiled as modules are first imported, not for every installed file (`pip
# install --no-compile`: half the install's time), and kept even where the environment turns
# that off: the tests start many interpreters (workers, `tsq` processes, servers, kernels).
unexport PYTHONDONTWRITEBYTECODE

# pytest-xdist with a worker per core: the tests keep the cores busy (a worker more only adds
# its start and the switching between them: measured, more CPU time for the same wall time).
# A module's browser tests share one worker (tests/conftest.py puts them in one xdist group).
WORKERS := -n $(shell nproc)

test: $(STAMP)
	$(BIN)/python -m pytest $(WORKERS) --dist loadgroup

# The edit loop: everything but the browser tests, the notebook runs and the tests marked slow
# (those of three seconds and more: many processes, servers that make a run wait, AppTest-heavy
# pages), with no browser to keep on one worker, so idle workers take tests from busy ones.
# `make test` runs them all.
test-fast: $(STAMP)
	$(BIN)/python -m pytest $(WORKERS) --dist worksteal -m "not browser and not notebooks and not slow"

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_ingest.py

# The documentation site, served at http://127.0.0.1:8000 and rebuilt as a page changes.
# `make test` builds it with `mkdocs build --strict` (tests/test_docs.py).
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
