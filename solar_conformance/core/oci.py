"""Helm charts as OCI artifacts: packaging, media types, manifests, semver tags, registry client."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import marshal
import tarfile
import threading
from dataclasses import dataclass, field
from typing import Any, Protocol

from solar_conformance.core import yamlio

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

    def head_manifest(self, repository: str, reference: str) -> str:
        """A HEAD request for a manifest (by tag or digest): its digest, without its content."""
        ...

    def head_blob(self, repository: str, digest: str) -> int:
        """A HEAD request for a blob: its size, without its content."""
        ...

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
        archive = gzip.compress(raw.getvalue(), mtime=0)
        _UNPACKED.put(archive, self._fields())
        return archive

    def _fields(self) -> bytes | None:
        try:
            return marshal.dumps(
                (self.name, self.version, self.templates, self.values, self.annotations)
            )
        except ValueError:  # values that are not plain data: unpack the archive when asked
            return None

    def config(self) -> bytes:
        return json.dumps(self.metadata(), sort_keys=True).encode()

    @classmethod
    def unpack(cls, archive: bytes) -> Chart:
        """The chart in a `.tgz`. An archive that `package` made is answered from memory (the
        same bytes unpack to the same chart: Flux in a sim of thousands of Targets unpacks every
        chart the renderer packed)."""
        known = _UNPACKED.get(archive)
        if known is not None:
            name, version, templates, values, annotations = marshal.loads(known)  # noqa: S302
            return cls(name, version, templates, values, annotations)
        chart = cls._unpack(archive)
        _UNPACKED.put(archive, chart._fields())
        return chart

    @classmethod
    def _unpack(cls, archive: bytes) -> Chart:
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


class _Unpacked:
    """Archives and the fields of their chart, bounded (the oldest entry goes first)."""

    LIMIT = 1 << 16

    def __init__(self) -> None:
        self._entries: dict[bytes, bytes] = {}
        self._lock = threading.Lock()

    def get(self, archive: bytes) -> bytes | None:
        return self._entries.get(archive)

    def put(self, archive: bytes, fields: bytes | None) -> None:
        if fields is None:
            return
        with self._lock:
            if archive not in self._entries and len(self._entries) >= self.LIMIT:
                del self._entries[next(iter(self._entries))]
            self._entries[archive] = fields


_UNPACKED = _Unpacked()


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


# Semver, as Flux's OCIRepository `ref.semver` selects a tag: solar_conformance/core/semver.py (kept here by name).
from solar_conformance.core.semver import Version as Version  # noqa: E402
from solar_conformance.core.semver import highest_matching as highest_matching  # noqa: E402
from solar_conformance.core.semver import matches_constraint as matches_constraint  # noqa: E402
from solar_conformance.core.semver import parse_version as parse_version  # noqa: E402
