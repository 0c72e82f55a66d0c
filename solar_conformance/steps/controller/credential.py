"""solar-controller-manager creates the credential: a ServiceAccount, Role, RoleBinding, an empty
TargetReport, a token in a Secret, all the Target's; the token held nowhere else."""

from __future__ import annotations

from typing import Any

from pytest_bdd import parsers, then

from solar_conformance.core.api import SOLAR_GROUP, ApiError, Obj, is_owned_by
from solar_conformance.core.landscape import Landscape
from solar_conformance.core.rbac import Request, User, allowed
from solar_conformance.core.waiting import Waiter
from solar_conformance.page.holders import Inventory, describe, holds_token, how_held, remember
from solar_conformance.page.lookup import (
    ObjectRef,
    TokenFacts,
    credential_objects,
    target_report,
    token_in,
    token_secret,
)
from solar_conformance.plugin.actors import You
from solar_conformance.plugin.names import Names
from solar_conformance.steps.controller._credential import missing_parts, token_probe


def _issued_token(landscape: Landscape, namespace: str, target: str) -> str:
    secret = token_secret(landscape, namespace, target)
    token = token_in(landscape, secret) if secret is not None else None
    assert token, f"{target} has no token in the Secret its condition names"
    return token


@then(
    parsers.parse(
        'the token authenticates as a ServiceAccount that a RoleBinding binds to a Role for "{target}"'
    )
)
def access_objects(landscape: Landscape, you: You, target: str) -> None:
    """Found through what the cluster stores: the token's subject, the bindings naming it."""
    namespace = you.namespace_of(target)
    facts = TokenFacts.read(_issued_token(landscape, namespace, target))
    account_namespace, account = facts.service_account
    assert account_namespace == namespace, f"the token is for {facts.subject}"
    _stored(landscape, ("ServiceAccount", account, namespace))
    objects = credential_objects(landscape, _issued_token(landscape, namespace, target), target)
    bindings = [_stored(landscape, ref) for ref in objects if ref[0] == "RoleBinding"]
    roles = [_stored(landscape, ref) for ref in objects if ref[0] == "Role"]
    cluster_roles = [_stored(landscape, ref) for ref in objects if ref[0] == "ClusterRole"]
    assert bindings and (roles or cluster_roles), (
        f"no RoleBinding binds {facts.subject} to a Role: {objects}"
    )
    request = Request("get", SOLAR_GROUP, "targets", namespace, target)
    user = User.service_account(namespace, account)
    assert allowed(user, request, roles, bindings, cluster_roles, []), (
        f"no Role bound to {facts.subject} grants get on the Target {target}"
    )


def _stored(landscape: Landscape, ref: ObjectRef) -> Obj:
    """An object of a credential as the SolAr API server stores it (its absence is a verdict)."""
    kind, name, namespace = ref
    try:
        return landscape.solar.get(kind, name, namespace)
    except ApiError as error:
        if error.status != 404:
            raise
        where = f"{namespace}/{name}" if namespace else name
        raise AssertionError(f"the credential names {kind} {where}, which does not exist") from None


@then(
    parsers.parse(
        'the ServiceAccount, Role, RoleBinding, TargetReport and token Secret of "{target}" are '
        "owned by the Target"
    )
)
def owned_by_the_target(landscape: Landscape, you: You, target: str) -> None:
    namespace = you.namespace_of(target)
    owner = landscape.solar.get("Target", target, namespace)
    objects = credential_objects(landscape, _issued_token(landscape, namespace, target), target)
    assert missing_parts(objects) == [], (
        f"the credential of {target} lacks {missing_parts(objects)}"
    )
    # A cluster-scoped object cannot be owned by a namespaced one (Kubernetes' garbage collector
    # ignores such a reference): a ClusterRole must go with the Target in other ways, which the
    # deletion scenario checks.
    orphans = [
        f"{kind} {name}"
        for kind, name, ns in objects
        if ns is not None and not is_owned_by(_stored(landscape, (kind, name, ns)), owner)
    ]
    assert orphans == [], f"not owned by the Target {target}: {orphans}"


@then(parsers.parse('solar-controller-manager creates an empty TargetReport "{target}"'))
def empty_report(landscape: Landscape, you: You, waiter: Waiter, target: str) -> None:
    """`kubectl get targetreport <target>`: the page names the TargetReport like the Target."""
    namespace = you.namespace_of(target)

    def probe() -> tuple[bool, Any]:
        return True, target_report(landscape, namespace, target).get("spec", {})

    spec = waiter.until(f"the TargetReport {target}", probe)
    assert not spec.get("lastReportTime"), f"not empty: {spec}"


@then(parsers.parse('solar-controller-manager mints a token for "{target}" into a Secret'))
def token_minted(landscape: Landscape, you: You, waiter: Waiter, target: str) -> None:
    """A ServiceAccount token of the Target's namespace, bound to the Secret that holds it."""
    namespace = you.namespace_of(target)
    waiter.until(
        f"a token for {target} in the Secret the condition names",
        lambda: token_probe(landscape, namespace, target),
    )
    secret = token_secret(landscape, namespace, target)
    assert secret is not None
    facts = TokenFacts.read(_issued_token(landscape, namespace, target))
    account_namespace, account = facts.service_account
    assert account_namespace == namespace, f"the token is for {facts.subject}"
    _stored(landscape, ("ServiceAccount", account, namespace))
    assert facts.bound_secret == secret["metadata"]["name"], (
        f"the token is bound to {facts.bound_secret}, not to its Secret"
    )


@then(parsers.parse('the token of "{target}" is in no other object on the SolAr API server'))
def token_only_in_its_secret(landscape: Landscape, you: You, names: Names, target: str) -> None:
    """Every object of every resource the SolAr API server's discovery serves, read as its
    administrator (the namespaces of other scenarios left out): the Target's current token, as
    it is, base64-encoded, under layers of base64 and gzip, or its signature, which no other
    token shares, in the Secret its condition names and nowhere else: not in an Event, a
    ConfigMap, an annotation, a status."""
    namespace = you.namespace_of(target)
    secret = token_secret(landscape, namespace, target)
    token = token_in(landscape, secret) if secret is not None else None
    assert secret is not None and token, f"{target} has no token, so this check could not fail"
    remember(token)
    home = (secret["metadata"]["namespace"], secret["metadata"]["name"])
    holding: list[str] = []
    seen_home = False
    inventory = Inventory.read(landscape.solar, lambda ns: not names.of_another_scenario(ns))
    for _resource, obj in inventory.objects:
        if not holds_token(obj, token):
            continue
        meta = obj.get("metadata", {})
        if obj.get("kind") == "Secret" and (meta.get("namespace"), meta.get("name")) == home:
            seen_home = True
        else:
            holding.append(f"{describe(obj)} ({how_held(obj, token)})")
    assert seen_home, f"the scan did not find the token of {target} in its own Secret"
    assert holding == [], f"the token of {target} is also held by: {sorted(holding)}"
