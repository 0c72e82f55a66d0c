"""One temporary folder per run with workers, removed when the run ends, however it ends.

pytest-xdist gives a worker ten seconds to exit once the run is over or stopped with Ctrl-C, then
kills it; a worker still cleaning up a real scenario then never removes its scratch folder or the
Kubernetes client's certificate files. So the controlling process points every temporary file of
the run (its own, its workers', and their children's: `TMPDIR` is inherited) into one folder and
removes that folder after everything else has closed, when no worker is left to write into it.
SIGTERM and SIGHUP (`timeout`, a CI runner, a closed terminal) end such a run as Ctrl-C does, so
the folder goes then too.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass

import pytest

PREFIX = "solar-run-"


@dataclass(frozen=True)
class RunFolder:
    path: str
    tempdir_before: str | None
    tmpdir_env_before: str | None

    def restore(self) -> None:
        tempfile.tempdir = self.tempdir_before
        if self.tmpdir_env_before is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = self.tmpdir_env_before
        shutil.rmtree(self.path, ignore_errors=True)


RUN_FOLDER = pytest.StashKey[RunFolder]()


def runs_workers(config: pytest.Config) -> bool:
    is_worker = hasattr(config, "workerinput")
    return not is_worker and bool(getattr(config.option, "numprocesses", None))


def enter(config: pytest.Config) -> RunFolder:
    folder = RunFolder(
        path=tempfile.mkdtemp(prefix=PREFIX),
        tempdir_before=tempfile.tempdir,
        tmpdir_env_before=os.environ.get("TMPDIR"),
    )
    tempfile.tempdir = folder.path
    os.environ["TMPDIR"] = folder.path
    config.stash[RUN_FOLDER] = folder
    return folder


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    if runs_workers(config):
        from solar_conformance.components.processes import install_termination_handlers

        install_termination_handlers()
        enter(config)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """After the landscapes closed and pytest-xdist ended (or killed) every worker."""
    folder = config.stash.get(RUN_FOLDER, None)
    if folder is not None:
        del config.stash[RUN_FOLDER]
        folder.restore()
