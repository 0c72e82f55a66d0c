"""Concurrent runs: the reports of a run with workers are as whole as those of a run without,
and the scenarios that change what every Target sees are the ones kept apart."""

from __future__ import annotations

import html
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GLOBAL_FAULT_SCENARIOS = {
    # its Issued and Disabled rows: both set controller.agent.apiserverURL, which every Target sees
    "test_agentcredentialready_is_status_with_reason_reason",
    "test_setting_controlleragentapiserverurl_later_issues_the_token",
    "test_unsetting_controlleragentapiserverurl_withdraws_the_token",
    "test_while_lastreporttime_stays_empty_the_agent_pods_log_on_the_target_cluster_says_why",
    "test_a_wait_for_the_first_report_that_runs_out_says_to_check_the_agent_pod_logs_and_shows_them",
    "test_a_token_is_rotated_before_it_expires_once_even_by_a_controller_whose_clock_runs_ahead",
    "test_a_rotation_before_expiry_leaves_the_token_of_a_target_of_the_same_name_in_another_"
    "namespace_as_it_was",
    "test_the_credential_lifecycle_keeps_the_pages_promises_in_any_order",  # the model, by its mark
}


def _report(folder: Path, *workers: str) -> tuple[dict[str, list[str]], int, str]:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "features/check_it_worked.feature",
            "-q",
            f"--solar-report={folder}",
            f"--solar-artifacts={folder / 'artifacts'}",
            *workers,
        ],
        cwd=ROOT,
        capture_output=True,
        check=True,
        timeout=600,
    )
    cucumber = json.loads((folder / "cucumber.json").read_text())
    scenarios = {
        element["name"]: [step["result"]["status"] for step in element["steps"]]
        for feature in cucumber
        for element in feature["elements"]
    }
    cases = len(list(ET.parse(folder / "junit.xml").iter("testcase")))  # noqa: S314 - our own file
    return scenarios, cases, (folder / "report.html").read_text()


def test_a_run_with_workers_reports_every_scenario_as_a_run_without(tmp_path: Path) -> None:
    alone, alone_cases, _ = _report(tmp_path / "alone")
    together, together_cases, page = _report(tmp_path / "together", "-n", "2")
    assert together == alone
    assert together_cases == alone_cases > 0
    text = html.unescape(page)  # however the page escapes a quote
    for name in alone:
        assert name in text, f"the HTML report of the run with workers lacks {name!r}"


def test_exactly_the_scenarios_whose_steps_change_what_every_target_sees_take_the_landscape_alone(
    pytestconfig: pytest.Config,
) -> None:
    found = subprocess.run(
        [sys.executable, "-c", _LIST_ALONE],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout.split()
    assert {name.split("[")[0] for name in found} == GLOBAL_FAULT_SCENARIOS
    assert len(found) == len(GLOBAL_FAULT_SCENARIOS) + 1  # of the Outline, two of its rows
    assert sorted(name.split("[")[1].split("-")[1] for name in found if "[" in name) == [
        "Disabled",
        "Issued",
    ]


_LIST_ALONE = """
import os
import pytest
class Lister:
    def pytest_collection_finish(self, session):
        from solar_conformance.plugin.concurrent import needs_landscape_alone
        for item in session.items:
            if needs_landscape_alone(item):
                os.write(1, (item.name.replace(' ', '_') + '\\n').encode())
pytest.main(["features/", "--collect-only", "-s", "-p", "no:terminal"], plugins=[Lister()])
"""


def _order(alone_apart: bool) -> list[str]:
    from solar_conformance.plugin.concurrent import run_order

    waits = {"expiry": 3, "poll": 1, "a": 0, "b": 0, "c": 0, "fault-1": 0, "fault-2": 1}
    return run_order(
        list(waits), lambda name: name.startswith("fault"), waits.__getitem__, alone_apart
    )


def test_on_one_landscape_the_scenarios_that_need_it_alone_come_last() -> None:
    """Started first, one of them could wait for a 600 s scenario that another worker started
    meanwhile, and hold every other scenario back while it waits."""
    assert _order(alone_apart=False) == ["expiry", "a", "poll", "b", "c", "fault-1", "fault-2"]


def test_with_a_landscape_of_their_own_they_come_first_and_the_long_ones_next() -> None:
    assert _order(alone_apart=True) == ["fault-1", "fault-2", "expiry", "a", "poll", "b", "c"]


def test_measured_seconds_start_the_scenarios_over_twice_the_median_first_longest_first() -> None:
    from solar_conformance.plugin.concurrent import run_order

    took = {"a": 20.0, "revoke-value": 105.0, "b": 30.0, "expiry": 641.0, "c": 25.0}
    took |= {"d": 11.0, "poll": 330.0, "e": 40.0, "f": 35.0, "g": 15.0}
    order = run_order(list(took), lambda name: False, took.__getitem__, alone_apart=False)
    assert order == ["expiry", "d", "poll", "g", "revoke-value", "a", "c", "b", "f", "e"]


def test_dealt_out_by_group_the_longest_start_first_each_with_one_of_the_shortest_queued_behind() -> (
    None
):
    """xdist's `loadgroup` gives the group to one worker, then one scenario to each other worker,
    then a second one to each (queued behind its first), then one whenever one ends."""
    from solar_conformance.plugin.concurrent import grouped_run_order

    took = {"expiry": 644.0, "poll-1": 359.0, "poll-2": 354.0, "poll-3": 346.0, "a": 120.0}
    took |= {"b": 115.0, "c": 20.0, "d": 10.0, "e": 5.0, "f": 2.0, "fault-1": 90.0, "fault-2": 1.0}
    order = grouped_run_order(
        list(took), lambda name: name.startswith("fault"), took.__getitem__, workers=4
    )
    group, first_round, second_round = (
        ["fault-1", "fault-2"],
        ["expiry", "poll-1", "poll-2"],
        ["f", "e", "d"],
    )
    assert order == [*group, *first_round, *second_round, "poll-3", "a", "b", "c"]
    without_group = grouped_run_order(list("abc"), lambda name: False, took.__getitem__, workers=2)
    assert without_group == ["a", "b", "c"]


@pytest.fixture
def cache_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    from solar_conformance.provision.toolchain.layout import CACHE_ENV_VAR

    monkeypatch.setenv(CACHE_ENV_VAR, str(tmp_path))
    return tmp_path


def _config(backend: str = "local") -> pytest.Config:
    from types import SimpleNamespace

    options = {"--solar-env": backend, "--solar-impl": None}
    return SimpleNamespace(getoption=lambda name, default=None: options[name])  # type: ignore[return-value]


def _test_report(test: str, seconds: float, skipped: bool = False) -> pytest.TestReport:
    from types import SimpleNamespace

    return SimpleNamespace(nodeid=test, duration=seconds, skipped=skipped)  # type: ignore[return-value]


def test_a_run_keeps_what_each_scenario_took_beside_what_earlier_runs_measured(
    cache_root: Path,
) -> None:
    from solar_conformance.plugin.measurements import DurationRecorder, measured

    config = _config()
    first = DurationRecorder(config)
    for test, seconds in (("expiry", 1.0), ("expiry", 640.0), ("a", 20.0), ("skipped", 0.5)):
        first.pytest_runtest_logreport(_test_report(test, seconds, skipped=test == "skipped"))
    first.pytest_sessionfinish(pytest.ExitCode.TESTS_FAILED)
    second = DurationRecorder(config)
    second.pytest_runtest_logreport(_test_report("a", 25.0))
    second.pytest_sessionfinish(pytest.ExitCode.OK)
    interrupted = DurationRecorder(config)
    interrupted.pytest_runtest_logreport(_test_report("expiry", 3.0))
    interrupted.pytest_sessionfinish(pytest.ExitCode.INTERRUPTED)
    assert measured(config) == {"expiry": 641.0, "a": 25.0}
    assert measured(_config(backend="kind")) == {}
    assert [path.name for path in (cache_root / "measurements").iterdir()] == [
        "local-reference.durations.json"
    ]


def test_a_scenario_of_the_group_is_measured_under_the_id_it_was_collected_with(
    cache_root: Path,
) -> None:
    """xdist reports a grouped test as `<id>@<group>`; the next run looks it up before the
    group is named."""
    from types import SimpleNamespace

    from solar_conformance.plugin.concurrent import expected_waits
    from solar_conformance.plugin.measurements import DurationRecorder

    config = _config()
    recorder = DurationRecorder(config)
    recorder.pytest_runtest_logreport(_test_report("f.feature::test_x[a]@landscape-alone", 300.0))
    recorder.pytest_runtest_logreport(_test_report("f.feature::test_y[user@host]", 20.0))
    recorder.pytest_sessionfinish(pytest.ExitCode.OK)
    items = [
        SimpleNamespace(nodeid=test)
        for test in ("f.feature::test_x[a]", "f.feature::test_y[user@host]")
    ]
    wait = expected_waits(config, items)  # type: ignore[arg-type]
    assert [wait(item) for item in items] == [300.0, 20.0]  # type: ignore[arg-type]


def test_a_cache_that_cannot_be_read_is_no_measurement(cache_root: Path) -> None:
    from solar_conformance.plugin.measurements import measured

    (cache_root / "measurements").mkdir()
    (cache_root / "measurements" / "local-reference.durations.json").write_text("{not json")
    assert measured(_config()) == {}


def test_a_scenario_never_measured_counts_as_the_longest(cache_root: Path) -> None:
    from types import SimpleNamespace

    from solar_conformance.plugin.concurrent import expected_waits
    from solar_conformance.plugin.measurements import DurationRecorder

    config = _config()
    recorder = DurationRecorder(config)
    recorder.pytest_runtest_logreport(_test_report("a", 20.0))
    recorder.pytest_runtest_logreport(_test_report("poll", 330.0))
    recorder.pytest_sessionfinish(pytest.ExitCode.OK)
    items = [SimpleNamespace(nodeid=test) for test in ("a", "poll", "new")]
    wait = expected_waits(config, items)  # type: ignore[arg-type]
    assert [wait(item) for item in items] == [20.0, 330.0, 330.0]  # type: ignore[arg-type]


def test_a_landscape_that_does_not_start_ends_the_run_in_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from types import SimpleNamespace

    from _pytest.outcomes import Exit

    import solar_conformance.components.processes as processes
    import solar_conformance.plugin.landscapes as landscapes
    from solar_conformance.plugin.concurrent import HandsOut

    closed: list[str] = []

    class Started:
        def close(self) -> None:
            closed.append("the landscape that started")

    def start(config: object, contract: object, report: object, run: str, **_: object) -> object:
        if run.endswith("a"):
            raise RuntimeError("etcd exited with code 1 while waiting for etcd /health")
        return Started()

    monkeypatch.setattr(landscapes, "start_landscape", start)
    monkeypatch.setattr(processes, "install_termination_handlers", lambda: None)
    options = {"--solar-env": "local", "--solar-profile": None}
    config = SimpleNamespace(
        getoption=options.get,
        option=SimpleNamespace(collectonly=False),
        pluginmanager=SimpleNamespace(get_plugin=lambda name: None),
    )
    hands_out = HandsOut(config, "run1")  # type: ignore[arg-type]
    with pytest.raises(Exit) as ended:
        hands_out.pytest_sessionstart(session=None)  # type: ignore[arg-type]
    assert ended.value.msg.startswith("a local landscape did not start: etcd exited with code 1")
    assert ended.value.returncode == pytest.ExitCode.INTERNAL_ERROR
    hands_out.pytest_unconfigure(config)  # type: ignore[arg-type]
    assert closed == ["the landscape that started"]
