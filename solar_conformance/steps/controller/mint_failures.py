"""MintFailed: the token requests the SolAr API server refused, the backoff between them, a
Warning event for each."""

from __future__ import annotations

import itertools
from typing import Any

from pytest_bdd import given, parsers, then, when

from solar_conformance.core.capabilities import Capability, needs
from solar_conformance.core.landscape import AuditEvent, Landscape
from solar_conformance.core.waiting import Waiter
from solar_conformance.page.lookup import agent_accounts, token_requests
from solar_conformance.plugin.actors import You


def _agent_accounts(landscape: Landscape, waiter: Waiter, namespace: str, target: str) -> set[str]:
    """The ServiceAccounts that may be the agent's of `target`, once the controller made one."""

    def probe() -> tuple[bool, Any]:
        found = agent_accounts(landscape, namespace, target)
        return bool(found), found or "none yet"

    return set(waiter.until(f"a ServiceAccount for the agent of {target}", probe))


def _refused_token_requests(
    landscape: Landscape, namespace: str, accounts: set[str]
) -> list[AuditEvent]:
    return [e for e in token_requests(landscape, namespace, accounts) if e.code >= 400]


@given(
    parsers.parse(
        'the SolAr API server has refused {count:d} token requests for the agent of "{target}"'
    ),
    target_fixture="refused_token_requests",
)
@when(
    parsers.parse(
        'the SolAr API server has refused {count:d} token requests for the agent of "{target}"'
    ),
    target_fixture="refused_token_requests",
)
@then(
    parsers.parse(
        'the SolAr API server has refused {count:d} token requests for the agent of "{target}"'
    ),
    target_fixture="refused_token_requests",
)
@needs(Capability.AUDIT_LOG)
def refused_requests(
    landscape: Landscape, you: You, waiter: Waiter, target: str, count: int
) -> list[AuditEvent]:
    namespace = you.namespace_of(target)
    cap = landscape.contract.mint_backoff_cap_seconds
    initial = landscape.contract.mint_backoff_initial_seconds
    budget = sum(min(cap, initial * 2**i) for i in range(count)) + waiter.timeout("reconcile")
    accounts = _agent_accounts(landscape, waiter, namespace, target)

    def probe() -> tuple[bool, Any]:
        refused = _refused_token_requests(landscape, namespace, accounts)
        return len(refused) >= count, [f"{e.at:%H:%M:%S.%f} {e.code}" for e in refused]

    waiter.until(f"{count} refused TokenRequests for the agent of {target}", probe, timeout=budget)
    return _refused_token_requests(landscape, namespace, accounts)[:count]


@then("the waits between those requests grow up to the profile's cap and stay there")
def waits_grow_to_cap(landscape: Landscape, refused_token_requests: list[AuditEvent]) -> None:
    cap = landscape.contract.mint_backoff_cap_seconds
    initial = landscape.contract.mint_backoff_initial_seconds
    tolerance = max(2.0, cap / 10)
    gaps = [
        round((b.at - a.at).total_seconds(), 1)
        for a, b in itertools.pairwise(refused_token_requests)
    ]
    assert len(gaps) >= 4, f"too few attempts to see a backoff: {gaps}"
    # A retry may come later than its wait (a busy controller), never sooner: each wait is at
    # least the profile's initial wait doubled once per refusal before it, up to the cap.
    floors = [min(cap, initial * 2**i) for i in range(len(gaps))]
    early = [f"{g}s < {f:g}s" for g, f in zip(gaps, floors, strict=True) if g < f - tolerance / 2]
    assert not early, f"waits shrink: {gaps} (sooner than the backoff allows: {early})"
    assert gaps[0] < cap - tolerance, f"the waits do not grow (the first is the cap): {gaps}"
    at_cap = [g for g in gaps if abs(g - cap) <= tolerance]
    assert len(at_cap) >= 2, (
        f"the waits do not settle at the profile's cap of {cap:g}s (or the retries stop): {gaps}"
    )
    assert max(gaps) <= cap + tolerance, f"a wait exceeds the cap of {cap:g}s: {gaps}"


@then(
    parsers.parse(
        "after the success, the first wait between refused token requests for the agent of "
        '"{target}" is the profile\'s initial wait'
    )
)
@needs(Capability.AUDIT_LOG)
def backoff_starts_afresh(
    landscape: Landscape,
    you: You,
    waiter: Waiter,
    refused_token_requests: list[AuditEvent],
    target: str,
) -> None:
    """A success ends the backoff: the next failures start again from the initial wait (the
    refusals counted from the last TokenRequest that succeeded)."""
    namespace = you.namespace_of(target)
    accounts = _agent_accounts(landscape, waiter, namespace, target)
    initial = landscape.contract.mint_backoff_initial_seconds
    tolerance = max(2.0, landscape.contract.mint_backoff_cap_seconds / 10)
    budget = landscape.contract.mint_backoff_cap_seconds * 2 + waiter.timeout("reconcile")
    assert refused_token_requests, "no token request was refused before the success"

    def after_success() -> list[AuditEvent]:
        requests = token_requests(landscape, namespace, accounts)
        last_success = max((i for i, e in enumerate(requests) if e.code < 400), default=-1)
        return [e for e in requests[last_success + 1 :] if e.code >= 400]

    def probe() -> tuple[bool, Any]:
        refused = after_success()
        return len(refused) >= 2, [f"{e.at:%H:%M:%S.%f}" for e in refused]

    waiter.until(f"two refused TokenRequests for {target} after a success", probe, timeout=budget)
    first, second = after_success()[:2]
    gap = (second.at - first.at).total_seconds()
    assert gap <= initial + tolerance, (
        f"after a successful mint the first retry came {gap:.1f}s after the refusal; the "
        f"profile's initial wait is {initial:g}s: the backoff did not start afresh"
    )


@then(parsers.parse('every refused token request is a Warning event on the Target "{target}"'))
@needs(Capability.AUDIT_LOG)
def refusals_are_events(
    landscape: Landscape,
    you: You,
    waiter: Waiter,
    target: str,
) -> None:
    """On the Target as `kubectl describe target` finds its events: by kind, name, namespace
    and uid (an event with another object's uid is not shown with the Target)."""
    namespace = you.namespace_of(target)
    uid = landscape.solar.get("Target", target, namespace)["metadata"]["uid"]
    accounts = _agent_accounts(landscape, waiter, namespace, target)

    def about_the_target(event: Any) -> bool:
        involved = event.get("involvedObject") or {}
        return (
            involved.get("kind") == "Target"
            and involved.get("name") == target
            and involved.get("namespace", namespace) == namespace
            and involved.get("uid") == uid
        )

    def probe() -> tuple[bool, Any]:
        refused = len(_refused_token_requests(landscape, namespace, accounts))
        events = [
            e
            for e in landscape.solar.list("Event", namespace)
            if about_the_target(e)
            and e.get("type") == "Warning"
            and e.get("reason") == landscape.contract.mint_failed_event_reason
        ]
        recorded = sum(int(e.get("count") or 1) for e in events)
        return recorded == refused, {"refused TokenRequests": refused, "Warning events": recorded}

    waiter.until(f"one Warning event per refused TokenRequest of {target}", probe)
