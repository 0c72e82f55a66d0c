"""Reference solar-renderer: the page's fourth row, plus the bootstrap chart Flux starts from.

For every Target it renders each bound Release into a Helm chart and pushes it to the Target's
render registry under `<namespace>/`: a Release annotated `target-credential` becomes the agent
release of that Target (a Secret with the kubeconfig and the token, and the agent Deployment);
any other Release becomes a chart shared by all Targets. Then it renders `bootstrap-<target>`,
one OCIRepository/HelmRelease pair per bound Release, and bumps its version whenever it changes.
What a render reads is in render_reads.py, the charts in render_charts.py, the pushes and their
versions in chart_pushes.py.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field

from solar_conformance.core.api import (
    ApiError,
    ClusterAPI,
    Obj,
    annotations_of,
    find_condition,
    labels_of,
)
from solar_conformance.core.clock import Clock
from solar_conformance.core.contract import Contract
from solar_conformance.core.credentials import TokenKubeconfig
from solar_conformance.core.oci import Chart, RegistryClient, RegistryError
from solar_conformance.core.semver import highest
from solar_conformance.simulators.reference.bindings import selector_matches
from solar_conformance.simulators.reference.chart_pushes import ChartPushes
from solar_conformance.simulators.reference.render_charts import ReleaseCharts
from solar_conformance.simulators.reference.render_config import (
    ConnectRegistry,
    RenderedRelease,
    RendererConfig,
)
from solar_conformance.simulators.reference.render_reads import BatchReads, RenderReads
from solar_conformance.simulators.reference.upstream_delivery import (
    UpstreamDelivery,
    kept_for_a_target,
)


@dataclass
class Renderer(RenderReads, ReleaseCharts, ChartPushes):
    solar: ClusterAPI
    connect_registry: ConnectRegistry
    clock: Clock
    contract: Contract
    config: RendererConfig
    log: Callable[[str], None] = print
    _pushed: dict[str, tuple[str, str]] = field(default_factory=dict)  # repo -> (content, version)
    _rendered_from: dict[tuple[str, str], tuple[object, ...]] = field(default_factory=dict)
    _batch: BatchReads | None = None
    _upstream: UpstreamDelivery | None = None

    def __post_init__(self) -> None:
        if self.config.upstream_renders_bootstrap:
            self._upstream = UpstreamDelivery(self.solar, self.log)

    def reconcile_all(self) -> float:
        with self.batch():
            for target in self.solar.list("Target"):
                try:
                    self.render_target(target)
                except (ApiError, RegistryError) as error:
                    self.log(f"render {target['metadata']['name']}: {error}")
        return self.config.resync_seconds

    def render_target(self, target: Obj) -> None:
        namespace, name = target["metadata"]["namespace"], target["metadata"]["name"]
        registry = self.registry_of(target)
        if registry is None:
            return
        inputs = self.inputs_of(target, registry)
        if self._rendered_from.get((namespace, name)) == inputs:
            return
        client = self.push_client(registry, namespace)
        rendered: list[RenderedRelease] = []
        bound: set[str] = set()
        for binding in self.bindings_of(target):
            release = self.read("Release", binding["spec"]["releaseRef"]["name"], namespace)
            if kept_for_a_target(release):
                continue  # what upstream renders this Target's agent release from
            bound.add(release["metadata"]["name"])
            if self._upstream is not None and not self.is_agent_release(release):
                continue  # upstream renders it from its ComponentVersion
            rendered_release = self.render_release(client, namespace, release, target)
            if rendered_release is not None:
                rendered.append(rendered_release)
                if self._upstream is not None:
                    self._upstream.deliver(client, registry, target, release, rendered_release)
            elif self.credential_pending(release, target):
                # The first bootstrap chart Flux sees must already carry the agent: wait for the
                # token rather than push one without it (Flux polls it only every few minutes).
                return
        if self._agent_binding_expected(target, bound):
            return  # a Profile will bind the agent release: wait for it, for the same reason
        if self._upstream is not None:
            self._rendered_from[(namespace, name)] = inputs
            return  # upstream renders the bootstrap chart
        if not rendered:
            return  # nothing bound yet: an empty bootstrap chart would only make Flux wait a poll
        bootstrap = self.bootstrap_chart(
            name, namespace, registry, sorted(rendered, key=lambda r: r.release)
        )
        self.push_bootstrap(client, registry["spec"]["hostname"], target, bootstrap)
        self._rendered_from[(namespace, name)] = inputs

    def render_release(
        self, client: RegistryClient, namespace: str, release: Obj, target: Obj
    ) -> RenderedRelease | None:
        target_namespace = release.get("spec", {}).get("targetNamespace") or namespace
        name = release["metadata"]["name"]
        chart = self.chart_for(release, target)
        if chart is not None:
            tagged = dataclasses.replace(
                chart, version=self.release_version(client, namespace, release, chart)
            )
            version = self.push_chart(client, namespace, tagged)
            return RenderedRelease(name, chart.name, version, target_namespace)
        # No token (revoked, disabled, not yet minted): keep what was delivered, if anything.
        # The agent then keeps running with a credential the API server rejects, and says so.
        chart_name = self.agent_chart_name(name, target["metadata"]["name"])
        repository = f"{namespace}/{chart_name}"
        known = self._pushed.get(repository)
        latest = known[1] if known else highest(self.existing_tags(client, repository))
        if latest is None:
            return None
        return RenderedRelease(name, chart_name, latest, target_namespace)

    def chart_for(self, release: Obj, target: Obj) -> Chart | None:
        """The Release's chart for this Target; None for an agent release without a token."""
        name = release["metadata"]["name"]
        if not self.is_agent_release(release):
            return self.shared_release_chart(release)
        token = self.token_of(target)
        if token is None or not self.config.apiserver_url:
            return None
        target_name = target["metadata"]["name"]
        kubeconfig = TokenKubeconfig(
            self.config.apiserver_url, token, self.config.apiserver_ca_pem
        ).render()
        return Chart(
            f"release-{name}-{target_name}",
            "0.0.0",
            templates=self.agent_templates(name, target, kubeconfig),
        )

    def is_agent_release(self, release: Obj) -> bool:
        return self.contract.agent_release_annotation in annotations_of(release)

    def credential_pending(self, release: Obj, target: Obj) -> bool:
        """A credential release not rendered yet, whose token is still to come."""
        if not self.is_agent_release(release):
            return False
        condition = find_condition(target, self.contract.condition_type) or {}
        return condition.get("reason") not in ("Disabled", "Revoked", "MintFailed")

    def _agent_binding_expected(self, target: Obj, bound: set[str]) -> bool:
        """A Profile of the namespace matches the Target and references an agent release that
        is not bound yet, while the credential may still come."""
        namespace = target["metadata"]["namespace"]
        for profile in self.profiles_of(namespace):
            spec = profile.get("spec", {})
            release_name = spec.get("releaseRef", {}).get("name")
            if release_name in bound or not selector_matches(
                spec.get("targetSelector"), labels_of(target)
            ):
                continue
            try:
                release = self.read("Release", release_name, namespace)
            except ApiError as error:
                if error.status == 404:
                    continue
                raise
            if self.credential_pending(release, target):
                return True
        return False
