"""The agent's token against the SolAr API server: the credential's scope, checked exhaustively.

The steps parse and act; planning the requests and judging the answers is solar_conformance/page/scope.py
and solar_conformance/page/grant.py.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from pytest_bdd import parsers, then, when

from solar_conformance.core.api import SOLAR_GROUP, ProbeAPI
from solar_conformance.core.landscape import Landscape
from solar_conformance.core.probing import (
    VERBS,
    Answer,
    Impersonation,
    RawRequest,
    RulesReview,
    ServedResource,
)
from solar_conformance.page.grant import (
    landmarks,
    permissions,
    rules_differences,
    rules_table,
    served,
)
from solar_conformance.page.identity import agent_user
from solar_conformance.page.scope import (
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
from solar_conformance.plugin.actors import You
from solar_conformance.plugin.attachments import attach_table
from solar_conformance.plugin.names import Names


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
    _none_of([f"{p.verb} {p.resource}.{p.group}" for p in unprobed], "never tried (not served):")
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
    request = seen.probe.request
    resource = request.resource
    rbac = (
        f"{resource.resource}/{resource.subresource}" if resource.subresource else resource.resource
    )
    wanted = (permission.verb, permission.group, permission.resource)
    return (request.verb, resource.group, rbac) == wanted


@dataclass(frozen=True)
class RulesReviews:
    """What the token was told in the namespaces it asked about (by their names in the feature
    file), and the token's client to ask about more."""

    asked: dict[str, RulesReview]
    api: ProbeAPI
    home: str  # the namespace of the token's Target

    def __getitem__(self, namespace: str) -> RulesReview:
        return self.asked[namespace]


@when(
    parsers.parse(
        'the agent of "{target}" asks the SolAr API server what it may do in namespaces '
        '"{first}" and "{second}"'
    ),
    target_fixture="rules_reviews",
)
def ask_rules(
    landscape: Landscape, you: You, names: Names, target: str, first: str, second: str
) -> RulesReviews:
    api = _token_client(landscape, you, target)
    asked = {page: api.review_rules(names.namespace(page)) for page in (first, second)}
    return RulesReviews(asked, api, you.namespace_of(target))


@then(
    parsers.parse(
        'in "{namespace}" the list is exactly this, beyond what every authenticated user may do:'
    )
)
def rules_are_the_grant(
    request: pytest.FixtureRequest,
    rules_reviews: RulesReviews,
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
def rules_are_the_baseline(rules_reviews: RulesReviews, namespace: str) -> None:
    wrong = rules_differences(rules_reviews[namespace], "", [])
    _none_of(wrong, f"the rules in {namespace!r} are not just the baseline:")


@then(
    "in every other namespace of the SolAr cluster the list is only what every authenticated "
    "user may do"
)
def rules_elsewhere_are_the_baseline(landscape: Landscape, rules_reviews: RulesReviews) -> None:
    """Every namespace the SolAr API server holds, not only those of the scenario: a grant in a
    namespace nobody looks at (a client's `default`, SolAr's own) is still a grant."""
    namespaces = sorted(
        n["metadata"]["name"]
        for n in landscape.solar.list("Namespace")
        if n["metadata"]["name"] != rules_reviews.home
    )
    assert namespaces, "the SolAr cluster holds no other namespace, so this check could not fail"
    wrong = [
        f"{namespace}: {line}"
        for namespace in namespaces
        for line in rules_differences(rules_reviews.api.review_rules(namespace), "", [])
    ]
    _none_of(wrong, f"beyond the baseline, in {len(namespaces)} other namespaces:")


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
    me = agent_user(landscape, namespace, target)
    neighbour = next((t for t, ns in you.namespaces.items() if t != target), None)
    assert neighbour is not None, "the scenario needs a second Target"
    other = agent_user(landscape, you.namespace_of(neighbour), neighbour)
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


@when(
    parsers.parse('the agent of "{target}" requests a token for its own ServiceAccount'),
    target_fixture="attempts",
)
def request_token(landscape: Landscape, you: You, target: str) -> Attempts:
    namespace = you.namespace_of(target)
    api = _token_client(landscape, you, target)
    token = served(api.discover(), "", "serviceaccounts", "token")
    account = agent_user(landscape, namespace, target).rsplit(":", 1)[1]
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
    """The harness reads the page's "update" as update and patch, unless the profile says the
    SolAr grants no patch (grants_patch = false, docs/contracts.md)."""
    if not landscape.contract.grants_patch:
        pytest.skip(
            "the profile says this SolAr grants no patch on the TargetReport (grants_patch = "
            "false): the harness's reading that update includes patch does not apply to it"
        )
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
    account = agent_user(landscape, namespace, target).rsplit(":", 1)[1]
    body = {
        "apiVersion": bindings.api_version,
        "kind": "RoleBinding",
        "metadata": {"name": NEW_NAME, "namespace": namespace},
        "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": role},
        "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}],
    }
    answer = api.attempt([RawRequest("create", bindings, namespace, body=body)])[0]
    assert answer.status == 403, f"a RoleBinding to {role} for {account}: {answer} (not 403)"
