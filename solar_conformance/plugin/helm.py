"""The helm of the harness's toolchain, for reading the charts SolAr renders as Flux's Helm renders
them (solar_conformance/core/helm_render.py). It is looked for only when a chart holds Helm
templates: a run on the reference's charts needs no helm."""

from __future__ import annotations

from pathlib import Path

from solar_conformance.core.helm_render import ChartRenderer, HelmMissing
from solar_conformance.provision.toolchain.toolchain import MissingTool, Toolchain


def toolchain_helm() -> Path:
    """The toolchain's helm, or HelmMissing naming the command that builds it."""
    try:
        return Toolchain.from_env().path("helm")
    except MissingTool as problem:
        raise HelmMissing(str(problem)) from None


# One for the run: it remembers what helm rendered, and waits read the same charts again.
CHART_RENDERER = ChartRenderer(helm=toolchain_helm)
