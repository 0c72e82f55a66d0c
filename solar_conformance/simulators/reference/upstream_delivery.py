"""The agent release rendered by upstream SolAr: what the reference keeps per Target, beside an
upstream that renders the Releases (`SOLAR_UPSTREAM_RENDERS_RELEASES=1`), so that upstream
renders each Target's bootstrap chart with that Target's own agent release in it
(docs/backends/upstream.md, "The agent release rendered by upstream").

Upstream renders a Release once for every Target, from its ComponentVersion, and renders a
Target's bootstrap chart only when every Release bound to it has a ComponentVersion. The agent
release is the Target's own (its token), so for each Target the reference keeps:

- a Component and ComponentVersion `<agent release>-<target>` naming the agent chart it pushed
  for that Target, at its current tag;
- a Release of that name with the page's agent Release's effective uniqueName and a priority
  above it, so upstream's conflict resolution keeps it and drops the page's one for this Target
  (`resolveReleaseConflicts`); its `spec.values` carry the agent chart's tag, so a new token
  makes a new generation, a new release chart tag and a new bootstrap chart;
- a ReleaseBinding of it to the Target, and a RegistryBinding of the Target to its render
  Registry, without which upstream's release chart pulls the agent chart anonymously.

Each is owned by the Target, so it goes with it. The page's agent Release gets a ComponentVersion
too, naming an empty chart: it only has to exist, since a missing one keeps every Target from a
bootstrap chart even where the Release loses the conflict.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field

from solar_conformance.core.api import KINDS, ApiError, ClusterAPI, Obj, serve_kinds
from solar_conformance.core.catalog import COMPONENT_KINDS, ChartLocation, catalog_objects
from solar_conformance.core.oci import Chart, RegistryClient
from solar_conformance.simulators.reference.render_config import RenderedRelease

# On every object kept for one Target, an annotation: that Target's name.
KEPT_FOR_ANNOTATION = "solar.opendefense.cloud/agent-release-of"
# The value in the per-Target Release that follows the agent chart's tag.
AGENT_TAG_VALUE = "agentChartTag"
PLACEHOLDER_VERSION = "0.1.0"


def per_target_name(release: str, target: str) -> str:
    """Apart from `<release>-<target>`, the name an operator may give a ReleaseBinding."""
    return f"{release}-{target}-agent"


def placeholder_repository(namespace: str, component_version: str) -> str:
    return f"{namespace}/components/{component_version}"


def effective_unique_name(release: Obj, component_version: Obj | None) -> str:
    """As upstream decides it: `spec.uniqueName`, else its ComponentVersion's Component."""
    given = release.get("spec", {}).get("uniqueName") or release.get("status", {}).get(
        "effectiveUniqueName"
    )
    if given:
        return str(given)
    if component_version is not None:
        return str(component_version.get("spec", {}).get("componentRef", {}).get("name", ""))
    return str(release["metadata"]["name"])


def kept_for_a_target(obj: Obj) -> bool:
    return KEPT_FOR_ANNOTATION in (obj["metadata"].get("annotations") or {})


@dataclass
class UpstreamDelivery:
    solar: ClusterAPI
    log: Callable[[str], None] = print
    _placeholders: set[tuple[str, str]] = field(default_factory=set)  # (namespace, name) made

    def deliver(
        self,
        client: RegistryClient,
        registry: Obj,
        target: Obj,
        agent_release: Obj,
        rendered: RenderedRelease,
    ) -> None:
        """Have upstream render `rendered`, the agent chart the reference pushed for `target`."""
        serve_kinds(COMPONENT_KINDS)
        namespace, target_name = target["metadata"]["namespace"], target["metadata"]["name"]
        spec = registry["spec"]
        host, plain_http = spec["hostname"], bool(spec.get("plainHTTP"))
        kept = _kept_for(target)
        self._apply(
            _solar_object(
                "RegistryBinding",
                per_target_name(registry["metadata"]["name"], target_name),
                namespace,
                kept,
                {
                    "targetRef": {"name": target_name},
                    "registryRef": {"name": registry["metadata"]["name"]},
                },
            )
        )
        shared = self._placeholder(client, host, plain_http, agent_release)
        name = per_target_name(agent_release["metadata"]["name"], target_name)
        chart = ChartLocation(host, plain_http, f"{namespace}/{rendered.chart}", rendered.version)
        for obj in catalog_objects(name, namespace, chart):
            obj["metadata"].update(copy.deepcopy(kept))
            self._apply(obj)
        page_spec = agent_release.get("spec", {})
        release_spec: Obj = {
            "componentVersionRef": {"name": name},
            "uniqueName": effective_unique_name(agent_release, shared),
            "priority": int(page_spec.get("priority") or 0) + 1,
            "values": {AGENT_TAG_VALUE: rendered.version},
        }
        if page_spec.get("targetNamespace"):
            release_spec["targetNamespace"] = page_spec["targetNamespace"]
        self._apply(_solar_object("Release", name, namespace, kept, release_spec))
        self._apply(
            _solar_object(
                "ReleaseBinding",
                name,
                namespace,
                kept,
                {"targetRef": {"name": target_name}, "releaseRef": {"name": name}},
            )
        )

    def _placeholder(
        self, client: RegistryClient, host: str, plain_http: bool, agent_release: Obj
    ) -> Obj | None:
        """The ComponentVersion the page's agent Release names, made with an empty chart if it
        is not there; the one found or made."""
        namespace = agent_release["metadata"]["namespace"]
        name = agent_release.get("spec", {}).get("componentVersionRef", {}).get("name")
        if not name:
            return None
        try:
            return self.solar.get("ComponentVersion", name, namespace)
        except ApiError as error:
            if error.status != 404:
                raise
        repository = placeholder_repository(namespace, name)
        if (namespace, name) not in self._placeholders:
            client.push_chart(repository, Chart(f"component-{name}", PLACEHOLDER_VERSION, {}))
            self._placeholders.add((namespace, name))
        location = ChartLocation(host, plain_http, repository, PLACEHOLDER_VERSION)
        component, version = catalog_objects(name, namespace, location)
        for obj in (component, version):
            self._apply(obj)
        self.log(f"made ComponentVersion {namespace}/{name} for the Release it names")
        return version

    def _apply(self, wanted: Obj) -> None:
        """Create `wanted`, or bring what is there to its annotations, owners and spec."""
        try:
            self.solar.create(wanted)
            return
        except ApiError as error:
            if error.status != 409:
                raise
        meta = wanted["metadata"]
        current = self.solar.get(wanted["kind"], meta["name"], meta["namespace"])
        have = current["metadata"]
        annotations = {**(have.get("annotations") or {}), **(meta.get("annotations") or {})}
        owners = meta.get("ownerReferences", have.get("ownerReferences"))
        if (
            current.get("spec") == wanted["spec"]
            and annotations == (have.get("annotations") or {})
            and owners == have.get("ownerReferences")
        ):
            return
        if annotations:
            have["annotations"] = annotations
        if owners is not None:
            have["ownerReferences"] = owners
        current["spec"] = wanted["spec"]
        self.solar.update(current)


def _kept_for(target: Obj) -> Obj:
    """The metadata of an object kept for `target`: owned by it, and annotated with its name."""
    meta = target["metadata"]
    return {
        "annotations": {KEPT_FOR_ANNOTATION: meta["name"]},
        "ownerReferences": [
            {
                "apiVersion": target["apiVersion"],
                "kind": "Target",
                "name": meta["name"],
                "uid": meta["uid"],
            }
        ],
    }


def _solar_object(kind: str, name: str, namespace: str, kept: Obj, spec: Obj) -> Obj:
    meta: Obj = {"name": name, "namespace": namespace, **copy.deepcopy(kept)}
    return {"apiVersion": KINDS[kind].api_version, "kind": kind, "metadata": meta, "spec": spec}
