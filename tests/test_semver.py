"""OCIRepository `ref.semver` picks the tag Flux's source-controller (Masterminds semver) picks."""

from __future__ import annotations

import pytest

from solar_conformance.core.semver import highest, highest_matching, matches_constraint, tag_for_ref
from solar_conformance.simulators.memory.flux import FluxModel

TAGS = [
    "0.9.0",
    "1.0.0",
    "1.2.0",
    "1.2.3",
    "1.2.9",
    "1.3.0-rc.1",
    "1.3.0",
    "1.10.0",
    "2.0.0-rc.1",
    "2.0.0",
    "2.1.0",
    "v3.0.0",
    "latest",
    "sha-1234",
]

PICKS = {
    # constraint: the tag source-controller would pick
    "*": "v3.0.0",
    ">=1.0.0": "v3.0.0",
    ">= 1.0.0, < 2.0.0": "1.10.0",
    ">=1.0.0 <2.0.0": "1.10.0",
    "^1.2": "1.10.0",
    "^1.2.3": "1.10.0",
    "^0.9": "0.9.0",
    "~1.2": "1.2.9",
    "~1.2.3": "1.2.9",
    "~1": "1.10.0",
    "1.2.x": "1.2.9",
    "1.x": "1.10.0",
    "1.2.0 - 1.3.0": "1.3.0",
    "<1.0.0 || >=2.0.0 <3.0.0": "2.1.0",
    "~1.2 || ^2.0": "2.1.0",
    "1.2.3": "1.2.3",
    "=1.2.3": "1.2.3",
    ">=1.2.0, <1.3.0, !=1.2.9": "1.2.3",
    ">=2.0.0-rc.0 <2.0.0": "2.0.0-rc.1",
    ">=1.3.0-rc.0 <2.0.0": "2.0.0-rc.1",  # Masterminds: the whole alternative lets them in
    "~2.0.0-rc.0": "2.0.0",
    "v3.0": "v3.0.0",
    ">=4.0.0": None,
}


@pytest.mark.parametrize(("constraint", "picked"), sorted(PICKS.items()))
def test_the_tag_flux_would_pick(constraint: str, picked: str | None) -> None:
    assert highest_matching(TAGS, constraint) == picked


@pytest.mark.parametrize(
    ("tag", "constraint", "matches"),
    [
        ("1.3.0-rc.1", ">=1.0.0", False),  # no pre-release named: none let in
        ("1.3.0-rc.1", "^1.2", False),
        ("1.3.0-rc.1", ">=1.2.0-rc.0 <2.0.0", True),  # named: compared like any version
        ("1.3.0-rc.1", ">=1.2.0-rc.0 <2.0.0 || >=3.0.0", True),
        ("1.3.0-rc.1", ">=3.0.0-rc.0 || >=1.0.0", False),  # only the alternative that names one
        ("2.0.0", "!=2.0.0", False),
        ("2.0.1", "!=2.0.0", True),
        ("latest", "*", False),
    ],
)
def test_pre_releases_and_exclusions(tag: str, constraint: str, matches: bool) -> None:
    assert matches_constraint(tag, constraint) is matches


@pytest.mark.parametrize("bad", ["", ">=one", "^^1", "1.2.3 -"])
def test_a_bad_constraint_is_named(bad: str) -> None:
    with pytest.raises(ValueError, match="semver constraint"):
        highest_matching(TAGS, bad)


class Tags:
    """A registry client that knows only the repository's tags."""

    def __init__(self, tags: list[str]) -> None:
        self._tags = tags

    def tags(self, repository: str) -> list[str]:
        return list(self._tags)


@pytest.mark.parametrize(
    ("ref", "tag"),
    [
        ({"semver": "~1.2 || ^2.0"}, "2.1.0"),
        ({"semver": ">=1.0.0, <1.3.0"}, "1.2.9"),
        ({"semver": "1.2.0 - 1.3.0"}, "1.3.0"),
        ({"tag": "1.0.0", "semver": "~1.2"}, "1.2.9"),  # semver takes precedence over tag
        ({"tag": "1.0.0"}, "1.0.0"),
        ({}, "latest"),
    ],
)
def test_the_sim_flux_pulls_the_tag_flux_would(ref: dict[str, str], tag: str) -> None:
    assert FluxModel._pick_tag(Tags(TAGS), "ns/agent", ref) == tag  # type: ignore[arg-type]
    assert tag_for_ref(TAGS, ref) == tag  # the harness reads a source as the sim's Flux does


SOLAR_TAGS = ["v0.0.0", "v0.0.1", "v0.0.2-e3b0c442", "v0.0.3-e3b0c442", "v0.0.3-1", "v0.0.3-10"]


@pytest.mark.parametrize(
    ("ref", "tag"),
    [
        ({"semver": ">=0.0.0"}, "v0.0.1"),  # the page's range: no pre-release
        ({"semver": "v0.0.2-e3b0c442"}, "v0.0.2-e3b0c442"),  # one version, as SolAr pins it
        ({"semver": "v0.0.3-1"}, "v0.0.3-1"),
    ],
)
def test_solar_tags_are_picked_as_source_controller_does(ref: dict[str, str], tag: str) -> None:
    assert tag_for_ref(SOLAR_TAGS, ref) == tag
    assert FluxModel._pick_tag(Tags(SOLAR_TAGS), "ns/c", ref) == tag  # type: ignore[arg-type]


def test_the_highest_tag_counts_pre_releases_and_skips_what_is_no_version() -> None:
    assert highest(SOLAR_TAGS) == "v0.0.3-e3b0c442"  # alphanumeric above numeric identifiers
    assert highest(["v0.0.3-9", "v0.0.3-10", "latest"]) == "v0.0.3-10"
    assert highest(["v0.0.1-0123", "v0.0.0"]) == "v0.0.0"  # a leading zero: not a version
    assert highest(["latest"]) is None


def test_the_sim_flux_names_a_constraint_nothing_matches() -> None:
    with pytest.raises(ValueError, match=r"no match found for semver: \^9"):
        FluxModel._pick_tag(Tags(TAGS), "ns/agent", {"semver": "^9"})  # type: ignore[arg-type]
