"""What a landscape can do beyond creating namespaces and objects, known before any scenario runs.

Each backend says which capabilities its landscape has (and, for each it lacks, why); a scenario
says which it needs with a tag `@needs-<capability>`; the plugin skips, at collection, every
scenario that needs one the landscape lacks, naming it and the reason. A step that needs a
capability declares it with `needs` (solar_conformance/plugin/capability_tags.py refuses a
scenario that uses it without the tag).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TypeVar

F = TypeVar("F", bound=Callable[..., object])
TAG_PREFIX = "needs-"


class Capability(StrEnum):
    """The value is the capability's key in a landscape file's [capabilities] and its tag's tail."""

    DENY_TOKEN_REQUESTS = "deny-token-requests"
    CHANGE_DENIAL = "change-denial"
    CUT_AGENT_LINK = "cut-agent-link"
    SKEW_CONTROLLER_CLOCK = "skew-controller-clock"
    CONFIGURE_APISERVER_URL = "configure-apiserver-url"
    AUDIT_LOG = "audit-log"
    AGENT_LOGS = "agent-logs"
    DIAGNOSTICS = "diagnostics"

    @property
    def human_name(self) -> str:
        return HUMAN_NAMES[self]

    @property
    def tag(self) -> str:
        """The scenario's tag (and pytest marker) that says it needs this capability."""
        return f"{TAG_PREFIX}{self.value}"


HUMAN_NAMES = {
    Capability.DENY_TOKEN_REQUESTS: "denying TokenRequests",
    Capability.CHANGE_DENIAL: "changing the denial of TokenRequests in place",
    Capability.CUT_AGENT_LINK: "cutting the SolAr API off from the target's pods",
    Capability.SKEW_CONTROLLER_CLOCK: "skewing solar-controller-manager's clock",
    Capability.CONFIGURE_APISERVER_URL: "setting and unsetting controller.agent.apiserverURL",
    Capability.AUDIT_LOG: "the SolAr API server's audit log",
    Capability.AGENT_LOGS: "the agent pods' logs",
    Capability.DIAGNOSTICS: "the landscape's component logs",
}
# What changes what every Target sees: a scenario that needs one of these holds its landscape
# alone (solar_conformance/plugin/concurrent.py).
EVERY_TARGET = frozenset(
    {
        Capability.SKEW_CONTROLLER_CLOCK,
        Capability.CUT_AGENT_LINK,
        Capability.CONFIGURE_APISERVER_URL,
    }
)
# What a tag says, for the marker's registration.
TAG_MEANINGS = {
    c.tag: f"needs {c.human_name}; skipped where the landscape lacks it" for c in Capability
}


@dataclass(frozen=True)
class Capabilities:
    """What one landscape can do: every capability but those it lacks, each with why."""

    lacking: Mapping[Capability, str] = field(default_factory=dict)

    @property
    def granted(self) -> frozenset[Capability]:
        return frozenset(Capability) - frozenset(self.lacking)

    def why_not(self, needed: Iterable[Capability]) -> list[str]:
        """One line for each of `needed` the landscape lacks: its name and the reason."""
        return [
            f"needs {capability.human_name}: {self.lacking[capability]}"
            for capability in needed
            if capability in self.lacking
        ]

    def also_lacking(self, other: Capabilities) -> Capabilities:
        """What neither lacks: a run that may land on either landscape."""
        return Capabilities({**other.lacking, **self.lacking})


ALL = Capabilities()

# Step functions that cannot do their job without a capability (filled by `needs`).
STEP_NEEDS: dict[Callable[..., object], frozenset[Capability]] = {}


def needs(*capabilities: Capability) -> Callable[[F], F]:
    """Declares that a step definition needs these capabilities; the function is unchanged."""

    def declare(step: F) -> F:
        STEP_NEEDS[step] = STEP_NEEDS.get(step, frozenset()) | frozenset(capabilities)
        return step

    return declare
