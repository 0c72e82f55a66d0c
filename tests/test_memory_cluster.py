"""The in-memory API server behaves like kube-apiserver 1.34 where verdicts depend on it."""

from __future__ import annotations

import pytest

from solar_conformance.core.api import ApiError, new_object
from solar_conformance.core.clock import VirtualClock
from solar_conformance.simulators.memory.cluster import InMemoryCluster


@pytest.fixture
def cluster() -> InMemoryCluster:
    cluster = InMemoryCluster("t", VirtualClock())
    admin = cluster.admin()
    admin.create(new_object("Namespace", "ns"))
    admin.create(new_object("ServiceAccount", "sa", "ns"))
    admin.create(
        new_object(
            "Role",
            "r",
            "ns",
            rules=[
                {
                    "apiGroups": [""],
                    "resources": ["configmaps"],
                    "resourceNames": ["mine"],
                    "verbs": ["get"],
                }
            ],
        )
    )
    admin.create(
        new_object(
            "RoleBinding",
            "r",
            "ns",
            roleRef={"kind": "Role", "name": "r"},
            subjects=[{"kind": "ServiceAccount", "name": "sa", "namespace": "ns"}],
        )
    )
    admin.create(new_object("ConfigMap", "mine", "ns", data={"a": "b"}))
    return cluster


def _bound_token(cluster: InMemoryCluster, seconds: int = 3600) -> str:
    admin = cluster.admin()
    secret = admin.create(new_object("Secret", "tok", "ns"))
    issued = admin.create_token(
        "ns", "sa", expiration_seconds=seconds, bound_secret=("tok", secret["metadata"]["uid"])
    )
    return issued.token


def test_a_token_for_another_audience_is_not_authenticated(cluster: InMemoryCluster) -> None:
    """As kube-apiserver: only a token for one of the API server's own audiences (by default
    its issuer, which a TokenRequest without audiences gets) is authenticated."""
    admin = cluster.admin()
    own = admin.create_token("ns", "sa", expiration_seconds=3600).token
    other = admin.create_token("ns", "sa", expiration_seconds=3600, audiences=("solar-agent",))
    assert cluster.with_token(own).get("ConfigMap", "mine", "ns")["data"] == {"a": "b"}
    with pytest.raises(ApiError) as refused:
        cluster.with_token(other.token).get("ConfigMap", "mine", "ns")
    assert refused.value.status == 401


def test_token_is_scoped_by_rbac(cluster: InMemoryCluster) -> None:
    api = cluster.with_token(_bound_token(cluster))
    assert api.get("ConfigMap", "mine", "ns")["data"] == {"a": "b"}
    with pytest.raises(ApiError) as denied:
        api.list("ConfigMap", "ns")
    assert denied.value.status == 403


def test_deleted_secret_rejects_token_within_the_cache_window(cluster: InMemoryCluster) -> None:
    clock = cluster.clock
    assert isinstance(clock, VirtualClock)
    api = cluster.with_token(_bound_token(cluster))
    api.get("ConfigMap", "mine", "ns")  # authenticates and fills the cache
    cluster.admin().delete("Secret", "tok", "ns")
    clock.advance(9)
    api.get("ConfigMap", "mine", "ns")  # still cached, as on a real API server
    clock.advance(1)
    with pytest.raises(ApiError) as rejected:
        api.get("ConfigMap", "mine", "ns")
    assert rejected.value.status == 401


def test_recreated_secret_does_not_revive_the_token(cluster: InMemoryCluster) -> None:
    api = cluster.with_token(_bound_token(cluster))
    cluster.admin().delete("Secret", "tok", "ns")
    cluster.admin().create(new_object("Secret", "tok", "ns"))
    with pytest.raises(ApiError) as rejected:
        api.get("ConfigMap", "mine", "ns")
    assert rejected.value.status == 401


def test_expired_token_is_rejected(cluster: InMemoryCluster) -> None:
    api = cluster.with_token(_bound_token(cluster, seconds=600))
    api.get("ConfigMap", "mine", "ns")
    assert isinstance(cluster.clock, VirtualClock)
    cluster.clock.advance(601)
    with pytest.raises(ApiError) as rejected:
        api.get("ConfigMap", "mine", "ns")
    assert rejected.value.status == 401


def test_short_token_requests_are_invalid(cluster: InMemoryCluster) -> None:
    with pytest.raises(ApiError) as invalid:
        cluster.admin().create_token("ns", "sa", expiration_seconds=60)
    assert invalid.value.status == 422


def test_stale_resource_version_conflicts(cluster: InMemoryCluster) -> None:
    admin = cluster.admin()
    first = admin.get("ConfigMap", "mine", "ns")
    second = admin.get("ConfigMap", "mine", "ns")
    first["data"] = {"a": "1"}
    admin.update(first)
    second["data"] = {"a": "2"}
    with pytest.raises(ApiError) as conflict:
        admin.update(second)
    assert conflict.value.status == 409
    assert conflict.value.reason == "Conflict"


def test_status_subresource_is_separate(cluster: InMemoryCluster) -> None:
    admin = cluster.admin()
    created = admin.create(new_object("Target", "t", "ns", spec={"a": 1}, status={"x": 1}))
    assert "status" not in created
    created["status"] = {"x": 2}
    created["spec"] = {"a": 2}
    updated = admin.update(created)
    assert "status" not in updated
    assert updated["metadata"]["generation"] == 2
    updated["status"] = {"x": 3}
    updated["spec"] = {"a": 9}
    after = admin.update_status(updated)
    assert after["status"] == {"x": 3}
    assert after["spec"] == {"a": 2}


def test_owner_references_cascade(cluster: InMemoryCluster) -> None:
    admin = cluster.admin()
    owner = admin.create(new_object("Target", "t", "ns", spec={}))
    admin.create(new_object("Secret", "owned", "ns", owner=owner))
    admin.delete("Target", "t", "ns")
    with pytest.raises(ApiError) as gone:
        admin.get("Secret", "owned", "ns")
    assert gone.value.status == 404


def test_managed_fields_name_the_writer(cluster: InMemoryCluster) -> None:
    cluster.admin("controller").create(new_object("TargetReport", "t", "ns", spec={}))
    writer = cluster.admin("solar-agent")
    report = writer.get("TargetReport", "t", "ns")
    report["spec"]["lastReportTime"] = "2026-01-01T00:00:00Z"
    updated = writer.update(report)
    owners = [
        e["manager"]
        for e in updated["metadata"]["managedFields"]
        if "f:lastReportTime" in e["fieldsV1"].get("f:spec", {})
    ]
    assert owners == ["solar-agent"]


def test_names_and_namespaces_are_validated(cluster: InMemoryCluster) -> None:
    admin = cluster.admin()
    with pytest.raises(ApiError) as invalid:
        admin.create(new_object("ConfigMap", "Bad_Name", "ns"))
    assert invalid.value.status == 422
    with pytest.raises(ApiError) as missing:
        admin.create(new_object("ConfigMap", "ok", "nowhere"))
    assert missing.value.status == 404


def test_an_object_with_finalizers_is_marked_until_they_are_removed(
    cluster: InMemoryCluster,
) -> None:
    """As kube-apiserver: deleted, it stays with a deletionTimestamp; made again under its name,
    it is refused as being deleted; its last finalizer removed, it is gone with what it owns."""
    admin = cluster.admin()
    held = admin.create(new_object("ConfigMap", "held", "ns"))
    admin.patch("ConfigMap", "held", "ns", {"metadata": {"finalizers": ["example.com/cleanup"]}})
    owned = new_object("ConfigMap", "owned", "ns")
    owned["metadata"]["ownerReferences"] = [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "held", "uid": held["metadata"]["uid"]}
    ]
    admin.create(owned)
    admin.delete("ConfigMap", "held", "ns")
    marked = admin.get("ConfigMap", "held", "ns")
    assert marked["metadata"]["deletionTimestamp"]
    assert admin.get("ConfigMap", "owned", "ns")
    with pytest.raises(ApiError, match="object is being deleted") as refused:
        admin.create(new_object("ConfigMap", "held", "ns"))
    assert refused.value.status == 409
    admin.patch("ConfigMap", "held", "ns", {"metadata": {"finalizers": None}})
    for name in ("held", "owned"):
        with pytest.raises(ApiError) as gone:
            admin.get("ConfigMap", name, "ns")
        assert gone.value.status == 404
