"""The agent's own HTTPS client: what it sends (token, field manager, body) and how it answers
(the object, an ApiError from the server's Status, Unreachable), against a server on loopback."""

from __future__ import annotations

import json
import ssl
import tempfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from solar_conformance.components.agent_client import TokenAPI
from solar_conformance.components.background_http import BackgroundHttpServer
from solar_conformance.components.pki import CertificateAuthority
from solar_conformance.components.probes import free_loopback_ports
from solar_conformance.core.api import ApiError, Unreachable

TOKEN = "agent-token-for-the-test"
REPORT_PATH = "/apis/solar.opendefense.cloud/v1alpha1/namespaces/ns/targetreports/cluster-1"


class _Server:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.answer: tuple[int, dict[str, Any]] = (200, {})


def _handler(state: _Server) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            state.requests.append(
                {
                    "method": self.command,
                    "path": self.path,
                    "authorization": self.headers.get("Authorization"),
                    "body": json.loads(body) if body else None,
                }
            )
            status, answer = state.answer
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._serve()

        def do_PUT(self) -> None:
            self._serve()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


@pytest.fixture
def server() -> Iterator[tuple[_Server, str, str]]:
    authority = CertificateAuthority("agent-client-test-ca")
    pair = authority.issue_server("api", ["localhost"], ["127.0.0.1"])
    state = _Server()
    with tempfile.TemporaryDirectory() as scratch:
        cert, key = Path(scratch) / "tls.crt", Path(scratch) / "tls.key"
        cert.write_bytes(pair.certificate_pem)
        key.write_bytes(pair.private_key_pem)
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(cert, key)
        http = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
        http.socket = tls.wrap_socket(http.socket, server_side=True)
        background = BackgroundHttpServer("test API server")
        background.serve(http)
        try:
            yield state, f"https://127.0.0.1:{background.port}", authority.certificate_pem.decode()
        finally:
            background.stop()


def test_get_and_update_send_the_token_and_the_field_manager(
    server: tuple[_Server, str, str],
) -> None:
    state, url, ca = server
    api = TokenAPI(url, TOKEN, ca, field_manager="solar-agent")
    report = {
        "apiVersion": "solar.opendefense.cloud/v1alpha1",
        "kind": "TargetReport",
        "metadata": {"name": "cluster-1", "namespace": "ns", "resourceVersion": "7"},
        "spec": {"lastReportTime": "2026-12-03T15:00:00Z"},
    }
    state.answer = (200, report)
    assert api.get("TargetReport", "cluster-1", "ns") == report
    assert api.update(report) == report
    get, put = state.requests
    assert (get["method"], get["path"], get["body"]) == ("GET", REPORT_PATH, None)
    assert (put["method"], put["path"]) == ("PUT", f"{REPORT_PATH}?fieldManager=solar-agent")
    assert put["body"] == report
    assert get["authorization"] == put["authorization"] == f"Bearer {TOKEN}"


def test_a_refusal_is_an_api_error_made_from_the_status(server: tuple[_Server, str, str]) -> None:
    state, url, ca = server
    state.answer = (403, {"kind": "Status", "reason": "Forbidden", "message": "no, not you"})
    with pytest.raises(ApiError) as refused:
        TokenAPI(url, TOKEN, ca, "solar-agent").get("Target", "cluster-1", "ns")
    assert (refused.value.status, refused.value.reason) == (403, "Forbidden")
    assert "no, not you" in str(refused.value)
    assert not isinstance(refused.value, Unreachable)


def test_a_server_it_does_not_trust_is_unreachable(server: tuple[_Server, str, str]) -> None:
    state, url, _ = server
    other_ca = CertificateAuthority("not-the-servers-ca").certificate_pem.decode()
    with pytest.raises(Unreachable):
        TokenAPI(url, TOKEN, other_ca, "solar-agent").get("Target", "cluster-1", "ns")
    assert state.requests == []


def test_no_listener_is_unreachable() -> None:
    (port,) = free_loopback_ports(1)
    with pytest.raises(Unreachable) as unreachable:
        TokenAPI(f"https://127.0.0.1:{port}", TOKEN, "", "solar-agent").get("Target", "t", "ns")
    assert f"127.0.0.1:{port}" in str(unreachable.value)
