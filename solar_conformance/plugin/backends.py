"""The backends a run can choose with `--solar-env`: each in one registration, its name, how its
landscape starts and what that landscape can do, read from the options alone. A backend's heavy
modules are imported only when it is chosen."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from solar_conformance.core.capabilities import ALL, Capabilities
from solar_conformance.core.contract import Contract
from solar_conformance.core.landscape import Landscape, MissingPrerequisite

Report = Callable[[str], None]


@dataclass(frozen=True)
class Start:
    """What a backend is given to start a landscape."""

    config: pytest.Config
    contract: Contract
    run: str  # this run's id: the names of what the landscape creates
    report: Report  # a line as it happens, past pytest's capture
    reuse: bool | None  # kind: keep and reuse the clusters; None: as --solar-kind-reuse says


@dataclass(frozen=True)
class Backend:
    start: Callable[[Start], Landscape]
    # What the run's landscape can do, and the one of the scenarios that need a landscape alone.
    capabilities: Callable[[pytest.Config], tuple[Capabilities, Capabilities]]


def _sim(start: Start) -> Landscape:
    from solar_conformance.backends.sim.landscape import SimLandscape

    return SimLandscape(start.contract, start.config.getoption("--solar-impl"))


def _local(start: Start) -> Landscape:
    from solar_conformance.backends.local.landscape import LocalLandscape

    return LocalLandscape(start.contract, start.config.getoption("--solar-impl"))


def _kind(start: Start) -> Landscape:
    from solar_conformance.backends.kind.landscape import KindLandscape, KindOptions
    from solar_conformance.plugin.options import upstream_from_options

    config = start.config
    implementation = config.getoption("--solar-impl")
    upstream = None
    if implementation == "upstream":  # checked before the run by validation.validate
        upstream = upstream_from_options(config)
    options = KindOptions(
        start.run,
        reuse_clusters=config.getoption("--solar-kind-reuse")
        if start.reuse is None
        else start.reuse,
        online_images=config.getoption("--solar-kind-images") == "online",
        upstream=upstream,
    )
    return KindLandscape(start.contract, implementation, options, start.report)


def _attached_only(start: Start) -> Landscape:
    raise MissingPrerequisite(
        "--solar-env=existing attaches to the landscape of --solar-landscape; it starts none"
    )


def _everything(config: pytest.Config) -> tuple[Capabilities, Capabilities]:
    return ALL, ALL


def _of_implementation(config: pytest.Config) -> tuple[Capabilities, Capabilities]:
    from solar_conformance.components.capabilities import of_implementation

    both = of_implementation(config.getoption("--solar-impl"))
    return both, both


def _of_file(file: Path) -> Capabilities:
    from solar_conformance.backends.existing.landscape_file import BadLandscapeFile, load

    try:
        return load(file).granted()
    except BadLandscapeFile as problem:  # checked before the run: changed since
        raise pytest.UsageError(str(problem)) from None


def _of_landscape_files(config: pytest.Config) -> tuple[Capabilities, Capabilities]:
    main = _of_file(config.getoption("--solar-landscape"))
    alone_file = config.getoption("--solar-landscape-alone")
    return main, _of_file(alone_file) if alone_file else main


BACKENDS: dict[str, Backend] = {
    "sim": Backend(_sim, _everything),
    "local": Backend(_local, _of_implementation),
    "kind": Backend(_kind, _of_implementation),
    "existing": Backend(_attached_only, _of_landscape_files),
}
