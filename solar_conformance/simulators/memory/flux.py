"""A model of Flux's source-controller and helm-controller, for the sim backend.

OCIRepository: credentials from a dockerconfigjson `secretRef`, tag chosen by `ref.semver`
(highest match) or `ref.tag`, the layer picked by `layerSelector.mediaType` and copied as is.
HelmRelease with `chartRef` to an OCIRepository: install on first artifact, upgrade when the
artifact changes, prune what a new revision no longer has, uninstall when the HelmRelease goes;
Ready only once the installed Deployments are available (helm-controller waits by default).
What it installs carries Helm's ownership annotations and helm-controller's origin labels, and
`status.history` records the Helm release (name, namespace, revision), as the real controllers
write them (solar_conformance/core/helm_records.py). An OCIRepository or HelmRelease that a chart
installs is reconciled like any other, so a chart may deliver further charts.
Reconciles run at `spec.interval`, on spec change, and on `reconcile.fluxcd.io/requestedAt`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from urllib.parse import urlparse

from solar_conformance.core.api import (
    ApiError,
    ClusterAPI,
    Obj,
    annotations_of,
    find_condition,
    kind_of,
)
from solar_conformance.core.clock import Clock, parse_duration, utc
from solar_conformance.core.conditions import secret_value, set_condition
from solar_conformance.core.credentials import credentials_for
from solar_conformance.core.helm_records import (
    HelmReleaseRef,
    configured_release,
    ownership_annotations,
    ownership_labels,
)
from solar_conformance.core.helm_render import Installation, with_release_values
from solar_conformance.core.oci import (
    HELM_CHART_LAYER,
    Chart,
    RegistryClient,
    RegistryError,
    highest_matching,
)

REQUESTED_AT = "reconcile.fluxcd.io/requestedAt"
FAILURE_RETRY = timedelta(seconds=10)
WAITING_POLL_SECONDS = 1.0  # helm-controller polls the readiness of what it installed
IDLE_SECONDS = 60.0
ConnectRegistry = Callable[[str, str | None, str | None], RegistryClient]


@dataclass
class _Installed:
    digest: str
    objects: list[tuple[str, str | None, str]]
    chart: str
    version: str


@dataclass
class FluxModel:
    target: ClusterAPI
    connect_registry: ConnectRegistry
    clock: Clock
    log: Callable[[str], None]
    artifacts: dict[tuple[str, str], tuple[str, bytes]] = field(default_factory=dict)
    installed: dict[tuple[str, str], _Installed] = field(default_factory=dict)
    _last_run: dict[tuple[str, str, str], datetime] = field(default_factory=dict)

    def reconcile_all(self) -> float:
        """One pass; returns when the next object falls due. Flux's own writes and the target
        cluster's events wake the loop earlier (the sim watches each target cluster)."""
        repositories = self.target.list("OCIRepository")
        for repository in repositories:
            if self._due(repository):
                self._reconcile_source(repository)
        releases = self.target.list("HelmRelease")
        for release in releases:
            if self._due(release) or self._waiting(release) or self._source_moved(release):
                self._reconcile_release(release)
        present = {(r["metadata"]["namespace"], r["metadata"]["name"]) for r in releases}
        for key in [k for k in self.installed if k not in present]:
            self._uninstall(key)
        return min([IDLE_SECONDS, *(self._until_due(o) for o in [*repositories, *releases])])

    def _until_due(self, obj: Obj) -> float:
        meta = obj["metadata"]
        last = self._last_run.get((obj["kind"], meta["namespace"], meta["name"]))
        if last is None or (obj["kind"] == "HelmRelease" and self._waiting(obj)):
            return WAITING_POLL_SECONDS
        every = parse_duration(obj.get("spec", {}).get("interval", "10m"))
        ready = find_condition(obj, "Ready")
        if ready is not None and ready.get("status") == "False":
            every = min(every, FAILURE_RETRY)
        return max(WAITING_POLL_SECONDS, (last + every - self.clock.now()).total_seconds())

    def _due(self, obj: Obj) -> bool:
        meta, status = obj["metadata"], obj.get("status", {})
        key = (obj["kind"], meta["namespace"], meta["name"])
        last = self._last_run.get(key)
        if last is None or status.get("observedGeneration") != meta.get("generation"):
            return True
        requested = annotations_of(obj).get(REQUESTED_AT)
        if requested is not None and requested != status.get("lastHandledReconcileAt"):
            return True
        ready = find_condition(obj, "Ready")
        every = parse_duration(obj.get("spec", {}).get("interval", "10m"))
        if ready is not None and ready.get("status") == "False":
            every = min(every, FAILURE_RETRY)
        return self.clock.now() - last >= every

    def _source_moved(self, release: Obj) -> bool:
        """helm-controller watches its chart source: a new artifact triggers a reconcile."""
        meta, ref = release["metadata"], release.get("spec", {}).get("chartRef", {})
        artifact = self.artifacts.get(
            (ref.get("namespace", meta["namespace"]), ref.get("name", ""))
        )
        return artifact is not None and artifact[0] != release.get("status", {}).get(
            "lastAttemptedRevision"
        )

    def _waiting(self, release: Obj) -> bool:
        ready = find_condition(release, "Ready")
        return ready is not None and ready.get("status") == "Unknown"

    def _finish(self, obj: Obj, status: str, reason: str, message: str) -> None:
        meta = obj["metadata"]
        self._last_run[(obj["kind"], meta["namespace"], meta["name"])] = self.clock.now()
        fresh = self.target.get(obj["kind"], meta["name"], meta["namespace"])
        fresh["status"] = {**fresh.get("status", {}), **obj.get("status", {})}
        fresh["status"]["observedGeneration"] = fresh["metadata"].get("generation")
        requested = annotations_of(fresh).get(REQUESTED_AT)
        if requested is not None:
            fresh["status"]["lastHandledReconcileAt"] = requested
        set_condition(fresh, "Ready", status, reason, message, self.clock.now())
        self.target.update_status(fresh)

    # --- source-controller -------------------------------------------------------------------
    def _reconcile_source(self, repository: Obj) -> None:
        meta, spec = repository["metadata"], repository.get("spec", {})
        key = (meta["namespace"], meta["name"])
        url = spec.get("url", "")
        try:
            client, path = self._client_for(meta["namespace"], url, spec)
            tag = self._pick_tag(client, path, spec.get("ref", {}))
            manifest, digest = client.manifest(path, tag)
            selector = spec.get("layerSelector") or {}
            layer = next(
                (
                    candidate
                    for candidate in manifest.get("layers", [])
                    if candidate.get("mediaType") == selector.get("mediaType", HELM_CHART_LAYER)
                ),
                None,
            )
            if layer is None:
                raise RegistryError(
                    404,
                    "LAYER_UNKNOWN",
                    f"failed to find layer with media type '{selector.get('mediaType')}'",
                )
            data = client.blob(path, layer["digest"])
        except (RegistryError, ApiError, ValueError) as error:
            self._finish(
                repository,
                "False",
                "OCIArtifactPullFailed",
                f"failed to pull artifact from '{url}': {error}",
            )
            return
        revision = f"{tag}@{digest}"
        self.artifacts[key] = (revision, data)
        repository.setdefault("status", {})["artifact"] = {
            "revision": revision,
            "digest": "sha256:" + hashlib.sha256(data).hexdigest(),
            "url": f"http://source-controller.flux-system.svc/ocirepository/{key[0]}/{key[1]}/"
            f"{digest.removeprefix('sha256:')}.tar.gz",
            "lastUpdateTime": utc(self.clock.now()),
        }
        self._finish(repository, "True", "Succeeded", f"stored artifact for digest '{revision}'")

    def _client_for(self, namespace: str, url: str, spec: Obj) -> tuple[RegistryClient, str]:
        parsed = urlparse(url)
        if parsed.scheme != "oci" or not parsed.netloc or not parsed.path.strip("/"):
            raise ValueError(f"URL must be of the form oci://<host>/<repository>, got '{url}'")
        username = password = None
        secret_name = spec.get("secretRef", {}).get("name")
        if secret_name:
            secret = self.target.get("Secret", secret_name, namespace)
            config = secret_value(secret, ".dockerconfigjson")
            found = credentials_for(config or "", parsed.netloc)
            if found is None:
                raise ValueError(
                    f"secret '{secret_name}' holds no credentials for host '{parsed.netloc}'"
                )
            username, password = found
        return self.connect_registry(parsed.netloc, username, password), parsed.path.strip("/")

    @staticmethod
    def _pick_tag(client: RegistryClient, path: str, ref: Obj) -> str:
        """As source-controller: `semver` takes precedence over `tag`; neither means latest."""
        constraint = ref.get("semver")
        if not constraint:
            return str(ref.get("tag") or "latest")
        tag = highest_matching(client.tags(path), str(constraint))
        if tag is None:
            raise ValueError(f"no match found for semver: {constraint}")
        return tag

    # --- helm-controller ---------------------------------------------------------------------
    def _reconcile_release(self, release: Obj) -> None:
        meta, spec = release["metadata"], release.get("spec", {})
        key = (meta["namespace"], meta["name"])
        chart_ref = spec.get("chartRef", {})
        artifact = self.artifacts.get(
            (chart_ref.get("namespace", meta["namespace"]), chart_ref.get("name", ""))
        )
        if chart_ref.get("kind") != "OCIRepository" or artifact is None:
            self._finish(
                release,
                "False",
                "ArtifactFailed",
                f"HelmChart '{key[0]}/{chart_ref.get('name')}' is not ready",
            )
            return
        revision, data = artifact
        # A new release name or namespace is a new install, as helm-controller makes it.
        helm_release = configured_release(release)
        inputs = json.dumps([spec.get("values") or {}, helm_release.name, helm_release.namespace])
        digest = hashlib.sha256(data + inputs.encode()).hexdigest()
        current = self.installed.get(key)
        if current is not None and current.digest == digest:
            self._report_readiness(release, current)
            return
        try:
            chart = Chart.unpack(data)
            objects = self._apply(release, chart)
        except (ValueError, ApiError) as error:
            action = "upgrade" if current else "install"
            self._finish(
                release,
                "False",
                f"{action.capitalize()}Failed",
                f"Helm {action} failed for release {key[0]}/{key[1]}: {error}",
            )
            return
        if current is not None:
            for stale in set(current.objects) - set(objects):
                self._delete(stale)
        self.installed[key] = _Installed(digest, objects, chart.name, chart.version)
        status = release.setdefault("status", {})
        status["history"] = [_snapshot(release, helm_release, chart, digest)]
        status["storageNamespace"] = spec.get("storageNamespace") or meta["namespace"]
        status["lastAttemptedRevision"] = revision
        self._report_readiness(release, self.installed[key], upgraded=current is not None)

    def _report_readiness(
        self, release: Obj, installed: _Installed, upgraded: bool = False
    ) -> None:
        pending = [
            name
            for kind, namespace, name in installed.objects
            if kind == "Deployment" and not self._available(namespace, name)
        ]
        if pending:
            self._finish(
                release,
                "Unknown",
                "Progressing",
                f"waiting for Deployments to become available: {', '.join(pending)}",
            )
            return
        action = "upgrade" if upgraded else "install"
        ready = find_condition(release, "Ready")
        if ready is not None and ready.get("status") == "True" and not upgraded:
            self._last_run[
                ("HelmRelease", release["metadata"]["namespace"], release["metadata"]["name"])
            ] = self.clock.now()
            return
        self._finish(
            release,
            "True",
            f"{action.capitalize()}Succeeded",
            f"Helm {action} succeeded for release "
            f"{release['metadata']['namespace']}/{release['metadata']['name']} with chart "
            f"{installed.chart}@{installed.version}",
        )

    def _available(self, namespace: str | None, name: str) -> bool:
        try:
            deployment = self.target.get("Deployment", name, namespace)
        except ApiError:
            return False
        available = find_condition(deployment, "Available")
        return available is not None and available.get("status") == "True"

    def _apply(self, release: Obj, chart: Chart) -> list[tuple[str, str | None, str]]:
        """Install or upgrade: every object marked as helm-controller and Helm mark it
        (solar_conformance/core/helm_records.py), whatever the chart wrote there."""
        spec = release.get("spec", {})
        helm_release = configured_release(release)
        namespace = helm_release.namespace
        self._ensure_namespace(namespace, bool(spec.get("install", {}).get("createNamespace")))
        applied: list[tuple[str, str | None, str]] = []
        for manifest in _rendered(chart, release).manifests():
            kind = kind_of(manifest["kind"])
            obj_meta = manifest.setdefault("metadata", {})
            if kind.namespaced:
                obj_meta.setdefault("namespace", namespace)
            obj_meta["labels"] = {**(obj_meta.get("labels") or {}), **ownership_labels(release)}
            obj_meta["annotations"] = {
                **(obj_meta.get("annotations") or {}),
                **ownership_annotations(helm_release),
            }
            self._upsert(manifest)
            applied.append((kind.kind, obj_meta.get("namespace"), obj_meta["name"]))
        return applied

    def _ensure_namespace(self, namespace: str, create: bool) -> None:
        try:
            self.target.get("Namespace", namespace)
        except ApiError as error:
            if error.status != 404 or not create:
                raise
            self.target.create(
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
            )

    def _upsert(self, manifest: Obj) -> None:
        meta = manifest["metadata"]
        try:
            current = self.target.get(manifest["kind"], meta["name"], meta.get("namespace"))
        except ApiError as error:
            if error.status != 404:
                raise
            self.target.create(manifest)
            return
        merged = {**manifest, "metadata": {**current["metadata"], **meta}}
        merged.pop("status", None)
        if current.get("kind") == "Secret" and "stringData" in merged:
            merged.pop("data", None)  # Helm replaces the whole Secret
        self.target.update(merged)

    def _delete(self, ref: tuple[str, str | None, str]) -> None:
        try:
            self.target.delete(ref[0], ref[2], ref[1])
        except ApiError as error:
            if error.status != 404:
                raise

    def _uninstall(self, key: tuple[str, str]) -> None:
        installed = self.installed.pop(key)
        for ref in reversed(installed.objects):
            self._delete(ref)
        self.log(f"uninstalled release {key[0]}/{key[1]}")


def _snapshot(release: Obj, helm_release: HelmReleaseRef, chart: Chart, digest: str) -> Obj:
    """The newest entry of `status.history`, as helm-controller records a release: its name,
    namespace and revision (one more than the last one recorded; 1 on the first install and
    after a new release name or namespace, for which helm-controller clears the history)."""
    before = ((release.get("status") or {}).get("history") or [{}])[0]
    same = (before.get("name"), before.get("namespace")) == (
        helm_release.name,
        helm_release.namespace,
    )
    version = before.get("version") if same else None
    return {
        "name": helm_release.name,
        "namespace": helm_release.namespace,
        "version": version + 1 if isinstance(version, int) else 1,
        "chartName": chart.name,
        "chartVersion": chart.version,
        "status": "deployed",
        "digest": digest[:16],
    }


def _rendered(chart: Chart, release: Obj) -> Chart:
    """The templates as Helm renders them for this HelmRelease. SolAr's charts use no template
    value but `.Release.Name` (`spec.releaseName`, else `<targetNamespace>-<name>` or the
    HelmRelease's name, cut past 53 characters) and `.Release.Namespace`; the sim refuses any
    other."""
    return with_release_values(chart, Installation.of(release))
