"""A run with workers leaves no temporary file behind, also when it is stopped with Ctrl-C or
SIGTERM while a worker is still cleaning up (pytest-xdist kills such a worker after ten seconds)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.test_verdict import ctrl_c_as_in_a_terminal

ROOT = Path(__file__).resolve().parent.parent

SLOW_CLEANUP = """
import os
import tempfile
import threading
from pathlib import Path


def test_makes_temporary_files():
    handle, path = tempfile.mkstemp(prefix="worker-file-")
    os.close(handle)
    folder = tempfile.mkdtemp(prefix="worker-folder-")
    Path(os.environ["MARKER"]).write_text(path + "\\n" + folder)
    if os.environ.get("HANG") == "1":
        threading.Event().wait(120)  # a cleanup that outlives xdist's patience
"""


def _start(where: Path, hang: bool) -> tuple[subprocess.Popen[str], Path, Path]:
    (where / "test_slow_cleanup.py").write_text(SLOW_CLEANUP)
    temporary = where / "tmp"
    temporary.mkdir()
    marker = where / "marker"
    environment = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "SOLAR_"))},
        "TMPDIR": str(temporary),
        "MARKER": str(marker),
        "HANG": "1" if hang else "0",
    }
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pytest",
            "-c",
            str(ROOT / "pyproject.toml"),
            "--rootdir",
            str(where),
            "-p",
            "no:randomly",
            "-n",
            "1",
            "test_slow_cleanup.py",
        ],
        cwd=where,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        preexec_fn=ctrl_c_as_in_a_terminal,
    )
    return process, temporary, marker


def _made(marker: Path, process: subprocess.Popen[str]) -> list[Path]:
    deadline = time.monotonic() + 120
    while not marker.exists() or len(marker.read_text().splitlines()) < 2:
        assert process.poll() is None, "the run ended before its worker made its files"
        assert time.monotonic() < deadline, "the worker never made its files"
        time.sleep(0.1)
    return [Path(line) for line in marker.read_text().splitlines()]


def test_a_finished_run_with_workers_leaves_no_temporary_file(tmp_path: Path) -> None:
    process, temporary, marker = _start(tmp_path, hang=False)
    output, _ = process.communicate(timeout=180)
    assert process.returncode == 0, output[-2000:]
    made = _made(marker, process)
    assert all(str(path).startswith(str(temporary)) for path in made), made
    assert list(temporary.iterdir()) == []


def test_a_run_stopped_with_ctrl_c_while_a_worker_cleans_up_leaves_no_temporary_file(
    tmp_path: Path,
) -> None:
    process, temporary, marker = _start(tmp_path, hang=True)
    made = _made(marker, process)
    os.killpg(process.pid, signal.SIGINT)  # Ctrl-C reaches the whole foreground group
    output, _ = process.communicate(timeout=120)
    assert process.returncode != 0, output[-2000:]
    assert not any(path.exists() for path in made), made
    assert list(temporary.iterdir()) == [], list(temporary.iterdir())


@pytest.mark.parametrize(
    "whom",
    ["the whole group", "the controlling process alone"],
)
def test_a_run_stopped_with_sigterm_leaves_no_temporary_file(tmp_path: Path, whom: str) -> None:
    """`timeout`, a CI runner or `kill` ends a run with SIGTERM, to its group or to pytest alone."""
    process, temporary, marker = _start(tmp_path, hang=True)
    made = _made(marker, process)
    if whom == "the whole group":
        os.killpg(process.pid, signal.SIGTERM)
    else:
        os.kill(process.pid, signal.SIGTERM)
    output, _ = process.communicate(timeout=120)
    assert process.returncode != 0, output[-2000:]
    assert not any(path.exists() for path in made), made
    assert list(temporary.iterdir()) == [], list(temporary.iterdir())
