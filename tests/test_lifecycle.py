"""The one lifecycle of the real backends' components: start, stop newest first, `with`."""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Self

import pytest

import solar_conformance
from solar_conformance.components.lifecycle import (
    Lifecycle,
    Teardown,
    TeardownError,
    rolled_back,
)
from solar_conformance.core.redact import REDACT

SECRET = "lifecycle-test-password-7f3a"


class _Component(Lifecycle):
    """Records what happens to it; its undo actions are given by the test."""

    def __init__(
        self, events: list[str], undo: Sequence[tuple[str, Callable[[], object]]] = ()
    ) -> None:
        self.events = events
        self.undo = undo
        self.fail_start = False

    def start(self) -> Self:
        self._teardown = Teardown("the component")
        with rolled_back("the component", self.stop, self.diagnostics):
            for what, action in self.undo:
                self._teardown.add(what, action)
            self.events.append("started")
            if self.fail_start:
                raise RuntimeError("start failed")
        return self

    def stop(self) -> None:
        self.events.append("stop")
        self._teardown.close()

    def diagnostics(self) -> dict[str, str]:
        self.events.append("diagnostics")
        return {"component.log": f"line 1\nlogged in with {SECRET}\nlast line"}


def _failing(name: str, events: list[str]) -> Callable[[], None]:
    def action() -> None:
        events.append(name)
        raise OSError(f"{name} went wrong")

    return action


def test_teardown_runs_newest_first_and_every_action_when_some_fail() -> None:
    ran: list[str] = []
    teardown = Teardown("the thing")
    teardown.add("first", lambda: ran.append("first"))
    teardown.add("second", _failing("second", ran))
    teardown.add("third", _failing("third", ran))
    with pytest.raises(TeardownError) as failure:
        teardown.close()
    assert ran == ["third", "second", "first"]
    assert "stopping the thing failed 2 time(s)" in str(failure.value)
    assert "- third: OSError: third went wrong" in str(failure.value)
    assert len(teardown) == 0


def test_ctrl_c_during_teardown_lets_the_rest_run_then_propagates() -> None:
    ran: list[str] = []

    def interrupted() -> None:
        ran.append("interrupted")
        raise KeyboardInterrupt

    teardown = Teardown("the thing")
    teardown.add("first", lambda: ran.append("first"))
    teardown.add("broken", _failing("broken", ran))
    teardown.add("interrupted", interrupted)
    with pytest.raises(KeyboardInterrupt) as failure:
        teardown.close()
    assert ran == ["interrupted", "broken", "first"]
    assert any("broken went wrong" in note for note in failure.value.__notes__)


def test_a_with_block_that_fails_notes_diagnostics_before_the_stop() -> None:
    REDACT.register(SECRET)
    events: list[str] = []
    undo = [("remove files", lambda: events.append("undone"))]
    with pytest.raises(ValueError, match="the block failed") as failure, _Component(events, undo):
        raise ValueError("the block failed")
    assert events == ["started", "diagnostics", "stop", "undone"]
    notes = "\n".join(failure.value.__notes__)
    assert "--- last lines of component.log ---" in notes and "last line" in notes
    assert SECRET not in notes


def test_a_failing_stop_after_a_failed_block_is_noted_not_raised() -> None:
    events: list[str] = []
    with (
        pytest.raises(ValueError, match="the block failed") as failure,
        _Component(events, [("remove files", _failing("remove files", events))]),
    ):
        raise ValueError("the block failed")
    assert any("remove files went wrong" in note for note in failure.value.__notes__)


def test_a_failing_stop_after_a_good_block_is_raised() -> None:
    events: list[str] = []
    with (
        pytest.raises(TeardownError, match="remove files went wrong"),
        _Component(events, [("remove files", _failing("remove files", events))]),
    ):
        pass


def test_a_failed_start_is_rolled_back_with_its_diagnostics_first() -> None:
    events: list[str] = []
    component = _Component(events, [("remove files", lambda: events.append("undone"))])
    component.fail_start = True
    with pytest.raises(RuntimeError, match="start failed") as failure, component:
        events.append("the block ran")
    assert events == ["started", "diagnostics", "stop", "undone"]
    assert any("diagnostics of the component" in note for note in failure.value.__notes__)


def test_ctrl_c_in_a_start_rolls_it_back() -> None:
    undone: list[str] = []
    with (
        pytest.raises(KeyboardInterrupt),
        rolled_back("the thing", lambda: undone.append("stopped")),
    ):
        raise KeyboardInterrupt
    assert undone == ["stopped"]


def test_teardown_enter_starts_and_stops_with_the_rest() -> None:
    events: list[str] = []
    teardown = Teardown("the landscape")
    teardown.add("first", lambda: events.append("first stopped"))
    component = teardown.enter("the component", _Component(events))
    assert component.events == ["started"]
    teardown.close()
    assert events == ["started", "stop", "first stopped"]


def test_only_the_lifecycle_implements_enter_and_exit() -> None:
    """One place for `with` semantics: every component derives from Lifecycle."""
    package = Path(solar_conformance.__file__).parent
    defining = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ClassDef):
                names = {f.name for f in node.body if isinstance(f, ast.FunctionDef)}
                if names & {"__enter__", "__exit__"}:
                    defining.append(f"{path.relative_to(package)}:{node.name}")
    assert defining == ["components/lifecycle.py:Lifecycle"]
