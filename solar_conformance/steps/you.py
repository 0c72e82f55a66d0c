"""You: create Targets, make first contact on the target cluster, check what the page says."""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import pytest
from pytest_bdd import given, parsers, then, when

from solar_conformance.core.api import ApiError, Obj, new_object
from solar_conformance.core.capabilities import Capability
from solar_conformance.core.clock import utc
from solar_conformance.core.credentials import basic_auth
from solar_conformance.core.landscape import Landscape
from solar_conformance.core.redact import leaks_encoded
from solar_conformance.core.waiting import Waiter, WaitTimeout
from solar_conformance.page.lookup import (
    ObjectRef,
    credential_condition,
    credential_objects,
    last_report_time,
    token_in,
    token_secret,
)
from solar_conformance.page.objects import FirstContact, differences, page_objects
from solar_conformance.page.reading import rfc3339
from solar_conformance.page.setup import REGISTRY
from solar_conformance.plugin.actors import You
from solar_conformance.steps.common import annotation, label_pairs, quoted_names


@dataclass(frozen=True)
class WrittenHelmRelease:
    """The page's helmrelease.yaml as written out for one Target."""

    target: str
    source: Obj
    release: Obj


def target_spec() -> Obj:
    """The spec of every Target you create: its render registry, and no userdata."""
    return {"renderRegistryRef": {"name": REGISTRY}, "userdata": {}}


@pytest.fixture
def creation_annotations() -> dict[str, str]:
    """Annotations the Targets of a scenario are created with (none unless a step says so)."""
    return {}


def create_target(
    you: You,
    namespace: str,
    target: str,
    notes: dict[str, str],
    labels: dict[str, str] | None = None,
) -> Obj:
    ns = you.names.namespace(namespace)
    name = you.names.target(target)
    created = you.solar.create(
        new_object("Target", name, ns, labels=labels, annotations=notes or None, spec=target_spec())
    )
    you.namespaces[name] = ns
    return created


@given(parsers.parse('the Target I create carries "{note}"'), target_fixture="creation_annotations")
def target_carries(note: str) -> dict[str, str]:
    key, value = annotation(note)
    return {key: value}


@given(parsers.parse('I have created the Target "{target}" in namespace "{namespace}"'))
@when(parsers.parse('I create the Target "{target}" in namespace "{namespace}"'))
def i_create_target(
    you: You, creation_annotations: dict[str, str], target: str, namespace: str
) -> None:
    create_target(you, namespace, target, creation_annotations)


@given(
    parsers.parse(
        'I have created the Target "{target}" in namespace "{namespace}" labelled "{labels}"'
    )
)
@when(
    parsers.parse('I create the Target "{target}" in namespace "{namespace}" labelled "{labels}"')
)
def i_create_labelled_target(
    you: You, creation_annotations: dict[str, str], target: str, namespace: str, labels: str
) -> None:
    create_target(you, namespace, target, creation_annotations, label_pairs(labels))


@when(parsers.re(r'I create the Targets (?P<targets>.+) in namespace "(?P<namespace>[^"]+)"'))
def i_create_targets(
    you: You, creation_annotations: dict[str, str], targets: str, namespace: str
) -> None:
    for target in quoted_names(targets):
        create_target(you, namespace, target, creation_annotations)


@given(
    parsers.parse(
        'a Target of the same name, "{target}", in namespace "{namespace}" has its own credential'
    )
)
def namesake_target(
    landscape: Landscape, you: You, waiter: Waiter, target: str, namespace: str
) -> None:
    """A second Target named like one of the scenario's, in another namespace. It is kept out of
    `you.namespaces` (which knows a Target by its name): the scenario's steps keep meaning the
    first one, and the scope check tries the token on this one as "other ns: own name"."""
    create_namesake(you, target, namespace)
    _namesake_issued(landscape, waiter, target, you.names.namespace(namespace), None)


@when(parsers.parse('I create a Target of the same name, "{target}", in namespace "{namespace}"'))
def create_namesake(you: You, target: str, namespace: str) -> None:
    ns = you.names.namespace(namespace)
    assert you.namespace_of(target) != ns, f"{target} already lives in {ns}"
    you.solar.create(new_object("Target", target, ns, spec=target_spec()))


@then(
    parsers.parse(
        'AgentCredentialReady of the Target "{target}" in namespace "{namespace}" is "True" with '
        'reason "Issued" within {seconds:d} seconds'
    )
)
def namesake_issued_soon(
    landscape: Landscape, you: You, waiter: Waiter, target: str, namespace: str, seconds: int
) -> None:
    _namesake_issued(landscape, waiter, target, you.names.namespace(namespace), seconds)


def _namesake_issued(
    landscape: Landscape, waiter: Waiter, target: str, ns: str, seconds: int | None
) -> None:
    def probe() -> tuple[bool, Any]:
        condition = credential_condition(landscape, ns, target) or {}
        return condition.get("reason") == "Issued", condition

    waiter.until(f"AgentCredentialReady of {ns}/{target} is True/Issued", probe, timeout=seconds)


@then(parsers.parse('the SolAr API has accepted the Target "{target}"'))
def target_accepted(landscape: Landscape, you: You, target: str) -> None:
    obj = landscape.solar.get("Target", target, you.namespace_of(target))
    assert obj["metadata"].get("uid"), f"the Target has no uid: {obj['metadata']}"
    assert obj["spec"]["renderRegistryRef"] == {"name": REGISTRY}, obj["spec"]


@then(parsers.parse('once SolAr has acted on the Target "{target}", it still holds what I wrote'))
def target_as_written(landscape: Landscape, you: You, waiter: Waiter, target: str) -> None:
    """The Target is yours: SolAr reports on it (its status), it does not rewrite it."""
    namespace = you.namespace_of(target)

    def probe() -> tuple[bool, Any]:
        condition = credential_condition(landscape, namespace, target)
        return condition is not None, condition or "no condition yet"

    waiter.until(f"SolAr sets {landscape.contract.condition_type} on {target}", probe)
    spec = landscape.solar.get("Target", target, namespace).get("spec")
    assert spec == target_spec(), f"the spec of {target} is {spec}, not what I wrote"


@then(parsers.parse('the Target "{target}" is the only object I have written'))
def only_target_written(you: You, target: str) -> None:
    written = [str(w) for w in you.solar.writes + you.target.writes]
    expected = [f"create Target {you.namespace_of(target)}/{target}"]
    assert written == expected, f"you wrote {written}; the page asks only for {expected}"


# --- first contact -------------------------------------------------------------------------------
def first_contact_for(landscape: Landscape, you: You, target: str) -> FirstContact:
    namespace = you.namespace_of(target)
    user, password = landscape.reader_credentials(namespace)
    return FirstContact(
        landscape.registry.host, namespace, target, user, password, landscape.registry.plain_http
    )


@given(parsers.parse('I have run the first-contact step for "{target}"'))
@when(parsers.parse('I run the first-contact step for "{target}"'))
def first_contact(landscape: Landscape, you: You, target: str) -> None:
    """kubectl apply -n <ns> -f regcred.yaml; kubectl apply -n <ns> -f helmrelease.yaml"""
    page = first_contact_for(landscape, you, target)
    try:
        you.target.create(new_object("Namespace", page.namespace))
    except ApiError as error:
        if error.status != 409:
            raise
    objects = [page.regcred(), *page.helmrelease()]
    for obj in objects:
        you.target.create(obj)
    you.first_contact_objects[target] = objects
    you.first_contact_writes = len(you.target.writes)


@when(parsers.parse('I write the page\'s regcred for "{target}"'), target_fixture="page_regcred")
def write_regcred(landscape: Landscape, you: You, target: str) -> Obj:
    return first_contact_for(landscape, you, target).regcred()


@when(
    parsers.parse('I write the page\'s helmrelease.yaml for "{target}"'),
    target_fixture="page_helmrelease",
)
def write_helmrelease(landscape: Landscape, you: You, target: str) -> WrittenHelmRelease:
    objects = first_contact_for(landscape, you, target).helmrelease()
    by_kind = {o["kind"]: o for o in objects}
    return WrittenHelmRelease(target, by_kind["OCIRepository"], by_kind["HelmRelease"])


# What the page's sentence lets differ: "Replace the registry host, the namespace and the Target
# name with your values" (and the pull user, which is the operator's); plain HTTP adds `insecure`.
REPLACEABLE = {
    ("Secret", "metadata.namespace"),
    ("Secret", "stringData..dockerconfigjson"),
    ("OCIRepository", "metadata.namespace"),
    ("OCIRepository", "spec.url"),
    ("HelmRelease", "metadata.namespace"),
}


@then(
    parsers.parse(
        "the objects I applied differ from the page's only in the registry host, the namespace, "
        "the Target name and the pull credentials"
    )
)
def only_placeholders_replaced(landscape: Landscape, you: You) -> None:
    assert you.first_contact_objects, "the scenario made no first contact"
    allowed = set(REPLACEABLE)
    if landscape.registry.plain_http:
        allowed.add(("OCIRepository", "spec.insecure"))
    page = {o["kind"]: o for o in page_objects()}
    for target, applied in you.first_contact_objects.items():
        assert sorted(o["kind"] for o in applied) == sorted(page), f"{target}: applied {applied}"
        extra = [
            f"{obj['kind']}: {path}"
            for obj in applied
            for path in differences(page[obj["kind"]], obj)
            if (obj["kind"], path) not in allowed
        ]
        assert extra == [], f"first contact for {target} changed more than the page allows: {extra}"
        source = next(o for o in applied if o["kind"] == "OCIRepository")
        expected = f"oci://{landscape.registry.host}/{you.namespace_of(target)}/bootstrap-{target}"
        assert source["spec"]["url"] == expected, source["spec"]["url"]


@then("I have written nothing to the target cluster since first contact")
def nothing_written_since(you: You) -> None:
    assert you.first_contact_writes is not None, "the scenario made no first contact"
    later = [str(w) for w in you.target.writes[you.first_contact_writes :]]
    assert later == [], f"you wrote to the target cluster after first contact: {later}"


@when(parsers.parse('I delete the Target "{target}"'), target_fixture="deleted_credential")
def delete_target(landscape: Landscape, you: You, target: str) -> list[ObjectRef]:
    """Delete the Target, noting first what its credential is made of."""
    noted = credential_objects(landscape, you.noted_token(target), target)
    you.solar.delete("Target", target, you.namespace_of(target))
    you.retired(target, "its deletion was requested", landscape.clock.now())
    return noted


@when(parsers.parse('someone deletes the token Secret of "{target}"'))
def delete_token_secret(landscape: Landscape, you: You, target: str) -> None:
    """Out of band: the Secret the Issued condition names, deleted by hand."""
    namespace = you.namespace_of(target)
    secret = token_secret(landscape, namespace, target)
    assert secret is not None, f"{target} has no token Secret to delete"
    you.solar.delete("Secret", secret["metadata"]["name"], namespace)
    you.retired(target, "its token Secret was deleted", landscape.clock.now())


# --- annotations ---------------------------------------------------------------------------------
@given(parsers.parse('I have annotated the Target "{target}" with "{note}"'))
@when(parsers.parse('I annotate the Target "{target}" with "{note}"'))
def annotate(landscape: Landscape, you: You, target: str, note: str) -> None:
    key, value = annotation(note)
    you.solar.patch(
        "Target", target, you.namespace_of(target), {"metadata": {"annotations": {key: value}}}
    )
    contract = landscape.contract
    if (key, value) == (contract.revocation_annotation, contract.revoked_value):
        you.retired(target, "the revocation annotation was set", landscape.clock.now())


@when(parsers.parse('I remove the annotation "{key}" from the Target "{target}"'))
def remove_annotation(you: You, target: str, key: str) -> None:
    you.solar.patch(
        "Target", target, you.namespace_of(target), {"metadata": {"annotations": {key: None}}}
    )


@when(parsers.parse('I remove the label "{key}" from the Target "{target}"'))
def remove_label(you: You, target: str, key: str) -> None:
    you.solar.patch(
        "Target", target, you.namespace_of(target), {"metadata": {"labels": {key: None}}}
    )


@given(parsers.parse('I have requested a new credential for "{target}"'))
@when(parsers.parse('I request a new credential for "{target}"'))
def request_rotation(landscape: Landscape, you: You, target: str) -> None:
    stamp = f"{landscape.clock.now():%Y%m%dT%H%M%S}-{secrets.token_hex(2)}"
    you.solar.patch(
        "Target",
        target,
        you.namespace_of(target),
        {"metadata": {"annotations": {landscape.contract.rotation_annotation: stamp}}},
    )


# --- check that it worked ------------------------------------------------------------------------
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
    reasons = ("connection refused", "unreachable", "timed out", "no route to host")
    assert "failed" in text and any(r in text.lower() for r in reasons), (
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


# --- the page's objects --------------------------------------------------------------------------
@then(parsers.parse('it is a Secret "{name}" of type "{secret_type}"'))
def regcred_is_secret(page_regcred: Obj, name: str, secret_type: str) -> None:
    seen = (page_regcred["kind"], page_regcred["metadata"]["name"], page_regcred.get("type"))
    assert seen == ("Secret", name, secret_type), f"the page's regcred is {seen}"


def _auths(page_regcred: Obj) -> dict[str, Any]:
    config = json.loads(page_regcred["stringData"][".dockerconfigjson"])
    return dict(config["auths"])


@then("its only entry is for the render registry host")
def regcred_host(landscape: Landscape, page_regcred: Obj) -> None:
    hosts = sorted(_auths(page_regcred))
    assert hosts == [landscape.registry.host], f"regcred has entries for {hosts}"


@then("its auth field is the base64 of its username and password")
def regcred_auth(page_regcred: Obj) -> None:
    for host, entry in _auths(page_regcred).items():
        expected = basic_auth(entry["username"], entry["password"])
        assert entry["auth"] == expected, f"the auth field for {host} does not match its user"


def expand_url(template: str, landscape: Landscape, you: You, target: str) -> str:
    """oci://<render-registry>/<namespace>/bootstrap-<target>, with page names made actual."""
    host, namespace, chart = template.removeprefix("oci://").split("/", 2)
    host = landscape.registry.host if host == "<render-registry>" else host
    namespace = (
        you.namespace_of(target) if namespace == "<namespace>" else you.names.namespace(namespace)
    )
    chart = chart.replace("<target>", target)
    return f"oci://{host}/{namespace}/{chart}"


@then(parsers.parse('the OCIRepository "{name}" has the URL {template}'))
def source_url(
    landscape: Landscape, you: You, page_helmrelease: WrittenHelmRelease, name: str, template: str
) -> None:
    source = page_helmrelease.source
    expected = expand_url(template, landscape, you, page_helmrelease.target)
    assert source["metadata"]["name"] == name, source["metadata"]
    assert source["spec"]["url"] == expected, f"URL {source['spec']['url']}, expected {expected}"


@then(
    parsers.parse('the OCIRepository selects the layer "{media_type}" with operation "{operation}"')
)
def source_layer(page_helmrelease: WrittenHelmRelease, media_type: str, operation: str) -> None:
    selector = page_helmrelease.source["spec"]["layerSelector"]
    assert selector == {"mediaType": media_type, "operation": operation}, selector


@then(
    parsers.parse(
        'the OCIRepository follows the semver range "{semver}" with the pull Secret "{secret}"'
    )
)
def source_ref(page_helmrelease: WrittenHelmRelease, semver: str, secret: str) -> None:
    spec = page_helmrelease.source["spec"]
    assert spec["ref"] == {"semver": semver}, spec["ref"]
    assert spec["secretRef"] == {"name": secret}, spec["secretRef"]


@then(parsers.parse('the HelmRelease "{name}" installs the chart of the OCIRepository "{source}"'))
def release_chart(page_helmrelease: WrittenHelmRelease, name: str, source: str) -> None:
    release = page_helmrelease.release
    assert release["metadata"]["name"] == name, release["metadata"]
    assert release["spec"]["chartRef"] == {"kind": "OCIRepository", "name": source}, release[
        "spec"
    ]["chartRef"]
