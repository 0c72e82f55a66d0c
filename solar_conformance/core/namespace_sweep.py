"""The one sweep of a scenario's namespaces: every namespace whose name ends in `-<suffix>`.

Used wherever a scenario's namespaces are listed or deleted: the plugin's cleanup (which waits
for each deletion), the real landscapes' end of a scenario (which does not), a landscape file's
check that a scenario's names are free, and the diagnostics of a failed scenario.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

from solar_conformance.core.api import ApiError, ClusterAPI


@runtime_checkable
class ReleasesHeld(Protocol):
    """A client that can let go of what holds a namespace in deletion (a real API server's)."""

    def release_held(self, namespace: str) -> list[str]:
        """Removes the finalizers of every object in `namespace` that is being deleted; what it
        released, one `<Kind> <name> (<finalizers>)` each."""


def scenario_namespaces(api: ClusterAPI, suffix: str) -> list[str]:
    """The scenario's namespaces on one cluster, newest first."""
    found = [
        namespace["metadata"]
        for namespace in api.list("Namespace")
        if namespace["metadata"]["name"].endswith(f"-{suffix}")
    ]
    found.sort(key=lambda meta: (meta.get("creationTimestamp") or "", meta["name"]), reverse=True)
    return [meta["name"] for meta in found]


def sweep_namespaces(
    api: ClusterAPI, suffix: str, until_gone: Callable[[str], str] | None = None
) -> list[tuple[str, str]]:
    """Deletes the scenario's namespaces on one cluster, newest first, each one waited for by
    `until_gone` (which says what is wrong, or "") when given. NotFound is what a sweep wants;
    every other problem is returned with its namespace, once every deletion was tried. Listing
    the namespaces raises its ApiError."""
    problems: list[tuple[str, str]] = []
    for name in scenario_namespaces(api, suffix):
        try:
            api.delete("Namespace", name)
        except ApiError as error:
            if error.status != 404:
                problems.append((name, str(error)))
            continue
        problem = until_gone(name) if until_gone is not None else ""
        if problem:
            problems.append((name, problem))
    return problems
