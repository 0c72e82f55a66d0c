"""The cost line of a real run: CPU read from /proc for a process and its descendants, idle
time per worker from what pytest timed, and the line itself."""

from __future__ import annotations

import subprocess
import sys
import time
from types import SimpleNamespace
from typing import Any, cast

import pytest

from solar_conformance.components.process_cpu import self_seconds, tree_seconds
from solar_conformance.plugin.run_cost import MAIN, Cost, LandscapeSample, RunCost

BURN = "import time\nend = time.process_time() + 0.6\nwhile time.process_time() < end: pass\n"


def test_the_tree_counts_a_live_child_and_one_that_was_waited_for() -> None:
    before = tree_seconds()
    child = subprocess.Popen([sys.executable, "-c", BURN + "input()"], stdin=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while tree_seconds() - before < 0.5 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert tree_seconds() - before >= 0.5  # the live child's burn
    finally:
        child.communicate(b"\n", timeout=30)
    assert tree_seconds() - before >= 0.5  # waited for: in this process's children's times


def test_a_process_alone_is_less_than_its_tree() -> None:
    subprocess.run([sys.executable, "-c", BURN], check=True)
    assert self_seconds() < tree_seconds()


def _report(duration: float, worker: str | None, when: str = "call") -> pytest.TestReport:
    node = SimpleNamespace(gateway=SimpleNamespace(id=worker)) if worker else None
    return cast(pytest.TestReport, SimpleNamespace(duration=duration, node=node, when=when))


def test_each_worker_is_idle_for_the_time_after_the_landscape_was_up_it_ran_nothing() -> None:
    cost = RunCost(began=time.monotonic() - 100)
    cost.up = time.monotonic() - 60
    for duration, worker in ((20.0, "gw0"), (30.0, "gw0"), (10.0, "gw1")):
        cost.pytest_runtest_logreport(_report(duration, worker))
    node: Any = SimpleNamespace(
        gateway=SimpleNamespace(id="gw0"), workeroutput={"solar_cpu_seconds": 7.0}
    )
    cost.pytest_testnodedown(node, None)
    cost.sample = LandscapeSample(tree=50.0, harness=3.0, containers=None)
    found = cost.cost()
    assert found.scenarios == 60.0
    assert found.idle["gw0"] == pytest.approx(10.0, abs=1.0)
    assert found.idle["gw1"] == pytest.approx(50.0, abs=1.0)
    assert found.harness_cpu == 10.0  # this process and the worker
    assert found.started_cpu == 40.0  # the rest of the tree
    assert found.wall == pytest.approx(100.0, abs=1.0)


def test_a_serial_run_has_one_worker_and_no_sample_means_no_started_figure() -> None:
    cost = RunCost()
    cost.pytest_runtest_logreport(_report(2.0, None))
    found = cost.cost()
    assert list(found.idle) == [MAIN]
    assert found.started_cpu is None
    assert "processes it started" not in found.line()


def test_the_line_names_every_figure_it_has() -> None:
    line = Cost(
        wall=1682.0,
        scenarios=3600.0,
        idle={"gw0": 65.0, "gw1": 4.2},
        harness_cpu=310.0,
        started_cpu=456.0,
        container_cpu=None,
    ).line()
    assert line == (
        "Run cost: wall 28m02s; scenarios 60m00s together; idle gw0 1m05s, gw1 4.2s; "
        "CPU: harness 5m10s; processes it started 7m36s"
    )
    with_containers = Cost(1.0, 1.0, {}, 1.0, None, 90.0).line()
    assert with_containers.endswith("CPU: harness 1.0s; containers 1m30s")
    assert "idle none ran" in with_containers


def test_a_finished_run_keeps_its_cost_for_the_next_auto_and_an_interrupted_one_does_not(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from solar_conformance.plugin.measurements import MeasuredCost, measured_cost
    from solar_conformance.provision.toolchain.layout import CACHE_ENV_VAR

    monkeypatch.setenv(CACHE_ENV_VAR, str(tmp_path))
    options = {"--solar-env": "kind", "--solar-impl": None}
    config = SimpleNamespace(getoption=lambda name, default=None: options[name])
    lines: list[str] = []
    reporter = SimpleNamespace(config=config, write_line=lines.append)

    def run(scenario_seconds: float, exitstatus: int) -> None:
        cost = RunCost()
        cost.pytest_runtest_logreport(_report(scenario_seconds / 2, "gw0"))
        cost.pytest_runtest_logreport(_report(scenario_seconds / 2, "gw1"))
        cost.sample = LandscapeSample(tree=50.0, harness=3.0, containers=20.0)
        cost.pytest_terminal_summary(reporter, exitstatus)

    run(100.0, pytest.ExitCode.TESTS_FAILED)
    run(1.0, pytest.ExitCode.INTERRUPTED)
    kept = measured_cost(cast(pytest.Config, config))
    assert kept == MeasuredCost(cpu_seconds=70.0, scenario_seconds=100.0)  # harness 3, started 47
    assert len(lines) == 2 and all(line.startswith("Run cost: ") for line in lines)


def test_a_run_whose_scenarios_were_all_skipped_keeps_no_cost(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its CPU was the landscape's start: kept, it would make the next `-n auto` take 1 worker."""
    from solar_conformance.plugin.measurements import measured_cost
    from solar_conformance.provision.toolchain.layout import CACHE_ENV_VAR

    monkeypatch.setenv(CACHE_ENV_VAR, str(tmp_path))
    options = {"--solar-env": "kind", "--solar-impl": "upstream"}
    config = SimpleNamespace(getoption=lambda name, default=None: options[name])
    reporter = SimpleNamespace(config=config, write_line=lambda line: None)
    cost = RunCost()
    cost.pytest_runtest_logreport(_report(0.0003, "gw0", when="setup"))
    cost.sample = LandscapeSample(tree=50.0, harness=3.0, containers=20.0)
    cost.pytest_terminal_summary(reporter, pytest.ExitCode.OK)
    assert measured_cost(cast(pytest.Config, config)) is None


def test_a_kept_cost_of_scenarios_that_hardly_ran_counts_as_unmeasured(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from solar_conformance.plugin.measurements import MeasuredCost, keep_cost, measured_cost
    from solar_conformance.provision.toolchain.layout import CACHE_ENV_VAR

    monkeypatch.setenv(CACHE_ENV_VAR, str(tmp_path))
    options = {"--solar-env": "kind", "--solar-impl": "upstream"}
    config = cast(
        pytest.Config, SimpleNamespace(getoption=lambda name, default=None: options[name])
    )
    keep_cost(config, MeasuredCost(cpu_seconds=3.8, scenario_seconds=0.0003))
    assert measured_cost(config) is None


def test_a_run_without_workers_side_by_side_keeps_no_cost(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A serial run (or one worker) charges the landscape's background to one scenario at a
    time: kept, it would make the next `-n auto` take far fewer workers than the CPU allows."""
    from solar_conformance.plugin.measurements import MeasuredCost, keep_cost, measured_cost
    from solar_conformance.provision.toolchain.layout import CACHE_ENV_VAR

    monkeypatch.setenv(CACHE_ENV_VAR, str(tmp_path))
    options = {"--solar-env": "local", "--solar-impl": None}
    config = SimpleNamespace(getoption=lambda name, default=None: options[name])
    reporter = SimpleNamespace(config=config, write_line=lambda line: None)
    whole_run = MeasuredCost(cpu_seconds=680.0, scenario_seconds=6400.0)
    keep_cost(cast(pytest.Config, config), whole_run)
    for worker in (None, "gw0"):
        cost = RunCost()
        cost.pytest_runtest_logreport(_report(300.0, worker))
        cost.sample = LandscapeSample(tree=80.0, harness=3.0, containers=None)
        cost.pytest_terminal_summary(reporter, pytest.ExitCode.OK)
    assert measured_cost(cast(pytest.Config, config)) == whole_run


def test_a_much_smaller_run_does_not_replace_the_cost_a_larger_one_measured(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A few scenarios with workers cost mostly the landscape's start: kept, 1.2 cores per
    running scenario made the next `-n auto` on the whole page take 1 worker."""
    from solar_conformance.plugin.measurements import MeasuredCost, keep_cost, measured_cost
    from solar_conformance.provision.toolchain.layout import CACHE_ENV_VAR

    monkeypatch.setenv(CACHE_ENV_VAR, str(tmp_path))
    options = {"--solar-env": "local", "--solar-impl": None}
    config = cast(
        pytest.Config, SimpleNamespace(getoption=lambda name, default=None: options[name])
    )
    whole_run = MeasuredCost(cpu_seconds=680.0, scenario_seconds=6400.0)
    keep_cost(config, whole_run)
    keep_cost(config, MeasuredCost(cpu_seconds=36.6, scenario_seconds=29.7))
    assert measured_cost(config) == whole_run
    next_whole_run = MeasuredCost(cpu_seconds=790.0, scenario_seconds=8100.0)
    keep_cost(config, next_whole_run)
    assert measured_cost(config) == next_whole_run
    shorter_but_comparable = MeasuredCost(cpu_seconds=500.0, scenario_seconds=4100.0)
    keep_cost(config, shorter_but_comparable)
    assert measured_cost(config) == shorter_but_comparable
