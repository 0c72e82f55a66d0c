"""What a run on a real backend cost, in one line at its end.

Wall time from the run's start; the time its scenarios took together (setup, steps and teardown
of every test, as pytest timed them); how long each worker sat idle once the landscape was up;
CPU seconds of the harness (this process with the reference SolAr's threads, and each worker)
and of the processes the run started besides (on `local` the landscape's control planes,
registry, Flux and agents; everywhere the tools it ran), read from /proc just before the
landscape closes; and the CPU of the landscape's containers where it has some (`kind`).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import pytest

from solar_conformance.components.process_cpu import own_seconds, self_seconds, tree_seconds
from solar_conformance.core.landscape import Landscape
from solar_conformance.plugin.measurements import MeasuredCost, keep_cost

WORKER_CPU = "solar_cpu_seconds"  # what a worker sends home in its workeroutput
MAIN = "main"  # the worker name of a run without pytest-xdist
# A run with fewer workers charges the landscape's own background CPU to fewer scenarios at a
# time, so it overstates what one more worker costs: `-n auto` would then take too few.
LEAST_WORKERS_TO_MEASURE = 2


@dataclass
class LandscapeSample:
    """Taken just before the landscapes close, while their processes still run."""

    tree: float  # this process, its live descendants and those they waited for
    harness: float  # this process alone
    containers: float | None


@dataclass
class Cost:
    wall: float
    scenarios: float
    idle: dict[str, float]
    harness_cpu: float
    started_cpu: float | None
    container_cpu: float | None

    def line(self) -> str:
        idle = ", ".join(f"{worker} {_minutes(seconds)}" for worker, seconds in self.idle.items())
        parts = [
            f"wall {_minutes(self.wall)}",
            f"scenarios {_minutes(self.scenarios)} together",
            f"idle {idle or 'none ran'}",
            f"CPU: harness {_minutes(self.harness_cpu)}",
        ]
        if self.started_cpu is not None:
            parts.append(f"processes it started {_minutes(self.started_cpu)}")
        if self.container_cpu is not None:
            parts.append(f"containers {_minutes(self.container_cpu)}")
        return "Run cost: " + "; ".join(parts)


def _minutes(seconds: float) -> str:
    whole = round(seconds)
    return f"{whole // 60}m{whole % 60:02d}s" if whole >= 60 else f"{seconds:.1f}s"


@dataclass
class RunCost:
    """Registered in the process that holds the run (the controller of a concurrent run)."""

    began: float = field(default_factory=time.monotonic)
    up: float | None = None  # when scenarios could start
    busy: dict[str, float] = field(default_factory=dict)
    ran: int = 0  # tests whose steps ran (not skipped before them): only then is a cost measured
    worker_cpu: dict[str, float] = field(default_factory=dict)
    sample: LandscapeSample | None = None

    def landscape_up(self) -> None:
        if self.up is None:
            self.up = time.monotonic()

    def landscapes_closing(self, landscapes: Iterable[Landscape]) -> None:
        if self.sample is not None:
            return
        containers = [landscape.container_cpu_seconds() for landscape in landscapes]
        known = [seconds for seconds in containers if seconds is not None]
        self.sample = LandscapeSample(tree_seconds(), self_seconds(), sum(known) if known else None)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        node: Any = getattr(report, "node", None)  # pytest-xdist's worker of a report
        worker = str(node.gateway.id) if node is not None else MAIN
        self.busy[worker] = self.busy.get(worker, 0.0) + report.duration
        if report.when == "call":
            self.ran += 1

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        sent = getattr(node, "workeroutput", {}).get(WORKER_CPU)
        if sent is not None:
            self.worker_cpu[str(node.gateway.id)] = float(sent)

    def cost(self) -> Cost:
        end = time.monotonic()
        available = end - (self.up if self.up is not None else self.began)
        workers = sum(self.worker_cpu.values())
        sample = self.sample
        harness = (sample.harness if sample else self_seconds()) + workers
        # Workers are this process's children: what they spent is in the tree, not "started".
        started = sample.tree - harness if sample else None
        return Cost(
            wall=end - self.began,
            scenarios=sum(self.busy.values()),
            idle={w: max(0.0, available - b) for w, b in sorted(self.busy.items())},
            harness_cpu=harness,
            started_cpu=max(0.0, started) if started is not None else None,
            container_cpu=sample.containers if sample else None,
        )

    @pytest.hookimpl(trylast=True)  # after the verdict
    def pytest_terminal_summary(self, terminalreporter: Any, exitstatus: int) -> None:
        if not self.busy:
            return
        cost = self.cost()
        terminalreporter.write_line(cost.line())
        if (
            exitstatus != pytest.ExitCode.INTERRUPTED
            and self.ran
            and cost.scenarios > 0
            and len(self.busy.keys() - {MAIN}) >= LEAST_WORKERS_TO_MEASURE
        ):
            spent = cost.harness_cpu + (cost.started_cpu or 0.0) + (cost.container_cpu or 0.0)
            keep_cost(terminalreporter.config, MeasuredCost(spent, cost.scenarios))


class WorkerCost:
    """In a pytest-xdist worker: its CPU (with the tools it ran) goes home with its output."""

    def __init__(self, config: pytest.Config) -> None:
        self._config = config

    def pytest_sessionfinish(self) -> None:
        output: dict[str, Any] = getattr(self._config, "workeroutput", {})
        output[WORKER_CPU] = own_seconds()


COST_KEY = pytest.StashKey[RunCost]()


def register(config: pytest.Config, real_backend: bool) -> None:
    if hasattr(config, "workerinput"):
        config.pluginmanager.register(WorkerCost(config), "solar-worker-cost")
    elif real_backend and not config.option.collectonly:
        cost = RunCost()
        config.stash[COST_KEY] = cost
        config.pluginmanager.register(cost, "solar-run-cost")


def landscape_up(config: pytest.Config) -> None:
    cost = config.stash.get(COST_KEY, None)
    if cost is not None:
        cost.landscape_up()


def landscapes_closing(config: pytest.Config, landscapes: Iterable[Landscape]) -> None:
    cost = config.stash.get(COST_KEY, None)
    if cost is not None:
        cost.landscapes_closing(landscapes)
