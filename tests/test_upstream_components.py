"""What the harness publishes beside upstream SolAr so that upstream renders a Release
(solar_conformance/page/components.py), checked on the in-memory API and registry against the
shapes upstream's types require at SolAr 875449e6: `api/solar/v1alpha1/component_types.go`,
`api/solar/v1alpha1/componentversion_types.go`, `api/solar/release_rest.go` (a Release must name
its ComponentVersion) and the release chart that points Flux at the entrypoint resource,
`pkg/renderer/template/release/templates/release.yaml`. Off by default, and nowhere but beside
upstream (solar_conformance/core/upstream_parts.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from solar_conformance.backends.sim.landscape import SimLandscape
from solar_conformance.core.api import KINDS, new_object, serve_kinds
from solar_conformance.core.catalog import COMPONENT_KINDS, COMPONENT_LABEL
from solar_conformance.core.contract import Contract
from solar_conformance.core.landscape import RegistryEndpoint
from solar_conformance.core.upstream_parts import RENDERS_RELEASES_ENV, upstream_parts
from solar_conformance.page.charts import pull_source
from solar_conformance.page.components import (
    component_objects,
    component_version_name,
    publish,
    publish_beside_upstream,
)
from solar_conformance.page.setup import set_up_registry

NAMESPACE = "team-a"
RELEASE = "web"


@pytest.fixture
def landscape() -> Iterator[SimLandscape]:
    landscape = SimLandscape(Contract())
    forget = serve_kinds(COMPONENT_KINDS)  # what `publish` serves stays in this test
    try:
        set_up_registry(landscape, landscape.solar, NAMESPACE)
        yield landscape
    finally:
        forget()
        landscape.close()


def _publish(landscape: SimLandscape) -> None:
    pusher = landscape.registry_as(*landscape.push_credentials())
    publish(landscape.solar, pusher, landscape.registry, landscape.contract, RELEASE, NAMESPACE)


def test_the_switch_is_off_unless_upstream_and_the_environment_say_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    on = {RENDERS_RELEASES_ENV: "1"}
    assert upstream_parts("upstream", on).renders_releases
    assert not upstream_parts("upstream", {}).renders_releases
    assert not upstream_parts("upstream", {RENDERS_RELEASES_ENV: "yes"}).renders_releases
    for implementation in ("reference", "external"):
        assert not upstream_parts(implementation, on).renders_releases
    monkeypatch.delenv(RENDERS_RELEASES_ENV, raising=False)
    assert not upstream_parts("upstream").renders_releases


def test_the_objects_have_the_fields_upstreams_types_require() -> None:
    component, version = component_objects(
        RegistryEndpoint("registry.test:5000", True, "in-memory zot model"), RELEASE, NAMESPACE
    )
    assert component["apiVersion"] == version["apiVersion"] == "solar.opendefense.cloud/v1alpha1"
    assert component["spec"] == {
        "scheme": "http",
        "registry": "registry.test:5000",
        "repository": f"{NAMESPACE}/components/{RELEASE}",
    }
    spec = version["spec"]
    assert set(spec) == {"componentRef", "tag", "resources", "entrypoint"}
    assert spec["componentRef"] == {"name": component["metadata"]["name"]}
    assert version["metadata"]["labels"] == {COMPONENT_LABEL: component["metadata"]["name"]}
    assert spec["tag"]
    entrypoint = spec["entrypoint"]
    assert entrypoint["type"] == "helm"
    resource = spec["resources"][entrypoint["resourceName"]]
    # ResourceAccess: repository (host and path, no scheme: the chart writes `oci://` before
    # it), insecure and tag, all required.
    assert resource == {
        "repository": f"registry.test:5000/{NAMESPACE}/components/{RELEASE}",
        "insecure": True,
        "tag": spec["tag"],
    }
    secure, _ = component_objects(
        RegistryEndpoint("registry.test", False, "zot"), RELEASE, NAMESPACE
    )
    assert secure["spec"]["scheme"] == "https"


def test_the_release_names_the_published_component_version(landscape: SimLandscape) -> None:
    _publish(landscape)
    landscape.solar.create(
        new_object(
            "Release",
            RELEASE,
            NAMESPACE,
            spec={"componentVersionRef": {"name": component_version_name(RELEASE)}},
        )
    )
    release = landscape.solar.get("Release", RELEASE, NAMESPACE)
    reference = release["spec"]["componentVersionRef"]["name"]
    assert reference  # upstream refuses an empty one
    version = landscape.solar.get("ComponentVersion", reference, NAMESPACE)
    component = landscape.solar.get("Component", version["spec"]["componentRef"]["name"], NAMESPACE)
    assert component["spec"]["registry"] == landscape.registry.host


def test_flux_pulls_the_entrypoint_chart_with_the_namespaces_pull_user(
    landscape: SimLandscape,
) -> None:
    """The release chart's OCIRepository, as upstream renders it: `oci://<repository>` and
    `ref.tag: <tag>`; the namespace's pull Secret reads it (the registry allows no anonymous
    pull)."""
    _publish(landscape)
    version = landscape.solar.get("ComponentVersion", component_version_name(RELEASE), NAMESPACE)
    resource = version["spec"]["resources"][version["spec"]["entrypoint"]["resourceName"]]
    host, _, repository = resource["repository"].partition("/")
    assert host == landscape.registry.host
    reader = landscape.registry_as(*landscape.reader_credentials(NAMESPACE))
    chart = pull_source(reader, repository, {"tag": resource["tag"]})
    (configmap,) = chart.manifests()
    assert configmap["kind"] == "ConfigMap"
    assert configmap["metadata"]["labels"] == {landscape.contract.release_label: RELEASE}


def test_publishing_again_keeps_what_is_there(landscape: SimLandscape) -> None:
    _publish(landscape)
    _publish(landscape)
    assert len(landscape.solar.list("Component", NAMESPACE)) == 1
    assert len(landscape.solar.list("ComponentVersion", NAMESPACE)) == 1


def test_nothing_is_published_beside_the_reference_nor_with_the_switch_off(
    landscape: SimLandscape, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(RENDERS_RELEASES_ENV, "1")
    assert publish_beside_upstream(landscape, landscape.solar, RELEASE, NAMESPACE) is None
    landscape.implementation = "upstream"
    monkeypatch.delenv(RENDERS_RELEASES_ENV)
    assert publish_beside_upstream(landscape, landscape.solar, RELEASE, NAMESPACE) is None
    assert landscape.solar.list("ComponentVersion", NAMESPACE) == []
    monkeypatch.setenv(RENDERS_RELEASES_ENV, "1")
    published = publish_beside_upstream(landscape, landscape.solar, RELEASE, NAMESPACE)
    assert published is not None
    assert published.component_version["metadata"]["name"] == RELEASE
    assert [v["metadata"]["name"] for v in landscape.solar.list("ComponentVersion", NAMESPACE)] == [
        RELEASE
    ]


def test_the_catalog_kinds_are_served_only_once_published() -> None:
    """The reference's kinds (and so its CRDs and the sim's discovery) stay as they were."""
    assert "ComponentVersion" not in KINDS and "Component" not in KINDS
    forget = serve_kinds(COMPONENT_KINDS)
    assert KINDS["ComponentVersion"].plural == "componentversions"
    forget()
    assert "ComponentVersion" not in KINDS and "Component" not in KINDS
