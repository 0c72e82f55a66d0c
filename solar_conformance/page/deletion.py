"""Deleting as `kubectl delete` does: the request, then a wait until the object is gone. A SolAr
may hold what it cleans up with finalizers (upstream's controller-manager holds Targets, Releases,
Profiles and ReleaseBindings so); the object is then there, being deleted, for a while, and
making it again under its name is refused until it is gone."""

from __future__ import annotations

from typing import Any

from solar_conformance.core.api import ApiError, ClusterAPI
from solar_conformance.core.waiting import Waiter

NOT_FOUND = 404


def wait_until_gone(
    api: ClusterAPI, waiter: Waiter, kind: str, name: str, namespace: str | None
) -> None:
    def gone() -> tuple[bool, Any]:
        try:
            held = api.get(kind, name, namespace)
        except ApiError as error:
            if error.status == NOT_FOUND:
                return True, "gone"
            raise
        meta = held["metadata"]
        return False, {
            "finalizers": meta.get("finalizers", []),
            "being deleted": "deletionTimestamp" in meta,
        }

    where = f"{namespace}/{name}" if namespace else name
    waiter.until(f"the {kind} {where} is gone after its deletion", gone)
