"""The dynamic client that installs upstream SolAr keeps its discovery cache in the landscape's
scratch folder, never in the system's temporary folder, where it would outlive the run."""

from __future__ import annotations

import json
import tempfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
from kubernetes.client import ApiClient, Configuration

from solar_conformance.backends.kind.upstream import dynamic_client

# What an API server answers to discovery when it serves nothing but the core group.
DISCOVERY = {
    "/version": {"major": "1", "minor": "34", "gitVersion": "v1.34.4"},
    "/api": {"kind": "APIVersions", "versions": ["v1"]},
    "/apis": {"kind": "APIGroupList", "apiVersion": "v1", "groups": []},
    "/api/v1": {"kind": "APIResourceList", "groupVersion": "v1", "resources": []},
}


class _Discovery(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        body = json.dumps(DISCOVERY.get(path, {})).encode()
        self.send_response(200 if path in DISCOVERY else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture
def api_client() -> Iterator[ApiClient]:
    server = HTTPServer(("127.0.0.1", 0), _Discovery)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    configuration = Configuration()
    configuration.host = f"http://127.0.0.1:{server.server_address[1]}"
    client = ApiClient(configuration)
    try:
        yield client
    finally:
        client.close()  # type: ignore[no-untyped-call]
        server.shutdown()
        server.server_close()


def test_the_discovery_cache_is_in_the_scratch_folder(
    api_client: ApiClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    system_temp = tmp_path / "system-temp"
    scratch = tmp_path / "scratch"
    system_temp.mkdir()
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(system_temp))
    dynamic_client(api_client, scratch)
    assert [p.name for p in scratch.iterdir()] == ["discovery-cache.json"]
    assert list(system_temp.iterdir()) == []
