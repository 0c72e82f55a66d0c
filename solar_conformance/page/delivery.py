"""From the bootstrap chart to the chart that delivers a Target's agent, as Flux follows it: the
OCIRepository the bootstrap chart holds for the agent Release, then each chart that one
delivers, every chart read as Flux's Helm renders it for the HelmRelease that installs it. Each
lookup names its promises (solar_conformance/page/promises.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from solar_conformance.core import yamlio
from solar_conformance.core.api import Obj
from solar_conformance.core.helm_render import ChartRenderer, Installation, merged_values
from solar_conformance.core.landscape import Landscape
from solar_conformance.core.oci import Chart, RegistryClient
from solar_conformance.page.charts import (
    bootstrap_chart,
    bootstrap_installation,
    chart_secret_text,
    pull_source,
    release_source,
    rendered,
)
from solar_conformance.page.lookup import agent_release, release_keys
from solar_conformance.page.promises import lookup
from solar_conformance.page.reading import NotAsPromised

# Charts followed from the bootstrap chart before the harness calls the chain a loop: the
# reference's agent release is one hop away, upstream's application chart two.
MAX_HOPS = 8


@dataclass(frozen=True)
class Delivery:
    """A chart Flux pulls on its way from the bootstrap chart to the agent: its repository, the
    `spec.ref` it is pulled by, the chart as Flux's Helm renders it, and how it renders it (None
    when no HelmRelease installs it)."""

    repository: str
    ref: Obj
    chart: Chart
    installation: Installation | None = None


@lookup("chart")
def delivered_sources(objects: list[Obj]) -> list[Obj]:
    """The OCIRepositories of a chart that a HelmRelease of the same chart installs from: the
    charts Flux pulls next."""
    chart_refs = [
        (o.get("spec") or {}).get("chartRef") or {}
        for o in objects
        if o.get("kind") == "HelmRelease"
    ]
    installed = {r.get("name") for r in chart_refs if r.get("kind") == "OCIRepository"}
    return [
        o
        for o in objects
        if o.get("kind") == "OCIRepository" and (o.get("metadata") or {}).get("name") in installed
    ]


@lookup("chart")
def installation_of(source: Obj, objects: list[Obj]) -> Installation | None:
    """How Flux's Helm installs the chart `source` pulls: the HelmRelease among `objects` whose
    `spec.chartRef` names it, its values merged over those of its `spec.valuesFrom` (ConfigMaps
    and Secrets of the same chart); None when no HelmRelease installs it."""
    name = (source.get("metadata") or {}).get("name")
    for obj in objects:
        spec = obj.get("spec") or {}
        chart_ref = spec.get("chartRef") or {}
        if obj.get("kind") != "HelmRelease" or chart_ref.get("kind") != "OCIRepository":
            continue
        if chart_ref.get("name") == name:
            return Installation.of(obj, _values_from(spec.get("valuesFrom") or [], objects))
    return None


def _values_from(references: list[Obj], objects: list[Obj]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for reference in references:
        kind, name = reference.get("kind"), reference.get("name")
        key = reference.get("valuesKey") or "values.yaml"
        holder = next(
            (
                o
                for o in objects
                if o.get("kind") == kind and (o.get("metadata") or {}).get("name") == name
            ),
            None,
        )
        text = _text_under(holder, key) if holder is not None else None
        if text is None:
            if reference.get("optional"):
                continue
            raise NotAsPromised(
                f"a HelmRelease takes values from {kind}/{name} key {key}, which its chart "
                "does not hold"
            )
        try:
            loaded = yamlio.load(text) or {}
        except yamlio.YAMLError as error:
            raise NotAsPromised(f"the values in {kind}/{name} are not YAML: {error}") from None
        if not isinstance(loaded, dict):
            raise NotAsPromised(f"the values in {kind}/{name} key {key} are not a map")
        values = merged_values(values, loaded)
    return values


def _text_under(holder: Obj, key: str) -> str | None:
    if holder.get("kind") == "Secret":
        return chart_secret_text(holder, key)
    value = (holder.get("data") or {}).get(key)
    return None if value is None else str(value)


def _location(source: Obj, where: str) -> tuple[str, Obj]:
    spec = source.get("spec") or {}
    _, _, repository = str(spec.get("url", "")).removeprefix("oci://").partition("/")
    if not repository:
        raise NotAsPromised(
            f"{where} points at {spec.get('url')!r}, not at an oci://<registry>/<repository> URL"
        )
    return repository, spec.get("ref") or {}


@lookup("page", "chart", "profile", "solar-api")
def agent_delivery(
    landscape: Landscape,
    client: RegistryClient,
    namespace: str,
    target: str,
    renderer: ChartRenderer,
) -> Delivery:
    """The chart that delivers a Target's agent, found as Flux finds it: the bootstrap chart's
    OCIRepository for the agent Release, then each chart that one delivers (`_Chain`). Every
    chart is read as Flux's Helm renders it for the HelmRelease that installs it (the page's
    HelmRelease for the bootstrap chart)."""
    release = agent_release(landscape, namespace)
    if release is None:
        raise NotAsPromised(f"namespace {namespace} has no Release annotated target-credential")
    bootstrap = rendered(
        renderer, bootstrap_chart(client, namespace, target), bootstrap_installation(namespace)
    )
    chain = _Chain(
        client,
        renderer,
        release_keys(release),
        landscape.contract.release_label,
        landscape.contract.agent_kubeconfig_key,
        target,
    )
    objects = bootstrap.manifests()
    source = release_source(objects, chain.keys, chain.label)
    if source is None:
        raise NotAsPromised(f"the bootstrap chart of {target} does not carry the agent release")
    return chain.follow(source, objects)


@dataclass(frozen=True)
class _Chain:
    """From the bootstrap chart's entry for the agent Release to the chart that holds the
    agent's kubeconfig: the reference's agent release is one hop away; upstream's bootstrap
    chart points at a release chart, which points at the application chart."""

    client: RegistryClient
    renderer: ChartRenderer
    keys: tuple[str, ...]
    label: str
    kubeconfig_key: str
    target: str

    def follow(self, source: Obj, objects: list[Obj]) -> Delivery:
        """Pull what `source` points at; stop at a chart that holds a Secret with the
        kubeconfig key or that delivers no further chart, else go on with the one it
        delivers."""
        where = f"the bootstrap chart of {self.target}"
        seen: list[str] = []
        while len(seen) < MAX_HOPS:
            repository, ref = _location(source, where)
            pulled = pull_source(self.client, repository, ref)
            hop = f"{repository}:{pulled.version}"
            if hop in seen:
                raise NotAsPromised(
                    f"the charts from the bootstrap chart of {self.target} point back at "
                    f"{hop}, a loop: {' -> '.join([*seen, hop])}"
                )
            seen.append(hop)
            installation = installation_of(source, objects)
            chart = rendered(self.renderer, pulled, installation)
            objects = chart.manifests()
            following = delivered_sources(objects)
            if _holds_key(objects, self.kubeconfig_key) or not following:
                return Delivery(repository, ref, chart, installation)
            source, where = self._next(following, repository), repository
        raise NotAsPromised(
            f"the charts from the bootstrap chart of {self.target} go on for more than "
            f"{MAX_HOPS} hops without one that holds the agent's kubeconfig: {' -> '.join(seen)}"
        )

    def _next(self, following: list[Obj], repository: str) -> Obj:
        """The one chart delivered next: the only one, or the only one keyed by the Release."""
        if len(following) > 1:
            keyed = [s for s in following if release_source([s], self.keys, self.label)]
            following = keyed or following
        if len(following) > 1:
            raise NotAsPromised(
                f"{repository} delivers {len(following)} charts and none is keyed by the agent "
                "Release: the harness cannot tell which one to follow"
            )
        return following[0]


def _holds_key(objects: list[Obj], key: str) -> bool:
    return any(
        o.get("kind") == "Secret"
        and (key in (o.get("stringData") or {}) or key in (o.get("data") or {}))
        for o in objects
    )


@lookup("page", "chart")
def agent_chart(
    landscape: Landscape,
    client: RegistryClient,
    namespace: str,
    target: str,
    renderer: ChartRenderer,
) -> Chart:
    """The agent release of a Target, found through its bootstrap chart as Flux would, as Flux's
    Helm renders it."""
    return agent_delivery(landscape, client, namespace, target, renderer).chart


@lookup("page", "chart")
def agent_source(
    landscape: Landscape,
    client: RegistryClient,
    namespace: str,
    target: str,
    renderer: ChartRenderer,
) -> tuple[str, Obj]:
    """The repository of a Target's agent release and the `ref` Flux pulls it by."""
    delivery = agent_delivery(landscape, client, namespace, target, renderer)
    return delivery.repository, delivery.ref
