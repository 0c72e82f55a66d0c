"""What a secret looks like when someone writes it into a file that must hold none (the landscape
file): the shapes below, wherever they stand (any key, any nesting, inside a command or a URL),
and keys named like a secret that hold a value instead of naming where it is.

Each check says which shape it saw, never the text.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter

# Keys whose value is a secret unless they name where it is (`*_file`, `*_env`).
SECRET_KEY = re.compile(
    r"(?i)(?:^|[-_.])(?:password|passwd|pass|pwd|secret|token|api[-_]?key|private[-_]?key|"
    r"credentials?|auth|bearer|client[-_]key[-_]data)$"
)
_OPTION_NAMES = r"(?:password|passwd|pass|pwd|secret|token|api[-_]?key|auth|credentials?)"
SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("a PEM private key", re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----")),
    ("a JWT", re.compile(r"\beyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}")),
    ("a password in a URL (user:password@host)", re.compile(r"(?:^|[\s/=])[^\s/:@]+:[^\s/@]+@\S")),
    ("a bearer or basic credential", re.compile(r"(?i)\b(?:bearer|basic)\s+[A-Za-z0-9._~+/-]{8,}")),
    (
        "a secret given as a command-line option",
        re.compile(rf"(?i)(?:^|\s)--?(?:[a-z0-9]+[-_])*{_OPTION_NAMES}(?:=|\s+)(?!-)\S"),
    ),
    (
        "a secret assigned to a variable or a query parameter",
        re.compile(r"(?i)(?:^|[\s?&;])[A-Za-z0-9_]*(?:password|passwd|secret|token|api_?key)=\S"),
    ),
    (
        "a secret field (password:, token:, auth:)",
        re.compile(
            r'(?i)"?\b(?:password|passwd|token|secret|auth|client-key-data)"?\s*:\s*"?[^\s",}]{4,}'
        ),
    ),
    (
        "a well-known token (GitHub, GitLab, Slack, AWS, API key)",
        re.compile(
            r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_\w{30,}|glpat-[\w-]{20,}|"
            r"xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|sk-[A-Za-z0-9_-]{20,})"
        ),
    ),
)
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/]{12,}={0,2}")
_TOKEN_RUN = re.compile(r"[A-Za-z0-9+=]{20,}")  # between separators: paths and names split up
# A random token: long, upper and lower case and digits mixed, about as varied as random text
# (commit ids and digests are lower-case hex, names and paths have separators: not these).
ENTROPY_BITS_PER_CHARACTER = 3.5
MIXED_AT_LEAST = 2  # upper-case letters, lower-case letters and digits, each


def secret_shape(text: str) -> str | None:
    """The kind of secret `text` looks like it holds, or None."""
    for name, pattern in SHAPES:
        if pattern.search(text):
            return name
    if any(_is_base64_credential(run) for run in _BASE64_RUN.findall(text)):
        return "a base64 user:password (an auth field)"
    if any(_looks_random(run) for run in _TOKEN_RUN.findall(text)):
        return "a random token"
    return None


def is_secret_key(name: str) -> bool:
    """A key named like a secret (`password`, `api_key`, `token`), not like where one is."""
    return bool(SECRET_KEY.search(name))


def _is_base64_credential(run: str) -> bool:
    try:
        decoded = base64.b64decode(run + "=" * (-len(run) % 4), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return False
    user, colon, password = decoded.partition(":")
    return bool(colon and user and password and decoded.isprintable() and " " not in decoded)


def _looks_random(run: str) -> bool:
    kinds = (str.islower, str.isupper, str.isdigit)
    if any(sum(1 for c in run if kind(c)) < MIXED_AT_LEAST for kind in kinds):
        return False
    counts = Counter(run)
    entropy = -sum(n / len(run) * math.log2(n / len(run)) for n in counts.values())
    return entropy >= ENTROPY_BITS_PER_CHARACTER
