"""What a render of one Target reads from the SolAr cluster: its bindings and their Releases,
the namespace's Profiles, its render Registry and the push Secret, the token its condition
names; and, for renders of several Targets in a row, each of them read once."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from solar_conformance.core.api import ApiError, ClusterAPI, Obj, find_condition
from solar_conformance.core.conditions import secret_value
from solar_conformance.core.contract import Contract
from solar_conformance.core.oci import RegistryClient
from solar_conformance.simulators.reference.render_config import ConnectRegistry, RendererConfig


@dataclass
class BatchReads:
    bindings: dict[str, dict[str, list[Obj]]] = field(default_factory=dict)  # ns -> Target -> list
    profiles: dict[str, list[Obj]] = field(default_factory=dict)  # namespace -> list
    objects: dict[tuple[str, str, str], Obj] = field(default_factory=dict)  # kind, ns, name
    releases_listed: set[str] = field(default_factory=set)  # namespaces


class RenderReads:
    """The reads of the Renderer (solar_conformance/simulators/reference/renderer.py)."""

    solar: ClusterAPI
    connect_registry: ConnectRegistry
    contract: Contract
    config: RendererConfig
    log: Callable[[str], None]
    _batch: BatchReads | None

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Renders of several Targets in a row read each namespace's ReleaseBindings and
        Profiles once, and each Registry, Release and Secret once (as an informer cache would),
        not once per Target and step. What a render reads and finds gone is read again."""
        self._batch = BatchReads()
        try:
            yield
        finally:
            self._batch = None

    def bindings_of(self, target: Obj) -> list[Obj]:
        namespace, name = target["metadata"]["namespace"], target["metadata"]["name"]
        if self._batch is None:
            return self._bindings_by_target(namespace).get(name, [])
        by_target = self._batch.bindings.get(namespace)
        if by_target is None:
            by_target = self._batch.bindings[namespace] = self._bindings_by_target(namespace)
        return by_target.get(name, [])

    def profiles_of(self, namespace: str) -> list[Obj]:
        if self._batch is None:
            return self.solar.list("Profile", namespace)
        profiles = self._batch.profiles.get(namespace)
        if profiles is None:
            profiles = self._batch.profiles[namespace] = self.solar.list("Profile", namespace)
        return profiles

    def read(self, kind: str, name: str, namespace: str) -> Obj:
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

    def inputs_of(self, target: Obj, registry: Obj) -> tuple[object, ...]:
        """What a render depends on, by resourceVersion: unchanged inputs need no new render.
        Its own bindings and their Releases, the push Secret, the token Secret its condition
        names and the namespace's Profiles; not the other Targets' objects."""
        namespace = target["metadata"]["namespace"]
        bindings = self.bindings_of(target)
        profiles = self.profiles_of(namespace)
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
            return str(self.read(kind, name, namespace)["metadata"]["resourceVersion"])
        except ApiError as error:
            if error.status == 404:
                return None
            raise

    def registry_of(self, target: Obj) -> Obj | None:
        ref = target.get("spec", {}).get("renderRegistryRef", {}).get("name")
        if not ref:
            return None
        try:
            return self.read("Registry", ref, target["metadata"]["namespace"])
        except ApiError as error:
            if error.status == 404:
                self.log(f"Target {target['metadata']['name']}: Registry {ref} not found")
                return None
            raise

    def push_client(self, registry: Obj, namespace: str) -> RegistryClient:
        secret = self.read("Secret", registry["spec"]["solarSecretRef"]["name"], namespace)
        return self.connect_registry(
            registry["spec"]["hostname"],
            secret_value(secret, "username") or "",
            secret_value(secret, "password") or "",
        )

    def token_of(self, target: Obj) -> str | None:
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
            secret = self.read("Secret", named[1], named[0])
        except ApiError as error:
            if error.status == 404:
                return None
            raise
        return secret_value(secret, self.contract.token_key)
