"""A kind cluster from the offline node image: node and CoreDNS Ready, a preloaded image runs."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes.client import CoreV1Api, V1Container, V1ObjectMeta, V1Pod, V1PodSpec

from solar_conformance.backends.kind.cluster import KindCluster
from solar_conformance.core.waiting import Waiter
from solar_conformance.provision import engine
from solar_conformance.provision.images.common import has_image
from solar_conformance.provision.images.node import build_node_image, node_image_reference
from solar_conformance.provision.images.node_components import PAUSE_IMAGE
from solar_conformance.provision.toolchain.toolchain import MissingTool, Toolchain

pytestmark = pytest.mark.kind

POD_TIMEOUT_SECONDS = 120.0


@pytest.fixture(scope="module")
def cluster() -> Iterator[KindCluster]:
    try:
        client = engine.client()
    except engine.EngineUnavailable as problem:
        pytest.skip(str(problem))
    toolchain = Toolchain.from_env()
    try:
        reference = node_image_reference(toolchain)
        toolchain.path("kubectl")
    except MissingTool as problem:
        pytest.skip(str(problem))
    if not has_image(client, reference):
        for program in ("debootstrap", "gcc"):
            if shutil.which(program) is None:
                pytest.skip(f"building the kind node image needs {program}, which is not installed")
    image = build_node_image(client, toolchain, print)
    with KindCluster(f"harness-{uuid.uuid4().hex[:6]}", image, toolchain, print) as created:
        yield created


def test_node_and_coredns_become_ready(cluster: KindCluster) -> None:
    with cluster.admin_api_client() as api:
        core = CoreV1Api(api)
        nodes = core.list_node().items
        assert [n.metadata and n.metadata.name for n in nodes] == [cluster.node_container]
        assert _ready(nodes[0].status)
        dns = core.list_namespaced_pod("kube-system", label_selector="k8s-app=kube-dns").items
        kept = [pod for pod in dns if pod.metadata and pod.metadata.deletion_timestamp is None]
        assert len(kept) == 1  # one node: kubeadm's second replica is scaled away
        assert _ready(kept[0].status)
        assert kept[0].spec is not None
        probe = kept[0].spec.containers[0].readiness_probe
        assert probe is not None and probe.period_seconds == 1


def test_preloaded_pause_image_runs_in_a_pod(cluster: KindCluster) -> None:
    pod = V1Pod(
        metadata=V1ObjectMeta(name="pause"),
        spec=V1PodSpec(
            containers=[V1Container(name="pause", image=PAUSE_IMAGE, image_pull_policy="Never")]
        ),
    )
    with cluster.admin_api_client() as api:
        core = CoreV1Api(api)
        core.create_namespaced_pod("default", pod)

        def running() -> tuple[bool, str | None]:
            status = core.read_namespaced_pod("pause", "default").status
            phase = status.phase if status else None
            return phase == "Running", phase

        Waiter.on_real_clock(interval=1).until(
            "pod default/pause to be Running", running, timeout=POD_TIMEOUT_SECONDS
        )


def test_api_server_answers_on_the_node_ip_with_a_certificate_for_it(cluster: KindCluster) -> None:
    # kubectl checks the serving certificate against the cluster CA and the address it dials.
    answer = cluster.exec(
        [
            "kubectl",
            "--kubeconfig=/etc/kubernetes/admin.conf",
            f"--server={cluster.internal_server_url}",
            "get",
            "--raw=/readyz",
        ]
    )
    assert answer == "ok"


def _ready(status: Any) -> bool:
    conditions = (status and status.conditions) or []
    return any(c.type == "Ready" and c.status == "True" for c in conditions)
