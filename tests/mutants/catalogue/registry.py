"""Broken render registries, access policies (solar_conformance/core/policy.py), and Flux pulling from them."""

from __future__ import annotations

from typing import Any

from tests.mutants.model import mutant

REGISTRY = "solar_conformance.simulators.memory.registry:InMemoryRegistry"
POLICY = "solar_conformance.core.policy:AccessPolicy"


# --- the render registry and its access policy ---------------------------------------------------
@mutant(
    "policy-readers-everywhere",
    ("regcred-namespace", "separate-namespaces"),
    "each namespace's pull user may read every repository",
    f"{POLICY}.for_namespaces",
)
def _read_all(original: Any) -> Any:
    def for_namespaces(cls: Any, push_user: str, readers: dict[str, str]) -> Any:
        policy = original(cls, push_user, readers)
        for entry in policy.document["repositories"].values():
            entry["policies"].append({"users": sorted(readers), "actions": ["read"]})
        return policy

    return for_namespaces


@mutant(
    "policy-namespace-prefix",
    "regcred-namespace",
    "a pull user may read <namespace>** (any repository whose path begins like its namespace)",
    f"{POLICY}.for_namespaces",
)
def _prefix(original: Any) -> Any:
    def for_namespaces(cls: Any, push_user: str, readers: dict[str, str]) -> Any:
        policy = original(cls, push_user, readers)
        repositories = policy.document["repositories"]
        for pattern in [p for p in repositories if p.endswith("/**")]:
            repositories[pattern.removesuffix("/**") + "**"] = repositories.pop(pattern)
        return policy

    return for_namespaces


@mutant(
    "policy-readers-may-write",
    "security-notes",
    "each namespace's pull user may also push and delete in its namespace",
    f"{POLICY}.for_namespaces",
)
def _readers_write(original: Any) -> Any:
    def for_namespaces(cls: Any, push_user: str, readers: dict[str, str]) -> Any:
        policy = original(cls, push_user, readers)
        for entry in policy.document["repositories"].values():
            for rule in entry["policies"]:
                rule["actions"] = ["read", "create", "update", "delete"]
        return policy

    return for_namespaces


@mutant(
    "policy-readers-may-overwrite",
    "security-notes",
    "each namespace's pull user may overwrite existing tags in its namespace",
    f"{POLICY}.for_namespaces",
)
def _readers_update(original: Any) -> Any:
    def for_namespaces(cls: Any, push_user: str, readers: dict[str, str]) -> Any:
        policy = original(cls, push_user, readers)
        for entry in policy.document["repositories"].values():
            for rule in entry["policies"]:
                rule["actions"] = ["read", "update"]
        return policy

    return for_namespaces


@mutant(
    "policy-anonymous-read",
    "security-notes",
    "anonymous pulls are allowed everywhere",
    f"{POLICY}.for_namespaces",
)
def _anonymous(original: Any) -> Any:
    def for_namespaces(cls: Any, push_user: str, readers: dict[str, str]) -> Any:
        policy = original(cls, push_user, readers)
        for entry in policy.document["repositories"].values():
            entry["anonymousPolicy"] = ["read"]
        return policy

    return for_namespaces


@mutant(
    "policy-push-user-cannot-delete",
    "security-notes",
    "SolAr's push user may push but not delete",
    f"{POLICY}.for_namespaces",
)
def _pusher_no_delete(original: Any) -> Any:
    def for_namespaces(cls: Any, push_user: str, readers: dict[str, str]) -> Any:
        policy = original(cls, push_user, readers)
        policy.document["adminPolicy"]["actions"] = ["read", "create", "update"]
        return policy

    return for_namespaces


@mutant(
    "policy-shortest-pattern-decides",
    "regcred-namespace",
    "the least specific matching pattern decides (the catch-all `**` denies every reader)",
    f"{POLICY}.deciding_pattern",
)
def _shortest(original: Any) -> Any:
    from solar_conformance.core.policy import _glob

    def deciding_pattern(self: Any, repository: str) -> str | None:
        matches = [p for p in self.document.get("repositories", {}) if _glob(p).match(repository)]
        return min(matches, key=len) if matches else None

    return deciding_pattern


@mutant(
    "registry-any-password",
    "security-notes",
    "the registry accepts a known user with any password",
    f"{REGISTRY}.authenticate",
)
def _any_password(original: Any) -> Any:
    def authenticate(self: Any, username: str | None, password: str | None) -> None:
        original(self, username, self.users.get(username or "", password))

    return authenticate


@mutant(
    "registry-catalog-lists-everything",
    "regcred-namespace",
    "the registry's catalog lists every repository to every user",
    "solar_conformance.simulators.memory.registry:InMemoryRegistryClient.catalog",
    internal=True,
)
def _full_catalog(original: Any) -> Any:
    def catalog(self: Any) -> list[str]:
        original(self)
        return sorted(self._registry.repositories)

    return catalog


@mutant(
    "registry-any-known-password",
    "security-notes",
    "the registry accepts a user with the password of any of its users",
    f"{REGISTRY}.authenticate",
)
def _any_known_password(original: Any) -> Any:
    def authenticate(self: Any, username: str | None, password: str | None) -> None:
        if username in self.users and password in self.users.values():
            return
        original(self, username, password)

    return authenticate


@mutant(
    "registry-blobs-unchecked",
    ("regcred-namespace", "separate-namespaces"),
    "the registry hands out a blob of any repository to any user it authenticates (only tag "
    "lists and manifests are checked against the policy)",
    "solar_conformance.simulators.memory.registry:InMemoryRegistryClient.blob",
    internal=True,
)
def _blobs_unchecked(original: Any) -> Any:
    def blob(self: Any, repository: str, digest: str) -> bytes:
        self._registry.authenticate(self._username, self._password)
        return bytes(self._repository(repository).blobs[digest])

    return blob


@mutant(
    "registry-tags-unchecked",
    "regcred-namespace",
    "the registry lists the tags of any repository to any user it authenticates",
    "solar_conformance.simulators.memory.registry:InMemoryRegistryClient.tags",
    internal=True,
)
def _tags_unchecked(original: Any) -> Any:
    def tags(self: Any, repository: str) -> list[str]:
        self._registry.authenticate(self._username, self._password)
        return sorted(self._repository(repository).tags)

    return tags


# --- Flux ----------------------------------------------------------------------------------------
@mutant(
    "flux-ignores-pull-secret",
    ("table-flux", "point-once", "page-objects"),
    "Flux pulls without the credentials of the OCIRepository's secretRef",
    "solar_conformance.core.credentials:credentials_for",
    rebind=("solar_conformance.simulators.memory.flux",),
)
def _anonymous_flux(original: Any) -> Any:
    return lambda config_json, host: None


@mutant(
    "flux-picks-lowest-version",
    ("on-its-own", "table-flux"),
    "Flux picks the lowest tag the semver range matches, not the highest",
    "solar_conformance.core.oci:highest_matching",
    rebind=("solar_conformance.simulators.memory.flux",),
)
def _lowest(original: Any) -> Any:
    from solar_conformance.core.oci import matches_constraint, parse_version

    def highest_matching(tags: list[str], constraint: str) -> str | None:
        found = [t for t in tags if parse_version(t) and matches_constraint(t, constraint)]
        return min(found, key=lambda t: parse_version(t) or (0, 0, 0, ())) if found else None

    return highest_matching


@mutant(
    "flux-polls-rarely",
    ("on-its-own", "runbook"),
    "Flux reconciles every object a hundred times less often than its interval says",
    "solar_conformance.core.clock:parse_duration",
    rebind=("solar_conformance.simulators.memory.flux",),
)
def _rare(original: Any) -> Any:
    return lambda text: original(text) * 100
