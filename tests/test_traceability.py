"""Every behaviour of the page is checked by a scenario, and every @spec scenario checks one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from pytest_bdd.feature import get_features

ROOT = Path(__file__).resolve().parent.parent
INDEX = ROOT / "features" / "traceability.yaml"


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


def test_every_entry_is_checked_by_an_existing_scenario(
    index: list[dict[str, Any]], scenarios: dict[str, set[str]]
) -> None:
    for entry in index:
        assert entry.get("scenarios"), f"{entry['id']} ({entry['quote']}) has no scenario"
        missing = [s for s in entry["scenarios"] if s not in scenarios]
        assert not missing, f"{entry['id']} names scenarios that do not exist: {missing}"


def test_every_spec_scenario_traces_to_the_page(
    index: list[dict[str, Any]], scenarios: dict[str, set[str]]
) -> None:
    traced = {s for entry in index for s in entry["scenarios"]}
    orphans = sorted(n for n, tags in scenarios.items() if "spec" in tags and n not in traced)
    assert not orphans, f"@spec scenarios that check nothing in the index: {orphans}"


def test_ids_are_unique(index: list[dict[str, Any]]) -> None:
    ids = [entry["id"] for entry in index]
    assert len(ids) == len(set(ids)), f"duplicate ids: {sorted(i for i in ids if ids.count(i) > 1)}"


def test_each_scenario_is_either_spec_or_defined_here(scenarios: dict[str, set[str]]) -> None:
    for name, tags in scenarios.items():
        kinds = tags & {"spec", "defined-here"}
        assert len(kinds) == 1, f"{name!r} must be tagged @spec or @defined-here, has {tags}"
