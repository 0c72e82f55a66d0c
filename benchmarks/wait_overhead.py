"""The harness's own overhead: how long a wait takes to return after the awaited state became
true, on the virtual clock (sim) and on the wall clock (local, kind).

    python -m benchmarks.wait_overhead
"""

from __future__ import annotations

import random
import statistics
import sys
import threading
import time
from dataclasses import dataclass
from datetime import datetime

from core.clock import RealClock, VirtualClock
from fixtures.plugin.waiting import Waiter

TIMEOUTS = {"reconcile": 60.0}


@dataclass(frozen=True)
class Overhead:
    clock: str
    samples: int
    median_ms: float
    p95_ms: float
    max_ms: float

    def row(self) -> str:
        return (
            f"| {self.clock} | {self.samples} | {self.median_ms:.0f} | {self.p95_ms:.0f} | "
            f"{self.max_ms:.0f} |"
        )


def _summary(clock: str, late_ms: list[float]) -> Overhead:
    ordered = sorted(late_ms)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return Overhead(clock, len(ordered), statistics.median(ordered), p95, ordered[-1])


def virtual(samples: int = 200, seed: int = 1) -> Overhead:
    """A loop makes the state true at a random virtual instant; the wait looks again whenever
    loops ran. The lateness is virtual time: what a sim scenario's clock shows in excess."""
    rng = random.Random(seed)  # noqa: S311 - delays, not secrets
    late: list[float] = []
    for _ in range(samples):
        clock = VirtualClock()
        became: list[datetime] = []

        def flip(clock: VirtualClock = clock, became: list[datetime] = became) -> float:
            if not became:
                became.append(clock.now())
            return 3600.0

        def probe(became: list[datetime] = became) -> tuple[bool, object]:
            return bool(became), None

        clock.start_loop("flip", flip, first_delay=rng.uniform(0.0, 5.0))
        Waiter(clock, TIMEOUTS).until("flipped", probe)
        late.append((clock.now() - became[0]).total_seconds() * 1000)
    return _summary("virtual (sim)", late)


def real(samples: int = 20, seed: int = 1) -> Overhead:
    """A thread makes the state true after a random delay and tells the clock, as a watch event
    does on the real backends (fixtures/real/change_feed.py); the wait looks again then."""
    rng = random.Random(seed)  # noqa: S311 - delays, not secrets
    late: list[float] = []
    clock = RealClock()
    for _ in range(samples):
        became: list[float] = []

        def flip(delay: float, became: list[float] = became) -> None:
            time.sleep(delay)
            became.append(time.perf_counter())
            clock.changed()

        def probe(became: list[float] = became) -> tuple[bool, object]:
            return bool(became), None

        thread = threading.Thread(target=flip, args=(rng.uniform(0.05, 0.6),))
        thread.start()
        Waiter(clock, TIMEOUTS).until("flipped", probe)
        late.append((time.perf_counter() - became[0]) * 1000)
        thread.join()
    return _summary("wall (local, kind)", late)


def main(argv: list[str]) -> int:
    print("| clock | waits | median ms late | p95 ms late | max ms late |")
    print("|---|---|---|---|---|")
    for result in (virtual(), real()):
        print(result.row(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
