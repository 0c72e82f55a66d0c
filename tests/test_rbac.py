from __future__ import annotations

from solar_conformance.core.api import SOLAR_GROUP, Obj
from solar_conformance.core.rbac import Request, User, allowed

AGENT = User.service_account("test", "solar-agent-cluster-1")


def _role(rules: list[Obj]) -> Obj:
    return {"metadata": {"namespace": "test", "name": "r"}, "rules": rules}


def _binding(subject: Obj) -> Obj:
    return {
        "metadata": {"namespace": "test", "name": "b"},
        "roleRef": {"kind": "Role", "name": "r"},
        "subjects": [subject],
    }


SA_SUBJECT = {"kind": "ServiceAccount", "name": "solar-agent-cluster-1", "namespace": "test"}
RULES = [
    {
        "apiGroups": [SOLAR_GROUP],
        "resources": ["targets"],
        "resourceNames": ["cluster-1"],
        "verbs": ["get"],
    },
]


def _check(request: Request, rules: list[Obj] = RULES, subject: Obj = SA_SUBJECT) -> bool:
    return allowed(AGENT, request, [_role(rules)], [_binding(subject)], [], [])


def test_resource_name_rule_allows_only_that_name() -> None:
    assert _check(Request("get", SOLAR_GROUP, "targets", "test", "cluster-1"))
    assert not _check(Request("get", SOLAR_GROUP, "targets", "test", "cluster-2"))


def test_list_is_not_allowed_by_a_named_rule() -> None:
    assert not _check(Request("list", SOLAR_GROUP, "targets", "test", None))


def test_role_binding_does_not_reach_other_namespaces() -> None:
    assert not _check(Request("get", SOLAR_GROUP, "targets", "other", "cluster-1"))


def test_subresource_needs_its_own_rule() -> None:
    assert not _check(Request("update", SOLAR_GROUP, "targets", "test", "cluster-1", "status"))


def test_other_service_account_gets_nothing() -> None:
    other = {"kind": "ServiceAccount", "name": "someone-else", "namespace": "test"}
    assert not _check(Request("get", SOLAR_GROUP, "targets", "test", "cluster-1"), subject=other)


def test_group_subject_and_wildcards() -> None:
    group = {"kind": "Group", "name": "system:serviceaccounts:test"}
    rules = [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]
    assert _check(Request("delete", "", "secrets", "test", "x"), rules, group)


def test_system_masters_bypass() -> None:
    admin = User("admin", ("system:masters",))
    assert allowed(admin, Request("delete", "", "secrets", "x", "y"), [], [], [], [])
