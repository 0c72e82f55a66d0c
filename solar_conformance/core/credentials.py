"""The credential documents of the page: a token kubeconfig and a dockerconfigjson pull secret."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from solar_conformance.core import yamlio


@dataclass(frozen=True)
class TokenKubeconfig:
    server: str
    token: str
    ca_pem: str = ""
    insecure: bool = False

    def __repr__(self) -> str:
        return f"TokenKubeconfig(server={self.server!r}, token=<redacted>)"

    def render(self, name: str = "solar") -> str:
        cluster: dict[str, Any] = {"server": self.server}
        if self.ca_pem:
            cluster["certificate-authority-data"] = base64.b64encode(self.ca_pem.encode()).decode()
        if self.insecure:
            cluster["insecure-skip-tls-verify"] = True
        doc = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": name, "cluster": cluster}],
            "users": [{"name": "solar-agent", "user": {"token": self.token}}],
            "contexts": [{"name": name, "context": {"cluster": name, "user": "solar-agent"}}],
            "current-context": name,
        }
        return yamlio.dump(doc, sort_keys=False)

    @classmethod
    def parse(cls, text: str) -> TokenKubeconfig:
        try:
            doc = yamlio.load(text)
            context_name = doc["current-context"]
            context = next(c for c in doc["contexts"] if c["name"] == context_name)["context"]
            cluster = next(c for c in doc["clusters"] if c["name"] == context["cluster"])["cluster"]
            user = next(u for u in doc["users"] if u["name"] == context["user"])["user"]
            token = user["token"]
        except (yamlio.YAMLError, KeyError, StopIteration, TypeError):
            raise ValueError(
                "not a kubeconfig with a current context that carries a token"
            ) from None
        ca = cluster.get("certificate-authority-data")
        return cls(
            server=cluster["server"],
            token=token,
            ca_pem=base64.b64decode(ca).decode() if ca else "",
            insecure=bool(cluster.get("insecure-skip-tls-verify", False)),
        )


def same_server(url: str, other: str) -> bool:
    """Whether two API server URLs name the same server: the scheme and host without regard to
    case (as URLs and DNS read them) and the path without a trailing slash. The port counts as
    written: `https://h:6443/` is `https://h:6443`, `https://h` is not `https://h:443`."""
    return _server_key(url) == _server_key(other)


def _server_key(url: str) -> tuple[str, ...]:
    parts = urlsplit(url)
    userinfo, at, host_and_port = parts.netloc.rpartition("@")
    return (
        parts.scheme.lower(),
        userinfo + at,
        host_and_port.lower(),
        parts.path.rstrip("/"),
        parts.query,
        parts.fragment,
    )


def basic_auth(username: str, password: str) -> str:
    """The `auth` field of a dockerconfigjson entry: base64 of `username:password`."""
    return base64.b64encode(f"{username}:{password}".encode()).decode()


def dockerconfigjson(host: str, username: str, password: str) -> str:
    entry = {"username": username, "password": password, "auth": basic_auth(username, password)}
    return json.dumps({"auths": {host: entry}}, indent=2)


def credentials_for(config_json: str, host: str) -> tuple[str, str] | None:
    """The (username, password) a dockerconfigjson holds for `host`, as Flux reads it."""
    try:
        auths = json.loads(config_json).get("auths", {})
    except (json.JSONDecodeError, AttributeError):
        return None
    entry = auths.get(host)
    if not isinstance(entry, dict):
        return None
    if entry.get("auth"):
        try:
            decoded = base64.b64decode(entry["auth"], validate=True).decode()
        except (ValueError, UnicodeDecodeError):
            return None
        username, sep, password = decoded.partition(":")
        return (username, password) if sep else None
    if "username" in entry and "password" in entry:
        return (str(entry["username"]), str(entry["password"]))
    return None
