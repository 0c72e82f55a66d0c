"""The zot-format access policy: namespace readers, the push user, zot's pattern precedence."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from solar_conformance.core.policy import AccessPolicy

label = st.from_regex(r"[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?", fullmatch=True)
chart = st.from_regex(r"[a-z0-9][-a-z0-9.]{0,30}", fullmatch=True)


@given(own=label, other=label, name=chart)
def test_reader_reads_only_its_namespace(own: str, other: str, name: str) -> None:
    policy = AccessPolicy.for_namespaces("solar", {"pull-own": own, "pull-other": other})
    assert policy.allows("pull-own", f"{own}/{name}", "read")
    assert not policy.allows("pull-own", f"{own}/{name}", "create")
    assert not policy.allows("pull-own", f"{own}/{name}", "update")
    if other != own and not other.startswith(f"{own}/"):
        assert not policy.allows("pull-own", f"{other}/{name}", "read")


@given(namespace=label, name=chart)
def test_push_user_may_do_everything(namespace: str, name: str) -> None:
    policy = AccessPolicy.for_namespaces("solar", {"pull": namespace})
    for action in ("read", "create", "update", "delete"):
        assert policy.allows("solar", f"{namespace}/{name}", action)


@given(namespace=label, name=chart)
def test_anonymous_and_unknown_users_get_nothing(namespace: str, name: str) -> None:
    policy = AccessPolicy.for_namespaces("solar", {"pull": namespace})
    assert not policy.allows(None, f"{namespace}/{name}", "read")
    assert not policy.allows("stranger", f"{namespace}/{name}", "read")


def test_the_longest_matching_pattern_decides() -> None:
    policy = AccessPolicy(
        {
            "repositories": {
                "**": {"policies": [{"users": ["a"], "actions": ["read"]}]},
                "test/**": {"policies": [{"users": ["b"], "actions": ["read"]}]},
            }
        }
    )
    assert policy.deciding_pattern("test/x") == "test/**"
    assert not policy.allows("a", "test/x", "read")
    assert policy.allows("a", "other/x", "read")


def test_single_star_stays_in_one_segment() -> None:
    policy = AccessPolicy({"repositories": {"test/*": {"defaultPolicy": ["read"]}}})
    assert policy.allows("anyone", "test/x", "read")
    assert not policy.allows("anyone", "test/x/y", "read")


def test_unknown_action_is_refused_loudly() -> None:
    with pytest.raises(ValueError, match="unknown registry action"):
        AccessPolicy({"repositories": {}}).allows("a", "b", "push")


def test_policy_is_a_zot_config_fragment() -> None:
    fragment = AccessPolicy.for_namespaces("solar", {"pull-test": "test"}).zot_config_fragment()
    access = fragment["http"]["accessControl"]
    assert access["adminPolicy"]["users"] == ["solar"]
    assert access["repositories"]["test/**"]["policies"] == [
        {"users": ["pull-test"], "actions": ["read"]}
    ]


@pytest.mark.parametrize(
    ("pattern", "repository", "matches"),
    [
        ("test/**", "test", True),  # zot (doublestar): `/**` is also no segment at all
        ("test/**", "test/agent", True),
        ("test/**", "test/a/b", True),
        ("test/**", "testing/agent", False),
        ("test/**", "testing", False),
        ("**/agent", "agent", True),
        ("a/**/b", "a/b", True),
        ("a/**/b", "a/x/y/b", True),
        ("test/*", "test/a/b", False),
    ],
)
def test_patterns_match_as_zot_matches_them(pattern: str, repository: str, matches: bool) -> None:
    policy = AccessPolicy({"repositories": {pattern: {"policies": [], "defaultPolicy": ["read"]}}})
    assert policy.allows("anyone", repository, "read") is matches
