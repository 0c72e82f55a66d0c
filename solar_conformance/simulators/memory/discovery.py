"""What the in-memory API server serves, as its discovery documents say: the kinds it stores (with
their status subresource and serviceaccounts/token) and the review resources every Kubernetes API
server has."""

from __future__ import annotations

from solar_conformance.core.api import KINDS, Kind
from solar_conformance.core.probing import ServedResource

OBJECT_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
STATUS_VERBS = ("get", "patch", "update")
AUTHENTICATION = "authentication.k8s.io"
AUTHORIZATION = "authorization.k8s.io"

# (group, plural, kind, namespaced): create-only resources that answer a question and store nothing.
REVIEWS = (
    (AUTHENTICATION, "selfsubjectreviews", "SelfSubjectReview", False),
    (AUTHENTICATION, "tokenreviews", "TokenReview", False),
    (AUTHORIZATION, "localsubjectaccessreviews", "LocalSubjectAccessReview", True),
    (AUTHORIZATION, "selfsubjectaccessreviews", "SelfSubjectAccessReview", False),
    (AUTHORIZATION, "selfsubjectrulesreviews", "SelfSubjectRulesReview", False),
    (AUTHORIZATION, "subjectaccessreviews", "SubjectAccessReview", False),
)


def _stored(kind: Kind) -> list[ServedResource]:
    def served(
        sub: str | None, kind_name: str, verbs: tuple[str, ...], body: str = ""
    ) -> ServedResource:
        return ServedResource(
            kind.group, kind.version, kind.plural, sub, kind_name, kind.namespaced, verbs, body
        )

    found = [served(None, kind.kind, OBJECT_VERBS)]
    if kind.has_status:
        found.append(served("status", kind.kind, STATUS_VERBS))
    if kind.kind == "ServiceAccount":
        found.append(served("token", "TokenRequest", ("create",), f"{AUTHENTICATION}/v1"))
    return found


def served_resources() -> list[ServedResource]:
    found = [resource for kind in KINDS.values() for resource in _stored(kind)]
    found += [
        ServedResource(group, "v1", plural, None, kind, namespaced, ("create",))
        for group, plural, kind, namespaced in REVIEWS
    ]
    return sorted(found, key=lambda r: (r.group, r.resource, r.subresource or ""))


def find_kind(resource: ServedResource) -> Kind | None:
    """The stored kind behind a served resource, if it is one."""
    for kind in KINDS.values():
        if (kind.group, kind.plural) == (resource.group, resource.resource):
            return kind
    return None
