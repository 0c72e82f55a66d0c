"""Broken solar-renderers (solar_conformance/simulators/reference/renderer.py): the agent release and the bootstrap
chart."""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Any

from tests.mutants.catalogue.target_client import REMEMBER_TARGET_CLUSTER, target_cluster
from tests.mutants.model import mutant

CHARTS = "solar_conformance.simulators.reference.render_charts:ReleaseCharts"
PUSHES = "solar_conformance.simulators.reference.chart_pushes:ChartPushes"
READS = "solar_conformance.simulators.reference.render_reads:RenderReads"
R = "solar_conformance.simulators.reference.renderer:Renderer"


# --- the agent release ---------------------------------------------------------------------------
@mutant(
    "renderer-sibling-token",
    ("table-renderer", "table-agent"),
    "the agent release carries the token of another Target of the namespace when there is one",
    f"{READS}.token_of",
)
def _sibling_token(original: Any) -> Any:
    def token_of(self: Any, target: Any) -> str | None:
        namespace, name = target["metadata"]["namespace"], target["metadata"]["name"]
        for other in self.solar.list("Target", namespace):
            if other["metadata"]["name"] != name:
                token = original(self, other)
                if token is not None:
                    return str(token)
        token = original(self, target)
        return None if token is None else str(token)

    return token_of


@mutant(
    "renderer-mints-own-token",
    ("table-renderer", "table-agent"),
    "the renderer mints a token of its own for the agent instead of using the Secret's",
    f"{READS}.token_of",
)
def _own_token(original: Any) -> Any:
    minted: dict[str, str] = {}

    def token_of(self: Any, target: Any) -> str | None:
        if original(self, target) is None:
            return None
        meta = target["metadata"]
        if meta["uid"] not in minted:
            account = f"solar-agent-{meta['name']}"
            issued = self.solar.create_token(meta["namespace"], account, expiration_seconds=3600)
            minted[meta["uid"]] = issued.token
        return minted[meta["uid"]]

    return token_of


@mutant(
    "renderer-first-token-forever",
    ("runbook", "table-renderer"),
    "the renderer keeps rendering the first token it saw for a Target",
    f"{READS}.token_of",
)
def _first_token(original: Any) -> Any:
    seen: dict[str, str] = {}

    def token_of(self: Any, target: Any) -> str | None:
        token: str | None = original(self, target)
        uid = str(target["metadata"]["uid"])
        if token is not None:
            seen.setdefault(uid, token)
        return seen.get(uid, token)

    return token_of


def _kubeconfig(change: Any) -> Any:
    """A change of the token kubeconfig the renderer writes into the agent release."""

    def replace(original: Any) -> Any:
        def chart_for(self: Any, release: Any, target: Any) -> Any:
            from solar_conformance.core import yamlio
            from solar_conformance.core.credentials import TokenKubeconfig

            chart = original(self, release, target)
            if chart is None or "secret.yaml" not in chart.templates:
                return chart
            secret = yamlio.load(chart.templates["secret.yaml"])
            data = secret["stringData"]
            key = self.contract.agent_kubeconfig_key
            data[key] = change(TokenKubeconfig.parse(data[key])).render()
            chart.templates["secret.yaml"] = yamlio.dump(secret)
            return chart

        return chart_for

    return replace


mutant(
    "renderer-wrong-server",
    "table-renderer",
    "the agent's kubeconfig points at the API server's in-cluster name, not the configured URL",
    f"{R}.chart_for",
)(_kubeconfig(lambda k: dataclasses.replace(k, server="https://kubernetes.default.svc")))
mutant(
    "renderer-skips-verification",
    "table-renderer",
    "the agent's kubeconfig skips verifying the SolAr API server's certificate",
    f"{R}.chart_for",
)(_kubeconfig(lambda k: dataclasses.replace(k, ca_pem="", insecure=True)))
mutant(
    "renderer-no-ca",
    "table-renderer",
    "the agent's kubeconfig does not carry the SolAr API server's certificate authority",
    f"{R}.chart_for",
)(_kubeconfig(lambda k: dataclasses.replace(k, ca_pem="")))


@mutant(
    "renderer-slow-agent",
    "report-advances",
    "the agent release runs the agent with a report interval of 60 s, not the profile's",
    f"{CHARTS}.agent_templates",
)
def _slow_agent(original: Any) -> Any:
    def agent_templates(self: Any, release: str, target: Any, kubeconfig: str) -> Any:
        interval = self.config.agent_interval_seconds
        self.config.agent_interval_seconds = 60
        try:
            return original(self, release, target, kubeconfig)
        finally:
            self.config.agent_interval_seconds = interval

    return agent_templates


@mutant(
    "renderer-one-agent-per-namespace",
    ("intro-own-agent", "intro-setup-once"),
    "the Targets of a namespace share one agent: each gets the agent of the namespace's first Target",
    f"{R}.chart_for",
)
def _shared_agent(original: Any) -> Any:
    def chart_for(self: Any, release: Any, target: Any) -> Any:
        namespace = target["metadata"]["namespace"]
        targets = self.solar.list("Target", namespace)
        first = min(targets, key=lambda t: str(t["metadata"]["creationTimestamp"]), default=target)
        return original(self, release, first)

    return chart_for


@mutant(
    "renderer-agent-chart-outside-namespace",
    ("regcred-weakness", "table-flux"),
    "the agent release is pushed to agents/<namespace>/..., outside the namespace's repositories",
    f"{PUSHES}.push_chart",
)
def _outside(original: Any) -> Any:
    def push(self: Any, client: Any, namespace: str, chart: Any) -> str:
        if chart.name.startswith("bootstrap-") or not chart.name.startswith("release-solar-agent"):
            return str(original(self, client, namespace, chart))
        return str(original(self, client, f"agents/{namespace}", chart))

    return push


# --- the bootstrap chart -------------------------------------------------------------------------
@mutant(
    "renderer-bootstrap-wrong-path",
    ("url-form", "point-once"),
    "the bootstrap chart is pushed to <namespace>/<target>/bootstrap, not <namespace>/bootstrap-<target>",
    f"{PUSHES}.push_chart",
)
def _wrong_path(original: Any) -> Any:
    from solar_conformance.core.oci import Chart

    def push(self: Any, client: Any, namespace: str, chart: Any) -> str:
        if chart.name.startswith("bootstrap-"):
            target = chart.name.removeprefix("bootstrap-")
            moved = Chart("bootstrap", chart.version, chart.templates, chart.values)
            return str(original(self, client, f"{namespace}/{target}", moved))
        return str(original(self, client, namespace, chart))

    return push


@mutant(
    "renderer-bootstrap-non-semver",
    ("page-yaml", "page-objects", "replace-values"),
    "the bootstrap chart is tagged latest, which the page's semver range never matches",
    "solar_conformance.simulators.reference.tags:bootstrap_tag",
)
def _latest(original: Any) -> Any:
    return lambda version: "latest"


@mutant(
    "renderer-fixed-registry-host",
    ("replace-values", "table-flux"),
    "the bootstrap chart's sources name a fixed registry host, not the Registry's hostname",
    f"{CHARTS}.bootstrap_chart",
)
def _fixed_host(original: Any) -> Any:
    def bootstrap_chart(
        self: Any, target: str, namespace: str, registry: Any, releases: Any
    ) -> Any:
        moved = {**registry, "spec": {**registry["spec"], "hostname": "registry.solar.example"}}
        return original(self, target, namespace, moved, releases)

    return bootstrap_chart


@mutant(
    "renderer-bootstrap-without-pull-secret",
    ("table-flux", "page-objects"),
    "the bootstrap chart's sources carry no secretRef, so Flux pulls the releases anonymously",
    f"{CHARTS}.bootstrap_chart",
)
def _no_secret_ref(original: Any) -> Any:
    from solar_conformance.core import yamlio

    def bootstrap_chart(
        self: Any, target: str, namespace: str, registry: Any, releases: Any
    ) -> Any:
        chart = original(self, target, namespace, registry, releases)
        for name, text in list(chart.templates.items()):
            docs = [d for d in yamlio.load_all(text) if d]
            for doc in docs:
                doc.get("spec", {}).pop("secretRef", None)
            chart.templates[name] = "---\n".join(yamlio.dump(d) for d in docs)
        return chart

    return bootstrap_chart


@mutant(
    "renderer-agent-only",
    ("table-flux", "on-its-own"),
    "the bootstrap chart carries only the agent release, not the other bound Releases",
    f"{CHARTS}.bootstrap_chart",
)
def _agent_only(original: Any) -> Any:
    def bootstrap_chart(
        self: Any, target: str, namespace: str, registry: Any, releases: Any
    ) -> Any:
        agent = [r for r in releases if r.chart.startswith(f"release-{r.release}-")]
        return original(self, target, namespace, registry, agent or releases)

    return bootstrap_chart


@mutant(
    "renderer-misses-new-bindings",
    "on-its-own-promptly",
    "a new ReleaseBinding of an existing Release does not trigger a new render",
    f"{READS}.inputs_of",
)
def _blind_to_bindings(original: Any) -> Any:
    # The Releases a Target's first render depended on: a Release bound later is reached only
    # through its new ReleaseBinding, so the render must not see it either.
    first_releases: dict[str, set[str]] = {}

    def inputs_of(self: Any, target: Any, registry: Any) -> Any:
        inputs = original(self, target, registry)
        known = first_releases.setdefault(
            str(target["metadata"]["uid"]), {v[1] for v in inputs[-1] if v[0] == "Release"}
        )
        versions = tuple(
            v
            for v in inputs[-1]
            if v[0] != "ReleaseBinding" and (v[0] != "Release" or v[1] in known)
        )
        return (*inputs[:-1], versions)

    return inputs_of


@mutant(
    "renderer-renders-before-token",
    "on-its-own-promptly",
    "the renderer pushes a bootstrap chart without the agent while the token is still to come",
    f"{R}.credential_pending",
)
def _eager(original: Any) -> Any:
    return lambda self, release, target: False


@mutant(
    "renderer-applies-on-target",
    "no-reach",
    "SolAr reaches into the target cluster: the renderer applies the Flux objects there itself",
    f"{R}.render_target",
    also=(REMEMBER_TARGET_CLUSTER,),
)
def _reaches_in(original: Any) -> Any:
    from solar_conformance.core.api import ApiError, new_object

    def render_target(self: Any, target: Any) -> None:
        original(self, target)
        client = target_cluster()
        namespace, name = target["metadata"]["namespace"], target["metadata"]["name"]
        if client is None or f"{namespace}/bootstrap-{name}" not in self._pushed:
            return  # not before the bootstrap chart is pushed
        for obj in (
            new_object("Namespace", namespace),
            new_object(
                "OCIRepository",
                f"bootstrap-{name}",
                namespace,
                spec={
                    "interval": "5m0s",
                    "url": f"oci://pushed-by-solar/{namespace}/bootstrap-{name}",
                },
            ),
        ):
            with contextlib.suppress(ApiError):
                client.create(obj)

    return render_target


# --- what a Target's bootstrap chart carries, where the token goes -------------------------------
@mutant(
    "renderer-renders-namespace-bindings",
    ("table-flux", "setup-page"),
    "each Target's bootstrap chart carries every Release bound to any Target of its namespace",
    f"{READS}.bindings_of",
)
def _namespace_bindings(original: Any) -> Any:
    def bindings_of(self: Any, target: Any) -> list[Any]:
        namespace = target["metadata"]["namespace"]
        every = [b for bs in self._bindings_by_target(namespace).values() for b in bs]
        seen: dict[str, Any] = {}
        for binding in sorted(every, key=lambda b: b["metadata"]["name"]):
            seen.setdefault(binding["spec"]["releaseRef"]["name"], binding)
        return list(seen.values())

    return bindings_of


@mutant(
    "renderer-kubeconfig-in-configmap",
    "table-renderer",
    "the agent release carries the kubeconfig with the token in a ConfigMap, not a Secret",
    f"{CHARTS}.agent_templates",
)
def _configmap(original: Any) -> Any:
    from solar_conformance.core import yamlio

    def agent_templates(self: Any, release: str, target: Any, kubeconfig: str) -> dict[str, str]:
        templates = dict(original(self, release, target, kubeconfig))
        secret = yamlio.load(templates["secret.yaml"])
        config_map = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": secret["metadata"],
            "data": secret["stringData"],
        }
        templates["secret.yaml"] = yamlio.dump(config_map)
        deployment = yamlio.load(templates["deployment.yaml"])
        for volume in deployment["spec"]["template"]["spec"]["volumes"]:
            volume["configMap"] = {"name": volume.pop("secret")["secretName"]}
        templates["deployment.yaml"] = yamlio.dump(deployment)
        return templates

    return agent_templates


@mutant(
    "renderer-drops-agent-on-revoke",
    ("runbook", "on-its-own"),
    "a revoked credential takes the agent release out of the bootstrap chart, so Flux uninstalls "
    "the agent instead of leaving it to log that it is rejected",
    f"{R}.render_target",
)
def _drops_agent(original: Any) -> Any:
    from solar_conformance.core.api import find_condition

    def render_target(self: Any, target: Any) -> None:
        condition = find_condition(target, self.contract.condition_type) or {}
        registry = self.registry_of(target)
        if condition.get("reason") != "Revoked" or registry is None:
            original(self, target)
            return
        namespace, name = target["metadata"]["namespace"], target["metadata"]["name"]
        client = self.push_client(registry, namespace)
        rendered = []
        for binding in self.bindings_of(target):
            release = self.solar.get("Release", binding["spec"]["releaseRef"]["name"], namespace)
            notes = release["metadata"].get("annotations") or {}
            if self.contract.agent_release_annotation in notes:
                continue
            found = self.render_release(client, namespace, release, target)
            if found is not None:
                rendered.append(found)
        rendered.sort(key=lambda r: r.release)
        chart = self.bootstrap_chart(name, namespace, registry, rendered)
        self.push_bootstrap(client, registry["spec"]["hostname"], target, chart)

    return render_target
