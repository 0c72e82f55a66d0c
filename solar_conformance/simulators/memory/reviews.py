"""RBAC as the in-memory API server answers about it: its bootstrap policy, SelfSubjectRulesReview,
SelfSubjectAccessReview, and the escalation check on creating bindings and roles.

Like kube-apiserver, the in-memory API server starts with the bootstrap ClusterRoles that every
authenticated user is bound to (solar_conformance/core/baseline.py) and with cluster-admin for system:masters.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from solar_conformance.core.api import ApiError, Obj, new_object
from solar_conformance.core.baseline import BOOTSTRAP_CLUSTER_ROLES
from solar_conformance.core.probing import Grant, PathGrant, RulesReview, grants_of, path_grants_of
from solar_conformance.core.rbac import SYSTEM_MASTERS, Request, User, allowed, subject_matches

RBAC_GROUP = "rbac.authorization.k8s.io"
CLUSTER_ADMIN = "cluster-admin"
_EVERYTHING: Obj = {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}
_EVERY_PATH: Obj = {"nonResourceURLs": ["*"], "verbs": ["*"]}


class RbacStore(Protocol):
    def objects(
        self, kind: str, namespace: str | None, labels: dict[str, str] | None = None
    ) -> list[Obj]: ...


def bootstrap_policy() -> list[Obj]:
    """The ClusterRoles and ClusterRoleBindings kube-apiserver creates at start, as far as the
    scenarios can tell them apart: the baseline of every authenticated user and cluster-admin."""
    roles = {name: rules for name, (rules, _groups) in BOOTSTRAP_CLUSTER_ROLES.items()}
    groups = {name: list(g) for name, (_rules, g) in BOOTSTRAP_CLUSTER_ROLES.items()}
    roles[CLUSTER_ADMIN] = [_EVERYTHING, _EVERY_PATH]
    groups[CLUSTER_ADMIN] = [SYSTEM_MASTERS]
    labels = {"kubernetes.io/bootstrapping": "rbac-defaults"}
    objects: list[Obj] = []
    for name, rules in roles.items():
        objects.append(new_object("ClusterRole", name, labels=labels, rules=rules))
        objects.append(
            new_object(
                "ClusterRoleBinding",
                name,
                labels=labels,
                roleRef={"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": name},
                subjects=[
                    {"apiGroup": RBAC_GROUP, "kind": "Group", "name": g} for g in groups[name]
                ],
            )
        )
    return objects


def _rbac(store: RbacStore) -> tuple[list[Obj], list[Obj], list[Obj], list[Obj]]:
    return (
        store.objects("Role", None),
        store.objects("RoleBinding", None),
        store.objects("ClusterRole", None),
        store.objects("ClusterRoleBinding", None),
    )


def may(store: RbacStore, user: User, request: Request) -> bool:
    """The RBAC authorizer's answer (what a SelfSubjectAccessReview returns)."""
    return allowed(user, request, *_rbac(store))


def rules_of(store: RbacStore, user: User, namespace: str) -> list[Obj]:
    """Every rule that applies to `user` in `namespace`: its ClusterRoleBindings' and the
    RoleBindings of that namespace, as kube-apiserver's rule resolver collects them."""
    roles, role_bindings, cluster_roles, cluster_role_bindings = _rbac(store)
    role_by_key = {(r["metadata"]["namespace"], r["metadata"]["name"]): r for r in roles}
    cluster_role_by_name = {r["metadata"]["name"]: r for r in cluster_roles}
    candidates = [(b, None) for b in cluster_role_bindings] + [
        (b, namespace) for b in role_bindings if b["metadata"].get("namespace") == namespace
    ]
    rules: list[Obj] = []
    for binding, binding_namespace in candidates:
        subjects = binding.get("subjects") or []
        if not any(subject_matches(s, user, binding_namespace) for s in subjects):
            continue
        ref = binding.get("roleRef") or {}
        if ref.get("kind") == "ClusterRole":
            role = cluster_role_by_name.get(ref.get("name", ""))
        else:
            role = role_by_key.get((namespace, ref.get("name", "")))
        rules += list((role or {}).get("rules") or [])
    return rules


def review_rules(store: RbacStore, user: User, namespace: str) -> RulesReview:
    if SYSTEM_MASTERS in user.groups:
        return RulesReview(frozenset({Grant("*", "*", "*")}), frozenset({PathGrant("*", "*")}))
    resources: set[Grant] = set()
    paths: set[PathGrant] = set()
    for rule in rules_of(store, user, namespace):
        if rule.get("nonResourceURLs"):
            paths |= path_grants_of(rule)
        else:
            resources |= grants_of(rule)
    return RulesReview(frozenset(resources), frozenset(paths))


def escalation_denial(store: RbacStore, user: User, request: Request, body: Obj) -> str | None:
    """RBAC's own check on writing a binding or a role (after the authorizer allowed the write):
    a binding needs `bind` on the role it names, or the user must hold every rule of that role; a
    role needs `escalate`, or the user must hold every rule it grants. None when it may."""
    if request.group != RBAC_GROUP or request.verb not in ("create", "update", "patch"):
        return None
    if request.resource in ("rolebindings", "clusterrolebindings"):
        ref = body.get("roleRef") or {}
        role_kind = "clusterroles" if ref.get("kind") == "ClusterRole" else "roles"
        name = str(ref.get("name", ""))
        bind = Request("bind", RBAC_GROUP, role_kind, request.namespace, name)
        if may(store, user, bind):
            return None
        rules = _role_rules(store, role_kind, request.namespace, name)
    elif request.resource in ("roles", "clusterroles"):
        escalate = Request("escalate", RBAC_GROUP, request.resource, request.namespace)
        if may(store, user, escalate):
            return None
        rules = list(body.get("rules") or [])
    else:
        return None
    if all(_holds(store, user, rule, request.namespace) for rule in rules):
        return None
    name = (body.get("metadata") or {}).get("name", "")
    return (
        f'{request.resource}.{RBAC_GROUP} "{name}" is forbidden: user "{user.name}" '
        f"(groups={list(user.groups)}) is attempting to grant RBAC permissions not currently held"
    )


def _role_rules(store: RbacStore, role_kind: str, namespace: str | None, name: str) -> list[Obj]:
    kind = "ClusterRole" if role_kind == "clusterroles" else "Role"
    for role in store.objects(kind, namespace if kind == "Role" else None):
        if role["metadata"]["name"] == name:
            return list(role.get("rules") or [])
    raise ApiError(404, "NotFound", f'{role_kind}.{RBAC_GROUP} "{name}" not found')


def _holds(store: RbacStore, user: User, rule: Obj, namespace: str | None) -> bool:
    """The user may already do everything `rule` grants (`*` only covered by `*`)."""
    if rule.get("nonResourceURLs"):
        return SYSTEM_MASTERS in user.groups
    return all(
        may(store, user, Request(g.verb, g.group, *_split(g.resource), namespace, g.name or None))
        for g in grants_of(rule)
    )


def _split(resource: str) -> tuple[str, str | None]:
    plural, _, sub = resource.partition("/")
    return plural, sub or None


def denied_message(user: User, request: Request) -> str:
    target = f"{request.resource}.{request.group}" if request.group else request.resource
    name = f' "{request.name}"' if request.name else ""
    return f'{target}{name} is forbidden: User "{user.name}" {request.describe()}'


def first_denied(store: RbacStore, user: User, requests: Iterable[Request]) -> Request | None:
    return next((r for r in requests if not may(store, user, r)), None)
