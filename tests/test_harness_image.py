"""The repository's Dockerfile, the recipe that builds it and `make harness-image` agree (no engine
needed: the files are read). Building and running the image is measured in docs/running.md."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

from solar_conformance.provision.images import harness

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def _instructions() -> list[tuple[str, str]]:
    """The Dockerfile's instructions, continuation lines joined, comments left out."""
    text = re.sub(r"\\\n\s*", " ", (ROOT / "Dockerfile").read_text())
    lines = [line.strip() for line in text.splitlines()]
    return [
        (keyword.upper(), rest.strip())
        for keyword, _, rest in (line.partition(" ") for line in lines)
        if keyword and not keyword.startswith("#")
    ]


def test_the_image_enters_the_console_command_the_package_installs() -> None:
    entrypoints = [json.loads(rest) for keyword, rest in _instructions() if keyword == "ENTRYPOINT"]
    assert entrypoints == [list(PYPROJECT["project"]["scripts"])]
    assert entrypoints[0] == ["solar-conformance"]


def test_the_image_is_built_from_the_base_the_recipe_makes() -> None:
    instructions = _instructions()
    assert instructions[:2] == [("ARG", "BASE"), ("FROM", "${BASE}")]
    assert [rest for keyword, rest in instructions if keyword == "FROM"] == ["${BASE}"]


def test_the_build_installs_only_the_wheels_of_its_context() -> None:
    runs = [rest for keyword, rest in _instructions() if keyword == "RUN"]
    installs = [run for run in runs if "pip install" in run]
    assert len(installs) == 2
    assert all("--no-index" in run for run in installs), "the build must not reach a registry"


def test_the_image_is_named_after_the_package_version() -> None:
    assert (
        harness.harness_image_name()
        == f"solar-conformance/harness:{PYPROJECT['project']['version']}"
    )


def test_make_harness_image_runs_the_recipe() -> None:
    makefile = (ROOT / "Makefile").read_text()
    recipe = re.search(r"^harness-image:.*\n((?:\t.*\n)+)", makefile, re.MULTILINE)
    assert recipe is not None, "the Makefile has no harness-image target"
    assert recipe.group(1).split() == ["$(BIN)/solar-conformance", "provision", "harness-image"]
    assert re.search(r"^make harness-image ", (ROOT / ".ci" / "run").read_text(), re.MULTILINE)


def test_the_dependency_wheels_are_those_the_package_requires() -> None:
    assert harness.dependencies() == sorted(PYPROJECT["project"]["dependencies"])
