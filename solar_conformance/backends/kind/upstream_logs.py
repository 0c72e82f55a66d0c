"""What upstream SolAr's own pods said, for a failed scenario's diagnostics: its API server,
controller-manager and etcd in their namespace, and every solar-renderer Job pod that failed
(the renderer runs as a Job per RenderTask in the Target's namespace, so a render that fails
leaves nothing but that pod's log)."""

from __future__ import annotations

from typing import Any

from kubernetes.client import CoreV1Api
from kubernetes.client.exceptions import ApiException

from solar_conformance.backends.kind.upstream import NAMESPACE
from solar_conformance.components.pod_logs import pod_log

LOG_LINES = 300
FAILED_PODS_KEPT = 20  # the newest; a render retried with backoff leaves one pod per try
SYSTEM_NAMESPACES = frozenset({NAMESPACE, "kube-system", "kube-public", "local-path-storage"})


def upstream_pod_logs(core: CoreV1Api) -> dict[str, str]:
    """`upstream-<pod>-<container>.log` per container of upstream's own pods, and
    `upstream-failed-<namespace>_<pod>.log` per failed pod outside the system namespaces."""
    out: dict[str, str] = {}
    try:
        everywhere: list[Any] = core.list_pod_for_all_namespaces().items
    except ApiException as error:
        return {"upstream-pods.txt": f"(pods not listed: {error.status} {error.reason})"}
    own = [pod for pod in everywhere if pod.metadata.namespace == NAMESPACE]
    for pod in own:
        for container in _containers(pod):
            name = f"upstream-{pod.metadata.name}-{container}.log"
            out[name] = pod_log(core, NAMESPACE, pod.metadata.name, container, LOG_LINES)
    failed = [
        pod
        for pod in everywhere
        if pod.metadata.namespace not in SYSTEM_NAMESPACES and pod.status.phase == "Failed"
    ]
    failed.sort(key=lambda pod: pod.metadata.creation_timestamp, reverse=True)
    for pod in failed[:FAILED_PODS_KEPT]:
        namespace, name = pod.metadata.namespace, pod.metadata.name
        for container in _containers(pod):
            key = f"upstream-failed-{namespace}_{name}-{container}.log"
            out[key] = pod_log(core, namespace, name, container, LOG_LINES)
    return out


def _containers(pod: Any) -> list[str]:
    return [str(container.name) for container in pod.spec.containers]
