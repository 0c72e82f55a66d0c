"""N Targets in one namespace on the sim, each with a target cluster of its own: how long until
every Target is Issued and has a first lastReportTime, and how much memory that takes.

    python -m tests.benchmarks.sim_scale 1 10 100 1000 10000
"""

from __future__ import annotations

import gc
import json
import resource
import subprocess
import sys
import time
from dataclasses import asdict, dataclass

from solar_conformance.backends.sim.landscape import SimLandscape
from solar_conformance.core.api import Obj, find_condition, new_object
from solar_conformance.core.contract import Contract
from solar_conformance.page.objects import FirstContact
from solar_conformance.page.setup import REGISTRY, set_up_namespace

NAMESPACE = "scale"
VIRTUAL_DEADLINE = 600.0  # virtual seconds; far more than a few report intervals


@dataclass(frozen=True)
class ScaleResult:
    targets: int
    wall_seconds: float
    cpu_seconds: float  # the process's own CPU time: steadier than wall time on a busy machine
    virtual_seconds: float
    peak_bytes: int  # the process's peak resident memory above what it held before the run
    loop_runs: int

    @property
    def ms_per_target(self) -> float:
        return 1000 * self.wall_seconds / self.targets

    @property
    def kib_per_target(self) -> float:
        return self.peak_bytes / 1024 / self.targets


def _settled(landscape: SimLandscape, names: list[str]) -> bool:
    contract = landscape.contract
    targets = {t["metadata"]["name"]: t for t in landscape.solar.list("Target", NAMESPACE)}
    reports = {r["metadata"]["name"]: r for r in landscape.solar.list("TargetReport", NAMESPACE)}
    for name in names:
        condition = find_condition(targets.get(name, {}), contract.condition_type) or {}
        if condition.get("reason") != "Issued":
            return False
        if not reports.get(name, {}).get("spec", {}).get("lastReportTime"):
            return False
    return True


def _first_contact(landscape: SimLandscape, target: str, user: str, password: str) -> list[Obj]:
    page = FirstContact(landscape.registry.host, NAMESPACE, target, user, password)
    return [page.regcred(), *page.helmrelease()]


def _peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux reports KiB


def run(targets: int) -> ScaleResult:
    """Set up the namespace, create the Targets, make first contact on each Target's cluster,
    and advance virtual time until all are Issued and have reported once."""
    gc.collect()
    before = _peak_rss()
    started = time.perf_counter()
    cpu_started = time.process_time()
    landscape = SimLandscape(Contract())
    try:
        begin = landscape.clock.now()
        set_up_namespace(landscape, landscape.solar, NAMESPACE)
        user, password = landscape.reader_credentials(NAMESPACE)
        names = [f"cluster-{i}" for i in range(targets)]
        # The page's first-contact objects, read once; each Target's differ only in the URL.
        template = [
            (obj, obj["kind"] == "OCIRepository")
            for obj in [*_first_contact(landscape, "cluster-0", user, password)]
        ]
        for name in names:
            landscape.solar.create(
                new_object(
                    "Target",
                    name,
                    NAMESPACE,
                    spec={"renderRegistryRef": {"name": REGISTRY}, "userdata": {}},
                )
            )
            cluster = landscape.add_target_cluster(name)
            cluster.create(new_object("Namespace", NAMESPACE))
            url = FirstContact(landscape.registry.host, NAMESPACE, name, "", "").bootstrap_url()
            for obj, is_source in template:
                copy = json.loads(json.dumps(obj))
                if is_source:
                    copy["spec"]["url"] = url
                cluster.create(copy)
        # One report interval at a time: checking every virtual second would itself cost O(N).
        step = float(landscape.contract.report_interval_seconds)
        while not _settled(landscape, names):
            if (landscape.clock.now() - begin).total_seconds() > VIRTUAL_DEADLINE:
                raise RuntimeError(f"{targets} Targets not settled within {VIRTUAL_DEADLINE}s")
            landscape.clock.advance(step)
        wall = time.perf_counter() - started
        cpu = time.process_time() - cpu_started
        virtual = (landscape.clock.now() - begin).total_seconds()
        peak = _peak_rss() - before
        runs = landscape.clock.runs
    finally:
        landscape.close()
    return ScaleResult(targets, wall, cpu, virtual, peak, runs)


def in_subprocess(targets: int) -> ScaleResult:
    """One size per process, so that the peak memory is this size's own."""
    out = subprocess.run(
        [sys.executable, "-m", "tests.benchmarks.sim_scale", "--one", str(targets)],
        check=True,
        capture_output=True,
        text=True,
    )
    return ScaleResult(**json.loads(out.stdout))


def main(argv: list[str]) -> int:
    if argv[:1] == ["--one"]:
        print(json.dumps(asdict(run(int(argv[1])))))
        return 0
    sizes = [int(a) for a in argv] or [1, 10, 100, 1000]
    print(
        f"{'targets':>8} {'wall s':>8} {'cpu s':>8} {'ms/target':>10} {'virtual s':>10} "
        f"{'KiB/target':>11}"
    )
    for size in sizes:
        result = in_subprocess(size)
        print(
            f"{result.targets:>8} {result.wall_seconds:>8.2f} {result.cpu_seconds:>8.2f} "
            f"{result.ms_per_target:>10.2f} "
            f"{result.virtual_seconds:>10.0f} {result.kib_per_target:>11.1f}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
