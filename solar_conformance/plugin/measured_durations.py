"""How long each scenario took when it last ran on a backend, kept in pytest's cache.

A concurrent run starts its longest scenarios first (solar_conformance/plugin/concurrent.py).
What "longest" means is measured: the time each scenario took in the last run on the same
backend and implementation (setup, steps and teardown, as pytest timed them). Only a scenario
never measured there is judged by the words of its steps.
"""

from __future__ import annotations

import pytest

CACHE_KEY = "solar-conformance/durations"


def _key(config: pytest.Config) -> str:
    backend = config.getoption("--solar-env")
    implementation = config.getoption("--solar-impl", None) or "reference"
    return f"{CACHE_KEY}/{backend}-{implementation}"


def measured(config: pytest.Config) -> dict[str, float]:
    """Seconds per test id from the last runs on this backend, empty when none was kept."""
    cache = getattr(config, "cache", None)
    if cache is None:
        return {}
    kept = cache.get(_key(config), {})
    if not isinstance(kept, dict):
        return {}
    return {str(test): float(seconds) for test, seconds in kept.items()}


class DurationRecorder:
    """In the process that holds the run: each test's time, kept when the run ends unless it
    was interrupted (a scenario cut short would look short)."""

    def __init__(self, config: pytest.Config) -> None:
        self._config = config
        self._took: dict[str, float] = {}
        self._skipped: set[str] = set()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.skipped:
            self._skipped.add(report.nodeid)
        self._took[report.nodeid] = self._took.get(report.nodeid, 0.0) + report.duration

    def pytest_sessionfinish(self, exitstatus: int) -> None:
        if exitstatus == pytest.ExitCode.INTERRUPTED:
            return
        took = {test: s for test, s in self._took.items() if test not in self._skipped}
        cache = getattr(self._config, "cache", None)
        if cache is None or not took:
            return
        cache.set(_key(self._config), {**measured(self._config), **took})


def register(config: pytest.Config, real_backend: bool) -> None:
    if real_backend and not hasattr(config, "workerinput") and not config.option.collectonly:
        config.pluginmanager.register(DurationRecorder(config), "solar-measured-durations")
