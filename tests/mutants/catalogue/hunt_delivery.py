"""Broken solar-renderers, render registries and agents that leak the token or the push
credentials, deliver to the wrong place, or report the wrong time."""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from typing import Any

from tests.mutants.catalogue.agent import agent_clock_off_by
from tests.mutants.model import mutant

CHARTS = "solar_conformance.simulators.reference.render_charts:ReleaseCharts"
PUSHES = "solar_conformance.simulators.reference.chart_pushes:ChartPushes"
READS = "solar_conformance.simulators.reference.render_reads:RenderReads"
R = "solar_conformance.simulators.reference.renderer:Renderer"
A = "solar_conformance.simulators.reference.agent:Agent"


def _agent_kubeconfig(self: Any, chart: Any) -> str | None:
    """The kubeconfig an agent release chart carries (None: not an agent release)."""
    from solar_conformance.core import yamlio

    text = chart.templates.get("secret.yaml")
    if text is None:
        return None
    data = yamlio.load(text).get("stringData") or {}
    value = data.get(self.contract.agent_kubeconfig_key)
    return None if value is None else str(value)


# --- where the token goes --------------------------------------------------------------------------
@mutant(
    "renderer-token-in-bootstrap-values",
    ("table-renderer",),
    "the bootstrap chart's values also carry the agent's token (for the HelmReleases it installs)",
    f"{PUSHES}.push_bootstrap",
)
def _token_in_bootstrap(original: Any) -> Any:
    def push_bootstrap(self: Any, client: Any, host: str, target: Any, chart: Any) -> None:
        token = self.token_of(target)
        if token is not None:
            chart = dataclasses.replace(chart, values={**chart.values, "agentToken": token})
        original(self, client, host, target, chart)

    return push_bootstrap


@mutant(
    "renderer-copies-agent-to-other-namespaces",
    ("separate-namespaces", "regcred-namespace"),
    "every agent release is also pushed under each other namespace that holds Targets",
    f"{PUSHES}.push_chart",
)
def _copies_agent(original: Any) -> Any:
    def push(self: Any, client: Any, namespace: str, chart: Any) -> str:
        version = str(original(self, client, namespace, chart))
        if _agent_kubeconfig(self, chart) is not None:
            others = {t["metadata"]["namespace"] for t in self.solar.list("Target")} - {namespace}
            for other in sorted(others):
                original(self, client, other, chart)
        return version

    return push


@mutant(
    "renderer-caches-kubeconfig-in-configmap",
    ("table-renderer", "table-controller"),
    "the renderer keeps each agent kubeconfig it rendered in a ConfigMap of the Target's namespace "
    "on the SolAr cluster",
    f"{PUSHES}.push_chart",
)
def _kubeconfig_cache(original: Any) -> Any:
    from solar_conformance.core.api import ApiError, new_object

    def push(self: Any, client: Any, namespace: str, chart: Any) -> str:
        version = str(original(self, client, namespace, chart))
        kubeconfig = _agent_kubeconfig(self, chart)
        if kubeconfig is not None:
            name = f"{chart.name}-kubeconfig"
            try:
                cached = self.solar.get("ConfigMap", name, namespace)
                cached["data"] = {"kubeconfig": kubeconfig}
                self.solar.update(cached)
            except ApiError as error:
                if error.status != 404:
                    raise
                self.solar.create(
                    new_object("ConfigMap", name, namespace, data={"kubeconfig": kubeconfig})
                )
        return version

    return push


@mutant(
    "renderer-event-shows-kubeconfig",
    ("table-renderer", "table-controller"),
    "the renderer records a Normal Event on the Target whose message shows the kubeconfig it "
    "rendered",
    f"{R}.chart_for",
)
def _event_with_kubeconfig(original: Any) -> Any:
    from solar_conformance.core.api import ApiError, new_object
    from solar_conformance.core.clock import utc

    def chart_for(self: Any, release: Any, target: Any) -> Any:
        chart = original(self, release, target)
        kubeconfig = None if chart is None else _agent_kubeconfig(self, chart)
        if kubeconfig is None:
            return chart
        meta = target["metadata"]
        now = utc(self.clock.now())
        event = new_object(
            "Event",
            f"{meta['name']}.rendered-{int(self.clock.now().timestamp() * 1000)}",
            meta["namespace"],
            involvedObject={"kind": "Target", "name": meta["name"], "uid": meta["uid"]},
            reason="Rendered",
            message=f"rendered the agent release with the kubeconfig:\n{kubeconfig}",
            type="Normal",
            firstTimestamp=now,
            lastTimestamp=now,
            count=1,
        )
        try:
            self.solar.create(event)
        except ApiError as error:
            if error.status != 409:
                raise
        return chart

    return chart_for


@mutant(
    "renderer-push-credentials-in-agent-release",
    ("regcred-namespace", "security-notes"),
    "the agent release also carries an image pull Secret made from SolAr's push credentials",
    f"{R}.chart_for",
)
def _push_credentials(original: Any) -> Any:
    from solar_conformance.core import yamlio
    from solar_conformance.core.conditions import secret_value
    from solar_conformance.core.credentials import dockerconfigjson

    def chart_for(self: Any, release: Any, target: Any) -> Any:
        chart = original(self, release, target)
        registry = self.registry_of(target)
        if chart is None or registry is None or _agent_kubeconfig(self, chart) is None:
            return chart
        namespace = target["metadata"]["namespace"]
        secret = self.read("Secret", registry["spec"]["solarSecretRef"]["name"], namespace)
        config = dockerconfigjson(
            registry["spec"]["hostname"],
            secret_value(secret, "username") or "",
            secret_value(secret, "password") or "",
        )
        pull = {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "kubernetes.io/dockerconfigjson",
            "metadata": {"name": "solar-agent-pull"},
            "stringData": {".dockerconfigjson": config},
        }
        return dataclasses.replace(
            chart, templates={**chart.templates, "pull-secret.yaml": yamlio.dump(pull)}
        )

    return chart_for


# --- what is delivered where ----------------------------------------------------------------------
@mutant(
    "renderer-bootstrap-counter-ignores-registry",
    ("runbook", "on-its-own", "point-once"),
    "the bootstrap version counts only from the Target's status, not from the tags already pushed: "
    "a Target made again under the same name is tagged below the charts of the deleted one",
    f"{PUSHES}.bootstrap_version",
)
def _counter_from_status(original: Any) -> Any:
    def bootstrap_version(self: Any, client: Any, target: Any, repository: str) -> int:
        recorded = target.get("status", {}).get("bootstrapVersion", 0)
        return recorded if isinstance(recorded, int) else 0

    return bootstrap_version


@mutant(
    "renderer-pull-secret-always-regcred",
    ("table-flux", "page-objects"),
    "the bootstrap chart's sources name the pull Secret regcred, whatever the Registry's "
    "targetPullSecretName says",
    f"{CHARTS}.bootstrap_chart",
    equivalent=(
        "the page names the pull Secret regcred and every Registry the operator creates "
        "(docs/contracts.md, Setting up the solar-agent) says targetPullSecretName: regcred; "
        "a SolAr that ignores the field renders what the page asks for"
    ),
)
def _always_regcred(original: Any) -> Any:
    def bootstrap_chart(
        self: Any, target: str, namespace: str, registry: Any, releases: Any
    ) -> Any:
        spec = {**registry["spec"], "targetPullSecretName": "regcred"}
        return original(self, target, namespace, {**registry, "spec": spec}, releases)

    return bootstrap_chart


def _target_namespace(agent: bool, namespace: str) -> Any:
    def replace(original: Any) -> Any:
        def render_release(
            self: Any, client: Any, solar_namespace: str, release: Any, target: Any
        ) -> Any:
            from solar_conformance.core.api import annotations_of

            found = original(self, client, solar_namespace, release, target)
            is_agent = self.contract.agent_release_annotation in annotations_of(release)
            if found is None or is_agent != agent:
                return found
            return dataclasses.replace(found, target_namespace=namespace)

        return render_release

    return replace


mutant(
    "renderer-agent-in-fixed-namespace",
    ("intro-own-agent", "table-flux"),
    "every agent is installed into namespace solar-system on the target cluster, not into the "
    "Target's namespace",
    f"{R}.render_release",
)(_target_namespace(True, "solar-system"))
mutant(
    "renderer-releases-in-flux-system",
    ("table-flux", "on-its-own"),
    "every bound Release but the agent is installed into namespace flux-system, not into its "
    "targetNamespace",
    f"{R}.render_release",
)(_target_namespace(False, "flux-system"))


@mutant(
    "renderer-ignores-condition",
    ("runbook", "table-renderer"),
    "a render depends on the bindings, Releases, Profiles and the push Secret only, not on the "
    "credential condition: a new token is rendered only when something else changes",
    f"{READS}.inputs_of",
)
def _ignores_condition(original: Any) -> Any:
    def inputs_of(self: Any, target: Any, registry: Any) -> Any:
        uid, generation, _condition, registry_version, url, versions = original(
            self, target, registry
        )
        push_secret = registry.get("spec", {}).get("solarSecretRef", {}).get("name", "")
        kept = tuple(v for v in versions if v[0] != "Secret" or v[1] == push_secret)
        return (uid, generation, registry_version, url, kept)

    return inputs_of


# --- the registry's access policy -------------------------------------------------------------------
@mutant(
    "policy-everyone-reads-outside-namespaces",
    ("regcred-namespace", "security-notes"),
    "every registry user may read the repositories outside any namespace's path",
    "solar_conformance.core.policy:AccessPolicy.for_namespaces",
)
def _reads_outside(original: Any) -> Any:
    def for_namespaces(cls: Any, push_user: str, readers: dict[str, str]) -> Any:
        policy = original(cls, push_user, readers)
        policy.document["repositories"]["**"]["defaultPolicy"] = ["read"]
        return policy

    return for_namespaces


@mutant(
    "policy-reader-may-write-own-namespace",
    ("security-notes",),
    "each namespace's pull user may also create (push) in its namespace",
    "solar_conformance.core.policy:AccessPolicy.for_namespaces",
)
def _reader_writes(original: Any) -> Any:
    def for_namespaces(cls: Any, push_user: str, readers: dict[str, str]) -> Any:
        policy = original(cls, push_user, readers)
        for entry in policy.document["repositories"].values():
            for rule in entry["policies"]:
                rule["actions"] = [*rule["actions"], "create"]
        return policy

    return for_namespaces


# --- the agent -------------------------------------------------------------------------------------
@mutant(
    "agent-clock-an-hour-behind",
    "report-advances",
    "the agent's clock runs an hour behind: every lastReportTime is an hour old when written",
    f"{A}.report",
)
def _behind(original: Any) -> Any:
    return agent_clock_off_by(original, timedelta(hours=-1))


@mutant(
    "agent-annotates-report-with-token",
    ("table-agent", "scope"),
    "the agent notes the token it reported with in an annotation of its TargetReport",
    f"{A}.report",
)
def _annotates(original: Any) -> Any:
    from solar_conformance.core.credentials import TokenKubeconfig
    from tests.mutants.model import Wrapped

    def report(self: Any, solar: Any) -> None:
        token = TokenKubeconfig.parse(self.read_kubeconfig()).token

        def update(obj: Any) -> Any:
            notes = obj["metadata"].setdefault("annotations", {})
            notes["solar.opendefense.cloud/reported-with"] = token
            return solar.update(obj)

        original(self, Wrapped(solar, update=update))

    return report


@mutant(
    "agent-logs-kubeconfig-base64",
    "report-stays-empty-harness",
    "the agent logs the kubeconfig it read, base64-encoded, before each report",
    f"{A}.report",
)
def _logs_base64(original: Any) -> Any:
    import base64

    def report(self: Any, solar: Any) -> None:
        encoded = base64.b64encode(self.read_kubeconfig().encode()).decode()
        self.log(f"kubeconfig: {encoded}")
        original(self, solar)

    return report


@mutant(
    "agent-reports-in-default-namespace",
    ("table-agent", "report-after-install"),
    "the agent looks for its Target and TargetReport in namespace default, not its own",
    f"{A}.report",
)
def _default_namespace(original: Any) -> Any:
    def report(self: Any, solar: Any) -> None:
        namespace = self.namespace
        self.namespace = "default"
        try:
            original(self, solar)
        finally:
            self.namespace = namespace

    return report
