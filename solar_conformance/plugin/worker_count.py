"""`-n auto` on `local` and `kind`: as many workers as the landscape's CPU allows, measured.

The last run on the backend with two or more workers kept what it cost
(solar_conformance/plugin/measurements.py): the CPU seconds of the harness, of the processes it
started and of the landscape's containers, against the time its scenarios took together. Their
ratio is the CPU that one running scenario keeps busy on average, the landscape's own share
included. `-n auto` takes as many workers as keep this machine's cores at HEADROOM of that.
Until a run has measured it, UNMEASURED workers, the number the whole-page runs in
docs/benchmarks.md used. On `sim` and `existing` (whose landscape's CPU is not this machine's to
measure) `-n auto` is pytest-xdist's own: one worker per CPU.
"""

from __future__ import annotations

import math
import os
from typing import Any

import pytest

from solar_conformance.plugin.measurements import measured_cost

MEASURED_BACKENDS = ("local", "kind")
HEADROOM = 0.75  # of the cores: the harness's bursts (a landscape starting, reports) need room
CHOSEN = pytest.StashKey[str]()  # the line that says how many and why, for the session's start
UNMEASURED = 4
MOST = 16  # scenarios are waits; beyond this the landscape's API servers, not the CPU, limit


def available_cores() -> int:
    return len(os.sched_getaffinity(0))


def workers_for(cores_per_scenario: float | None, cores: int) -> int:
    if cores_per_scenario is None:
        return UNMEASURED
    if cores_per_scenario <= 0:
        return MOST
    return max(1, min(MOST, math.floor(cores * HEADROOM / cores_per_scenario)))


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    if config.getoption("--solar-env") not in MEASURED_BACKENDS:
        return None  # pytest-xdist's own answer
    cost = measured_cost(config)
    cores = available_cores()
    count = workers_for(cost.cores_per_scenario if cost else None, cores)
    why = (
        f"the last run kept {cost.cores_per_scenario:.2f} cores busy per running scenario"
        if cost
        else "no run on this backend has measured its CPU yet"
    )
    config.stash[CHOSEN] = f"-n auto: {count} workers ({why}, {cores} cores)"
    return count


def pytest_sessionstart(session: pytest.Session) -> None:
    """xdist asks for the number before the terminal exists: said once the session starts."""
    line = session.config.stash.get(CHOSEN, None)
    reporter: Any = session.config.pluginmanager.get_plugin("terminalreporter")
    if line is not None and reporter is not None:
        reporter.write_line(line)
