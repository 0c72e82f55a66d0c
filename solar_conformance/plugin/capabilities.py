"""Which scenarios the landscape cannot run, decided at collection from what it can do.

A scenario says what it needs with its tags (`@needs-audit-log`, solar_conformance/core/capabilities.py);
the backend says what its landscape can do from the options and the landscape file alone, before
any cluster starts, so every xdist worker decides the same. A scenario that needs what the
landscape lacks is skipped with the capability's name and the landscape's reason; its report
says so like any skip. A landscape that is asked for what it said it can do and cannot is a
harness error: the scenario fails.
"""

from __future__ import annotations

import pytest

from solar_conformance.core.capabilities import Capabilities
from solar_conformance.core.landscape import Landscape
from solar_conformance.plugin.backends import BACKENDS
from solar_conformance.plugin.capability_tags import needed
from solar_conformance.plugin.concurrent import needs_landscape_alone

# Set before collection by whoever knows better (a test's plugin); else computed once.
CAPABILITIES_KEY = pytest.StashKey[tuple[Capabilities, Capabilities]]()


def run_capabilities(config: pytest.Config) -> tuple[Capabilities, Capabilities]:
    """What the run's landscape can do, and the landscape of the scenarios that need one alone
    (`--solar-landscape-alone`; else the same)."""
    known = config.stash.get(CAPABILITIES_KEY, None)
    if known is not None:
        return known
    found = BACKENDS[config.getoption("--solar-env")].capabilities(config)
    config.stash[CAPABILITIES_KEY] = found
    return found


def skip_what_the_landscape_cannot_run(config: pytest.Config, items: list[pytest.Item]) -> None:
    main, alone = run_capabilities(config)
    for item in items:
        reasons = (alone if needs_landscape_alone(item) else main).why_not(needed(item))
        if reasons:
            item.add_marker(pytest.mark.skip(reason="; ".join(reasons)))


def check_delivered(item: pytest.Item, landscape: Landscape) -> None:
    """The started landscape can do what collection counted on, or the scenario fails."""
    missing = [c for c in needed(item) if c not in landscape.capabilities]
    if missing:
        pytest.fail(
            f"harness error: the {landscape.backend} landscape cannot do what the run counted on "
            f"({', '.join(c.human_name for c in missing)})",
            pytrace=False,
        )
