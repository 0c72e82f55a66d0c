"""Raw requests to the in-memory API server, answered in kube-apiserver's order: impersonation,
the authorizer, admission, RBAC's escalation check, then the resource itself, as a dry run.

Every write is a dry run here (nothing is stored), watches end at their status line, and the
answer is the status a real API server gives: 403 with the authorizer's message shape, 404 for a
missing object or namespace, 409 for a name that is taken, 405 for a verb the resource lacks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from solar_conformance.core.api import ApiError
from solar_conformance.core.probing import (
    WRITE_VERBS,
    Answer,
    Impersonation,
    RawRequest,
    RulesReview,
    ServedResource,
    default_body,
)
from solar_conformance.core.rbac import Request, User
from solar_conformance.simulators.memory import reviews
from solar_conformance.simulators.memory.discovery import find_kind, served_resources
from solar_conformance.simulators.memory.reviews import denied_message, escalation_denial, may

if TYPE_CHECKING:
    from solar_conformance.simulators.memory.cluster import InMemoryCluster

AUTHENTICATION = "authentication.k8s.io"
_SA_PREFIX = "system:serviceaccount:"


def _served(resource: ServedResource) -> ServedResource | None:
    key = (resource.group, resource.resource, resource.subresource)
    for served in served_resources():
        if (served.group, served.resource, served.subresource) == key:
            return served
    return None


def authorization_request(raw: RawRequest) -> Request:
    resource = raw.resource
    return Request(
        raw.verb,
        resource.group,
        resource.resource,
        raw.namespace,  # cluster-scoped resources only have one in reviews (bind in a namespace)
        raw.name,
        resource.subresource,
    )


def impersonation_checks(who: Impersonation) -> list[Request]:
    if who.user.startswith(_SA_PREFIX):
        namespace, _, name = who.user.removeprefix(_SA_PREFIX).partition(":")
        checks = [Request("impersonate", "", "serviceaccounts", namespace, name)]
    else:
        checks = [Request("impersonate", "", "users", None, who.user)]
    checks += [Request("impersonate", "", "groups", None, group) for group in who.groups]
    if who.uid is not None:
        checks.append(Request("impersonate", AUTHENTICATION, "uids", None, who.uid))
    checks += [
        Request("impersonate", AUTHENTICATION, "userextras", None, value, key)
        for key, value in who.extra
    ]
    return checks


def _impersonated(who: Impersonation) -> User:
    if who.user.startswith(_SA_PREFIX):
        namespace, _, name = who.user.removeprefix(_SA_PREFIX).partition(":")
        account = User.service_account(namespace, name)
        return User(account.name, tuple(dict.fromkeys((*account.groups, *who.groups))))
    return User(who.user, tuple(dict.fromkeys((*who.groups, "system:authenticated"))))


def answer(cluster: InMemoryCluster, user: User, raw: RawRequest) -> Answer:
    """What the API server answers `user`'s request; recorded in the cluster's request log."""
    request = authorization_request(raw)
    kind = raw.resource.kind
    writes = raw.verb in WRITE_VERBS
    try:
        acting = user
        if raw.impersonate is not None:
            for check in impersonation_checks(raw.impersonate):
                if not may(cluster, user, check):
                    raise ApiError(403, "Forbidden", denied_message(user, check))
            acting = _impersonated(raw.impersonate)
        cluster.authorize(acting, request)
        status = _dry_run(cluster, acting, raw, request)
    except ApiError as error:
        cluster.record(user, request, kind, error.status, dry_run=writes)
        return Answer(error.status, error.reason, error.message)
    cluster.record(user, request, kind, status, dry_run=writes)
    return Answer(status, "Created" if status == 201 else "OK", "")


def _dry_run(cluster: InMemoryCluster, user: User, raw: RawRequest, request: Request) -> int:
    served = _served(raw.resource)
    if served is None:
        raise ApiError(404, "NotFound", "the server could not find the requested resource")
    if raw.verb not in served.verbs:
        raise ApiError(405, "MethodNotAllowed", f"the server does not allow {raw.verb} here")
    body = raw.body if raw.body is not None else default_body(raw)
    denial = escalation_denial(cluster, user, request, body)
    if denial is not None:
        raise ApiError(403, "Forbidden", denial)
    kind = find_kind(served)
    if kind is None:  # a review: answered, never stored
        return 201
    namespace = raw.namespace if kind.namespaced else None
    if namespace is not None and raw.verb == "create":
        cluster.lookup("Namespace", None, namespace)
    if raw.verb in ("list", "watch", "deletecollection"):
        return 200
    if raw.verb == "create" and served.subresource is None:
        name = str((body.get("metadata") or {}).get("name", ""))
        try:
            cluster.lookup(kind.kind, namespace, name)
        except ApiError:
            return 201
        raise ApiError(409, "AlreadyExists", f'{kind.plural} "{name}" already exists')
    cluster.lookup(kind.kind, namespace, raw.name or "")
    return 201 if raw.verb == "create" else 200


# --- the ProbeAPI of an in-memory client ---------------------------------------------------------
def discover(cluster: InMemoryCluster, user: User) -> list[ServedResource]:
    """Discovery is allowed to every authenticated user (system:discovery)."""
    del cluster, user
    return served_resources()


def attempt_all(
    cluster: InMemoryCluster, who: Callable[[], User], requests: Sequence[RawRequest]
) -> list[Answer]:
    answers = []
    for request in requests:
        try:
            user = who()  # authenticates each request, as a real client's would be
        except ApiError as error:
            answers.append(Answer(error.status, error.reason, error.message))
            continue
        answers.append(answer(cluster, user, request))
    return answers


def _review(cluster: InMemoryCluster, user: User, resource: str, kind: str) -> None:
    request = Request("create", "authorization.k8s.io", resource, None)
    try:
        cluster.authorize(user, request)
    except ApiError as error:
        cluster.record(user, request, kind, error.status)
        raise
    cluster.record(user, request, kind, 201)


def review_rules(cluster: InMemoryCluster, user: User, namespace: str) -> RulesReview:
    _review(cluster, user, "selfsubjectrulesreviews", "SelfSubjectRulesReview")
    return reviews.review_rules(cluster, user, namespace)


def review_access(cluster: InMemoryCluster, user: User, request: RawRequest) -> bool:
    _review(cluster, user, "selfsubjectaccessreviews", "SelfSubjectAccessReview")
    return may(cluster, user, authorization_request(request))
