"""The sim's Flux writes what the real helm-controller writes of an install (Helm's ownership
annotations and helm-controller's labels on what it installed, the Helm release in
`status.history`), reconciles the OCIRepository/HelmRelease pair a chart installs, and the
harness follows such a wrapped pair to where the Release is installed, as on real Flux."""

from __future__ import annotations

from typing import Any, cast

import pytest

from solar_conformance.core.api import ClusterAPI, Obj, new_object
from solar_conformance.core.clock import VirtualClock
from solar_conformance.core.helm_records import HelmReleaseRef, recorded_release
from solar_conformance.core.landscape import Landscape
from solar_conformance.core.oci import RegistryClient
from solar_conformance.page.installed import release_installers
from solar_conformance.simulators.memory.cluster import InMemoryCluster
from solar_conformance.simulators.memory.flux import FluxModel
from tests.chart_chain import CONTRACT, ChartRegistry, installer, plain_chart, source

NAMESPACE = "test"
LABEL = CONTRACT.release_label


class _Flux:
    """The sim's Flux on an in-memory target cluster, pulling from a registry of charts."""

    def __init__(self) -> None:
        self.registry = ChartRegistry()
        self.target = InMemoryCluster("target", VirtualClock()).admin()
        self.target.create(new_object("Namespace", NAMESPACE))
        self.model = FluxModel(self.target, self._connect, VirtualClock(), lambda line: None)

    def _connect(self, host: str, user: str | None, password: str | None) -> RegistryClient:
        return self.registry.as_client()

    def settle(self) -> None:
        for _ in range(4):  # a wrapped pair is installed one pass after the pair that wraps it
            self.model.reconcile_all()

    def get(self, kind: str, name: str, namespace: str = NAMESPACE) -> Obj:
        return self.target.get(kind, name, namespace)


def wrapped(flux: _Flux, inner_namespace: str | None) -> None:
    """Upstream's shape: a bootstrap pair without targetNamespace installs a release chart whose
    inner pair, with the Release's targetNamespace, installs the application chart."""
    flux.registry.push(
        f"{NAMESPACE}/app",
        plain_chart(
            "app",
            "1.0.0",
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "podinfo"}},
        ),
    )
    inner_spec: dict[str, Any] = {"install": {"createNamespace": True}}
    if inner_namespace:
        inner_spec["targetNamespace"] = inner_namespace
    flux.registry.push(
        f"{NAMESPACE}/release-podinfo",
        plain_chart(
            "release-podinfo",
            "1.0.0",
            source("podinfo-inner", f"{NAMESPACE}/app", {"tag": "1.0.0"}),
            installer("podinfo-inner", **inner_spec),
        ),
    )
    outer = [
        source("podinfo", f"{NAMESPACE}/release-podinfo", {"tag": "1.0.0"}, label="podinfo"),
        installer("podinfo"),
    ]
    outer[1]["metadata"]["labels"] = {LABEL: "podinfo"}
    for obj in outer:
        obj["metadata"]["namespace"] = NAMESPACE
        flux.target.create(obj)
    flux.settle()


class _Landscape:
    contract = CONTRACT

    def __init__(self, target: ClusterAPI, release: Obj) -> None:
        self.target = target
        self.solar = InMemoryCluster("solar", VirtualClock()).admin()
        self.solar.create(new_object("Namespace", NAMESPACE))
        self.solar.create(release)


@pytest.fixture
def flux() -> _Flux:
    return _Flux()


def test_what_the_sim_installs_carries_helms_and_flux_marks(flux: _Flux) -> None:
    wrapped(flux, "apps")
    app = flux.get("ConfigMap", "podinfo", "apps")
    assert app["metadata"]["annotations"] == {
        "meta.helm.sh/release-name": "apps-podinfo-inner",
        "meta.helm.sh/release-namespace": "apps",
    }
    assert {k: v for k, v in app["metadata"]["labels"].items() if k != LABEL} == {
        "app.kubernetes.io/managed-by": "Helm",
        "helm.toolkit.fluxcd.io/name": "podinfo-inner",
        "helm.toolkit.fluxcd.io/namespace": NAMESPACE,
    }
    inner = flux.get("HelmRelease", "podinfo-inner")
    assert inner["metadata"]["annotations"]["meta.helm.sh/release-name"] == "podinfo"


def test_the_sim_records_the_helm_release_in_the_history(flux: _Flux) -> None:
    wrapped(flux, "apps")
    outer, inner = flux.get("HelmRelease", "podinfo"), flux.get("HelmRelease", "podinfo-inner")
    assert recorded_release(outer) == HelmReleaseRef("podinfo", NAMESPACE)
    assert recorded_release(inner) == HelmReleaseRef("apps-podinfo-inner", "apps")
    assert inner["status"]["history"][0]["version"] == 1
    assert inner["status"]["storageNamespace"] == NAMESPACE
    assert {
        o["metadata"]["name"]: o["status"]["conditions"][0]["status"] for o in (outer, inner)
    } == {
        "podinfo": "True",
        "podinfo-inner": "True",
    }


def test_a_new_target_namespace_is_a_new_release_and_the_old_objects_go(flux: _Flux) -> None:
    wrapped(flux, "apps")
    inner = flux.get("HelmRelease", "podinfo-inner")
    inner["spec"]["targetNamespace"] = "elsewhere"
    flux.target.update(inner)
    flux.settle()
    assert recorded_release(flux.get("HelmRelease", "podinfo-inner")) == HelmReleaseRef(
        "elsewhere-podinfo-inner", "elsewhere"
    )
    assert flux.target.list("ConfigMap", "apps") == []
    assert [c["metadata"]["name"] for c in flux.target.list("ConfigMap", "elsewhere")] == [
        "podinfo"
    ]


def test_uninstalling_the_wrapping_pair_uninstalls_what_the_wrapped_one_installed(
    flux: _Flux,
) -> None:
    wrapped(flux, "apps")
    flux.target.delete("HelmRelease", "podinfo", NAMESPACE)
    flux.settle()
    assert flux.target.list("HelmRelease") == []
    assert flux.target.list("ConfigMap", "apps") == []


@pytest.mark.parametrize(("inner_namespace", "into"), [("apps", "apps"), (None, NAMESPACE)])
def test_the_harness_follows_the_sims_records_to_where_the_release_is_installed(
    flux: _Flux, inner_namespace: str | None, into: str
) -> None:
    wrapped(flux, inner_namespace)
    release = new_object("Release", "podinfo", NAMESPACE, spec={"targetNamespace": "apps"})
    landscape = cast(Landscape, _Landscape(flux.target, release))
    found = release_installers(landscape, NAMESPACE, "podinfo")
    assert [o["metadata"]["name"] for o in found.innermost] == ["podinfo-inner"]
    assert recorded_release(found.innermost[0]).namespace == into
