"""The chain of charts as upstream SolAr renders it, read with the toolchain's helm as Flux's Helm
renders it (docs/backends/upstream.md, rows 12, 13, 16 and 17): a bootstrap chart of Helm
templates that ranges over the releases of its values, keyed by uniqueName; a release chart
that points Flux at the application chart its values name, with the Release's values; and the
application chart, where the agent's kubeconfig Secret is. The templates are written here in
the same shape; the chain without helm is tests/test_chart_chain.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from solar_conformance.core.helm_render import ChartRenderer, Installation
from solar_conformance.core.oci import Chart
from solar_conformance.page.charts import kubeconfig_in
from solar_conformance.page.delivery import agent_delivery
from solar_conformance.page.reading import NotAsPromised
from solar_conformance.provision.toolchain import MissingTool, Toolchain
from tests.chart_chain import (
    BOOTSTRAP,
    CONTRACT,
    HOST,
    NAMESPACE,
    SERVER,
    TARGET,
    ChartRegistry,
    agent_release,
    kubeconfig,
    landscape_with,
)

pytestmark = [pytest.mark.local]

UNIQUE_NAME = "solar-agent-test"
WRAPPER = f"{NAMESPACE}/{NAMESPACE}/release-solar-agent"
APPLICATION = f"{NAMESPACE}/agent-application"

BOOTSTRAP_TEMPLATE = """\
{{- range $key, $entry := .Values.releases }}
{{- $name := printf "%s-%s" $.Release.Name $key | trunc 53 }}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata:
  name: {{ $name }}
  namespace: {{ $.Release.Namespace }}
  labels:
    LABEL: {{ $key | quote }}
spec:
  interval: 10m
  url: oci://{{ $entry.repository }}
  ref:
    semver: {{ $entry.tag | quote }}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: {{ $name }}
  namespace: {{ $.Release.Namespace }}
spec:
  chartRef:
    kind: OCIRepository
    name: {{ $name }}
  releaseName: {{ $name }}
  values:
    userdata: {{- toYaml $.Values.userdata | nindent 6 }}
{{- end }}
""".replace("LABEL", CONTRACT.release_label)

WRAPPER_TEMPLATE = """\
{{- $resource := index .Values.resources .Values.entrypoint }}
{{- if not $resource.tag }}
{{- fail (printf "resource %s names no tag" .Values.entrypoint) }}
{{- end }}
{{- $name := printf "%s-app" .Release.Name }}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata:
  name: {{ $name }}
  namespace: {{ .Release.Namespace }}
spec:
  interval: 4m
  url: oci://{{ $resource.repository }}
  ref:
    tag: {{ $resource.tag | quote }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ $name }}-values
  namespace: {{ .Release.Namespace }}
data:
  values.yaml: |
    greeting: from the ConfigMap
    farewell: from the ConfigMap
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: {{ $name }}
  namespace: {{ .Release.Namespace }}
spec:
  chartRef:
    kind: OCIRepository
    name: {{ $name }}
  releaseName: {{ $name }}
  targetNamespace: agents
  valuesFrom:
    - kind: ConfigMap
      name: {{ $name }}-values
  values: {{- toYaml .Values.release | nindent 4 }}
"""

APPLICATION_TEMPLATE = """\
apiVersion: v1
kind: Secret
metadata:
  name: {{ .Release.Name }}-kubeconfig
  namespace: {{ .Release.Namespace }}
stringData:
  KEY: {{ .Values.kubeconfig | quote }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-words
data:
  greeting: {{ .Values.greeting | quote }}
  farewell: {{ .Values.farewell | quote }}
""".replace("KEY", CONTRACT.agent_kubeconfig_key)


def _helm() -> Path:
    try:
        return Toolchain.from_env().path("helm")
    except MissingTool as missing:
        pytest.skip(str(missing))


def _upstream_shaped(registry: ChartRegistry, resource: dict[str, Any]) -> None:
    registry.push(
        BOOTSTRAP,
        Chart(
            f"bootstrap-{TARGET}",
            "v0.0.3",
            {"release.yaml": BOOTSTRAP_TEMPLATE},
            values={
                "releases": {UNIQUE_NAME: {"repository": f"{HOST}/{WRAPPER}", "tag": "v0.0.1"}},
                "userdata": {},
            },
        ),
    )
    registry.push(
        WRAPPER,
        Chart(
            "release-solar-agent",
            "v0.0.1",
            {"release.yaml": WRAPPER_TEMPLATE},
            values={
                "entrypoint": "app",
                "resources": {"app": resource},
                "release": {"kubeconfig": kubeconfig(), "greeting": "from the Release"},
            },
        ),
    )
    registry.push(
        APPLICATION, Chart("agent-application", "1.2.3", {"agent.yaml": APPLICATION_TEMPLATE})
    )


def test_the_chain_through_charts_of_helm_templates_reaches_the_agents_kubeconfig() -> None:
    renderer = ChartRenderer(helm=_helm)
    registry = ChartRegistry()
    _upstream_shaped(registry, {"repository": f"{HOST}/{APPLICATION}", "tag": "1.2.3"})
    delivery = agent_delivery(
        landscape_with(agent_release(uniqueName=UNIQUE_NAME)),
        registry.as_client(),
        NAMESPACE,
        TARGET,
        renderer,
    )
    assert (delivery.repository, delivery.ref) == (APPLICATION, {"tag": "1.2.3"})
    found = kubeconfig_in(delivery.chart, CONTRACT.agent_kubeconfig_key)
    assert found is not None
    assert found.server == SERVER
    objects = {o["kind"]: o for o in delivery.chart.manifests()}
    # Flux installs it as the release chart's HelmRelease says: its release name, its
    # targetNamespace, its values over those of its valuesFrom.
    release_name = f"solar-bootstrap-{UNIQUE_NAME}-app"
    assert objects["Secret"]["metadata"] == {
        "name": f"{release_name}-kubeconfig",
        "namespace": "agents",
    }
    assert objects["ConfigMap"]["data"] == {
        "greeting": "from the Release",
        "farewell": "from the ConfigMap",
    }


def test_what_helm_refuses_is_a_verdict_with_helms_own_line() -> None:
    renderer = ChartRenderer(helm=_helm)
    registry = ChartRegistry()
    _upstream_shaped(registry, {"repository": f"{HOST}/{APPLICATION}", "tag": ""})
    refused = (
        r"Helm cannot render release-solar-agent:v0\.0\.1: helm template: Error: .*names no tag"
    )
    with pytest.raises(NotAsPromised, match=refused):
        agent_delivery(
            landscape_with(agent_release(uniqueName=UNIQUE_NAME)),
            registry.as_client(),
            NAMESPACE,
            TARGET,
            renderer,
        )


def test_the_bootstrap_chart_as_helm_renders_it() -> None:
    """The release name and namespace of the HelmRelease that installs it, and its values over
    the chart's."""
    chart = Chart(
        "bootstrap",
        "v0.0.1",
        {"release.yaml": BOOTSTRAP_TEMPLATE},
        values={"releases": {"web": {"repository": "r.test/x", "tag": "v1"}}, "userdata": {}},
    )
    installation = Installation("solar-bootstrap", NAMESPACE, {"userdata": {"site": "north"}})
    objects = ChartRenderer(helm=_helm).render(chart, installation).manifests()
    by_kind = {o["kind"]: o for o in objects}
    assert sorted(by_kind) == ["HelmRelease", "OCIRepository"]
    assert {o["metadata"]["name"] for o in objects} == {"solar-bootstrap-web"}
    assert {o["metadata"]["namespace"] for o in objects} == {NAMESPACE}
    assert by_kind["HelmRelease"]["spec"]["values"] == {"userdata": {"site": "north"}}
