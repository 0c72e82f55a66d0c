"""What the harness checks and waits for on a kind cluster it created: the API server's
certificate covers the node's address, one CoreDNS replica, kube-proxy running, the node and
CoreDNS Ready. A problem is a KindClusterError that carries the last state seen."""

from __future__ import annotations

import ssl
from ipaddress import ip_address
from urllib.parse import urlsplit

from cryptography import x509
from kubernetes.client import ApiClient, AppsV1Api, CoreV1Api
from kubernetes.client.exceptions import ApiException
from urllib3.exceptions import HTTPError as TransportError

from solar_conformance.backends.kind.cluster_errors import KindClusterError
from solar_conformance.backends.kind.node_state import coredns_patch, pod_ready, readiness
from solar_conformance.components.service import Condition, ReadinessTimeout
from solar_conformance.core.waiting import Waiter

POLL_SECONDS = 0.25  # two small lists per look, while the cluster settles


def check_certificate_covers(name: str, server_url: str, node_ip: str) -> None:
    address = urlsplit(server_url)
    pem = ssl.get_server_certificate((address.hostname or "127.0.0.1", address.port or 443))
    names = x509.load_pem_x509_certificate(pem.encode()).extensions.get_extension_for_class(
        x509.SubjectAlternativeName
    )
    addresses = names.value.get_values_for_type(x509.IPAddress)
    if ip_address(node_ip) not in addresses:
        raise KindClusterError(
            f"the API server certificate of {name} does not cover {node_ip} "
            f"(it covers {', '.join(map(str, addresses))})"
        )


def one_coredns(api: ApiClient) -> None:
    """kubeadm runs two CoreDNS replicas, each Ready only at a readiness probe 10 s after the
    last: on a one-node cluster one replica, probed every second, is Ready seconds sooner."""
    apps = AppsV1Api(api)
    try:
        deployment = apps.read_namespaced_deployment("coredns", "kube-system")
        patch = coredns_patch(deployment.to_dict())
        apps.patch_namespaced_deployment("coredns", "kube-system", patch)
    except (ApiException, TransportError, OSError) as problem:
        raise KindClusterError(f"tuning CoreDNS failed: {problem}") from None


def wait_until_kube_proxy_runs(api: ApiClient, timeout: float) -> None:
    core = CoreV1Api(api)

    def running() -> tuple[bool, str]:
        try:
            pods = core.list_namespaced_pod(
                "kube-system", label_selector="k8s-app=kube-proxy"
            ).items
        except (ApiException, TransportError, OSError) as problem:
            return False, f"API not answering: {problem}"
        ready = [pod for pod in pods if pod_ready(pod)]
        return bool(ready), f"{len(ready)} of {len(pods)} kube-proxy pods Ready"

    _wait("kube-proxy to run", running, timeout)


def wait_until_node_and_coredns_ready(api: ApiClient, name: str, timeout: float) -> None:
    core = CoreV1Api(api)

    def ready() -> tuple[bool, str]:
        try:
            pending = readiness(core)
        except (ApiException, TransportError, OSError) as problem:
            return False, f"API not answering: {problem}"
        return pending == "", pending or "node and CoreDNS Ready"

    _wait(f"kind cluster {name} to be ready", ready, timeout)


def _wait(what: str, condition: Condition, timeout: float) -> None:
    waiter = Waiter.on_real_clock(interval=POLL_SECONDS, timeout_error=ReadinessTimeout)
    try:
        waiter.until(what, condition, timeout=timeout)
    except ReadinessTimeout as problem:
        raise KindClusterError(str(problem)) from None
