"""The harness's own overhead: how long a wait takes to return after the awaited state became
true, on the virtual clock (sim) and on the wall clock (local, kind).

    python -m tests.benchmarks.wait_overhead            # virtual clock, wall clock
    python -m tests.benchmarks.wait_overhead --local    # a real API server (starts the local landscape)
"""

from __future__ import annotations

import random
import secrets
import statistics
import sys
import threading
import time
from dataclasses import dataclass
from datetime import datetime

from solar_conformance.core.api import ApiError, new_object
from solar_conformance.core.clock import RealClock, VirtualClock
from solar_conformance.core.contract import Contract
from solar_conformance.plugin.waiting import Waiter

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
    rng = random.Random(seed)
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
    does on the real backends (solar_conformance/components/change_feed.py); the wait looks again then."""
    rng = random.Random(seed)
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


def on_local(samples: int = 20, seed: int = 1) -> Overhead:
    """On the `local` landscape: a thread creates a Secret on the SolAr API server after a
    random delay; the wait gets it. The wait learns of it by the landscape's watches
    (solar_conformance/components/change_feed.py); lateness counts from the create's answer."""
    from solar_conformance.backends.local.landscape import LocalLandscape
    from solar_conformance.components.change_feed import changes_of

    rng = random.Random(seed)
    late: list[float] = []
    landscape = LocalLandscape(Contract())
    namespace = f"wait-overhead-{secrets.token_hex(3)}"
    try:
        with changes_of(landscape):
            solar = landscape.solar
            solar.create(new_object("Namespace", namespace))
            waiter = Waiter(landscape.clock, TIMEOUTS)
            for index in range(samples):
                name = f"flip-{index}"
                created: list[float] = []

                def flip(delay: float, name: str = name, created: list[float] = created) -> None:
                    time.sleep(delay)
                    solar.create(new_object("Secret", name, namespace))
                    created.append(time.perf_counter())

                def probe(name: str = name) -> tuple[bool, object]:
                    try:
                        solar.get("Secret", name, namespace)
                    except ApiError as error:
                        return False, error.status
                    return True, None

                thread = threading.Thread(target=flip, args=(rng.uniform(0.05, 0.6),))
                thread.start()
                waiter.until("the Secret exists", probe)
                returned = time.perf_counter()
                thread.join()
                late.append(max(0.0, returned - created[0]) * 1000)
            solar.delete("Namespace", namespace)
    finally:
        landscape.close()
    return _summary("wall, local (a watch on kube-apiserver)", late)


def main(argv: list[str]) -> int:
    print("| clock | waits | median ms late | p95 ms late | max ms late |")
    print("|---|---|---|---|---|")
    runs = [on_local] if argv[:1] == ["--local"] else [virtual, real]
    for run in runs:
        print(run().row(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
