"""Waits look again when something changed: on the virtual clock at the instant a loop changed
the state (not at the next half-second poll); on the real clock when a watch or a loop says so;
and a time-out still names the last state seen."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest
from kubernetes.client import ApiClient, Configuration

from solar_conformance.components.change_feed import ChangeFeed
from solar_conformance.components.kube import KubeClusterAPI
from solar_conformance.components.watch_hub import Listening, open_watches
from solar_conformance.core.clock import RealClock, VirtualClock
from solar_conformance.core.waiting import Waiter, WaitTimeout


def test_a_virtual_wait_returns_at_the_instant_a_loop_made_the_state_true() -> None:
    clock = VirtualClock()
    start = clock.now()
    flipped: list[float] = []

    def flip() -> float:
        flipped.append((clock.now() - start).total_seconds())
        return 3600.0

    clock.start_loop("flip", flip, first_delay=1.234)
    Waiter(clock, {"reconcile": 10}).until("flipped", lambda: (bool(flipped), flipped))
    assert flipped == [1.234]
    assert clock.now() - start == timedelta(seconds=1.234)


def test_a_state_only_time_changes_is_looked_at_every_interval() -> None:
    clock = VirtualClock()
    start = clock.now()
    looked: list[float] = []

    def probe() -> tuple[bool, float]:
        looked.append((clock.now() - start).total_seconds())
        return clock.now() - start >= timedelta(seconds=1.2), looked[-1]

    Waiter(clock, {"reconcile": 10}, interval=0.5).until("time passed", probe)
    assert looked == [0.0, 0.5, 1.0, 1.5]


def test_a_virtual_wait_that_times_out_stops_at_its_deadline_and_names_what_it_saw() -> None:
    clock = VirtualClock()
    start = clock.now()
    clock.start_loop("busy", lambda: 0.3)
    with pytest.raises(WaitTimeout, match="never: not within 2s; last seen: still no"):
        Waiter(clock, {"reconcile": 2}).until("never", lambda: (False, "still no"))
    assert clock.now() - start == timedelta(seconds=2)


def test_a_time_that_passes_is_looked_at_at_every_loop_and_at_the_moments_asked_for() -> None:
    clock = VirtualClock()
    start = clock.now()
    clock.start_loop("every 3 s", lambda: 3.0, first_delay=3.0)
    looked: list[float] = []

    def look() -> float | None:
        looked.append((clock.now() - start).total_seconds())
        return 4.5 - looked[-1] if looked[-1] < 4.5 else None  # one moment of its own

    Waiter(clock, {"reconcile": 10}, interval=0.5).during(10, look)
    assert looked == [0.0, 3.0, 4.5, 6.0, 9.0, 10.0]
    assert clock.now() - start == timedelta(seconds=10)


def test_a_real_wait_returns_when_told_of_a_change_long_before_its_interval() -> None:
    clock = RealClock()
    state: list[float] = []

    def change() -> None:
        time.sleep(0.2)
        state.append(time.perf_counter())
        clock.changed()

    thread = threading.Thread(target=change)
    thread.start()
    Waiter(clock, {"reconcile": 10}, interval=5.0).until("changed", lambda: (bool(state), None))
    late = time.perf_counter() - state[0]
    thread.join()
    assert late < 1.0, f"returned {late:.3f}s after the change"


class _WatchServer(BaseHTTPRequestHandler):
    """Answers a watch on Targets with two events, then holds the stream open until shut."""

    events = 2
    protocol_version = "HTTP/1.1"  # chunked, as kube-apiserver streams a watch
    opened: ClassVar[list[str]] = []  # the path of every watch request, in order

    def do_GET(self) -> None:
        assert "watch=true" in self.path
        self.opened.append(self.path.split("?")[0])
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for version in range(1, self.events + 1):
            event = {
                "type": "ADDED",
                "object": {"metadata": {"name": f"t{version}", "resourceVersion": str(version)}},
            }
            line = json.dumps(event).encode() + b"\n"
            self.wfile.write(f"{len(line):x}\r\n".encode() + line + b"\r\n")
            self.wfile.flush()
        time.sleep(30)  # a quiet watch: the client's stop must not wait for the server

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


@pytest.fixture
def watch_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _WatchServer)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_each_watch_event_tells_the_clock_and_closing_stops_the_watch_at_once(
    watch_server: str,
) -> None:
    configuration = Configuration(host=watch_server)
    api = KubeClusterAPI(ApiClient(configuration))
    clock = RealClock()
    feed = ChangeFeed(clock, [(api, ("Target",))])
    try:
        Waiter(clock, {"reconcile": 10}, interval=5.0).until(
            "two events", lambda: (clock.changes() >= 2, clock.changes())
        )
    finally:
        began = time.monotonic()
        feed.close()
    assert time.monotonic() - began < 2.0
    assert "2 events" in feed.describe()


def test_listeners_of_one_kind_on_one_server_share_one_watch_until_the_last_leaves(
    watch_server: str,
) -> None:
    _WatchServer.opened.clear()
    solar = KubeClusterAPI(ApiClient(Configuration(host=watch_server)))
    also_solar = KubeClusterAPI(ApiClient(Configuration(host=watch_server)), "another-manager")
    heard: dict[str, int] = {"first": 0, "second": 0}

    def hears(who: str) -> Callable[[str, dict[str, Any]], None]:
        def event(_type: str, _obj: dict[str, Any]) -> None:
            heard[who] += 1

        return event

    clock = RealClock()
    first = Listening([(solar, ("Target", "Target", "Secret"))], hears("first"))
    second = Listening([(also_solar, ("Target",))], hears("second"))
    try:
        Waiter(clock, {"reconcile": 10}, interval=0.05).until(
            "both kinds watched", lambda: (len(_WatchServer.opened) >= 2, _WatchServer.opened)
        )
        assert open_watches() == 2  # Target and Secret, however many listen
        second.close()
        assert open_watches() == 2  # the first still listens to Target
    finally:
        first.close()
        second.close()
    assert open_watches() == 0
    assert sorted(p.rsplit("/", 1)[-1] for p in _WatchServer.opened) == ["secrets", "targets"]
    assert heard["first"] >= 2
