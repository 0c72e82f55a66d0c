"""The conformance report: its level from the @spec scenarios, the YAML an implementation can
publish, and `solar-conformance report compare` between two of them."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from solar_conformance.report.conformance import to_yaml
from solar_conformance.report.model import (
    CONFORMANT,
    NOT_CONFORMANT,
    PARTIALLY_CONFORMANT,
    build_report,
)
from solar_conformance.report.records import RunInfo, ScenarioRecord, StepRecord

ROOT = Path(__file__).resolve().parent.parent
RUN = RunInfo(
    backend="sim",
    implementation="SolAr",
    implementation_version="v0.3.0",
    page="features/agent-registration.md",
    page_version="sha256:abc",
    versions={"kubernetes": "v1.34.4"},
    started="2026-01-02T03:04:05+00:00",
)
INDEX: dict[str, Any] = {
    "page": "agent-registration.md",
    "entries": [
        {
            "id": "lights",
            "section": "Lamps",
            "kind": "statement",
            "quote": "A lamp lights.",
            "scenarios": ["The lamp lights"],
        },
        {
            "id": "dark",
            "section": "Lamps",
            "kind": "statement",
            "quote": "It goes dark.",
            "scenarios": ["The lamp goes dark"],
        },
        {
            "id": "drawer",
            "section": "Spares",
            "kind": "definition",
            "quote": "A drawer.",
            "scenarios": ["A spare in the drawer"],
        },
    ],
}


def _record(
    name: str, status: str = "passed", kind: str = "spec", message: str = ""
) -> ScenarioRecord:
    return ScenarioRecord(
        uri="features/lamps.feature",
        feature="Lamps",
        name=name,
        template=name,
        test_id="test_" + name.lower().replace(" ", "_"),
        status=status,
        tags=(kind,),
        steps=(StepRecord("Given", "a lamp", status),),
        message=message,
    )


def _passing() -> list[ScenarioRecord]:
    return [
        _record("The lamp lights"),
        _record("The lamp goes dark"),
        _record("A spare in the drawer", kind="defined-here"),
    ]


def test_every_spec_scenario_passed_is_conformant() -> None:
    report = build_report(_passing(), RUN, INDEX)
    assert report.level.name == CONFORMANT
    assert report.level.line == "Conformance level: conformant (every @spec scenario passed)"


def test_a_failed_defined_here_scenario_does_not_change_the_level() -> None:
    records = [*_passing()[:2], _record("A spare in the drawer", "failed", "defined-here")]
    assert build_report(records, RUN, INDEX).level.name == CONFORMANT


@pytest.mark.parametrize("status", ["failed", "skipped"])
def test_a_spec_scenario_that_did_not_pass_is_partial_and_named(status: str) -> None:
    records = [
        _record("The lamp lights"),
        _record("The lamp goes dark", status, message="why\nmore"),
    ]
    level = build_report(records, RUN, INDEX).level
    assert level.name == PARTIALLY_CONFORMANT
    assert level.missing == (("features/lamps.feature: The lamp goes dark", status, "why"),)


def test_a_statement_whose_scenario_did_not_run_is_partial() -> None:
    level = build_report([_record("The lamp lights")], RUN, INDEX).level
    assert level.name == PARTIALLY_CONFORMANT
    assert level.missing == (("The lamp goes dark", "not run", "not in this run"),)


def test_no_spec_scenario_passed_is_not_conformant() -> None:
    records = [_record("The lamp lights", "failed"), _record("The lamp goes dark", "skipped")]
    assert build_report(records, RUN, INDEX).level.name == NOT_CONFORMANT
    assert build_report([], RUN, INDEX).level.name == NOT_CONFORMANT


def test_the_yaml_names_implementation_page_backend_and_each_statement() -> None:
    records = [_record("The lamp lights"), _record("The lamp goes dark", "failed", message="lit")]
    data = yaml.safe_load(to_yaml(build_report(records, RUN, INDEX)))
    assert data["implementation"] == {"name": "SolAr", "version": "v0.3.0", "kind": "reference"}
    assert data["page"] == {"path": "features/agent-registration.md", "version": "sha256:abc"}
    assert data["backend"] == {"name": "sim", "versions": {"kubernetes": "v1.34.4"}}
    assert data["level"] == PARTIALLY_CONFORMANT
    lamps = {s["id"]: s for s in data["sections"][0]["statements"]}
    assert lamps["lights"]["result"] == "passed"
    assert lamps["dark"]["result"] == "failed"
    assert lamps["dark"]["reason"] == "The lamp goes dark: lit"
    assert lamps["dark"]["answeredBy"] == ["reference SolAr"]
    spares = data["sections"][1]["statements"][0]
    assert (spares["kind"], spares["result"]) == ("definition", "not run")


def _compare(tmp_path: Path, before: list[ScenarioRecord], after: list[ScenarioRecord]) -> Any:
    for name, records in (("a.yaml", before), ("b.yaml", after)):
        (tmp_path / name).write_text(to_yaml(build_report(records, RUN, INDEX)))
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "solar_conformance.report",
            "compare",
            str(tmp_path / "a.yaml"),
            str(tmp_path / "b.yaml"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )


def test_compare_finds_no_change(tmp_path: Path) -> None:
    done = _compare(tmp_path, _passing(), _passing())
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1:] == ["no change", "page unchanged: version sha256:abc"]


def test_compare_reports_a_regression_with_exit_1(tmp_path: Path) -> None:
    after = [_record("The lamp lights"), _record("The lamp goes dark", "failed", message="lit")]
    done = _compare(tmp_path, _passing(), after)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert "regressed: level: conformant -> partially conformant" in lines
    assert "regressed: features/lamps.feature: The lamp goes dark: passed -> failed (lit)" in lines
    assert (
        "regressed: features/lamps.feature: A spare in the drawer: passed -> not in this report"
        in lines
    )


def test_compare_reports_a_fix_with_exit_0(tmp_path: Path) -> None:
    before = [_record("The lamp lights"), _record("The lamp goes dark", "skipped")]
    done = _compare(tmp_path, before, _passing())
    assert done.returncode == 0, done.stdout + done.stderr
    assert "fixed: features/lamps.feature: The lamp goes dark: skipped -> passed" in done.stdout
    assert "new: features/lamps.feature: A spare in the drawer: passed" in done.stdout


def test_compare_names_a_file_that_is_no_conformance_report(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(to_yaml(build_report(_passing(), RUN, INDEX)))
    (tmp_path / "b.yaml").write_text("- just a list\n")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "solar_conformance.report",
            "compare",
            str(tmp_path / "a.yaml"),
            str(tmp_path / "b.yaml"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 4
    assert done.stderr.count("\n") == 1 and "is not a conformance report" in done.stderr


def test_records_survive_json(tmp_path: Path) -> None:
    """What a pytest-xdist worker hands over is what the writer gets back."""
    import json

    from solar_conformance.report.records import dump, load

    record = replace(_passing()[0], example=1, rule="A rule", duration=1.5)
    run, records = load(json.loads(json.dumps(dump(RUN, [record]))))
    assert (run, records) == (RUN, [record])


class _ApiServer:
    def __init__(self, git_version: str | None) -> None:
        self.git_version = git_version
        self.calls = 0

    def version(self) -> str:
        from solar_conformance.core.api import ApiError

        self.calls += 1
        if self.git_version is None:
            raise ApiError(503, "ServiceUnavailable", "starting")
        return self.git_version


def test_a_real_landscape_reports_what_its_api_servers_say() -> None:
    from solar_conformance.components.landscape import RealParts
    from solar_conformance.core.contract import REFERENCE
    from solar_conformance.provision.toolchain import versions

    parts = RealParts(REFERENCE, "reference")
    solar, target = _ApiServer("v1.34.4"), _ApiServer("v1.33.1")
    kind = "distribution+token-service"
    found = parts.versions(solar, target, kind)  # type: ignore[arg-type]
    assert found["kubernetes"] == "v1.34.4"
    assert found["kubernetes (target)"] == "v1.33.1"
    assert found["registry"] == f"distribution+token-service {versions.DISTRIBUTION}"
    assert versions.SOURCE_CONTROLLER in found["flux"]
    parts.versions(solar, target, kind)  # type: ignore[arg-type]
    assert solar.calls == 1, "asked once per landscape"
    unanswered = RealParts(REFERENCE, "reference")
    silent = _ApiServer(None)
    assert unanswered.versions(silent, silent, kind)["kubernetes"] == "not reported"  # type: ignore[arg-type]
