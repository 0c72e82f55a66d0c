"""What Flux's helm-controller and Helm record of installing a HelmRelease's chart, and how to
tell from those records which objects a HelmRelease installed.

- The Helm release a HelmRelease makes: `spec.releaseName`, else `<targetNamespace>-<name>` when
  it names a targetNamespace, else its name; a name longer than 53 characters is cut to its first
  40, `-` and the first 12 hex digits of its SHA-256. It lives in `spec.targetNamespace`, else in
  the HelmRelease's namespace (`spec.storageNamespace` only says where Helm keeps its records).
  Once installed, helm-controller records it as the newest entry of `status.history` (its `name`
  and `namespace`, the highest `version` first).
- Helm marks every object it installs with the annotations `meta.helm.sh/release-name` and
  `meta.helm.sh/release-namespace` of that release (and the label
  `app.kubernetes.io/managed-by: Helm`), overwriting what the chart wrote.
- helm-controller's post-renderer labels every object it installs with the HelmRelease's own name
  and namespace, `helm.toolkit.fluxcd.io/name` and `helm.toolkit.fluxcd.io/namespace`, after any
  post-renderer of the HelmRelease's spec, so a chart cannot set them either.

Both marks are written by the installer on every install and upgrade, so either one names the
HelmRelease an object came from; `installed_by` takes either.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from solar_conformance.core.api import Obj

RELEASE_NAME_ANNOTATION = "meta.helm.sh/release-name"
RELEASE_NAMESPACE_ANNOTATION = "meta.helm.sh/release-namespace"
MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
ORIGIN_NAME_LABEL = "helm.toolkit.fluxcd.io/name"
ORIGIN_NAMESPACE_LABEL = "helm.toolkit.fluxcd.io/namespace"
MAX_RELEASE_NAME = 53  # Helm's limit
_SHORT_NAME = 40
_SHORT_HASH = 12


@dataclass(frozen=True)
class HelmReleaseRef:
    """A Helm release: its name and the namespace it installs into."""

    name: str
    namespace: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


def shortened_release_name(name: str) -> str:
    """helm-controller's release name for `name`: as it is up to 53 characters, else cut."""
    if len(name) <= MAX_RELEASE_NAME:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:_SHORT_HASH]
    return f"{name[:_SHORT_NAME]}-{digest}"


def configured_release(helmrelease: Obj) -> HelmReleaseRef:
    """The Helm release a HelmRelease's spec asks for, by helm-controller's rule."""
    meta, spec = helmrelease.get("metadata") or {}, helmrelease.get("spec") or {}
    name = str(meta.get("name", ""))
    target_namespace = spec.get("targetNamespace")
    release_name = spec.get("releaseName") or (
        f"{target_namespace}-{name}" if target_namespace else name
    )
    return HelmReleaseRef(
        shortened_release_name(str(release_name)),
        str(target_namespace or meta.get("namespace", "")),
    )


def recorded_release(helmrelease: Obj) -> HelmReleaseRef:
    """The Helm release helm-controller recorded for a HelmRelease (the newest entry of
    `status.history`), else, before its first install, the one its spec asks for."""
    history = [
        entry
        for entry in (helmrelease.get("status") or {}).get("history") or []
        if isinstance(entry, dict) and entry.get("name") and entry.get("namespace")
    ]
    if not history:
        return configured_release(helmrelease)
    newest = max(history, key=_version)
    return HelmReleaseRef(str(newest["name"]), str(newest["namespace"]))


def _version(entry: dict[str, Any]) -> int:
    version = entry.get("version")
    return version if isinstance(version, int) else 0


def ownership_labels(helmrelease: Obj) -> dict[str, str]:
    """The labels helm-controller and Helm put on what a HelmRelease installs."""
    meta = helmrelease.get("metadata") or {}
    return {
        MANAGED_BY_LABEL: "Helm",
        ORIGIN_NAME_LABEL: str(meta.get("name", "")),
        ORIGIN_NAMESPACE_LABEL: str(meta.get("namespace", "")),
    }


def ownership_annotations(release: HelmReleaseRef) -> dict[str, str]:
    """The annotations Helm puts on what it installs for `release`."""
    return {
        RELEASE_NAME_ANNOTATION: release.name,
        RELEASE_NAMESPACE_ANNOTATION: release.namespace,
    }


def installed_by(helmrelease: Obj, obj: Obj) -> bool:
    """`obj` was installed by `helmrelease`: Helm's annotations name the release it recorded,
    or helm-controller's labels name the HelmRelease itself."""
    meta = obj.get("metadata") or {}
    annotations, labels = meta.get("annotations") or {}, meta.get("labels") or {}
    release = recorded_release(helmrelease)
    by_helm = (
        annotations.get(RELEASE_NAME_ANNOTATION) == release.name
        and annotations.get(RELEASE_NAMESPACE_ANNOTATION) == release.namespace
    )
    owner = helmrelease.get("metadata") or {}
    by_flux = (
        ORIGIN_NAME_LABEL in labels
        and labels.get(ORIGIN_NAME_LABEL) == owner.get("name")
        and labels.get(ORIGIN_NAMESPACE_LABEL) == owner.get("namespace")
    )
    return by_helm or by_flux
