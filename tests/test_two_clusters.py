"""A landscape file whose target cluster is its SolAr cluster is refused before any scenario:
decided by the uid of each cluster's kube-system namespace, by the API servers' URLs only when
that cannot be read, never by the kubeconfigs' text."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from solar_conformance.backends.existing.landscape_file import BadLandscapeFile
from solar_conformance.backends.existing.two_clusters import ONE_CLUSTER, refuse_one_cluster
from solar_conformance.core.api import ApiError, Obj
from solar_conformance.core.clock import VirtualClock
from solar_conformance.simulators.memory.client import InMemoryClient
from solar_conformance.simulators.memory.cluster import InMemoryCluster
from tests.test_existing_landscape import _kubeconfig, _landscape, _one_line_error, _run


class _Handle:
    """An admin client of an in-memory cluster as the landscape's kubeconfig names it."""

    def __init__(self, server: str, client: InMemoryClient) -> None:
        self.server = server
        self._client = client

    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj:
        return self._client.get(kind, name, namespace)


class _Forbidden:
    """A client whose credential may not read kube-system."""

    def __init__(self, server: str) -> None:
        self.server = server

    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj:
        raise ApiError(403, "Forbidden", f"namespaces {name!r} is forbidden")


def _cluster() -> InMemoryCluster:
    return InMemoryCluster("solar", VirtualClock())


def test_two_handles_onto_one_cluster_are_refused_whatever_their_urls() -> None:
    cluster = _cluster()
    uid = cluster.admin().get("Namespace", "kube-system")["metadata"]["uid"]
    solar = _Handle("https://127.0.0.1:6443", cluster.admin())
    target = _Handle("https://localhost:6443", cluster.admin())
    with pytest.raises(BadLandscapeFile) as refused:
        refuse_one_cluster(solar, target)
    message = str(refused.value)
    assert message.startswith(ONE_CLUSTER)
    assert f"kube-system namespace has uid {uid}" in message
    assert "give the target cluster's own kubeconfig" in message
    assert "\n" not in message


def test_two_clusters_pass_even_at_one_url() -> None:
    """Two clusters reached one after the other at one address (a tunnel, a port-forward)."""
    solar = _Handle("https://127.0.0.1:6443", _cluster().admin())
    target = _Handle("https://127.0.0.1:6443", _cluster().admin())
    refuse_one_cluster(solar, target)


def test_without_kube_system_the_urls_decide_and_the_message_says_so() -> None:
    target = _Handle("https://solar.example:6443", _cluster().admin())
    with pytest.raises(BadLandscapeFile) as refused:
        refuse_one_cluster(_Forbidden("https://SOLAR.example:6443/"), target)
    message = str(refused.value)
    assert message.startswith(ONE_CLUSTER)
    assert "compared by URL" in message
    assert "the SolAr cluster's kube-system namespace cannot be read (403 Forbidden)" in message
    refuse_one_cluster(_Forbidden("https://solar.example:6443"), _Forbidden("https://t:6443"))


class _OneApiServer:
    """Just enough of an API server for the landscape's checks: Namespaces by name, one uid
    for kube-system whichever address reaches it; every request is kept."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def parse_request(self) -> bool:
                parsed = super().parse_request()
                server.requests.append((self.command, self.path))  # every method, answered or not
                return parsed

            def do_GET(self) -> None:
                prefix = "/api/v1/namespaces/"
                if self.path.startswith(prefix) and "/" not in self.path[len(prefix) :]:
                    name = self.path[len(prefix) :]
                    body: dict[str, Any] = {
                        "kind": "Namespace",
                        "apiVersion": "v1",
                        "metadata": {"name": name, "uid": f"uid-of-{name}"},
                    }
                    self._answer(200, body)
                else:
                    self._answer(404, {"kind": "Status", "reason": "NotFound", "code": 404})

            def _answer(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                return

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self._http.server_address[1]
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._http.shutdown()
        self._http.server_close()


@pytest.fixture
def one_api_server() -> Iterator[_OneApiServer]:
    server = _OneApiServer()
    yield server
    server.close()


def test_a_landscape_of_one_cluster_stops_the_run_in_one_line(
    tmp_path: Path, one_api_server: _OneApiServer
) -> None:
    """Two kubeconfigs with two addresses of one API server: exit code 4 before any scenario,
    nothing but reads sent to the cluster, and no credential in the line."""
    solar = _kubeconfig(tmp_path / "solar", f"http://127.0.0.1:{one_api_server.port}", "solar")
    target = _kubeconfig(tmp_path / "target", f"http://localhost:{one_api_server.port}", "target")
    file = _landscape(
        tmp_path,
        solar__kubeconfig=str(solar),
        solar__context="solar",
        target__kubeconfig=str(target),
        target__context="target",
    )
    line = _one_line_error(_run("--solar-env=existing", f"--solar-landscape={file}"))
    assert ONE_CLUSTER in line and "uid uid-of-kube-system" in line
    assert "not-a-real-token" not in line
    assert {method for method, _ in one_api_server.requests} == {"GET"}
