"""What upstream SolAr renders a Release from, published by the harness beside upstream: the
Release's application chart in the render registry, and the Component and ComponentVersion that
upstream's controller looks the Release's `spec.componentVersionRef` up by
(docs/backends/upstream.md, "What upstream renders, and from what"; the kinds' shapes are in
solar_conformance/core/catalog.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from solar_conformance.core import yamlio
from solar_conformance.core.api import ApiError, ClusterAPI, Obj, serve_kinds
from solar_conformance.core.catalog import COMPONENT_KINDS, ChartLocation, catalog_objects
from solar_conformance.core.contract import Contract
from solar_conformance.core.landscape import Landscape, RegistryEndpoint
from solar_conformance.core.oci import Chart, RegistryClient
from solar_conformance.core.upstream_parts import upstream_parts

APPLICATION_VERSION = "0.1.0"


@dataclass(frozen=True)
class PublishedComponent:
    component: Obj
    component_version: Obj
    chart_repository: str  # the application chart's repository in the render registry
    chart_tag: str


def component_version_name(release: str) -> str:
    """The ComponentVersion a Release of the harness names in `spec.componentVersionRef`: its
    own name."""
    return release


def chart_repository(namespace: str, release: str) -> str:
    """Where the application chart lies: under the namespace, so the namespace's pull Secret
    reads it, and apart from the `release-*` and `bootstrap-*` charts SolAr renders."""
    return f"{namespace}/components/{release}"


def application_chart(contract: Contract, release: str) -> Chart:
    """What the Release installs on the target: a ConfigMap that names it, as the reference's
    release chart holds."""
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": release, "labels": {contract.release_label: release}},
        "data": {"release": release, "componentVersion": component_version_name(release)},
    }
    return Chart(
        f"component-{release}",
        APPLICATION_VERSION,
        templates={"configmap.yaml": yamlio.dump(configmap)},
    )


def component_objects(registry: RegistryEndpoint, release: str, namespace: str) -> tuple[Obj, Obj]:
    """The Component and the ComponentVersion of one Release, naming its application chart as
    the target cluster reaches the render registry."""
    chart = ChartLocation(
        registry.host,
        registry.plain_http,
        chart_repository(namespace, release),
        APPLICATION_VERSION,
    )
    return catalog_objects(component_version_name(release), namespace, chart)


def publish(
    api: ClusterAPI,
    pusher: RegistryClient,
    registry: RegistryEndpoint,
    contract: Contract,
    release: str,
    namespace: str,
) -> PublishedComponent:
    """Push the application chart, then create the Component and the ComponentVersion (the
    latter last: its existence is what lets upstream render). Objects already there are kept."""
    serve_kinds(COMPONENT_KINDS)
    repository = chart_repository(namespace, release)
    chart = application_chart(contract, release)
    pusher.push_chart(repository, chart)
    component, version = component_objects(registry, release, namespace)
    for obj in (component, version):
        _create_or_keep(api, obj)
    return PublishedComponent(component, version, repository, chart.version)


def publish_beside_upstream(
    landscape: Landscape, api: ClusterAPI, release: str, namespace: str
) -> PublishedComponent | None:
    """`publish` where upstream renders the Releases (solar_conformance/core/upstream_parts.py);
    nothing anywhere else."""
    if not upstream_parts(landscape.implementation).renders_releases:
        return None
    pusher = landscape.registry_as(*landscape.push_credentials())
    return publish(api, pusher, landscape.registry, landscape.contract, release, namespace)


def _create_or_keep(api: ClusterAPI, obj: Obj) -> None:
    try:
        api.create(obj)
    except ApiError as error:
        if error.status != 409:
            raise
