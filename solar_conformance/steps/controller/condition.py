"""The AgentCredentialReady condition's message: the Secret and the expiry it names, the error it
carries."""

from __future__ import annotations

from typing import Any

from pytest_bdd import parsers, then

from solar_conformance.core.landscape import Landscape
from solar_conformance.core.waiting import Waiter
from solar_conformance.page.lookup import TokenFacts, credential_condition, token_in, token_secret
from solar_conformance.page.reading import issued_expiry
from solar_conformance.plugin.actors import You
from solar_conformance.steps.controller._credential import EXPIRY_GRANULARITY, token_probe


@then("the condition message names the token's Secret and its expiry")
def message_names_secret_and_expiry(landscape: Landscape, you: You) -> None:
    for target, namespace in you.namespaces.items():
        condition = credential_condition(landscape, namespace, target) or {}
        message = condition.get("message", "")
        named = landscape.contract.secret_named_in(message, namespace)
        assert named is not None, f"the message names no Secret: {message!r}"
        assert issued_expiry(landscape.contract, message, target) is not None, (
            f"the message names no expiry: {message!r}"
        )
        assert token_secret(landscape, namespace, target) is not None, (
            f"the Secret the message names does not exist: {named}"
        )


@then(parsers.parse('the condition message of "{target}" comes to have the error "{error}"'))
def message_comes_to_have_error(
    landscape: Landscape, you: You, waiter: Waiter, target: str, error: str
) -> None:
    """The message carries the error of the latest attempt: wait for the next retry."""
    namespace = you.namespace_of(target)

    def probe() -> tuple[bool, Any]:
        condition = credential_condition(landscape, namespace, target) or {}
        return error in str(condition.get("message", "")), condition

    waiter.until(f"the condition message of {target} has the error {error!r}", probe)


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
        lambda: token_probe(landscape, namespace, target),
    )


@then("that token expires at the time the condition message names")
def expiry_matches(landscape: Landscape, you: You, waiter: Waiter) -> None:
    """The condition and the Secret are written one after the other: they must come to agree."""
    for target, namespace in you.namespaces.items():

        def probe(namespace: str = namespace, target: str = target) -> tuple[bool, Any]:
            message = (credential_condition(landscape, namespace, target) or {}).get("message", "")
            named = issued_expiry(landscape.contract, message, target)
            secret = token_secret(landscape, namespace, target)
            if named is None or secret is None:
                return False, {"message": message, "secret": secret is not None}
            expires = TokenFacts.read(token_in(landscape, secret) or "").expires_at
            seen = {"message says": str(named), "token expires": str(expires)}
            agree = abs(expires - named) <= EXPIRY_GRANULARITY
            return agree and expires > landscape.clock.now(), seen

        waiter.until(f"the token of {target} to expire when its condition message says", probe)
