"""Upstream SolAr's catalog kinds, Component and ComponentVersion: what upstream renders a Release
from (docs/backends/upstream.md, "What upstream renders, and from what").

The shapes follow upstream's types at SolAr 875449e6, where every field below is required (no
`omitempty`) and nothing else is:

- Component, `api/solar/v1alpha1/component_types.go`: `spec.scheme`, `spec.registry`,
  `spec.repository`. Nothing renders from it; upstream's discovery writes one per OCM component
  (`pkg/discovery/apiwriter/apiwriter.go`, `ensureComponent`).
- ComponentVersion, `api/solar/v1alpha1/componentversion_types.go`: `spec.componentRef.name`,
  `spec.tag`, `spec.resources` (by resource name: `repository` as host and path without a scheme,
  `insecure`, `tag`) and `spec.entrypoint` (`resourceName`, `type: helm`). The release chart
  upstream renders points Flux's OCIRepository at `oci://<repository>` with `ref.tag: <tag>`
  and `insecure: true` when the resource says so, and fails under Helm when the entrypoint
  names no resource or one without repository or tag
  (`pkg/renderer/template/release/templates/release.yaml`).

Of upstream's programs only solar-discovery reads OCM; solar-controller-manager and
solar-renderer read the ComponentVersion object only, so one made through the API is enough.
The kinds are addressed only beside upstream (`serve_kinds`): the reference does not model them.
"""

from __future__ import annotations

from dataclasses import dataclass

from solar_conformance.core.api import SOLAR_GROUP, SOLAR_VERSION, Kind, Obj

COMPONENT = Kind("Component", SOLAR_GROUP, SOLAR_VERSION, "components")
COMPONENT_VERSION = Kind("ComponentVersion", SOLAR_GROUP, SOLAR_VERSION, "componentversions")
COMPONENT_KINDS = (COMPONENT, COMPONENT_VERSION)
# The label upstream's discovery gives a ComponentVersion: the name of its Component.
COMPONENT_LABEL = "solar.opendefense.cloud/component"
CHART_RESOURCE = "chart"
ENTRYPOINT_TYPE = "helm"


@dataclass(frozen=True)
class ChartLocation:
    """A chart in a registry, as the target cluster reaches it."""

    host: str
    plain_http: bool
    repository: str  # the path under the host
    tag: str


def catalog_objects(
    name: str, namespace: str, chart: ChartLocation, labels: dict[str, str] | None = None
) -> tuple[Obj, Obj]:
    """The Component `name` and its ComponentVersion `name`, whose one resource and entrypoint is
    `chart`; `labels` go on both, beside the label discovery gives the ComponentVersion."""
    own = dict(labels or {})
    component = namespaced(
        COMPONENT,
        name,
        namespace,
        own,
        {
            "scheme": "http" if chart.plain_http else "https",
            "registry": chart.host,
            "repository": chart.repository,
        },
    )
    version = namespaced(
        COMPONENT_VERSION,
        name,
        namespace,
        {**own, COMPONENT_LABEL: name},
        {
            "componentRef": {"name": name},
            "tag": chart.tag,
            "resources": {
                CHART_RESOURCE: {
                    "repository": f"{chart.host}/{chart.repository}",
                    "insecure": chart.plain_http,
                    "tag": chart.tag,
                }
            },
            "entrypoint": {"resourceName": CHART_RESOURCE, "type": ENTRYPOINT_TYPE},
        },
    )
    return component, version


def namespaced(kind: Kind, name: str, namespace: str, labels: dict[str, str], spec: Obj) -> Obj:
    meta: Obj = {"name": name, "namespace": namespace}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": kind.api_version, "kind": kind.kind, "metadata": meta, "spec": spec}
