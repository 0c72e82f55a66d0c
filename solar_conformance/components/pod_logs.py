"""The tail of one container's log, or why there is none (a diagnostics line, never an error)."""

from __future__ import annotations

from kubernetes.client import CoreV1Api
from kubernetes.client.exceptions import ApiException


def pod_log(
    core: CoreV1Api, namespace: str, pod: str, container: str | None, tail_lines: int
) -> str:
    try:
        return str(
            core.read_namespaced_pod_log(pod, namespace, container=container, tail_lines=tail_lines)
        )
    except ApiException as error:
        return f"(no logs: {error.status} {error.reason})"
