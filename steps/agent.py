"""The agent: its token, its reports, and who the SolAr API server saw writing them."""

from __future__ import annotations

from typing import Any

from pytest_bdd import given, parsers, then

from core.api import ApiError
from core.clock import parse_utc
from core.landscape import Landscape
from fixtures.page.identity import agent_user, judge, report_writes, writers
from fixtures.page.lookup import (
    TokenFacts,
    last_report_time,
    token_in,
    token_secret,
)
from fixtures.plugin.actors import You
from fixtures.plugin.hooks import requires
from fixtures.plugin.waiting import Waiter


@given(parsers.parse('the agent of "{target}" holds its token'))
def note_token(landscape: Landscape, you: You, waiter: Waiter, target: str) -> None:
    namespace = you.namespace_of(target)

    def probe() -> tuple[bool, Any]:
        secret = token_secret(landscape, namespace, target)
        token = token_in(landscape, secret) if secret else None
        return token is not None, token

    you.tokens[target] = waiter.until(f"a token for {target}", probe)


@given(
    parsers.parse('the old token of "{target}" is rejected within the authentication cache window')
)
@then(
    parsers.parse('the old token of "{target}" is rejected within the authentication cache window')
)
def old_token_rejected(landscape: Landscape, you: You, waiter: Waiter, target: str) -> None:
    namespace = you.namespace_of(target)
    api = landscape.solar_as(you.noted_token(target))

    def probe() -> tuple[bool, Any]:
        try:
            api.get("Target", target, namespace)
        except ApiError as error:
            return error.status == 401, error
        return False, "the old token is still accepted"

    window = waiter.timeout("auth_cache") + waiter.timeout("margin")
    # The window starts when the old token lost its Secret; wait for that first.
    waiter.until(
        f"the Secret the old token of {target} is bound to is gone",
        lambda: _old_secret_gone(landscape, you, target),
    )
    waiter.until(f"the old token of {target} is rejected (401)", probe, timeout=window)


def _old_secret_gone(landscape: Landscape, you: You, target: str) -> tuple[bool, Any]:
    secret = token_secret(landscape, you.namespace_of(target), target)
    current = token_in(landscape, secret) if secret else None
    return current != you.noted_token(target), "the Secret still holds the old token"


# --- reports -------------------------------------------------------------------------------------
@given(parsers.parse('the TargetReport "{target}" gets a lastReportTime'))
@then(parsers.parse('the TargetReport "{target}" gets a lastReportTime'))
def report_arrives(landscape: Landscape, you: You, waiter: Waiter, target: str) -> None:
    namespace = you.namespace_of(target)

    def probe() -> tuple[bool, Any]:
        value = last_report_time(landscape, namespace, target)
        return value is not None, {"lastReportTime": value}

    waiter.until(
        f"lastReportTime of {target}",
        probe,
        kind="report",
        details=lambda: _logs(landscape, namespace, target),
    )


def _logs(landscape: Landscape, namespace: str, target: str) -> str:
    pods = landscape.agent_logs(namespace, target)
    return "\n".join(f"agent pod {pod}: " + "\n  ".join(lines[-5:]) for pod, lines in pods.items())


@then(parsers.parse('the lastReportTime of "{target}" advances with the next report'))
def report_advances(landscape: Landscape, you: You, waiter: Waiter, target: str) -> None:
    namespace = you.namespace_of(target)
    before = last_report_time(landscape, namespace, target)

    def probe() -> tuple[bool, Any]:
        now = last_report_time(landscape, namespace, target)
        later = now is not None and (before is None or parse_utc(now) > parse_utc(before))
        return later, {"before": before, "now": now}

    waiter.until(
        f"lastReportTime of {target} advances",
        probe,
        kind="report",
        details=lambda: _logs(landscape, namespace, target),
    )


@then(parsers.parse('the TargetReport "{target}" exists and its lastReportTime is empty'))
def report_empty(landscape: Landscape, you: You, target: str) -> None:
    namespace = you.namespace_of(target)
    report = landscape.solar.get("TargetReport", target, namespace)
    assert not report.get("spec", {}).get("lastReportTime"), report.get("spec")


@then(parsers.parse('the lastReportTime of "{target}" was written by the agent with its own token'))
def written_by_agent(landscape: Landscape, you: You, waiter: Waiter, target: str) -> None:
    """Judged by who the SolAr API server authenticated (its audit), never by a name a client
    chooses: see fixtures/page/identity.py."""
    namespace = you.namespace_of(target)
    agent = agent_user(landscape, namespace, target)
    secret = token_secret(landscape, namespace, target)
    tokens = [you.tokens.get(target), token_in(landscape, secret) if secret else None]
    known = {TokenFacts.read(token).jti or "" for token in tokens if token} - {""}
    assert known, f"no token of {target} was seen in its Secret"
    events = requires(landscape.solar_audit, "the SolAr API server's audit log")

    def probe() -> tuple[bool, Any]:
        writes = report_writes(landscape.solar_audit(), namespace, target)
        return bool(writes), f"{len(writes)} writes to the TargetReport {namespace}/{target}"

    if not report_writes(events, namespace, target):  # the log may trail the API by a moment
        waiter.until(f"the audit log records the writes to {target}'s TargetReport", probe)
    found = writers(report_writes(landscape.solar_audit(), namespace, target), known)
    verdict = judge(found, agent)
    if verdict is not None:
        raise AssertionError(f"TargetReport {namespace}/{target}: {verdict}")


@then("the agent's log says that the SolAr API server rejects its credential")
def agent_logs_rejection(landscape: Landscape, you: You, waiter: Waiter) -> None:
    for target, namespace in you.namespaces.items():

        def probe(ns: str = namespace, t: str = target) -> tuple[bool, Any]:
            lines = [line for pod in landscape.agent_logs(ns, t).values() for line in pod]
            rejected = [line for line in lines if "401" in line or "Unauthorized" in line]
            return bool(rejected), lines[-5:]

        waiter.until(f"the agent of {target} logs 401 Unauthorized", probe, kind="report")
