"""A small feature whose scenarios pass, fail in the middle, skip and run as outline examples, with
tags on a Rule, a data table, a doc string and two examples whose names differ only in case:
what the Cucumber outputs are checked against."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

LAMP_STEPS = """
import pytest
from pytest_bdd import given, parsers, then, when


@given("a lamp")
@given(parsers.parse("a {colour} lamp"))
def lamp():
    pass


@when("I press its switch")
def press():
    pass


@when("I press its switches")
def press_all(datatable):
    assert datatable[0] == ["switch", "position"]


@then("its label reads:")
def label(docstring):
    assert "ceiling lamp" in docstring


@then("it lights")
def lights():
    pass


@then("it goes dark")
def dark():
    seen = "lit"
    raise AssertionError(f"the lamp did not go dark: last seen {seen}")


@then("it is checked on kind only")
def kind_only():
    pytest.skip("needs a kind landscape")
"""

LAMP_FEATURE = """\
@spec
Feature: Lamps
  Every lamp has a switch.

  @fault
  Rule: A switch turns its lamp on and off

    Scenario: The lamp lights
      Given a lamp
      When I press its switches
        | switch | position |
        | hall   | on       |
        | stairs | off      |
      Then it lights
      And its label reads:
        ```
        ceiling lamp, 40 W
        ```

    Scenario: The lamp goes dark
      Given a lamp
      When I press its switch
      Then it goes dark
      And it lights
      And it lights

    Scenario: The lamp on kind
      Given a lamp
      Then it is checked on kind only
      And it lights

  Rule: Every colour

    Scenario Outline: The <colour> lamp lights
      Given a <colour> lamp
      Then it lights

      Examples:
        | colour |
        | red    |
        | green  |
        | RED    |
"""
# per scenario: passed 4 (lights, red, green, RED), failed 1, skipped 1
SCENARIOS = {"passed": 4, "failed": 1, "skipped": 1}
# (scenario, tag) -> the tag's line in LAMP_FEATURE
TAG_LINES = {("The lamp lights", "@spec"): 1, ("The lamp lights", "@fault"): 5}
TABLE = (("switch", "position"), ("hall", "on"), ("stairs", "off"))
DOC_STRING = "ceiling lamp, 40 W"
FAILURE = "the lamp did not go dark: last seen lit"


def run_lamps(where: Path, report: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """pytest on the lamps feature in `where`, writing its report into `report`."""
    (where / "lamp_steps.py").write_text(LAMP_STEPS)
    features = where / "features"
    features.mkdir(exist_ok=True)
    (features / "lamps.feature").write_text(LAMP_FEATURE)
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(where), str(ROOT)])}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "lamp_steps",
            "--rootdir",
            str(ROOT),
            "-c",
            str(ROOT / "pyproject.toml"),
            f"--solar-artifacts={where / 'artifacts'}",
            f"--solar-report={report}",
            str(features / "lamps.feature"),
            *args,
        ],
        cwd=where,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )
