"""Keep secrets out of every log, report, assertion message and diagnostic."""

from __future__ import annotations

import hmac
import re
import threading

REDACTED = "<redacted>"

# Shapes that are secret whoever minted them: JWTs (ServiceAccount tokens), the password and
# auth fields of dockerconfigjson, kubeconfig token and key fields, PEM private keys.
_PATTERNS = (
    re.compile(r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"),
    re.compile(r'(?i)("(?:password|auth|token|client-key-data)"\s*:\s*")([^"]+)'),
    re.compile(r"(?im)(^\s*(?:password|auth|token|client-key-data):\s+)(\S+)"),
    re.compile(r"(?i)(authorization:\s*(?:bearer|basic)\s+)(\S+)"),
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.S),
)


class Redactor:
    """Scrubs known secret values and secret-shaped text. Thread-safe; values are never logged."""

    def __init__(self) -> None:
        self._values: set[str] = set()
        self._lock = threading.Lock()

    def register(self, *values: str) -> None:
        with self._lock:
            self._values.update(v for v in values if v and len(v) >= 4)

    def __call__(self, text: str) -> str:
        with self._lock:
            values = sorted(self._values, key=len, reverse=True)
        for value in values:
            text = text.replace(value, REDACTED)
        for pattern in _PATTERNS:
            text = pattern.sub(lambda m: (m.group(1) + REDACTED) if m.groups() else REDACTED, text)
        return text


REDACT = Redactor()


def same_secret(one: str | None, other: str | None) -> bool:
    """Compare two secrets without handing them to an assertion message (pytest's assertion
    rewriting prints both sides of a failed `==`): `assert same_secret(a, b), "..."`."""
    if one is None or other is None:
        return one is other
    return hmac.compare_digest(one.encode(), other.encode())
