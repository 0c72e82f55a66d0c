"""The tags SolAr gives the charts it renders (the one place the reference decides them).

As upstream SolAr: the bootstrap chart of a Target is tagged `v0.0.<bootstrapVersion>`, an
integer counter in the Target's status that starts at 0 and grows by one with every new
rendering; a Release's chart is tagged `v0.0.<Release generation>-<pull-secrets hash>`, the hash
being the first 8 hex digits of the SHA-256 of `<resource>=<pull secret>;` over the chart's
resources in name order (no resources: the hash of nothing). The agent release, which upstream
does not render, takes the Release form with a counter in place of the hash: its content changes
with every token while the Release's generation stays. Chart versions equal their tags.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping

_BOOTSTRAP = re.compile(r"^v0\.0\.(0|[1-9][0-9]*)$")


def bootstrap_tag(version: int) -> str:
    return f"v0.0.{version}"


def bootstrap_version_of(tag: str) -> int | None:
    """The counter a bootstrap tag carries; None for any other tag."""
    found = _BOOTSTRAP.match(tag)
    return int(found.group(1)) if found else None


def pull_secrets_hash(pull_secrets: Mapping[str, str]) -> str:
    """The pull secret of each resource of a chart, as one short hash."""
    text = "".join(f"{resource}={pull_secrets[resource]};" for resource in sorted(pull_secrets))
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def release_tag(generation: int, pull_secrets: Mapping[str, str]) -> str:
    return f"v0.0.{generation}-{pull_secrets_hash(pull_secrets)}"


def agent_release_tag(generation: int, existing: list[str]) -> str:
    """The next tag of a Target's agent release at this generation of its Release."""
    prefix = f"v0.0.{generation}-"
    renders = [
        int(tag.removeprefix(prefix))
        for tag in existing
        if tag.startswith(prefix) and re.fullmatch(r"0|[1-9][0-9]*", tag.removeprefix(prefix))
    ]
    return f"{prefix}{max(renders) + 1 if renders else 0}"
