"""The agent's reports: its TargetReport's lastReportTime, empty until the first report, then
advancing with every report, written with the agent's own token, stopping at its expiry."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from pytest_bdd import given, parsers, then

from solar_conformance.core.api import ApiError, Obj, is_owned_by
from solar_conformance.core.capabilities import Capability, needs
from solar_conformance.core.landscape import Landscape
from solar_conformance.core.waiting import Waiter
from solar_conformance.page.identity import agent_user, judge, report_writes, writers
from solar_conformance.page.lookup import (
    TokenFacts,
    credential_condition,
    last_report_time,
    target_report,
    token_in,
    token_secret,
)
from solar_conformance.page.reading import rfc3339
from solar_conformance.plugin.actors import You
from solar_conformance.steps.agent._rejections import rejections


def _seen_report(landscape: Landscape, you: You, target: str) -> str | None:
    """The TargetReport's lastReportTime now, held to what the scenario saw before, whatever
    happened since (a rotation, a revocation, a restart of the agent): once it has had a value it
    is never empty again and never goes back. Returns the value; remembers the latest."""
    namespace = you.namespace_of(target)
    report = target_report(landscape, namespace, target)
    uid = str(report["metadata"].get("uid", ""))
    raw = report.get("spec", {}).get("lastReportTime")
    value = str(raw) if raw else None
    seen_uid, seen = you.reports_seen.get(target, ("", ""))
    if seen and seen_uid == uid:
        assert value is not None, (
            f"lastReportTime of {target} is empty again, after the scenario saw {seen}: it is "
            "empty only until the first report"
        )
        assert _report_time(target, value) >= _report_time(target, seen), (
            f"lastReportTime of {target} went back from {seen} to {value}: it only advances"
        )
    if value is not None:
        _still_owned(landscape, report, target, namespace)
        you.reports_seen[target] = (uid, value)
    return value


def _still_owned(landscape: Landscape, report: Obj, target: str, namespace: str) -> None:
    """Whatever else the agent writes into its TargetReport, the report stays its Target's: the
    controller made it owned by the Target, so deleting the Target deletes it (docs/contracts.md,
    "What the agent writes into its TargetReport")."""
    try:
        owner = landscape.solar.get("Target", target, namespace)
    except ApiError as error:
        if error.status == 404:
            return  # the Target is gone (its deletion is what the scenario checks)
        raise
    assert is_owned_by(report, owner), (
        f"the TargetReport {namespace}/{target} has a lastReportTime but no owner reference to "
        f"its Target any more (owners: {report['metadata'].get('ownerReferences') or 'none'}): "
        "deleting the Target would leave it behind"
    )


@given(parsers.parse('the TargetReport "{target}" gets a lastReportTime'))
@then(parsers.parse('the TargetReport "{target}" gets a lastReportTime'))
def report_arrives(landscape: Landscape, you: You, waiter: Waiter, target: str) -> None:
    """The first report (or the latest): a lastReportTime that is the time of a report, neither
    later than now nor older than one report interval (plus the margin) when it is seen."""
    namespace = you.namespace_of(target)

    def probe() -> tuple[bool, Any]:
        value = _seen_report(landscape, you, target)
        return value is not None, {"lastReportTime": value}

    seen = waiter.until(
        f"lastReportTime of {target}",
        probe,
        kind="report",
        details=lambda: _logs(landscape, namespace, target),
    )
    _not_in_the_future(landscape, waiter, target, str(seen["lastReportTime"]))
    _not_stale(landscape, waiter, target, str(seen["lastReportTime"]))


def _not_in_the_future(landscape: Landscape, waiter: Waiter, target: str, value: str) -> None:
    """A lastReportTime is when a report was made: never later than now (by the SolAr side's
    clock, within the margin allowed between two machines' clocks)."""
    now = landscape.clock.now()
    margin = timedelta(seconds=waiter.timeout("margin"))
    assert _report_time(target, value) <= now + margin, (
        f"lastReportTime of {target} is {value}, later than now ({now:%Y-%m-%dT%H:%M:%SZ}): "
        "not the time of a report"
    )


def _report_time(target: str, value: str) -> datetime:
    """The page: lastReportTime "advances with every report", a time SolAr's API can compare."""
    return rfc3339(value, f"lastReportTime of {target}")


def _logs(landscape: Landscape, namespace: str, target: str) -> str:
    if Capability.AGENT_LOGS not in landscape.capabilities:
        return f"(no agent logs: the landscape lacks {Capability.AGENT_LOGS.human_name})"
    pods = landscape.agent_logs(namespace, target)
    return "\n".join(f"agent pod {pod}: " + "\n  ".join(lines[-5:]) for pod, lines in pods.items())


@then(parsers.parse('the lastReportTime of "{target}" advances with the next report'))
def report_advances(landscape: Landscape, you: You, waiter: Waiter, target: str) -> None:
    """The next report comes within one report interval of the profile (plus the margin), and
    advances beyond what the scenario saw before; on the way there, lastReportTime is never
    empty and never earlier than any value seen before (_seen_report)."""
    namespace = you.namespace_of(target)
    before = _seen_report(landscape, you, target)

    def probe() -> tuple[bool, Any]:
        now = _seen_report(landscape, you, target)
        later = now is not None and (
            before is None or _report_time(target, now) > _report_time(target, before)
        )
        return later, {"before": before, "now": now}

    interval = landscape.contract.report_interval_seconds
    seen = waiter.until(
        f"lastReportTime of {target} advances within one report interval ({interval}s)",
        probe,
        timeout=interval + waiter.timeout("margin"),
        details=lambda: _logs(landscape, namespace, target),
    )
    _not_in_the_future(landscape, waiter, target, str(seen["now"]))
    _not_stale(landscape, waiter, target, str(seen["now"]))


def _not_stale(landscape: Landscape, waiter: Waiter, target: str, value: str) -> None:
    """A lastReportTime just written is the time of that report: the harness sees it within one
    report interval (plus the margin) of it, so it is no older than that."""
    now = landscape.clock.now()
    window = timedelta(
        seconds=landscape.contract.report_interval_seconds + waiter.timeout("margin")
    )
    assert _report_time(target, value) >= now - window, (
        f"lastReportTime of {target} is {value}, earlier than one report interval "
        f"before now ({now:%Y-%m-%dT%H:%M:%SZ}): not the time of the report"
    )


@then(
    parsers.parse(
        'the lastReportTime of "{target}" advances with each of the next {count:d} reports'
    )
)
def reports_keep_advancing(
    landscape: Landscape, you: You, waiter: Waiter, target: str, count: int
) -> None:
    """A long run of reports: an agent that stops after some reports, or now and then, fails."""
    for _ in range(count):
        report_advances(landscape, you, waiter, target)


@then(
    parsers.parse(
        'the credential of "{target}" stays Issued and its agent keeps reporting with the same '
        "token, for as long as a revocation may take"
    )
)
def stays_issued(landscape: Landscape, you: You, waiter: Waiter, target: str) -> None:
    """As long as the controller may take to act (a reconcile) and the API server to reject a
    token after that (the cache window): every report interval the agent reports, the condition
    stays Issued and the token stays in its Secret; at the end the token is still accepted."""
    namespace = you.namespace_of(target)
    token = you.noted_token(target)
    window = sum(waiter.timeout(kind) for kind in ("reconcile", "auth_cache", "margin"))
    deadline = landscape.clock.now() + timedelta(seconds=window)
    reports = 0
    while landscape.clock.now() < deadline:
        report_advances(landscape, you, waiter, target)
        reports += 1
        condition = credential_condition(landscape, namespace, target) or {}
        held = token_secret(landscape, namespace, target)
        assert (condition.get("status"), condition.get("reason")) == ("True", "Issued"), (
            f"after {reports} reports AgentCredentialReady of {target} is "
            f"{condition.get('status')} with reason {condition.get('reason')}: {condition.get('message')}"
        )
        assert held is not None and token_in(landscape, held) == token, (
            f"after {reports} reports the token Secret of {target} no longer holds its token"
        )
    try:
        landscape.solar_as(token).get("Target", target, namespace)
    except ApiError as error:
        raise AssertionError(
            f"after {window:g}s the SolAr API server refuses the token of {target}: {error}"
        ) from None


@then(parsers.parse('the TargetReport "{target}" exists and its lastReportTime is empty'))
def report_empty(landscape: Landscape, you: You, target: str) -> None:
    namespace = you.namespace_of(target)
    report = target_report(landscape, namespace, target)
    assert not report.get("spec", {}).get("lastReportTime"), report.get("spec")


@then(parsers.parse('the lastReportTime of "{target}" is still empty'))
def report_still_empty(landscape: Landscape, you: You, target: str) -> None:
    value = last_report_time(landscape, you.namespace_of(target), target)
    assert value is None, f"lastReportTime of {target} is {value}, although no report got through"


@then(parsers.parse('the lastReportTime of "{target}" was written by the agent with its own token'))
@needs(Capability.AUDIT_LOG)
def written_by_agent(landscape: Landscape, you: You, waiter: Waiter, target: str) -> None:
    """Judged by who the SolAr API server authenticated (its audit), never by a name a client
    chooses: see solar_conformance/page/identity.py."""
    namespace = you.namespace_of(target)
    agent = agent_user(landscape, namespace, target)
    secret = token_secret(landscape, namespace, target)
    tokens = [you.tokens.get(target), token_in(landscape, secret) if secret else None]
    known = {TokenFacts.read(token).jti or "" for token in tokens if token} - {""}
    assert known, f"no token of {target} was seen in its Secret"
    events = landscape.solar_audit()

    def probe() -> tuple[bool, Any]:
        writes = report_writes(landscape.solar_audit(), namespace, target)
        return bool(writes), f"{len(writes)} writes to the TargetReport {namespace}/{target}"

    if not report_writes(events, namespace, target):  # the log may trail the API by a moment
        waiter.until(f"the audit log records the writes to {target}'s TargetReport", probe)
    found = writers(report_writes(landscape.solar_audit(), namespace, target), known)
    verdict = judge(found, agent)
    if verdict is not None:
        raise AssertionError(f"TargetReport {namespace}/{target}: {verdict}")


@then(parsers.parse('the lastReportTime of "{target}" stops at the token\'s expiry'))
@needs(Capability.AGENT_LOGS)
def reports_stop(landscape: Landscape, you: You, waiter: Waiter, target: str) -> None:
    """Two more rejected attempts of the agent show that it went on trying: none got through."""
    namespace = you.namespace_of(target)
    expires = TokenFacts.read(you.noted_token(target)).expires_at
    before = len(rejections(landscape, namespace, target))

    def probe() -> tuple[bool, Any]:
        seen = len(rejections(landscape, namespace, target))
        return seen >= before + 2, f"{seen - before} more rejected reports logged"

    waiter.until(f"the agent of {target} tries twice more and is rejected", probe, kind="report")
    value = _seen_report(landscape, you, target)
    assert value is not None, f"{target} never reported"
    # The API server may answer a token from its authentication cache for one window after
    # the token expired (kube-apiserver caches successes), so that window is allowed, no more.
    window = timedelta(seconds=waiter.timeout("auth_cache") + waiter.timeout("margin"))
    assert _report_time(target, value) <= expires + window, (
        f"lastReportTime of {target} is {value}, more than the authentication-cache window "
        f"after the token expired at {expires}"
    )
    # ... and the agent went on reporting until then: its last report came within one report
    # interval of the expiry, not long before (an agent that stops early stops here too).
    interval = landscape.contract.report_interval_seconds
    earliest = expires - timedelta(seconds=interval + waiter.timeout("margin"))
    assert _report_time(target, value) >= earliest, (
        f"lastReportTime of {target} is {value}: the agent stopped reporting before its token "
        f"expired at {expires} (the last report may come at most one report interval, "
        f"{interval}s, plus the margin before it)"
    )
