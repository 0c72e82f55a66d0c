"""The agent: its token, its reports, and who the SolAr API server saw writing them."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from pytest_bdd import given, parsers, then

from solar_conformance.core.api import ApiError, Obj, is_owned_by
from solar_conformance.core.capabilities import Capability, needs
from solar_conformance.core.landscape import Landscape
from solar_conformance.core.redact import leaks_encoded
from solar_conformance.core.waiting import Waiter
from solar_conformance.page.identity import agent_user, judge, report_writes, writers
from solar_conformance.page.lookup import (
    TokenFacts,
    credential_condition,
    last_report_time,
    target_report,
    token_in,
    token_requests,
    token_secret,
)
from solar_conformance.page.reading import rfc3339
from solar_conformance.plugin.actors import You
from solar_conformance.steps.common import quoted_names
from solar_conformance.steps.renderer import agent_release_new_token
from solar_conformance.steps.you import request_rotation


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


# --- reports -------------------------------------------------------------------------------------
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


def _rejections(landscape: Landscape, namespace: str, target: str) -> list[str]:
    lines = [line for pod in landscape.agent_logs(namespace, target).values() for line in pod]
    return [line for line in lines if "401" in line or "Unauthorized" in line]


@then("the agent's log says that the SolAr API server rejects its credential")
@needs(Capability.AGENT_LOGS)
def agent_logs_rejection(landscape: Landscape, you: You, waiter: Waiter) -> None:
    for target, namespace in you.namespaces.items():

        def probe(ns: str = namespace, t: str = target) -> tuple[bool, Any]:
            rejected = _rejections(landscape, ns, t)
            return bool(rejected), rejected[-5:] or "no rejection logged yet"

        waiter.until(f"the agent of {target} logs 401 Unauthorized", probe, kind="report")


@then(parsers.parse('the lastReportTime of "{target}" stops at the token\'s expiry'))
@needs(Capability.AGENT_LOGS)
def reports_stop(landscape: Landscape, you: You, waiter: Waiter, target: str) -> None:
    """Two more rejected attempts of the agent show that it went on trying: none got through."""
    namespace = you.namespace_of(target)
    expires = TokenFacts.read(you.noted_token(target)).expires_at
    before = len(_rejections(landscape, namespace, target))

    def probe() -> tuple[bool, Any]:
        seen = len(_rejections(landscape, namespace, target))
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


# --- the agent's own account of a failure ---------------------------------------------------
UNREACHABLE_WORDS = ("connection refused", "unreachable", "timed out", "no route to host")


@then(
    parsers.parse(
        'the agent pod of "{target}" on the target cluster logs {count:d} failed reports that say '
        "it cannot reach the SolAr API server"
    )
)
@needs(Capability.AGENT_LOGS)
def agent_logs_unreachable(
    landscape: Landscape, you: You, waiter: Waiter, target: str, count: int
) -> None:
    namespace = you.namespace_of(target)

    def probe() -> tuple[bool, Any]:
        lines = [line for pod in landscape.agent_logs(namespace, target).values() for line in pod]
        failed = [
            line
            for line in lines
            if "failed" in line and any(word in line.lower() for word in UNREACHABLE_WORDS)
        ]
        return len(failed) >= count, lines[-5:] or "no agent pod of this Target yet"

    waiter.until(
        f"{count} failed reports in the log of the agent pod of {target}", probe, kind="flux"
    )


@then(parsers.parse('the lastReportTime of "{target}" is still empty'))
def report_still_empty(landscape: Landscape, you: You, target: str) -> None:
    value = last_report_time(landscape, you.namespace_of(target), target)
    assert value is None, f"lastReportTime of {target} is {value}, although no report got through"


@then(
    parsers.re(
        r"an agent pod of (?P<first>\"[^\"]+\") and an agent pod of (?P<second>\"[^\"]+\") run on the target cluster"
    )
)
@needs(Capability.AGENT_LOGS)
def agents_run(landscape: Landscape, you: You, waiter: Waiter, first: str, second: str) -> None:
    for target in quoted_names(f"{first} and {second}"):
        namespace = you.namespace_of(target)

        def probe(ns: str = namespace, t: str = target) -> tuple[bool, Any]:
            pods = {pod: lines[-1:] for pod, lines in landscape.agent_logs(ns, t).items() if lines}
            return bool(pods), pods or "no agent pod of this Target on the target cluster"

        waiter.until(f"an agent pod of {target} runs on the target cluster", probe, kind="flux")


@then(parsers.parse('the agent pod logs of "{target}" on the target cluster show no token'))
@needs(Capability.AGENT_LOGS)
def agent_logs_hold_no_token(landscape: Landscape, you: You, target: str) -> None:
    namespace = you.namespace_of(target)
    secret = token_secret(landscape, namespace, target)
    token = token_in(landscape, secret) if secret else None
    assert token, f"{target} has no token, so this check could not fail"
    pods = landscape.agent_logs(namespace, target)
    assert pods, f"no agent pod of {target} on the target cluster"
    showing = sorted(pod for pod, lines in pods.items() if leaks_encoded("\n".join(lines), token))
    assert showing == [], f"the log of {showing} shows the agent's token, or a piece of it"


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
