"""What a credential may do, as an API server answers it: discovery, raw attempts, self reviews.

The scope check asks the API server which resources it serves and then tries every verb on each
with the credential under test. Writes are always dry runs (`dryRun=All`): the API server decides
authorization before it looks at dry run, so an answer other than the authorizer's 403 proves that
the request was let through, and nothing is changed even when a broken SolAr lets too much through.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

Obj = dict[str, Any]

VERBS = ("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection")
# The verbs that act on one named object (list and watch may be narrowed to one name too).
NAMED_VERBS = ("get", "update", "patch", "delete")
# Everything a request to a subresource can be: they always name their object.
SUBRESOURCE_VERBS = ("get", "create", "update", "patch", "delete")
WRITE_VERBS = frozenset({"create", "update", "patch", "delete", "deletecollection"})

# kube-apiserver's authorizer refuses with `... is forbidden: User "<name>" cannot <verb> ...`;
# admission and RBAC's own escalation check refuse with other words (and are not the authorizer).
_AUTHORIZER_DENIAL = re.compile(r'\bUser "[^"]*" cannot ')


@dataclass(frozen=True)
class ServedResource:
    """One entry of an API server's discovery: a resource or a subresource (`pods/status`)."""

    group: str
    version: str
    resource: str  # the plural, without the subresource
    subresource: str | None
    kind: str
    namespaced: bool
    verbs: tuple[str, ...]
    # A subresource's body may belong to another group-version (serviceaccounts/token takes an
    # authentication.k8s.io/v1 TokenRequest).
    body_api_version: str = ""

    @property
    def name(self) -> str:
        """As `kubectl auth can-i` names it: `targets.solar.opendefense.cloud`,
        `serviceaccounts/token`, `targets.solar.opendefense.cloud/status`."""
        qualified = f"{self.resource}.{self.group}" if self.group else self.resource
        return f"{qualified}/{self.subresource}" if self.subresource else qualified

    @property
    def rbac_resource(self) -> str:
        """As RBAC rules write it: `targets`, `targets/status`."""
        return f"{self.resource}/{self.subresource}" if self.subresource else self.resource

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_version_path(self) -> str:
        """Where its group-version is served: `/apis/<group>/<version>`, `/api/v1`."""
        return f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"


@dataclass(frozen=True)
class Impersonation:
    """The Impersonate-* headers of one request."""

    user: str
    groups: tuple[str, ...] = ()
    uid: str | None = None
    extra: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class RawRequest:
    """One request as a client library would send it; writes are sent as dry runs.

    `name` on list and watch narrows them to one object (`fieldSelector=metadata.name=...`), which
    the API server authorizes as a request for that name.
    """

    verb: str
    resource: ServedResource
    namespace: str | None = None
    name: str | None = None
    impersonate: Impersonation | None = None
    body: Obj | None = None  # create and update; by default a minimal object of the kind

    def describe(self) -> str:
        where = f"in {self.namespace}" if self.namespace else "cluster-wide"
        name = f' "{self.name}"' if self.name else ""
        return f"{self.verb} {self.resource.name}{name} {where}"


@dataclass(frozen=True)
class Answer:
    status: int
    reason: str
    message: str

    @property
    def denied(self) -> bool:
        """Refused by the authorizer: the request never reached the resource."""
        return self.status == 403 and _AUTHORIZER_DENIAL.search(self.message) is not None

    def __str__(self) -> str:
        return f"{self.status} {self.reason}"


def default_body(request: RawRequest) -> Obj:
    """A minimal object for a create or update: authorization does not read it."""
    resource = request.resource
    meta: Obj = {"name": request.name or "conformance-probe"}
    if request.namespace:
        meta["namespace"] = request.namespace
    return {
        "apiVersion": resource.body_api_version or resource.api_version,
        "kind": resource.kind,
        "metadata": meta,
    }


# --- what the API server says a credential may do ------------------------------------------------
@dataclass(frozen=True, order=True)
class Grant:
    """One verb on one resource (and name) that a rule allows; `*` stays as it was written."""

    verb: str
    group: str
    resource: str  # with its subresource, as RBAC writes it: "targetreports/status"
    name: str = ""  # "" = any name

    def __str__(self) -> str:
        resource = f"{self.resource}.{self.group}" if self.group else self.resource
        name = f' "{self.name}"' if self.name else ""
        return f"{self.verb} {resource}{name}"


@dataclass(frozen=True, order=True)
class PathGrant:
    verb: str
    path: str

    def __str__(self) -> str:
        return f"{self.verb} {self.path}"


@dataclass(frozen=True)
class RulesReview:
    """A SelfSubjectRulesReview (`kubectl auth can-i --list`), flattened into single grants."""

    resources: frozenset[Grant]
    paths: frozenset[PathGrant]
    incomplete: bool = False
    evaluation_error: str = ""


def grants_of(rule: Obj) -> set[Grant]:
    """A resource rule (of a Role or of a rules review) as single grants."""
    names = rule.get("resourceNames") or [""]
    return {
        Grant(verb, group, resource, name)
        for verb in rule.get("verbs") or []
        for group in rule.get("apiGroups") or []
        for resource in rule.get("resources") or []
        for name in names
    }


def path_grants_of(rule: Obj) -> set[PathGrant]:
    return {
        PathGrant(verb, path)
        for verb in rule.get("verbs") or []
        for path in rule.get("nonResourceURLs") or []
    }


def rules_review(status: Obj) -> RulesReview:
    """The status of a SelfSubjectRulesReview as the API server returned it."""
    resources: set[Grant] = set()
    for rule in status.get("resourceRules") or []:
        resources |= grants_of(rule)
    paths: set[PathGrant] = set()
    for rule in status.get("nonResourceRules") or []:
        paths |= path_grants_of(rule)
    return RulesReview(
        frozenset(resources),
        frozenset(paths),
        bool(status.get("incomplete")),
        str(status.get("evaluationError") or ""),
    )


def access_review_body(request: RawRequest) -> Obj:
    """A SelfSubjectAccessReview asking whether `request` would be allowed."""
    attributes: Obj = {
        "verb": request.verb,
        "group": request.resource.group,
        "resource": request.resource.resource,
    }
    if request.resource.subresource:
        attributes["subresource"] = request.resource.subresource
    if request.namespace:
        attributes["namespace"] = request.namespace
    if request.name:
        attributes["name"] = request.name
    return {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": attributes},
    }


def merged(groups: Iterable[frozenset[Grant]]) -> frozenset[Grant]:
    result: set[Grant] = set()
    for group in groups:
        result |= group
    return frozenset(result)
