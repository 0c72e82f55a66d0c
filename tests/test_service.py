"""The one lifecycle of a real component: start, readiness, roll-back of a half-start, stop."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

from solar_conformance.components.lifecycle import TeardownError
from solar_conformance.components.service import (
    ComponentExited,
    ReadinessTimeout,
    Service,
)

IGNORES_SIGTERM = (
    "import signal, time\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "print('up', flush=True)\n"
    "while True: time.sleep(1)\n"
)


def _alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def _python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_stop_kills_a_process_that_ignores_sigterm(tmp_path: Path) -> None:
    service = Service("stubborn", startup_timeout=10, stop_grace=0.5)
    with service.starting():
        process = service.launch("stubborn", _python(IGNORES_SIGTERM), tmp_path / "log")
        service.wait_ready(
            "it printed up", lambda: ("up" in process.log_tail().splitlines(), "log"), process
        )
    assert os.getpgid(process.pid) == process.pid != os.getpgrp()
    service.stop()
    assert process.exit_code() == -signal.SIGKILL
    assert not _alive(process.pid)


def test_a_start_that_never_gets_ready_is_rolled_back(tmp_path: Path) -> None:
    undone: list[str] = []
    service = Service("never-ready", startup_timeout=0.6, stop_grace=1)

    def start() -> None:
        with service.starting():
            service.defer("note the roll-back", lambda: undone.append("deferred"))
            sleeper = service.launch(
                "sleeper", _python("import time; time.sleep(60)"), tmp_path / "log"
            )
            service.wait_ready("a file that never comes", lambda: (False, "no file yet"), sleeper)

    with pytest.raises(ReadinessTimeout) as failure:
        start()
    message = str(failure.value)
    assert "never-ready: a file that never comes: not within" in message
    assert "last seen: no file yet" in message
    assert "--- last lines of" in message
    assert undone == ["deferred"]
    assert not _alive(service.processes["sleeper"].pid)
    assert not service.started


def test_a_process_that_exits_while_awaited_fails_at_once(tmp_path: Path) -> None:
    service = Service("crashing", startup_timeout=30, stop_grace=1)
    crasher = _python("print('bad flag'); raise SystemExit(3)")

    def start() -> None:
        with service.starting():
            process = service.launch("crasher", crasher, tmp_path / "log")
            service.wait_ready("never", lambda: (False, "waiting"), process)

    with pytest.raises(ComponentExited, match="exited with code 3") as failure:
        start()
    assert "bad flag" in str(failure.value)
    assert service.processes["crasher"].exit_code() == 3


def test_every_teardown_failure_is_reported_and_every_action_runs(tmp_path: Path) -> None:
    ran: list[str] = []

    def fail(what: str) -> None:
        ran.append(what)
        raise OSError(f"{what} went wrong")

    service = Service("messy", startup_timeout=5, stop_grace=1)
    with service.starting():
        service.defer("first", lambda: ran.append("first"))
        service.defer("second", lambda: fail("second"))
        service.defer("third", lambda: fail("third"))
    with pytest.raises(TeardownError) as failure:
        service.stop()
    assert ran == ["third", "second", "first"]  # newest first, none skipped
    assert "- third: OSError: third went wrong" in str(failure.value)
    assert "- second: OSError: second went wrong" in str(failure.value)


def test_a_failed_roll_back_is_noted_on_the_start_failure(tmp_path: Path) -> None:
    service = Service("doubly-broken", startup_timeout=5, stop_grace=1)

    def broken_undo() -> None:
        raise OSError("cannot remove")

    def start() -> None:
        with service.starting():
            service.defer("remove the directory", broken_undo)
            raise RuntimeError("start failed")

    with pytest.raises(RuntimeError, match="start failed") as failure:
        start()
    assert any("cannot remove" in note for note in failure.value.__notes__)
