"""pytest run as a user runs it, in a folder of its own that stands for a checkout's root: copies
of the feature files and the inputs a test writes (the plugin comes from the installed package,
as it does for every user). What the run leaves in
that folder and in its temporary folder is compared with what was there before."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
USAGE_ERROR = 4


@dataclass(frozen=True)
class Run:
    returncode: int
    stdout: str
    stderr: str
    left_behind: list[str]  # files and folders the run added to its folder or temporary folder

    @property
    def error_lines(self) -> list[str]:
        return [line for line in self.stderr.splitlines() if line.strip()]


def project_folder(where: Path) -> Path:
    """`where` set up as a checkout's root: features/ (feature files only)."""
    (where / "features").mkdir(exist_ok=True)
    for feature in sorted((ROOT / "features").glob("*.feature")):
        shutil.copy(feature, where / "features" / feature.name)
    shutil.copy(ROOT / "features" / "traceability.yaml", where / "features" / "traceability.yaml")
    return where


def run_pytest(where: Path, *args: str, config: Path | None = None, timeout: float = 180) -> Run:
    """`python -m pytest ARGS` in `where` (set up by project_folder), with the project's ini."""
    scratch = where / ".tmp"
    scratch.mkdir(exist_ok=True)
    before = _contents(where)
    environment = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PYTEST_", "SOLAR_", "COV_"))
    }
    environment.update(PYTHONDONTWRITEBYTECODE="1", TMPDIR=str(scratch))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-c",
            str(config or ROOT / "pyproject.toml"),
            "--rootdir",
            str(where),
            "-p",
            "no:randomly",
            *args,
        ],
        cwd=where,
        env=environment,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    left = sorted(set(_contents(where)) - set(before))
    return Run(done.returncode, done.stdout, done.stderr, left)


def _contents(folder: Path) -> list[str]:
    return [str(path.relative_to(folder)) for path in folder.rglob("*")]


def one_line_exit_4(run: Run, *words: str) -> str:
    """The run refused its input: exit code 4, one line on stderr holding `words`, no scenario
    run, nothing written and nothing left behind."""
    everything = run.stdout + run.stderr
    assert run.returncode == USAGE_ERROR, everything
    assert len(run.error_lines) == 1, run.error_lines
    line = run.error_lines[0]
    assert line.startswith("ERROR: "), line
    assert "Traceback" not in everything, everything
    assert " passed" not in run.stdout and " failed" not in run.stdout, run.stdout
    assert not run.left_behind, f"the run left {run.left_behind}"
    for word in words:
        assert word in line, line
    return line
