"""What the reference keeps per Target beside an upstream SolAr that renders the Releases
(solar_conformance/simulators/reference/upstream_delivery.py), checked on the in-memory API and
registry against upstream's types at SolAr 875449e6: `api/solar/v1alpha1/{release,
releasebinding,registrybinding}_types.go` and the conflict resolution by uniqueName and priority
in `pkg/controller/target_controller.go` (`resolveReleaseConflicts`)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from solar_conformance.core.api import ApiError, ClusterAPI, Obj, new_object, serve_kinds
from solar_conformance.core.catalog import CHART_RESOURCE, COMPONENT_KINDS
from solar_conformance.core.clock import VirtualClock
from solar_conformance.core.contract import Contract
from solar_conformance.core.policy import AccessPolicy
from solar_conformance.simulators.memory.cluster import InMemoryCluster
from solar_conformance.simulators.memory.registry import InMemoryRegistry
from solar_conformance.simulators.reference.controller import ControllerConfig, CredentialController
from solar_conformance.simulators.reference.render_config import RenderedRelease, RendererConfig
from solar_conformance.simulators.reference.renderer import Renderer
from solar_conformance.simulators.reference.upstream_delivery import (
    AGENT_TAG_VALUE,
    KEPT_FOR_ANNOTATION,
    UpstreamDelivery,
    per_target_name,
    placeholder_repository,
)

NAMESPACE = "team-a"
TARGET = "cluster-1"
AGENT = "solar-agent"
HOST = "registry.test:5000"
PUSHER = ("solar", "push-password")
CONTRACT = Contract()
AGENT_CHART = f"release-{AGENT}-{TARGET}"
PER_TARGET = per_target_name(AGENT, TARGET)


@dataclass
class Solar:
    admin: ClusterAPI
    registry: InMemoryRegistry


@pytest.fixture
def solar() -> Iterator[Solar]:
    forget = serve_kinds(COMPONENT_KINDS)
    try:
        cluster = InMemoryCluster("solar", VirtualClock())
        admin = cluster.admin()
        admin.create(new_object("Namespace", NAMESPACE))
        admin.create(
            new_object(
                "Secret",
                "push",
                NAMESPACE,
                type="kubernetes.io/basic-auth",
                stringData={"username": PUSHER[0], "password": PUSHER[1]},
            )
        )
        admin.create(
            new_object(
                "Registry",
                "render",
                NAMESPACE,
                spec={
                    "hostname": HOST,
                    "plainHTTP": True,
                    "solarSecretRef": {"name": "push"},
                    "targetPullSecretName": "regcred",
                },
            )
        )
        admin.create(
            new_object(
                "Release",
                AGENT,
                NAMESPACE,
                annotations={CONTRACT.agent_release_annotation: ""},
                spec={
                    "componentVersionRef": {"name": AGENT},
                    "uniqueName": f"{AGENT}-{NAMESPACE}",
                    "targetNamespace": "solar-system",
                    "priority": 5,
                },
            )
        )
        admin.create(
            new_object("Target", TARGET, NAMESPACE, spec={"renderRegistryRef": {"name": "render"}})
        )
        registry = InMemoryRegistry(HOST, AccessPolicy.for_namespaces(PUSHER[0], {}))
        registry.users[PUSHER[0]] = PUSHER[1]
        yield Solar(admin, registry)
    finally:
        forget()


def _deliver(solar: Solar, tag: str) -> None:
    admin = solar.admin
    UpstreamDelivery(admin, log=lambda _line: None).deliver(
        solar.registry.client(*PUSHER),
        admin.get("Registry", "render", NAMESPACE),
        admin.get("Target", TARGET, NAMESPACE),
        admin.get("Release", AGENT, NAMESPACE),
        RenderedRelease(AGENT, AGENT_CHART, tag, "solar-system"),
    )


def _get(solar: Solar, kind: str, name: str) -> Obj:
    return solar.admin.get(kind, name, NAMESPACE)


def test_each_target_gets_a_release_of_its_own_agent_chart_that_wins_the_page_releases_name(
    solar: Solar,
) -> None:
    _deliver(solar, "v0.0.1-0")
    version = _get(solar, "ComponentVersion", PER_TARGET)
    assert version["spec"]["resources"] == {
        CHART_RESOURCE: {
            "repository": f"{HOST}/{NAMESPACE}/{AGENT_CHART}",
            "insecure": True,
            "tag": "v0.0.1-0",
        }
    }
    assert version["spec"]["entrypoint"] == {"resourceName": CHART_RESOURCE, "type": "helm"}
    release = _get(solar, "Release", PER_TARGET)["spec"]
    assert release == {
        "componentVersionRef": {"name": PER_TARGET},
        "uniqueName": f"{AGENT}-{NAMESPACE}",  # the page's: one of the two is rendered
        "priority": 6,  # above the page's, so upstream keeps this one for the Target
        "targetNamespace": "solar-system",
        "values": {AGENT_TAG_VALUE: "v0.0.1-0"},
    }
    binding = _get(solar, "ReleaseBinding", PER_TARGET)["spec"]
    assert binding == {"targetRef": {"name": TARGET}, "releaseRef": {"name": PER_TARGET}}


def test_the_target_is_bound_to_its_render_registry_so_the_release_chart_pulls_with_its_secret(
    solar: Solar,
) -> None:
    _deliver(solar, "v0.0.1-0")
    bindings = solar.admin.list("RegistryBinding", NAMESPACE)
    assert [b["spec"] for b in bindings] == [
        {"targetRef": {"name": TARGET}, "registryRef": {"name": "render"}}
    ]


def test_the_page_releases_component_version_is_made_with_an_installable_empty_chart(
    solar: Solar,
) -> None:
    _deliver(solar, "v0.0.1-0")
    placeholder = _get(solar, "ComponentVersion", AGENT)["spec"]["resources"][CHART_RESOURCE]
    repository = placeholder_repository(NAMESPACE, AGENT)
    assert placeholder["repository"] == f"{HOST}/{repository}"
    assert placeholder["tag"] in solar.registry.catalog()[repository]


def test_a_component_version_the_page_release_already_has_is_kept_and_names_the_release(
    solar: Solar,
) -> None:
    release = _get(solar, "Release", AGENT)
    del release["spec"]["uniqueName"]
    solar.admin.update(release)
    given = new_object(
        "ComponentVersion",
        AGENT,
        NAMESPACE,
        spec={"componentRef": {"name": "agent-component"}, "tag": "1.0.0", "resources": {}},
    )
    solar.admin.create(given)
    _deliver(solar, "v0.0.1-0")
    assert _get(solar, "ComponentVersion", AGENT)["spec"] == given["spec"]
    # upstream's effective uniqueName of a Release without one: its component's name
    assert _get(solar, "Release", PER_TARGET)["spec"]["uniqueName"] == "agent-component"
    assert placeholder_repository(NAMESPACE, AGENT) not in solar.registry.catalog()


def test_a_new_agent_chart_moves_the_component_version_and_the_releases_generation(
    solar: Solar,
) -> None:
    _deliver(solar, "v0.0.1-0")
    first = _get(solar, "Release", PER_TARGET)["metadata"]["generation"]
    _deliver(solar, "v0.0.1-0")
    assert _get(solar, "Release", PER_TARGET)["metadata"]["generation"] == first
    _deliver(solar, "v0.0.1-1")
    version = _get(solar, "ComponentVersion", PER_TARGET)["spec"]
    assert version["resources"][CHART_RESOURCE]["tag"] == version["tag"] == "v0.0.1-1"
    # a new generation: a new release chart tag, so a new bootstrap chart for Flux's next poll
    assert _get(solar, "Release", PER_TARGET)["metadata"]["generation"] == first + 1


def test_what_is_kept_for_a_target_is_owned_by_it_and_goes_with_it(solar: Solar) -> None:
    _deliver(solar, "v0.0.1-0")
    uid = _get(solar, "Target", TARGET)["metadata"]["uid"]
    kept = [
        (kind, o)
        for kind in (
            "Component",
            "ComponentVersion",
            "Release",
            "ReleaseBinding",
            "RegistryBinding",
        )
        for o in solar.admin.list(kind, NAMESPACE)
        if KEPT_FOR_ANNOTATION in (o["metadata"].get("annotations") or {})
    ]
    assert {kind for kind, _ in kept} == {
        "Component",
        "ComponentVersion",
        "Release",
        "ReleaseBinding",
        "RegistryBinding",
    }
    for _, obj in kept:
        assert [ref["uid"] for ref in obj["metadata"]["ownerReferences"]] == [uid]
    solar.admin.delete("Target", TARGET, NAMESPACE)
    for kind, obj in kept:
        with pytest.raises(ApiError) as gone:
            solar.admin.get(kind, obj["metadata"]["name"], NAMESPACE)
        assert gone.value.status == 404
    assert _get(solar, "ComponentVersion", AGENT)  # the page Release's stays


def test_beside_upstream_the_renderer_pushes_the_agent_chart_and_no_bootstrap_chart(
    solar: Solar,
) -> None:
    admin = solar.admin
    admin.create(
        new_object("Release", "web", NAMESPACE, spec={"componentVersionRef": {"name": "web"}})
    )
    for release in (AGENT, "web"):
        admin.create(
            new_object(
                "ReleaseBinding",
                f"{release}-{TARGET}",
                NAMESPACE,
                spec={"targetRef": {"name": TARGET}, "releaseRef": {"name": release}},
            )
        )
    api_url = "https://solar-api.invalid:6443"
    clock = VirtualClock()
    CredentialController(
        admin, clock, CONTRACT, ControllerConfig(apiserver_url=api_url), log=lambda _line: None
    ).reconcile_all()
    renderer = Renderer(
        admin,
        lambda _host, user, password: solar.registry.client(user, password),
        clock,
        CONTRACT,
        RendererConfig(
            apiserver_url=api_url, owns_bootstrap_version=False, upstream_renders_bootstrap=True
        ),
        log=lambda _line: None,
    )
    for _ in range(2):  # the second render sees the per-Target binding the first one made
        renderer.render_target(admin.get("Target", TARGET, NAMESPACE))
    catalog = solar.registry.catalog()
    assert f"{NAMESPACE}/{AGENT_CHART}" in catalog
    assert not [r for r in catalog if "bootstrap" in r], catalog  # upstream renders it
    assert f"{NAMESPACE}/release-web" not in catalog  # upstream renders it too
    assert not [r for r in catalog if PER_TARGET in r], catalog  # nor its own per-Target Release
    version = _get(solar, "ComponentVersion", PER_TARGET)["spec"]
    assert version["tag"] in catalog[f"{NAMESPACE}/{AGENT_CHART}"]
