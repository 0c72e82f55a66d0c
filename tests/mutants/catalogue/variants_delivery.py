"""Conforming variants of solar-renderer and the agent (solar_conformance/simulators/reference/renderer.py, tags.py,
agent.py): where the charts lie and how they are tagged, how the bootstrap chart pins them, what
the agent release installs, how often and how the agent reports, and what else it reports."""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from solar_conformance.core import yamlio
from solar_conformance.core.credentials import TokenKubeconfig
from tests.mutants.model import Patch, Wrapped, patch, variant

CHARTS = "solar_conformance.simulators.reference.render_charts:ReleaseCharts"
PUSHES = "solar_conformance.simulators.reference.chart_pushes:ChartPushes"
R = "solar_conformance.simulators.reference.renderer:Renderer"
PUSHES_MODULE = "solar_conformance.simulators.reference.chart_pushes"
A = "solar_conformance.simulators.reference.agent:Agent"


# --- where the charts lie, as upstream SolAr pushes them ----------------------------------------
_RELEASE_REPOSITORY = re.compile(r"^(?P<namespace>[^/]+)/(?P<chart>release-[^/]+)$")


def _upstream_path(repository: str) -> str:
    """`<namespace>/release-<release>` -> `<target namespace>/<release namespace>/release-<release>`,
    upstream's path for a release chart (both namespaces are the Target's here)."""
    found = _RELEASE_REPOSITORY.match(repository)
    return f"{found['namespace']}/{repository}" if found else repository


@patch(f"{PUSHES}.push_chart")
def _push_nested(original: Any) -> Any:
    def push(self: Any, client: Any, namespace: str, chart: Any) -> str:
        nested = Wrapped(
            client,
            push_chart=lambda repository, pushed: client.push_chart(
                _upstream_path(repository), pushed
            ),
        )
        return str(original(self, nested, namespace, chart))

    return push


@patch(f"{PUSHES}.existing_tags")
def _tags_nested(original: Any) -> Any:
    return lambda client, repository: original(client, _upstream_path(repository))


@patch(f"{PUSHES}.content_at")
def _content_nested(original: Any) -> Any:
    return lambda self, client, repository, tag: original(
        self, client, _upstream_path(repository), tag
    )


@patch(f"{CHARTS}.bootstrap_chart")
def _sources_nested(original: Any) -> Any:
    def bootstrap_chart(
        self: Any, target: str, namespace: str, registry: Any, releases: Any
    ) -> Any:
        chart = original(self, target, namespace, registry, releases)
        templates = {
            name: text.replace(f"/{namespace}/release-", f"/{namespace}/{namespace}/release-")
            for name, text in chart.templates.items()
        }
        return dataclasses.replace(chart, templates=templates)

    return bootstrap_chart


variant(
    "variant-upstream-chart-paths",
    ("table-renderer", "table-flux", "regcred-namespace"),
    "release charts and agent releases lie under <namespace>/<namespace>/release-..., as "
    "upstream SolAr nests a release chart under the Target's and the Release's namespaces",
    _push_nested,
    _tags_nested,
    _content_nested,
    _sources_nested,
)


# --- tags --------------------------------------------------------------------------------------
_BOOTSTRAP = re.compile(r"^0\.(0|[1-9][0-9]*)\.0$")


@patch(f"{PUSHES_MODULE}:bootstrap_tag", rebind=())
def _bootstrap_minor(original: Any) -> Any:
    return lambda version: f"0.{version}.0"


@patch(f"{PUSHES_MODULE}:bootstrap_version_of", rebind=())
def _bootstrap_minor_read(original: Any) -> Any:
    def version_of(tag: str) -> int | None:
        found = _BOOTSTRAP.match(tag)
        return int(found.group(1)) if found else None

    return version_of


@patch(f"{PUSHES_MODULE}:release_tag", rebind=())
def _release_major(original: Any) -> Any:
    return lambda generation, pull_secrets: f"{generation}.0.0"


@patch(f"{PUSHES_MODULE}:agent_release_tag", rebind=())
def _agent_release_major(original: Any) -> Any:
    def agent_release_tag(generation: int, existing: list[str]) -> str:
        prefix = f"{generation}.0."
        renders = [
            int(tag.removeprefix(prefix))
            for tag in existing
            if tag.startswith(prefix) and tag.removeprefix(prefix).isdigit()
        ]
        return f"{prefix}{max(renders) + 1 if renders else 0}"

    return agent_release_tag


variant(
    "variant-other-tags",
    ("table-renderer", "point-once", "on-its-own"),
    "charts are tagged without a v and counted elsewhere: the bootstrap chart 0.<n>.0, a release "
    "chart <generation>.0.0, an agent release <generation>.0.<n>",
    _bootstrap_minor,
    _bootstrap_minor_read,
    _release_major,
    _agent_release_major,
)


def _edited(templates: dict[str, str], edit: Callable[[Any], None]) -> dict[str, str]:
    """The templates with `edit` applied to each of their documents."""
    out = {}
    for file, text in templates.items():
        documents = _documents(text)
        for doc in documents:
            edit(doc)
        out[file] = _dumped(documents)
    return out


def _documents(text: str) -> list[Any]:
    return [doc for doc in yamlio.load_all(text) if doc]


def _dumped(documents: list[Any]) -> str:
    return "---\n".join(yamlio.dump(doc) for doc in documents)


@patch(f"{CHARTS}.bootstrap_chart")
def _pinned_by_tag(original: Any) -> Any:
    def bootstrap_chart(
        self: Any, target: str, namespace: str, registry: Any, releases: Any
    ) -> Any:
        chart = original(self, target, namespace, registry, releases)
        templates = {}
        for name, text in chart.templates.items():
            documents = _documents(text)
            for doc in documents:
                if doc.get("kind") == "OCIRepository":
                    doc["spec"]["ref"] = {"tag": doc["spec"]["ref"]["semver"]}
                    doc["spec"]["interval"] = "5m0s"
            templates[name] = _dumped(documents)
        return dataclasses.replace(chart, templates=templates)

    return bootstrap_chart


variant(
    "variant-sources-pinned-by-tag",
    ("table-flux", "on-its-own"),
    "the bootstrap chart's OCIRepositories pin each release by ref.tag, polled every 5 minutes, "
    "not by ref.semver every 10",
    _pinned_by_tag,
)


@patch(f"{CHARTS}.agent_chart_name")
def _agent_chart_by_target(original: Any) -> Any:
    return lambda release, target: f"agent-{target}"


@patch(f"{R}.chart_for")
def _agent_chart_named_by_target(original: Any) -> Any:
    def chart_for(self: Any, release: Any, target: Any) -> Any:
        chart = original(self, release, target)
        agent = self.contract.agent_release_annotation in (
            release["metadata"].get("annotations") or {}
        )
        if chart is None or not agent:
            return chart
        return dataclasses.replace(
            chart, name=self.agent_chart_name("", target["metadata"]["name"])
        )

    return chart_for


variant(
    "variant-agent-chart-named-by-target",
    ("table-renderer", "table-flux"),
    "each agent release is a chart named agent-<target>, not release-<release>-<target>",
    _agent_chart_by_target,
    _agent_chart_named_by_target,
)


@patch(f"{CHARTS}.bootstrap_chart")
def _bootstrap_with_more(original: Any) -> Any:
    def bootstrap_chart(
        self: Any, target: str, namespace: str, registry: Any, releases: Any
    ) -> Any:
        chart = original(self, target, namespace, registry, releases)
        info = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "{{ .Release.Name }}-target"},
            "data": {"target": target, "namespace": namespace},
        }
        templates = {**chart.templates, "target-info.yaml": yamlio.dump(info)}
        return dataclasses.replace(chart, templates=templates)

    return bootstrap_chart


variant(
    "variant-bootstrap-carries-more",
    ("table-flux", "page-objects"),
    "the bootstrap chart also installs a ConfigMap that names its Target, beside the "
    "OCIRepository/HelmRelease pair of each bound Release",
    _bootstrap_with_more,
)


# --- how the bootstrap chart keys a Release, as upstream SolAr keys it ---------------------------
def _upstream_label_value(key: str) -> str:
    """Upstream's label value for a key: beyond 63 characters its first 52, `-` and the first 10
    hex digits of its SHA-256."""
    if len(key) <= 63:
        return key
    return f"{key[:52]}-{hashlib.sha256(key.encode()).hexdigest()[:10]}"


def _effective_unique_name(renderer: Any, release: str, namespace: str) -> str:
    found = renderer.read("Release", release, namespace)
    unique = (found.get("spec") or {}).get("uniqueName") or (found.get("status") or {}).get(
        "effectiveUniqueName"
    )
    return str(unique or release)


def _rekeyed(renderer: Any, text: str, namespace: str, annotate: bool) -> str:
    """Every object (and pod template) the reference labels with a Release's name, keyed with
    the Release's effective uniqueName instead: as a label, or as an annotation alone."""
    label = renderer.contract.release_label
    documents = _documents(text)
    for doc in documents:
        template = ((doc.get("spec") or {}).get("template") or {}).get("metadata")
        for meta in (m for m in (doc.get("metadata"), template) if m):
            # a YAML alias makes the pod template's labels those of the Deployment: apart
            meta["labels"] = dict(meta.get("labels") or {})
            release = meta["labels"].pop(label, None)
            if release is None:
                continue
            key = _effective_unique_name(renderer, release, namespace)
            if annotate:
                meta.setdefault("annotations", {})[label] = key
            else:
                meta["labels"][label] = _upstream_label_value(key)
    return _dumped(documents)


def _keyed_by_unique_name(annotate: bool) -> tuple[Patch, Patch]:
    @patch(f"{CHARTS}.bootstrap_chart")
    def _bootstrap(original: Any) -> Any:
        def bootstrap_chart(
            self: Any, target: str, namespace: str, registry: Any, releases: Any
        ) -> Any:
            chart = original(self, target, namespace, registry, releases)
            templates = {
                name: _rekeyed(self, text, namespace, annotate)
                for name, text in chart.templates.items()
            }
            return dataclasses.replace(chart, templates=templates)

        return bootstrap_chart

    @patch(f"{CHARTS}.agent_templates")
    def _agent(original: Any) -> Any:
        def agent_templates(
            self: Any, release: str, target: Any, kubeconfig: str
        ) -> dict[str, str]:
            namespace = target["metadata"]["namespace"]
            templates = original(self, release, target, kubeconfig)
            return {
                name: _rekeyed(self, text, namespace, annotate) for name, text in templates.items()
            }

        return agent_templates

    return _bootstrap, _agent


variant(
    "variant-releases-keyed-by-unique-name",
    ("table-flux", "table-renderer"),
    "the bootstrap chart's OCIRepository/HelmRelease pairs and what the agent release installs "
    "are labelled with the Release's uniqueName (shortened beyond 63 characters), not its name, "
    "as upstream SolAr labels them",
    *_keyed_by_unique_name(annotate=False),
)

variant(
    "variant-releases-keyed-by-annotation",
    ("table-flux", "table-renderer"),
    "the bootstrap chart's OCIRepository/HelmRelease pairs and what the agent release installs "
    "carry the Release's uniqueName as an annotation under the release label, and no such label",
    *_keyed_by_unique_name(annotate=True),
)


# --- what the agent release installs --------------------------------------------------------------
@patch(f"{CHARTS}.agent_templates")
def _renamed_agent_objects(original: Any) -> Any:
    def agent_templates(self: Any, release: str, target: Any, kubeconfig: str) -> dict[str, str]:
        name = target["metadata"]["name"]
        secret_name, deployment_name = f"{name}-agent-credential", f"{name}-agent"

        def rename(doc: Any) -> None:
            doc["metadata"].setdefault("labels", {})["app.kubernetes.io/instance"] = name
            if doc["kind"] == "Secret":
                doc["metadata"]["name"] = secret_name
            elif doc["kind"] == "Deployment":
                doc["metadata"]["name"] = deployment_name
                for volume in doc["spec"]["template"]["spec"]["volumes"]:
                    volume["secret"]["secretName"] = secret_name

        return _edited(original(self, release, target, kubeconfig), rename)

    return agent_templates


variant(
    "variant-agent-objects-renamed",
    ("table-renderer", "table-flux"),
    "the agent release installs a Secret <target>-agent-credential (key config) and a Deployment "
    "<target>-agent, with another release label, as its profile says",
    _renamed_agent_objects,
    profile={"agent_kubeconfig_key": "config", "release_label": "agent.solar.example/release"},
)


@patch(f"{CHARTS}.agent_templates")
def _kubeconfig_as_data(original: Any) -> Any:
    def agent_templates(self: Any, release: str, target: Any, kubeconfig: str) -> dict[str, str]:
        import base64

        def as_data(doc: Any) -> None:
            if doc["kind"] == "Secret":
                doc["data"] = {
                    key: base64.b64encode(value.encode()).decode()
                    for key, value in doc.pop("stringData").items()
                }

        return _edited(original(self, release, target, kubeconfig), as_data)

    return agent_templates


variant(
    "variant-agent-kubeconfig-as-data",
    ("table-renderer",),
    "the agent release's Secret carries the kubeconfig base64-encoded under data, not as "
    "stringData",
    _kubeconfig_as_data,
)


@patch(f"{A}.report")
def _never_reads_target(original: Any) -> Any:
    def report(self: Any, solar: Any) -> None:
        from solar_conformance.core.clock import utc

        report = solar.get("TargetReport", self.target, self.namespace)
        now = utc(self.clock.now())
        report.setdefault("spec", {})["lastReportTime"] = now
        solar.update(report)
        self.log(f"reported {self.namespace}/{self.target} at {now}")

    return report


variant(
    "variant-agent-never-reads-its-target",
    ("table-agent", "scope"),
    "the agent never reads its Target (the credential allows it; nothing requires it): it only "
    "updates its TargetReport",
    _never_reads_target,
)


# --- the agent ----------------------------------------------------------------------------------
@patch(f"{A}.tick")
def _often(original: Any) -> Any:
    return lambda self: min(float(original(self)), 1.0)


variant(
    "variant-agent-reports-every-second",
    ("report-advances", "table-agent"),
    "the agent reports every second, more often than the profile's report interval",
    _often,
)


@patch(f"{A}.report")
def _reports_more(original: Any) -> Any:
    def report(self: Any, solar: Any) -> None:
        def update(obj: Any) -> Any:
            spec = obj.setdefault("spec", {})
            spec["agentVersion"] = "0.2.0"
            spec["releases"] = [{"name": "solar-agent", "ready": True}]
            obj["metadata"].setdefault("labels", {})["solar.opendefense.cloud/agent-version"] = (
                "0.2.0"
            )
            obj["metadata"].setdefault("annotations", {})["solar.opendefense.cloud/reported-by"] = (
                self.target
            )
            return solar.update(obj)

        original(self, Wrapped(solar, update=update))

    return report


variant(
    "variant-agent-reports-more",
    ("table-agent", "intro-one-report"),
    "the agent writes more into its TargetReport than lastReportTime: its version, the state of "
    "its releases, a label and an annotation",
    _reports_more,
)


@patch(f"{A}.report")
def _patches(original: Any) -> Any:
    def report(self: Any, solar: Any) -> None:
        from solar_conformance.core.clock import utc

        solar.get("Target", self.target, self.namespace)
        now = utc(self.clock.now())
        solar.patch("TargetReport", self.target, self.namespace, {"spec": {"lastReportTime": now}})
        self.log(f"reported {self.namespace}/{self.target} at {now}")

    return report


variant(
    "variant-agent-patches-its-report",
    ("table-agent", "report-advances", "scope-patch"),
    "the agent writes lastReportTime with a merge patch, not an update",
    _patches,
)


@patch(f"{CHARTS}.agent_templates")
def _two_secrets(original: Any) -> Any:
    def agent_templates(self: Any, release: str, target: Any, kubeconfig: str) -> dict[str, str]:
        templates = original(self, release, target, kubeconfig)
        ca = {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "Opaque",
            "metadata": {
                "name": "solar-agent-ca",
                "labels": {self.contract.release_label: release},
            },
            "stringData": {"ca.crt": self.config.apiserver_ca_pem},
        }
        return {**templates, "ca.yaml": yamlio.dump(ca)}

    return agent_templates


variant(
    "variant-agent-release-two-secrets",
    ("table-renderer", "table-flux"),
    "the agent release installs a second Secret (the SolAr API server's CA bundle) beside the "
    "one with the kubeconfig",
    _two_secrets,
)


@patch(f"{PUSHES}.push_chart")
def _also_latest(original: Any) -> Any:
    def push(self: Any, client: Any, namespace: str, chart: Any) -> str:
        version = str(original(self, client, namespace, chart))
        client.push_chart(f"{namespace}/{chart.name}", dataclasses.replace(chart, version="latest"))
        return version

    return push


variant(
    "variant-charts-also-tagged-latest",
    ("table-renderer", "point-once", "url-form"),
    "every chart is also pushed under the tag latest, which the page's semver range never picks",
    _also_latest,
)


# --- the agent's image and the SolAr API server's URL, written otherwise --------------------------
_AGENT_DIGEST = "sha256:" + hashlib.sha256(b"solar-agent").hexdigest()


@patch(f"{CHARTS}.agent_templates")
def _image_by_digest(original: Any) -> Any:
    def agent_templates(self: Any, release: str, target: Any, kubeconfig: str) -> dict[str, str]:
        def pinned(doc: Any) -> None:
            if doc["kind"] == "Deployment":
                for container in doc["spec"]["template"]["spec"]["containers"]:
                    container["image"] = f"{container['image']}@{_AGENT_DIGEST}"

        return _edited(original(self, release, target, kubeconfig), pinned)

    return agent_templates


variant(
    "variant-agent-image-by-digest-from-a-registry-port",
    ("table-renderer", "table-agent"),
    "the agent image lies in a registry with a port and is pinned by digest "
    "(registry.solar.example:5000/solar/agent:0.1.0@sha256:...), as its profile names it",
    _image_by_digest,
    profile={"agent_image": "registry.solar.example:5000/solar/agent"},
)


@patch(f"{CHARTS}.agent_templates")
def _server_written_otherwise(original: Any) -> Any:
    def agent_templates(self: Any, release: str, target: Any, kubeconfig: str) -> dict[str, str]:
        parsed = TokenKubeconfig.parse(kubeconfig)
        parts = urlsplit(parsed.server)
        server = urlunsplit(parts._replace(netloc=parts.netloc.upper(), path=f"{parts.path}/"))
        rewritten = dataclasses.replace(parsed, server=server).render()
        return dict(original(self, release, target, rewritten))

    return agent_templates


variant(
    "variant-kubeconfig-server-written-otherwise",
    ("table-renderer", "setup-page"),
    "the agent's kubeconfig names the SolAr API server with its host in capitals and a trailing "
    "slash (https://SOLAR-APISERVER.SOLAR-SYSTEM.SVC:6443/): the same server as apiserverURL",
    _server_written_otherwise,
)


@patch(f"{A}.tick")
def _logs_in_other_words(original: Any) -> Any:
    def tick(self: Any) -> float:
        log = self.log

        def reworded(line: str) -> None:
            prefix = f"report for {self.namespace}/{self.target} failed: "
            if line.startswith(prefix):
                reason = line.removeprefix(prefix).upper()
                line = f"ERROR Unable to update TargetReport {self.target}: {reason}"
            log(line)

        self.log = reworded
        try:
            return float(original(self))
        finally:
            self.log = log

    return tick


variant(
    "variant-agent-logs-in-other-words",
    ("report-stays-empty", "table-agent"),
    "the agent logs a failed report in words of its own, in capitals: ERROR Unable to update "
    "TargetReport <target>: <THE ERROR>",
    _logs_in_other_words,
)
