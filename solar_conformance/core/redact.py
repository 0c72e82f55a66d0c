"""Keep secrets out of every log, report, assertion message and diagnostic."""

from __future__ import annotations

import base64
import hmac
import re
import threading

REDACTED = "<redacted>"
# A piece of a secret this long or longer is redacted wherever it appears: assertion diffs and
# truncated reprs show tokens in pieces.
FRAGMENT = 8

# Shapes that are secret whoever minted them: JWTs (ServiceAccount tokens) and their pieces, the
# password and auth fields of dockerconfigjson, kubeconfig token and key fields, PEM private keys.
_PATTERNS = (
    re.compile(r"eyJ[A-Za-z0-9_-]{6,}(?:\.[A-Za-z0-9_-]*){0,2}"),
    re.compile(r'(?i)("(?:password|auth|token|client-key-data)"\s*:\s*")([^"]+)'),
    re.compile(r"(?im)(^\s*(?:password|auth|token|client-key-data):\s+)(\S+)"),
    re.compile(r"(?i)(authorization:\s*(?:bearer|basic)\s+)(\S+)"),
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.S),
)
# Runs of the characters tokens, passwords and base64 are made of.
_RUN = re.compile(rf"[A-Za-z0-9_.+/=-]{{{FRAGMENT},}}")


def _pieces(value: str) -> set[str]:
    return {value[i : i + FRAGMENT] for i in range(len(value) - FRAGMENT + 1)}


def leaks(text: str, secret: str) -> bool:
    """Whether `text` shows `secret` or any piece of it of FRAGMENT characters or more."""
    pieces = _pieces(secret)
    return any(text[i : i + FRAGMENT] in pieces for i in range(len(text) - FRAGMENT + 1))


def encodings(secret: str) -> list[str]:
    """The secret as it may be written down: itself, and the part of its base64 encoding that
    depends on the secret alone, at each of the three byte offsets it may start at inside a
    longer base64 text (a Secret's `data`, a dockerconfigjson's `auth`, a base64-encoded file)."""
    found = [secret]
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + secret.encode()).decode()
        core = encoded[4:-4]  # the first and last group mix in bytes that are not the secret's
        if len(core) >= 2 * FRAGMENT:
            found.append(core)
    return found


def holds(text: str, secret: str) -> bool:
    """Whether `text` carries the whole secret, as it is or base64-encoded (unlike `leaks`, a
    text holding another secret of the same shape, such as another token of the same issuer,
    does not count)."""
    return any(form in text for form in encodings(secret))


def leaks_encoded(text: str, secret: str) -> bool:
    """Whether `text` shows `secret` or a piece of it, as it is or base64-encoded."""
    return any(leaks(text, form) for form in encodings(secret))


class Redactor:
    """Scrubs known secret values, pieces of them, and secret-shaped text. Thread-safe; values
    are never logged."""

    def __init__(self) -> None:
        self._values: set[str] = set()
        self._pieces: set[str] = set()
        self._lock = threading.Lock()

    def register(self, *values: str) -> None:
        with self._lock:
            for value in values:
                if value and len(value) >= 4 and value not in self._values:
                    self._values.add(value)
                    self._pieces |= _pieces(value)

    def __call__(self, text: str) -> str:
        with self._lock:
            values = sorted(self._values, key=len, reverse=True)
            pieces = self._pieces
        for value in values:
            text = text.replace(value, REDACTED)
        for pattern in _PATTERNS:
            text = pattern.sub(lambda m: (m.group(1) + REDACTED) if m.groups() else REDACTED, text)
        if pieces:
            text = _RUN.sub(
                lambda m: REDACTED if _holds_piece(m.group(0), pieces) else m.group(0), text
            )
        return text


def _holds_piece(run: str, pieces: set[str]) -> bool:
    return any(run[i : i + FRAGMENT] in pieces for i in range(len(run) - FRAGMENT + 1))


REDACT = Redactor()


def same_secret(one: str | None, other: str | None) -> bool:
    """Compare two secrets without handing them to an assertion message (pytest's assertion
    rewriting prints both sides of a failed `==`): `assert same_secret(a, b), "..."`."""
    if one is None or other is None:
        return one is other
    return hmac.compare_digest(one.encode(), other.encode())
