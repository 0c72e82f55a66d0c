"""A landscape's SolAr cluster and target cluster must be two clusters.

The page's premise is that SolAr cannot reach into the target cluster, and several checks read
the target cluster for what SolAr must not have put there. A landscape file that names one
cluster twice (one kubeconfig given for both, or two contexts of one cluster) would show the
SolAr cluster's own objects "on the target" and fail scenarios far into the run; it is refused
before the run creates anything.
"""

from __future__ import annotations

from typing import Protocol

from solar_conformance.backends.existing.landscape_file import BadLandscapeFile
from solar_conformance.core.api import ApiError, Obj
from solar_conformance.core.credentials import same_server

ONE_CLUSTER = "the landscape's target cluster is its SolAr cluster"
FIX = "give the target cluster's own kubeconfig and context in [target]"


class Cluster(Protocol):
    """An admin client of one of the landscape's clusters, with its API server's URL."""

    @property
    def server(self) -> str: ...

    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj: ...


class _Unread(Exception):
    """The kube-system Namespace of a cluster cannot be read; the message says why."""


def refuse_one_cluster(solar: Cluster, target: Cluster) -> None:
    """BadLandscapeFile (one line) if both clients reach one cluster. Decided by the uid of the
    kube-system Namespace, which a cluster makes once, at its first start, whatever URL or
    credential reaches it; if either side cannot read it, by the API servers' URLs."""
    try:
        solar_uid = _kube_system_uid(solar, "SolAr")
        target_uid = _kube_system_uid(target, "target")
    except _Unread as unread:
        if same_server(solar.server, target.server):
            raise BadLandscapeFile(
                f"{ONE_CLUSTER} (both kubeconfigs name the API server {target.server}; compared "
                f"by URL, as {unread}): {FIX}"
            ) from None
        return
    if solar_uid == target_uid:
        raise BadLandscapeFile(
            f"{ONE_CLUSTER} (both kubeconfigs reach the API server whose kube-system namespace "
            f"has uid {solar_uid}): {FIX}"
        )


def _kube_system_uid(api: Cluster, which: str) -> str:
    try:
        found = api.get("Namespace", "kube-system")
    except ApiError as error:
        raise _Unread(
            f"the {which} cluster's kube-system namespace cannot be read "
            f"({error.status} {error.reason})"
        ) from None
    uid = (found.get("metadata") or {}).get("uid")
    if not uid:
        raise _Unread(f"the {which} cluster's kube-system namespace has no uid")
    return str(uid)
