"""Upstream SolAr's pods in a failed scenario's diagnostics: its own pods' containers, the newest
failed pods outside the system namespaces, and a line instead when pods cannot be listed."""

from __future__ import annotations

import datetime
from types import SimpleNamespace
from typing import Any

from kubernetes.client.exceptions import ApiException

from solar_conformance.backends.kind.upstream import NAMESPACE
from solar_conformance.backends.kind.upstream_logs import (
    FAILED_PODS_KEPT,
    LOG_LINES,
    upstream_pod_logs,
)

EPOCH = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)


def _pod(namespace: str, name: str, phase: str, *containers: str, age: int = 0) -> Any:
    created = EPOCH - datetime.timedelta(seconds=age)
    return SimpleNamespace(
        metadata=SimpleNamespace(namespace=namespace, name=name, creation_timestamp=created),
        spec=SimpleNamespace(containers=[SimpleNamespace(name=c) for c in containers]),
        status=SimpleNamespace(phase=phase),
    )


class _Core:
    """The part of CoreV1Api the logs are read with; a pod in `silent` has no log to give."""

    def __init__(self, pods: list[Any], refused: bool = False, silent: str = "") -> None:
        self.pods, self.refused, self.silent = pods, refused, silent
        self.tails: set[int] = set()

    def list_pod_for_all_namespaces(self) -> Any:
        if self.refused:
            raise ApiException(status=403, reason="Forbidden")
        return SimpleNamespace(items=self.pods)

    def read_namespaced_pod_log(
        self, name: str, namespace: str, *, container: str, tail_lines: int
    ) -> str:
        self.tails.add(tail_lines)
        if name == self.silent:
            raise ApiException(status=400, reason="Bad Request")
        return f"{namespace}/{name}/{container} said"


def test_each_container_of_upstreams_own_pods_gives_a_log() -> None:
    core = _Core(
        [
            _pod(NAMESPACE, "apiserver-0", "Running", "apiserver", "etcd"),
            _pod(NAMESPACE, "controller-0", "Failed", "manager"),
            _pod("test-abcde", "render-ok", "Succeeded", "renderer"),
            _pod("test-abcde", "render-running", "Running", "renderer"),
        ]
    )
    assert upstream_pod_logs(core) == {  # type: ignore[arg-type]
        "upstream-apiserver-0-apiserver.log": f"{NAMESPACE}/apiserver-0/apiserver said",
        "upstream-apiserver-0-etcd.log": f"{NAMESPACE}/apiserver-0/etcd said",
        "upstream-controller-0-manager.log": f"{NAMESPACE}/controller-0/manager said",
    }
    assert core.tails == {LOG_LINES}


def test_failed_pods_outside_the_system_namespaces_give_their_logs() -> None:
    core = _Core(
        [
            _pod("test-abcde", "render-1", "Failed", "renderer", "fetch"),
            _pod("kube-system", "coredns-1", "Failed", "coredns"),
            _pod("local-path-storage", "helper-1", "Failed", "helper"),
        ]
    )
    assert upstream_pod_logs(core) == {  # type: ignore[arg-type]
        "upstream-failed-test-abcde_render-1-renderer.log": "test-abcde/render-1/renderer said",
        "upstream-failed-test-abcde_render-1-fetch.log": "test-abcde/render-1/fetch said",
    }


def test_only_the_newest_failed_pods_are_kept() -> None:
    ages = list(range(FAILED_PODS_KEPT + 2))
    pods = [_pod("test-abcde", f"render-{age}", "Failed", "renderer", age=age) for age in ages]
    core = _Core(pods[::2] + pods[1::2])  # listed in no order of age
    kept = upstream_pod_logs(core)  # type: ignore[arg-type]
    expected = {f"upstream-failed-test-abcde_render-{age}-renderer.log" for age in ages[:-2]}
    assert set(kept) == expected


def test_pods_that_cannot_be_listed_are_one_line() -> None:
    core = _Core([_pod(NAMESPACE, "apiserver-0", "Running", "apiserver")], refused=True)
    assert upstream_pod_logs(core) == {  # type: ignore[arg-type]
        "upstream-pods.txt": "(pods not listed: 403 Forbidden)"
    }


def test_a_log_that_cannot_be_read_says_why() -> None:
    core = _Core([_pod("test-abcde", "render-1", "Failed", "renderer")], silent="render-1")
    assert upstream_pod_logs(core) == {  # type: ignore[arg-type]
        "upstream-failed-test-abcde_render-1-renderer.log": "(no logs: 400 Bad Request)"
    }
