"""A conforming variant of solar-renderer that delivers each bound Release as upstream SolAr's
renderer does (pkg/renderer/template/{bootstrap,release}/templates/release.yaml): the bootstrap
chart's HelmRelease for a Release names no targetNamespace and installs a release chart into the
Target's namespace; that chart holds an inner OCIRepository/HelmRelease pair, named
`<helm release>-<component>` and labelled with the component, and it is the inner HelmRelease
that carries the Release's targetNamespace and installs the Release's own chart.

`wrapped_in_release_charts` builds the patches, for the variant here and for the mutants of
hunt_passes_delivery.py that break that shape (an inner HelmRelease that installs elsewhere, an
inner source that pulls nothing)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from solar_conformance.core import yamlio
from solar_conformance.core.oci import HELM_CHART_LAYER, Chart
from tests.mutants.catalogue.variants_delivery import _edited
from tests.mutants.model import Patch, Replace, patch, variant

CHARTS = "solar_conformance.simulators.reference.render_charts:ReleaseCharts"
R = "solar_conformance.simulators.reference.renderer:Renderer"
COMPONENT_LABEL = "solar.opendefense.cloud/component"
RELEASE_CHART_SUFFIX = "-flux"

# The namespace the reference installs the Release into -> the inner HelmRelease's
# targetNamespace (None: it names none, so it installs where the release chart went)
InnerNamespace = Callable[[str], str | None]


def _component(release: Any) -> str:
    spec = release.get("spec") or {}
    return str((spec.get("componentVersionRef") or {}).get("name") or release["metadata"]["name"])


def release_chart(
    registry: Any,
    namespace: str,
    component: str,
    chart: str,
    version: str,
    inner_namespace: str | None,
    tag: str,
) -> Chart:
    """The release chart of one Release, tagged `version`: the inner pair that installs `chart`
    at `tag` from the namespace's repositories, with the pull Secret the bootstrap chart's
    sources name."""
    spec = registry["spec"]
    name = f"{{{{ .Release.Name }}}}-{component}"
    labels = {COMPONENT_LABEL: component}
    source: dict[str, Any] = {
        "interval": "4m",
        "url": f"oci://{spec['hostname']}/{namespace}/{chart}",
        "ref": {"tag": tag},
        "layerSelector": {"mediaType": HELM_CHART_LAYER, "operation": "copy"},
        "secretRef": {"name": spec.get("targetPullSecretName", "regcred")},
    }
    if spec.get("plainHTTP"):
        source["insecure"] = True
    installer: dict[str, Any] = {
        "interval": "10m",
        "chartRef": {"kind": "OCIRepository", "name": name},
        "install": {"createNamespace": True, "remediation": {"retries": 3}},
        "upgrade": {"remediation": {"retries": 3}},
    }
    if inner_namespace:
        installer["targetNamespace"] = inner_namespace
    documents = [
        {
            "apiVersion": "source.toolkit.fluxcd.io/v1",
            "kind": "OCIRepository",
            "metadata": {"name": name, "labels": labels},
            "spec": source,
        },
        {
            "apiVersion": "helm.toolkit.fluxcd.io/v2",
            "kind": "HelmRelease",
            "metadata": {"name": name, "labels": labels},
            "spec": installer,
        },
    ]
    templates = {"release.yaml": "---\n".join(yamlio.dump(d) for d in documents)}
    return Chart(f"{chart}{RELEASE_CHART_SUFFIX}", version, templates=templates)


def wrapped_in_release_charts(
    inner_namespace: InnerNamespace,
    agent_too: bool = True,
    inner_tag: Callable[[str], str] = str,
) -> tuple[Replace, Patch]:
    """The replacement of Renderer.render_release that pushes each Release's chart as before and,
    beside it, the release chart that installs it (its inner source pulling the tag `inner_tag`
    makes of the chart's), which the bootstrap chart then points at; and the patch of the
    bootstrap chart that leaves the targetNamespace to the release chart."""

    def replace(original: Any) -> Any:
        def render_release(
            self: Any, client: Any, namespace: str, release: Any, target: Any
        ) -> Any:
            found = original(self, client, namespace, release, target)
            if found is None or (self.is_agent_release(release) and not agent_too):
                return found
            chart = release_chart(
                self.registry_of(target),
                namespace,
                _component(release),
                found.chart,
                found.version,
                inner_namespace(found.target_namespace),
                inner_tag(found.version),
            )
            version = self.push_chart(client, namespace, chart)
            # No targetNamespace for the bootstrap chart's HelmRelease: the release chart's say.
            return dataclasses.replace(
                found, chart=chart.name, version=version, target_namespace=""
            )

        return render_release

    @patch(f"{CHARTS}.bootstrap_chart")
    def _no_target_namespace(original: Any) -> Any:
        def bootstrap_chart(
            self: Any, target: str, namespace: str, registry: Any, releases: Any
        ) -> Any:
            chart = original(self, target, namespace, registry, releases)

            def without_created_namespace(doc: Any) -> None:
                spec = doc.get("spec") or {}
                if doc.get("kind") == "HelmRelease" and not spec.get("targetNamespace"):
                    spec.pop("targetNamespace", None)
                    spec.get("install", {}).pop("createNamespace", None)

            templates = _edited(chart.templates, without_created_namespace)
            return dataclasses.replace(chart, templates=templates)

        return bootstrap_chart

    return replace, _no_target_namespace


def where_the_reference_installs(into: str) -> str | None:
    """The inner HelmRelease's targetNamespace: the Release's, as the reference reads it."""
    return into


_render_release, _bootstrap = wrapped_in_release_charts(where_the_reference_installs)

variant(
    "variant-release-chart-wraps-flux-pair",
    ("table-flux", "table-flux-target-namespace", "on-its-own"),
    "the bootstrap chart's HelmRelease for each bound Release (the agent's too) names no "
    "targetNamespace and installs a release chart <chart>-flux into the Target's namespace; that "
    "chart holds an OCIRepository/HelmRelease pair named <helm release>-<component>, labelled "
    "with the component, whose HelmRelease carries the Release's targetNamespace and installs "
    "the Release's chart, as upstream SolAr's release charts do",
    patch(f"{R}.render_release")(_render_release),
    _bootstrap,
)
