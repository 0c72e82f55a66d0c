"""Broken SolArs, delivery side: the token copied elsewhere inside the agent release or onto the target cluster, registry reads by digest
and HEAD, a report that goes back or empties across a restart, unbound Releases still rendered,
the wrong Registry, a Release's targetNamespace ignored, near misses of a password."""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from typing import Any

from tests.mutants.catalogue.variants_release_chart import (
    where_the_reference_installs,
    wrapped_in_release_charts,
)
from tests.mutants.model import Patch, mutant

CHARTS = "solar_conformance.simulators.reference.render_charts:ReleaseCharts"
PUSHES = "solar_conformance.simulators.reference.chart_pushes:ChartPushes"
READS = "solar_conformance.simulators.reference.render_reads:RenderReads"
R = "solar_conformance.simulators.reference.renderer:Renderer"
A = "solar_conformance.simulators.reference.agent:Agent"
REGISTRY = "solar_conformance.simulators.memory.registry:InMemoryRegistry"
CLIENT = "solar_conformance.simulators.memory.registry:InMemoryRegistryClient"


def _token_of(kubeconfig: str) -> str:
    from solar_conformance.core.credentials import TokenKubeconfig

    return TokenKubeconfig.parse(kubeconfig).token


def _with_agent_templates(change: Any) -> Any:
    """`Renderer.agent_templates` with `change(templates, kubeconfig, namespace)` applied."""

    def replace(original: Any) -> Any:
        def agent_templates(self: Any, release: str, target: Any, kubeconfig: str) -> Any:
            templates = dict(original(self, release, target, kubeconfig))
            change(templates, kubeconfig, target["metadata"]["namespace"])
            return templates

        return agent_templates

    return replace


def _edit_deployment(templates: dict[str, str], edit: Any) -> None:
    from solar_conformance.core import yamlio

    for path, text in templates.items():
        docs = [doc for doc in yamlio.load_all(text) if doc]
        if any(doc.get("kind") == "Deployment" for doc in docs):
            for doc in docs:
                if doc.get("kind") == "Deployment":
                    edit(doc)
            templates[path] = "---\n".join(yamlio.dump(doc) for doc in docs)


# --- the token elsewhere in the agent release, and so on the target cluster -----------------------
def _configmap(templates: dict[str, str], kubeconfig: str, namespace: str) -> None:
    from solar_conformance.core import yamlio

    templates["diagnostics.yaml"] = yamlio.dump(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "solar-agent-diagnostics"},
            "data": {"token": _token_of(kubeconfig)},
        }
    )


mutant(
    "renderer-agent-token-in-configmap",
    ("table-renderer", "table-flux"),
    "the agent release also carries a ConfigMap with the agent's token (for diagnostics), which "
    "Flux installs on the target cluster",
    f"{CHARTS}.agent_templates",
)(_with_agent_templates(_configmap))


def _env(templates: dict[str, str], kubeconfig: str, namespace: str) -> None:
    token = _token_of(kubeconfig)

    def edit(deployment: Any) -> None:
        for container in deployment["spec"]["template"]["spec"]["containers"]:
            container.setdefault("env", []).append({"name": "SOLAR_AGENT_TOKEN", "value": token})

    _edit_deployment(templates, edit)


mutant(
    "renderer-agent-token-in-env",
    ("table-renderer", "table-flux"),
    "the agent's Deployment also gets the token in an environment variable, besides the "
    "kubeconfig Secret",
    f"{CHARTS}.agent_templates",
)(_with_agent_templates(_env))


def _pod_annotation(templates: dict[str, str], kubeconfig: str, namespace: str) -> None:
    token = _token_of(kubeconfig)

    def edit(deployment: Any) -> None:
        notes = deployment["spec"]["template"]["metadata"].setdefault("annotations", {})
        notes["solar.opendefense.cloud/agent-token"] = token

    _edit_deployment(templates, edit)


mutant(
    "renderer-agent-token-in-pod-annotation",
    ("table-renderer", "table-flux"),
    "the agent's pod template is annotated with its token (to restart it on a new one)",
    f"{CHARTS}.agent_templates",
)(_with_agent_templates(_pod_annotation))


def _copy_to_default(templates: dict[str, str], kubeconfig: str, namespace: str) -> None:
    from solar_conformance.core import yamlio

    for path, text in list(templates.items()):
        for doc in yamlio.load_all(text):
            if doc and doc.get("kind") == "Secret":
                copy = {**doc, "metadata": {**doc["metadata"], "namespace": "default"}}
                templates[f"default-{path}"] = yamlio.dump(copy)


mutant(
    "renderer-agent-kubeconfig-copied-to-default",
    ("table-renderer", "table-flux"),
    "the agent release also installs a copy of the kubeconfig Secret into namespace default of "
    "the target cluster",
    f"{CHARTS}.agent_templates",
)(_with_agent_templates(_copy_to_default))


def _chart_with(change: Any) -> Any:
    """`Renderer.chart_for` with `change(chart, token)` applied to every agent release."""

    def replace(original: Any) -> Any:
        from tests.mutants.catalogue.hunt_delivery import _agent_kubeconfig

        def chart_for(self: Any, release: Any, target: Any) -> Any:
            chart = original(self, release, target)
            kubeconfig = None if chart is None else _agent_kubeconfig(self, chart)
            if kubeconfig is None:
                return chart
            return change(chart, _token_of(kubeconfig))

        return chart_for

    return replace


mutant(
    "renderer-agent-token-in-values",
    ("table-renderer",),
    "the agent release's values.yaml also carries the agent's token",
    f"{R}.chart_for",
)(_chart_with(lambda chart, token: dataclasses.replace(chart, values={"token": token})))


@mutant(
    "renderer-agent-token-in-chart-annotations",
    ("table-renderer",),
    "the agent release's Chart.yaml annotations carry the agent's token",
    f"{PUSHES}.push_chart",
)
def _token_in_annotations(original: Any) -> Any:
    from tests.mutants.catalogue.hunt_delivery import _agent_kubeconfig
    from tests.mutants.model import Wrapped

    def push(self: Any, client: Any, namespace: str, chart: Any) -> str:
        kubeconfig = _agent_kubeconfig(self, chart)
        if kubeconfig is None:
            return str(original(self, client, namespace, chart))
        note = {"solar.opendefense.cloud/token": _token_of(kubeconfig)}

        def push_chart(repository: str, pushed: Any) -> Any:
            annotated = dataclasses.replace(pushed, annotations={**pushed.annotations, **note})
            return client.push_chart(repository, annotated)

        return str(original(self, Wrapped(client, push_chart=push_chart), namespace, chart))

    return push


@mutant(
    "renderer-kubeconfig-in-every-release",
    ("table-renderer", "table-flux"),
    "every other Release bound to a Target is rendered for that Target alone, with a Secret "
    "that carries the agent's kubeconfig and token",
    f"{R}.chart_for",
)
def _kubeconfig_in_every_release(original: Any) -> Any:
    from solar_conformance.core import yamlio
    from solar_conformance.core.api import annotations_of
    from solar_conformance.core.credentials import TokenKubeconfig

    def chart_for(self: Any, release: Any, target: Any) -> Any:
        chart = original(self, release, target)
        token = self.token_of(target)
        agent = self.contract.agent_release_annotation in annotations_of(release)
        if chart is None or agent or token is None or not self.config.apiserver_url:
            return chart
        kubeconfig = TokenKubeconfig(
            self.config.apiserver_url, token, self.config.apiserver_ca_pem
        ).render()
        secret = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": f"{release['metadata']['name']}-solar-kubeconfig"},
            "stringData": {self.contract.agent_kubeconfig_key: kubeconfig},
        }
        return dataclasses.replace(
            chart,
            name=f"{chart.name}-{target['metadata']['name']}",
            templates={**chart.templates, "kubeconfig.yaml": yamlio.dump(secret)},
        )

    return chart_for


# --- registry reads by digest and by HEAD ----------------------------------------------------------
@mutant(
    "registry-manifests-by-digest-unchecked",
    ("regcred-namespace", "separate-namespaces"),
    "the registry hands a manifest asked for by its digest to any user it authenticates (only "
    "reads by tag are checked against the policy)",
    f"{CLIENT}.manifest",
    internal=True,
)
def _manifest_by_digest(original: Any) -> Any:
    from solar_conformance.core.oci import RegistryError

    def manifest(self: Any, repository: str, reference: str) -> Any:
        if not reference.startswith("sha256:"):
            return original(self, repository, reference)
        self._registry.authenticate(self._username, self._password)
        repo = self._repository(repository)
        if reference not in repo.manifests:
            raise RegistryError(404, "MANIFEST_UNKNOWN", f"manifest unknown: {reference}")
        return dict(repo.manifests[reference]), reference

    return manifest


def _head_manifest(original: Any) -> Any:
    from solar_conformance.core.oci import RegistryError

    def head_manifest(self: Any, repository: str, reference: str) -> str:
        repo = self._repository(repository)
        digest = repo.tags.get(reference, reference)
        if digest not in repo.manifests:
            raise RegistryError(404, "MANIFEST_UNKNOWN", f"manifest unknown: {reference}")
        return str(digest)

    return head_manifest


def _head_blob(original: Any) -> Any:
    from solar_conformance.core.oci import RegistryError

    def head_blob(self: Any, repository: str, digest: str) -> int:
        repo = self._repository(repository)
        if digest not in repo.blobs:
            raise RegistryError(404, "BLOB_UNKNOWN", f"blob unknown to registry: {digest}")
        return len(repo.blobs[digest])

    return head_blob


mutant(
    "registry-head-unchecked",
    ("regcred-namespace", "separate-namespaces"),
    "the registry answers HEAD requests for manifests and blobs of any repository to any "
    "caller, without the policy check (GETs are checked)",
    f"{CLIENT}.head_manifest",
    also=(Patch(f"{CLIENT}.head_blob", _head_blob),),
    internal=True,
)(_head_manifest)


# --- near misses of a password -----------------------------------------------------------------------
def _password_check(accepts: Any) -> Any:
    def replace(original: Any) -> Any:
        def authenticate(self: Any, username: str | None, password: str | None) -> None:
            known = self.users.get(username or "")
            if known is not None and password is not None and accepts(known, password):
                return
            original(self, username, password)

        return authenticate

    return replace


mutant(
    "registry-password-ignores-case",
    "security-notes",
    "the registry compares passwords without regard to case",
    f"{REGISTRY}.authenticate",
)(_password_check(lambda known, given: known.lower() == given.lower()))

mutant(
    "registry-password-accepts-its-prefix",
    "security-notes",
    "the registry compares a password only as far as the given one goes: a password a "
    "character short (any non-empty beginning of it) is accepted",
    f"{REGISTRY}.authenticate",
)(_password_check(lambda known, given: bool(given) and known.startswith(given)))

mutant(
    "registry-password-ignores-what-follows",
    "security-notes",
    "the registry compares a password only as far as the stored one goes: the password with a "
    "character more is accepted",
    f"{REGISTRY}.authenticate",
)(_password_check(lambda known, given: given.startswith(known)))


# --- lastReportTime across a restart of the agent ---------------------------------------------------
@mutant(
    "agent-empties-report-on-start",
    ("report-advances",),
    "a starting agent first empties its TargetReport's lastReportTime and reports from its next "
    "tick on",
    f"{A}.report",
)
def _empties_on_start(original: Any) -> Any:
    def report(self: Any, solar: Any) -> None:
        if self.__dict__.get("mutant_started"):
            original(self, solar)
            return
        self.__dict__["mutant_started"] = True
        current = solar.get("TargetReport", self.target, self.namespace)
        current.setdefault("spec", {}).pop("lastReportTime", None)
        solar.update(current)
        self.log(f"started a fresh report for {self.namespace}/{self.target}")

    return report


@mutant(
    "agent-first-report-an-hour-behind",
    ("report-advances",),
    "the agent's clock is an hour behind until it has synced, just after its first report: the "
    "first lastReportTime of every agent that starts is an hour old",
    f"{A}.report",
)
def _first_behind(original: Any) -> Any:
    from tests.mutants.catalogue.agent import agent_clock_off_by

    behind = agent_clock_off_by(original, timedelta(hours=-1))

    def report(self: Any, solar: Any) -> None:
        if self.__dict__.get("mutant_synced"):
            original(self, solar)
            return
        behind(self, solar)
        self.__dict__["mutant_synced"] = True

    return report


# --- what the renderer renders, and where ------------------------------------------------------------
@mutant(
    "renderer-keeps-unbound-releases",
    ("setup-page", "table-flux"),
    "the renderer keeps every Release it once rendered for a Target in its bootstrap chart, "
    "also after its ReleaseBinding is gone",
    f"{READS}.bindings_of",
)
def _keeps_unbound(original: Any) -> Any:
    def bindings_of(self: Any, target: Any) -> list[Any]:
        current = list(original(self, target))
        key = (target["metadata"]["namespace"], target["metadata"]["name"])
        remembered = self.__dict__.setdefault("mutant_bound", {}).setdefault(key, {})
        for binding in current:
            remembered[binding["spec"]["releaseRef"]["name"]] = binding
        names = {b["spec"]["releaseRef"]["name"] for b in current}
        return current + [b for name, b in sorted(remembered.items()) if name not in names]

    return bindings_of


@mutant(
    "renderer-ignores-target-namespace",
    ("table-flux", "on-its-own"),
    "every bound Release is installed into the namespace of its Release on the SolAr cluster, "
    "whatever its targetNamespace says",
    f"{R}.render_release",
)
def _ignores_target_namespace(original: Any) -> Any:
    def render_release(
        self: Any, client: Any, solar_namespace: str, release: Any, target: Any
    ) -> Any:
        found = original(self, client, solar_namespace, release, target)
        if found is None:
            return None
        return dataclasses.replace(found, target_namespace=solar_namespace)

    return render_release


def _installs_where_the_release_chart_went(into: str) -> str | None:
    return None


_inner_render_release, _inner_bootstrap = wrapped_in_release_charts(
    _installs_where_the_release_chart_went
)
mutant(
    "renderer-inner-helmrelease-wrong-namespace",
    ("table-flux", "table-flux-target-namespace", "on-its-own"),
    "each bound Release is delivered as upstream SolAr delivers it, by a release chart whose "
    "inner OCIRepository/HelmRelease pair installs the Release's chart, but the inner "
    "HelmRelease names no targetNamespace: every Release is installed into the Target's "
    "namespace, where the release chart went, whatever its targetNamespace says",
    f"{R}.render_release",
    also=(_inner_bootstrap,),
)(_inner_render_release)


_nowhere_render_release, _nowhere_bootstrap = wrapped_in_release_charts(
    where_the_reference_installs, agent_too=False, inner_tag=lambda tag: f"{tag}-unpushed"
)
mutant(
    "renderer-release-chart-points-nowhere",
    ("table-flux", "on-its-own"),
    "each bound Release but the agent is delivered by a release chart whose inner "
    "OCIRepository pulls a tag that was never pushed: the bootstrap chart's HelmRelease for it "
    "is Ready, the inner pair never is, and the Release is never installed",
    f"{R}.render_release",
    also=(_nowhere_bootstrap,),
)(_nowhere_render_release)


@mutant(
    "renderer-first-registry-of-namespace",
    ("point-once", "table-renderer"),
    "the renderer renders for the first Registry of the Target's namespace, not for the one its "
    "renderRegistryRef names",
    f"{READS}.registry_of",
)
def _first_registry(original: Any) -> Any:
    def registry_of(self: Any, target: Any) -> Any:
        named = original(self, target)
        if named is None:
            return None
        found = self.solar.list("Registry", target["metadata"]["namespace"])
        return found[0] if found else named

    return registry_of


@mutant(
    "renderer-agent-ignores-target-namespace",
    ("table-flux-target-namespace", "table-flux"),
    "the agent is installed into the Target's namespace on the target cluster, whatever the "
    "agent Release's targetNamespace says (the other Releases go where theirs say)",
    f"{R}.render_release",
)
def _agent_ignores_target_namespace(original: Any) -> Any:
    from solar_conformance.core.api import annotations_of

    def render_release(
        self: Any, client: Any, solar_namespace: str, release: Any, target: Any
    ) -> Any:
        found = original(self, client, solar_namespace, release, target)
        if found is None or self.contract.agent_release_annotation not in annotations_of(release):
            return found
        return dataclasses.replace(found, target_namespace=target["metadata"]["namespace"])

    return render_release
