"""How long each scenario took when it last ran on a backend, kept in the harness's cache.

A concurrent run starts its longest scenarios first (solar_conformance/plugin/concurrent.py).
What "longest" means is measured: the time each scenario took in the last run on the same
backend and implementation (setup, steps and teardown, as pytest timed them), kept as one JSON
file per backend and implementation under the cache root (`~/.cache/solar-conformance`, or
`$SOLAR_CONFORMANCE_CACHE`). Only a scenario never measured there is judged by the words of its
steps. The order is all it changes: never a verdict.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path

import pytest

from solar_conformance.provision.toolchain.layout import default_cache_root

FOLDER = "durations"


def _file(config: pytest.Config) -> Path:
    backend = config.getoption("--solar-env")
    implementation = config.getoption("--solar-impl", None) or "reference"
    return default_cache_root() / FOLDER / f"{backend}-{implementation}.json"


def measured(config: pytest.Config) -> dict[str, float]:
    """Seconds per test id from the last runs on this backend, empty when none was kept (or
    what was kept cannot be read: it is only a cache)."""
    try:
        kept = json.loads(_file(config).read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(kept, dict):
        return {}
    return {
        str(test): float(seconds)
        for test, seconds in kept.items()
        if isinstance(seconds, int | float)
    }


def _keep(file: Path, took: dict[str, float]) -> None:
    file.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=file.parent, prefix=f".{file.name}.")
    try:
        with os.fdopen(handle, "w") as out:
            json.dump(took, out, indent=0, sort_keys=True)
        os.replace(temporary, file)  # whole or not at all, whoever reads it meanwhile
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


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
        if not took:
            return
        # A cache that cannot be written changes only the next run's order.
        with contextlib.suppress(OSError):
            _keep(_file(self._config), {**measured(self._config), **took})


def register(config: pytest.Config, real_backend: bool) -> None:
    if real_backend and not hasattr(config, "workerinput") and not config.option.collectonly:
        config.pluginmanager.register(DurationRecorder(config), "solar-measured-durations")
