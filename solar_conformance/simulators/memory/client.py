"""A `ClusterAPI` bound to one credential of the in-memory API server
(solar_conformance/simulators/memory/cluster.py): every call authenticated, authorized, recorded
in the request log, and cut off when the network is."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

from solar_conformance.core.api import ApiError, IssuedToken, Obj, kind_of, merge_patch
from solar_conformance.core.probing import Answer, RawRequest, RulesReview, ServedResource
from solar_conformance.core.rbac import Request, User
from solar_conformance.simulators.memory import attempts
from solar_conformance.simulators.memory.discovery import find_kind
from solar_conformance.simulators.memory.objects import clone

if TYPE_CHECKING:
    from solar_conformance.simulators.memory.cluster import InMemoryCluster

_T = TypeVar("_T")


class InMemoryClient:
    """A `ClusterAPI` bound to one credential of an `InMemoryCluster`."""

    def __init__(
        self, cluster: InMemoryCluster, user: User | None, token: str | None, field_manager: str
    ) -> None:
        self._cluster = cluster
        self._user = user
        self._token = token
        self.field_manager = field_manager
        self.gate: Callable[[], None] | None = None  # raises `Unreachable` when the network is cut

    def __repr__(self) -> str:
        who = self._user.name if self._user else "<token>"
        return f"InMemoryClient({self._cluster.name}, {who})"

    def _who(self) -> User:
        if self.gate is not None:
            self.gate()
        return self._user or self._cluster.authenticate(self._token or "")

    def _call(self, request: Request, kind: str, action: Callable[[], _T]) -> _T:
        user = self._who()
        try:
            self._cluster.authorize(user, request)
            result = action()
        except ApiError as error:
            self._cluster.record(user, request, kind, error.status)
            raise
        self._cluster.record(user, request, kind, 200)
        return result

    @staticmethod
    def _request(
        verb: str,
        kind: str,
        namespace: str | None,
        name: str | None,
        subresource: str | None = None,
    ) -> Request:
        k = kind_of(kind)
        return Request(
            verb, k.group, k.plural, namespace if k.namespaced else None, name, subresource
        )

    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj:
        return self._call(
            self._request("get", kind, namespace, name),
            kind,
            lambda: self._cluster.copy_of(kind, namespace, name),
        )

    def list(
        self, kind: str, namespace: str | None = None, labels: dict[str, str] | None = None
    ) -> list[Obj]:
        return self._call(
            self._request("list", kind, namespace, None),
            kind,
            lambda: self._cluster.objects(kind, namespace, labels),
        )

    def create(self, obj: Obj) -> Obj:
        kind = obj.get("kind", "")
        meta = obj.get("metadata", {})
        return self._call(
            self._request("create", kind, meta.get("namespace"), None),
            kind,
            lambda: self._cluster.store_create(obj, self.field_manager),
        )

    def update(self, obj: Obj) -> Obj:
        meta = obj.get("metadata", {})
        return self._call(
            self._request("update", obj["kind"], meta.get("namespace"), meta.get("name")),
            obj["kind"],
            lambda: self._cluster.store_replace(obj, self.field_manager, status_only=False),
        )

    def update_status(self, obj: Obj) -> Obj:
        meta = obj.get("metadata", {})
        return self._call(
            self._request("update", obj["kind"], meta.get("namespace"), meta.get("name"), "status"),
            obj["kind"],
            lambda: self._cluster.store_replace(obj, self.field_manager, status_only=True),
        )

    def patch(self, kind: str, name: str, namespace: str | None, patch: Obj) -> Obj:
        def apply() -> Obj:
            current = self._cluster.lookup(kind, namespace, name)
            patched = merge_patch(clone(current), patch)
            if "resourceVersion" not in patch.get("metadata", {}):
                patched["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
            return self._cluster.store_replace(patched, self.field_manager, status_only=False)

        return self._call(self._request("patch", kind, namespace, name), kind, apply)

    def delete(self, kind: str, name: str, namespace: str | None = None) -> None:
        self._call(
            self._request("delete", kind, namespace, name),
            kind,
            lambda: self._cluster.store_delete(kind, namespace, name),
        )

    def create_token(
        self,
        namespace: str,
        service_account: str,
        *,
        expiration_seconds: int,
        bound_secret: tuple[str, str] | None = None,
        audiences: tuple[str, ...] = (),
    ) -> IssuedToken:
        return self._call(
            self._request("create", "ServiceAccount", namespace, service_account, "token"),
            "ServiceAccount",
            lambda: self._cluster.mint(
                namespace, service_account, expiration_seconds, bound_secret, audiences
            ),
        )

    # --- what the credential may do (the ProbeAPI of solar_conformance/core/api.py; solar_conformance/simulators/memory/attempts.py)
    def discover(self) -> builtins.list[ServedResource]:
        return attempts.discover(self._cluster, self._who())

    def attempt(self, requests: Sequence[RawRequest]) -> builtins.list[Answer]:
        return attempts.attempt_all(self._cluster, self._who, requests)

    def list_served(self, resource: ServedResource) -> builtins.list[Obj]:
        kind = find_kind(resource)
        if kind is None or resource.subresource or "list" not in resource.verbs:
            raise ApiError(405, "MethodNotAllowed", f"{resource.name} cannot be listed")
        return self.list(kind.kind)

    def review_rules(self, namespace: str) -> RulesReview:
        return attempts.review_rules(self._cluster, self._who(), namespace)

    def review_access(self, request: RawRequest) -> bool:
        return attempts.review_access(self._cluster, self._who(), request)
