"""The one small protocol every backend implements: clusters, a registry, a clock, faults.

Backends are transports: `sim` (in memory), `local` (real processes), `kind` (real clusters).
Steps only ever see this protocol. What a backend or an implementation cannot do, each landscape
says before any scenario runs (`capabilities`, solar_conformance/core/capabilities.py): a scenario
that needs what it lacks is skipped at collection. A landscape asked for a capability it lacks
raises MissingCapability, which fails the scenario: collection should have skipped it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from solar_conformance.core.api import InventoryAPI, ProbeAPI
from solar_conformance.core.audit import AuditEvent as AuditEvent  # part of the protocol
from solar_conformance.core.capabilities import Capability
from solar_conformance.core.clock import Clock
from solar_conformance.core.contract import Contract
from solar_conformance.core.oci import RegistryClient

Undo = Callable[[], None]


class MissingCapability(Exception):
    """This landscape cannot do what a step asked for: a harness error, since the landscape's
    `capabilities` should have kept the scenario from running."""


class MissingPrerequisite(Exception):
    """The landscape cannot start: a tool, an engine or an option it needs is missing."""


@dataclass(frozen=True)
class RegistryEndpoint:
    host: str  # as it appears in the render registry URLs on the target cluster
    plain_http: bool  # the target reaches it without TLS (then the OCIRepository needs insecure)
    kind: str  # "zot", "distribution+token-service" or "in-memory zot model"


class Faults(Protocol):
    def deny_token_requests(self, namespace: str, message: str) -> Undo:
        """The SolAr API server refuses TokenRequests in `namespace`, with `message`. Called
        again while that denial is in force, it changes the denial's message in place (no
        moment without a denial); either undo lifts it."""

    def cut_solar_api_from_target(self) -> Undo:
        """Pods of the target cluster can no longer reach the SolAr API server."""

    def skew_controller_clock(self, seconds: float) -> Undo:
        """solar-controller-manager's clock runs `seconds` ahead."""


class ScenarioLock(Protocol):
    """How scenarios share a landscape with other runs or workers (backends/existing/exclusive.py)."""

    def shared(self) -> None: ...

    def exclusive(self) -> None: ...

    def release(self) -> None: ...


class NoLock:
    """A landscape only this run's process uses: nothing to share."""

    def shared(self) -> None:
        return None

    def exclusive(self) -> None:
        return None

    def release(self) -> None:
        return None


class Landscape(Protocol):
    @property
    def backend(self) -> str: ...

    @property
    def implementation(self) -> str: ...

    @property
    def contract(self) -> Contract: ...

    @property
    def clock(self) -> Clock: ...

    @property
    def solar(self) -> InventoryAPI:
        """cluster-admin on the SolAr cluster."""

    @property
    def target(self) -> InventoryAPI:
        """cluster-admin on the target cluster."""

    @property
    def registry(self) -> RegistryEndpoint: ...

    @property
    def solar_ca_pem(self) -> str:
        """The certificate authority of the SolAr API server, PEM: the agent must trust it."""

    @property
    def solar_api_url(self) -> str:
        """The server of the agent's kubeconfig."""

    @property
    def solar_api_audiences(self) -> tuple[str, ...]:
        """The audiences the SolAr API server accepts tokens for (kube-apiserver's
        `--api-audiences`, by default its service-account issuer): a token for the SolAr API
        server only names no other audience."""

    @property
    def capabilities(self) -> frozenset[Capability]:
        """What this landscape, with this SolAr implementation, can do; known before it starts
        (solar_conformance/core/capabilities.py)."""

    @property
    def lock(self) -> ScenarioLock:
        """Held shared by each scenario, exclusive by one that changes what every Target sees."""

    @property
    def faults(self) -> Faults: ...

    def solar_as(self, token: str) -> ProbeAPI:
        """A client of the SolAr API server that authenticates with nothing but `token`."""

    def solar_audit(self) -> list[AuditEvent]:
        """The SolAr API server's audit events so far (solar_conformance/core/audit.py says which are
        recorded); only where `capabilities` has Capability.AUDIT_LOG."""

    def registry_as(self, username: str | None, password: str | None) -> RegistryClient:
        """A client of the render registry, as the harness reaches it."""

    def configure_apiserver_url(self, url: str | None) -> None:
        """Set or unset `controller.agent.apiserverURL` in solar-controller-manager's values."""

    def push_credentials(self) -> tuple[str, str]:
        """The user SolAr's renderer pushes with (allowed everywhere)."""

    def reader_credentials(self, namespace: str) -> tuple[str, str]:
        """A pull user that the access policy limits to `<namespace>/**` (created on first use)."""

    def agent_logs(self, namespace: str, target: str) -> dict[str, list[str]]:
        """The logs of every agent pod of this Target on the target cluster, by pod."""

    def begin_scenario(self, suffix: str) -> None:
        """Before a scenario with this namespace suffix starts on a shared landscape."""

    def end_scenario(self, suffix: str) -> None:
        """Remove what the scenario with this namespace suffix left (shared landscapes)."""

    def kubeconfig_paths(self) -> dict[str, Path]:
        """The admin kubeconfig files of its clusters by cluster ("SolAr", "target"): paths,
        never their content; none for an in-memory landscape."""

    def container_cpu_seconds(self) -> float | None:
        """CPU seconds its own containers spent since it was up (kind's nodes and registry);
        None for a landscape without containers of its own."""

    def diagnostics(self) -> dict[str, str]:
        """Component logs, registry catalog and the like, by name; already redacted."""

    def versions(self) -> dict[str, str]:
        """What runs, by component (Kubernetes, Flux, the registry, SolAr when it says), for the
        conformance report; empty when the landscape knows none."""

    def close(self) -> None: ...
