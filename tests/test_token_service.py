"""The token service's HTTP server: what goes wrong with one client's request is the service's
own log's business, not the run's output."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from solar_conformance.components.token_service import (
    TokenService,
    _TokenHTTPServer,
    _TokenRequestHandler,
)


def _handled(tmp_path: Path, error: Exception) -> None:
    """The token service's server handles `error` as raised by one client's request."""
    service = TokenService(tmp_path / "policy.json", tmp_path / "token-service.log")
    server = _TokenHTTPServer(("127.0.0.1", 0), _TokenRequestHandler, service)
    client = socket.socket()
    try:
        try:
            raise error
        except type(error):
            server.handle_error(client, ("10.0.0.7", 51234))
    finally:
        client.close()
        server.server_close()


def test_a_client_error_goes_to_the_services_log_not_to_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _handled(tmp_path, ConnectionResetError(104, "Connection reset by peer"))
    assert capsys.readouterr().err == ""
    logged = (tmp_path / "token-service.log").read_text()
    assert "request from 10.0.0.7 ended: ConnectionResetError(104, " in logged


def test_any_other_error_of_a_request_is_still_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _handled(tmp_path, ValueError("a bug of the handler"))
    assert "ValueError: a bug of the handler" in capsys.readouterr().err
