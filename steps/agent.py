"""The agent: its token, what that token may do, and its reports."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from pytest_bdd import given, parsers, then, when

from core.api import SOLAR_GROUP, ApiError, ProbeAPI
from core.clock import parse_utc
from core.landscape import Landscape
from core.probing import VERBS, Answer, Impersonation, RawRequest, RulesReview, ServedResource
from fixtures.page.grant import landmarks, permissions, rules_differences, rules_table, served
from fixtures.page.identity import judge, report_writes, writers
from fixtures.page.lookup import (
    TokenFacts,
    last_report_time,
    owned_by_target,
    token_in,
    token_secret,
)
from fixtures.page.scope import (
    NEW_NAME,
    Landmarks,
    Permission,
    Probe,
    Seen,
    compare,
    differences,
    matrix,
    plan,
)
from fixtures.plugin.actors import You
from fixtures.plugin.hooks import requires
from fixtures.plugin.names import Names
from fixtures.plugin.waiting import Waiter
from fixtures.report.attachments import attach_table


@given(parsers.parse('the agent of "{target}" holds its token'))
def note_token(landscape: Landscape, you: You, waiter: Waiter, target: str) -> None:
    namespace = you.namespace_of(target)

    def probe() -> tuple[bool, Any]:
        secret = token_secret(landscape, namespace, target)
        token = token_in(landscape, secret) if secret else None
        return token is not None, token

    you.tokens[target] = waiter.until(f"a token for {target}", probe)


# --- scope: use the token --------------------------------------------------------------------------
# The steps parse and act; planning the requests and judging the answers is fixtures/page/scope.py
# and fixtures/page/grant.py.
@dataclass(frozen=True)
class ScopeTrial:
    marks: Landmarks
    probes: list[Probe]
    answers: list[Answer]


Attempts = list[tuple[str, Answer]]


def _token_client(landscape: Landscape, you: You, target: str) -> ProbeAPI:
    return landscape.solar_as(you.noted_token(target))


@when(
    parsers.parse(
        'the agent of "{target}" tries every verb on every resource the SolAr API server serves'
    ),
    target_fixture="scope_trial",
)
def try_everything(landscape: Landscape, you: You, target: str) -> ScopeTrial:
    marks = landmarks(landscape, you.namespaces, target)
    api = _token_client(landscape, you, target)
    probes = plan(api.discover(), marks)
    return ScopeTrial(marks, probes, api.attempt([probe.request for probe in probes]))


@then("the SolAr API server allows exactly this, beyond what it allows every authenticated user:")
def exactly_the_grant(
    request: pytest.FixtureRequest, scope_trial: ScopeTrial, datatable: list[list[str]]
) -> None:
    grant = permissions(datatable)
    seen = compare(scope_trial.probes, scope_trial.answers, scope_trial.marks, grant)
    attach_table(
        request.node,
        f"What the token may do: {len(seen)} requests, where each verb was allowed",
        ["resource", *VERBS],
        matrix(seen),
    )
    rejected = [one for one in seen if one.answer.status == 401]
    assert not rejected, f"the SolAr API server rejected the token ({len(rejected)} requests: 401)"
    unprobed = [p for p in grant if p.judged and not any(o.expected for o in seen if _is(o, p))]
    assert not unprobed, f"the SolAr API server does not serve {unprobed}"
    wrong = differences(seen)
    _none_of(
        [one.describe() for one in wrong],
        f"the token's rights differ from the page's grant in {len(wrong)} of {len(seen)} "
        "requests (resource, verb, where: expected, seen):",
    )


DIFFERENCES_SHOWN = 40


def _none_of(problems: list[str], headline: str) -> None:
    """Fail with the problems listed, and without pytest repeating them in its own words."""
    if problems:
        shown = problems[:DIFFERENCES_SHOWN]
        if len(problems) > DIFFERENCES_SHOWN:
            shown.append(f"... and {len(problems) - DIFFERENCES_SHOWN} more")
        raise AssertionError("\n  ".join([headline, *shown]))


def _is(seen: Seen, permission: Permission) -> bool:
    resource = seen.probe.request.resource
    return (seen.probe.request.verb, resource.group, resource.resource) == (
        permission.verb,
        permission.group,
        permission.resource,
    )


@when(
    parsers.parse(
        'the agent of "{target}" asks the SolAr API server what it may do in namespaces '
        '"{first}" and "{second}"'
    ),
    target_fixture="rules_reviews",
)
def ask_rules(
    landscape: Landscape, you: You, names: Names, target: str, first: str, second: str
) -> dict[str, RulesReview]:
    api = _token_client(landscape, you, target)
    return {page: api.review_rules(names.namespace(page)) for page in (first, second)}


@then(
    parsers.parse(
        'in "{namespace}" the list is exactly this, beyond what every authenticated user may do:'
    )
)
def rules_are_the_grant(
    request: pytest.FixtureRequest,
    rules_reviews: dict[str, RulesReview],
    you: You,
    names: Names,
    namespace: str,
    datatable: list[list[str]],
) -> None:
    targets = [t for t, ns in you.namespaces.items() if ns == names.namespace(namespace)]
    assert targets, f"the scenario has no Target in namespace {namespace!r}"
    review = rules_reviews[namespace]
    attach_table(
        request.node,
        f"What the API server lists in {namespace!r}",
        ["rule", ""],
        rules_table(review),
    )
    wrong = rules_differences(review, targets[0], permissions(datatable))
    _none_of(wrong, f"the rules in {namespace!r} are not the page's grant:")


@then(parsers.parse('in "{namespace}" the list is only what every authenticated user may do'))
def rules_are_the_baseline(rules_reviews: dict[str, RulesReview], namespace: str) -> None:
    wrong = rules_differences(rules_reviews[namespace], "", [])
    _none_of(wrong, f"the rules in {namespace!r} are not just the baseline:")


@when(
    parsers.parse(
        'the agent of "{target}" sends requests as another user, as a group, as another '
        "Target's ServiceAccount, with a uid and with extra user information"
    ),
    target_fixture="attempts",
)
def impersonate(landscape: Landscape, you: You, target: str) -> Attempts:
    namespace = you.namespace_of(target)
    api = _token_client(landscape, you, target)
    own_target = served(api.discover(), SOLAR_GROUP, "targets")
    me = _service_account_user(landscape, namespace, target)
    neighbour = next((t for t, ns in you.namespaces.items() if t != target), None)
    assert neighbour is not None, "the scenario needs a second Target"
    other = _service_account_user(landscape, you.namespace_of(neighbour), neighbour)
    as_whom = {
        "as the user system:admin": Impersonation("system:admin"),
        "as the group system:masters": Impersonation(me, ("system:masters",)),
        f"as the ServiceAccount of {neighbour}": Impersonation(other),
        "with a uid": Impersonation(me, uid="solar-conformance-probe"),
        "with extra user information": Impersonation(me, extra=(("scopes", "cluster-admin"),)),
    }
    requests = [
        RawRequest("get", own_target, namespace, target, impersonate=who)
        for who in as_whom.values()
    ]
    return list(zip(as_whom, api.attempt(requests), strict=True))


def _service_account_user(landscape: Landscape, namespace: str, target: str) -> str:
    accounts = owned_by_target(landscape, "ServiceAccount", namespace, target)
    assert len(accounts) == 1, f"{target} owns {len(accounts)} ServiceAccounts, not one"
    return f"system:serviceaccount:{namespace}:{accounts[0]['metadata']['name']}"


@when(
    parsers.parse('the agent of "{target}" requests a token for its own ServiceAccount'),
    target_fixture="attempts",
)
def request_token(landscape: Landscape, you: You, target: str) -> Attempts:
    namespace = you.namespace_of(target)
    api = _token_client(landscape, you, target)
    token = served(api.discover(), "", "serviceaccounts", "token")
    account = _service_account_user(landscape, namespace, target).rsplit(":", 1)[1]
    body = {
        "apiVersion": token.body_api_version,
        "kind": "TokenRequest",
        "spec": {"expirationSeconds": 600},
    }
    request = RawRequest("create", token, namespace, account, body=body)
    return [(request.describe(), api.attempt([request])[0])]


@when(
    parsers.parse('the agent of "{target}" patches its own TargetReport'),
    target_fixture="attempts",
)
def patch_own_report(landscape: Landscape, you: You, target: str) -> Attempts:
    api = _token_client(landscape, you, target)
    reports = served(api.discover(), SOLAR_GROUP, "targetreports")
    request = RawRequest("patch", reports, you.namespace_of(target), target)
    return [(request.describe(), api.attempt([request])[0])]


@then("the SolAr API server forbids it")
def forbidden(attempts: Attempts) -> None:
    let_through = [f"{what}: {answer}" for what, answer in attempts if not answer.denied]
    _none_of(let_through, "the authorizer let through:")


@then("the SolAr API server refuses each impersonation")
def impersonation_refused(attempts: Attempts) -> None:
    """Refused for the impersonation itself, not for what the impersonated user may not do."""
    let_through = [
        f"{what}: {answer}"
        for what, answer in attempts
        if not (answer.denied and "cannot impersonate" in answer.message)
    ]
    _none_of(let_through, "impersonation was not refused:")


@then("the SolAr API server allows it")
def allowed(attempts: Attempts) -> None:
    refused = [f"{what}: {answer}" for what, answer in attempts if not 200 <= answer.status < 300]
    _none_of(refused, "refused:")


@when(
    parsers.parse(
        'the agent of "{target}" asks whether it may bind or escalate roles and impersonate'
    ),
    target_fixture="access_answers",
)
def ask_escalation(landscape: Landscape, you: You, target: str) -> list[tuple[str, bool]]:
    namespace = you.namespace_of(target)
    api = _token_client(landscape, you, target)
    resources = api.discover()
    roles = served(resources, RBAC_GROUP, "roles")
    cluster_roles = served(resources, RBAC_GROUP, "clusterroles")
    questions = [
        RawRequest("bind", cluster_roles, None, "cluster-admin"),
        RawRequest("bind", cluster_roles, namespace, "cluster-admin"),
        RawRequest("bind", roles, namespace),
        RawRequest("escalate", roles, namespace),
        RawRequest("escalate", cluster_roles),
        *[RawRequest("impersonate", r) for r in IMPERSONATION_RESOURCES],
        RawRequest("impersonate", served(resources, "", "serviceaccounts"), namespace),
    ]
    return [(question.describe(), api.review_access(question)) for question in questions]


RBAC_GROUP = "rbac.authorization.k8s.io"
# Impersonation is authorized on resources no API server lists in its discovery.
IMPERSONATION_RESOURCES = (
    ServedResource("", "v1", "users", None, "User", False, ()),
    ServedResource("", "v1", "groups", None, "Group", False, ()),
    ServedResource("authentication.k8s.io", "v1", "uids", None, "", False, ()),
    ServedResource("authentication.k8s.io", "v1", "userextras", "scopes", "", False, ()),
)


@then("the SolAr API server answers no to each")
def answers_no(access_answers: list[tuple[str, bool]]) -> None:
    yes = [question for question, answer in access_answers if answer]
    _none_of(yes, "the SolAr API server answers yes to:")


@then(
    parsers.parse(
        'a RoleBinding that gives the agent of "{target}" the ClusterRole "{role}" is refused'
    )
)
def binding_refused(landscape: Landscape, you: You, target: str, role: str) -> None:
    namespace = you.namespace_of(target)
    api = _token_client(landscape, you, target)
    bindings = served(api.discover(), RBAC_GROUP, "rolebindings")
    account = _service_account_user(landscape, namespace, target).rsplit(":", 1)[1]
    body = {
        "apiVersion": bindings.api_version,
        "kind": "RoleBinding",
        "metadata": {"name": NEW_NAME, "namespace": namespace},
        "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": role},
        "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}],
    }
    answer = api.attempt([RawRequest("create", bindings, namespace, body=body)])[0]
    assert answer.status == 403, f"a RoleBinding to {role} for {account}: {answer} (not 403)"


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
    agent = _service_account_user(landscape, namespace, target)
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
    assert verdict is None, f"TargetReport {namespace}/{target}: {verdict}"


@then("the agent's log says that the SolAr API server rejects its credential")
def agent_logs_rejection(landscape: Landscape, you: You, waiter: Waiter) -> None:
    for target, namespace in you.namespaces.items():

        def probe(ns: str = namespace, t: str = target) -> tuple[bool, Any]:
            lines = [line for pod in landscape.agent_logs(ns, t).values() for line in pod]
            rejected = [line for line in lines if "401" in line or "Unauthorized" in line]
            return bool(rejected), lines[-5:]

        waiter.until(f"the agent of {target} logs 401 Unauthorized", probe, kind="report")
