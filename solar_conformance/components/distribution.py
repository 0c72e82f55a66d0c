"""CNCF Distribution as the render registry, on any backend: its configuration (trusting the
token service's keys), the check that it answers, and writing its files so readers never see half
of one."""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

from solar_conformance.components.probes import http_get
from solar_conformance.components.token_service import ISSUER, SERVICE, SIGNING_ALGORITHM
from solar_conformance.components.waiting import Condition
from solar_conformance.core.redact import REDACT


def write_atomically(path: Path, text: str) -> None:
    """Readers (the token service, zot's config watcher) never see half a file."""
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(text)
    partial.chmod(0o600)
    os.replace(partial, path)


def distribution_config(address: str, storage: str, jwks: str, token_realm: str) -> dict[str, Any]:
    """Distribution with filesystem storage, trusting the token service's keys (`jwks`)."""
    secret = secrets.token_urlsafe(32)  # signs upload state; Distribution warns without one
    REDACT.register(secret)
    return {
        "version": "0.1",
        "log": {"level": "info", "formatter": "text"},
        "storage": {
            "filesystem": {"rootdirectory": storage},
            "delete": {"enabled": True},
            "maintenance": {"uploadpurging": {"enabled": False}},
        },
        "http": {"addr": address, "secret": secret},
        "auth": {
            "token": {
                "realm": token_realm,
                "service": SERVICE,
                "issuer": ISSUER,
                "jwks": jwks,
                "signingalgorithms": [SIGNING_ALGORITHM],
            }
        },
    }


def answers_registry_api(url: str) -> Condition:
    """Up once `/v2/` answers at all: 200, or 401 when authentication is configured."""

    def condition() -> tuple[bool, str]:
        try:
            status, body = http_get(url, None)
        except OSError as error:  # refused while starting, reset, timeout
            return False, f"{url}: {type(error).__name__}: {error}"
        return status in (200, 401), f"{url}: HTTP {status} {body.strip()[:200]}"

    return condition
