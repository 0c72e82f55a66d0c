"""A real API server's client lets go of what holds a namespace in deletion: the finalizers of
every object in it that is being deleted, and only those; what it released is said."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes.client import ApiClient, Configuration

from solar_conformance.components.kube import KubeClusterAPI
from solar_conformance.core.api import ApiError
from solar_conformance.core.probing import ServedResource

NAMESPACE = "test-abcde"
ARTIFACTS = f"/apis/solar.example/v1alpha1/namespaces/{NAMESPACE}/renderartifacts"
CONFIGMAPS = f"/api/v1/namespaces/{NAMESPACE}/configmaps"
SECRETS = f"/api/v1/namespaces/{NAMESPACE}/secrets"
HELD = "solar.example/tag"
BEING_DELETED = "2026-01-01T00:00:00Z"


def _resource(
    group: str, resource: str, kind: str, *, subresource: str | None = None, **options: Any
) -> ServedResource:
    verbs = options.get("verbs", ("get", "list", "patch"))
    namespaced = options.get("namespaced", True)
    return ServedResource(
        group, "v1alpha1" if group else "v1", resource, subresource, kind, namespaced, verbs
    )


SERVED = [
    _resource("solar.example", "renderartifacts", "RenderArtifact"),
    _resource("solar.example", "renderartifacts", "RenderArtifact", subresource="status"),
    _resource("", "configmaps", "ConfigMap"),
    _resource("", "secrets", "Secret"),  # not listable in the namespace
    _resource("", "namespaces", "Namespace", namespaced=False),
    _resource("", "events", "Event", verbs=("get", "list")),
]


def _object(name: str, *finalizers: str, deleting: bool = True) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "finalizers": list(finalizers)}
    if deleting:
        meta["deletionTimestamp"] = BEING_DELETED
    return {"metadata": meta}


class _Server:
    """The collections of one namespace; a PATCH of an object named in `answers` fails so."""

    def __init__(self, answers: dict[str, ApiError] | None = None) -> None:
        self.collections = {
            ARTIFACTS: [
                _object("chart-1", HELD, "other.example/keep"),
                _object("chart-2", HELD, deleting=False),
            ],
            CONFIGMAPS: [_object("settings"), _object("held-config", HELD)],
        }
        self.answers = answers or {}
        self.patched: list[tuple[str, Any, str]] = []
        self.listed: list[str] = []

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        query: list[tuple[str, str]] | None = None,
        content_type: str = "application/json",
    ) -> Any:
        if method == "GET":
            self.listed.append(path)
            if path not in self.collections:
                raise ApiError(403, "Forbidden", f"{path} is forbidden")
            return {"items": self.collections[path]}
        assert method == "PATCH"
        self.patched.append((path, body, content_type))
        name = path.rsplit("/", 1)[-1]
        if name in self.answers:
            raise self.answers[name]
        return {}


@pytest.fixture
def client() -> Iterator[ApiClient]:
    client = ApiClient(Configuration(host="http://127.0.0.1:9"))
    yield client
    client.close()  # type: ignore[no-untyped-call]


def _api(client: ApiClient, server: _Server, monkeypatch: pytest.MonkeyPatch) -> KubeClusterAPI:
    api = KubeClusterAPI(client)
    monkeypatch.setattr(api, "discover", lambda: SERVED)
    monkeypatch.setattr(api, "_call", server.call)
    return api


def test_only_objects_being_deleted_with_finalizers_are_released(
    client: ApiClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = _Server()
    released = _api(client, server, monkeypatch).release_held(NAMESPACE)
    assert released == [
        f"RenderArtifact chart-1 ({HELD}, other.example/keep)",
        f"ConfigMap held-config ({HELD})",
    ]
    merge_patch = ({"metadata": {"finalizers": None}}, "application/merge-patch+json")
    assert server.patched == [
        (f"{ARTIFACTS}/chart-1", *merge_patch),
        (f"{CONFIGMAPS}/held-config", *merge_patch),
    ]


def test_subresources_cluster_scoped_and_unpatchable_resources_are_not_listed(
    client: ApiClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = _Server()
    _api(client, server, monkeypatch).release_held(NAMESPACE)
    assert server.listed == [ARTIFACTS, CONFIGMAPS, SECRETS]  # secrets: forbidden, passed over


def test_an_object_gone_meanwhile_is_no_error(
    client: ApiClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = _Server({"chart-1": ApiError(404, "NotFound", "gone")})
    released = _api(client, server, monkeypatch).release_held(NAMESPACE)
    assert f"ConfigMap held-config ({HELD})" in released
    assert not [line for line in released if "chart-1" in line]  # nothing of it was released


def test_a_refused_release_is_an_error(client: ApiClient, monkeypatch: pytest.MonkeyPatch) -> None:
    server = _Server({"chart-1": ApiError(403, "Forbidden", "no patch")})
    with pytest.raises(ApiError, match="403 Forbidden"):
        _api(client, server, monkeypatch).release_held(NAMESPACE)
