"""The one lifecycle of everything the real backends start: `start()`, `stop()`, and `with`.

    class Front(Lifecycle):
        def start(self) -> Self:
            with rolled_back(self.name, self.stop):    # a failed start stops what it started
                self._teardown.add("remove the directory", remove)
                ...
            return self

        def stop(self) -> None:
            self._teardown.close()                     # newest first; every step runs

    with Front() as front:                             # start; stop at the end of the block,
        ...                                            # on a failure and on Ctrl-C too

`Teardown` is the stack of undo actions: last in, first out, each one run even when an earlier
one failed (or was interrupted by Ctrl-C), every failure named in one `TeardownError`. A failure
of the teardown never hides the failure that ended the start or the `with` block: it is noted on
it. Diagnostics are taken before anything stops: a start-up wait's error carries the log tail of
its process (solar_conformance/components/service.py), and a failed start or `with` block gets
the last lines of the component's `diagnostics()` noted on it, redacted, before `stop()` runs.
Nothing else in the harness implements `__enter__`/`__exit__` for a component.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from types import TracebackType
from typing import Any, Self, TypeVar

from solar_conformance.core.redact import REDACT

L = TypeVar("L", bound="Lifecycle")


class TeardownError(Exception):
    """One or more undo actions failed; each is named, with its error."""

    def __init__(self, owner: str, failures: list[tuple[str, BaseException]]) -> None:
        self.failures = failures
        lines = [f"- {what}: {type(error).__name__}: {error}" for what, error in failures]
        super().__init__(f"stopping {owner} failed {len(failures)} time(s):\n" + "\n".join(lines))


class Teardown:
    """Undo actions run newest first; each runs even when an earlier one failed."""

    def __init__(self, owner: str) -> None:
        self.owner = owner
        self._actions: list[tuple[str, Callable[[], Any]]] = []

    def add(self, what: str, action: Callable[[], Any]) -> None:
        self._actions.append((what, action))

    def enter(self, what: str, component: L) -> L:
        """Starts a component and stops it with the others (`what` names it in failures)."""
        component.start()
        self.add(f"stop {what}", component.stop)
        return component

    def __len__(self) -> int:
        return len(self._actions)

    def close(self) -> None:
        """Runs every action; raises TeardownError naming each one that failed. A Ctrl-C
        during an action lets the others run too, then propagates."""
        failures: list[tuple[str, BaseException]] = []
        interrupted: BaseException | None = None
        while self._actions:
            what, action = self._actions.pop()
            try:
                action()
            except Exception as error:
                failures.append((what, error))
            except BaseException as interruption:  # Ctrl-C: the rest still runs first
                interrupted = interrupted or interruption
        if interrupted is not None:
            if failures:
                interrupted.add_note(str(TeardownError(self.owner, failures)))
            raise interrupted
        if failures:
            raise TeardownError(self.owner, failures)


DIAGNOSTIC_LINES = 20  # of each log, noted on the failure of a start or a `with` block

Diagnostics = Callable[[], Mapping[str, str]]


def diagnosed(owner: str, diagnostics: Diagnostics) -> str | None:
    """What a component shows of itself (the last lines of each log, redacted), for a note on
    the failure that is about to stop it: taken while it still runs. None when it shows nothing."""
    try:
        found = diagnostics()
    except Exception as error:
        return f"diagnostics of {owner} unavailable: {type(error).__name__}: {error}"
    if not found:
        return None
    parts = [f"diagnostics of {owner}:"]
    for name, text in found.items():
        tail = "\n".join(text.splitlines()[-DIAGNOSTIC_LINES:])
        parts.append(f"--- last lines of {name} ---\n{REDACT(tail)}")
    return "\n".join(parts)


@contextmanager
def rolled_back(
    owner: str, stop: Callable[[], None], diagnostics: Diagnostics | None = None
) -> Iterator[None]:
    """A start: on any failure of the block (Ctrl-C too) the diagnostics are noted on it, then
    `stop` runs before the failure propagates; a failure of `stop` is noted on it too."""
    try:
        yield
    except BaseException as failure:
        note = diagnosed(owner, diagnostics) if diagnostics is not None else None
        if note is not None:
            failure.add_note(note)
        try:
            stop()
        except Exception as teardown_failure:
            failure.add_note(f"rolling back the failed start of {owner}: {teardown_failure}")
        raise


class Lifecycle(ABC):
    """A component the harness starts and stops. `start()` returns it once it is ready and, when
    it fails, leaves nothing of it behind (`rolled_back`); `stop()` takes down what the start
    brought up, newest first, every step even when one fails, and does nothing the second time.
    `with component:` starts it and stops it at the end of the block, whatever ended it; a block
    that failed gets the component's `diagnostics()` noted first, while it still runs."""

    @abstractmethod
    def start(self) -> Self: ...

    @abstractmethod
    def stop(self) -> None: ...

    def diagnostics(self) -> dict[str, str]:
        """Its logs by name, for a failure; none unless the component keeps any."""
        return {}

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """A teardown failure is raised, or, while another failure unwinds the block, noted on
        it: the failure that ended the block comes first."""
        if exc is not None and (note := diagnosed(type(self).__name__, self.diagnostics)):
            exc.add_note(note)
        try:
            self.stop()
        except Exception as teardown_failure:
            if exc is None:
                raise
            exc.add_note(f"stopping afterwards failed too: {teardown_failure}")
