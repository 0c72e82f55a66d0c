"""Reference solar-renderer: the page's fourth row, plus the bootstrap chart Flux starts from.

For every Target it renders each bound Release into a Helm chart and pushes it to the Target's
render registry under `<namespace>/`: a Release annotated `target-credential` becomes the agent
release of that Target (a Secret with the kubeconfig and the token, and the agent Deployment);
any other Release becomes a chart shared by all Targets. Then it renders `bootstrap-<target>`,
one OCIRepository/HelmRelease pair per bound Release, and bumps its version whenever it changes.
Charts are tagged as upstream SolAr tags them (solar_conformance/simulators/reference/tags.py).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from solar_conformance.core import yamlio
from solar_conformance.core.api import (
    ApiError,
    ClusterAPI,
    Obj,
    annotations_of,
    find_condition,
    labels_of,
)
from solar_conformance.core.clock import Clock
from solar_conformance.core.conditions import secret_value, set_condition
from solar_conformance.core.contract import Contract
from solar_conformance.core.credentials import TokenKubeconfig
from solar_conformance.core.oci import HELM_CHART_LAYER, Chart, RegistryClient, RegistryError
from solar_conformance.core.semver import highest
from solar_conformance.simulators.reference.bindings import selector_matches
from solar_conformance.simulators.reference.tags import (
    agent_release_tag,
    bootstrap_tag,
    bootstrap_version_of,
    release_tag,
)

ConnectRegistry = Callable[[str, str, str], RegistryClient]
CONTENT_ANNOTATION = "solar.opendefense.cloud/content-digest"
AGENT_VERSION = "0.1.0"
BOOTSTRAP_READY = "BootstrapReady"  # upstream's condition: the bootstrap chart is pushed


@dataclass
class RendererConfig:
    apiserver_url: str | None
    apiserver_ca_pem: str = ""
    resync_seconds: float = 1.0
    agent_interval_seconds: int = 10
    owns_bootstrap_version: bool = True  # False beside a SolAr that keeps its own (upstream's)
    agent_env: dict[str, str] = field(default_factory=dict)  # extra environment of the agent


@dataclass(frozen=True)
class RenderedRelease:
    release: str
    chart: str
    version: str
    target_namespace: str


@dataclass
class Renderer:
    solar: ClusterAPI
    connect_registry: ConnectRegistry
    clock: Clock
    contract: Contract
    config: RendererConfig
    log: Callable[[str], None] = print
    _pushed: dict[str, tuple[str, str]] = field(default_factory=dict)  # repo -> (content, version)
    _rendered_from: dict[tuple[str, str], tuple[object, ...]] = field(default_factory=dict)
    _batch: _BatchReads | None = None

    def reconcile_all(self) -> float:
        with self.batch():
            for target in self.solar.list("Target"):
                try:
                    self.render_target(target)
                except (ApiError, RegistryError) as error:
                    self.log(f"render {target['metadata']['name']}: {error}")
        return self.config.resync_seconds

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Renders of several Targets in a row read each namespace's ReleaseBindings and
        Profiles once, and each Registry, Release and Secret once (as an informer cache would),
        not once per Target and step. What a render reads and finds gone is read again."""
        self._batch = _BatchReads()
        try:
            yield
        finally:
            self._batch = None

    def _bindings_of(self, target: Obj) -> list[Obj]:
        namespace, name = target["metadata"]["namespace"], target["metadata"]["name"]
        if self._batch is None:
            return self._bindings_by_target(namespace).get(name, [])
        by_target = self._batch.bindings.get(namespace)
        if by_target is None:
            by_target = self._batch.bindings[namespace] = self._bindings_by_target(namespace)
        return by_target.get(name, [])

    def _profiles_of(self, namespace: str) -> list[Obj]:
        if self._batch is None:
            return self.solar.list("Profile", namespace)
        profiles = self._batch.profiles.get(namespace)
        if profiles is None:
            profiles = self._batch.profiles[namespace] = self.solar.list("Profile", namespace)
        return profiles

    def _read(self, kind: str, name: str, namespace: str) -> Obj:
        """A Registry, Release or Secret, as this batch first read it (ApiError as `get`).
        A render reads every Release its namespace's Profiles name: those are listed once."""
        if self._batch is None:
            return self.solar.get(kind, name, namespace)
        objects = self._batch.objects
        if kind == "Release" and namespace not in self._batch.releases_listed:
            self._batch.releases_listed.add(namespace)
            for release in self.solar.list("Release", namespace):
                objects[("Release", namespace, release["metadata"]["name"])] = release
        key = (kind, namespace, name)
        obj = objects.get(key)
        if obj is None:
            obj = objects[key] = self.solar.get(kind, name, namespace)
        return obj

    def _bindings_by_target(self, namespace: str) -> dict[str, list[Obj]]:
        by_target: dict[str, list[Obj]] = {}
        for binding in self.solar.list("ReleaseBinding", namespace):
            target = binding.get("spec", {}).get("targetRef", {}).get("name", "")
            by_target.setdefault(target, []).append(binding)
        return by_target

    def render_target(self, target: Obj) -> None:
        namespace, name = target["metadata"]["namespace"], target["metadata"]["name"]
        registry = self._registry_of(target)
        if registry is None:
            return
        inputs = self._inputs_of(target, registry)
        if self._rendered_from.get((namespace, name)) == inputs:
            return
        client = self._push_client(registry, namespace)
        rendered: list[RenderedRelease] = []
        bound: set[str] = set()
        for binding in self._bindings_of(target):
            release = self._read("Release", binding["spec"]["releaseRef"]["name"], namespace)
            bound.add(release["metadata"]["name"])
            rendered_release = self._render_release(client, namespace, release, target)
            if rendered_release is not None:
                rendered.append(rendered_release)
            elif self._credential_pending(release, target):
                # The first bootstrap chart Flux sees must already carry the agent: wait for the
                # token rather than push one without it (Flux polls it only every few minutes).
                return
        if self._agent_binding_expected(target, bound):
            return  # a Profile will bind the agent release: wait for it, for the same reason
        if not rendered:
            return  # nothing bound yet: an empty bootstrap chart would only make Flux wait a poll
        bootstrap = self._bootstrap_chart(
            name, namespace, registry, sorted(rendered, key=lambda r: r.release)
        )
        self._push_bootstrap(client, registry["spec"]["hostname"], target, bootstrap)
        self._rendered_from[(namespace, name)] = inputs

    def _push_bootstrap(self, client: RegistryClient, host: str, target: Obj, chart: Chart) -> None:
        """Push at the current `bootstrapVersion` if nothing is there yet, else at the next one
        when the content changed; the Target's status keeps the counter (0 is left unwritten,
        as upstream omits it) and says where the chart is."""
        namespace = target["metadata"]["namespace"]
        repository = f"{namespace}/{chart.name}"
        version = self._bootstrap_version(client, target, repository)
        found = self._content_at(client, repository, bootstrap_tag(version))
        if found is not None and found != _content_of(chart):
            version += 1
        tag = self._push(
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

    def _bootstrap_version(self, client: RegistryClient, target: Obj, repository: str) -> int:
        """The Target's counter, or, beside a SolAr that keeps it, the highest one pushed. The
        charts of a deleted Target stay in the registry (upstream deletes them): a Target made
        again under its name goes on after them, so `>=0.0.0` never picks an earlier Target's."""
        recorded = target.get("status", {}).get("bootstrapVersion", 0)
        counted = (
            recorded if self.config.owns_bootstrap_version and isinstance(recorded, int) else 0
        )
        pushed = [
            v
            for tag in self._existing_tags(client, repository)
            if (v := bootstrap_version_of(tag)) is not None
        ]
        return max([counted, *pushed])

    def _inputs_of(self, target: Obj, registry: Obj) -> tuple[object, ...]:
        """What a render depends on, by resourceVersion: unchanged inputs need no new render.
        Its own bindings and their Releases, the push Secret, the token Secret its condition
        names and the namespace's Profiles; not the other Targets' objects."""
        namespace = target["metadata"]["namespace"]
        bindings = self._bindings_of(target)
        profiles = self._profiles_of(namespace)
        releases = {
            ref.get("name", "")
            for o in [*bindings, *profiles]
            for ref in [o.get("spec", {}).get("releaseRef", {})]
        }
        secrets = {registry.get("spec", {}).get("solarSecretRef", {}).get("name", "")}
        condition = find_condition(target, self.contract.condition_type) or {}
        named = self.contract.secret_named_in(str(condition.get("message", "")))
        if named is not None:
            secrets.add(named[1])
        versions = [
            (o["kind"], o["metadata"]["name"], o["metadata"]["resourceVersion"])
            for o in [*bindings, *profiles]
        ]
        versions += [("Release", n, self._version_of("Release", n, namespace)) for n in releases]
        versions += [("Secret", n, self._version_of("Secret", n, namespace)) for n in secrets]
        return (
            target["metadata"]["uid"],
            target["metadata"].get("generation"),
            (condition.get("reason"), condition.get("message")),
            registry["metadata"]["resourceVersion"],
            self.config.apiserver_url,
            tuple(sorted(versions)),
        )

    def _version_of(self, kind: str, name: str, namespace: str) -> str | None:
        try:
            return str(self._read(kind, name, namespace)["metadata"]["resourceVersion"])
        except ApiError as error:
            if error.status == 404:
                return None
            raise

    def _render_release(
        self, client: RegistryClient, namespace: str, release: Obj, target: Obj
    ) -> RenderedRelease | None:
        target_namespace = release.get("spec", {}).get("targetNamespace") or namespace
        name = release["metadata"]["name"]
        chart = self._chart_for(release, target)
        if chart is not None:
            tagged = dataclasses.replace(
                chart, version=self._release_version(client, namespace, release, chart)
            )
            version = self._push(client, namespace, tagged)
            return RenderedRelease(name, chart.name, version, target_namespace)
        # No token (revoked, disabled, not yet minted): keep what was delivered, if anything.
        # The agent then keeps running with a credential the API server rejects, and says so.
        chart_name = self._agent_chart_name(name, target["metadata"]["name"])
        repository = f"{namespace}/{chart_name}"
        known = self._pushed.get(repository)
        latest = known[1] if known else highest(self._existing_tags(client, repository))
        if latest is None:
            return None
        return RenderedRelease(name, chart_name, latest, target_namespace)

    def _release_version(
        self, client: RegistryClient, namespace: str, release: Obj, chart: Chart
    ) -> str:
        generation = int(release["metadata"].get("generation") or 1)
        if self.contract.agent_release_annotation not in annotations_of(release):
            return release_tag(generation, {})  # the reference's charts pull no images
        repository = f"{namespace}/{chart.name}"
        content = _content_of(chart)
        known = self._pushed.get(repository)
        if known is not None and known[0] == content:
            return known[1]
        existing = self._existing_tags(client, repository)
        latest = highest(existing)
        if latest is not None and self._content_at(client, repository, latest) == content:
            return latest
        return agent_release_tag(generation, existing)

    def _credential_pending(self, release: Obj, target: Obj) -> bool:
        """A credential release not rendered yet, whose token is still to come."""
        if self.contract.agent_release_annotation not in annotations_of(release):
            return False
        condition = find_condition(target, self.contract.condition_type) or {}
        return condition.get("reason") not in ("Disabled", "Revoked", "MintFailed")

    def _agent_binding_expected(self, target: Obj, bound: set[str]) -> bool:
        """A Profile of the namespace matches the Target and references an agent release that
        is not bound yet, while the credential may still come."""
        namespace = target["metadata"]["namespace"]
        for profile in self._profiles_of(namespace):
            spec = profile.get("spec", {})
            release_name = spec.get("releaseRef", {}).get("name")
            if release_name in bound or not selector_matches(
                spec.get("targetSelector"), labels_of(target)
            ):
                continue
            try:
                release = self._read("Release", release_name, namespace)
            except ApiError as error:
                if error.status == 404:
                    continue
                raise
            if self._credential_pending(release, target):
                return True
        return False

    @staticmethod
    def _agent_chart_name(release: str, target: str) -> str:
        return f"release-{release}-{target}"

    # --- inputs ------------------------------------------------------------------------------
    def _registry_of(self, target: Obj) -> Obj | None:
        ref = target.get("spec", {}).get("renderRegistryRef", {}).get("name")
        if not ref:
            return None
        try:
            return self._read("Registry", ref, target["metadata"]["namespace"])
        except ApiError as error:
            if error.status == 404:
                self.log(f"Target {target['metadata']['name']}: Registry {ref} not found")
                return None
            raise

    def _push_client(self, registry: Obj, namespace: str) -> RegistryClient:
        secret = self._read("Secret", registry["spec"]["solarSecretRef"]["name"], namespace)
        return self.connect_registry(
            registry["spec"]["hostname"],
            secret_value(secret, "username") or "",
            secret_value(secret, "password") or "",
        )

    def _token_of(self, target: Obj) -> str | None:
        """The token in the Secret that the Issued condition names."""
        condition = find_condition(target, self.contract.condition_type) or {}
        if condition.get("reason") != "Issued":
            return None
        named = self.contract.secret_named_in(
            str(condition.get("message", "")), target["metadata"]["namespace"]
        )
        if named is None:
            return None
        try:
            secret = self._read("Secret", named[1], named[0])
        except ApiError as error:
            if error.status == 404:
                return None
            raise
        return secret_value(secret, self.contract.token_key)

    # --- charts ------------------------------------------------------------------------------
    def _chart_for(self, release: Obj, target: Obj) -> Chart | None:
        name = release["metadata"]["name"]
        if self.contract.agent_release_annotation not in annotations_of(release):
            return Chart(
                f"release-{name}",
                "0.0.0",
                templates={
                    "configmap.yaml": _dump(
                        {
                            "apiVersion": "v1",
                            "kind": "ConfigMap",
                            "metadata": {
                                "name": name,
                                "labels": {self.contract.release_label: name},
                            },
                            "data": {
                                "release": name,
                                "componentVersion": str(
                                    release.get("spec", {})
                                    .get("componentVersionRef", {})
                                    .get("name", "")
                                ),
                            },
                        }
                    )
                },
            )
        token = self._token_of(target)
        if token is None or not self.config.apiserver_url:
            return None
        target_name = target["metadata"]["name"]
        kubeconfig = TokenKubeconfig(
            self.config.apiserver_url, token, self.config.apiserver_ca_pem
        ).render()
        return Chart(
            f"release-{name}-{target_name}",
            "0.0.0",
            templates=self._agent_templates(name, target, kubeconfig),
        )

    def _agent_templates(self, release: str, target: Obj, kubeconfig: str) -> dict[str, str]:
        target_name, namespace = target["metadata"]["name"], target["metadata"]["namespace"]
        labels = {"app.kubernetes.io/name": "solar-agent", self.contract.release_label: release}
        checksum = hashlib.sha256(kubeconfig.encode()).hexdigest()
        secret = {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "Opaque",
            "metadata": {"name": "solar-agent-kubeconfig", "labels": labels},
            "stringData": {self.contract.agent_kubeconfig_key: kubeconfig},
        }
        deployment = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "solar-agent", "labels": labels},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app.kubernetes.io/name": "solar-agent"}},
                "template": {
                    "metadata": {
                        "labels": labels,
                        "annotations": {"checksum/kubeconfig": checksum},
                    },
                    "spec": {
                        "containers": [
                            {
                                "name": "agent",
                                "image": f"{self.contract.agent_image}:{AGENT_VERSION}",
                                "imagePullPolicy": "IfNotPresent",
                                **self._agent_environment(),
                                "args": [
                                    f"--target={target_name}",
                                    f"--namespace={namespace}",
                                    "--kubeconfig=/etc/solar-agent/kubeconfig",
                                    f"--interval={self.config.agent_interval_seconds}",
                                ],
                                "volumeMounts": [
                                    {
                                        "name": "kubeconfig",
                                        "mountPath": "/etc/solar-agent",
                                        "readOnly": True,
                                    }
                                ],
                            }
                        ],
                        "volumes": [
                            {
                                "name": "kubeconfig",
                                "secret": {"secretName": "solar-agent-kubeconfig"},
                            }
                        ],
                    },
                },
            },
        }
        return {"secret.yaml": _dump(secret), "deployment.yaml": _dump(deployment)}

    def _agent_environment(self) -> dict[str, Any]:
        if not self.config.agent_env:
            return {}
        return {"env": [{"name": k, "value": v} for k, v in sorted(self.config.agent_env.items())]}

    def _bootstrap_chart(
        self, target: str, namespace: str, registry: Obj, releases: list[RenderedRelease]
    ) -> Chart:
        spec = registry["spec"]
        templates: dict[str, str] = {}
        for item in releases:
            labels = {self.contract.release_label: item.release}
            source: dict[str, Any] = {
                "interval": "10m",
                "url": f"oci://{spec['hostname']}/{namespace}/{item.chart}",
                "ref": {"semver": item.version},  # one version: upstream pins it this way
                "layerSelector": {"mediaType": HELM_CHART_LAYER, "operation": "copy"},
                "secretRef": {"name": spec.get("targetPullSecretName", "regcred")},
            }
            if spec.get("plainHTTP"):
                source["insecure"] = True
            # Named after the Helm release that installs the bootstrap chart, as upstream's are.
            name = f"{{{{ .Release.Name }}}}-{item.release}"
            repository = {
                "apiVersion": "source.toolkit.fluxcd.io/v1",
                "kind": "OCIRepository",
                "metadata": {"name": name, "labels": labels},
                "spec": source,
            }
            release = {
                "apiVersion": "helm.toolkit.fluxcd.io/v2",
                "kind": "HelmRelease",
                "metadata": {"name": name, "labels": labels},
                "spec": {
                    "interval": "10m",
                    "chartRef": {"kind": "OCIRepository", "name": name},
                    "targetNamespace": item.target_namespace,
                    "install": {"createNamespace": True, "remediation": {"retries": 3}},
                    "upgrade": {"remediation": {"retries": 3}},
                },
            }
            templates[f"{item.release}.yaml"] = _dump(repository) + "---\n" + _dump(release)
        return Chart(f"bootstrap-{target}", "0.0.0", templates=templates)

    def _push(self, client: RegistryClient, namespace: str, chart: Chart) -> str:
        """Push the chart at its version unless this renderer pushed that content there last."""
        repository = f"{namespace}/{chart.name}"
        content = _content_of(chart)
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

    def _content_at(self, client: RegistryClient, repository: str, tag: str) -> str | None:
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
    def _existing_tags(client: RegistryClient, repository: str) -> list[str]:
        try:
            return client.tags(repository)
        except RegistryError as error:
            if error.status == 404:
                return []
            raise


@dataclass
class _BatchReads:
    bindings: dict[str, dict[str, list[Obj]]] = field(default_factory=dict)  # ns -> Target -> list
    profiles: dict[str, list[Obj]] = field(default_factory=dict)  # namespace -> list
    objects: dict[tuple[str, str, str], Obj] = field(default_factory=dict)  # kind, ns, name
    releases_listed: set[str] = field(default_factory=set)  # namespaces


def _content_of(chart: Chart) -> str:
    """What a chart renders, as a digest: the same templates and values, the same digest."""
    text = json.dumps({"templates": chart.templates, "values": chart.values}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _dump(obj: Obj) -> str:
    return yamlio.dump(obj)
