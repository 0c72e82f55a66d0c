"""The operator: sets up the solar-agent once per namespace, configures the controller."""

from __future__ import annotations

from contextlib import ExitStack

from pytest_bdd import given, parsers, then, when

from solar_conformance.core.api import annotations_of, new_object
from solar_conformance.core.capabilities import Capability, needs
from solar_conformance.core.landscape import Landscape
from solar_conformance.core.waiting import Waiter
from solar_conformance.page.components import component_version_name, publish_beside_upstream
from solar_conformance.page.setup import AGENT_RELEASE, ensure_namespace, set_up_namespace
from solar_conformance.plugin.actors import Operator, You
from solar_conformance.plugin.names import Names
from solar_conformance.steps.common import label_pairs


@given(parsers.parse('the operator has set up the solar-agent in namespace "{namespace}"'))
@when(parsers.parse('the operator sets up the solar-agent in namespace "{namespace}"'))
def set_up_agent(landscape: Landscape, operator: Operator, names: Names, namespace: str) -> None:
    ns = names.namespace(namespace)
    if ns in operator.set_up:
        assert landscape.solar.list("Profile", ns), f"the setup of {ns} lost its Profile"
        return
    set_up_namespace(landscape, operator.solar, ns)
    operator.set_up.add(ns)


@given(parsers.parse('namespace "{namespace}" holds no solar-agent setup'))
def namespace_without_setup(landscape: Landscape, names: Names, namespace: str) -> None:
    ns = names.namespace(namespace)
    ensure_namespace(landscape, ns)
    assert landscape.solar.list("Profile", ns) == [], f"namespace {ns} already holds a Profile"
    assert landscape.solar.list("Release", ns) == [], f"namespace {ns} already holds a Release"


@then(
    parsers.parse('namespace "{namespace}" holds exactly one Release annotated target-credential')
)
def one_agent_release(landscape: Landscape, names: Names, namespace: str) -> None:
    ns = names.namespace(namespace)
    releases = [
        r["metadata"]["name"]
        for r in landscape.solar.list("Release", ns)
        if landscape.contract.agent_release_annotation in annotations_of(r)
    ]
    assert len(releases) == 1, f"Releases annotated target-credential in {ns}: {releases}"


@then(
    parsers.parse(
        'namespace "{namespace}" holds exactly one Profile with an empty targetSelector that '
        "references it"
    )
)
def one_profile(landscape: Landscape, names: Names, namespace: str) -> None:
    ns = names.namespace(namespace)
    agent = [
        r["metadata"]["name"]
        for r in landscape.solar.list("Release", ns)
        if landscape.contract.agent_release_annotation in annotations_of(r)
    ]
    profiles = [
        p
        for p in landscape.solar.list("Profile", ns)
        if p.get("spec", {}).get("releaseRef", {}).get("name") in agent
    ]
    seen = [(p["metadata"]["name"], p.get("spec", {}).get("targetSelector")) for p in profiles]
    assert len(profiles) == 1, f"Profiles referencing the agent Release in {ns}: {seen}"
    assert profiles[0]["spec"].get("targetSelector") == {}, (
        f"the Profile's targetSelector is not empty: {seen}"
    )


@given(
    parsers.parse(
        'the operator has set the targetNamespace of the agent Release in namespace "{namespace}" '
        'to "{target_namespace}"'
    )
)
def agent_release_target_namespace(
    landscape: Landscape, operator: Operator, names: Names, namespace: str, target_namespace: str
) -> None:
    """Where on the target cluster the agent runs: another namespace than the Target's. A merge
    patch, as `kubectl patch` sends it: SolAr's controllers write the Release too (finalizers,
    status), and a read-then-replace would be refused for their write in between."""
    ns = names.namespace(namespace)
    releases = [
        r
        for r in operator.solar.list("Release", ns)
        if landscape.contract.agent_release_annotation in annotations_of(r)
    ]
    assert len(releases) == 1, f"namespace {ns} holds {len(releases)} agent Releases, not one"
    meta = releases[0]["metadata"]
    operator.solar.patch(
        "Release",
        meta["name"],
        meta.get("namespace", ns),
        {"spec": {"targetNamespace": names.namespace(target_namespace)}},
    )


@given(
    parsers.parse(
        'the operator has also created the Registries "{first}" and "{second}" in namespace '
        '"{namespace}", each with a pull Secret of its own'
    )
)
def more_registries(
    landscape: Landscape, operator: Operator, names: Names, first: str, second: str, namespace: str
) -> None:
    """Registries beside the one the namespace's Targets reference: the same registry and push
    credentials, another pull Secret name each (what a SolAr that renders for the wrong one
    would show)."""
    ns = names.namespace(namespace)
    existing = landscape.solar.list("Registry", ns)
    assert len(existing) == 1, f"namespace {ns} holds {len(existing)} Registries, not one"
    for name in (first, second):
        spec = {**existing[0]["spec"], "targetPullSecretName": f"regcred-{name}"}
        operator.solar.create(new_object("Registry", names.release(name), ns, spec=spec))


@given("the operator has set controller.agent.apiserverURL")
@when("the operator sets controller.agent.apiserverURL")
@needs(Capability.CONFIGURE_APISERVER_URL)
def set_apiserver_url(landscape: Landscape) -> None:
    landscape.configure_apiserver_url(landscape.solar_api_url)


@given("the operator has not set controller.agent.apiserverURL")
@when("the operator unsets controller.agent.apiserverURL")
@needs(Capability.CONFIGURE_APISERVER_URL)
def unset_apiserver_url(landscape: Landscape, you: You, cleanup: ExitStack) -> None:
    landscape.configure_apiserver_url(None)
    cleanup.callback(landscape.configure_apiserver_url, landscape.solar_api_url)
    for target in you.namespaces:
        you.retired(target, "controller.agent.apiserverURL was unset", landscape.clock.now())


def _create_release(
    landscape: Landscape, operator: Operator, names: Names, release: str, namespace: str
) -> str:
    """The Release, and beside upstream, where it renders the Releases, what it renders it from
    (solar_conformance/page/components.py) first, so that the Release resolves at once."""
    name = names.release(release)
    publish_beside_upstream(landscape, operator.solar, name, namespace)
    operator.solar.create(
        new_object(
            "Release",
            name,
            namespace,
            spec={
                "componentVersionRef": {"name": component_version_name(name)},
                "uniqueName": f"{name}-{namespace}",
                "targetNamespace": names.namespace(name),
            },
        )
    )
    return name


def _bind(operator: Operator, release: str, target: str, namespace: str) -> None:
    operator.solar.create(
        new_object(
            "ReleaseBinding",
            f"{release}-{target}",
            namespace,
            spec={"targetRef": {"name": target}, "releaseRef": {"name": release}},
        )
    )


@given(
    parsers.parse(
        'the operator has a Profile for the Release "{release}" in namespace "{namespace}" that '
        'selects "{selector}"'
    )
)
def profile_with_selector(
    landscape: Landscape,
    operator: Operator,
    names: Names,
    release: str,
    namespace: str,
    selector: str,
) -> None:
    ns = names.namespace(namespace)
    name = _create_release(landscape, operator, names, release, ns)
    operator.solar.create(
        new_object(
            "Profile",
            f"{name}-selected",
            ns,
            spec={
                "releaseRef": {"name": name},
                "targetSelector": {"matchLabels": label_pairs(selector)},
                "userdata": {},
            },
        )
    )


@given(parsers.parse('the operator has created the Release "{release}" in namespace "{namespace}"'))
def create_release(
    landscape: Landscape, operator: Operator, names: Names, release: str, namespace: str
) -> None:
    _create_release(landscape, operator, names, release, names.namespace(namespace))


@when(parsers.parse('the operator binds the Release "{release}" to "{target}"'))
def bind_release(
    landscape: Landscape, operator: Operator, you: You, names: Names, release: str, target: str
) -> None:
    namespace = you.namespace_of(target)
    name = _create_release(landscape, operator, names, release, namespace)
    _bind(operator, name, target, namespace)


@given(
    parsers.parse(
        'the operator has bound the Release "{release}" to "{target}" in namespace "{namespace}"'
    )
)
def bind_release_first(
    landscape: Landscape,
    operator: Operator,
    names: Names,
    release: str,
    target: str,
    namespace: str,
) -> None:
    """The ReleaseBinding exists before the Target does, so before its token can."""
    ns = names.namespace(namespace)
    name = _create_release(landscape, operator, names, release, ns)
    _bind(operator, name, names.target(target), ns)


@when(parsers.parse('the operator binds the existing Release "{release}" to "{target}"'))
def bind_existing_release(
    landscape: Landscape, operator: Operator, you: You, names: Names, release: str, target: str
) -> None:
    namespace = you.namespace_of(target)
    name = names.release(release)
    landscape.solar.get("Release", name, namespace)  # only the ReleaseBinding is new
    _bind(operator, name, target, namespace)


@then(
    parsers.parse(
        'the Profile of namespace "{namespace}" matches only the Targets of its own namespace'
    )
)
def profile_matches_own_namespace(
    landscape: Landscape, names: Names, waiter: Waiter, namespace: str
) -> None:
    ns = names.namespace(namespace)
    own = sorted(t["metadata"]["name"] for t in landscape.solar.list("Target", ns))

    def matched() -> tuple[bool, object]:
        profile = landscape.solar.get("Profile", AGENT_RELEASE, ns)
        count = profile.get("status", {}).get("matchedTargets")
        return count == len(own), {"matchedTargets": count, "Targets in namespace": own}

    waiter.until(f"the Profile of {ns} matches exactly its {len(own)} Targets", matched)
