"""The published verdict never claims more than what ran: a run stopped with Ctrl-C, a run whose
stateful model failed and a run of a mutant each say so in the first line of every file a
reviewer reads (conformance.yaml, report.html as rendered, cucumber.json, junit.xml) and in the
terminal; every selected test is counted once, in all of them; `compare` tells a change of the
selection from a change of the page."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
import yaml

from tests.cucumber_feature import SCENARIOS, run_lamps

ROOT = Path(__file__).resolve().parent.parent
FILES = ("conformance.yaml", "report.html", "cucumber.json", "junit.xml", "records.json")


def _command(report: Path, *args: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:randomly",
        f"--solar-report={report}",
        f"--solar-artifacts={report.parent / 'artifacts'}",
        *args,
    ]


def _run(report: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        _command(report, *args),
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )


def _rendered_lines(html: str) -> list[str]:
    """report.html as a browser shows its text: the body's text, one block per line."""
    body = re.sub(r"<head>.*?</head>", "", html, flags=re.S)
    text = re.sub(r"<[^>]+>", "\n", body)
    text = text.replace("&amp;", "&").replace("&#39;", "'").replace("&#34;", '"')
    return [line.strip() for line in text.splitlines() if line.strip()]


def _first_lines(report: Path) -> dict[str, str]:
    """The first line a reader meets in each file."""
    features = json.loads((report / "cucumber.json").read_text())
    suite = ElementTree.parse(report / "junit.xml").getroot().find("testsuite")  # noqa: S314
    assert suite is not None
    first_property = suite.find("properties/property")
    assert first_property is not None
    return {
        "conformance.yaml": (report / "conformance.yaml").read_text().splitlines()[0],
        "report.html": _rendered_lines((report / "report.html").read_text())[0],
        "cucumber.json": features[0]["metadata"][0]["value"],
        "junit.xml": str(first_property.get("value")),
        "records.json": json.loads((report / "records.json").read_text())["verdict"]["line"],
    }


def _counts(report: Path) -> dict[str, int]:
    """How many tests each file lists."""
    conformance = yaml.safe_load((report / "conformance.yaml").read_text())
    features = json.loads((report / "cucumber.json").read_text())
    suite = ElementTree.parse(report / "junit.xml").getroot().find("testsuite")  # noqa: S314
    assert suite is not None
    messages = [json.loads(line) for line in (report / "cucumber.ndjson").read_text().splitlines()]
    html = (report / "report.html").read_text()
    return {
        "conformance.yaml": len(conformance["scenarios"]),
        "cucumber.json": sum(len(feature["elements"]) for feature in features),
        "cucumber.ndjson": sum(1 for m in messages if "testCase" in m),
        "junit.xml": int(suite.get("tests", "0")),
        "report.html": len(re.findall(r'<article class="scenario ', html)),
    }


def _says_everywhere(report: Path, terminal: str, *wanted: str) -> None:
    firsts = _first_lines(report)
    verdict = next(line for line in terminal.splitlines() if line.startswith("Verdict: "))
    for name, line in {**firsts, "terminal": verdict}.items():
        for text in wanted:
            assert text in line, f"{name} does not say {text!r} first: {line}"


HELD = "held before the second scenario"


def ctrl_c_as_in_a_terminal() -> None:
    """SIGINT as a terminal's Ctrl-C meets it. A shell starts background commands with SIGINT
    ignored, and Python keeps an ignored SIGINT, so a test run from such a command would send
    a signal that nothing hears."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture(scope="module")
def interrupted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, int]:
    """A real run of the runbook on sim, sent SIGINT once its first scenario passed. The run
    is held before its second scenario until the signal comes, so a busy machine cannot let it
    finish first."""
    where = tmp_path_factory.mktemp("interrupted")
    (where / "hold_before_second.py").write_text(
        "import signal\n\n"
        "started = []\n\n\n"
        "def pytest_runtest_logstart(nodeid, location):\n"
        "    started.append(nodeid)\n"
        "    if len(started) == 2:\n"
        f"        print({HELD!r}, flush=True)\n"
        "        signal.pause()  # until SIGINT, which raises KeyboardInterrupt here\n"
    )
    report = where / "report"
    process = subprocess.Popen(
        _command(report, "-p", "hold_before_second", "features/runbook.feature", "-v"),
        cwd=ROOT,
        env={
            **os.environ,
            "PYTHONUNBUFFERED": "1",
            "PYTHONPATH": os.pathsep.join([str(where), str(ROOT)]),
        },
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=ctrl_c_as_in_a_terminal,
    )
    assert process.stdout is not None
    seen: list[str] = []
    for line in process.stdout:
        seen.append(line)
        if HELD in line:
            break
    else:
        process.wait(timeout=300)
        pytest.fail(f"the run ended without reaching its second scenario: {''.join(seen)[-3000:]}")
    process.send_signal(signal.SIGINT)
    rest, _ = process.communicate(timeout=300)
    return report, "".join(seen) + rest, process.returncode


def test_a_run_stopped_with_ctrl_c_says_interrupted_first_everywhere(
    interrupted: tuple[Path, str, int],
) -> None:
    report, terminal, code = interrupted
    assert code == pytest.ExitCode.INTERRUPTED, terminal[-3000:]
    _says_everywhere(
        report, terminal, "Verdict: interrupted (stopped by Ctrl-C)", "reference SolAr"
    )
    for name in FILES:
        text = (report / name).read_text()
        assert "not selected" not in text, f"{name} calls a selected scenario unselected"
        assert not re.search(r"All \d+ scenarios passed", text)
    conformance = yaml.safe_load((report / "conformance.yaml").read_text())
    assert conformance["level"] != "conformant"
    statuses = {s["status"] for s in conformance["scenarios"]}
    assert "passed" in statuses and statuses & {"not run", "interrupted"}, statuses
    not_run = [s for s in conformance["scenarios"] if s["status"] == "not run"]
    assert all(s["reason"] == "not run: stopped by Ctrl-C" for s in not_run), not_run


def test_an_interrupted_run_counts_every_selected_scenario_in_every_file(
    interrupted: tuple[Path, str, int],
) -> None:
    report, terminal, _code = interrupted
    collected = re.search(r"collected (\d+) items", terminal)
    assert collected is not None, terminal[:2000]
    counts = _counts(report)
    assert set(counts.values()) == {int(collected.group(1))}, counts


@pytest.fixture(scope="module")
def model_failed(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """The stateful model against an API server that caches tokens for a day (it must fail),
    beside a scenario that passes."""
    where = tmp_path_factory.mktemp("model")
    (where / "day_long_cache.py").write_text(
        "from datetime import timedelta\n"
        "from solar_conformance.simulators.memory import cluster\n\n\n"
        "def pytest_configure(config):\n"
        "    cluster.AUTH_CACHE_TTL = timedelta(days=1)\n"
    )
    done = _run(
        where / "report",
        "-p",
        "day_long_cache",
        "features/test_credential_model.py",
        "features/create_target.feature",
        "-k",
        "lifecycle or (empty and selector)",
        PYTHONPATH=os.pathsep.join([str(where), str(ROOT)]),
    )
    return where / "report", done


def test_a_failed_model_fails_the_verdict_in_every_file(
    model_failed: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    report, done = model_failed
    assert done.returncode == 1, done.stdout[-3000:]
    _says_everywhere(report, done.stdout, "Verdict: failed", "1 failed")
    counts = _counts(report)
    selected = len(yaml.safe_load((report / "conformance.yaml").read_text())["scenarios"])
    assert selected >= 2 and set(counts.values()) == {selected}, counts
    model = [
        e
        for f in json.loads((report / "cucumber.json").read_text())
        for e in f["elements"]
        if f["uri"] == "features/test_credential_model.py"
    ]
    assert [e["steps"][-1]["result"]["status"] for e in model] == ["failed"]
    finished = [json.loads(line) for line in (report / "cucumber.ndjson").read_text().splitlines()]
    run_finished = next(m["testRunFinished"] for m in finished if "testRunFinished" in m)
    assert run_finished["success"] is False
    assert run_finished["message"].startswith("Verdict: failed")


def test_a_mutant_run_names_the_mutant_first_everywhere(tmp_path: Path) -> None:
    report = tmp_path / "report"
    done = _run(
        report,
        "-p",
        "tests.mutants.plugin",
        "--solar-mutant=agent-silent",
        "features/create_target.feature",
        "-k",
        "updates_its_own_targetreport",
    )
    assert done.returncode == 1, done.stdout[-3000:]
    _says_everywhere(report, done.stdout, "mutant agent-silent of the reference SolAr")
    implementation: dict[str, Any] = yaml.safe_load((report / "conformance.yaml").read_text())[
        "implementation"
    ]
    assert implementation["kind"] == "mutant"
    assert implementation["changes"] == "the agent logs a report but writes nothing"


def test_a_mutant_variable_alone_chooses_nothing_and_says_so(tmp_path: Path) -> None:
    done = _run(tmp_path / "report", "features/create_target.feature", SOLAR_MUTANT="agent-silent")
    assert done.returncode == pytest.ExitCode.USAGE_ERROR
    assert done.stderr.strip().count("\n") == 0, done.stderr
    assert "SOLAR_MUTANT=agent-silent is set" in done.stderr
    assert "pytest -p tests.mutants.plugin --solar-mutant=agent-silent" in done.stderr


def test_the_mutant_option_needs_the_catalogues_plugin(tmp_path: Path) -> None:
    done = _run(tmp_path / "report", "features/", "--solar-mutant=agent-silent")
    assert done.returncode == pytest.ExitCode.USAGE_ERROR
    assert "unrecognized arguments: --solar-mutant" in done.stderr


def test_compare_of_a_whole_run_and_a_subset_shows_no_page_change(tmp_path: Path) -> None:
    whole, subset = tmp_path / "whole", tmp_path / "subset"
    assert _run(whole, "features/").returncode == 0
    assert _run(subset, "features/", "-k", "revoked").returncode == 0
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "solar_conformance.report",
            "compare",
            str(whole / "conformance.yaml"),
            str(subset / "conformance.yaml"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout
    assert "page unchanged" in done.stdout
    assert "page changed" not in done.stdout
    assert "selection changed:" in done.stdout and "-k 'revoked'" in done.stdout
    assert "regressed" not in done.stdout


def test_a_run_stopped_by_x_after_its_first_failure_is_interrupted(tmp_path: Path) -> None:
    report = tmp_path / "report"
    done = run_lamps(tmp_path, report, "-x", "-p", "no:randomly")
    assert done.returncode == 1, done.stdout[-3000:]
    _says_everywhere(report, done.stdout, "Verdict: interrupted (stopped after the first failure")
    counts = _counts(report)
    assert set(counts.values()) == {sum(SCENARIOS.values())}, counts
    conformance = yaml.safe_load((report / "conformance.yaml").read_text())
    statuses = [s["status"] for s in conformance["scenarios"]]
    assert statuses.count("failed") == 1 and "not run" in statuses, statuses


def test_a_worker_that_crashed_under_a_scenario_interrupts_the_run(tmp_path: Path) -> None:
    (tmp_path / "crash_on_kind.py").write_text(
        "import os\n\nimport pytest\n\n\n"
        "@pytest.fixture(autouse=True)\n"
        "def crash(request):\n"
        "    if request.node.name == 'test_the_lamp_on_kind':\n"
        "        os._exit(3)\n"
    )
    report = tmp_path / "report"
    done = run_lamps(tmp_path, report, "-p", "crash_on_kind", "-n", "1", "-p", "no:randomly")
    assert done.returncode == 1, done.stdout[-3000:]
    _says_everywhere(
        report, done.stdout, "Verdict: interrupted (worker 'gw0' crashed while running"
    )
    counts = _counts(report)
    assert set(counts.values()) == {sum(SCENARIOS.values())}, counts
    conformance = yaml.safe_load((report / "conformance.yaml").read_text())
    (crashed,) = [s for s in conformance["scenarios"] if s["name"] == "The lamp on kind"]
    assert crashed["status"] == "interrupted" and "crashed" in crashed["reason"], crashed


def test_a_rerun_that_finished_what_an_interrupted_run_did_not_makes_one_finished_report(
    tmp_path: Path,
) -> None:
    from dataclasses import replace

    from solar_conformance.report.model import build_report
    from solar_conformance.report.records import RunInfo, ScenarioRecord, merge_runs, page_version

    features = tmp_path / "features"
    features.mkdir()
    (features / "lamps.feature").write_text("Feature: Lamps\n")
    run = RunInfo(backend="sim", page_version=page_version(None, features))
    lit = ScenarioRecord(
        uri="features/lamps.feature", feature="Lamps", name="Lit", test_id="t", status="passed"
    )
    stopped = replace(run, stopped="stopped by Ctrl-C")
    first = (stopped, [replace(lit, status="not run", message="not run: stopped by Ctrl-C")])
    again = (run, [lit])
    for runs in ([first, again], [again, first]):
        merged_run, merged = merge_runs(runs, ["a", "b"], features)
        assert [r.status for r in merged] == ["passed"]
        assert build_report(merged, merged_run).verdict.state == "passed"
