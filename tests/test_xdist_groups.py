"""The scenarios that need the landscape alone run on one worker, one after another: pytest-xdist
keeps an `xdist_group` on one worker, and the workers learn that the controlling process
schedules by group (which it chose for them, solar_conformance/plugin/options.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from solar_conformance.plugin.concurrent import (
    GROUPED_INPUT,
    HandsOut,
    pytest_collection_modifyitems,
)

XDIST_LOADGROUP = ("-n", "3", "--dist", "loadgroup", "-p", "no:cacheprovider", "test_groups.py")
TESTS = """
import os, pathlib, pytest

def _note(name):
    out = pathlib.Path(os.environ["WHERE"])
    with out.open("a") as f:
        f.write(f"{name} {os.environ['PYTEST_XDIST_WORKER']}\\n")

@pytest.mark.xdist_group("alone")
@pytest.mark.parametrize("n", range(4))
def test_alone(n):
    _note(f"alone{n}")

@pytest.mark.parametrize("n", range(8))
def test_beside(n):
    _note(f"beside{n}")
"""


def test_the_installed_pytest_xdist_keeps_a_group_on_one_worker(tmp_path: Path) -> None:
    (tmp_path / "test_groups.py").write_text(TESTS)
    where = tmp_path / "where.txt"
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:solar_conformance", *XDIST_LOADGROUP],
        cwd=tmp_path,
        env={**_environment(), "WHERE": str(where)},
        check=True,
        capture_output=True,
        timeout=300,
    )
    ran = dict(line.split() for line in where.read_text().splitlines())
    assert len(ran) == 12
    assert len({worker for name, worker in ran.items() if name.startswith("alone")}) == 1


def _environment() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}


def test_each_worker_is_told_whether_the_controller_schedules_by_group() -> None:
    for dist, grouped in (("loadgroup", True), ("load", False)):
        config = SimpleNamespace(getvalue=lambda name, d=dist: d)
        node = SimpleNamespace(workerinput={})
        HandsOut(cast(pytest.Config, config), "run").pytest_configure_node(node)
        assert node.workerinput[GROUPED_INPUT] is grouped


def test_a_worker_told_so_asks_xdist_for_the_groups_in_its_test_ids(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from solar_conformance.provision.toolchain.layout import CACHE_ENV_VAR

    monkeypatch.setenv(CACHE_ENV_VAR, str(tmp_path))
    options = {"--solar-env": "local", "--solar-impl": None, "--solar-landscape-alone": None}
    for grouped in (True, False):
        config: Any = SimpleNamespace(
            workerinput={GROUPED_INPUT: grouped},
            option=SimpleNamespace(loadgroup=False),
            getoption=lambda name, default=None: options.get(name, default),
        )
        pytest_collection_modifyitems(config, [])
        assert config.option.loadgroup is grouped
