"""Names of a run's scenarios: each has its own tag, and a scenario tells what others made."""

from __future__ import annotations

import pytest

from solar_conformance.plugin.names import Names

OURS = Names("0a1b2")


@pytest.mark.parametrize(
    ("name", "another"),
    [
        ("test-0a1b2", False),  # this scenario's namespace
        ("test-0a1b2-shadow", False),  # a path this scenario began with its namespace
        ("test-fc86a", True),
        ("test-fc86a-shadow", True),  # another scenario's look-alike of its namespace
        ("team-a-fc86a", True),
        ("test", False),  # no scenario's: the landscape's own or a broken SolAr's
        ("conformance", False),
        ("fc86a", False),  # a tag alone is no scenario's namespace
    ],
)
def test_a_name_is_another_scenarios_when_it_carries_another_tag_and_not_this_one(
    name: str, another: bool
) -> None:
    assert OURS.of_another_scenario(name) is another


def test_the_namespace_carries_the_tag() -> None:
    made = Names.for_scenario("features/x.feature::test_y", "run-1")
    assert made.namespace("test") == f"test-{made.suffix}"
    assert made.of_this_scenario(made.namespace("test"))
    assert not made.of_another_scenario(made.namespace("test"))
