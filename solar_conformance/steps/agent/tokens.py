"""The agent's token: noted as it holds it, replaced, and rejected once something retired it or
it expired."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from pytest_bdd import given, parsers, then

from solar_conformance.core.api import ApiError
from solar_conformance.core.capabilities import Capability
from solar_conformance.core.landscape import Landscape
from solar_conformance.core.waiting import Waiter
from solar_conformance.page.lookup import TokenFacts, token_in, token_requests, token_secret
from solar_conformance.plugin.actors import You
from solar_conformance.steps.renderer import agent_release_new_token
from solar_conformance.steps.you.targets import request_rotation


@given(parsers.parse('the agent of "{target}" holds its token'))
def note_token(landscape: Landscape, you: You, waiter: Waiter, target: str) -> None:
    namespace = you.namespace_of(target)

    def probe() -> tuple[bool, Any]:
        secret = token_secret(landscape, namespace, target)
        token = token_in(landscape, secret) if secret else None
        return token is not None, token

    you.tokens[target] = waiter.until(f"a token for {target}", probe)
    you.retirements.pop(target, None)  # what retired an earlier token does not retire this one
    if Capability.AUDIT_LOG not in landscape.capabilities:
        return  # the steps that count TokenRequests need the audit log: their scenarios skip
    account_namespace, account = TokenFacts.read(you.tokens[target]).service_account
    requests = token_requests(landscape, account_namespace, account)
    you.mints_when_noted[target] = len([e for e in requests if e.code < 300])


@given(
    parsers.parse('the old token of "{target}" is rejected within the authentication cache window')
)
@then(
    parsers.parse('the old token of "{target}" is rejected within the authentication cache window')
)
def old_token_rejected(landscape: Landscape, you: You, waiter: Waiter, target: str) -> None:
    """The window starts when the page's trigger became visible (the condition named the new
    Secret, the revocation annotation was set, the Target's deletion was requested,
    controller.agent.apiserverURL was unset, the Secret was deleted), never at a step SolAr
    chooses when to take (deleting the old Secret): by then plus the cache window and the
    margin, the API server rejects the old token (401)."""
    token = you.noted_token(target)
    retirement = you.retirements.get(target)
    assert retirement is not None, (
        f"the scenario has seen nothing that retires the noted token of {target} (a rotation "
        "named in the condition, a revocation, a deletion, an unset apiserverURL)"
    )
    what, since = retirement
    _rejected(landscape, waiter, target, you.namespace_of(target), token, since, what)


@then(parsers.parse('the old token of "{target}" is rejected from its expiry on'))
def expired_token_rejected(landscape: Landscape, you: You, waiter: Waiter, target: str) -> None:
    token = you.noted_token(target)
    expires = TokenFacts.read(token).expires_at
    assert landscape.clock.now() >= expires, f"the token of {target} expires only at {expires}"
    _rejected(landscape, waiter, target, you.namespace_of(target), token, expires, "it expired")


def _rejected(
    landscape: Landscape,
    waiter: Waiter,
    target: str,
    namespace: str,
    token: str,
    since: datetime,
    what: str,
) -> None:
    """Rejected (401) by `since` plus the authentication cache window and the margin."""
    api = landscape.solar_as(token)
    bound = TokenFacts.read(token).bound_secret

    def probe() -> tuple[bool, Any]:
        try:
            api.get("Target", target, namespace)
        except ApiError as error:
            return error.status == 401, error
        if bound is None:
            return False, "the old token, bound to no Secret, is still accepted"
        try:
            landscape.solar.get("Secret", bound, namespace)
            held = f"its Secret {namespace}/{bound} still exists"
        except ApiError:
            held = f"its Secret {namespace}/{bound} is gone"
        return False, f"the old token is still accepted; {held}"

    window = waiter.timeout("auth_cache") + waiter.timeout("margin")
    deadline = since + timedelta(seconds=window)
    started = landscape.clock.now()
    # A token once rejected stays rejected: a first look after the window could not tell when.
    assert started <= deadline, (
        f"the harness first looked at the old token of {target} at {started:%H:%M:%S}, after "
        f"the window that began when {what} ({since:%H:%M:%S}) ended: a scenario looks at the "
        "old token right after what retires it"
    )
    waiter.until(
        f"the old token of {target} is rejected (401) within {window:g}s of the moment {what} "
        f"({since:%H:%M:%S}), by {deadline:%H:%M:%S}",
        probe,
        timeout=max(0.0, (deadline - landscape.clock.now()).total_seconds()),
    )


@given(
    parsers.parse(
        'the token of "{target}" has been replaced {count:d} times, each new one delivered to the '
        "render registry"
    )
)
def replaced_and_delivered(
    landscape: Landscape, you: You, waiter: Waiter, target: str, count: int
) -> None:
    """Rotations on request, each waited for in the agent release the bootstrap chart points at:
    the bootstrap chart of the Target is rendered anew each time."""
    for _ in range(count):
        note_token(landscape, you, waiter, target)
        request_rotation(landscape, you, target)
        agent_release_new_token(landscape, you, waiter, target)
    note_token(landscape, you, waiter, target)
