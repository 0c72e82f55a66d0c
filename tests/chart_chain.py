"""What the tests of the chart chain share: a registry of charts held in a dict, a landscape with
nothing but the namespace's agent Release and the profile, and the objects the charts hold."""

from __future__ import annotations

import json
from typing import Any, cast

from solar_conformance.core import yamlio
from solar_conformance.core.api import Obj, new_object
from solar_conformance.core.contract import Contract
from solar_conformance.core.credentials import TokenKubeconfig
from solar_conformance.core.landscape import Landscape
from solar_conformance.core.oci import Chart, RegistryClient, chart_manifest, digest_of

HOST = "registry.test"
NAMESPACE = "test"
TARGET = "cluster-1"
BOOTSTRAP = f"{NAMESPACE}/bootstrap-{TARGET}"
CONTRACT = Contract()
SERVER = "https://solar.test:6443"


class ChartRegistry:
    """The reads of RegistryClient the chart lookups make, on charts pushed here by tag."""

    host = HOST

    def __init__(self) -> None:
        self.pushed: dict[str, dict[str, tuple[dict[str, Any], bytes]]] = {}

    def push(self, repository: str, chart: Chart) -> None:
        archive = chart.package()
        self.pushed.setdefault(repository, {})[chart.version] = (
            chart_manifest(chart, archive),
            archive,
        )

    def tags(self, repository: str) -> list[str]:
        return sorted(self.pushed.get(repository, {}))

    def manifest(self, repository: str, reference: str) -> tuple[dict[str, Any], str]:
        manifest, _ = self.pushed[repository][reference]
        return manifest, digest_of(json.dumps(manifest).encode())

    def blob(self, repository: str, digest: str) -> bytes:
        return next(a for _, a in self.pushed[repository].values() if digest_of(a) == digest)

    def as_client(self) -> RegistryClient:
        return cast(RegistryClient, self)


class _Releases:
    def __init__(self, releases: list[Obj]) -> None:
        self.releases = releases

    def list(self, kind: str, namespace: str | None = None) -> list[Obj]:
        assert kind == "Release", f"the chart lookups read no {kind}"
        return [r for r in self.releases if r["metadata"]["namespace"] == namespace]


class _Landscape:
    contract = CONTRACT

    def __init__(self, release: Obj) -> None:
        self.solar = _Releases([release])


def landscape_with(release: Obj) -> Landscape:
    return cast(Landscape, _Landscape(release))


def agent_release(name: str = "solar-agent", **spec: Any) -> Obj:
    return new_object(
        "Release",
        name,
        NAMESPACE,
        annotations={CONTRACT.agent_release_annotation: "true"},
        spec={"componentVersionRef": {"name": "solar-agent"}, **spec},
    )


def kubeconfig() -> str:
    return TokenKubeconfig(SERVER, "t" * 40).render()


def agent_secret(text: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "agent-kubeconfig"},
        "stringData": {CONTRACT.agent_kubeconfig_key: text},
    }


def source(name: str, repository: str, ref: Obj, label: str | None = None) -> Obj:
    """An OCIRepository, labelled with the profile's release label when `label` is given."""
    labels = {CONTRACT.release_label: label} if label else {}
    return {
        "apiVersion": "source.toolkit.fluxcd.io/v1",
        "kind": "OCIRepository",
        "metadata": {"name": name, "labels": labels},
        "spec": {"interval": "10m", "url": f"oci://{HOST}/{repository}", "ref": ref},
    }


def installer(name: str, **spec: Any) -> Obj:
    """A HelmRelease that installs the chart of the OCIRepository `name`."""
    return {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": name},
        "spec": {"chartRef": {"kind": "OCIRepository", "name": name}, **spec},
    }


def plain_chart(name: str, version: str, *objects: Obj) -> Chart:
    return Chart(name, version, {f"{i}.yaml": yamlio.dump(o) for i, o in enumerate(objects)})
