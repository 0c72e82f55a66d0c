"""Helm charts as OCI artifacts: packaging, media types, manifests, semver tags, registry client."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import re
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


# --- semver, as Flux's OCIRepository `ref.semver` selects a tag ---------------------------------
_SEMVER = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$")
_CONSTRAINT = re.compile(r"^(>=|<=|!=|>|<|=)?\s*(v?\d+(?:\.\d+){0,2}(?:-[0-9A-Za-z.-]+)?)$")

Version = tuple[int, int, int, tuple[tuple[int, int | str], ...]]


def parse_version(text: str) -> Version | None:
    found = _SEMVER.match(text)
    if found is None:
        return None
    major, minor, patch, pre = found.groups()
    ids: tuple[tuple[int, int | str], ...] = (
        tuple((0, int(p)) if p.isdigit() else (1, p) for p in pre.split(".")) if pre else ()
    )
    return (int(major), int(minor), int(patch), ids)


def _sort_key(version: Version) -> tuple[Any, ...]:
    major, minor, patch, pre = version
    return (major, minor, patch, 0 if pre else 1, pre)


def _padded(text: str) -> Version:
    core, _, pre = text.lstrip("v").partition("-")
    numbers = [*core.split("."), "0", "0"][:3]
    parsed = parse_version(".".join(numbers) + (f"-{pre}" if pre else ""))
    if parsed is None:
        raise ValueError(f"invalid version in semver constraint: {text!r}")
    return parsed


def _satisfies(version: Version, clause: str) -> bool:
    found = _CONSTRAINT.match(clause.strip())
    if found is None:
        raise ValueError(f"invalid semver constraint: {clause!r}")
    op, bound_text = found.group(1) or "=", found.group(2)
    have, bound = _sort_key(version), _sort_key(_padded(bound_text))
    return {
        "=": have == bound,
        "!=": have != bound,
        ">": have > bound,
        ">=": have >= bound,
        "<": have < bound,
        "<=": have <= bound,
    }[op]


def matches_constraint(text: str, constraint: str) -> bool:
    version = parse_version(text)
    if version is None:
        return False
    for alternative in constraint.split("||"):
        clauses = [c for c in re.split(r"[\s,]+(?=[<>=!v\d])", alternative.strip()) if c]
        allows_pre = any("-" in c for c in clauses)
        if version[3] and not allows_pre:
            continue  # pre-releases only match a constraint that names one, as in Masterminds
        if clauses and all(_satisfies(version, c) for c in clauses):
            return True
    return False


def highest_matching(tags: list[str], constraint: str) -> str | None:
    candidates = [t for t in tags if matches_constraint(t, constraint)]
    if not candidates:
        return None
    return max(candidates, key=lambda t: _sort_key(parse_version(t) or (0, 0, 0, ())))
