from __future__ import annotations

import gc
from datetime import UTC, datetime, timedelta

import pytest

from solar_conformance.core.clock import LoopsKeepWaking, SkewedClock, VirtualClock, parse_utc


def test_loops_run_when_due_and_reschedule_themselves() -> None:
    clock = VirtualClock()
    start = clock.now()
    runs: list[float] = []

    def body() -> float:
        runs.append((clock.now() - start).total_seconds())
        return 3.0

    clock.start_loop("l", body)
    clock.advance(10)
    assert runs == [0.0, 3.0, 6.0, 9.0]
    assert clock.now() - start == timedelta(seconds=10)


def test_wake_runs_a_loop_now_and_replaces_its_schedule() -> None:
    clock = VirtualClock()
    runs: list[float] = []
    start = clock.now()

    def body() -> float:
        runs.append((clock.now() - start).total_seconds())
        return 5.0

    loop = clock.start_loop("l", body)
    clock.advance(1)
    loop.wake()
    clock.advance(1)
    assert runs == [0.0, 1.0]
    clock.advance(5)
    assert runs == [0.0, 1.0, 6.0]


def test_stopped_loops_do_not_run() -> None:
    clock = VirtualClock()
    runs: list[int] = []

    def body() -> float:
        runs.append(1)
        return 1.0

    loop = clock.start_loop("l", body)
    clock.advance(0)
    loop.stop()
    clock.advance(5)
    assert runs == [1]


def test_loops_that_keep_waking_each_other_are_reported() -> None:
    clock = VirtualClock()
    holder: list[object] = []

    def body() -> float:
        holder[0].wake()  # type: ignore[attr-defined]
        return 1.0

    holder.append(clock.start_loop("ping", body))
    with pytest.raises(LoopsKeepWaking, match=r"keep waking each other .*: ping"):
        clock.advance(1)


def test_skewed_clock_is_offset_from_its_base() -> None:
    base = VirtualClock()
    skewed = SkewedClock(base)
    skewed.offset = timedelta(minutes=5)
    assert skewed.now() - base.now() == timedelta(minutes=5)


def test_the_collector_is_off_while_loops_run_and_back_after() -> None:
    clock = VirtualClock()
    seen: list[bool] = []

    def body() -> float:
        seen.append(gc.isenabled())
        return 1.0

    clock.start_loop("l", body)
    assert gc.isenabled()
    clock.advance(2)
    assert seen == [False, False, False]
    assert gc.isenabled()


@pytest.mark.parametrize(
    ("text", "seconds_after_midnight"),
    [
        ("2026-01-01T00:00:05Z", 5.0),
        ("2026-01-01T02:00:05+02:00", 5.0),
        ("2025-12-31T19:00:05-05:00", 5.0),
        ("2026-01-01T00:00:05-00:00", 5.0),
        ("2026-01-01T00:00:05.25Z", 5.25),
        ("2026-01-01T00:00:05.250000000Z", 5.25),
        ("2026-01-01T00:00:05.123456789+00:00", 5.123456),
        ("2026-01-01t00:00:05z", 5.0),
    ],
)
def test_every_rfc_3339_form_is_read_as_the_same_utc_time(
    text: str, seconds_after_midnight: float
) -> None:
    midnight = datetime(2026, 1, 1, tzinfo=UTC)
    assert parse_utc(text) == midnight + timedelta(seconds=seconds_after_midnight)
    assert parse_utc(text).tzinfo == UTC


@pytest.mark.parametrize(
    "text",
    [
        "",
        "2026-01-01",
        "2026-01-01 00:00:05Z",
        "2026-01-01T00:00:05",
        "2026-01-01T00:00Z",
        "2026-13-01T00:00:05Z",
        "2026-01-01T00:00:05+24:00",
        "2026-01-01T00:00:05+0200",
        "yesterday",
    ],
)
def test_anything_else_is_a_value_error_that_says_what_it_read(text: str) -> None:
    with pytest.raises(ValueError, match="is not an RFC 3339 date-time"):
        parse_utc(text)
