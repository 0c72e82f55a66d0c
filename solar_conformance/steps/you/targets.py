"""You and your Targets: create them (labelled, annotated, a namesake in another namespace),
annotate and label them, ask for a new credential, delete them or their token Secret; what SolAr
keeps of what you wrote."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from pytest_bdd import given, parsers, then, when

from solar_conformance.core.api import Obj, new_object
from solar_conformance.core.landscape import Landscape
from solar_conformance.core.waiting import Waiter
from solar_conformance.page.deletion import wait_until_gone
from solar_conformance.page.lookup import (
    ObjectRef,
    credential_condition,
    credential_objects,
    token_secret,
)
from solar_conformance.page.setup import REGISTRY
from solar_conformance.plugin.actors import You
from solar_conformance.steps.common import annotation, label_pairs, quoted_names


def lost_fields(written: Obj, stored: Obj, path: str = "spec") -> list[str]:
    """What of `written` `stored` does not hold. An API server may add defaults and may leave out
    an empty value (`omitempty`), so neither counts."""
    lost: list[str] = []
    for key, value in written.items():
        here = f"{path}.{key}"
        if value in ({}, [], "", None) and stored.get(key) in ({}, [], "", None):
            continue
        if isinstance(value, dict) and isinstance(stored.get(key), dict):
            lost += lost_fields(value, stored[key], here)
        elif stored.get(key) != value:
            lost.append(f"{here}: wrote {value!r}, stored {stored.get(key)!r}")
    return lost


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
    you.stored_specs[name] = created.get("spec") or {}
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
    lost = lost_fields(target_spec(), obj.get("spec") or {})
    assert not lost, f"the stored Target lost what I wrote: {lost}; its spec is {obj.get('spec')}"


@then(parsers.parse('once SolAr has acted on the Target "{target}", it still holds what I wrote'))
def target_as_written(landscape: Landscape, you: You, waiter: Waiter, target: str) -> None:
    """The Target is yours: SolAr reports on it (its status), it does not rewrite it."""
    namespace = you.namespace_of(target)

    def probe() -> tuple[bool, Any]:
        condition = credential_condition(landscape, namespace, target)
        return condition is not None, condition or "no condition yet"

    waiter.until(f"SolAr sets {landscape.contract.condition_type} on {target}", probe)
    spec = landscape.solar.get("Target", target, namespace).get("spec") or {}
    lost = lost_fields(target_spec(), spec)
    assert not lost, f"the spec of {target} lost what I wrote: {lost}; it is {spec}"
    stored = you.stored_specs.get(target, spec)
    assert spec == stored, f"SolAr rewrote the spec of {target}: {stored} became {spec}"


@then(parsers.parse('the Target "{target}" is the only object I have written'))
def only_target_written(you: You, target: str) -> None:
    written = [str(w) for w in you.solar.writes + you.target.writes]
    expected = [f"create Target {you.namespace_of(target)}/{target}"]
    assert written == expected, f"you wrote {written}; the page asks only for {expected}"


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


@when(parsers.parse('I delete the Target "{target}"'), target_fixture="deleted_credential")
def delete_target(landscape: Landscape, you: You, waiter: Waiter, target: str) -> list[ObjectRef]:
    """Delete the Target, noting first what its credential is made of, and wait until it is gone,
    as `kubectl delete` waits: a SolAr may hold a Target with its finalizers while it cleans up.
    What the deletion withdraws is timed from the request, not from the end of this wait."""
    namespace = you.namespace_of(target)
    noted = credential_objects(landscape, you.noted_token(target), target)
    you.solar.delete("Target", target, namespace)
    you.retired(target, "its deletion was requested", landscape.clock.now())
    wait_until_gone(you.solar, waiter, "Target", target, namespace)
    return noted


@when(parsers.parse('someone deletes the token Secret of "{target}"'))
def delete_token_secret(landscape: Landscape, you: You, target: str) -> None:
    """Out of band: the Secret the Issued condition names, deleted by hand."""
    namespace = you.namespace_of(target)
    secret = token_secret(landscape, namespace, target)
    assert secret is not None, f"{target} has no token Secret to delete"
    you.solar.delete("Secret", secret["metadata"]["name"], namespace)
    you.retired(target, "its token Secret was deleted", landscape.clock.now())
