"""Which of SolAr's work upstream SolAr plays beside the reference (`--solar-impl=upstream`),
beyond its API, its bindings and its finalizers (docs/backends/upstream.md, "Who plays what").

One part can be switched so far: upstream's solar-renderer rendering every Release a Target is
bound to and its bootstrap chart. The harness publishes a ComponentVersion for each Release the
scenarios create (solar_conformance/page/components.py), and the reference one per Target for
that Target's agent release (solar_conformance/simulators/reference/upstream_delivery.py),
rendering then only the agent charts. It is off unless `SOLAR_UPSTREAM_RENDERS_RELEASES=1` is in
the environment of the run (and so of its workers), and it stays off by default until a run on
kind against upstream has shown it; every other implementation ignores it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

RENDERS_RELEASES_ENV = "SOLAR_UPSTREAM_RENDERS_RELEASES"


@dataclass(frozen=True)
class UpstreamParts:
    # Upstream renders the Releases and the bootstrap charts, from ComponentVersions the harness
    # and the reference publish; the reference renders only each Target's agent chart.
    renders_releases: bool = False


NONE = UpstreamParts()


def upstream_parts(implementation: str, environ: Mapping[str, str] | None = None) -> UpstreamParts:
    """What upstream plays in a landscape of `implementation`: nothing of the switchable parts
    unless it is upstream's and the environment switches them on."""
    if implementation != "upstream":
        return NONE
    env = os.environ if environ is None else environ
    return UpstreamParts(renders_releases=env.get(RENDERS_RELEASES_ENV) == "1")
