"""Time for every component: a virtual clock that jumps (sim) or the wall clock (real backends).

Components never sleep. They are loops: a function that does one pass and returns how many seconds
until it wants to run again. The clock runs the loops: the virtual clock when time is advanced,
the real clock on background threads.
"""

from __future__ import annotations

import gc
import heapq
import itertools
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta, timezone
from typing import Protocol

LoopBody = Callable[[], float]


class LoopHandle(Protocol):
    name: str

    def wake(self) -> None:
        """Run the loop as soon as possible (a watch event arrived)."""

    def stop(self) -> None: ...


class Clock(Protocol):
    def now(self) -> datetime: ...

    def pause(self, seconds: float) -> None:
        """Let `seconds` pass (virtual: advance; real: block)."""

    def changes(self) -> int:
        """How many changes an awaited state may depend on happened so far (a counter)."""

    def until_change(self, seconds: float, since: int) -> None:
        """Return once a change after `changes() == since` happened, at the latest after
        `seconds`: what a wait does between two looks at its state. Virtual: time runs to the
        next instant a loop is due and the loops run. Real: a watch event or a loop's pass."""

    def start_loop(self, name: str, body: LoopBody, first_delay: float = 0.0) -> LoopHandle: ...

    def close(self) -> None: ...


def utc(dt: datetime) -> str:
    """RFC 3339 with second precision, as Kubernetes serialises metav1.Time."""
    global _last_utc
    last = _last_utc  # one read: another thread may replace it meanwhile
    if last[0] == dt:  # a virtual clock stands still while thousands of objects are written
        return last[1]
    text = dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    _last_utc = (dt, text)
    return text


_last_utc: tuple[datetime | None, str] = (None, "")


def parse_duration(text: str) -> timedelta:
    """A Go duration as Flux writes intervals: `5m0s`, `10m`, `1h30m`."""
    total, number = 0.0, ""
    units = {"h": 3600, "m": 60, "s": 1}
    for char in text:
        if char.isdigit() or char == ".":
            number += char
        elif char in units and number:
            total += float(number) * units[char]
            number = ""
        else:
            raise ValueError(f"invalid duration {text!r}")
    return timedelta(seconds=total)


# RFC 3339's date-time (section 5.6): `Z` or a numeric offset, seconds with or without a
# fraction of any length; `T` and `Z` in either case, as the RFC allows. Kubernetes reads
# metav1.Time with Go's RFC 3339 layout, which takes each of these (fractions it takes on parsing
# even though it writes none); metav1.MicroTime writes six digits, Go's RFC3339Nano up to nine.
_RFC3339 = re.compile(
    r"(?P<date>\d{4}-\d\d-\d\d)[Tt](?P<time>\d\d:\d\d:\d\d)(?:\.(?P<fraction>\d+))?"
    r"(?P<zone>[Zz]|(?P<sign>[+-])(?P<hours>\d\d):(?P<minutes>\d\d))"
)


def parse_utc(text: str) -> datetime:
    """An RFC 3339 date-time in any of its forms, as a UTC datetime (fractions beyond the
    microsecond cut off). ValueError, saying why, for anything else."""
    found = _RFC3339.fullmatch(text) if isinstance(text, str) else None
    if found is None:
        raise ValueError(
            f"{text!r} is not an RFC 3339 date-time (2026-01-01T12:00:00Z, "
            "2026-01-01T14:00:00.5+02:00, ...)"
        )
    fraction = (found["fraction"] or "")[:6].ljust(6, "0")
    try:
        moment = datetime.strptime(
            f"{found['date']}T{found['time']}.{fraction}", "%Y-%m-%dT%H:%M:%S.%f"
        )
        if found["sign"] is None:
            return moment.replace(tzinfo=UTC)
        offset = timedelta(hours=int(found["hours"]), minutes=int(found["minutes"]))
        if offset >= timedelta(hours=24) or int(found["minutes"]) > 59:
            raise ValueError(f"the offset {found['zone']} is out of range")
        zone = timezone(offset if found["sign"] == "+" else -offset)
        return moment.replace(tzinfo=zone).astimezone(UTC)
    except ValueError as error:
        raise ValueError(f"{text!r} is not an RFC 3339 date-time: {error}") from None


class LoopsKeepWaking(AssertionError):
    """Components woke each other again and again without time passing (a component that writes
    on every pass and reacts to its own writes): a verdict on them, as a real cluster would show
    it by a hot loop, not an error of the clock."""


# A schedule: when, a tie-breaker, the loop, and the loop's generation at scheduling time. A plain
# tuple, so that the heap compares in C (a sim of thousands of Targets schedules millions).
_Due = tuple[datetime, int, "_VirtualLoop", int]


class _VirtualLoop:
    def __init__(self, clock: VirtualClock, name: str, body: LoopBody) -> None:
        self.name = name
        self.body = body
        self.clock = clock
        self.stopped = False
        self.generation = 0

    def wake(self) -> None:
        if not self.stopped:
            self.clock._schedule(self, 0.0)

    def stop(self) -> None:
        self.stopped = True

    def current(self, generation: int) -> bool:
        """Only a loop's latest schedule counts; a wake or reschedule supersedes older ones."""
        return not self.stopped and generation == self.generation


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Python's cyclic garbage collector off while the virtual clock runs loops.

    A busy sim allocates millions of short-lived dicts (object copies) and keeps many of them
    (stored objects): the collector rescans the survivors again and again, a quarter and more
    of the CPU time at 1 000 Targets and growing with the heap. The sim's objects hold next to
    no reference cycles (3 000 Targets with the collector off left 506 objects to collect), and
    what cycles there are go at the next collection after the loops ran.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


class VirtualClock:
    """Deterministic time: nothing happens until `advance` (or a wait's `pause`) moves it."""

    # Livelock is one loop woken again and again without time moving; many loops that each run
    # a few times at one instant (thousands of Targets settling together) are progress.
    MAX_RUNS_PER_LOOP_PER_INSTANT = 1_000

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 1, 1, tzinfo=UTC)
        self._queue: list[_Due] = []
        self._seq = itertools.count()
        self._running = False
        self.runs = 0  # loop passes so far, for benchmarks

    def now(self) -> datetime:
        return self._now

    def start_loop(self, name: str, body: LoopBody, first_delay: float = 0.0) -> LoopHandle:
        loop = _VirtualLoop(self, name, body)
        self._schedule(loop, first_delay)
        return loop

    def _schedule(self, loop: _VirtualLoop, delay: float) -> None:
        loop.generation += 1
        due = self._now + timedelta(seconds=delay) if delay > 0 else self._now
        heapq.heappush(self._queue, (due, next(self._seq), loop, loop.generation))

    def run_due(self) -> None:
        """Run every loop that is due now, including those woken while running."""
        if self._running:
            return
        self._running = True
        runs: dict[_VirtualLoop, int] = {}
        try:
            with fewer_collections():
                self._run_due(runs)
        finally:
            self._running = False

    def _run_due(self, runs: dict[_VirtualLoop, int]) -> None:
        queue = self._queue
        while queue and queue[0][0] <= self._now:
            _, _, loop, generation = heapq.heappop(queue)
            if not loop.current(generation):
                continue
            runs[loop] = runs.get(loop, 0) + 1
            if runs[loop] > self.MAX_RUNS_PER_LOOP_PER_INSTANT:
                busy = sorted({other.name for other, n in runs.items() if n > 100} | {loop.name})
                raise LoopsKeepWaking(
                    f"loops keep waking each other without time passing (a hot loop): "
                    f"{', '.join(busy)}"
                )
            self.runs += 1
            delay = loop.body()
            if loop.current(generation):  # not woken or stopped while it ran
                self._schedule(loop, delay)

    def advance(self, seconds: float) -> None:
        """Move time forward, running each loop at the moment it is due."""
        end = self._now + timedelta(seconds=seconds)
        self._run_due_until(end, lambda: True)
        self._now = end
        self.run_due()

    def pause(self, seconds: float) -> None:
        self.advance(seconds)

    def changes(self) -> int:
        return self.runs

    def until_change(self, seconds: float, since: int) -> None:
        """Run time forward to the next instant at which loops run, and run them; at most
        `seconds` (a state that only time changes, without any loop, is looked at that often).
        Nothing changes between two loop passes, so a wait sees its state the instant it
        became true."""
        end = self._now + timedelta(seconds=seconds)
        self._run_due_until(end, lambda: self.runs == since)
        if self.runs == since:
            self._now = end
            self.run_due()

    def _run_due_until(self, end: datetime, keep_going: Callable[[], bool]) -> None:
        """Run the loops due now, then jump from one due instant to the next up to `end`,
        while `keep_going` holds."""
        self.run_due()
        while keep_going() and self._queue:
            at, _, loop, generation = self._queue[0]
            if not loop.current(generation):
                heapq.heappop(self._queue)
                continue
            if at > end:
                break
            self._now = max(self._now, at)
            self.run_due()

    def close(self) -> None:
        for _, _, loop, _ in self._queue:
            loop.stop()
        self._queue.clear()


class _ThreadLoop:
    def __init__(
        self, name: str, body: LoopBody, first_delay: float, ran: Callable[[], None]
    ) -> None:
        self.name = name
        self._ran = ran
        self._body = body
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._first_delay = first_delay
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        delay = self._first_delay
        while not self._stop.is_set():
            self._wake.wait(delay)
            self._wake.clear()
            if self._stop.is_set():
                return
            try:
                delay = self._body()
            except BaseException as error:  # a loop must not die silently
                self.error = error
                return
            finally:
                self._ran()

    def wake(self) -> None:
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()

    def join(self, timeout: float) -> bool:
        self._thread.join(timeout)
        return not self._thread.is_alive()


class RealClock:
    """Wall-clock time; loops run on daemon threads and are stopped and joined on close."""

    def __init__(self, offset: timedelta = timedelta()) -> None:
        self.offset = offset
        self._loops: list[_ThreadLoop] = []
        self._changes = 0
        self._changed = threading.Condition()

    def now(self) -> datetime:
        return datetime.now(UTC) + self.offset

    def pause(self, seconds: float) -> None:
        threading.Event().wait(seconds)

    def changed(self) -> None:
        """Something an awaited state may depend on changed (a watch event, a loop's pass):
        waits look again now."""
        with self._changed:
            self._changes += 1
            self._changed.notify_all()

    def changes(self) -> int:
        return self._changes

    def until_change(self, seconds: float, since: int) -> None:
        with self._changed:
            self._changed.wait_for(lambda: self._changes != since, timeout=max(0.0, seconds))

    def start_loop(self, name: str, body: LoopBody, first_delay: float = 0.0) -> LoopHandle:
        loop = _ThreadLoop(name, body, first_delay, self.changed)
        self._loops.append(loop)
        return loop

    def loop_errors(self) -> list[tuple[str, BaseException]]:
        return [(loop.name, loop.error) for loop in self._loops if loop.error is not None]

    def close(self) -> None:
        for loop in self._loops:
            loop.stop()
        stuck = [loop.name for loop in self._loops if not loop.join(10.0)]
        self._loops.clear()
        if stuck:
            raise RuntimeError(f"loops did not stop within 10 s: {', '.join(stuck)}")


class SkewedClock:
    """Another component's view of time, off by a settable offset (a skewed or slow clock)."""

    def __init__(self, base: Clock) -> None:
        self.base = base
        self.offset = timedelta()

    def now(self) -> datetime:
        return self.base.now() + self.offset

    def pause(self, seconds: float) -> None:
        self.base.pause(seconds)

    def changes(self) -> int:
        return self.base.changes()

    def until_change(self, seconds: float, since: int) -> None:
        self.base.until_change(seconds, since)

    def start_loop(self, name: str, body: LoopBody, first_delay: float = 0.0) -> LoopHandle:
        return self.base.start_loop(name, body, first_delay)

    def close(self) -> None:
        """The base clock is closed by its owner."""
