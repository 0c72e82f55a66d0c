"""The render registry's access control, written once in zot's `accessControl` format.

The same policy document configures zot (as `http.accessControl`), is enforced by the in-memory
registry of the sim backend, and is read by the harness's token service in front of a registry
that has no per-repository access control of its own (CNCF Distribution).

Semantics follow zot: a repository path is matched against the glob patterns under
`repositories` (`*` within one path segment; `**` as a whole segment is any number of segments,
none included, so `test/**` also matches `test` itself, as zot's doublestar matching does);
the most specific (longest)
matching pattern decides; a user listed in `adminPolicy` may do the admin actions everywhere;
`defaultPolicy` applies to any authenticated user, `anonymousPolicy` to requests without one.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

ACTIONS = ("read", "create", "update", "delete")


def _segment(segment: str) -> str:
    return "".join("[^/]*" if c == "*" else re.escape(c) for c in segment)


@lru_cache(maxsize=256)
def _glob(pattern: str) -> re.Pattern[str]:
    segments = pattern.split("/")
    regex = ""
    for index, segment in enumerate(segments):
        first, last = index == 0, index == len(segments) - 1
        if segment != "**":
            regex += ("" if first else "/") + _segment(segment)
        elif first and last:
            regex += ".*"
        elif first:
            regex += "(?:.*/)?"  # the next segment adds no slash of its own
        else:
            regex += "(?:/.*)?"
    regex = regex.replace("(?:.*/)?/", "(?:.*/)?")
    return re.compile(f"^{regex}$")


@dataclass(frozen=True)
class AccessPolicy:
    document: dict[str, Any]

    @classmethod
    def for_namespaces(cls, push_user: str, readers: dict[str, str]) -> AccessPolicy:
        """SolAr's push user may do everything; each reader may only read `<namespace>/**`."""
        repositories: dict[str, Any] = {
            "**": {"policies": [], "defaultPolicy": [], "anonymousPolicy": []}
        }
        for user, namespace in sorted(readers.items()):
            entry = repositories.setdefault(
                f"{namespace}/**", {"policies": [], "defaultPolicy": [], "anonymousPolicy": []}
            )
            entry["policies"].append({"users": [user], "actions": ["read"]})
        return cls(
            {
                "repositories": repositories,
                "adminPolicy": {"users": [push_user], "actions": list(ACTIONS)},
            }
        )

    def zot_config_fragment(self) -> dict[str, Any]:
        return {"http": {"accessControl": self.document}}

    def write(self, path: Path) -> None:
        path.write_text(json.dumps(self.document, indent=2, sort_keys=True))

    @classmethod
    def read(cls, path: Path) -> AccessPolicy:
        return cls(json.loads(path.read_text()))

    def deciding_pattern(self, repository: str) -> str | None:
        matches = [p for p in self.document.get("repositories", {}) if _glob(p).match(repository)]
        return max(matches, key=len) if matches else None

    def allows(self, user: str | None, repository: str, action: str) -> bool:
        if action not in ACTIONS:
            raise ValueError(f"unknown registry action {action!r}; one of {', '.join(ACTIONS)}")
        admin = self.document.get("adminPolicy", {})
        if (
            user is not None
            and user in admin.get("users", [])
            and action in admin.get("actions", [])
        ):
            return True
        pattern = self.deciding_pattern(repository)
        if pattern is None:
            return False
        rules = self.document["repositories"][pattern]
        if user is None:
            return action in rules.get("anonymousPolicy", [])
        if action in rules.get("defaultPolicy", []):
            return True
        return any(
            user in policy.get("users", []) and action in policy.get("actions", [])
            for policy in rules.get("policies", [])
        )
