"""OCIRepository `ref.semver` picks the tag Flux's source-controller (Masterminds semver) picks."""

from __future__ import annotations

import pytest

from core.semver import highest_matching, matches_constraint

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
