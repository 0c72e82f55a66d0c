"""solar-controller-manager: the credential objects, the token, the condition, the bindings."""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta
from typing import Any

from pytest_bdd import given, parsers, then, when

from core.api import SOLAR_GROUP
from core.clock import parse_utc
from core.landscape import Landscape
from core.rbac import Request, User, allowed
from fixtures.page.lookup import (
    TokenFacts,
    agent_release_name,
    bound_releases,
    credential_condition,
    credential_secrets,
    owned_by_target,
    token_in,
    token_secret,
)
from fixtures.plugin.actors import You
from fixtures.plugin.waiting import Waiter
from steps.common import quoted_names


@then(
    parsers.parse(
        'solar-controller-manager creates a ServiceAccount, a Role and a RoleBinding for "{target}", '
        "owned by the Target"
    )
)
def access_objects(landscape: Landscape, you: You, waiter: Waiter, target: str) -> None:
    namespace = you.namespace_of(target)

    def probe() -> tuple[bool, Any]:
        found = {
            kind: [
                o["metadata"]["name"] for o in owned_by_target(landscape, kind, namespace, target)
            ]
            for kind in ("ServiceAccount", "Role", "RoleBinding")
        }
        return all(len(names) == 1 for names in found.values()), found

    waiter.until(f"one ServiceAccount, Role and RoleBinding owned by {target}", probe)
    account = owned_by_target(landscape, "ServiceAccount", namespace, target)[0]
    binding = owned_by_target(landscape, "RoleBinding", namespace, target)[0]
    role = owned_by_target(landscape, "Role", namespace, target)[0]
    assert binding["roleRef"]["name"] == role["metadata"]["name"], binding["roleRef"]
    user = User.service_account(namespace, account["metadata"]["name"])
    request = Request("get", SOLAR_GROUP, "targets", namespace, target)
    assert allowed(user, request, [role], [binding], [], []), (
        "the RoleBinding does not give the ServiceAccount the Role's rules: "
        f"subjects {binding.get('subjects')}"
    )


@then(parsers.parse('solar-controller-manager creates an empty TargetReport "{target}"'))
def empty_report(landscape: Landscape, you: You, waiter: Waiter, target: str) -> None:
    namespace = you.namespace_of(target)

    def probe() -> tuple[bool, Any]:
        reports = owned_by_target(landscape, "TargetReport", namespace, target)
        return len(reports) == 1, [r["metadata"]["name"] for r in reports]

    waiter.until(f"a TargetReport owned by {target}", probe)
    report = landscape.solar.get("TargetReport", target, namespace)
    assert not report.get("spec", {}).get("lastReportTime"), f"not empty: {report.get('spec')}"


def _token_probe(landscape: Landscape, namespace: str, target: str) -> tuple[bool, Any]:
    secret = token_secret(landscape, namespace, target)
    condition = credential_condition(landscape, namespace, target)
    if secret is None:
        return False, {"condition": condition, "secret": None}
    token = token_in(landscape, secret)
    return bool(token), {"condition": condition, "secret": secret["metadata"]["name"]}


@then(parsers.parse('solar-controller-manager mints a token for "{target}" into a Secret'))
def token_minted(landscape: Landscape, you: You, waiter: Waiter, target: str) -> None:
    namespace = you.namespace_of(target)
    waiter.until(
        f"a token for {target} in the Secret the condition names",
        lambda: _token_probe(landscape, namespace, target),
    )
    secret = token_secret(landscape, namespace, target)
    assert secret is not None
    facts = TokenFacts.read(token_in(landscape, secret) or "")
    accounts = [
        a["metadata"]["name"]
        for a in owned_by_target(landscape, "ServiceAccount", namespace, target)
    ]
    assert facts.subject in [f"system:serviceaccount:{namespace}:{a}" for a in accounts], (
        f"the token is not for the Target's ServiceAccount: {facts.subject} vs {accounts}"
    )
    assert facts.bound_secret == secret["metadata"]["name"], (
        f"the token is bound to {facts.bound_secret}, not to its Secret"
    )


@then("the condition message names the token's Secret and its expiry")
def message_names_secret_and_expiry(landscape: Landscape, you: You) -> None:
    for target, namespace in you.namespaces.items():
        condition = credential_condition(landscape, namespace, target) or {}
        message = condition.get("message", "")
        named = landscape.contract.secret_named_in(message)
        assert named is not None, f"the message names no Secret: {message!r}"
        assert landscape.contract.expiry_named_in(message) is not None, (
            f"the message names no expiry: {message!r}"
        )
        assert token_secret(landscape, namespace, target) is not None, (
            f"the Secret the message names does not exist: {named}"
        )


@then(parsers.parse('no token is minted for "{target}"'))
def no_token(landscape: Landscape, you: You, target: str) -> None:
    namespace = you.namespace_of(target)
    holding = [
        s["metadata"]["name"]
        for s in credential_secrets(landscape, namespace, target)
        if token_in(landscape, s)
    ]
    assert holding == [], f"Secrets with a token for {target}: {holding}"


@then(parsers.parse('no token Secret of "{target}" exists'))
def no_token_secret(landscape: Landscape, you: You, waiter: Waiter, target: str) -> None:
    namespace = you.namespace_of(target)

    def probe() -> tuple[bool, Any]:
        left = [s["metadata"]["name"] for s in credential_secrets(landscape, namespace, target)]
        return left == [], left

    waiter.until(f"the token Secret of {target} is deleted", probe)


@then(parsers.parse('the condition message has the error "{error}"'))
def message_has_error(landscape: Landscape, you: You, error: str) -> None:
    for target, namespace in you.namespaces.items():
        message = (credential_condition(landscape, namespace, target) or {}).get("message", "")
        assert error in message, f"the condition of {target} does not carry {error!r}: {message!r}"


@then(
    parsers.parse(
        'the Secret named in the condition message holds a token for the agent of "{target}"'
    )
)
def named_secret_holds_token(landscape: Landscape, you: You, waiter: Waiter, target: str) -> None:
    namespace = you.namespace_of(target)
    waiter.until(
        f"a token for {target} in the Secret the condition names",
        lambda: _token_probe(landscape, namespace, target),
    )


@then(
    parsers.parse(
        'the Secret named in the condition message holds a new token for the agent of "{target}"'
    )
)
def named_secret_holds_new_token(
    landscape: Landscape, you: You, waiter: Waiter, target: str
) -> None:
    namespace = you.namespace_of(target)
    old = you.noted_token(target)

    def probe() -> tuple[bool, Any]:
        ok, seen = _token_probe(landscape, namespace, target)
        secret = token_secret(landscape, namespace, target)
        fresh = ok and secret is not None and token_in(landscape, secret) != old
        return fresh, {**seen, "token": "the old one" if ok and not fresh else seen.get("secret")}

    waiter.until(f"a new token for {target}", probe)


# kube-apiserver takes a TokenRequest's status.expirationTimestamp and the token's `exp` claim
# at two moments and truncates both to seconds: seen one second apart on a loaded machine.
EXPIRY_GRANULARITY = timedelta(seconds=1)


@then("that token expires at the time the condition message names")
def expiry_matches(landscape: Landscape, you: You, waiter: Waiter) -> None:
    """The condition and the Secret are written one after the other: they must come to agree."""
    for target, namespace in you.namespaces.items():

        def probe(namespace: str = namespace, target: str = target) -> tuple[bool, Any]:
            message = (credential_condition(landscape, namespace, target) or {}).get("message", "")
            named = landscape.contract.expiry_named_in(message)
            secret = token_secret(landscape, namespace, target)
            if named is None or secret is None:
                return False, {"message": message, "secret": secret is not None}
            expires = TokenFacts.read(token_in(landscape, secret) or "").expires_at
            seen = {"message says": str(named), "token expires": str(expires)}
            agree = abs(expires - named) <= EXPIRY_GRANULARITY
            return agree and expires > landscape.clock.now(), seen

        waiter.until(f"the token of {target} to expire when its condition message says", probe)


@then("the new token expires later than the old one")
def expires_later(landscape: Landscape, you: You) -> None:
    for target, namespace in you.namespaces.items():
        secret = token_secret(landscape, namespace, target)
        assert secret is not None, f"{target} has no token Secret"
        new = TokenFacts.read(token_in(landscape, secret) or "")
        old = TokenFacts.read(you.noted_token(target))
        assert new.expires_at > old.expires_at, f"new {new.expires_at}, old {old.expires_at}"


def _mint_failures(landscape: Landscape, namespace: str, target: str) -> list[datetime]:
    """When the controller failed to mint, from its Warning events on the Target."""
    times = [
        parse_utc(str(e.get("lastTimestamp") or e.get("firstTimestamp") or e.get("eventTime")))
        for e in landscape.solar.list("Event", namespace)
        if e.get("involvedObject", {}).get("name") == target
        and e.get("involvedObject", {}).get("kind") == "Target"
        and e.get("reason") == landscape.contract.mint_failed_event_reason
    ]
    return sorted(times)


@when(
    parsers.parse(
        'solar-controller-manager has failed to mint a token for "{target}" {count:d} times'
    ),
    target_fixture="mint_failures",
)
def failed_times(
    landscape: Landscape, you: You, waiter: Waiter, target: str, count: int
) -> list[datetime]:
    namespace = you.namespace_of(target)

    def probe() -> tuple[bool, Any]:
        failures = _mint_failures(landscape, namespace, target)
        return len(failures) >= count, [f.isoformat() for f in failures]

    waiter.until(f"{count} failed mint attempts for {target}", probe)
    return _mint_failures(landscape, namespace, target)


@then("the waits between its attempts grow")
def waits_grow(mint_failures: list[datetime]) -> None:
    gaps = [(b - a).total_seconds() for a, b in itertools.pairwise(mint_failures)]
    assert len(gaps) >= 2, f"too few attempts to see a backoff: {gaps}"
    assert all(b >= a for a, b in itertools.pairwise(gaps)), f"waits shrink: {gaps}"
    assert gaps[-1] > gaps[0], f"the waits do not grow (a hot loop?): {gaps}"


# --- bindings (the Profile controller is part of solar-controller-manager) ----------------------
def _bound_to_agent(landscape: Landscape, waiter: Waiter, namespace: str, target: str) -> None:
    agent = agent_release_name(landscape, namespace)
    assert agent is not None, f"namespace {namespace} has no agent Release"

    def probe() -> tuple[bool, Any]:
        releases = bound_releases(landscape, namespace, target)
        return agent in releases, {"bound Releases": releases}

    waiter.until(f"{target} is bound to the agent Release {agent}", probe)


@given(parsers.parse('"{target}" is bound to the agent Release'))
@then(parsers.parse('"{target}" is bound to the agent Release'))
def bound_to_agent(landscape: Landscape, you: You, waiter: Waiter, target: str) -> None:
    _bound_to_agent(landscape, waiter, you.namespace_of(target), target)


@then(parsers.re(r"each of (?P<targets>.+) is bound to the agent Release"))
def each_bound(landscape: Landscape, you: You, waiter: Waiter, targets: str) -> None:
    for target in quoted_names(targets):
        _bound_to_agent(landscape, waiter, you.namespace_of(target), target)


@then(parsers.parse('"{target}" is bound to no Release'))
def bound_to_nothing(landscape: Landscape, you: You, target: str) -> None:
    releases = bound_releases(landscape, you.namespace_of(target), target)
    assert releases == [], f"{target} is bound to {releases}"
