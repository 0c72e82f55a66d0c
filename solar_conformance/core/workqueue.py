"""Per-object work queues: a component runs for the objects an event concerns, or whose own
retry time has come, never for every object of the cluster.

A `KeyedLoop` is one loop of a clock. Each pass takes the keys that are due, hands them to
the component as one batch, and schedules each key again after the delay the component asked
for (None: forget the key until an event names it again). `wake()` makes every known key due,
which is what a changed setting (`controller.agent.apiserverURL`, a skewed clock) needs.
On the real clock events arrive on watch threads while a pass runs on the loop's own thread:
the queue's bookkeeping is under a lock, the component's work is not.
"""

from __future__ import annotations

import heapq
import itertools
import threading
from collections.abc import Callable, Hashable, Iterable
from datetime import datetime, timedelta
from typing import Generic, TypeVar

from solar_conformance.core.clock import Clock

K = TypeVar("K", bound=Hashable)
Work = Callable[[list[K]], Iterable[tuple[K, float | None]]]
IDLE_SECONDS = 3600.0  # nothing is due: sleep until an event wakes the loop


class KeyedLoop(Generic[K]):
    def __init__(self, clock: Clock, name: str, work: Work[K]) -> None:
        self.name = name
        self._clock = clock
        self._work = work
        self._lock = threading.Lock()
        self._due: dict[K, tuple[datetime, int]] = {}  # when, and which scheduling of the key
        self._heap: list[tuple[datetime, int, K]] = []
        self._seq = itertools.count()
        self._handle = clock.start_loop(name, self._run, IDLE_SECONDS)

    @property
    def keys(self) -> list[K]:
        with self._lock:
            return list(self._due)

    def add(self, key: K) -> None:
        """An event concerns `key`: run for it now."""
        with self._lock:
            self._schedule(key, 0.0)
        self._handle.wake()

    def wake(self) -> None:
        with self._lock:
            for key in list(self._due):
                self._schedule(key, 0.0)
        self._handle.wake()

    def stop(self) -> None:
        self._handle.stop()

    def _schedule(self, key: K, delay: float) -> None:
        at = self._clock.now() + timedelta(seconds=max(0.0, delay))
        seq = next(self._seq)
        self._due[key] = (at, seq)
        heapq.heappush(self._heap, (at, seq, key))

    def _run(self) -> float:
        now = self._clock.now()
        batch: list[K] = []
        taken: dict[K, tuple[datetime, int]] = {}
        with self._lock:
            while self._heap and self._heap[0][0] <= now:
                at, seq, key = heapq.heappop(self._heap)
                if self._due.get(key) == (at, seq):
                    taken[key] = (at, seq)
                    batch.append(key)
        for key, delay in self._work(batch):
            with self._lock:
                if self._due.get(key) != taken[key]:
                    continue  # an event during the work made it due again: that run stands
                if delay is None:
                    self._due.pop(key, None)
                else:
                    self._schedule(key, delay)
        with self._lock:
            while self._heap and self._due.get(self._heap[0][2]) != self._heap[0][:2]:
                heapq.heappop(self._heap)  # superseded or forgotten
            if not self._heap:
                return IDLE_SECONDS
            return max(0.0, (self._heap[0][0] - self._clock.now()).total_seconds())
