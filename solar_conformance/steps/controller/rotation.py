"""The runbook's rotation and expiry, as solar-controller-manager does them: a new token, named in
the condition, minted once, living the profile's lifetime; a token that ages and expires."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from pytest_bdd import given, parsers, then, when

from solar_conformance.core.capabilities import Capability, needs
from solar_conformance.core.landscape import Landscape
from solar_conformance.core.redact import same_secret
from solar_conformance.core.waiting import Waiter
from solar_conformance.page.lookup import (
    TokenFacts,
    credential_condition,
    token_in,
    token_requests,
    token_secret,
)
from solar_conformance.page.reading import issued_expiry
from solar_conformance.plugin.actors import You
from solar_conformance.steps.controller._credential import EXPIRY_GRANULARITY, token_probe


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
        ok, seen = token_probe(landscape, namespace, target)
        secret = token_secret(landscape, namespace, target)
        fresh = ok and secret is not None and not same_secret(token_in(landscape, secret), old)
        return fresh, {**seen, "token": "the old one" if ok and not fresh else seen.get("secret")}

    waiter.until(f"a new token for {target}", probe)


@given(
    parsers.parse(
        'the condition message names the Secret that now holds the new token of "{target}" and '
        "that token's expiry"
    )
)
@then(
    parsers.parse(
        'the condition message names the Secret that now holds the new token of "{target}" and '
        "that token's expiry"
    )
)
def message_names_new_token(landscape: Landscape, you: You, waiter: Waiter, target: str) -> None:
    namespace = you.namespace_of(target)
    old = you.noted_token(target)

    def probe() -> tuple[bool, Any]:
        condition = credential_condition(landscape, namespace, target) or {}
        message = str(condition.get("message", ""))
        secret = token_secret(landscape, namespace, target)
        token = token_in(landscape, secret) if secret is not None else None
        seen: dict[str, Any] = {"reason": condition.get("reason"), "message": message}
        if token is None or same_secret(token, old):
            return False, {**seen, "named Secret holds": "the old token" if token else "none"}
        named = issued_expiry(landscape.contract, message, target)
        expires = TokenFacts.read(token).expires_at
        seen["token expires"] = str(expires)
        agree = named is not None and abs(expires - named) <= EXPIRY_GRANULARITY
        return agree and expires > landscape.clock.now(), seen

    waiter.until(
        f"the Issued message of {target} names the Secret with the new token and its expiry", probe
    )
    you.retired(target, "the condition named the new Secret", landscape.clock.now())


@then(parsers.parse('solar-controller-manager has minted exactly one new token for "{target}"'))
@needs(Capability.AUDIT_LOG)
def exactly_one_new_token(landscape: Landscape, you: You, target: str) -> None:
    namespace, account = TokenFacts.read(you.noted_token(target)).service_account
    minted = [e for e in token_requests(landscape, namespace, account) if e.code < 300]
    before = you.mints_when_noted.get(target)
    assert before is not None, f"the scenario noted no token of {target}"
    later = [e.at.isoformat() for e in minted[before:]]
    assert len(later) == 1, (
        f"{len(later)} TokenRequests for {account} succeeded since its token was noted "
        f"(expected exactly one for the new token): {later}"
    )


def _wait_for_token_age(
    landscape: Landscape, waiter: Waiter, target: str, token: str, fraction: float
) -> None:
    facts = TokenFacts.read(token)
    moment = facts.issued_at + (facts.expires_at - facts.issued_at) * fraction
    remaining = max(0.0, (moment - landscape.clock.now()).total_seconds())
    waiter.until(
        f"the token of {target} to reach {fraction:.0%} of its lifetime ({moment:%H:%M:%S})",
        lambda: (landscape.clock.now() >= moment, f"now {landscape.clock.now():%H:%M:%S}"),
        timeout=remaining + waiter.timeout("margin"),
    )


@when(parsers.parse('the token of "{target}" has lived past the age at which it is rotated'))
def token_ages(landscape: Landscape, you: You, waiter: Waiter, target: str) -> None:
    """The profile's rotate_after_fraction of its lifetime."""
    fraction = landscape.contract.rotate_after_fraction
    _wait_for_token_age(landscape, waiter, target, you.noted_token(target), fraction)


@when(parsers.parse('the token of "{target}" expires'))
def token_expires(landscape: Landscape, you: You, waiter: Waiter, target: str) -> None:
    _wait_for_token_age(landscape, waiter, target, you.noted_token(target), 1.0)


@then("the new token lives for the profile's token lifetime")
def lives_for_the_lifetime(landscape: Landscape, you: You) -> None:
    """`exp` - `iat` of the token itself: what the API server issued, not what SolAr asked."""
    wanted = timedelta(seconds=landscape.contract.token_lifetime_seconds)
    for target, namespace in you.namespaces.items():
        secret = token_secret(landscape, namespace, target)
        assert secret is not None, f"{target} has no token Secret"
        facts = TokenFacts.read(token_in(landscape, secret) or "")
        lifetime = facts.expires_at - facts.issued_at
        assert abs(lifetime - wanted) <= EXPIRY_GRANULARITY, (
            f"the token of {target} lives {lifetime.total_seconds():g}s, not the profile's "
            f"token lifetime of {wanted.total_seconds():g}s"
        )


@then("the new token expires later than the old one")
def expires_later(landscape: Landscape, you: You) -> None:
    for target, namespace in you.namespaces.items():
        secret = token_secret(landscape, namespace, target)
        assert secret is not None, f"{target} has no token Secret"
        new = TokenFacts.read(token_in(landscape, secret) or "")
        old = TokenFacts.read(you.noted_token(target))
        assert new.expires_at > old.expires_at, f"new {new.expires_at}, old {old.expires_at}"
