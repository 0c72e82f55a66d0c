"""A test's plugin (`-p tests.lacking_plugin`): the run's landscape lacks the capabilities named in
SOLAR_TEST_LACKING (comma-separated values of Capability), each for the reason in
SOLAR_TEST_LACKING_REASON, as a landscape file that does not grant them would have it; the sim
itself still can do everything, so a scenario that ran anyway would show."""

from __future__ import annotations

import os

import pytest

from solar_conformance.core.capabilities import Capabilities, Capability


def pytest_configure(config: pytest.Config) -> None:
    # Imported here: the plugin's modules are imported (and their asserts rewritten) by pytest.
    from solar_conformance.plugin.capabilities import CAPABILITIES_KEY

    reason = os.environ.get("SOLAR_TEST_LACKING_REASON", "this test's landscape lacks it")
    names = [name for name in os.environ.get("SOLAR_TEST_LACKING", "").split(",") if name]
    lacking = Capabilities({Capability(name): reason for name in names})
    config.stash[CAPABILITIES_KEY] = (lacking, lacking)
