"""What the last runs on a backend measured, kept in the harness's cache for the next run.

- How long each scenario took (setup, steps and teardown, as pytest timed them): a concurrent
  run starts its longest scenarios first (solar_conformance/plugin/concurrent.py); only a
  scenario never measured is judged by the words of its steps.
- What the last run cost (solar_conformance/plugin/run_cost.py): `-n auto` takes as many workers
  as the landscape's CPU allows (solar_conformance/plugin/worker_count.py).

One JSON file per backend and implementation and measurement under the cache root
(`~/.cache/solar-conformance/measurements/`, or `$SOLAR_CONFORMANCE_CACHE`). They change the
order and the number of workers, never a verdict.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from solar_conformance.provision.toolchain.layout import default_cache_root

FOLDER = "measurements"


DURATIONS = "durations"
COST = "cost"


def _file(config: pytest.Config, what: str = DURATIONS) -> Path:
    backend = config.getoption("--solar-env")
    implementation = config.getoption("--solar-impl", None) or "reference"
    return default_cache_root() / FOLDER / f"{backend}-{implementation}.{what}.json"


def _numbers(file: Path) -> dict[str, float]:
    """A kept file's numbers by name, empty when none was kept or it cannot be read (it is
    only a cache)."""
    try:
        kept = json.loads(file.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(kept, dict):
        return {}
    return {
        str(name): float(value)
        for name, value in kept.items()
        if isinstance(value, int | float) and not isinstance(value, bool)
    }


def measured(config: pytest.Config) -> dict[str, float]:
    """Seconds per test id from the last runs on this backend."""
    return _numbers(_file(config))


LEAST_SCENARIO_SECONDS = 1.0


@dataclass(frozen=True)
class MeasuredCost:
    cpu_seconds: float  # the harness's, the processes it started and the containers
    scenario_seconds: float  # the time its scenarios took together

    @property
    def cores_per_scenario(self) -> float:
        return self.cpu_seconds / self.scenario_seconds


def measured_cost(config: pytest.Config) -> MeasuredCost | None:
    kept = _numbers(_file(config, COST))
    cpu, scenarios = kept.get("cpu_seconds"), kept.get("scenario_seconds")
    if cpu is None or not scenarios or cpu <= 0 or scenarios < LEAST_SCENARIO_SECONDS:
        return None  # a run whose scenarios hardly ran measured the landscape's start, not them
    return MeasuredCost(cpu, scenarios)


# A run whose scenarios took less than this share of the kept run's measured mostly the
# landscape's start and background: it does not replace a measurement of a larger run.
COMPARABLE_SHARE = 0.5


def keep_cost(config: pytest.Config, cost: MeasuredCost) -> None:
    kept = measured_cost(config)
    if kept is not None and cost.scenario_seconds < COMPARABLE_SHARE * kept.scenario_seconds:
        return
    with contextlib.suppress(OSError):  # only the next `-n auto` would have used it
        _keep(
            _file(config, COST),
            {"cpu_seconds": cost.cpu_seconds, "scenario_seconds": cost.scenario_seconds},
        )


def _keep(file: Path, numbers: dict[str, float]) -> None:
    file.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=file.parent, prefix=f".{file.name}.")
    try:
        with os.fdopen(handle, "w") as out:
            json.dump(numbers, out, indent=0, sort_keys=True)
        os.replace(temporary, file)  # whole or not at all, whoever reads it meanwhile
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def without_group(nodeid: str) -> str:
    """A test's id as collected: pytest-xdist's `loadgroup` appends `@<group>` to the ids it
    reports, after the test's name and parameters."""
    head, at, group = nodeid.rpartition("@")
    return head if at and not any(c in group for c in "[]:/") else nodeid


class DurationRecorder:
    """In the process that holds the run: each test's time, kept when the run ends unless it
    was interrupted (a scenario cut short would look short)."""

    def __init__(self, config: pytest.Config) -> None:
        self._config = config
        self._took: dict[str, float] = {}
        self._skipped: set[str] = set()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        test = without_group(report.nodeid)
        if report.skipped:
            self._skipped.add(test)
        self._took[test] = self._took.get(test, 0.0) + report.duration

    def pytest_sessionfinish(self, exitstatus: int) -> None:
        if exitstatus == pytest.ExitCode.INTERRUPTED:
            return
        took = {test: s for test, s in self._took.items() if test not in self._skipped}
        if not took:
            return
        # A cache that cannot be written changes only the next run's order.
        with contextlib.suppress(OSError):
            _keep(_file(self._config), {**measured(self._config), **took})


def register(config: pytest.Config, real_backend: bool) -> None:
    if real_backend and not hasattr(config, "workerinput") and not config.option.collectonly:
        config.pluginmanager.register(DurationRecorder(config), "solar-measured-durations")
