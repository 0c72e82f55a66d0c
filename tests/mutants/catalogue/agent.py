"""Broken agents (solar_conformance/simulators/reference/agent.py)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from tests.mutants.model import Wrapped, mutant

A = "solar_conformance.simulators.reference.agent:Agent"


# --- the agent -----------------------------------------------------------------------------------
@mutant(
    "agent-silent",
    ("table-agent", "report-after-install", "report-advances"),
    "the agent logs a report but writes nothing",
    f"{A}.report",
)
def _silent(original: Any) -> Any:
    return lambda self, solar: self.log("reported (but wrote nothing)")


@mutant(
    "agent-reports-once",
    "report-advances",
    "the agent reports once and never again",
    f"{A}.report",
)
def _once(original: Any) -> Any:
    def report(self: Any, solar: Any) -> None:
        if not self.__dict__.get("mutant_reported"):
            self.__dict__["mutant_reported"] = True
            original(self, solar)

    return report


@mutant(
    "agent-clock-an-hour-ahead",
    "report-advances",
    "the agent's clock runs an hour ahead: every lastReportTime is an hour in the future",
    f"{A}.report",
)
def _ahead(original: Any) -> Any:
    return agent_clock_off_by(original, timedelta(hours=1))


def agent_clock_off_by(original: Any, offset: timedelta) -> Any:
    """The agent's `report` with its clock `offset` from the landscape's."""
    from solar_conformance.core.clock import SkewedClock

    def report(self: Any, solar: Any) -> None:
        clock = self.clock
        skewed = SkewedClock(clock)
        skewed.offset = offset
        self.clock = skewed
        try:
            original(self, solar)
        finally:
            self.clock = clock

    return report


@mutant(
    "agent-writes-status",
    ("table-agent", "report-after-install"),
    "the agent writes its report through the status subresource, which its Role does not grant",
    f"{A}.report",
)
def _status_writer(original: Any) -> Any:
    def report(self: Any, solar: Any) -> None:
        original(self, Wrapped(solar, update=solar.update_status))

    return report


@mutant(
    "agent-logs-token",
    "report-stays-empty-harness",
    "the agent logs its token when it starts reporting",
    f"{A}.report",
)
def _logs_token(original: Any) -> Any:
    def report(self: Any, solar: Any) -> None:
        from solar_conformance.core.credentials import TokenKubeconfig

        token = TokenKubeconfig.parse(self.read_kubeconfig()).token
        self.log(f"using token {token}")
        original(self, solar)

    return report


@mutant(
    "agent-logs-token-on-failure",
    "report-stays-empty-harness",
    "when a report fails, the agent logs the token it tried",
    f"{A}.tick",
)
def _logs_token_on_failure(original: Any) -> Any:
    def tick(self: Any) -> float:
        log = self.log
        failed: list[str] = []

        def logging(line: str) -> None:
            if "failed" in line:
                failed.append(line)
            log(line)

        self.log = logging
        try:
            delay = float(original(self))
        finally:
            self.log = log
        if failed:
            from solar_conformance.core.credentials import TokenKubeconfig

            token = TokenKubeconfig.parse(self.read_kubeconfig()).token
            log(f"retrying with token {token}")
        return delay

    return tick


@mutant(
    "agent-swallows-errors",
    "report-stays-empty",
    "the agent logs nothing when a report fails",
    f"{A}.tick",
)
def _swallows(original: Any) -> Any:
    def tick(self: Any) -> float:
        log = self.log
        self.log = lambda line: None if "failed" in line else log(line)
        try:
            return float(original(self))
        finally:
            self.log = log

    return tick


@mutant(
    "agent-caches-kubeconfig",
    "runbook",
    "the agent reads its kubeconfig once and keeps the first token",
    f"{A}.tick",
    equivalent=(
        "the agent release's pod template carries a checksum of the kubeconfig, so every new "
        "token restarts the agent, which then reads the new kubeconfig: a caching agent "
        "behaves exactly like the reference one with this renderer"
    ),
)
def _caches(original: Any) -> Any:
    def tick(self: Any) -> float:
        read = self.read_kubeconfig
        if "mutant_kubeconfig" not in self.__dict__:
            try:
                self.__dict__["mutant_kubeconfig"] = read()
            except OSError:
                return float(original(self))
        self.read_kubeconfig = lambda: self.__dict__["mutant_kubeconfig"]
        try:
            return float(original(self))
        finally:
            self.read_kubeconfig = read

    return tick


# --- reports that do not advance -----------------------------------------------------------------
@mutant(
    "agent-report-time-to-the-minute",
    "report-advances",
    "the agent writes lastReportTime to the minute: reports within a minute do not advance it",
    f"{A}.report",
)
def _to_the_minute(original: Any) -> Any:
    def report(self: Any, solar: Any) -> None:
        clock = self.clock

        class Minutes:
            def now(self) -> Any:
                return clock.now().replace(second=0, microsecond=0)

        self.clock = Minutes()
        try:
            original(self, solar)
        finally:
            self.clock = clock

    return report


@mutant(
    "agent-reports-only-on-change",
    "report-advances",
    "the agent reports only when its Target's generation changed since its last report",
    f"{A}.report",
)
def _on_change(original: Any) -> Any:
    def report(self: Any, solar: Any) -> None:
        generation = solar.get("Target", self.target, self.namespace)["metadata"].get("generation")
        if self.__dict__.get("mutant_reported_generation") == generation:
            return
        original(self, solar)
        self.__dict__["mutant_reported_generation"] = generation

    return report


@mutant(
    "agent-gives-up-after-rejection",
    ("report-advances", "runbook"),
    "once the SolAr API server rejects its token, the agent stops trying until it is restarted",
    f"{A}.tick",
)
def _gives_up(original: Any) -> Any:
    def tick(self: Any) -> float:
        if self.__dict__.get("mutant_rejected"):
            return float(self.interval_seconds)
        lines: list[str] = []
        log = self.log

        def remember(line: str) -> None:
            lines.append(line)
            log(line)

        self.log = remember
        try:
            delay = float(original(self))
        finally:
            self.log = log
        if any("401" in line or "Unauthorized" in line for line in lines):
            self.__dict__["mutant_rejected"] = True
        return delay

    return tick


def _stops_after(reports: int) -> Any:
    """`report` of an agent that stops writing after `reports` reports (until it is restarted),
    but goes on reading its Target: a rejected token is still logged as a failed report."""

    def broken(original: Any) -> Any:
        def report(self: Any, solar: Any) -> None:
            made = self.__dict__.get("mutant_reports", 0)
            if made >= reports:
                solar.get("Target", self.target, self.namespace)
                self.log(f"reported {self.namespace}/{self.target} (but wrote nothing)")
                return
            original(self, solar)
            self.__dict__["mutant_reports"] = made + 1

        return report

    return broken


for _reports in (3, 20):
    mutant(
        f"agent-stops-after-{_reports}-reports",
        "report-advances",
        f"the agent stops writing its report after {_reports} reports (until it is restarted); "
        "it still reads its Target",
        f"{A}.report",
    )(_stops_after(_reports))


@mutant(
    "agent-drops-report-owner",
    ("table-controller-owned", "intro-one-report"),
    "the agent writes its TargetReport without the owner reference to its Target: deleting the "
    "Target leaves the report behind",
    f"{A}.report",
)
def _drops_owner(original: Any) -> Any:
    def report(self: Any, solar: Any) -> None:
        class WithoutOwner:
            def get(self, kind: str, name: str, namespace: str | None = None) -> Any:
                return solar.get(kind, name, namespace)

            def update(self, obj: Any) -> Any:
                obj.get("metadata", {}).pop("ownerReferences", None)
                return solar.update(obj)

        original(self, WithoutOwner())

    return report
