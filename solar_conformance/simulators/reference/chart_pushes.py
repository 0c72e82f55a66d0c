"""How solar-renderer pushes charts to a Target's render registry: each content once at its
version, a Release's chart at the tag upstream SolAr gives it
(solar_conformance/simulators/reference/tags.py), and the bootstrap chart at the next
`bootstrapVersion` whenever its content changes, recorded in the Target's status."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable

from solar_conformance.core.api import ClusterAPI, Obj, annotations_of
from solar_conformance.core.clock import Clock
from solar_conformance.core.conditions import set_condition
from solar_conformance.core.contract import Contract
from solar_conformance.core.oci import Chart, RegistryClient, RegistryError
from solar_conformance.core.semver import highest
from solar_conformance.simulators.reference.render_config import RendererConfig
from solar_conformance.simulators.reference.tags import (
    agent_release_tag,
    bootstrap_tag,
    bootstrap_version_of,
    release_tag,
)

CONTENT_ANNOTATION = "solar.opendefense.cloud/content-digest"
BOOTSTRAP_READY = "BootstrapReady"  # upstream's condition: the bootstrap chart is pushed


class ChartPushes:
    """The pushes of the Renderer (solar_conformance/simulators/reference/renderer.py)."""

    solar: ClusterAPI
    clock: Clock
    contract: Contract
    config: RendererConfig
    log: Callable[[str], None]
    _pushed: dict[str, tuple[str, str]]  # repository -> (content, version)

    def push_bootstrap(self, client: RegistryClient, host: str, target: Obj, chart: Chart) -> None:
        """Push at the current `bootstrapVersion` if nothing is there yet, else at the next one
        when the content changed; the Target's status keeps the counter (0 is left unwritten,
        as upstream omits it) and says where the chart is."""
        namespace = target["metadata"]["namespace"]
        repository = f"{namespace}/{chart.name}"
        version = self.bootstrap_version(client, target, repository)
        found = self.content_at(client, repository, bootstrap_tag(version))
        if found is not None and found != content_of(chart):
            version += 1
        tag = self.push_chart(
            client, namespace, dataclasses.replace(chart, version=bootstrap_tag(version))
        )
        if self.config.owns_bootstrap_version:
            self._record_bootstrap(target, version, f"oci://{host}/{repository}:{tag}")

    def _record_bootstrap(self, target: Obj, version: int, url: str) -> None:
        """The counter and upstream's `BootstrapReady` condition, in one status write."""
        fresh = self.solar.get(
            "Target", target["metadata"]["name"], target["metadata"]["namespace"]
        )
        status = fresh.setdefault("status", {})
        changed = set_condition(
            fresh,
            BOOTSTRAP_READY,
            "True",
            "Ready",
            f"Bootstrap rendered successfully: {url}",
            self.clock.now(),
        )
        if status.get("bootstrapVersion", 0) != version:
            status["bootstrapVersion"] = version
            changed = True
        if changed:
            self.solar.update_status(fresh)

    def bootstrap_version(self, client: RegistryClient, target: Obj, repository: str) -> int:
        """The Target's counter, or, beside a SolAr that keeps it, the highest one pushed. The
        charts of a deleted Target stay in the registry (upstream deletes them): a Target made
        again under its name goes on after them, so `>=0.0.0` never picks an earlier Target's."""
        recorded = target.get("status", {}).get("bootstrapVersion", 0)
        counted = (
            recorded if self.config.owns_bootstrap_version and isinstance(recorded, int) else 0
        )
        pushed = [
            v
            for tag in self.existing_tags(client, repository)
            if (v := bootstrap_version_of(tag)) is not None
        ]
        return max([counted, *pushed])

    def release_version(
        self, client: RegistryClient, namespace: str, release: Obj, chart: Chart
    ) -> str:
        generation = int(release["metadata"].get("generation") or 1)
        if self.contract.agent_release_annotation not in annotations_of(release):
            return release_tag(generation, {})  # the reference's charts pull no images
        repository = f"{namespace}/{chart.name}"
        content = content_of(chart)
        known = self._pushed.get(repository)
        if known is not None and known[0] == content:
            return known[1]
        existing = self.existing_tags(client, repository)
        latest = highest(existing)
        if latest is not None and self.content_at(client, repository, latest) == content:
            return latest
        return agent_release_tag(generation, existing)

    def push_chart(self, client: RegistryClient, namespace: str, chart: Chart) -> str:
        """Push the chart at its version unless this renderer pushed that content there last."""
        repository = f"{namespace}/{chart.name}"
        content = content_of(chart)
        if self._pushed.get(repository) == (content, chart.version):
            return chart.version
        client.push_chart(
            repository,
            Chart(
                chart.name,
                chart.version,
                chart.templates,
                chart.values,
                {CONTENT_ANNOTATION: content},
            ),
        )
        self._pushed[repository] = (content, chart.version)
        self.log(f"pushed {repository}:{chart.version}")
        return chart.version

    def content_at(self, client: RegistryClient, repository: str, tag: str) -> str | None:
        """The content digest of the chart at `tag` (None: no chart there)."""
        known = self._pushed.get(repository)
        if known is not None and known[1] == tag:
            return known[0]
        try:
            manifest, _ = client.manifest(repository, tag)
            config = json.loads(client.blob(repository, manifest["config"]["digest"]))
        except RegistryError as error:
            if error.status == 404:
                return None
            raise
        return str((config.get("annotations") or {}).get(CONTENT_ANNOTATION, ""))

    @staticmethod
    def existing_tags(client: RegistryClient, repository: str) -> list[str]:
        try:
            return client.tags(repository)
        except RegistryError as error:
            if error.status == 404:
                return []
            raise


def content_of(chart: Chart) -> str:
    """What a chart renders, as a digest: the same templates and values, the same digest."""
    text = json.dumps({"templates": chart.templates, "values": chart.values}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
