"""An in-memory Kubernetes API server: object store, RBAC, bound ServiceAccount tokens, watch.

It models what the verdicts of the scenarios depend on, as measured on kube-apiserver 1.34:
RBAC by resourceName, TokenRequest bound to a Secret, a token that stays valid for up to 10 s
after its Secret is deleted (the authentication cache), resourceVersion conflicts, the status
subresource, owner-reference garbage collection, managedFields per field manager, admission
that can deny a request (as a ValidatingAdmissionPolicy does), and a request log to assert on.
"""

from __future__ import annotations

import itertools
import re
import uuid
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta
from typing import NamedTuple, TypeVar

from solar_conformance.core.api import (
    KINDS,
    ApiError,
    IssuedToken,
    Obj,
    kind_of,
    new_object,
    not_found,
)
from solar_conformance.core.clock import Clock, utc
from solar_conformance.core.rbac import SYSTEM_MASTERS, Request, User, allowed
from solar_conformance.simulators.memory import reviews
from solar_conformance.simulators.memory.client import InMemoryClient
from solar_conformance.simulators.memory.objects import (
    SERVER_OWNED,
    clone,
    fold_string_data,
    key_of,
    record_fields,
    spec_of,
)
from solar_conformance.simulators.memory.store import Store
from solar_conformance.simulators.memory.tokens import AUTH_CACHE_TTL, TokenClaims, TokenIssuer

_T = TypeVar("_T")
ADMIN = User("kubernetes-admin", (SYSTEM_MASTERS, "system:authenticated"))
AdmissionHook = Callable[[User, Request], str | None]
WatchCallback = Callable[[str, Obj], None]
Key = tuple[str, str | None, str]

_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_PATH_SEGMENT_NAMES = {"Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"}


class RequestRecord(NamedTuple):
    """One request as the API server answered it. A tuple: a busy sim logs a hundred requests
    per Target, and a frozen dataclass costs a dozen attribute sets to make."""

    at: datetime
    user: str
    verb: str
    kind: str
    namespace: str | None
    name: str | None
    subresource: str | None
    status: int
    group: str = ""
    resource: str = ""
    credential_id: str | None = None  # the token's `JTI=<jti>`, as kube-apiserver audits it
    dry_run: bool = False


_BOOTSTRAP_STORED: list[Obj] | None = None
# The namespaces kube-apiserver makes at start: charts and clients name `default` without
# creating it.
SYSTEM_NAMESPACES = ("default", "kube-node-lease", "kube-public", "kube-system")


class InMemoryCluster:
    def __init__(self, name: str, clock: Clock) -> None:
        self.name = name
        self.clock = clock
        self.issuer = TokenIssuer(f"https://{name}.sim.invalid")
        self.admission: list[AdmissionHook] = []
        self.requests: list[RequestRecord] = []
        self._objects = Store()
        self._versions = itertools.count(1)
        self._auth_cache: dict[str, tuple[User, datetime]] = {}
        self._watchers: list[WatchCallback] = []
        self._bootstrap()

    def _bootstrap(self) -> None:
        """kube-apiserver's system namespaces and RBAC bootstrap policy. Stored once per process and copied with
        fresh uids and versions afterwards: a sim with thousands of target clusters starts
        each of them at the cost of a copy."""
        global _BOOTSTRAP_STORED
        if _BOOTSTRAP_STORED is None:
            _BOOTSTRAP_STORED = [
                self.store_create(obj, "kube-apiserver")
                for obj in [
                    *(new_object("Namespace", name) for name in SYSTEM_NAMESPACES),
                    *reviews.bootstrap_policy(),
                ]
            ]
            return
        now = utc(self.clock.now())
        for template in _BOOTSTRAP_STORED:
            obj = clone(template)
            obj["metadata"].update(
                uid=str(uuid.uuid4()),
                resourceVersion=str(next(self._versions)),
                creationTimestamp=now,
            )
            for entry in obj["metadata"].get("managedFields", []):
                entry["time"] = now
            self._objects[key_of(obj)] = obj

    # --- clients -----------------------------------------------------------------------------
    def admin(self, field_manager: str = "kubectl") -> InMemoryClient:
        return InMemoryClient(self, ADMIN, None, field_manager)

    def with_token(self, token: str, field_manager: str = "python") -> InMemoryClient:
        return InMemoryClient(self, None, token, field_manager)

    def watch(self, callback: WatchCallback) -> None:
        """`callback(event, obj)` after every change. `obj` is the stored object itself, not a
        copy (a busy sim makes thousands of events): read it, never change it."""
        self._watchers.append(callback)

    # --- authentication and authorization -----------------------------------------------------
    def authenticate(self, token: str) -> User:
        now = self.clock.now()
        # Like kube-apiserver's token cache, a recent success is answered from the cache, even
        # for a token that expired or lost its Secret since: the page's "within the cache window".
        cached = self._auth_cache.get(token)
        if cached is not None and now - cached[1] < AUTH_CACHE_TTL:
            return cached[0]
        claims = self.issuer.verify(token, now)
        if claims is None:
            self._auth_cache.pop(token, None)
            raise ApiError(401, "Unauthorized", "Unauthorized")
        if not self._bound_objects_exist(claims):
            self._auth_cache.pop(token, None)
            raise ApiError(401, "Unauthorized", "Unauthorized")
        user = replace(
            User.service_account(claims.namespace, claims.service_account),
            credential_id=f"JTI={claims.jti}",
        )
        self._auth_cache[token] = (user, now)
        return user

    def _bound_objects_exist(self, claims: TokenClaims) -> bool:
        account = self._objects.get(("ServiceAccount", claims.namespace, claims.service_account))
        if account is None or account["metadata"]["uid"] != claims.service_account_uid:
            return False
        if claims.secret is None:
            return True
        secret = self._objects.get(("Secret", claims.namespace, claims.secret[0]))
        return secret is not None and secret["metadata"]["uid"] == claims.secret[1]

    def authorize(self, user: User, request: Request) -> None:
        permitted = SYSTEM_MASTERS in user.groups or allowed(user, request, *self._rbac_for(user))
        if not permitted:
            target = f"{request.resource}.{request.group}" if request.group else request.resource
            name = f' "{request.name}"' if request.name else ""
            raise ApiError(
                403,
                "Forbidden",
                f'{target}{name} is forbidden: User "{user.name}" {request.describe()}',
            )
        for hook in self.admission:
            denial = hook(user, request)
            if denial is not None:
                raise ApiError(403, "Forbidden", denial)

    def record(
        self, user: User, request: Request, kind: str, status: int, *, dry_run: bool = False
    ) -> None:
        self.requests.append(
            RequestRecord(
                self.clock.now(),
                user.name,
                request.verb,
                kind,
                request.namespace,
                request.name,
                request.subresource,
                status,
                request.group,
                request.resource,
                user.credential_id,
                dry_run,
            )
        )

    def _rbac_for(self, user: User) -> tuple[list[Obj], list[Obj], list[Obj], list[Obj]]:
        """Only the bindings that name the user (or one of its groups) and the roles they
        reference: what RBAC would find, without visiting every Role of a busy namespace."""
        bindings = self._objects.bound_to(user)
        role_bindings = [b for b in bindings if b["kind"] == "RoleBinding"]
        roles = [
            role
            for b in role_bindings
            if b["roleRef"].get("kind") == "Role"
            and (
                role := self._objects.get(
                    ("Role", b["metadata"]["namespace"], b["roleRef"]["name"])
                )
            )
        ]
        return (
            roles,
            role_bindings,
            self._objects.of_kind("ClusterRole"),
            [b for b in bindings if b["kind"] == "ClusterRoleBinding"],
        )

    # --- store ---------------------------------------------------------------------------------
    def objects(
        self, kind: str, namespace: str | None, labels: dict[str, str] | None = None
    ) -> list[Obj]:
        """Copies of the matching objects, in key order; only the matching ones are visited."""
        return [
            self._objects.copy(obj) for obj in self._objects.select(kind, namespace, labels or {})
        ]

    def lookup(self, kind: str, namespace: str | None, name: str) -> Obj:
        obj = self._objects.get((kind, namespace if kind_of(kind).namespaced else None, name))
        if obj is None:
            raise not_found(kind, name)
        return obj

    def copy_of(self, kind: str, namespace: str | None, name: str) -> Obj:
        """A copy of a stored object, for a reader."""
        return self._objects.copy(self.lookup(kind, namespace, name))

    def _notify(self, event: str, obj: Obj) -> None:
        for callback in list(self._watchers):
            callback(event, obj)

    def store_create(self, obj: Obj, manager: str) -> Obj:
        kind = kind_of(obj.get("kind", ""))
        meta = obj.setdefault("metadata", {})
        name = meta.get("name", "")
        namespace = meta.get("namespace") if kind.namespaced else None
        _validate_name(kind.kind, name)
        if kind.namespaced:
            if not namespace:
                raise ApiError(400, "BadRequest", "the namespace of the object is not set")
            if ("Namespace", None, namespace) not in self._objects:
                raise ApiError(404, "NotFound", f'namespaces "{namespace}" not found')
        key = (kind.kind, namespace, name)
        existing = self._objects.get(key)
        if existing is not None:
            being_deleted = "deletionTimestamp" in existing["metadata"]
            raise ApiError(
                409,
                "AlreadyExists",
                ("object is being deleted: " if being_deleted else "")
                + f'{kind.plural} "{name}" already exists',
            )
        stored = fold_string_data(clone(obj))
        for field in SERVER_OWNED:
            stored["metadata"].pop(field, None)
        stored["apiVersion"] = kind.api_version
        if kind.has_status and kind.kind != "Namespace":
            stored.pop("status", None)
        stored["metadata"].update(
            uid=str(uuid.uuid4()),
            resourceVersion=str(next(self._versions)),
            creationTimestamp=utc(self.clock.now()),
            generation=1,
        )
        record_fields(stored, {}, manager, "Update", None, self.clock.now())
        self._objects[key] = stored
        self._notify("ADDED", stored)
        return self._objects.copy(stored)

    def store_replace(self, obj: Obj, manager: str, *, status_only: bool) -> Obj:
        kind = kind_of(obj.get("kind", ""))
        meta = obj.get("metadata", {})
        current = self.lookup(kind.kind, meta.get("namespace"), meta.get("name", ""))
        wanted_version = meta.get("resourceVersion")
        if wanted_version and wanted_version != current["metadata"]["resourceVersion"]:
            raise ApiError(
                409,
                "Conflict",
                f'Operation cannot be fulfilled on {kind.plural} "{meta.get("name")}": the object '
                "has been modified; please apply your changes to the latest version and try again",
            )
        # A stored object is never changed in place (each write stores a new one, and readers
        # get copies), so a new version shares what it does not change with the old one.
        if status_only:
            updated = {
                **current,
                "metadata": dict(current["metadata"]),
                "status": clone(obj.get("status", {})),
            }
        else:
            updated = fold_string_data(clone(obj))
            updated["apiVersion"] = kind.api_version
            for field in SERVER_OWNED:
                updated["metadata"][field] = current["metadata"].get(field)
            if kind.has_status:
                updated.pop("status", None)
                if "status" in current:
                    updated["status"] = current["status"]
            if spec_of(updated) != spec_of(current):
                updated["metadata"]["generation"] = current["metadata"]["generation"] + 1
        if updated == current:
            return self._objects.copy(current)
        updated["metadata"]["resourceVersion"] = str(next(self._versions))
        subresource = "status" if status_only else None
        record_fields(updated, current, manager, "Update", subresource, self.clock.now())
        self._objects[key_of(updated)] = updated
        self._notify("MODIFIED", updated)
        meta = updated["metadata"]
        if meta.get("deletionTimestamp") and not meta.get("finalizers"):
            self.store_remove(updated)  # the last finalizer of an object being deleted is gone
        return self._objects.copy(updated)

    def store_delete(self, kind: str, namespace: str | None, name: str) -> None:
        """As the API server deletes: an object with finalizers is only marked (its
        deletionTimestamp set) until whoever put them there removes them."""
        obj = self.lookup(kind, namespace, name)
        meta = obj["metadata"]
        if not meta.get("finalizers"):
            self.store_remove(obj)
        elif not meta.get("deletionTimestamp"):
            marked = {**obj, "metadata": {**meta, "deletionTimestamp": utc(self.clock.now())}}
            marked["metadata"]["resourceVersion"] = str(next(self._versions))
            self._objects[key_of(marked)] = marked
            self._notify("MODIFIED", marked)

    def store_remove(self, obj: Obj) -> None:
        """Gone at once, with what it owns and, for a Namespace, what it holds (their finalizers
        are not waited for)."""
        kind = obj["kind"]
        name = obj["metadata"]["name"]
        del self._objects[key_of(obj)]
        self._notify("DELETED", obj)
        uid = obj["metadata"]["uid"]
        dependents = self._objects.owned_by(uid)
        if kind == "Namespace":
            dependents += self._objects.in_namespace(name)
        for dep in dependents:
            if key_of(dep) in self._objects:
                meta = dep["metadata"]
                self.store_remove(self.lookup(dep["kind"], meta.get("namespace"), meta["name"]))

    def mint(
        self,
        namespace: str,
        account: str,
        expiration_seconds: int,
        bound: tuple[str, str] | None,
        audiences: tuple[str, ...] = (),
    ) -> IssuedToken:
        if expiration_seconds < 600:
            raise ApiError(
                422,
                "Invalid",
                "spec.expirationSeconds: may not specify a duration less than 10 minutes",
            )
        sa = self.lookup("ServiceAccount", namespace, account)
        if bound is not None:
            secret = self.lookup("Secret", namespace, bound[0])
            if secret["metadata"]["uid"] != bound[1]:
                raise ApiError(
                    409,
                    "Conflict",
                    f"the UID in the bound object reference ({bound[1]}) does not match the UID "
                    f"in record ({secret['metadata']['uid']}). The object might have been deleted "
                    "and then recreated",
                )
        expires_at = self.clock.now() + timedelta(seconds=expiration_seconds)
        claims = TokenClaims(
            namespace, account, sa["metadata"]["uid"], bound, expires_at, audiences=audiences
        )
        return IssuedToken(self.issuer.issue(claims, self.clock.now()), expires_at)


def _validate_name(kind: str, name: str) -> None:
    path_segment = name and name not in (".", "..") and not set(name) & {"/", "%"}
    if kind in _PATH_SEGMENT_NAMES and path_segment:  # RBAC names such as "system:basic-user"
        return
    pattern, limit = (_LABEL, 63) if kind == "Namespace" else (_NAME, 253)
    if not name or len(name) > limit or not pattern.match(name):
        raise ApiError(
            422,
            "Invalid",
            f'{KINDS[kind].kind} "{name}" is invalid: metadata.name: Invalid value: "{name}": '
            "a lowercase RFC 1123 name must consist of lower case alphanumeric characters, '-' "
            f"or '.', and must start and end with an alphanumeric character (at most {limit})",
        )
