"""What a kind node's logs tell the user about the host, and when a node and CoreDNS count as
ready."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from kubernetes.client import (
    CoreV1Api,
    V1Node,
    V1NodeCondition,
    V1NodeList,
    V1NodeStatus,
    V1ObjectMeta,
    V1Pod,
    V1PodCondition,
    V1PodList,
    V1PodStatus,
)

from solar_conformance.backends.kind.node_state import coredns_patch, host_limit_hint, readiness

KUBELET_OUT_OF_INOTIFY = (
    'kubelet: E1203 17:13:24 manager.go:294] "Registration of the raw container factory '
    'failed: inotify_init: too many open files"'
)


def test_a_node_out_of_inotify_instances_names_the_host_limit_and_its_fix(tmp_path: Path) -> None:
    limit = tmp_path / "max_user_instances"
    limit.write_text("128\n")
    hint = host_limit_hint(KUBELET_OUT_OF_INOTIFY, str(limit))
    assert "fs.inotify.max_user_instances is 128" in hint
    assert "sysctl -w fs.inotify.max_user_instances=" in hint
    assert "\n" not in hint


def test_other_node_errors_get_no_hint(tmp_path: Path) -> None:
    assert host_limit_hint("containerd: failed to load plugin devmapper", str(tmp_path)) == ""


def test_an_unreadable_limit_still_gives_the_fix(tmp_path: Path) -> None:
    hint = host_limit_hint(KUBELET_OUT_OF_INOTIFY, str(tmp_path / "absent"))
    assert "is unknown" in hint and "sysctl -w" in hint


def _pod(name: str, ready: bool, going: bool = False) -> V1Pod:
    return V1Pod(
        metadata=V1ObjectMeta(name=name, deletion_timestamp=datetime.now(UTC) if going else None),
        status=V1PodStatus(
            phase="Running", conditions=[V1PodCondition(type="Ready", status=str(ready))]
        ),
    )


class _Core:
    def __init__(self, pods: list[V1Pod]) -> None:
        self._pods = pods

    def list_node(self) -> V1NodeList:
        ready = V1NodeCondition(type="Ready", status="True")
        node = V1Node(metadata=V1ObjectMeta(name="n"), status=V1NodeStatus(conditions=[ready]))
        return V1NodeList(items=[node])

    def list_namespaced_pod(self, _namespace: str, label_selector: str) -> V1PodList:
        return V1PodList(items=self._pods)


def test_a_coredns_pod_scaled_away_is_not_waited_for() -> None:
    core = cast(CoreV1Api, _Core([_pod("kept", True), _pod("going", False, going=True)]))
    assert readiness(core) == ""
    core = cast(CoreV1Api, _Core([_pod("kept", False), _pod("going", True, going=True)]))
    assert readiness(core).startswith("CoreDNS pod kept")
    assert readiness(cast(CoreV1Api, _Core([_pod("going", True, going=True)]))) == (
        "no CoreDNS pod yet"
    )


def _coredns(container: dict[str, Any]) -> dict[str, Any]:
    return {"spec": {"replicas": 2, "template": {"spec": {"containers": [container]}}}}


def test_coredns_gets_one_replica_probed_every_second() -> None:
    deployment = _coredns({"name": "coredns", "readiness_probe": {"period_seconds": 10}})
    assert coredns_patch(deployment) == [
        {"op": "replace", "path": "/spec/replicas", "value": 1},
        {
            "op": "replace",
            "path": "/spec/template/spec/containers/0/readinessProbe/periodSeconds",
            "value": 1,
        },
    ]
    assert coredns_patch(_coredns({"name": "coredns"})) == [
        {"op": "replace", "path": "/spec/replicas", "value": 1}
    ]
