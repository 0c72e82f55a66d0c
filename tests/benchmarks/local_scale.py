"""N Targets in one namespace on a real landscape: wall time until every Target is Issued and
has a first `lastReportTime`, and the landscape's memory per Target.

    python -m tests.benchmarks.local_scale LANDSCAPE.toml [SIZES...]   # local: 1 10 50, kind: 1 10

LANDSCAPE.toml is a landscape file from `solar-conformance local up` or `solar-conformance kind
up` (docs/landscape-file.md). The Targets are created side by side
(`CREATE_WORKERS`). Each size gets a namespace of its own, set up as an operator does,
and is cleaned up before the next. A landscape has one target cluster where the page has one per
Target, so each Target's first-contact objects go to a target-cluster namespace of its own, and
each Target gets an agent Release of its own (a Profile per Target selects it by a label; the
Release's targetNamespace is that namespace): with the namespace's one agent Release, N agents
would all be installed as the same Deployment in one namespace of the one cluster.

Memory is sampled while the Targets settle: the resident memory of the process that holds the
landscape and all its children (on `local` the API servers, etcd, Flux, the registry and the
agents; on `kind` the reference SolAr and the token service), plus on `kind` the working set of
the landscape's containers (both nodes, with everything in their pods, and the registry), from
their memory cgroups: the peak above what it held before the Targets were created, per Target.
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from solar_conformance.core.api import ApiError, find_condition, new_object
from solar_conformance.core.landscape import Landscape
from solar_conformance.page.objects import FirstContact
from solar_conformance.page.setup import REGISTRY, set_up_registry
from tests.benchmarks.attach import attach

DEADLINE_SECONDS = 600.0
POLL_SECONDS = 0.5
TARGET_LABEL = "bench.solar-conformance/target"
# The Targets are created side by side, as many operators (or one `kubectl apply` of many
# files) would: one after another, the creates alone took 68 s for 50 on a loaded machine.
CREATE_WORKERS = 8


@dataclass(frozen=True)
class ScaleSample:
    targets: int
    wall_seconds: float  # first Target created to the last first report seen
    peak_bytes: int | None  # the landscape's processes and containers above their level before

    def row(self) -> str:
        memory = (
            f"{self.peak_bytes / 2**20 / self.targets:.1f} MiB"
            if self.peak_bytes is not None
            else "not measured"
        )
        return (
            f"| {self.targets} | {self.wall_seconds:.1f} | "
            f"{1000 * self.wall_seconds / self.targets:.0f} | {memory} |"
        )


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # the process ended meanwhile
        tree.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    return tree


def tree_rss(pid: int) -> int:
    """Resident bytes of `pid` and all its descendants (Linux /proc)."""
    tree, total, pending = _children(), 0, [pid]
    while pending:
        current = pending.pop()
        pending += tree.get(current, [])
        try:
            for line in Path(f"/proc/{current}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            continue
    return total


@dataclass(frozen=True)
class Holder:
    """What `up` wrote to DIR/state.json beside the landscape file."""

    pid: int
    containers: tuple[str, ...]  # Docker container ids outside the holder's process tree

    def resident_bytes(self) -> int | None:
        """The holder's process tree and its containers; None if a container's memory cannot
        be read."""
        total = tree_rss(self.pid)
        for container in self.containers:
            used = container_working_set(container)
            if used is None:
                return None
            total += used
        return total


def read_holder(landscape_file: Path) -> Holder | None:
    state = landscape_file.parent / "state.json"
    if not state.exists():
        return None
    document = json.loads(state.read_text())
    return Holder(int(document["pid"]), tuple(document.get("containers", ())))


# cgroup v1 (Docker's cgroupfs driver), then v2 with the cgroupfs and the systemd driver.
CGROUP_DIRS = (
    "/sys/fs/cgroup/memory/docker/{id}",
    "/sys/fs/cgroup/docker/{id}",
    "/sys/fs/cgroup/system.slice/docker-{id}.scope",
)


def container_working_set(container_id: str) -> int | None:
    """Bytes in use by a container's memory cgroup less its inactive file cache (what `docker
    stats` shows); None if its cgroup is not where Docker puts it."""
    for pattern in CGROUP_DIRS:
        directory = Path(pattern.format(id=container_id))
        v1 = directory / "memory.usage_in_bytes"
        usage_file = v1 if v1.exists() else directory / "memory.current"
        try:
            usage = int(usage_file.read_text())
            stat = (directory / "memory.stat").read_text().splitlines()
        except (OSError, ValueError):
            continue
        fields = dict(line.split(" ", 1) for line in stat if " " in line)
        inactive = fields.get("total_inactive_file", fields.get("inactive_file", "0"))
        return usage - int(inactive)
    return None


def set_up(landscape: Landscape, namespace: str, targets: list[str]) -> None:
    """The push credentials and the Registry of the namespace; a Release and Profile per Target."""
    solar = landscape.solar
    set_up_registry(landscape, solar, namespace)
    for target in targets:
        release = f"agent-{target}"
        solar.create(
            new_object(
                "Release",
                release,
                namespace,
                annotations={landscape.contract.agent_release_annotation: "true"},
                spec={
                    "componentVersionRef": {"name": "solar-agent"},
                    "uniqueName": f"{release}-{namespace}",
                    "targetNamespace": target_namespace(namespace, target),
                },
            )
        )
        solar.create(
            new_object(
                "Profile",
                release,
                namespace,
                spec={
                    "releaseRef": {"name": release},
                    "targetSelector": {"matchLabels": {TARGET_LABEL: target}},
                    "userdata": {},
                },
            )
        )
    landscape.reader_credentials(namespace)


def target_namespace(namespace: str, target: str) -> str:
    """Ends like the SolAr namespace, so that the clean-up by suffix removes it too."""
    return f"{target}-{namespace}"


def _settled(landscape: Landscape, namespace: str, targets: list[str]) -> int:
    """How many Targets are Issued and have a first report."""
    condition_type = landscape.contract.condition_type
    issued = {
        t["metadata"]["name"]
        for t in landscape.solar.list("Target", namespace)
        if (find_condition(t, condition_type) or {}).get("reason") == "Issued"
    }
    reported = {
        r["metadata"]["name"]
        for r in landscape.solar.list("TargetReport", namespace)
        if r.get("spec", {}).get("lastReportTime")
    }
    return len(issued & reported & set(targets))


def create_target(
    landscape: Landscape, namespace: str, target: str, user: str, password: str
) -> None:
    """The Target, and on the target cluster its namespace with the page's first-contact objects."""
    labels = {TARGET_LABEL: target}
    spec = {"renderRegistryRef": {"name": REGISTRY}, "userdata": {}}
    landscape.solar.create(new_object("Target", target, namespace, labels=labels, spec=spec))
    page = FirstContact(
        landscape.registry.host, namespace, target, user, password, landscape.registry.plain_http
    )
    there = target_namespace(namespace, target)
    landscape.target.create(new_object("Namespace", there))
    for obj in (page.regcred(), *page.helmrelease()):
        obj["metadata"]["namespace"] = there
        landscape.target.create(obj)


def measure(landscape: Landscape, size: int, suffix: str, holder: Holder | None) -> ScaleSample:
    namespace = f"scale-{suffix}"
    targets = [f"t{index}" for index in range(size)]
    set_up(landscape, namespace, targets)
    user, password = landscape.reader_credentials(namespace)
    memory = _PeakMemory(holder)
    began = time.monotonic()
    with ThreadPoolExecutor(CREATE_WORKERS, "create") as pool:
        # list(): a create that failed raises here
        list(pool.map(lambda t: create_target(landscape, namespace, t, user, password), targets))
    settled = 0
    while (settled := _settled(landscape, namespace, targets)) < size:
        memory.sample()
        if time.monotonic() - began > DEADLINE_SECONDS:
            raise TimeoutError(
                f"{settled} of {size} Targets reported within {DEADLINE_SECONDS:.0f}s"
            )
        time.sleep(POLL_SECONDS)
    wall = time.monotonic() - began
    memory.sample()
    return ScaleSample(size, wall, memory.above_before())


class _PeakMemory:
    """The landscape's peak memory above its level when made; None where it cannot be read."""

    def __init__(self, holder: Holder | None) -> None:
        self._holder = holder
        self._before = holder.resident_bytes() if holder is not None else None
        self._peak = self._before

    def sample(self) -> None:
        if self._holder is None or self._peak is None:
            return
        now = self._holder.resident_bytes()
        self._peak = None if now is None else max(self._peak, now)

    def above_before(self) -> int | None:
        if self._before is None or self._peak is None:
            return None
        return self._peak - self._before


DEFAULT_SIZES = {"local": [1, 10, 50], "kind": [1, 10]}


def default_sizes(landscape_file: Path) -> list[int]:
    """The issue's sizes for the backend that made the landscape (1 and 10 for any other)."""
    try:
        backend = tomllib.loads(landscape_file.read_text()).get("backend", "")
    except (OSError, tomllib.TOMLDecodeError):
        backend = ""
    return DEFAULT_SIZES.get(backend, [1, 10])


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.local_scale")
    parser.add_argument("landscape", type=Path, help="a landscape file (docs/landscape-file.md)")
    parser.add_argument(
        "sizes", type=int, nargs="*", help="default: local 1 10 50, kind 1 10 (the issue's sizes)"
    )
    args = parser.parse_args(argv)
    landscape = attach(args.landscape)
    if landscape is None:
        return 4
    sizes = args.sizes or default_sizes(args.landscape)
    holder = read_holder(args.landscape)
    run_id = secrets.token_hex(3)
    samples: list[ScaleSample] = []
    try:
        for size in sizes:
            suffix = f"{run_id}-{size}"
            try:
                samples.append(measure(landscape, size, suffix, holder))
                print(f"  {size} Targets: {samples[-1].wall_seconds:.1f} s", flush=True)
            finally:
                landscape.end_scenario(suffix)
                _wait_gone(landscape, suffix)
    finally:
        landscape.close()
    print("| Targets | wall s | wall ms per Target | peak memory per Target |")
    print("|---|---|---|---|")
    for sample in samples:
        print(sample.row())
    return 0


def _wait_gone(landscape: Landscape, suffix: str) -> None:
    """The next size starts once this one's agents and namespaces are gone (bounded)."""
    deadline = time.monotonic() + 120.0
    while time.monotonic() < deadline:
        try:
            left = [
                n
                for api in (landscape.solar, landscape.target)
                for n in api.list("Namespace")
                if n["metadata"]["name"].endswith(f"-{suffix}")
            ]
        except ApiError:
            return
        if not left:
            return
        time.sleep(1.0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
