"""What upstream SolAr renders a Release from, published by the harness beside upstream: the
Release's application chart in the render registry, and the Component and ComponentVersion that
upstream's controller looks the Release's `spec.componentVersionRef` up by
(docs/backends/upstream.md, "What upstream renders, and from what").

The shapes follow upstream's types at SolAr 875449e6, where every field below is required (no
`omitempty`) and nothing else is:

- Component, `api/solar/v1alpha1/component_types.go`: `spec.scheme`, `spec.registry`,
  `spec.repository`. Nothing renders from it; upstream's discovery writes one per OCM component
  (`pkg/discovery/apiwriter/apiwriter.go`, `ensureComponent`) and its controller puts a
  protecting finalizer on it (`pkg/controller/componentversion_controller.go`).
- ComponentVersion, `api/solar/v1alpha1/componentversion_types.go`: `spec.componentRef.name`,
  `spec.tag`, `spec.resources` (by resource name: `repository` as host and path without a scheme,
  `insecure`, `tag`) and `spec.entrypoint` (`resourceName`, `type: helm`). The release chart
  upstream renders points Flux's OCIRepository at `oci://<repository>` with `ref.tag: <tag>`
  and `insecure: true` when the resource says so, and fails under Helm when the entrypoint
  names no resource or one without repository or tag
  (`pkg/renderer/template/release/templates/release.yaml`).

No OCM component descriptor is published: of upstream's programs only solar-discovery reads OCM,
and the harness does not run it; solar-controller-manager and solar-renderer read the
ComponentVersion only.
"""

from __future__ import annotations

from dataclasses import dataclass

from solar_conformance.core import yamlio
from solar_conformance.core.api import (
    SOLAR_GROUP,
    SOLAR_VERSION,
    ApiError,
    ClusterAPI,
    Kind,
    Obj,
    serve_kinds,
)
from solar_conformance.core.contract import Contract
from solar_conformance.core.landscape import Landscape, RegistryEndpoint
from solar_conformance.core.oci import Chart, RegistryClient
from solar_conformance.core.upstream_parts import upstream_parts

COMPONENT = Kind("Component", SOLAR_GROUP, SOLAR_VERSION, "components")
COMPONENT_VERSION = Kind("ComponentVersion", SOLAR_GROUP, SOLAR_VERSION, "componentversions")
COMPONENT_KINDS = (COMPONENT, COMPONENT_VERSION)
# The label upstream's discovery gives a ComponentVersion: the name of its Component.
COMPONENT_LABEL = "solar.opendefense.cloud/component"
CHART_RESOURCE = "chart"
ENTRYPOINT_TYPE = "helm"
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
    repository = chart_repository(namespace, release)
    component = _namespaced(
        COMPONENT,
        release,
        namespace,
        {},
        {
            "scheme": "http" if registry.plain_http else "https",
            "registry": registry.host,
            "repository": repository,
        },
    )
    version = _namespaced(
        COMPONENT_VERSION,
        component_version_name(release),
        namespace,
        {COMPONENT_LABEL: release},
        {
            "componentRef": {"name": release},
            "tag": APPLICATION_VERSION,
            "resources": {
                CHART_RESOURCE: {
                    "repository": f"{registry.host}/{repository}",
                    "insecure": registry.plain_http,
                    "tag": APPLICATION_VERSION,
                }
            },
            "entrypoint": {"resourceName": CHART_RESOURCE, "type": ENTRYPOINT_TYPE},
        },
    )
    return component, version


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


def _namespaced(kind: Kind, name: str, namespace: str, labels: dict[str, str], spec: Obj) -> Obj:
    """An object of a kind the harness addresses only beside upstream (not in `KINDS` until
    `publish` serves it)."""
    meta: Obj = {"name": name, "namespace": namespace}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": kind.api_version, "kind": kind.kind, "metadata": meta, "spec": spec}


def _create_or_keep(api: ClusterAPI, obj: Obj) -> None:
    try:
        api.create(obj)
    except ApiError as error:
        if error.status != 409:
            raise
