"""N Targets in one namespace on a real landscape: wall time until every Target is Issued and
has a first `lastReportTime`, and the landscape's memory per Target.

    python -m benchmarks.local_scale LANDSCAPE.toml 1 10 50

LANDSCAPE.toml is a landscape file from `python -m fixtures.local up` (docs/landscape-file.md).
The Targets are created side by side (`CREATE_WORKERS`).
Each size gets a namespace of its own, set up as an operator does, and is cleaned up before the
next. A landscape has one target cluster where the page has one per Target, so each Target's
first-contact objects go to a target-cluster namespace of its own, and each Target gets an
agent Release of its own (a Profile per Target selects it by a label; the Release's
targetNamespace is that namespace): with the namespace's one agent Release, N agents would all
be installed as the same Deployment in one namespace of the one cluster.

Memory is the resident memory of the process that holds the landscape and all its children
(API servers, etcd, Flux, the registry, the agents), sampled while the Targets settle: the
peak above what it held before the Targets were created, per Target.
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from benchmarks.attach import attach
from core.api import ApiError, find_condition, new_object
from core.landscape import Landscape
from fixtures.page.objects import FirstContact
from fixtures.page.setup import REGISTRY, set_up_registry

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
    peak_bytes: int | None  # the landscape's process tree above its level before

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


def holder_pid(landscape_file: Path) -> int | None:
    """The holder's pid from the state file `up` writes beside the landscape file."""
    state = landscape_file.parent / "state.json"
    if not state.exists():
        return None
    return int(json.loads(state.read_text())["pid"])


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


def measure(landscape: Landscape, size: int, suffix: str, pid: int | None) -> ScaleSample:
    namespace = f"scale-{suffix}"
    targets = [f"t{index}" for index in range(size)]
    set_up(landscape, namespace, targets)
    user, password = landscape.reader_credentials(namespace)
    before = tree_rss(pid) if pid is not None else 0
    peak = before
    began = time.monotonic()
    with ThreadPoolExecutor(CREATE_WORKERS, "create") as pool:
        # list(): a create that failed raises here
        list(pool.map(lambda t: create_target(landscape, namespace, t, user, password), targets))
    settled = 0
    while (settled := _settled(landscape, namespace, targets)) < size:
        if pid is not None:
            peak = max(peak, tree_rss(pid))
        if time.monotonic() - began > DEADLINE_SECONDS:
            raise TimeoutError(
                f"{settled} of {size} Targets reported within {DEADLINE_SECONDS:.0f}s"
            )
        time.sleep(POLL_SECONDS)
    wall = time.monotonic() - began
    if pid is not None:
        peak = max(peak, tree_rss(pid))
    return ScaleSample(size, wall, peak - before if pid is not None else None)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.local_scale")
    parser.add_argument("landscape", type=Path, help="a landscape file (docs/landscape-file.md)")
    parser.add_argument("sizes", type=int, nargs="+")
    args = parser.parse_args(argv)
    landscape = attach(args.landscape)
    if landscape is None:
        return 4
    pid = holder_pid(args.landscape)
    run_id = secrets.token_hex(3)
    samples: list[ScaleSample] = []
    try:
        for size in args.sizes:
            suffix = f"{run_id}-{size}"
            try:
                samples.append(measure(landscape, size, suffix, pid))
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
