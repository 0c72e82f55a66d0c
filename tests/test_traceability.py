"""Every sentence of the page has an entry in the index; every statement is checked by @spec
scenarios; every scenario is in the index under the kind its tag says."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from pytest_bdd.feature import get_features

ROOT = Path(__file__).resolve().parent.parent
INDEX = ROOT / "features" / "traceability.yaml"
KINDS = ("statement", "definition", "informative")


def _scenarios() -> dict[str, set[str]]:
    """Scenario name -> its tags (feature, rule and scenario tags together)."""
    found: dict[str, set[str]] = {}
    for feature in get_features([str(p) for p in sorted((ROOT / "features").glob("*.feature"))]):
        for name, scenario in feature.scenarios.items():
            rule_tags = scenario.rule.tags if scenario.rule else set()
            found[name] = set(scenario.tags) | set(feature.tags) | set(rule_tags)
    return found


@pytest.fixture(scope="module")
def index() -> list[dict[str, Any]]:
    return list(yaml.safe_load(INDEX.read_text())["entries"])


@pytest.fixture(scope="module")
def scenarios() -> dict[str, set[str]]:
    return _scenarios()


def _of_kind(index: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [entry for entry in index if entry["kind"] == kind]


def test_every_entry_has_a_known_kind(index: list[dict[str, Any]]) -> None:
    for entry in index:
        assert entry.get("kind") in KINDS, f"{entry['id']}: kind must be one of {KINDS}"


def test_every_statement_and_definition_is_checked_by_existing_scenarios(
    index: list[dict[str, Any]], scenarios: dict[str, set[str]]
) -> None:
    for entry in _of_kind(index, "statement") + _of_kind(index, "definition"):
        assert entry.get("scenarios"), f"{entry['id']} ({entry['quote']}) has no scenario"
        missing = [s for s in entry["scenarios"] if s not in scenarios]
        assert not missing, f"{entry['id']} names scenarios that do not exist: {missing}"


def test_statements_are_proven_by_spec_scenarios_only(
    index: list[dict[str, Any]], scenarios: dict[str, set[str]]
) -> None:
    for entry in _of_kind(index, "statement"):
        others = [s for s in entry["scenarios"] if "spec" not in scenarios.get(s, set())]
        assert not others, f"{entry['id']} counts scenarios that are not @spec: {others}"


def test_definitions_are_checked_by_defined_here_scenarios_only(
    index: list[dict[str, Any]], scenarios: dict[str, set[str]]
) -> None:
    ids = {entry["id"] for entry in index}
    for entry in _of_kind(index, "definition"):
        others = [s for s in entry["scenarios"] if "defined-here" not in scenarios.get(s, set())]
        assert not others, f"{entry['id']} names scenarios that are not @defined-here: {others}"
        assert entry.get("reads", entry["id"]) in ids, f"{entry['id']} reads an unknown entry"


def test_informative_entries_say_why_and_check_nothing(index: list[dict[str, Any]]) -> None:
    for entry in _of_kind(index, "informative"):
        assert entry.get("why"), f"{entry['id']} must say why it states no behaviour"
        assert not entry.get("scenarios"), f"{entry['id']} is informative but names scenarios"


def test_every_scenario_traces_to_an_entry_of_its_kind(
    index: list[dict[str, Any]], scenarios: dict[str, set[str]]
) -> None:
    proving = {s for entry in _of_kind(index, "statement") for s in entry["scenarios"]}
    defining = {s for entry in _of_kind(index, "definition") for s in entry["scenarios"]}
    orphans = sorted(n for n, tags in scenarios.items() if "spec" in tags and n not in proving)
    assert not orphans, f"@spec scenarios that check no statement of the page: {orphans}"
    orphans = sorted(
        n for n, tags in scenarios.items() if "defined-here" in tags and n not in defining
    )
    assert not orphans, f"@defined-here scenarios that check no definition: {orphans}"


def test_every_sentence_of_the_page_has_an_entry(index: list[dict[str, Any]]) -> None:
    """Each sentence of the page's prose (outside code blocks and tables) is quoted by an entry."""
    page = (ROOT / "features" / "agent-registration.md").read_text()
    body = page.split("\n---\n", 1)[-1]
    quoted = " ".join(entry["quote"] for entry in index).replace("`", "")
    prose, fenced = [], False
    for line in body.splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced or line.startswith(("|", "#")) or not line.strip():
            prose.append("\n")
            continue
        prose.append(line)
    text = " ".join(prose).replace("`", "")
    sentences = [
        " ".join(part.split())
        for paragraph in text.split("\n")
        for part in paragraph.replace("below:", "below.").split(". ")
        if part.strip()
    ]
    missing = [s for s in sentences if s.rstrip(".:") not in " ".join(quoted.split())]
    assert not missing, f"sentences of the page without an entry: {missing}"


def test_ids_are_unique(index: list[dict[str, Any]]) -> None:
    ids = [entry["id"] for entry in index]
    assert len(ids) == len(set(ids)), f"duplicate ids: {sorted(i for i in ids if ids.count(i) > 1)}"


def test_each_scenario_is_either_spec_or_defined_here(scenarios: dict[str, set[str]]) -> None:
    for name, tags in scenarios.items():
        kinds = tags & {"spec", "defined-here"}
        assert len(kinds) == 1, f"{name!r} must be tagged @spec or @defined-here, has {tags}"
