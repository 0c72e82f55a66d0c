"""`solar-conformance`: what `run` hands to pytest, the commands it names, and bad input.
(The page run from an installed wheel outside the checkout is `make package-check`.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import solar_conformance.cli as cli

ROOT = Path(__file__).resolve().parents[1]


def test_the_package_carries_the_page_and_its_feature_files() -> None:
    folder = cli.features_folder()
    carried = {path.name for path in folder.iterdir()}
    checkout = {path.name for path in (ROOT / "features").glob("*.feature")}
    assert checkout, "the checkout's features/ has no feature file"
    assert checkout | {"agent-registration.md", "traceability.yaml"} <= carried


def test_run_runs_the_packaged_features_on_sim_into_the_report_folder() -> None:
    arguments = cli.run_arguments(["-q", "-k", "revoked"])
    assert arguments[0] == str(cli.features_folder())
    assert f"--config-file={os.devnull}" in arguments
    assert f"--solar-report={cli.DEFAULT_REPORT}" in arguments
    assert not any(a.startswith("--solar-env") for a in arguments)
    assert arguments[-3:] == ["-q", "-k", "revoked"]


def test_run_against_a_landscape_file_is_the_existing_backend() -> None:
    arguments = cli.run_arguments(["--landscape", "landscape.toml", "--report", "out", "-n", "4"])
    assert "--solar-env=existing" in arguments
    assert "--solar-landscape=landscape.toml" in arguments
    assert "--solar-report=out" in arguments
    assert arguments[-2:] == ["-n", "4"]


def test_run_with_feature_files_runs_only_those_the_package_carries() -> None:
    arguments = cli.run_arguments(["features/create_target.feature", "runbook.feature", "-n", "2"])
    folder = cli.features_folder()
    assert arguments[:2] == [str(folder / "create_target.feature"), str(folder / "runbook.feature")]
    assert str(folder) not in arguments
    assert arguments[-2:] == ["-n", "2"]


def test_run_with_a_feature_file_the_page_does_not_have_is_one_line_and_exit_4() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "solar_conformance.cli", "run", "create_targte.feature"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 4
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("solar-conformance run: no feature file 'create_targte.feature'; ")
    assert "create_target.feature" in line


@pytest.mark.parametrize("command", sorted(cli.COMMANDS))
def test_every_command_names_a_module_with_main(command: str) -> None:
    module = __import__(cli.COMMANDS[command], fromlist=["main"])
    assert callable(module.main)


def test_an_unknown_command_is_one_line_and_exit_4() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "solar_conformance.cli", "rnu"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 4
    assert done.stderr.strip().splitlines() == [
        "solar-conformance: unknown command 'rnu'; use one of: run, local, kind, report, provision"
    ]


BAD_ARGUMENTS = {
    "no command": ([], "solar-conformance: name a command: run, local, kind, report, provision"),
    "run without the landscape file": (["run", "--landscape"], "--landscape: expected one"),
    "report without its source": (["report"], "one of the arguments --records --cucumber"),
    "compare without reports": (["report", "compare"], "required: before, after"),
    "compare with one report": (["report", "compare", "a.yaml"], "required: after"),
    "provision without a command": (["provision"], "required: command"),
    "an unknown tool": (["provision", "tools", "build", "--only", "etcdd"], "'etcdd'"),
    "an unknown engine action": (["provision", "engine", "restart"], "invalid choice"),
    "a walk command without its action": (["local", "apiserver-url"], "needs unset or set"),
    "a namespace that is no name": (["local", "up", "--namespace=Test_1"], "'Test_1' is not a"),
    "a Target that is no name": (["kind", "up", "--target=cluster.1"], "'cluster.1' is not a"),
}


@pytest.mark.parametrize("case", sorted(BAD_ARGUMENTS))
def test_bad_arguments_are_one_line_and_exit_4(case: str, tmp_path: Path) -> None:
    """Before anything is built, started or written: no usage block, no exit code 2."""
    argv, said = BAD_ARGUMENTS[case]
    done = subprocess.run(
        [sys.executable, "-m", "solar_conformance.cli", *argv],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
        env={
            **os.environ,
            "SOLAR_CONFORMANCE_CACHE": str(tmp_path / "cache"),
            "DOCKER_HOST": f"unix://{tmp_path / 'no-engine.sock'}",
        },
    )
    assert done.returncode == 4, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert said in line
    assert not done.stdout and not list(tmp_path.iterdir()), "nothing printed or written"


def test_help_is_the_usage_and_exit_0() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "solar_conformance.cli", "--help"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0 and "solar-conformance run" in done.stdout
