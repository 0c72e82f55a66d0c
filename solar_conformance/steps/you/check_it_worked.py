"""Check that it worked: you read AgentCredentialReady on the Target and wait for the first
lastReportTime, which points at the agent pod logs when it stays empty."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import pytest
from pytest_bdd import given, parsers, then, when

from solar_conformance.core.api import Obj
from solar_conformance.core.capabilities import Capability
from solar_conformance.core.clock import utc
from solar_conformance.core.landscape import Landscape
from solar_conformance.core.redact import leaks_encoded
from solar_conformance.core.waiting import Waiter, WaitTimeout
from solar_conformance.page.lookup import (
    credential_condition,
    last_report_time,
    token_in,
    token_secret,
)
from solar_conformance.page.reading import rfc3339
from solar_conformance.plugin.actors import You
from solar_conformance.steps.agent._rejections import says_unreachable


@dataclass(frozen=True)
class SeenCondition:
    """AgentCredentialReady as a step saw it: its status, its lastTransitionTime, and when."""

    status: str
    transition: datetime
    seen_at: datetime


SEEN_CONDITIONS = pytest.StashKey[dict[str, SeenCondition]]()


def seen_conditions(request: pytest.FixtureRequest) -> dict[str, SeenCondition]:
    """Target -> the last AgentCredentialReady a step of this scenario saw on it."""
    seen: dict[str, SeenCondition] = request.node.stash.setdefault(SEEN_CONDITIONS, {})
    return seen


def _transition_time(condition: Obj) -> datetime:
    """A Kubernetes condition's lastTransitionTime: when its status last changed."""
    text = condition.get("lastTransitionTime")
    assert text is not None, f"the condition has no lastTransitionTime: {condition}"
    return rfc3339(text, f"the lastTransitionTime of {condition.get('type')}")


@given(parsers.parse('AgentCredentialReady of "{target}" is "{status}" with reason "{reason}"'))
@then(parsers.parse('AgentCredentialReady of "{target}" is "{status}" with reason "{reason}"'))
def credential_condition_is(
    request: pytest.FixtureRequest,
    landscape: Landscape,
    you: You,
    waiter: Waiter,
    target: str,
    status: str,
    reason: str,
) -> None:
    """Also: the Target carries exactly one AgentCredentialReady, and its lastTransitionTime
    is the time its status last changed: not before the scenario last saw another status."""
    namespace = you.namespace_of(target)
    kind = landscape.contract.condition_type

    def probe() -> tuple[bool, Any]:
        condition = credential_condition(landscape, namespace, target) or {}
        ok = (condition.get("status"), condition.get("reason")) == (status, reason)
        return ok, condition or None

    waiter.until(f"{kind} of {target} is {status}/{reason}", probe)
    seen_at = landscape.clock.now()
    obj = landscape.solar.get("Target", target, namespace)
    mine = [c for c in obj.get("status", {}).get("conditions") or [] if c.get("type") == kind]
    assert len(mine) == 1, f"the Target {target} carries {len(mine)} {kind} conditions: {mine}"
    transition = _transition_time(mine[0])
    before = seen_conditions(request).get(target)
    if before is not None and before.status != mine[0]["status"]:
        # RFC 3339 times carry whole seconds: the transition is in the second seen or later.
        assert transition >= before.seen_at.replace(microsecond=0), (
            f"{kind} of {target} changed from {before.status} (seen at {utc(before.seen_at)}) "
            f"to {mine[0]['status']}, but its lastTransitionTime is {utc(transition)}"
        )
    seen_conditions(request)[target] = SeenCondition(mine[0]["status"], transition, seen_at)


@then(
    parsers.parse(
        'the lastTransitionTime of AgentCredentialReady of "{target}" has not moved, as its '
        'status stayed "{status}"'
    )
)
def transition_time_kept(
    request: pytest.FixtureRequest, landscape: Landscape, you: You, target: str, status: str
) -> None:
    """A condition whose status does not change keeps its lastTransitionTime (a new message, a
    new Secret, is no transition)."""
    before = seen_conditions(request).get(target)
    assert before is not None and before.status == status, (
        f"the scenario has not seen AgentCredentialReady of {target} as {status} before "
        f'(add: Given AgentCredentialReady of "{target}" is ...): {before}'
    )
    condition = credential_condition(landscape, you.namespace_of(target), target) or {}
    assert condition.get("status") == status, f"the condition is now {condition}"
    assert _transition_time(condition) == before.transition, (
        f"lastTransitionTime of {target} moved from {utc(before.transition)} to "
        f"{condition.get('lastTransitionTime')} while the status stayed {status}: {condition}"
    )


@then(
    parsers.parse(
        'AgentCredentialReady of "{target}" is "{status}" with reason "{reason}" within '
        "{seconds:d} seconds"
    )
)
def credential_condition_soon(
    landscape: Landscape,
    you: You,
    waiter: Waiter,
    target: str,
    status: str,
    reason: str,
    seconds: int,
) -> None:
    namespace = you.namespace_of(target)

    def probe() -> tuple[bool, Any]:
        condition = credential_condition(landscape, namespace, target)
        seen = (condition or {}).get("status"), (condition or {}).get("reason")
        return seen == (status, reason), condition

    waiter.until(
        f"{landscape.contract.condition_type} of {target} is {status}/{reason}",
        probe,
        timeout=seconds,
    )


@when(
    parsers.parse('I wait for the first lastReportTime of "{target}"'), target_fixture="report_wait"
)
def wait_for_first_report(
    landscape: Landscape, you: You, waiter: Waiter, target: str
) -> WaitTimeout | str:
    namespace = you.namespace_of(target)

    def logs() -> str:
        if Capability.AGENT_LOGS not in landscape.capabilities:
            return f"no agent logs: the landscape lacks {Capability.AGENT_LOGS.human_name}"
        pods = landscape.agent_logs(namespace, target)
        if not pods:
            return "no agent pod of this Target exists on the target cluster"
        return "\n".join(
            f"agent pod {pod} on the target cluster, last lines of its log:\n  "
            + "\n  ".join(lines[-10:])
            for pod, lines in pods.items()
        )

    def probe() -> tuple[bool, Any]:
        value = last_report_time(landscape, namespace, target)
        return value is not None, {"lastReportTime": value}

    try:
        return str(
            waiter.until(
                f"lastReportTime of {target} stays empty; check the agent pod logs on the target "
                "cluster",
                probe,
                kind="report",
                details=logs,
            )
        )
    except WaitTimeout as timeout:
        return timeout


@then("the wait fails and says to check the agent pod logs on the target cluster")
def wait_failed(report_wait: WaitTimeout | str) -> None:
    assert isinstance(report_wait, WaitTimeout), f"a report arrived after all: {report_wait}"
    assert "check the agent pod logs on the target cluster" in str(report_wait), str(report_wait)


@then("the failure shows the agent's log lines, which say why it could not report")
def failure_shows_logs(report_wait: WaitTimeout | str) -> None:
    text = str(report_wait)
    assert "agent pod" in text and "last lines of its log" in text, text
    assert any(says_unreachable(line) for line in text.splitlines()), (
        f"the log lines give no reason: {text}"
    )


@then("the failure shows no token")
def failure_shows_no_token(landscape: Landscape, you: You, report_wait: WaitTimeout | str) -> None:
    text = str(report_wait)
    for target, namespace in you.namespaces.items():
        secret = token_secret(landscape, namespace, target)
        token = token_in(landscape, secret) if secret else None
        assert token, f"{target} has no token, so this check could not fail"
        shown = leaks_encoded(text, token)
        assert not shown, "the failure message shows the agent's token, or a piece of it"
    jwt_shaped = "eyJ" in text
    assert not jwt_shaped, "the failure message shows something shaped like a token"
