"""`solar-conformance local|kind|provision`: no Docker engine, a tool not built, a landscape file
or state that is missing or malformed end the command in one line with exit code 4, before
anything is started."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from solar_conformance.backends.existing import holder
from solar_conformance.backends.kind.__main__ import main as kind_main
from solar_conformance.backends.local.__main__ import main as local_main
from solar_conformance.core.landscape import MissingPrerequisite
from solar_conformance.provision.__main__ import main as provision_main
from solar_conformance.provision.toolchain.layout import CACHE_ENV_VAR
from solar_conformance.provision.toolchain.toolchain import Toolchain

Main = Callable[[list[str]], int]
WALK_COMMANDS = [
    ["namespace", "--namespace", "other"],
    ["apiserver-url", "unset"],
    ["token-requests", "refuse"],
    ["down"],
]


@pytest.fixture(params=[local_main, kind_main], ids=["local", "kind"])
def main(request: pytest.FixtureRequest) -> Main:
    command: Main = request.param
    return command


@pytest.fixture
def no_tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty tools cache: nothing is built."""
    cache = tmp_path / "empty-cache"
    cache.mkdir()
    monkeypatch.setenv(CACHE_ENV_VAR, str(cache))
    return cache


@pytest.fixture
def no_engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """DOCKER_HOST names a socket nobody listens on."""
    host = f"unix://{tmp_path / 'no-engine.sock'}"
    monkeypatch.setenv("DOCKER_HOST", host)
    return host


def _one_line_and_4(status: int, capsys: pytest.CaptureFixture[str], *words: str) -> str:
    err = capsys.readouterr().err
    assert status == 4, err
    assert err.count("\n") == 1, err
    for word in words:
        assert word in err
    return err


# --- a tool that is not built -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "argv"),
    [
        (local_main, ["up"]),
        (kind_main, ["up"]),
        (kind_main, ["down"]),
        (kind_main, ["clusters"]),
    ],
    ids=["local up", "kind up", "kind down", "kind clusters"],
)
def test_a_tool_not_built_is_one_line_and_exit_4(
    command: Main,
    argv: list[str],
    tmp_path: Path,
    no_tools: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    state_dir = tmp_path / "state"
    status = command([*argv, f"--state-dir={state_dir}"])
    _one_line_and_4(status, capsys, "not built")
    assert not state_dir.exists(), "nothing is created before the prerequisites are there"


def test_provision_images_without_tools_is_one_line_and_exit_4(
    no_tools: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _one_line_and_4(provision_main(["images"]), capsys, "not built")


def test_a_local_holder_without_tools_exits_4_and_up_says_its_line(
    tmp_path: Path, no_tools: Path
) -> None:
    """What the landscape itself finds missing reaches `up` as the holder's last line."""
    with pytest.raises(MissingPrerequisite, match="is not built") as refused:
        holder.up("solar_conformance.backends.local", tmp_path, [], timeout=120)
    assert "\n" not in str(refused.value)
    assert not (tmp_path / holder.STATE).exists()


def test_a_holder_that_started_nothing_leaves_no_state_folder(
    tmp_path: Path, no_tools: Path
) -> None:
    state_dir = tmp_path / "state"
    with pytest.raises(MissingPrerequisite, match="is not built"):
        holder.up("solar_conformance.backends.local", state_dir, [], timeout=120)
    assert not state_dir.exists(), "no folder holding only the log of a holder that stopped"


@pytest.mark.parametrize("where", ["a-file", "a-file/state"])
def test_a_state_folder_that_cannot_be_made_is_one_line(tmp_path: Path, where: str) -> None:
    (tmp_path / "a-file").write_text("")
    with pytest.raises(MissingPrerequisite, match=r"--state-dir .*: cannot write there") as refused:
        holder.up("solar_conformance.backends.local", tmp_path / where, [], timeout=120)
    assert "\n" not in str(refused.value)


# --- no Docker engine ---------------------------------------------------------------------------


@pytest.mark.parametrize("argv", [["up"], ["clusters"]])
def test_kind_without_an_engine_is_one_line_and_exit_4(
    argv: list[str],
    tmp_path: Path,
    no_engine: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(Toolchain, "require", lambda self, backend: None)  # tools are built
    status = kind_main([*argv, f"--state-dir={tmp_path / 'state'}"])
    _one_line_and_4(
        status,
        capsys,
        f"no Docker engine answers at {no_engine} (No such file or directory)",
        "provision engine start",
    )
    assert not (tmp_path / "state").exists()


def test_the_harness_image_without_an_engine_is_one_line_and_exit_4(
    no_engine: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The engine's line names where it looked, not a backend: the image is no kind's."""
    line = _one_line_and_4(provision_main(["harness-image"]), capsys, no_engine)
    assert "kind" not in line and "Error while fetching" not in line, line


def test_provision_images_without_an_engine_is_one_line_and_exit_4(
    no_engine: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(Toolchain, "require", lambda self, backend: None)
    _one_line_and_4(provision_main(["images"]), capsys, "Docker engine")


def test_a_kind_holder_without_an_engine_exits_4_in_one_line(
    tmp_path: Path, no_engine: str
) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "solar_conformance.backends.kind",
            "serve",
            f"--state-dir={tmp_path}",
        ],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "DOCKER_HOST": no_engine},
        timeout=120,
    )
    assert done.returncode == 4, done.stderr
    assert done.stderr.count("\n") == 1 and "Docker engine" in done.stderr
    assert not (tmp_path / holder.STATE).exists()


# --- the state and the landscape file a walk command reads ---------------------------------------


def _state(state_dir: Path, text: str) -> None:
    state_dir.mkdir(parents=True, exist_ok=True)
    (state_dir / holder.STATE).write_text(text)


@pytest.mark.parametrize("argv", [*WALK_COMMANDS, ["logs"]], ids=lambda argv: argv[0])
def test_a_malformed_state_file_is_one_line_and_exit_4(
    argv: list[str], tmp_path: Path, main: Main, capsys: pytest.CaptureFixture[str]
) -> None:
    if argv == ["logs"] and main is kind_main:
        pytest.skip("kind has no logs command (kubectl logs reads the agent's)")
    _state(tmp_path, "{not json")
    status = main([*argv, f"--state-dir={tmp_path}"])
    _one_line_and_4(status, capsys, holder.STATE, "is not JSON")


def test_a_state_file_without_pid_or_landscape_is_one_line_and_exit_4(
    tmp_path: Path, main: Main, capsys: pytest.CaptureFixture[str]
) -> None:
    _state(tmp_path, json.dumps({"namespace": "test"}))
    status = main(["apiserver-url", "set", f"--state-dir={tmp_path}"])
    _one_line_and_4(status, capsys, "is not the state `up` writes")


@pytest.mark.parametrize("argv", WALK_COMMANDS[:3], ids=lambda argv: argv[0])
def test_a_missing_landscape_file_is_one_line_and_exit_4(
    argv: list[str], tmp_path: Path, main: Main, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "landscape.toml"
    _state(tmp_path, json.dumps({"pid": os.getpid(), "landscape": str(missing)}))
    status = main([*argv, f"--state-dir={tmp_path}"])
    _one_line_and_4(status, capsys, str(missing))


@pytest.mark.parametrize("argv", WALK_COMMANDS[:3], ids=lambda argv: argv[0])
def test_a_malformed_landscape_file_is_one_line_and_exit_4(
    argv: list[str], tmp_path: Path, main: Main, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "landscape.toml"
    file.write_text('backend = "local"\n[solar\nkubeconfig = 3\n')
    _state(tmp_path, json.dumps({"pid": os.getpid(), "landscape": str(file)}))
    status = main([*argv, f"--state-dir={tmp_path}"])
    _one_line_and_4(status, capsys, "landscape.toml")


def test_the_console_command_exits_4_in_one_line(tmp_path: Path, no_tools: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "solar_conformance.cli",
            "local",
            "up",
            f"--state-dir={tmp_path / 'state'}",
        ],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, CACHE_ENV_VAR: str(no_tools)},
        timeout=120,
    )
    assert done.returncode == 4, done.stderr
    assert done.stderr.count("\n") == 1 and "make tools" in done.stderr
