# One command for each job; every target sets up .venv first (it is reused while pyproject.toml
# is unchanged).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell sha256sum pyproject.toml | cut -c1-12)
PYTEST_ARGS ?=
MUTANTS_ARGS ?=
# Scenarios side by side on the real backends (pytest-xdist workers attached to one landscape)
# are opt-in, e.g. `make local WORKERS=4`, or `WORKERS=auto` (as many as the last run's measured
# CPU allows, docs/running.md); empty (the default) is a plain serial run.
WORKERS ?=
XDIST := $(if $(WORKERS),-n $(WORKERS),)

.PHONY: venv features check check-sim lint lint-workflows typecheck unit unit-sim unit-real unit-local unit-kind \
	mutants report local kind tools tools-local tools-kind kind-images harness-image bench bench-first-report bench-local-scale clean \
	cucumber-html-check package-check

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

lint: $(STAMP) lint-workflows
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

## The GitHub workflows, checked by actionlint (built from its Go module at the pinned version,
## cached with the other tools).
ACTIONLINT = $(shell $(BIN)/python -c 'from solar_conformance.provision.toolchain import \
	Toolchain; print(Toolchain.from_env().path("actionlint"))')
lint-workflows: tools-lint
	$(ACTIONLINT) .github/workflows/*.yml

typecheck: $(STAMP)
	$(BIN)/mypy .

unit: $(STAMP)
	$(BIN)/pytest tests/ $(PYTEST_ARGS)

## What needs no built tool (CI can run it while the tools build), and the tests of real components.
check-sim: lint typecheck features unit-sim

unit-sim: $(STAMP)
	$(BIN)/pytest tests/ --ignore=tests/local --ignore=tests/kind $(PYTEST_ARGS)

unit-real: unit-local unit-kind

unit-local unit-kind: unit-%: $(STAMP)
	$(BIN)/pytest tests/$* $(PYTEST_ARGS)

## The feature files on sim against every mutant of the catalogue (docs/mutants.md): a score,
## non-zero unless every mutant is killed except the documented equivalents.
mutants: $(STAMP)
	$(BIN)/python -m tests.mutants $(MUTANTS_ARGS)

## Benchmarks (not timed tests): the sim with N Targets, the harness's overhead per wait.
## Figures and their commands: docs/benchmarks.md. BENCH_SIZES chooses the sim's sizes.
BENCH_SIZES ?= 1 10 100 1000 10000
bench: $(STAMP)
	$(BIN)/python -m tests.benchmarks $(BENCH_SIZES)

## Target creation to its first lastReportTime on a real landscape, with where the time goes:
## LANDSCAPE is a landscape file, as `solar-conformance local up` or `solar-conformance kind up` write it.
BENCH_TARGETS ?= 20
bench-first-report: $(STAMP)
	@test -n "$(LANDSCAPE)" || { echo "LANDSCAPE=<landscape file> is required (solar-conformance local up writes one)"; exit 4; }
	$(BIN)/python -m tests.benchmarks.first_report $(LANDSCAPE) --targets $(BENCH_TARGETS)

## N Targets in one namespace on a real landscape (local or kind): wall time and memory per
## Target. BENCH_LOCAL_SIZES empty: the sizes for its backend (local 1 10 50, kind 1 10).
BENCH_LOCAL_SIZES ?=
bench-local-scale: $(STAMP)
	@test -n "$(LANDSCAPE)" || { echo "LANDSCAPE=<landscape file> is required (solar-conformance local up or solar-conformance kind up writes one)"; exit 4; }
	$(BIN)/python -m tests.benchmarks.local_scale $(LANDSCAPE) $(BENCH_LOCAL_SIZES)

## The living-documentation report (HTML, Cucumber JSON, JUnit XML) of a run of the features.
report: report-sim

report-%: $(STAMP)
	$(BIN)/pytest features/ --solar-env=$* --solar-report reports/$* $(PYTEST_ARGS)

## The feature files against upstream SolAr on kind (docs/backends/upstream.md): its chart
## UPSTREAM_CHART (an oci:// reference, a folder or a .tgz; default: the published chart) at
## UPSTREAM_VERSION (default: the highest the registry has), the images UPSTREAM_IMAGES (comma-
## separated; default: the chart's own), pulled with KIND_IMAGES=online or else taken from the
## local Docker engine.
UPSTREAM_CHART ?= oci://ghcr.io/opendefensecloud/charts/solar
UPSTREAM_VERSION ?=
UPSTREAM_IMAGES ?=
KIND_IMAGES ?= offline
report-upstream: kind-images
	$(BIN)/solar-conformance provision tools build --only helm
	$(BIN)/pytest features/ --solar-env=kind --solar-impl=upstream \
		--solar-upstream-chart '$(UPSTREAM_CHART)' \
		$(if $(UPSTREAM_VERSION),--solar-upstream-version '$(UPSTREAM_VERSION)') \
		$(if $(UPSTREAM_IMAGES),--solar-upstream-images '$(UPSTREAM_IMAGES)') \
		--solar-kind-images=$(KIND_IMAGES) --solar-report reports/upstream $(XDIST) $(PYTEST_ARGS)

## Cucumber's own HTML formatter renders the run's Cucumber Messages with the right counts in
## headless Chromium (needs Node.js and Chromium; npm packages pinned in tests/cucumber_html).
cucumber-html-check: $(STAMP)
	npm ci --prefix tests/cucumber_html --no-audit --no-fund --silent
	SOLAR_REQUIRE_CUCUMBER_HTML=1 $(BIN)/pytest tests/test_cucumber_html.py $(PYTEST_ARGS)

## The package as its users install it: sdist and wheel built (the wheel from the sdist), the
## wheel installed into a fresh virtualenv, and the page run from the installed package, outside
## the checkout, with its report written and compared with the checkout's verdicts.
PACKAGE_CHECK := build/package-check
package-check: $(STAMP)
	rm -rf $(PACKAGE_CHECK)
	$(BIN)/python -m build --outdir $(PACKAGE_CHECK)/dist . >/dev/null
	$(PYTHON) -m venv $(PACKAGE_CHECK)/venv
	$(PACKAGE_CHECK)/venv/bin/python -m pip install --quiet $(PACKAGE_CHECK)/dist/*.whl
	mkdir -p $(PACKAGE_CHECK)/run
	cd $(PACKAGE_CHECK)/run && ../venv/bin/solar-conformance run --report report -q
	$(BIN)/pytest features/ -q --solar-report $(PACKAGE_CHECK)/checkout >/dev/null
	$(BIN)/solar-conformance report compare $(PACKAGE_CHECK)/checkout/conformance.yaml \
		$(PACKAGE_CHECK)/run/report/conformance.yaml

## The feature files on real local processes (builds the tools first; cached). Serial by
## default; with WORKERS=N the controlling pytest process holds the landscape and N workers run
## the scenarios side by side (docs/landscape-file.md).
local: tools-local
	$(BIN)/pytest features/ --solar-env=local $(XDIST) $(PYTEST_ARGS)

## The feature files on two kind clusters (needs a running Docker engine; images are cached).
kind: kind-images
	$(BIN)/pytest features/ --solar-env=kind $(XDIST) $(PYTEST_ARGS)

## Real binaries for the local and kind backends (cached outside the checkout, keyed by version).
tools: $(STAMP)
	$(BIN)/solar-conformance provision tools build

tools-%: $(STAMP)
	$(BIN)/solar-conformance provision tools build --for $*

## The kind node image and the agent, Flux and registry images, built offline (cached).
kind-images: tools-kind
	$(BIN)/solar-conformance provision images

## The harness as an image, solar-conformance/harness:<version>, from the repository's Dockerfile
## (built offline on a debootstrapped Python base; cached). How to run it: docs/running.md.
harness-image: $(STAMP)
	$(BIN)/solar-conformance provision harness-image

clean:
	rm -rf $(VENV) artifacts reports build .mypy_cache .ruff_cache .hypothesis \
		tests/cucumber_html/node_modules
