"""The reference renders on the sim as upstream SolAr tags and counts (docs/backends/upstream.md,
rows 6 and 7): the bootstrap chart at `v0.0.<status.bootstrapVersion>`, the counter an integer
left out while 0, each Release pinned by `ref.semver` to its one tag."""

from __future__ import annotations

from collections.abc import Callable

from solar_conformance.backends.sim.landscape import SimLandscape
from solar_conformance.core.api import find_condition, new_object
from solar_conformance.core.contract import Contract
from solar_conformance.core.oci import RegistryClient, RegistryError
from solar_conformance.page.charts import bootstrap_chart
from solar_conformance.page.setup import REGISTRY, set_up_namespace

NAMESPACE = "test"
TARGET = "cluster-1"
BOOTSTRAP = f"{NAMESPACE}/bootstrap-{TARGET}"


def _until(landscape: SimLandscape, what: str, done: Callable[[], bool]) -> None:
    for _ in range(120):
        if done():
            return
        landscape.clock.advance(1)
    raise AssertionError(f"not within 120 virtual seconds: {what}")


def _tags(client: RegistryClient, repository: str) -> list[str]:
    try:
        return sorted(client.tags(repository))
    except RegistryError as error:
        if error.status == 404:
            return []
        raise


def test_the_bootstrap_counter_and_the_tags_are_upstreams() -> None:
    landscape = SimLandscape(Contract())
    try:
        set_up_namespace(landscape, landscape.solar, NAMESPACE)
        landscape.solar.create(
            new_object("Target", TARGET, NAMESPACE, spec={"renderRegistryRef": {"name": REGISTRY}})
        )
        pusher = landscape.registry_as(*landscape.push_credentials())
        _until(landscape, "a bootstrap chart", lambda: bool(_tags(pusher, BOOTSTRAP)))
        target = landscape.solar.get("Target", TARGET, NAMESPACE)
        assert _tags(pusher, BOOTSTRAP) == ["v0.0.0"]
        assert "bootstrapVersion" not in target.get("status", {})
        ready = find_condition(target, "BootstrapReady") or {}
        assert (ready.get("status"), ready.get("reason")) == ("True", "Ready")
        assert str(ready.get("message")).endswith(f"/{BOOTSTRAP}:v0.0.0")
        assert _tags(pusher, f"{NAMESPACE}/release-solar-agent-{TARGET}") == ["v0.0.1-0"]

        landscape.solar.create(
            new_object("Release", "web", NAMESPACE, spec={"componentVersionRef": {"name": "web"}})
        )
        landscape.solar.create(
            new_object(
                "ReleaseBinding",
                f"web-{TARGET}",
                NAMESPACE,
                spec={"targetRef": {"name": TARGET}, "releaseRef": {"name": "web"}},
            )
        )
        _until(landscape, "a second bootstrap chart", lambda: len(_tags(pusher, BOOTSTRAP)) == 2)
        target = landscape.solar.get("Target", TARGET, NAMESPACE)
        assert _tags(pusher, BOOTSTRAP) == ["v0.0.0", "v0.0.1"]
        assert target["status"]["bootstrapVersion"] == 1
        assert _tags(pusher, f"{NAMESPACE}/release-web") == ["v0.0.1-e3b0c442"]
        chart = bootstrap_chart(pusher, NAMESPACE, TARGET)
        assert chart.version == "v0.0.1"
        sources = {
            o["metadata"]["labels"]["solar.opendefense.cloud/release"]: o
            for o in chart.manifests()
            if o["kind"] == "OCIRepository"
        }
        assert sources["web"]["metadata"]["name"] == "{{ .Release.Name }}-web"
        assert sources["web"]["spec"]["ref"] == {"semver": "v0.0.1-e3b0c442"}
        assert sources["web"]["spec"]["interval"] == "10m"
        assert sources["solar-agent"]["spec"]["ref"] == {"semver": "v0.0.1-0"}
    finally:
        landscape.close()
