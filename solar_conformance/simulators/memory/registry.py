"""An in-memory OCI registry with zot's per-user, per-repository access control."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from solar_conformance.core.oci import Chart, RegistryError, chart_manifest, digest_of
from solar_conformance.core.policy import AccessPolicy


@dataclass
class _Repository:
    tags: dict[str, str] = field(default_factory=dict)
    manifests: dict[str, dict[str, Any]] = field(default_factory=dict)
    blobs: dict[str, bytes] = field(default_factory=dict)


class InMemoryRegistry:
    def __init__(self, host: str, policy: AccessPolicy) -> None:
        self.host = host
        self.policy = policy
        self.users: dict[str, str] = {}
        self.repositories: dict[str, _Repository] = {}
        self.pulls: list[tuple[str | None, str, bool]] = []  # (user, repository, allowed)

    def client(self, username: str | None, password: str | None) -> InMemoryRegistryClient:
        return InMemoryRegistryClient(self, username, password)

    def catalog(self) -> dict[str, list[str]]:
        return {name: sorted(repo.tags) for name, repo in sorted(self.repositories.items())}

    def authenticate(self, username: str | None, password: str | None) -> None:
        if username is None or self.users.get(username) != password:
            raise RegistryError(401, "UNAUTHORIZED", "authentication required")

    def check(
        self, username: str | None, password: str | None, repository: str, action: str
    ) -> None:
        if username is not None:
            self.authenticate(username, password)
        if not self.policy.allows(username, repository, action):
            if username is None:
                raise RegistryError(401, "UNAUTHORIZED", "authentication required")
            raise RegistryError(403, "DENIED", "requested access to the resource is denied")


class InMemoryRegistryClient:
    def __init__(self, registry: InMemoryRegistry, username: str | None, password: str | None):
        self.host = registry.host
        self._registry = registry
        self._username = username
        self._password = password
        self.gate: Callable[[], None] | None = None

    def __repr__(self) -> str:
        return f"InMemoryRegistryClient({self.host}, user={self._username})"

    def _allow(self, repository: str, action: str) -> None:
        if self.gate is not None:
            self.gate()
        try:
            self._registry.check(self._username, self._password, repository, action)
        except RegistryError:
            if action == "read":
                self._registry.pulls.append((self._username, repository, False))
            raise
        if action == "read":
            self._registry.pulls.append((self._username, repository, True))

    def _repository(self, name: str) -> _Repository:
        repo = self._registry.repositories.get(name)
        if repo is None:
            raise RegistryError(
                404, "NAME_UNKNOWN", f"repository name not known to registry: {name}"
            )
        return repo

    def push_chart(self, repository: str, chart: Chart) -> str:
        existing = self._registry.repositories.get(repository)
        tagged = existing is not None and chart.version in existing.tags
        self._allow(repository, "update" if tagged else "create")
        archive = chart.package()
        manifest = chart_manifest(chart, archive)
        repo = self._registry.repositories.setdefault(repository, _Repository())
        repo.blobs[digest_of(archive)] = archive
        repo.blobs[digest_of(chart.config())] = chart.config()
        digest = digest_of(repr(sorted(manifest.items())).encode())
        repo.manifests[digest] = manifest
        repo.tags[chart.version] = digest
        return digest

    def tags(self, repository: str) -> list[str]:
        self._allow(repository, "read")
        return sorted(self._repository(repository).tags)

    def manifest(self, repository: str, reference: str) -> tuple[dict[str, Any], str]:
        self._allow(repository, "read")
        repo = self._repository(repository)
        digest = repo.tags.get(reference, reference)
        if digest not in repo.manifests:
            raise RegistryError(404, "MANIFEST_UNKNOWN", f"manifest unknown: {reference}")
        return dict(repo.manifests[digest]), digest

    def head_manifest(self, repository: str, reference: str) -> str:
        self._allow(repository, "read")
        repo = self._repository(repository)
        digest = repo.tags.get(reference, reference)
        if digest not in repo.manifests:
            raise RegistryError(404, "MANIFEST_UNKNOWN", f"manifest unknown: {reference}")
        return digest

    def catalog(self) -> list[str]:
        """As zot answers: the repositories the user may read; anonymous callers are refused."""
        if self.gate is not None:
            self.gate()
        self._registry.authenticate(self._username, self._password)
        return [
            name
            for name in sorted(self._registry.repositories)
            if self._registry.policy.allows(self._username, name, "read")
        ]

    def delete_manifest(self, repository: str, reference: str) -> None:
        self._allow(repository, "delete")
        repo = self._repository(repository)
        digest = repo.tags.get(reference, reference)
        if digest not in repo.manifests:
            raise RegistryError(404, "MANIFEST_UNKNOWN", f"manifest unknown: {reference}")
        del repo.manifests[digest]
        for tag in [t for t, d in repo.tags.items() if d == digest]:
            del repo.tags[tag]

    def blob(self, repository: str, digest: str) -> bytes:
        self._allow(repository, "read")
        repo = self._repository(repository)
        if digest not in repo.blobs:
            raise RegistryError(404, "BLOB_UNKNOWN", f"blob unknown to registry: {digest}")
        return repo.blobs[digest]

    def head_blob(self, repository: str, digest: str) -> int:
        self._allow(repository, "read")
        repo = self._repository(repository)
        if digest not in repo.blobs:
            raise RegistryError(404, "BLOB_UNKNOWN", f"blob unknown to registry: {digest}")
        return len(repo.blobs[digest])
