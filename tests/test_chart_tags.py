"""The tags the reference gives the charts it renders: upstream SolAr's scheme
(docs/backends/upstream.md, row 6)."""

from __future__ import annotations

import hashlib

from solar_conformance.core.semver import highest, matches_constraint
from solar_conformance.simulators.reference.tags import (
    agent_release_tag,
    bootstrap_tag,
    bootstrap_version_of,
    pull_secrets_hash,
    release_tag,
)


def test_the_bootstrap_tag_carries_the_counter_and_matches_the_pages_range() -> None:
    for version in (0, 1, 17):
        tag = bootstrap_tag(version)
        assert tag == f"v0.0.{version}"
        assert bootstrap_version_of(tag) == version
        assert matches_constraint(tag, ">=0.0.0")


def test_only_bootstrap_tags_carry_a_counter() -> None:
    for tag in ("v0.0.01", "0.0.1", "v0.1.0", "v0.0.1-e3b0c442", "latest"):
        assert bootstrap_version_of(tag) is None, tag


def test_a_release_tag_is_the_generation_and_the_hash_of_its_pull_secrets() -> None:
    assert pull_secrets_hash({}) == hashlib.sha256(b"").hexdigest()[:8] == "e3b0c442"
    assert release_tag(3, {}) == "v0.0.3-e3b0c442"
    pairs = {"web": "regcred", "db": "other"}
    assert pull_secrets_hash(pairs) == hashlib.sha256(b"db=other;web=regcred;").hexdigest()[:8]
    assert release_tag(1, pairs) != release_tag(1, {"web": "regcred", "db": "regcred"})


def test_a_release_tag_is_a_pre_release_the_pages_range_never_picks() -> None:
    assert not matches_constraint(release_tag(2, {}), ">=0.0.0")
    assert matches_constraint(release_tag(2, {}), release_tag(2, {}))


def test_the_agent_release_counts_its_renders_per_generation() -> None:
    assert agent_release_tag(1, []) == "v0.0.1-0"
    pushed = ["v0.0.1-0", "v0.0.1-1", "v0.0.1-9", "v0.0.1-e3b0c442", "v0.0.2-x"]
    assert agent_release_tag(1, pushed) == "v0.0.1-10"
    assert agent_release_tag(2, pushed) == "v0.0.2-0"
    later = agent_release_tag(1, pushed)
    assert highest(["v0.0.1-0", "v0.0.1-1", "v0.0.1-9", later]) == later
