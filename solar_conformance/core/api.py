"""The small API every actor speaks: Kubernetes-shaped objects, kinds, errors and a cluster client.

The in-memory cluster of the sim backend and the adapter over the kubernetes client of the real
backends both implement `ClusterAPI`, so the reference components and the steps never know which
one they talk to.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Protocol

from solar_conformance.core.probing import Answer, RawRequest, RulesReview, ServedResource

Obj = dict[str, Any]

SOLAR_GROUP = "solar.opendefense.cloud"
SOLAR_VERSION = "v1alpha1"


@dataclass(frozen=True)
class Kind:
    kind: str
    group: str
    version: str
    plural: str
    namespaced: bool = True
    has_status: bool = False

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


def _solar(kind: str, plural: str, has_status: bool = True) -> Kind:
    return Kind(kind, SOLAR_GROUP, SOLAR_VERSION, plural, True, has_status)


KINDS: dict[str, Kind] = {
    k.kind: k
    for k in (
        _solar("Target", "targets"),
        _solar("TargetReport", "targetreports"),
        _solar("Release", "releases"),
        _solar("Profile", "profiles"),
        _solar("ReleaseBinding", "releasebindings"),
        _solar("Registry", "registries"),
        _solar("RegistryBinding", "registrybindings"),
        Kind("Namespace", "", "v1", "namespaces", namespaced=False, has_status=True),
        Kind("ServiceAccount", "", "v1", "serviceaccounts"),
        Kind("Secret", "", "v1", "secrets"),
        Kind("ConfigMap", "", "v1", "configmaps"),
        Kind("Event", "", "v1", "events"),
        Kind("Pod", "", "v1", "pods", has_status=True),
        Kind("Service", "", "v1", "services", has_status=True),
        Kind("Deployment", "apps", "v1", "deployments", has_status=True),
        Kind("Role", "rbac.authorization.k8s.io", "v1", "roles"),
        Kind("RoleBinding", "rbac.authorization.k8s.io", "v1", "rolebindings"),
        Kind("ClusterRole", "rbac.authorization.k8s.io", "v1", "clusterroles", namespaced=False),
        Kind(
            "ClusterRoleBinding",
            "rbac.authorization.k8s.io",
            "v1",
            "clusterrolebindings",
            namespaced=False,
        ),
        Kind(
            "APIService",
            "apiregistration.k8s.io",
            "v1",
            "apiservices",
            namespaced=False,
            has_status=True,
        ),
        Kind(
            "CustomResourceDefinition",
            "apiextensions.k8s.io",
            "v1",
            "customresourcedefinitions",
            namespaced=False,
            has_status=True,
        ),
        Kind(
            "ValidatingAdmissionPolicy",
            "admissionregistration.k8s.io",
            "v1",
            "validatingadmissionpolicies",
            namespaced=False,
            has_status=True,
        ),
        Kind(
            "ValidatingAdmissionPolicyBinding",
            "admissionregistration.k8s.io",
            "v1",
            "validatingadmissionpolicybindings",
            namespaced=False,
        ),
        Kind("OCIRepository", "source.toolkit.fluxcd.io", "v1", "ocirepositories", True, True),
        Kind("HelmRelease", "helm.toolkit.fluxcd.io", "v2", "helmreleases", True, True),
    )
}


TARGETREPORT_VERSION_ENV = "SOLAR_TARGETREPORT_VERSION"


def serve_at(kind: str, version: str) -> Kind:
    """Address a kind at another version of its group from now on, in this process; returns
    the kind as it was. Beside a SolAr whose aggregated API takes the group's version but does
    not serve the kind, the harness serves it at a version of its own."""
    before = kind_of(kind)
    KINDS[kind] = replace(before, version=version)
    return before


def serve_kinds(kinds: Sequence[Kind]) -> Callable[[], None]:
    """Address these kinds from now on, in this process, besides those every implementation
    serves (upstream's catalog kinds, which the reference does not model); returns what forgets
    the ones that were new."""
    added = [kind.kind for kind in kinds if kind.kind not in KINDS]
    for kind in kinds:
        KINDS.setdefault(kind.kind, kind)

    def forget() -> None:
        for name in added:
            KINDS.pop(name, None)

    return forget


def rest_path(kind: Kind, namespace: str | None, name: str | None = None, sub: str = "") -> str:
    """The REST path of a kind's collection, or of one object and its subresource."""
    root = f"/apis/{kind.group}/{kind.version}" if kind.group else f"/api/{kind.version}"
    if kind.namespaced:
        if not namespace:
            raise ValueError(f"{kind.kind} needs a namespace")
        root += f"/namespaces/{namespace}"
    path = f"{root}/{kind.plural}"
    if name:
        path += f"/{name}"
    if sub:
        path += f"/{sub}"
    return path


def kind_of(name: str) -> Kind:
    try:
        return KINDS[name]
    except KeyError:
        known = ", ".join(sorted(KINDS))
        raise ValueError(f"unknown kind {name!r}; known kinds: {known}") from None


class ApiError(Exception):
    """An answer of an API server that is not a success, shaped like a Kubernetes Status."""

    def __init__(self, status: int, reason: str, message: str) -> None:
        super().__init__(f"{status} {reason}: {message}")
        self.status = status
        self.reason = reason
        self.message = message


def not_found(kind: str, name: str) -> ApiError:
    return ApiError(404, "NotFound", f'{KINDS[kind].plural} "{name}" not found')


class Unreachable(ApiError):
    """No connection could be made (refused, unresolvable host, network partition)."""

    def __init__(self, address: str) -> None:
        super().__init__(503, "Unreachable", f"dial {address}: connection refused")


@dataclass(frozen=True)
class IssuedToken:
    token: str
    expires_at: datetime

    def __repr__(self) -> str:  # a token must never reach a log through repr()
        return f"IssuedToken(token=<redacted>, expires_at={self.expires_at.isoformat()})"


class ClusterAPI(Protocol):
    """One authenticated client of one API server."""

    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj: ...

    def list(
        self,
        kind: str,
        namespace: str | None = None,
        labels: dict[str, str] | None = None,
    ) -> list[Obj]: ...

    def create(self, obj: Obj) -> Obj: ...

    def update(self, obj: Obj) -> Obj: ...

    def update_status(self, obj: Obj) -> Obj: ...

    def patch(self, kind: str, name: str, namespace: str | None, patch: Obj) -> Obj: ...

    def delete(self, kind: str, name: str, namespace: str | None = None) -> None: ...

    def create_token(
        self,
        namespace: str,
        service_account: str,
        *,
        expiration_seconds: int,
        bound_secret: tuple[str, str] | None = None,
        audiences: tuple[str, ...] = (),
    ) -> IssuedToken:
        """A TokenRequest; no `audiences`: the API server's own (those it accepts)."""


class InventoryAPI(ClusterAPI, Protocol):
    """An administrator's client that lists whatever its API server serves (the leak scans)."""

    def discover(self) -> list[ServedResource]:
        """Every resource and subresource the API server serves (as ProbeAPI.discover)."""

    def list_served(self, resource: ServedResource) -> list[Obj]:
        """Every object of a served resource, in all namespaces; ApiError where it cannot be
        listed."""


class ProbeAPI(ClusterAPI, Protocol):
    """A client that can also ask what its credential may do (the scope check; solar_conformance/core/probing.py)."""

    def discover(self) -> list[ServedResource]:
        """Every resource and subresource the API server serves, one entry per group and resource
        (the group's preferred version where it serves several)."""

    def attempt(self, requests: Sequence[RawRequest]) -> list[Answer]:
        """Send each request (writes as dry runs, watches closed after the status line); the
        answers in the same order. Nothing is changed."""

    def review_rules(self, namespace: str) -> RulesReview:
        """A SelfSubjectRulesReview in `namespace`."""

    def review_access(self, request: RawRequest) -> bool:
        """A SelfSubjectAccessReview: would `request` be allowed?"""


def new_object(
    kind: str,
    name: str,
    namespace: str | None = None,
    *,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    owner: Obj | None = None,
    **fields: Any,
) -> Obj:
    """A fresh object of a known kind; `fields` become top-level keys (spec, data, rules, ...)."""
    k = kind_of(kind)
    meta: Obj = {"name": name}
    if k.namespaced:
        if namespace is None:
            raise ValueError(f"{kind} {name!r} needs a namespace")
        meta["namespace"] = namespace
    if labels:
        meta["labels"] = dict(labels)
    if annotations:
        meta["annotations"] = dict(annotations)
    if owner is not None:
        meta["ownerReferences"] = [owner_reference(owner)]
    return {"apiVersion": k.api_version, "kind": kind, "metadata": meta, **fields}


def owner_reference(owner: Obj) -> Obj:
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def is_owned_by(obj: Obj, owner: Obj) -> bool:
    uid = owner["metadata"].get("uid")
    return any(ref.get("uid") == uid for ref in obj["metadata"].get("ownerReferences", []))


def labels_of(obj: Obj) -> dict[str, str]:
    return dict(obj.get("metadata", {}).get("labels") or {})


def annotations_of(obj: Obj) -> dict[str, str]:
    return dict(obj.get("metadata", {}).get("annotations") or {})


def find_condition(obj: Obj, condition_type: str) -> Obj | None:
    for condition in obj.get("status", {}).get("conditions", []) or []:
        if condition.get("type") == condition_type:
            return dict(condition)
    return None


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch, as `kubectl patch --type=merge` applies it."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def ref(obj: Obj) -> str:
    """`Kind namespace/name` for messages."""
    meta = obj.get("metadata", {})
    ns = meta.get("namespace")
    where = f"{ns}/{meta.get('name')}" if ns else str(meta.get("name"))
    return f"{obj.get('kind')} {where}"
