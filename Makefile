# One command for each job; every target sets up .venv first (it is reused while pyproject.toml
# is unchanged).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell sha256sum pyproject.toml | cut -c1-12)
PYTEST_ARGS ?=
# Scenarios side by side on the real backends (pytest-xdist workers attached to one landscape);
# chosen by measurement on two cores (README, Figures).
WORKERS ?= 4

.PHONY: venv features check check-sim lint typecheck unit unit-sim unit-real unit-local unit-kind report local kind tools tools-local tools-kind kind-images clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@rm -f $(VENV)/.installed-* && touch $@

venv: $(STAMP)

## The main job: every scenario of the feature files on the default (sim) backend.
features: $(STAMP)
	$(BIN)/pytest features/ $(PYTEST_ARGS)

## Everything CI checks: lint, types, the feature files and the harness's own tests.
check: lint typecheck features unit

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy .

unit: $(STAMP)
	$(BIN)/pytest tests/ $(PYTEST_ARGS)

## What needs no built tool (CI runs it while the tools build), and the tests of real components.
check-sim: lint typecheck features unit-sim

unit-sim: $(STAMP)
	$(BIN)/pytest tests/ --ignore=tests/local --ignore=tests/kind $(PYTEST_ARGS)

unit-real: unit-local unit-kind

unit-local unit-kind: unit-%: $(STAMP)
	$(BIN)/pytest tests/$* $(PYTEST_ARGS)

## The living-documentation report (HTML, Cucumber JSON, JUnit XML) of a run of the features.
report: report-sim

report-%: $(STAMP)
	$(BIN)/pytest features/ --solar-env=$* --solar-report reports/$* $(PYTEST_ARGS)

## The feature files on real local processes (builds the tools first; cached). The controlling
## pytest process starts the landscape, its workers run the scenarios side by side, and the
## landscape is removed when the run ends, also on failure or Ctrl-C.
local: tools-local
	$(BIN)/pytest features/ --solar-env=local -n $(WORKERS) $(PYTEST_ARGS)

## The feature files on two kind clusters (needs a running Docker engine; images are cached).
kind: kind-images
	$(BIN)/pytest features/ --solar-env=kind -n $(WORKERS) $(PYTEST_ARGS)

## Real binaries for the local and kind backends (cached outside the checkout, keyed by version).
tools: $(STAMP)
	$(BIN)/python -m fixtures.provision tools build

tools-%: $(STAMP)
	$(BIN)/python -m fixtures.provision tools build --for $*

## The kind node image and the agent, Flux and registry images, built offline (cached).
kind-images: tools-kind
	$(BIN)/python -m fixtures.provision images

clean:
	rm -rf $(VENV) artifacts reports .mypy_cache .ruff_cache .hypothesis
