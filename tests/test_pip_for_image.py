"""The image recipes' pip step: a cached folder made whole or not at all."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from solar_conformance.provision.images.common import ImageBuildError, pip_for_image


def _pip(returncode: int, calls: list[list[str]]) -> Any:
    def run(argv: list[str], **_: object) -> subprocess.CompletedProcess[str]:
        calls.append(argv)
        destination = Path(argv[argv.index("--dest") + 1])
        (destination / "a-1.0-py3-none-any.whl").write_text("wheel")
        return subprocess.CompletedProcess(argv, returncode, "", "ERROR: no such version\n")

    return run


def test_a_finished_download_is_renamed_into_place_and_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[list[str]] = []
    monkeypatch.setattr(subprocess, "run", _pip(0, calls))
    folder = tmp_path / "wheels-1"
    said: list[str] = []
    arguments = ("download", "--dest", "3.11", ("any",), ["a==1.0"], "download a", said.append)
    assert pip_for_image(folder, *arguments, "downloading a ...") == folder
    assert [p.name for p in folder.iterdir()] == ["a-1.0-py3-none-any.whl"]
    assert calls[0][-4:] == ["3.11", "--platform", "any", "a==1.0"]
    assert pip_for_image(folder, *arguments, "downloading a ...") == folder
    assert len(calls) == 1  # kept: pip is not asked again
    assert said == ["downloading a ..."]  # said only when pip runs
    assert [p.name for p in tmp_path.iterdir()] == ["wheels-1"]


def test_a_failed_download_leaves_nothing_and_says_pips_last_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(subprocess, "run", _pip(1, []))
    with pytest.raises(ImageBuildError) as failed:
        pip_for_image(
            tmp_path / "wheels-1",
            "download",
            "--dest",
            "3.11",
            ("any",),
            ["a"],
            "get a",
            print,
            "a",
        )
    assert str(failed.value) == "pip could not get a: ERROR: no such version"
    assert list(tmp_path.iterdir()) == []
