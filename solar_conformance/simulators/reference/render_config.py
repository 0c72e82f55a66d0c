"""What solar-renderer is configured with, and what it rendered of one Release."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from solar_conformance.core.oci import RegistryClient

ConnectRegistry = Callable[[str, str, str], RegistryClient]


@dataclass
class RendererConfig:
    apiserver_url: str | None
    apiserver_ca_pem: str = ""
    resync_seconds: float = 1.0
    agent_interval_seconds: int = 10
    owns_bootstrap_version: bool = True  # False beside a SolAr that keeps its own (upstream's)
    # Beside an upstream that renders the Releases: it renders the bootstrap charts, the
    # reference only the agent charts and what upstream renders them from (upstream_delivery.py).
    upstream_renders_bootstrap: bool = False
    agent_env: dict[str, str] = field(default_factory=dict)  # extra environment of the agent


@dataclass(frozen=True)
class RenderedRelease:
    release: str
    chart: str
    version: str
    target_namespace: str
