# One command for each job; every target sets up .venv first (it is reused while pyproject.toml
# is unchanged).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell sha256sum pyproject.toml | cut -c1-12)
PYTEST_ARGS ?=
MUTANTS_ARGS ?=

.PHONY: features check lint typecheck unit mutants report local kind tools kind-images bench clean \
	cucumber-html-check

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@rm -f $(VENV)/.installed-* && touch $@

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

## The feature files on sim against every mutant of the catalogue (docs/mutants.md): a score,
## non-zero unless every mutant is killed except the documented equivalents.
mutants: $(STAMP)
	$(BIN)/python -m mutants $(MUTANTS_ARGS)

## Benchmarks (not timed tests): the sim with N Targets, the harness's overhead per wait.
## Figures and their commands: docs/benchmarks.md. BENCH_SIZES chooses the sim's sizes.
BENCH_SIZES ?= 1 10 100 1000 10000
bench: $(STAMP)
	$(BIN)/python -m benchmarks $(BENCH_SIZES)

## The living-documentation report (HTML, Cucumber JSON, JUnit XML) of a run of the features.
report: report-sim

report-%: $(STAMP)
	$(BIN)/pytest features/ --solar-env=$* --solar-report reports/$* $(PYTEST_ARGS)

## Cucumber's own HTML formatter renders the run's Cucumber Messages with the right counts in
## headless Chromium (needs Node.js and Chromium; npm packages pinned in tests/cucumber_html).
cucumber-html-check: $(STAMP)
	npm ci --prefix tests/cucumber_html --no-audit --no-fund --silent
	SOLAR_REQUIRE_CUCUMBER_HTML=1 $(BIN)/pytest tests/test_cucumber_html.py $(PYTEST_ARGS)

## The feature files on real local processes (builds the tools first; cached).
local: tools
	$(BIN)/pytest features/ --solar-env=local $(PYTEST_ARGS)

## The feature files on two kind clusters (needs a running Docker engine; images are cached).
kind: kind-images
	$(BIN)/pytest features/ --solar-env=kind $(PYTEST_ARGS)

## Real binaries for the local and kind backends (cached outside the checkout, keyed by version).
tools: $(STAMP)
	$(BIN)/python -m fixtures.provision tools build

## The kind node image and the agent, Flux and registry images, built offline (cached).
kind-images: tools
	$(BIN)/python -m fixtures.provision images

clean:
	rm -rf $(VENV) artifacts reports .mypy_cache .ruff_cache .hypothesis \
		tests/cucumber_html/node_modules
