"""Kubernetes RBAC evaluation, as the API server's RBAC authorizer decides a request."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from solar_conformance.core.api import Obj

SYSTEM_MASTERS = "system:masters"


@dataclass(frozen=True)
class User:
    name: str
    groups: tuple[str, ...] = ()
    # The authenticated credential's id (`JTI=<jti>` for a ServiceAccount token), as kube-apiserver
    # puts it into the user's extra; not part of the identity RBAC decides on.
    credential_id: str | None = field(default=None, compare=False)

    @classmethod
    def service_account(cls, namespace: str, name: str) -> User:
        return cls(
            f"system:serviceaccount:{namespace}:{name}",
            (
                "system:serviceaccounts",
                f"system:serviceaccounts:{namespace}",
                "system:authenticated",
            ),
        )


@dataclass(frozen=True)
class Request:
    verb: str
    group: str
    resource: str
    namespace: str | None
    name: str | None = None
    subresource: str | None = None

    def describe(self) -> str:
        resource = f"{self.resource}/{self.subresource}" if self.subresource else self.resource
        group = f' in API group "{self.group}"' if self.group else ""
        where = (
            f' in the namespace "{self.namespace}"' if self.namespace else " at the cluster scope"
        )
        name = f' "{self.name}"' if self.name else ""
        return f'cannot {self.verb} resource "{resource}"{group}{where}{name}'


def rule_allows(rule: Obj, request: Request) -> bool:
    verbs = rule.get("verbs") or []
    if "*" not in verbs and request.verb not in verbs:
        return False
    groups = rule.get("apiGroups") or []
    if "*" not in groups and request.group not in groups:
        return False
    wanted = (
        f"{request.resource}/{request.subresource}" if request.subresource else request.resource
    )
    resources = rule.get("resources") or []
    if "*" not in resources and wanted not in resources:
        return False
    names = rule.get("resourceNames") or []
    return not names or (request.name is not None and request.name in names)


def subject_matches(subject: Obj, user: User, binding_namespace: str | None) -> bool:
    kind = subject.get("kind")
    if kind == "ServiceAccount":
        namespace = subject.get("namespace") or binding_namespace
        return user.name == f"system:serviceaccount:{namespace}:{subject.get('name')}"
    if kind == "User":
        return bool(user.name == subject.get("name"))
    if kind == "Group":
        return subject.get("name") in user.groups
    return False


def allowed(
    user: User,
    request: Request,
    roles: Iterable[Obj],
    role_bindings: Iterable[Obj],
    cluster_roles: Iterable[Obj],
    cluster_role_bindings: Iterable[Obj],
) -> bool:
    """True when a binding that names the user grants a rule that covers the request."""
    if SYSTEM_MASTERS in user.groups:
        return True
    roles_by_key = {(r["metadata"]["namespace"], r["metadata"]["name"]): r for r in roles}
    cluster_by_name = {r["metadata"]["name"]: r for r in cluster_roles}

    def rules_of(role_ref: Obj, namespace: str | None) -> list[Obj]:
        if role_ref.get("kind") == "ClusterRole":
            role = cluster_by_name.get(role_ref.get("name", ""))
        else:
            role = roles_by_key.get((namespace or "", role_ref.get("name", "")))
        return list((role or {}).get("rules") or [])

    candidates: list[tuple[Obj, str | None]] = [(b, None) for b in cluster_role_bindings]
    if request.namespace:
        candidates += [
            (b, request.namespace)
            for b in role_bindings
            if b["metadata"].get("namespace") == request.namespace
        ]
    for binding, namespace in candidates:
        if not any(subject_matches(s, user, namespace) for s in binding.get("subjects") or []):
            continue
        if any(rule_allows(rule, request) for rule in rules_of(binding["roleRef"], namespace)):
            return True
    return False
