"""Which scenarios the landscape cannot run, decided at collection from what it can do.

A scenario says what it needs with its tags (`@needs-audit-log`, solar_conformance/core/capabilities.py);
the backend says what its landscape can do from the options and the landscape file alone, before
any cluster starts, so every xdist worker decides the same. A scenario that needs what the
landscape lacks is skipped with the capability's name and the landscape's reason; its report
says so like any skip. A landscape that is asked for what it said it can do and cannot is a
harness error: the scenario fails.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pytest_bdd.scenario import scenario_wrapper_template_registry

from solar_conformance.core.capabilities import ALL, Capabilities, Capability
from solar_conformance.core.landscape import Landscape
from solar_conformance.plugin.capability_tags import steps_need
from solar_conformance.plugin.concurrent import needs_landscape_alone

BDD_EXAMPLE = "_pytest_bdd_example"  # pytest-bdd's parameter: the row of an outline's Examples
# Set before collection by whoever knows better (a test's plugin); else computed once.
CAPABILITIES_KEY = pytest.StashKey[tuple[Capabilities, Capabilities]]()


def _of_file(file: Path) -> Capabilities:
    from solar_conformance.backends.existing.landscape_file import BadLandscapeFile, load

    try:
        return load(file).granted()
    except BadLandscapeFile as problem:  # checked before the run: changed since
        raise pytest.UsageError(str(problem)) from None


def run_capabilities(config: pytest.Config) -> tuple[Capabilities, Capabilities]:
    """What the run's landscape can do, and the landscape of the scenarios that need one alone
    (`--solar-landscape-alone`; else the same)."""
    known = config.stash.get(CAPABILITIES_KEY, None)
    if known is not None:
        return known
    backend = config.getoption("--solar-env")
    if backend == "existing":
        main = _of_file(config.getoption("--solar-landscape"))
        alone_file = config.getoption("--solar-landscape-alone")
        found = (main, _of_file(alone_file) if alone_file else main)
    elif backend in ("local", "kind"):
        from solar_conformance.components.capabilities import of_implementation

        both = of_implementation(config.getoption("--solar-impl"))
        found = (both, both)
    else:
        found = (ALL, ALL)
    config.stash[CAPABILITIES_KEY] = found
    return found


def needed(item: pytest.Item) -> list[Capability]:
    """The capabilities a test's tags (or a plain test's marks) say it needs; for a row of a
    Scenario Outline, those of its tags that its own steps need (the Disabled row of a table
    needs controller.agent.apiserverURL changed, the Issued row does not)."""
    tagged = [c for c in Capability if item.get_closest_marker(c.tag) is not None]
    callspec = getattr(item, "callspec", None)
    example = callspec.params.get(BDD_EXAMPLE) if callspec is not None else None
    if not tagged or not example:
        return tagged
    function: Any = getattr(item, "obj", None)
    try:
        template = scenario_wrapper_template_registry.get(function)
    except TypeError:  # no weak key: no scenario
        return tagged
    if template is None:
        return tagged
    own = steps_need([step.name for step in template.render(example).steps])
    return [c for c in tagged if c in own]


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
