"""Reference solar-agent: reads its own Target and updates its own TargetReport on every tick.

The upstream draft: it polls on an interval and always sends a heartbeat (`lastReportTime`); a
failed push is retried on the next tick, with no queue. It authenticates with nothing but the
token kubeconfig it was given, and re-reads that file each tick so a rotated token is picked up.
Run as a process: `python -m solar_conformance.simulators.reference.agent --target ... --kubeconfig ...`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from solar_conformance.core.api import ApiError, Obj
from solar_conformance.core.clock import Clock, utc
from solar_conformance.core.credentials import TokenKubeconfig
from solar_conformance.core.redact import REDACT


class ReportAPI(Protocol):
    """What the agent asks of the SolAr API; every ClusterAPI answers it."""

    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj: ...

    def update(self, obj: Obj) -> Obj: ...


Connect = Callable[[TokenKubeconfig], ReportAPI]


@dataclass
class Agent:
    target: str
    namespace: str
    read_kubeconfig: Callable[[], str]
    connect: Connect
    clock: Clock
    log: Callable[[str], None]
    interval_seconds: float = 10.0

    def tick(self) -> float:
        try:
            kubeconfig = TokenKubeconfig.parse(self.read_kubeconfig())
        except (OSError, ValueError) as error:
            self.log(f"cannot read the kubeconfig: {error}")
            return self.interval_seconds
        REDACT.register(kubeconfig.token)
        try:
            self.report(self.connect(kubeconfig))
        except ApiError as error:
            self.log(f"report for {self.namespace}/{self.target} failed: {REDACT(str(error))}")
        return self.interval_seconds

    def report(self, solar: ReportAPI) -> None:
        target = solar.get("Target", self.target, self.namespace)
        report = solar.get("TargetReport", self.target, self.namespace)
        now = utc(self.clock.now())
        spec = report.setdefault("spec", {})
        spec["lastReportTime"] = now
        spec["targetGeneration"] = target["metadata"].get("generation", 0)
        solar.update(report)
        self.log(f"reported {self.namespace}/{self.target} at {now}")
