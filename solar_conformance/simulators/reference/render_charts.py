"""The charts solar-renderer renders: a shared Release's chart, the agent release of one Target
(a Secret with the kubeconfig and the token, and the agent Deployment), and the bootstrap chart
Flux starts from (one OCIRepository/HelmRelease pair per bound Release)."""

from __future__ import annotations

import hashlib
from typing import Any

from solar_conformance.core import yamlio
from solar_conformance.core.api import Obj
from solar_conformance.core.contract import Contract
from solar_conformance.core.oci import HELM_CHART_LAYER, Chart
from solar_conformance.simulators.reference.render_config import RenderedRelease, RendererConfig

AGENT_VERSION = "0.1.0"


class ReleaseCharts:
    """The charts of the Renderer (solar_conformance/simulators/reference/renderer.py)."""

    contract: Contract
    config: RendererConfig

    def shared_release_chart(self, release: Obj) -> Chart:
        """A Release without the agent annotation: one chart shared by all Targets."""
        name = release["metadata"]["name"]
        configmap = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "labels": {self.contract.release_label: name}},
            "data": {
                "release": name,
                "componentVersion": str(
                    release.get("spec", {}).get("componentVersionRef", {}).get("name", "")
                ),
            },
        }
        return Chart(f"release-{name}", "0.0.0", templates={"configmap.yaml": dump(configmap)})

    @staticmethod
    def agent_chart_name(release: str, target: str) -> str:
        return f"release-{release}-{target}"

    def agent_templates(self, release: str, target: Obj, kubeconfig: str) -> dict[str, str]:
        target_name, namespace = target["metadata"]["name"], target["metadata"]["namespace"]
        labels = {"app.kubernetes.io/name": "solar-agent", self.contract.release_label: release}
        checksum = hashlib.sha256(kubeconfig.encode()).hexdigest()
        secret = {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "Opaque",
            "metadata": {"name": "solar-agent-kubeconfig", "labels": labels},
            "stringData": {self.contract.agent_kubeconfig_key: kubeconfig},
        }
        deployment = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "solar-agent", "labels": labels},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app.kubernetes.io/name": "solar-agent"}},
                "template": {
                    "metadata": {
                        "labels": labels,
                        "annotations": {"checksum/kubeconfig": checksum},
                    },
                    "spec": {
                        "containers": [
                            {
                                "name": "agent",
                                "image": f"{self.contract.agent_image}:{AGENT_VERSION}",
                                "imagePullPolicy": "IfNotPresent",
                                **self._agent_environment(),
                                "args": [
                                    f"--target={target_name}",
                                    f"--namespace={namespace}",
                                    "--kubeconfig=/etc/solar-agent/kubeconfig",
                                    f"--interval={self.config.agent_interval_seconds}",
                                ],
                                "volumeMounts": [
                                    {
                                        "name": "kubeconfig",
                                        "mountPath": "/etc/solar-agent",
                                        "readOnly": True,
                                    }
                                ],
                            }
                        ],
                        "volumes": [
                            {
                                "name": "kubeconfig",
                                "secret": {"secretName": "solar-agent-kubeconfig"},
                            }
                        ],
                    },
                },
            },
        }
        return {"secret.yaml": dump(secret), "deployment.yaml": dump(deployment)}

    def _agent_environment(self) -> dict[str, Any]:
        if not self.config.agent_env:
            return {}
        return {"env": [{"name": k, "value": v} for k, v in sorted(self.config.agent_env.items())]}

    def bootstrap_chart(
        self, target: str, namespace: str, registry: Obj, releases: list[RenderedRelease]
    ) -> Chart:
        spec = registry["spec"]
        templates: dict[str, str] = {}
        for item in releases:
            labels = {self.contract.release_label: item.release}
            source: dict[str, Any] = {
                "interval": "10m",
                "url": f"oci://{spec['hostname']}/{namespace}/{item.chart}",
                "ref": {"semver": item.version},  # one version: upstream pins it this way
                "layerSelector": {"mediaType": HELM_CHART_LAYER, "operation": "copy"},
                "secretRef": {"name": spec.get("targetPullSecretName", "regcred")},
            }
            if spec.get("plainHTTP"):
                source["insecure"] = True
            # Named after the Helm release that installs the bootstrap chart, as upstream's are.
            name = f"{{{{ .Release.Name }}}}-{item.release}"
            repository = {
                "apiVersion": "source.toolkit.fluxcd.io/v1",
                "kind": "OCIRepository",
                "metadata": {"name": name, "labels": labels},
                "spec": source,
            }
            release = {
                "apiVersion": "helm.toolkit.fluxcd.io/v2",
                "kind": "HelmRelease",
                "metadata": {"name": name, "labels": labels},
                "spec": {
                    "interval": "10m",
                    "chartRef": {"kind": "OCIRepository", "name": name},
                    "targetNamespace": item.target_namespace,
                    "install": {"createNamespace": True, "remediation": {"retries": 3}},
                    "upgrade": {"remediation": {"retries": 3}},
                },
            }
            templates[f"{item.release}.yaml"] = dump(repository) + "---\n" + dump(release)
        return Chart(f"bootstrap-{target}", "0.0.0", templates=templates)


def dump(obj: Obj) -> str:
    return yamlio.dump(obj)
