"""Target creation to its first `lastReportTime` on a real landscape, and where the time goes.

    python -m tests.benchmarks.first_report LANDSCAPE.toml [--targets 20]

LANDSCAPE.toml is a landscape file (docs/landscape-file.md), as `solar-conformance local up`
and `solar-conformance kind up` write it. For each Target, one after another, each in a
namespace of its own that is set up as the page's operator does before the clock starts: create
the Target, run the page's first-contact step on the target cluster at once, and wait for the
TargetReport's first `lastReportTime`. The total is measured on this process's clock; the
breakdown comes from the times the systems recorded (whole seconds, as Kubernetes keeps them):

| stage | recorded by |
|---|---|
| credential Issued | the controller: the condition's `lastTransitionTime` |
| bootstrap chart pushed | the renderer: the Target's `BootstrapReady` `lastTransitionTime` |
| bootstrap / agent source fetched | source-controller: the OCIRepository's Ready `lastTransitionTime` |
| bootstrap / agent release installed | helm-controller: the HelmRelease's Ready `lastTransitionTime` |
| agent Deployment created | the helm install: the Deployment's `creationTimestamp` |
| agent container started | the kubelet: the container's `startedAt` (kind; local runs no pods) |
| first report | the agent: the TargetReport's `lastReportTime` |

Each stage is shown as the time after the Target's `creationTimestamp` (median and p95), so
stages that overlap (the renderer and the controller act on the Target at once) are not summed.
Those times have whole seconds only, so each stage is also timed as this process saw it: watches
on the kinds above note, on this process's clock, the first event at which each stage holds
(a few milliseconds after the system wrote it), from the moment the Target was created.
"""

from __future__ import annotations

import argparse
import math
import secrets
import statistics
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from solar_conformance.components.kube import KubeClusterAPI
from solar_conformance.components.watch_hub import Listening
from solar_conformance.core.api import ApiError, ClusterAPI, Obj, find_condition, new_object
from solar_conformance.core.landscape import Landscape
from solar_conformance.page.lookup import agent_release_name, last_report_time
from solar_conformance.page.objects import FirstContact
from solar_conformance.page.setup import REGISTRY, set_up_namespace
from tests.benchmarks.attach import attach

BOOTSTRAP = "solar-bootstrap"
DEADLINE_SECONDS = 180.0
POLL_SECONDS = 0.1
# Helm waits for the agent Deployment to be ready after creating it, so the agent HelmRelease
# is Ready only after the agent's first report, often: it is waited for (not in the total).
RELEASE_READY_SECONDS = 30.0
STAGES = (
    "credential Issued",
    "bootstrap chart pushed",
    "bootstrap source fetched",
    "bootstrap release installed",
    "agent source fetched",
    "agent release installed",
    "agent Deployment created",
    "agent container started",
    "first report",
)


@dataclass
class Sample:
    target: str
    total_seconds: float  # this process's clock: from the create call to the report seen
    stages: dict[str, float] = field(default_factory=dict)  # seconds after creationTimestamp
    seen: dict[str, float] = field(default_factory=dict)  # seconds after the create call


class StageWatch:
    """The first moment this process sees each stage of one Target, from watch events."""

    def __init__(self, landscape: Landscape) -> None:
        self._contract = landscape.contract
        self._lock = threading.Lock()
        self._namespace, self._target, self._release = "", "", ""
        self._began = 0.0
        self.seen: dict[str, float] = {}
        sources = [
            (api, kinds)
            for api, kinds in (
                (landscape.solar, ("Target", "TargetReport")),
                (landscape.target, ("OCIRepository", "HelmRelease", "Deployment", "Pod")),
            )
            if isinstance(api, KubeClusterAPI)
        ]
        self._listening = Listening(sources, self._event)

    def start(self, namespace: str, target: str, release: str) -> None:
        with self._lock:
            self._namespace, self._target, self._release = namespace, target, release
            self._began = time.monotonic()
            self.seen = {}

    def _event(self, _type: str, obj: dict[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        with self._lock:
            if not self._namespace or meta.get("namespace") != self._namespace:
                return
            at = time.monotonic() - self._began
            for stage in self._stages_of(obj):
                self.seen.setdefault(stage, at)

    def _stages_of(self, obj: Obj) -> list[str]:
        kind, name = obj.get("kind"), obj["metadata"].get("name")
        contract = self._contract
        if kind == "Target" and name == self._target:
            issued = find_condition(obj, contract.condition_type) or {}
            return [
                *(["credential Issued"] if issued.get("reason") == "Issued" else []),
                *(["bootstrap chart pushed"] if _ready_at(obj, "BootstrapReady") else []),
            ]
        if kind == "TargetReport" and name == self._target:
            return ["first report"] if obj.get("spec", {}).get("lastReportTime") else []
        if kind in ("OCIRepository", "HelmRelease") and _ready_at(obj) is not None:
            what = "source fetched" if kind == "OCIRepository" else "release installed"
            if name == BOOTSTRAP:
                return [f"bootstrap {what}"]
            labels = obj.get("metadata", {}).get("labels") or {}
            if labels.get(contract.release_label) == self._release:
                return [f"agent {what}"]
        if kind == "Deployment" and contract.agent_image in str(obj.get("spec")):
            return ["agent Deployment created"]
        if kind == "Pod":
            for status in obj.get("status", {}).get("containerStatuses") or []:
                running = status.get("state", {}).get("running", {})
                if contract.agent_image in str(status.get("image")) and running.get("startedAt"):
                    return ["agent container started"]
        return []

    def close(self) -> None:
        self._listening.close()


def _time(value: Any) -> datetime | None:
    if not value:
        return None
    return datetime.fromisoformat(str(value).replace("Z", "+00:00"))


def _ready_at(obj: Obj | None, condition_type: str = "Ready") -> datetime | None:
    condition = find_condition(obj, condition_type) if obj is not None else None
    if condition is None or condition.get("status") != "True":
        return None
    return _time(condition.get("lastTransitionTime"))


def _get(get: Callable[[], Obj]) -> Obj | None:
    try:
        return get()
    except ApiError as error:
        if error.status == 404:
            return None
        raise


def _labelled(api: ClusterAPI, kind: str, namespace: str, labels: dict[str, str]) -> Obj | None:
    """The object of the bootstrap chart that carries a Release (found by its label: its name
    is the Helm release's of the bootstrap chart)."""
    found = api.list(kind, namespace, labels=labels)
    return found[0] if found else None


def _recorded(landscape: Landscape, namespace: str, target: str) -> dict[str, datetime | None]:
    solar, other = landscape.solar, landscape.target
    target_obj = solar.get("Target", target, namespace)
    issued = find_condition(target_obj, landscape.contract.condition_type)
    release = agent_release_name(landscape, namespace) or ""
    label = {landscape.contract.release_label: release}
    deployments = [
        d
        for d in other.list("Deployment", namespace)
        if d["metadata"].get("labels", {}).get(landscape.contract.release_label) == release
        or landscape.contract.agent_image in str(d.get("spec"))
    ]
    started = [
        _time(status.get("state", {}).get("running", {}).get("startedAt"))
        for pod in other.list("Pod", namespace)
        for status in pod.get("status", {}).get("containerStatuses") or []
        if landscape.contract.agent_image in str(status.get("image"))
    ]
    return {
        "created": _time(target_obj["metadata"]["creationTimestamp"]),
        "credential Issued": _time(issued.get("lastTransitionTime")) if issued else None,
        "bootstrap chart pushed": _ready_at(target_obj, "BootstrapReady"),
        "bootstrap source fetched": _ready_at(
            _get(lambda: other.get("OCIRepository", BOOTSTRAP, namespace))
        ),
        "bootstrap release installed": _ready_at(
            _get(lambda: other.get("HelmRelease", BOOTSTRAP, namespace))
        ),
        "agent source fetched": _ready_at(_labelled(other, "OCIRepository", namespace, label)),
        "agent release installed": _ready_at(_labelled(other, "HelmRelease", namespace, label)),
        "agent Deployment created": min(
            (t for d in deployments if (t := _time(d["metadata"].get("creationTimestamp")))),
            default=None,
        ),
        "agent container started": min((t for t in started if t), default=None),
        "first report": _time(last_report_time(landscape, namespace, target)),
    }


def _first_report(landscape: Landscape, namespace: str, target: str) -> str | None:
    """The TargetReport's `lastReportTime`; None also while the controller has not created it."""
    report = _get(lambda: landscape.solar.get("TargetReport", target, namespace))
    value = (report or {}).get("spec", {}).get("lastReportTime")
    return str(value) if value else None


def _wait_agent_release(landscape: Landscape, namespace: str) -> None:
    release = agent_release_name(landscape, namespace) or ""
    deadline = time.monotonic() + RELEASE_READY_SECONDS
    while time.monotonic() < deadline:
        labels = {landscape.contract.release_label: release}
        if _ready_at(_labelled(landscape.target, "HelmRelease", namespace, labels)):
            return
        time.sleep(POLL_SECONDS)


def measure_one(
    landscape: Landscape, namespace: str, target: str, watch: StageWatch | None = None
) -> Sample:
    set_up_namespace(landscape, landscape.solar, namespace)
    user, password = landscape.reader_credentials(namespace)
    page = FirstContact(
        landscape.registry.host, namespace, target, user, password, landscape.registry.plain_http
    )
    spec = {"renderRegistryRef": {"name": REGISTRY}, "userdata": {}}
    if watch is not None:
        watch.start(namespace, target, agent_release_name(landscape, namespace) or "")
    began = time.monotonic()
    landscape.solar.create(new_object("Target", target, namespace, spec=spec))
    landscape.target.create(new_object("Namespace", namespace))
    for obj in (page.regcred(), *page.helmrelease()):
        landscape.target.create(obj)
    while _first_report(landscape, namespace, target) is None:
        if time.monotonic() - began > DEADLINE_SECONDS:
            raise TimeoutError(f"{namespace}/{target} made no report in {DEADLINE_SECONDS:.0f}s")
        time.sleep(POLL_SECONDS)
    total = time.monotonic() - began
    _wait_agent_release(landscape, namespace)
    recorded = _recorded(landscape, namespace, target)
    created = recorded.pop("created")
    assert created is not None
    stages = {
        stage: (at - created).total_seconds() for stage, at in recorded.items() if at is not None
    }
    return Sample(target, total, stages, dict(watch.seen) if watch is not None else {})


def percentile(values: list[float], share: float) -> float:
    """Nearest rank: the smallest value at least `share` of the values do not exceed."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def table(samples: list[Sample]) -> list[str]:
    totals = [s.total_seconds for s in samples]
    lines = [
        f"{len(samples)} Targets: creation to first lastReportTime p50 "
        f"{statistics.median(totals):.2f} s, p95 {percentile(totals, 0.95):.2f} s, "
        f"min {min(totals):.2f} s, max {max(totals):.2f} s (this process's clock)",
        "",
        "| stage | recorded p50 | recorded p95 | seen p50 | seen p95 | samples |",
        "|---|---|---|---|---|---|",
    ]
    for stage in STAGES:
        values = [s.stages[stage] for s in samples if stage in s.stages]
        seen = [s.seen[stage] for s in samples if stage in s.seen]
        if values or seen:
            lines.append(f"| {stage} | {_spread(values, 1)} | {_spread(seen, 2)} | {len(values)} |")
        else:
            lines.append(f"| {stage} | - | - | - | - | 0 (not recorded on this backend) |")
    lines.append(
        "(recorded: whole seconds after the Target's creationTimestamp, as the systems wrote them;"
        " seen: seconds after the create call, when this process's watches saw the stage)"
    )
    return lines


def _spread(values: list[float], digits: int) -> str:
    if not values:
        return "- | -"
    return f"{statistics.median(values):.{digits}f} | {percentile(values, 0.95):.{digits}f}"


def run(landscape: Landscape, targets: int) -> list[Sample]:
    run_id = secrets.token_hex(3)
    samples: list[Sample] = []
    watch = StageWatch(landscape)
    try:
        for index in range(targets):
            suffix = f"{run_id}-{index}"
            try:
                samples.append(measure_one(landscape, f"bench-{suffix}", "cluster-1", watch))
                print(f"  {index + 1}/{targets}: {samples[-1].total_seconds:.2f} s", flush=True)
            finally:
                landscape.end_scenario(suffix)
    finally:
        watch.close()
    return samples


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.first_report")
    parser.add_argument("landscape", type=Path, help="a landscape file (docs/landscape-file.md)")
    parser.add_argument("--targets", type=int, default=20)
    args = parser.parse_args(argv)
    landscape = attach(args.landscape)
    if landscape is None:
        return 4
    try:
        print("\n".join(table(run(landscape, args.targets))))
    finally:
        landscape.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
