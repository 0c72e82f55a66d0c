"""Cucumber JSON, Cucumber Messages and JUnit XML as Cucumber's and CI's consumers read them."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import cucumber_messages as cm
import pytest

from tests.cucumber_feature import DOC_STRING, FAILURE, SCENARIOS, TABLE, TAG_LINES, run_lamps


@pytest.fixture(scope="module")
def lamps(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("lamps")
    done = run_lamps(where, where / "report")
    expected = ", ".join(f"{n} {status}" for status, n in sorted(SCENARIOS.items()))
    assert expected in done.stdout, done.stdout[-3000:]
    return where / "report"


def _elements(folder: Path) -> dict[str, dict[str, Any]]:
    features = json.loads((folder / "cucumber.json").read_text())
    return {e["name"]: e for f in features for e in f["elements"]}


def test_steps_after_a_failed_step_are_skipped(lamps: Path) -> None:
    dark = _elements(lamps)["The lamp goes dark"]
    statuses = [step["result"]["status"] for step in dark["steps"]]
    assert statuses == ["passed", "passed", "failed", "skipped", "skipped"]
    every_step = Counter(
        step["result"]["status"] for e in _elements(lamps).values() for step in e["steps"]
    )
    assert every_step["failed"] == SCENARIOS["failed"], "one failed step per failed scenario"


def test_a_skip_is_the_step_that_skipped_and_the_rest(lamps: Path) -> None:
    kind = _elements(lamps)["The lamp on kind"]
    assert [s["result"]["status"] for s in kind["steps"]] == ["passed", "skipped", "skipped"]


def test_tags_of_a_rule_are_kept(lamps: Path) -> None:
    elements = _elements(lamps)
    assert "@fault" in {t["name"] for t in elements["The lamp lights"]["tags"]}
    assert "@spec" in {t["name"] for t in elements["The lamp lights"]["tags"]}
    assert "@fault" not in {t["name"] for t in elements["The red lamp lights"]["tags"]}


def test_an_error_message_starts_with_the_steps_own_message(lamps: Path) -> None:
    failed = next(
        s
        for s in _elements(lamps)["The lamp goes dark"]["steps"]
        if s["result"]["status"] == "failed"
    )
    assert failed["result"]["error_message"].startswith("the lamp did not go dark: last seen lit")


def test_junit_test_names_are_the_scenario_names(lamps: Path) -> None:
    cases = ElementTree.parse(lamps / "junit.xml").getroot().iter("testcase")  # noqa: S314
    names = {case.get("name") for case in cases}
    assert names == {
        "The lamp lights",
        "The lamp goes dark",
        "The lamp on kind",
        "The red lamp lights",
        "The green lamp lights",
        "The RED lamp lights",
    }


def test_cucumber_messages_are_valid_and_count_right(lamps: Path) -> None:
    lines = (lamps / "cucumber.ndjson").read_text().splitlines()
    envelopes = [cm.message_converter.from_dict(json.loads(line), cm.Envelope) for line in lines]
    pickles = {e.pickle.id: e.pickle for e in envelopes if e.pickle}
    cases = [e.test_case for e in envelopes if e.test_case]
    assert len(cases) == sum(SCENARIOS.values())
    assert all(case.pickle_id in pickles for case in cases)
    steps = Counter(
        e.test_step_finished.test_step_result.status.value
        for e in envelopes
        if e.test_step_finished
    )
    assert steps == {"PASSED": 13, "FAILED": 1, "SKIPPED": 4}
    finished = next(e.test_run_finished for e in envelopes if e.test_run_finished)
    assert finished.success is False
    assert "eyJ" not in "".join(lines)


def test_data_tables_and_doc_strings_are_kept_as_the_schema_has_them(lamps: Path) -> None:
    steps = _elements(lamps)["The lamp lights"]["steps"]
    table = next(step for step in steps if "rows" in step)
    assert [tuple(row["cells"]) for row in table["rows"]] == list(TABLE)
    assert table["arguments"] == [{"rows": table["rows"]}], "cucumber-js's form too"
    doc = next(step for step in steps if "doc_string" in step)
    assert doc["doc_string"]["value"] == DOC_STRING
    assert doc["doc_string"]["line"] == doc["line"] + 1


def test_every_example_has_an_id_of_its_own(lamps: Path) -> None:
    ids = [
        e["id"] for f in json.loads((lamps / "cucumber.json").read_text()) for e in f["elements"]
    ]
    assert len(ids) == len(set(ids)) == sum(SCENARIOS.values())


def test_tags_carry_their_lines_in_the_feature_file(lamps: Path) -> None:
    elements = _elements(lamps)
    for (scenario, tag), line in TAG_LINES.items():
        assert {"name": tag, "line": line} in elements[scenario]["tags"]


def test_an_error_message_is_said_once(lamps: Path) -> None:
    (failed,) = [
        s for s in _elements(lamps)["The lamp goes dark"]["steps"] if "error_message" in s["result"]
    ]
    assert failed["result"]["error_message"].count(FAILURE) == 1
