"""What a `local` or `kind` landscape can do, by the SolAr implementation it runs: known from the
options alone, before any cluster starts."""

from __future__ import annotations

from solar_conformance.core.capabilities import ALL, Capabilities, Capability

UPSTREAM = Capabilities(
    {
        Capability.CONFIGURE_APISERVER_URL: "controller.agent.apiserverURL is not implemented "
        "upstream (no agent credential)",
    }
)
EXTERNAL = Capabilities(
    {
        Capability.CONFIGURE_APISERVER_URL: "an installed SolAr's Helm values are not changed "
        "by the harness",
        Capability.SKEW_CONTROLLER_CLOCK: "the harness cannot move an installed "
        "solar-controller-manager's clock",
    }
)


def of_implementation(implementation: str) -> Capabilities:
    """The reference SolAr lets the harness do everything; upstream and an installed SolAr less."""
    return {"upstream": UPSTREAM, "external": EXTERNAL}.get(implementation, ALL)
