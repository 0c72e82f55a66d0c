"""Helm charts as OCI artifacts: packaging, media types, manifests, semver tags, registry client."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile
from dataclasses import dataclass, field
from typing import Any, Protocol

from core import yamlio

HELM_CHART_LAYER = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
HELM_CONFIG = "application/vnd.cncf.helm.config.v1+json"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"


class RegistryError(Exception):
    """A registry answer that is not a success, with the OCI distribution error code."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message


class RegistryClient(Protocol):
    """One user's view of one OCI registry (basic credentials or anonymous)."""

    host: str

    def push_chart(self, repository: str, chart: Chart) -> str: ...

    def tags(self, repository: str) -> list[str]: ...

    def manifest(self, repository: str, reference: str) -> tuple[dict[str, Any], str]: ...

    def blob(self, repository: str, digest: str) -> bytes: ...

    def catalog(self) -> list[str]:
        """The repositories this user may see (zot lists only those it may read)."""
        ...

    def delete_manifest(self, repository: str, reference: str) -> None: ...


def digest_of(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Chart:
    name: str
    version: str
    templates: dict[str, str] = field(default_factory=dict)
    values: dict[str, Any] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)

    def metadata(self) -> dict[str, Any]:
        meta: dict[str, Any] = {
            "apiVersion": "v2",
            "name": self.name,
            "version": self.version,
            "type": "application",
        }
        if self.annotations:
            meta["annotations"] = dict(self.annotations)
        return meta

    def package(self) -> bytes:
        """A `helm package`-shaped .tgz, byte-for-byte reproducible for the same content."""
        files = {
            "Chart.yaml": yamlio.dump(self.metadata(), sort_keys=True),
            "values.yaml": yamlio.dump(self.values, sort_keys=True),
            **{f"templates/{name}": text for name, text in sorted(self.templates.items())},
        }
        raw = io.BytesIO()
        with tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as tar:
            for path, text in files.items():
                data = text.encode()
                info = tarfile.TarInfo(f"{self.name}/{path}")
                info.size = len(data)
                info.mode = 0o644
                tar.addfile(info, io.BytesIO(data))
        return gzip.compress(raw.getvalue(), mtime=0)

    def config(self) -> bytes:
        return json.dumps(self.metadata(), sort_keys=True).encode()

    @classmethod
    def unpack(cls, archive: bytes) -> Chart:
        try:
            with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
                files = {
                    member.name.split("/", 1)[1]: (tar.extractfile(member) or io.BytesIO()).read()
                    for member in tar.getmembers()
                    if member.isfile() and "/" in member.name
                }
        except (tarfile.TarError, OSError, EOFError) as error:
            raise ValueError(f"not a Helm chart archive: {error}") from None
        if "Chart.yaml" not in files:
            raise ValueError("not a Helm chart archive: Chart.yaml is missing")
        meta = yamlio.load(files["Chart.yaml"])
        return cls(
            name=meta["name"],
            version=str(meta["version"]),
            templates={
                path.removeprefix("templates/"): data.decode()
                for path, data in files.items()
                if path.startswith("templates/")
            },
            values=yamlio.load(files.get("values.yaml", b"{}")) or {},
            annotations=dict(meta.get("annotations") or {}),
        )

    def manifests(self) -> list[dict[str, Any]]:
        """The objects of the templates. Charts rendered by SolAr hold plain manifests."""
        objects: list[dict[str, Any]] = []
        for _, text in sorted(self.templates.items()):
            objects += [doc for doc in yamlio.load_all(text) if doc]
        return objects


def chart_manifest(chart: Chart, archive: bytes) -> dict[str, Any]:
    config = chart.config()
    return {
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "config": {"mediaType": HELM_CONFIG, "digest": digest_of(config), "size": len(config)},
        "layers": [
            {"mediaType": HELM_CHART_LAYER, "digest": digest_of(archive), "size": len(archive)}
        ],
        "annotations": {
            "org.opencontainers.image.title": chart.name,
            "org.opencontainers.image.version": chart.version,
        },
    }


# Semver, as Flux's OCIRepository `ref.semver` selects a tag: core/semver.py (kept here by name).
from core.semver import Version as Version  # noqa: E402
from core.semver import highest_matching as highest_matching  # noqa: E402
from core.semver import matches_constraint as matches_constraint  # noqa: E402
from core.semver import parse_version as parse_version  # noqa: E402
